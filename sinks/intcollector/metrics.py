"""The six INT metrics of INTCollector (Van Tu et al., Table I): what
identifies each one (its key) and how its values come out of parsed reports.

A metric key is (ids, measurement). The ids, as in Table I:

| measurement        | ids                          | value                              |
| ------------------ | ---------------------------- | ---------------------------------- |
| flow_path          | 5-tuple                      | switch ids, INT source first       |
| flow_latency       | 5-tuple                      | sum of the hops' hop latencies     |
| flow_hop_latency   | 5-tuple + sw_id              | hop latency at that switch         |
| queue_occupancy    | sw_id, queue_id              | queue occupancy                    |
| queue_congestion   | sw_id, queue_id              | congestion status (INT v0.5 bit 6) |
| link_utilization   | sw_id, egress_id             | egress port tx utilization         |

The fast path works on whole batches (``parse_batch`` columns): keys are
packed into one uint64 each and mapped to dense slots, values are int64, so
event detection runs on numpy arrays. ``report_values`` gives the same
values for one ``ParsedReport`` with plain tuples as keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sinks.intcollector import fastloop
from sinks.intcollector.reports import BatchResult, ParsedReport, ReportGroup

FLOW_IDS = ("src_ip", "dst_ip", "proto", "src_port", "dst_port")

# How a metric's packed uint64 key is made from its ids.
FLOW, FLOW_SWITCH, SWITCH_QUEUE, SWITCH_PORT = "flow", "flow-switch", "switch-queue", "switch-port"


@dataclass(frozen=True, slots=True)
class Metric:
    """One row of Table I. ``fields`` are the per-hop INT fields the value
    and ids need (names as in ``ParsedReport.hops``); ``categorical`` values
    (the path) have no threshold: any change is an event."""

    name: str
    ids: tuple[str, ...]
    layout: str
    fields: tuple[str, ...]
    categorical: bool = False


FLOW_PATH = Metric("flow_path", FLOW_IDS, FLOW, ("node_id",), categorical=True)
FLOW_LATENCY = Metric("flow_latency", FLOW_IDS, FLOW, ("hop_latency",))
FLOW_HOP_LATENCY = Metric("flow_hop_latency", (*FLOW_IDS, "sw_id"), FLOW_SWITCH,
                          ("node_id", "hop_latency"))
QUEUE_OCCUPANCY = Metric("queue_occupancy", ("sw_id", "queue_id"), SWITCH_QUEUE,
                         ("node_id", "queue_id", "queue_occupancy"))
QUEUE_CONGESTION = Metric("queue_congestion", ("sw_id", "queue_id"), SWITCH_QUEUE,
                          ("node_id", "congestion_queue_id", "queue_congestion"))
LINK_UTILIZATION = Metric("link_utilization", ("sw_id", "egress_id"), SWITCH_PORT,
                          ("node_id", "l1_egress_port", "egress_tx_util"))
METRICS: tuple[Metric, ...] = (FLOW_PATH, FLOW_LATENCY, FLOW_HOP_LATENCY, QUEUE_OCCUPANCY,
                               QUEUE_CONGESTION, LINK_UTILIZATION)
BY_NAME: dict[str, Metric] = {m.name: m for m in METRICS}
DECODED = frozenset({"flow." + f for f in ("src", "dst", "proto", "sport", "dport")}
                    | {name for m in METRICS for name in m.fields})
"""What ``extract`` reads of a parsed report (``parse_rows(only=...)``)."""

_U64 = np.uint64
_PAIR_BITS = 24  # flow keys: pair slot (24 bits) | proto (8) | sport (16) | dport (16)


def _grow(array: np.ndarray, size: int) -> np.ndarray:
    """``array`` with room for ``size`` entries (capacity doubles)."""
    if size <= len(array):
        return array
    out = np.zeros(max(size, 2 * len(array), 64), dtype=array.dtype)
    out[:len(array)] = array
    return out


class KeyIndex:
    """Packed uint64 keys to dense slots 0, 1, 2, ... A whole column is
    looked up at once by binary search in the sorted known keys; keys not
    seen before get the next slots (in key order within one lookup)."""

    __slots__ = ("count", "_keys", "_sorted", "_sorted_slots")

    def __init__(self) -> None:
        self.count = 0
        self._keys = np.zeros(0, dtype=_U64)
        self._sorted = np.zeros(0, dtype=_U64)
        self._sorted_slots = np.zeros(0, dtype=np.int64)

    def key(self, slot: int) -> int:
        return int(self._keys[slot])

    @property
    def keys(self) -> np.ndarray:
        """Packed key of every slot."""
        return self._keys[:self.count]

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Slot of every key (int64), adding the keys not known yet."""
        if self.count:
            at = np.searchsorted(self._sorted, keys)
            at[at == self.count] = 0
            hit = self._sorted[at] == keys
            if hit.all():
                return self._sorted_slots[at]
        else:
            at = np.zeros(len(keys), dtype=np.intp)
            hit = np.zeros(len(keys), dtype=bool)
        slots = np.empty(len(keys), dtype=np.int64)
        slots[hit] = self._sorted_slots[at[hit]]
        miss = keys[~hit]
        new = np.unique(miss)
        first = self.count
        self.count = first + len(new)
        self._keys = _grow(self._keys, self.count)
        self._keys[first:self.count] = new
        slots[~hit] = first + np.searchsorted(new, miss)
        merged = np.concatenate([self._sorted, new])
        order = np.argsort(merged, kind="stable")
        self._sorted = merged[order]
        self._sorted_slots = np.concatenate(
            [self._sorted_slots, np.arange(first, self.count, dtype=np.int64)])[order]
        return slots


