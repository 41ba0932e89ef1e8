"""The flow cache H_P with its general rings R_G, event rings R_I and
per-switch histograms, as preallocated numpy arrays fed by ``kernel``.

A bucket holds the flow key, packet count, last-update time, and per hop
(hop 0 = the INT source's, as the path runs) the latest value of the switch
id, hop latency, queue occupancy and link utilization with their running
sum and sample count: the average is the cumulative mean sum / count over
every packet of the flow that carried that value (the paper's "cumulative
statistics"), exact in integers. See docs/flowcache.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from sinks.flowcache import kernel
from sinks.flowcache.config import FlowCacheConfig, check_threshold, event_mask
from sinks.flowcache.layout import (
    CLASSES,
    COUNTERS,
    MEASURED,
    THRESHOLD_METRICS,
)

VALUES = 4  # per-hop columns: switch id, hop latency, queue occupancy, link utilization
DIRECT_SWITCHES = 1 << 16
"""Switch ids below this find their histogram by direct index, not by hashing."""
LUT_LIMIT = 1 << 16
"""Values below min(last bin edge + 1, this) find their bin in a table."""


@dataclass(frozen=True, slots=True)
class PacketBatch:
    """Packets as the kernel takes them, in arrival order: key0 = src << 32
    | dst, key1 = proto << 32 | sport << 16 | dport, ts in ns, hops (the
    number of hop records), present (bit m: column m of ``values`` was in
    the packet) and values (packets, max_hops, 4), hop 0 the source's."""

    key0: np.ndarray
    key1: np.ndarray
    ts: np.ndarray
    hops: np.ndarray
    present: np.ndarray
    values: np.ndarray

    def __len__(self) -> int:
        return len(self.key0)

    def take(self, index: np.ndarray | slice) -> PacketBatch:
        return PacketBatch(self.key0[index], self.key1[index], self.ts[index], self.hops[index],
                           self.present[index], self.values[index])


def make_batch(key0: np.ndarray, key1: np.ndarray, ts: np.ndarray, hops: np.ndarray,
               present: np.ndarray, values: np.ndarray) -> PacketBatch:
    """A PacketBatch with the dtypes the kernel expects (copies only when needed)."""
    return PacketBatch(np.ascontiguousarray(key0, np.uint64),
                       np.ascontiguousarray(key1, np.uint64),
                       np.ascontiguousarray(ts, np.int64), np.ascontiguousarray(hops, np.uint8),
                       np.ascontiguousarray(present, np.uint8),
                       np.ascontiguousarray(values, np.uint32))


def flow_key(src: int, dst: int, proto: int, sport: int, dport: int) -> tuple[int, int]:
    """(key0, key1) of a 5-tuple with IPv4 addresses as integers."""
    return (src << 32) | dst, (proto << 32) | (sport << 16) | dport


def split_key(key0: int, key1: int) -> tuple[int, int, int, int, int]:
    """The 5-tuple back from (key0, key1)."""
    return key0 >> 32, key0 & 0xFFFF_FFFF, (key1 >> 32) & 0xFF, (key1 >> 16) & 0xFFFF, \
        key1 & 0xFFFF


@dataclass(frozen=True, slots=True)
class Evictions:
    """Buckets drained from the general rings, ring by ring, oldest first.
    ``reason`` is layout.EVICT_*; ``time`` when the bucket left H_P."""

    ring: np.ndarray
    key0: np.ndarray
    key1: np.ndarray
    count: np.ndarray
    last_ts: np.ndarray
    hops: np.ndarray
    reason: np.ndarray
    time: np.ndarray
    latest: np.ndarray
    sums: np.ndarray
    samples: np.ndarray

    def __len__(self) -> int:
        return len(self.key0)

    def averages(self) -> np.ndarray:
        """Cumulative means per hop and column (NaN where never sampled)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.sums.astype(np.float64) / self.samples


@dataclass(frozen=True, slots=True)
class Events:
    """Events drained from the event rings, ring by ring, oldest first:
    switch id, hop index, value, event-type bitmap (layout.EVENT_BITS) and
    the packet's timestamp, with the flow they came from."""

    ring: np.ndarray
    key0: np.ndarray
    key1: np.ndarray
    switch: np.ndarray
    hop: np.ndarray
    value: np.ndarray
    bitmap: np.ndarray
    ts: np.ndarray

    def __len__(self) -> int:
        return len(self.key0)


