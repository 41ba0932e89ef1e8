"""``intbed bench sim --instructions``: callgrind's count of a simulated run
repeats, so the same code counted twice gives the same number to about a
part in ten thousand (eight counts of 0.3 simulated seconds of the fabric:
six at 14,188,271, the others 414 fewer and 1,267 more), and a checkout
compared with itself gives a ratio of 1. The count is switched on and off
by client requests from inside the process, exact to the instruction;
before, ``callgrind_control`` switched it from outside, callgrind noticed
when it next polled, and two counts of one clean clone once differed by
0.9%. The test allows 0.1%: the changes the count is for are larger."""

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
    # The switches are client requests, exact to the instruction: what is left
    # varies inside the process (some 1e-4); callgrind_control's polling once
    # gave 0.9% between two counts of one clean clone.
    assert abs(this["instructions"] - other["instructions"]) <= 1e-3 * this["instructions"]
    assert abs(report["speedup"] - 1.0) <= 0.002
    # A packet-hop costs some ten thousand instructions, not a handful
    # (counting off) nor millions (start-up counted).
    assert 5_000 < this["instructions_per_hop"] < 1_000_000


def test_against_must_be_a_checkout(tmp_path: Path) -> None:
    with pytest.raises(IntbedError, match="not an intbed checkout"):
        check_checkout(tmp_path)
    assert check_checkout(PACKAGE_ROOT) == PACKAGE_ROOT.resolve()