class PathIndex:
    """Paths (switch id rows, INT source first) to small integer ids, so a
    path change is an integer comparison in the fast path."""

    __slots__ = ("_ids", "paths", "_by_width", "compiled")

    def __init__(self, compiled: bool | None = None) -> None:
        self._ids: dict[bytes, int] = {}
        self.paths: list[tuple[int, ...]] = []
        self.compiled = fastloop.COMPILED if compiled is None else compiled
        # per path length: hash -> slot, each slot's row and its path id
        self._by_width: dict[int, tuple[fastloop.HashIndex, list[np.ndarray]]] = {}

    def lookup(self, rows: np.ndarray) -> np.ndarray:
        """Path id of every row of a (reports, hops) switch id array. Rows
        are told apart by a 64-bit hash, checked against the rows it stands
        for; on a collision the rows are compared whole."""
        if not len(rows):
            return np.zeros(0, dtype=np.int64)
        if self.compiled:  # strided rows (a reversed view) are read where they are
            found = self._lookup_hashed(np.asarray(rows, dtype=np.uint32))
            if found is not None:
                return found
        rows = np.ascontiguousarray(rows, dtype=np.uint32)
        hashed = np.zeros(len(rows), dtype=_U64)
        for column in rows.T:
            hashed = hashed * _U64(0x9E3779B97F4A7C15) + column
        _, first, inverse = np.unique(hashed, return_index=True, return_inverse=True)
        if not (rows == rows[first][inverse]).all():
            view = rows.view(np.dtype((np.void, 4 * rows.shape[1]))).ravel()
            _, first, inverse = np.unique(view, return_index=True, return_inverse=True)
        ids = np.fromiter((self._id(rows[i]) for i in first.tolist()), dtype=np.int64,
                          count=len(first))
        return ids[inverse]

    def _lookup_hashed(self, rows: np.ndarray) -> np.ndarray | None:
        """Compiled hashing and lookup; None when two rows share a hash."""
        width = rows.shape[1]
        index, known = self._by_width.setdefault(
            width, (fastloop.HashIndex(), [np.zeros((0, width), np.uint32),
                                           np.zeros(0, np.int64)]))
        hashes = np.empty(len(rows), dtype=_U64)
        fastloop.row_hashes(rows, hashes)
        before = index.count
        slots = index.lookup(hashes)
        if index.count > before:
            new = np.flatnonzero(slots >= before)
            _, first = np.unique(slots[new], return_index=True)
            fresh = rows[new[first]]
            known[0] = np.concatenate([known[0], fresh])
            known[1] = np.concatenate([known[1], np.fromiter(
                (self._id(row) for row in fresh), dtype=np.int64, count=len(fresh))])
        if not fastloop.rows_equal(known[0], slots, rows):
            return None
        return known[1][slots]

    def _id(self, row: np.ndarray) -> int:
        raw = row.tobytes()
        found = self._ids.get(raw)
        if found is None:
            found = self._ids[raw] = len(self.paths)
            self.paths.append(tuple(row.tolist()))
        return found


