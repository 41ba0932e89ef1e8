"""PINT's query engine: queries, the global bit budget and the execution plan.

A query asks for a fraction ``frequency`` of the packets and ``bits`` bits
of their digest. The plan is a probability distribution over query sets
(the paper's Fig. 3): the query-selection hash ``q(packet)`` in [0, 1) falls
into one range, and the range's set of queries runs on that packet, each
query in its own bit field of the digest.

Planning is packing rectangles into the unit square of "digest bits x
packets": each query is ``bits`` wide and ``frequency`` high. Queries are
placed widest first (then most frequent, then by name) on the contiguous
bit window whose highest filled level is lowest (lowest offset on ties),
starting at that level. This is exact when no window is left half-used,
which is always the case for the 8/16/32-bit budgets with 8- or 16-bit
queries; a plan that cannot be packed this way is refused with what does
not fit, as is one whose bit mass ``sum(bits * frequency)`` exceeds the
budget. Bit offsets count from the digest's least significant bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from common.errors import InvalidValueError

__all__ = [
    "BUDGETS",
    "Aggregation",
    "ExecutionPlan",
    "HashRange",
    "Placement",
    "Query",
    "QuerySet",
    "plan_queries",
]

BUDGETS = (8, 16, 32)
_EPS = 1e-9


class Aggregation(Enum):
    """The three aggregation types of the paper's section 3.1."""

    PER_PACKET = "per-packet"
    STATIC_PER_FLOW = "static-per-flow"
    DYNAMIC_PER_FLOW = "dynamic-per-flow"


@dataclass(frozen=True)
class Query:
    """<value type, aggregation, bit budget, space budget, flow definition, frequency>.

    ``space_budget`` is per-flow storage at the recording module in values
    (the KLL sketch's ``k`` for dynamic queries, the pending digests kept
    for path decoding); None is unbounded. The per-packet aggregation
    function is the maximum.
    """

    name: str
    value_type: str
    aggregation: Aggregation
    bits: int
    frequency: float = 1.0
    space_budget: int | None = None
    flow: tuple[str, ...] = ("src", "dst", "proto", "sport", "dport")

    def check(self, budget: int) -> None:
        if not self.name:
            raise InvalidValueError("a query needs a name")
        if not 1 <= self.bits <= budget:
            raise InvalidValueError(
                f"query {self.name!r}: bit budget {self.bits} must be between 1 and the "
                f"global budget {budget}"
            )
        if not 0.0 < self.frequency <= 1.0:
            raise InvalidValueError(
                f"query {self.name!r}: frequency {self.frequency} must be in (0, 1]"
            )
        if self.space_budget is not None and self.space_budget < 0:
            raise InvalidValueError(
                f"query {self.name!r}: space budget {self.space_budget} must not be negative"
            )


@dataclass(frozen=True)
class Placement:
    """One query's bit field in the digest of the packets of one query set."""

    query: str
    offset: int
    width: int

    def extract(self, digests: np.ndarray) -> np.ndarray:
        mask = (1 << self.width) - 1
        return (np.asarray(digests, dtype=np.uint64) >> np.uint64(self.offset)) & np.uint64(mask)


@dataclass(frozen=True)
class QuerySet:
    set_id: int
    placements: tuple[Placement, ...]
    probability: float


@dataclass(frozen=True)
class HashRange:
    """``lo <= q-word <= hi`` (32-bit words) selects query set ``set_id``:
    one range-match entry of the switches' query-selection table."""

    lo: int
    hi: int
    set_id: int


@dataclass
class ExecutionPlan:
    budget: int
    queries: dict[str, Query]
    sets: list[QuerySet]
    ranges: list[HashRange]
    _los: np.ndarray = field(init=False, repr=False)
    _his: np.ndarray = field(init=False, repr=False)
    _ids: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._los = np.array([r.lo for r in self.ranges], dtype=np.uint64)
        self._his = np.array([r.hi for r in self.ranges], dtype=np.uint64)
        self._ids = np.array([r.set_id for r in self.ranges], dtype=np.int64)

    @property
    def idle_probability(self) -> float:
        """Fraction of packets that carry no query."""
        return 1.0 - sum(s.probability for s in self.sets)

    def set_ids(self, q_words: np.ndarray) -> np.ndarray:
        """Query-set id per packet from its q-word; 0 means no query runs."""
        words = np.asarray(q_words, dtype=np.uint64)
        pos = np.searchsorted(self._los, words, side="right") - 1
        ok = pos >= 0
        hit = np.zeros(words.shape, dtype=bool)
        hit[ok] = words[ok] <= self._his[pos[ok]]
        return np.where(hit, self._ids[np.maximum(pos, 0)], 0)

    def query_fraction(self, name: str) -> float:
        return sum(s.probability for s in self.sets if any(p.query == name for p in s.placements))

    def compose(self, set_ids: np.ndarray, fields: dict[str, np.ndarray]) -> np.ndarray:
        """Whole digests: each query's field at its offset in the packets
        whose query set holds it (what the switches' writes add up to)."""
        set_ids = np.asarray(set_ids)
        digests = np.zeros(set_ids.shape[0], dtype=np.uint64)
        for qset in self.sets:
            sel = set_ids == qset.set_id
            for p in qset.placements:
                mask = np.uint64((1 << p.width) - 1)
                value = np.asarray(fields[p.query], dtype=np.uint64)[sel] & mask
                digests[sel] |= value << np.uint64(p.offset)
        return digests

    def to_dict(self) -> dict:
        """The plan as plain data for a P4Runtime writer (and for JSON)."""
        return {
            "budget": self.budget,
            "ranges": [{"lo": r.lo, "hi": r.hi, "set_id": r.set_id} for r in self.ranges],
            "sets": [
                {
                    "set_id": s.set_id,
                    "probability": s.probability,
                    "queries": [
                        {"query": p.query, "offset": p.offset, "width": p.width}
                        for p in s.placements
                    ],
                }
                for s in self.sets
            ],
        }