def drain_rings(head: np.ndarray, tail: np.ndarray, arrays: tuple[np.ndarray, ...],
           rings: Iterable[int] | None = None, limit: Iterable[int] | None = None
           ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Copy out what the rings hold (at most ``limit[i]`` of the i-th ring
    listed: a reader with a service rate takes only what it has time
    for), oldest first, then free what was read. Single consumer per ring:
    the tail moves only after the copy, by what was copied, so a producer
    adding meanwhile loses nothing."""
    cap = arrays[0].shape[1]
    slots = []
    which = list(range(len(head)) if rings is None else rings)
    most = [None] * len(which) if limit is None else [int(x) for x in limit]
    for r, top in zip(which, most, strict=True):
        n = int(head[r] - tail[r])
        if top is not None:
            n = max(0, min(n, top))
        if n:
            slots.append((r, n, (int(tail[r]) + np.arange(n)) % cap))
    if not slots:
        return np.zeros(0, np.int64), [a[0, :0] for a in arrays]
    ring_index = np.concatenate([np.full(n, r, np.int64) for r, n, _ in slots])
    slot_index = np.concatenate([s for _, _, s in slots])
    out = [a[ring_index, slot_index] for a in arrays]
    for r, n, _ in slots:
        tail[r] += n
    return ring_index, out


class FlowCache:
    """H_P (rows x buckets) with its rings and histograms. ``process`` feeds
    a batch in one compiled call; ``drain_*`` empty the rings as the host's
    readers do; thresholds and enabled events change between batches."""

    def __init__(self, config: FlowCacheConfig | None = None) -> None:
        cfg = self.config = config or FlowCacheConfig()
        n, h = cfg.rows * cfg.buckets, cfg.max_hops
        self.table = (np.zeros(n, np.uint64), np.zeros(n, np.uint64), np.zeros(n, np.int64),
                      np.zeros((n, kernel.META), np.int64), np.zeros((n, h, VALUES), np.uint32),
                      np.zeros((n, h, VALUES), np.uint64), np.zeros((n, h, VALUES), np.uint32))
        r, e = cfg.rings, cfg.ring_entries
        self.gring = (np.zeros(r, np.int64), np.zeros(r, np.int64), np.zeros((r, e), np.uint64),
                      np.zeros((r, e), np.uint64), np.zeros((r, e), np.int64),
                      np.zeros((r, e), np.int64), np.zeros((r, e), np.uint8),
                      np.zeros((r, e), np.uint8), np.zeros((r, e), np.int64),
                      np.zeros((r, e, h, VALUES), np.uint32),
                      np.zeros((r, e, h, VALUES), np.uint64),
                      np.zeros((r, e, h, VALUES), np.uint32))
        self.ering = (np.zeros(r, np.int64), np.zeros(r, np.int64), np.zeros((r, e), np.uint64),
                      np.zeros((r, e), np.uint64), np.zeros((r, e), np.uint32),
                      np.zeros((r, e), np.uint8), np.zeros((r, e), np.uint64),
                      np.zeros((r, e), np.uint16), np.zeros((r, e), np.int64))
        edges = [list(cfg.edges.get(m, (0,))) for m in MEASURED]
        width = max(map(len, edges))
        edge_array = np.full((len(MEASURED), width), np.iinfo(np.int64).max, np.int64)
        for m, row in enumerate(edges):
            edge_array[m, :len(row)] = row
        directory = 1 << (2 * cfg.max_switches - 1).bit_length()
        # bins by table for values up to the last lower bound (or LUT_LIMIT - 1)
        lut_top = np.array([min(e[-1], LUT_LIMIT - 1) for e in edges], np.int64)
        lut_full = np.array([e[-1] < LUT_LIMIT for e in edges], np.int64)
        lut = np.zeros((len(MEASURED), int(lut_top.max()) + 1), np.int32)
        for m, row in enumerate(edges):
            values = np.arange(lut_top[m] + 1)
            lut[m, :lut_top[m] + 1] = np.maximum(np.searchsorted(row, values, "right") - 1, 0)
        self.hist = (np.zeros(directory, np.uint64), np.zeros(directory, np.int64),
                     np.zeros(cfg.max_switches, np.uint64),
                     np.zeros((cfg.max_switches, len(MEASURED), width), np.int64), edge_array,
                     np.array([len(e) for e in edges], np.int64),
                     np.full(DIRECT_SWITCHES + kernel.DIRECT_HOPS, -1, np.int64), lut, lut_top,
                     lut_full)
        self.thresholds = np.array([[cfg.threshold(c, m) for m in THRESHOLD_METRICS]
                                    for c in CLASSES], np.int64)
        self.params = np.zeros(kernel.N_PARAMS, np.int64)
        p = self.params
        p[kernel.P_BUCKETS], p[kernel.P_ROWS], p[kernel.P_SHARDS] = cfg.buckets, cfg.rows, \
            cfg.shards
        p[kernel.P_EVENT_MASK] = event_mask(cfg.events)
        p[kernel.P_AGING_PERIOD] = cfg.aging_period_ns
        p[kernel.P_AGING_INTERVAL] = cfg.aging_interval_ns
        p[kernel.P_NEXT_DUE] = -1
        self._counters = np.zeros(len(COUNTERS), np.int64)

    # ------------------------------------------------------------- feeding

    def process(self, batch: PacketBatch) -> None:
        """Feed a batch in arrival order (one compiled call)."""
        if batch.values.shape[1:] != (self.config.max_hops, VALUES):
            raise ValueError(f"batch values have shape {batch.values.shape[1:]}, the cache "
                             f"takes (max_hops={self.config.max_hops}, {VALUES})")
        kernel.process(self.table, self.gring, self.ering, self.hist, self.thresholds,
                       self.params, self._counters, batch.key0, batch.key1, batch.ts,
                       batch.hops, batch.present, batch.values)

    def age(self, now_ns: int) -> None:
        """An aging sweep at ``now_ns`` outside the packet-driven timer."""
        if self.config.aging_period_ns:
            kernel.sweep(np.int64(now_ns), self.table, self.gring, self.params, self._counters)

    def flush(self, now_ns: int, sink: Callable[[Evictions], None]) -> None:
        """Export every bucket (reason flush) to ``sink``, a slice of rows at
        a time small enough that no general ring overflows."""
        cfg = self.config
        step = max(1, cfg.rings * (cfg.ring_entries // cfg.buckets))
        self.drain_evictions_to(sink)
        for start in range(0, cfg.rows, step):
            kernel.flush_rows(start, min(cfg.rows, start + step), np.int64(now_ns), self.table,
                              self.gring, self.params, self._counters)
            self.drain_evictions_to(sink)

    def drain_evictions_to(self, sink: Callable[[Evictions], None]) -> None:
        drained = self.drain_evictions()
        if len(drained):
            sink(drained)

    # ------------------------------------------------------------- settings

    def set_threshold(self, cls: str, metric: str, value: int | None) -> None:
        """Change a threshold while running (None: off); the next batch uses it."""
        check_threshold(cls, metric, value)
        self.thresholds[CLASSES.index(cls), THRESHOLD_METRICS.index(metric)] = \
            np.iinfo(np.int64).max if value is None else value

    def set_events(self, names: list[str] | None) -> None:
        """Enable only these event types (None: all)."""
        self.params[kernel.P_EVENT_MASK] = event_mask(names)

    # ------------------------------------------------------------- reading

    @property
    def counters(self) -> dict[str, int]:
        return {name: int(v) for name, v in zip(COUNTERS, self._counters)}

    def ring_overflows(self) -> dict[str, int]:
        c = self.counters
        return {"general": c["general_ring_overflow"], "event": c["event_ring_overflow"]}

    def drain_evictions(self, rings: Iterable[int] | None = None) -> Evictions:
        """Empty the general rings (or those listed), as a host reader does."""
        head, tail, *arrays = self.gring
        ring, out = drain_rings(head, tail, tuple(arrays), rings)
        return Evictions(ring, *out)

    def drain_events(self, rings: Iterable[int] | None = None,
                     limit: Iterable[int] | None = None) -> Events:
        """Empty the event rings (or those listed; at most ``limit[i]``
        entries of the i-th, oldest first)."""
        head, tail, *arrays = self.ering
        ring, out = drain_rings(head, tail, tuple(arrays), rings, limit)
        return Events(ring, *out)

    def histograms(self) -> dict[int, np.ndarray]:
        """Per switch key (the switch id, or layout.UNKNOWN_SWITCH | hop for
        hops without one): counts of shape (3 metrics, bins), bins as
        configured per metric (unused trailing bins of a shorter metric stay 0)."""
        n = int(self.params[kernel.P_SWITCHES])
        keys, counts = self.hist[2], self.hist[3]
        return {int(keys[i]): counts[i].copy() for i in range(n)}

    def entries(self) -> list[dict[str, object]]:
        """Occupied buckets as dicts, for checks and small dumps (slow)."""
        key0, key1, last_ts, meta, latest, sums, nsamp = self.table
        out = []
        for b in np.flatnonzero(key1).tolist():
            h = int(meta[b, kernel.M_HOPS])
            out.append({"bucket": b, "key0": int(key0[b]), "key1": int(key1[b]) & ~(1 << 63),
                        "count": int(meta[b, kernel.M_COUNT]), "last_ts": int(last_ts[b]),
                        "hops": h,
                        "latest": latest[b].copy(), "sums": sums[b].copy(),
                        "samples": nsamp[b].copy()})
        return out