def ipv4(address: int) -> str:
    return f"{address >> 24}.{address >> 16 & 0xFF}.{address >> 8 & 0xFF}.{address & 0xFF}"


class KeySpace:
    """Flow and path identities shared by the metrics: a flow is interned in
    two steps, (src, dst) to a pair slot, then (pair slot, proto, ports) to a
    flow slot, so both steps look up one uint64 per report."""

    __slots__ = ("pairs", "flows", "paths")

    def __init__(self, compiled: bool | None = None) -> None:
        compiled = fastloop.COMPILED if compiled is None else compiled
        self.pairs: KeyIndex | fastloop.HashIndex = (
            fastloop.HashIndex() if compiled else KeyIndex())
        self.flows: KeyIndex | fastloop.HashIndex = (
            fastloop.HashIndex() if compiled else KeyIndex())
        self.paths = PathIndex(compiled)

    def flow_slots(self, src: np.ndarray, dst: np.ndarray, proto: np.ndarray,
                   sport: np.ndarray, dport: np.ndarray) -> np.ndarray:
        pair = self.pairs.lookup(src.astype(_U64) << _U64(32) | dst.astype(_U64))
        if self.pairs.count > 1 << _PAIR_BITS:
            raise OverflowError(f"more than {1 << _PAIR_BITS} (src, dst) pairs")
        packed = (pair.astype(_U64) << _U64(40) | proto.astype(_U64) << _U64(32)
                  | sport.astype(_U64) << _U64(16) | dport.astype(_U64))
        return self.flows.lookup(packed)

    def flow(self, slot: int) -> tuple[int, int, int, int, int]:
        """(src, dst, proto, sport, dport) of a flow slot."""
        packed = self.flows.key(slot)
        pair = self.pairs.key(packed >> 40)
        return (pair >> 32, pair & 0xFFFF_FFFF, packed >> 32 & 0xFF, packed >> 16 & 0xFFFF,
                packed & 0xFFFF)

    def ids(self, metric: Metric, packed: int) -> tuple[int, ...]:
        """A metric's ids (Table I order) from its packed key."""
        if metric.layout == FLOW:
            return self.flow(packed)
        if metric.layout == FLOW_SWITCH:
            return (*self.flow(packed >> 32), packed & 0xFFFF_FFFF)
        if metric.layout == SWITCH_QUEUE:
            return packed >> 8, packed & 0xFF
        return packed >> 16, packed & 0xFFFF

    def value(self, metric: Metric, value: int) -> int | str:
        """A stored value: the path id is rendered as its switch ids."""
        if metric is FLOW_PATH:
            return path_text(self.paths.paths[value])
        return value


def path_text(path: Sequence[int]) -> str:
    return ",".join(map(str, path))


def tags(metric: Metric, ids: Sequence[int]) -> tuple[tuple[str, str], ...]:
    """The tag set of a metric key, sorted by tag name (the order InfluxDB
    wants); addresses as dotted quads."""
    text = [ipv4(v) if name.endswith("_ip") else str(v) for name, v in zip(metric.ids, ids)]
    return tuple(sorted(zip(metric.ids, text)))


