"""Assembling a flow's path from the items of several reports: a line of
four switches wired by hand, hops arriving in any order and any grouping."""

from __future__ import annotations

import itertools

from sinks.intlabel.pathdecode import PathAssembler
from sinks.intlabel.report import IntItem

# s10 - s11 - s12 - s13; port 1 faces each switch's host, 2 its left, 3 its right.
PEERS = {(10, 1): None, (10, 3): 11, (11, 1): None, (11, 2): 10, (11, 3): 12,
         (12, 1): None, (12, 2): 11, (12, 3): 13, (13, 1): None, (13, 2): 12}
HOPS = {10: (1, 3), 11: (2, 3), 12: (2, 3), 13: (2, 1)}  # a flow from s10's host to s13's


def item(sid: int) -> IntItem:
    inp, out = HOPS[sid]
    return IntItem(sid, inp, out, 0, 0, 0, 0, 0, False)


def test_one_report_with_every_hop() -> None:
    assert PathAssembler(PEERS).feed([item(s) for s in (13, 12, 11, 10)]) == (10, 11, 12, 13)


def test_hops_from_several_reports_in_any_order() -> None:
    for order in itertools.permutations(HOPS):
        asm = PathAssembler(PEERS)
        got = [asm.feed([item(s)]) for s in order]
        assert got[:-1] == [None] * 3 and got[-1] == (10, 11, 12, 13), order


def test_a_missing_hop_leaves_the_path_unknown() -> None:
    for gone in HOPS:
        asm = PathAssembler(PEERS)
        assert asm.feed([item(s) for s in HOPS if s != gone]) is None, gone


def test_a_short_flow() -> None:
    hops = {11: (1, 3), 12: (2, 1)}
    asm = PathAssembler(PEERS)
    assert asm.feed([IntItem(s, *hops[s], 0, 0, 0, 0, 0, False) for s in (12, 11)]) == (11, 12)
