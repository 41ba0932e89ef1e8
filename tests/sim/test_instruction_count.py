"""``intbed bench sim --instructions``: callgrind's count of a simulated run
repeats, so the same code counted twice gives the same number to a few
parts in a hundred thousand (callgrind notices the switches that start and
stop counting by polling, some thousand instructions early or late; on a
loaded machine some ten thousand, 1e-4 of this run) and a checkout
compared with itself gives a ratio of 1. Rarely, two counts of one
checkout have differed by up to 0.2% (once 0.6%), so the test allows
0.5%: the changes the count is for are larger."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.instructions import check_checkout, compare, valgrind_missing
from common.errors import IntbedError
from common.paths import PACKAGE_ROOT

needs_valgrind = pytest.mark.skipif(valgrind_missing() is not None,
                                    reason=str(valgrind_missing()))


@needs_valgrind
def test_a_checkout_against_itself_counts_the_same_instructions() -> None:
    report = compare(["fabric"], 0.3, PACKAGE_ROOT)["fabric"]
    this, other = report["this"], report["against"]
    assert this["packet_hops"] == other["packet_hops"] > 1000
    assert abs(this["instructions"] - other["instructions"]) <= 5e-3 * this["instructions"]
    assert abs(report["speedup"] - 1.0) <= 0.005
    # A packet-hop costs some ten thousand instructions, not a handful
    # (counting off) nor millions (start-up counted).
    assert 5_000 < this["instructions_per_hop"] < 1_000_000


def test_against_must_be_a_checkout(tmp_path: Path) -> None:
    with pytest.raises(IntbedError, match="not an intbed checkout"):
        check_checkout(tmp_path)
    assert check_checkout(PACKAGE_ROOT) == PACKAGE_ROOT.resolve()