@dataclass(slots=True)
class Observations:
    """One metric's values from a batch: packed keys and values as (rows,
    width) arrays and the report position of each row. Rows are in report
    order and a row's values are taken last column first: for per-hop
    metrics a row is one report's stack as on the wire (newest hop first),
    so the INT source's value comes first. ``flat`` gives them in that order."""

    keys: np.ndarray
    values: np.ndarray
    reports: np.ndarray
    flows: np.ndarray | None = None  # each row's flow slot (one layout group only)

    def __len__(self) -> int:
        return self.values.size

    def flat(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Keys, values and report positions, one per value, in order."""
        width = self.keys.shape[1]
        return (self.keys[:, ::-1].ravel(), self.values[:, ::-1].ravel(),
                np.repeat(self.reports, width))


def _column(group: ReportGroup, name: str) -> np.ndarray | None:
    column = group.columns.get(name)
    if column is not None:
        return column
    value = group.consts.get(name)
    return None if value is None else np.full(len(group), value, dtype=_U64)


Parts = dict[Metric, list[Observations]]


def _group_values(group: ReportGroup, space: KeySpace, out: Parts) -> None:
    """Append one layout group's metric values to ``out``."""
    if not group.consts.get("int.hop_count") or group.consts.get("int.version") is None:
        return
    flow = [_column(group, "flow." + f) for f in ("src", "dst", "proto", "sport", "dport")]
    if any(column is None for column in flow):
        return
    hops = group.hops  # newest hop first, as on the wire
    flows = space.flow_slots(*flow)  # type: ignore[arg-type]
    flow_slot = flows.astype(_U64)[:, None]
    one = np.asarray(group.index, dtype=np.int64)
    sw = hops.get("node_id")
    if sw is not None:
        path = space.paths.lookup(sw[:, ::-1])
        out[FLOW_PATH].append(Observations(flow_slot, path[:, None], one, flows))
    latency = hops.get("hop_latency")
    if latency is not None:
        out[FLOW_LATENCY].append(Observations(flow_slot, _row_sums(latency)[:, None], one, flows))
        if sw is not None:
            out[FLOW_HOP_LATENCY].append(
                Observations(_pack(flow_slot, 32, sw), latency, one, flows))
    if sw is None:
        return
    for metric, shift in ((QUEUE_OCCUPANCY, 8), (QUEUE_CONGESTION, 8), (LINK_UTILIZATION, 16)):
        _, id_field, value_field = metric.fields
        if id_field in hops and value_field in hops:
            out[metric].append(Observations(_pack(sw, shift, hops[id_field]), hops[value_field],
                                            one, flows))


def _row_sums(values: np.ndarray) -> np.ndarray:
    if fastloop.COMPILED:
        out = np.empty(len(values), dtype=np.int64)
        fastloop.row_sums(values, out)
        return out
    return values.sum(axis=1, dtype=np.int64)


def _pack(high: np.ndarray, shift: int, low: np.ndarray) -> np.ndarray:
    """Packed keys ``high << shift | low`` (high per value, or per row)."""
    if fastloop.COMPILED:
        out = np.empty(low.shape, dtype=_U64)
        fastloop.pack_keys(high, shift, low, out)
        return out
    return high.astype(_U64) << _U64(shift) | low.astype(_U64)


def extract(result: BatchResult, space: KeySpace) -> dict[Metric, Observations]:
    """Every metric value of a parsed batch, per metric, in report order.
    Reports without a flow (no inner packet) or without INT give none."""
    parts: Parts = {m: [] for m in METRICS}
    for group in result.groups:
        _group_values(group, space, parts)
    out: dict[Metric, Observations] = {}
    for metric, pieces in parts.items():
        if len(pieces) == 1:
            out[metric] = pieces[0]
        elif pieces:  # several layouts: one value per row, in report order
            keys, values, reports = (np.concatenate(p) for p in zip(*(o.flat() for o in pieces)))
            values = values.astype(np.int64)
            if len(reports) > 1 and (reports[1:] < reports[:-1]).any():
                order = np.argsort(reports, kind="stable")
                keys, values, reports = keys[order], values[order], reports[order]
            out[metric] = Observations(keys[:, None], values[:, None], reports)
    return out


def report_values(report: ParsedReport) -> dict[Metric, list[tuple[tuple[int, ...], object]]]:
    """One report's metric values as (ids, value) per metric, ids in Table I
    order, the path as a tuple of switch ids (INT source first). The plain
    form of ``extract``, for checks and slow consumers."""
    out: dict[Metric, list[tuple[tuple[int, ...], object]]] = {}
    if report.flow is None or report.int_version is None or not report.hop_count:
        return out
    flow, hops = report.flow, {name: values[::-1] for name, values in report.hops.items()}
    sw = hops.get("node_id")
    latency = hops.get("hop_latency")
    if sw is not None:
        out[FLOW_PATH] = [(flow, tuple(sw))]
    if latency is not None:
        out[FLOW_LATENCY] = [(flow, sum(latency))]
        if sw is not None:
            out[FLOW_HOP_LATENCY] = [((*flow, s), v) for s, v in zip(sw, latency)]
    if sw is not None:
        for metric in (QUEUE_OCCUPANCY, QUEUE_CONGESTION, LINK_UTILIZATION):
            _, id_field, value_field = metric.fields
            if id_field in hops and value_field in hops:
                out[metric] = [((s, i), v) for s, i, v in
                               zip(sw, hops[id_field], hops[value_field])]
    return out