@dataclass
class _Rect:
    query: str
    offset: int
    width: int
    start: float
    end: float


def _place(queries: list[Query], budget: int) -> list[_Rect]:
    fill = [0.0] * budget
    rects: list[_Rect] = []
    for query in sorted(queries, key=lambda q: (-q.bits, -q.frequency, q.name)):
        best: tuple[float, int] | None = None
        for offset in range(budget - query.bits + 1):
            level = max(fill[offset:offset + query.bits])
            if best is None or level < best[0] - _EPS:
                best = (level, offset)
        assert best is not None
        level, offset = best
        if level + query.frequency > 1.0 + _EPS:
            placed = ", ".join(f"{r.query} ({r.width} bits, {r.end - r.start:g})" for r in rects)
            raise InvalidValueError(
                f"query {query.name!r} ({query.bits} bits on {query.frequency:g} of the "
                f"packets) does not fit the {budget}-bit budget: the freest {query.bits}-bit "
                f"window has {max(0.0, 1.0 - level):g} of the packets left after {placed}; "
                "lower a frequency or a bit budget, or raise the global budget"
            )
        end = min(1.0, level + query.frequency)
        for bit in range(offset, offset + query.bits):
            fill[bit] = end
        rects.append(_Rect(query.name, offset, query.bits, level, end))
    return rects


def plan_queries(queries: list[Query], budget: int) -> ExecutionPlan:
    """The execution plan of ``queries`` under a global ``budget`` of 8, 16 or 32 bits."""
    if budget not in BUDGETS:
        raise InvalidValueError(f"global bit budget {budget} must be one of {BUDGETS}")
    if not queries:
        raise InvalidValueError("the query engine needs at least one query")
    names = [q.name for q in queries]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InvalidValueError(f"query names must be unique: {', '.join(dup)} repeated")
    for query in queries:
        query.check(budget)
    mass = sum(q.bits * q.frequency for q in queries)
    if mass > budget + _EPS:
        parts = " + ".join(f"{q.name} {q.bits}x{q.frequency:g}" for q in queries)
        raise InvalidValueError(
            f"queries need {mass:g} digest bits per packet on average ({parts}) but the "
            f"global budget is {budget} bits; lower frequencies or bit budgets, or raise "
            "the budget"
        )
    rects = _place(queries, budget)
    cuts = sorted({0.0, 1.0, *(r.start for r in rects), *(r.end for r in rects)})
    merged: list[tuple[float, float, tuple[Placement, ...]]] = []
    for lo, hi in zip(cuts, cuts[1:]):
        if hi - lo <= _EPS:
            continue
        mid = (lo + hi) / 2
        members = tuple(
            sorted(
                (Placement(r.query, r.offset, r.width) for r in rects if r.start <= mid < r.end),
                key=lambda p: p.offset,
            )
        )
        if merged and merged[-1][2] == members:
            merged[-1] = (merged[-1][0], hi, members)
        else:
            merged.append((lo, hi, members))
    sets: dict[tuple[Placement, ...], QuerySet] = {}
    ranges: list[HashRange] = []
    for lo, hi, members in merged:
        if not members:
            continue
        if members not in sets:
            sets[members] = QuerySet(len(sets) + 1, members, 0.0)
        entry = sets[members]
        sets[members] = QuerySet(entry.set_id, members, entry.probability + (hi - lo))
        word_lo, word_hi = round(lo * 2**32), round(hi * 2**32) - 1
        if word_hi >= word_lo:
            ranges.append(HashRange(word_lo, word_hi, entry.set_id))
    return ExecutionPlan(budget, {q.name: q for q in queries}, list(sets.values()), ranges)


def fragments(value_bits: int, bits: int) -> int:
    """How many ``bits``-wide pieces a ``value_bits``-wide value is cut into."""
    return max(1, math.ceil(value_bits / bits))
