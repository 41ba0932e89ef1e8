"""Event detection (INTCollector, section III-D) over whole batches.

An event is a metric value whose key (ids, measurement) is new, or whose
value differs from the key's reference by more than the measurement's
threshold: |V(t2) - V(t1)| > T(m). The reference V(t1) is the last value
*reported*, i.e. the value of the key's last event, not the value of the
previous report: only then does a slow drift raise an event once it has
moved T away, and only then is a value between events known to lie within
V(t1) +/- T (the bound lines of Fig. 9). INTCollector's own fast path does
the same: it writes a key's table entry only when it reports it.

Categorical values (the flow path) have no threshold: any change is an
event, so their reference is simply the previous value.

The Info tables (``MetricTable``) keep per key the reference, the latest
value and when it was seen; the exporter's periodic push reads the latest.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from sinks.intcollector import fastloop
from sinks.intcollector.metrics import BY_NAME, METRICS, KeyIndex, Metric

DEFAULT_THRESHOLDS: dict[str, float] = {
    "flow_latency": 50, "flow_hop_latency": 50, "queue_occupancy": 50,
    "queue_congestion": 50, "link_utilization": 50}
"""T(m) in the units the switches report (INTCollector's fast path uses 50
for every measurement); the flow path has none."""

MAX_ROUNDS = 4
"""Vectorized rounds of the threshold scan (one event per key per round)
before the keys still changing are followed key by key."""
FOLLOW_SIZE = 512
"""Keys with at least this many values in a batch skip the rounds."""


class Thresholds:
    """T(m) per measurement, changeable while the collector runs: the fast
    path takes a ``snapshot`` (or ``array``: one float per metric, in
    ``METRICS`` order, 0 for the path) per batch, so a change applies from
    the next batch on and a batch never sees two thresholds for one metric."""

    def __init__(self, initial: Mapping[str, float] | None = None) -> None:
        self._lock = threading.Lock()
        self._values = dict(DEFAULT_THRESHOLDS)
        for name, value in (initial or {}).items():
            self._check(name, value)
            self._values[name] = float(value)
        self._array = np.array([self._values.get(m.name, 0.0) for m in METRICS],
                               dtype=np.float64)

    @staticmethod
    def _check(name: str, value: float) -> None:
        metric = BY_NAME.get(name)
        if metric is None:
            raise KeyError(f"no metric {name!r}; metrics: {', '.join(BY_NAME)}")
        if metric.categorical:
            raise ValueError(f"{name} has no threshold: every change is an event")
        if not value >= 0:
            raise ValueError(f"threshold of {name} must be >= 0, not {value}")

    def set(self, name: str, value: float) -> None:
        self._check(name, value)
        with self._lock:
            self._values[name] = float(value)
            self._array[METRICS.index(BY_NAME[name])] = float(value)

    def get(self, name: str) -> float:
        with self._lock:
            return self._values.get(name, 0.0)

    def snapshot(self) -> dict[str, float]:
        with self._lock:
            return dict(self._values)

    def array(self) -> np.ndarray:
        """A copy of T per metric in ``METRICS`` order."""
        with self._lock:
            return self._array.copy()


_NO_CACHE = np.zeros((0, 2), dtype=np.uint64)
CHUNK_VALUES = 1 << 17
"""Values per compiled call at most: room for new keys is reserved per call
(as if every value were a new key), so a huge batch is cut rather than
growing the tables for millions of keys it does not have."""


@dataclass(slots=True)
class TableEvents:
    """Events of one batch in one table: slot, value, report, and position
    among the batch's values (in the order they were taken)."""

    slots: np.ndarray
    values: np.ndarray
    reports: np.ndarray
    positions: np.ndarray

    def __len__(self) -> int:
        return len(self.slots)


class MetricTable:
    """One metric's Info table: slots of its keys (``index``) and per slot
    the reference (last reported value), the latest value, when that was
    seen (ns) and whether it was seen since the last periodic push.

    ``compiled`` (the default when numba imports) maps keys by a hash table
    and applies the rule in one compiled loop (``fastloop``); otherwise keys
    are found by binary search and events in numpy rounds. Both give the
    same events; slots differ only in how new keys of one batch are
    numbered (first appearance against key order)."""

    __slots__ = ("metric", "index", "state", "ref", "latest", "seen_ns", "dirty", "compiled",
                 "_found", "_caches")

    def __init__(self, metric: Metric, compiled: bool | None = None) -> None:
        self.metric = metric
        self.compiled = fastloop.COMPILED if compiled is None else compiled
        self.index: KeyIndex | fastloop.HashIndex = (
            fastloop.HashIndex() if self.compiled else KeyIndex())
        self.state = np.zeros((0, 4), dtype=np.int64)
        self._views()
        self._found = np.empty((4, 0), dtype=np.int64)  # reused: a batch's events, then copied
        self._caches: dict[int, np.ndarray] = {}  # per row width: fastloop.observe_rows' cache

    def _views(self) -> None:
        """``ref``, ``latest``, ``seen_ns`` and ``dirty`` (0/1) per slot: the
        columns of ``state``, one row per key (``fastloop.REF``, ...)."""
        self.ref = self.state[:, fastloop.REF]
        self.latest = self.state[:, fastloop.LATEST]
        self.seen_ns = self.state[:, fastloop.SEEN_NS]
        self.dirty = self.state[:, fastloop.DIRTY]

    def __len__(self) -> int:
        return self.index.count

    def _reserve(self, size: int) -> None:
        if size > len(self.state):
            grown = np.zeros((max(size, 2 * len(self.state), 64), 4), dtype=np.int64)
            grown[:len(self.state)] = self.state
            self.state = grown
            self._views()

    def observe(self, keys: np.ndarray, values: np.ndarray, times_ns: np.ndarray,
                threshold: float, detect: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Take a batch of values in time order: returns every value's slot
        and the positions of the events (all positions when ``detect`` is
        off). Updates references, latest values and times."""
        keys = np.asarray(keys, dtype=np.uint64)
        values = np.asarray(values, dtype=np.int64)
        times_ns = np.asarray(times_ns, dtype=np.int64)
        if not self.compiled:
            return self._observe_numpy(keys, values, times_ns, threshold, detect)
        events = self.observe_rows(keys[:, None], values[:, None], np.arange(len(values)),
                                   times_ns, threshold, detect)
        return self.index.lookup(keys), events.positions

    def observe_rows(self, keys: np.ndarray, values: np.ndarray, reports: np.ndarray,
                     report_ns: np.ndarray, threshold: float, detect: bool = True,
                     row_ids: np.ndarray | None = None, row_count: int = 0) -> TableEvents:
        """``observe`` on (rows, width) keys and values taken row by row,
        each row last column first (as ``metrics.Observations`` holds them);
        row r's time is ``report_ns[reports[r]]``. Returns the events.
        ``row_ids`` (flow slots, all below ``row_count``) let the compiled
        loop find a row's slots where the same flow's last row left them."""
        if not self.compiled:
            flat_keys = keys[:, ::-1].ravel()
            flat_values = values[:, ::-1].ravel().astype(np.int64)
            flat_reports = np.repeat(reports, keys.shape[1])
            slots, positions = self._observe_numpy(flat_keys, flat_values,
                                                   report_ns[flat_reports], threshold, detect)
            return TableEvents(slots[positions], flat_values[positions],
                               flat_reports[positions], positions)
        if values.dtype == np.uint64:  # compiled, uint64 - int64 would be a float
            values = values.astype(np.int64)
        width = keys.shape[1]
        if row_ids is None:
            row_ids, cache = np.full(len(keys), -1, dtype=np.int64), _NO_CACHE
        else:
            cache = self._row_cache(width, row_count)
        step = max(1, CHUNK_VALUES // max(width, 1))
        if len(keys) <= step:
            return self._observe_chunk(keys, values, reports, report_ns, threshold, detect,
                                       row_ids, cache)
        parts = []
        for start in range(0, len(keys), step):  # room reserved per chunk, not per batch
            part = self._observe_chunk(
                keys[start:start + step], values[start:start + step],
                reports[start:start + step], report_ns, threshold, detect,
                row_ids[start:start + step], cache)
            part.positions += start * width
            parts.append(part)
        return TableEvents(*(np.concatenate(column) for column in zip(
            *((p.slots, p.values, p.reports, p.positions) for p in parts))))

    def _observe_chunk(self, keys: np.ndarray, values: np.ndarray, reports: np.ndarray,
                       report_ns: np.ndarray, threshold: float, detect: bool,
                       row_ids: np.ndarray, cache: np.ndarray) -> TableEvents:
        """One compiled call; the table, the key state and the event
        buffers made large enough for every value being a new key."""
        size = keys.size
        index = self.index
        assert isinstance(index, fastloop.HashIndex)
        index.reserve(size)
        self._reserve(index.count + size)
        if self._found.shape[1] < size:
            self._found = np.empty((4, max(size, 2 * self._found.shape[1])), dtype=np.int64)
        ev_slots, ev_values, ev_reports, ev_pos = self._found
        table, keys_by_slot = index.arrays
        index.count, found = fastloop.observe_rows(
            keys, values, reports, report_ns, table, keys_by_slot, index.count, self.state,
            float(threshold), self.metric.categorical, detect, ev_slots, ev_values, ev_reports,
            ev_pos, row_ids, cache)
        return TableEvents(*self._found[:, :found].copy())

    def _row_cache(self, width: int, rows: int) -> np.ndarray:
        """The (key, slot) per column of each flow's last row of ``width``
        values, at least ``rows`` flows; new rows hold no key (``EMPTY``)."""
        cache = self._caches.get(width)
        if cache is None or len(cache) < rows:
            grown = np.full((max(rows, 64, 2 * (0 if cache is None else len(cache))),
                             2 * width), fastloop.EMPTY, dtype=np.uint64)
            if cache is not None:
                grown[:len(cache)] = cache
            cache = self._caches[width] = grown
        return cache

    def _observe_numpy(self, keys: np.ndarray, values: np.ndarray, times_ns: np.ndarray,
                       threshold: float, detect: bool) -> tuple[np.ndarray, np.ndarray]:
        known = self.index.count
        slots = self.index.lookup(keys)
        self._reserve(self.index.count)
        size = len(values)
        if detect:
            events = self._events(slots, values, known, 0.0 if self.metric.categorical
                                  else threshold)
        else:
            events = np.arange(size)
        last = np.full(self.index.count, -1, dtype=np.int64)
        np.maximum.at(last, slots, np.arange(size))
        touched = np.flatnonzero(last >= 0)
        where = last[touched]
        self.latest[touched] = values[where]
        self.seen_ns[touched] = times_ns[where]
        self.dirty[touched] = 1
        if not detect:
            self.ref[touched] = values[where]
        return slots, events

    def _events(self, slots: np.ndarray, values: np.ndarray, known: int,
                threshold: float) -> np.ndarray:
        """Event positions. A key can have an event in this batch only if it
        is new or one of its values is past the threshold from the reference
        held at the start of the batch (the reference moves only at events);
        only those keys' values are scanned in order."""
        old = slots < known
        ref = self.ref[np.where(old, slots, 0)]
        suspect = np.abs(values - ref) > threshold if threshold else values != ref
        suspect |= ~old
        if not suspect.any():
            return np.zeros(0, dtype=np.int64)
        mark = np.zeros(self.index.count, dtype=bool)
        mark[slots[suspect]] = True
        chosen = np.flatnonzero(mark[slots])
        hit, group_slots, group_ref = scan(slots[chosen], values[chosen], self.ref, known,
                                           threshold)
        self.ref[group_slots] = group_ref
        return chosen[hit]

    def items(self) -> Iterable[tuple[int, int, int]]:
        """(slot, latest value, seen ns) of every key, for checks."""
        count = self.index.count
        return zip(range(count), self.latest[:count].tolist(), self.seen_ns[:count].tolist())


def scan(slots: np.ndarray, values: np.ndarray, ref: np.ndarray, known: int,
         threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The event rule on values in time order: slots below ``known`` start
    from ``ref[slot]``, others are new (their first value is an event).
    Returns the event mask, each slot seen and its reference afterwards.

    Keys are grouped by a stable sort. With threshold 0 an event is a value
    unlike the one before it. Otherwise each round finds, for every key at
    once, the first value past the threshold from its reference, which then
    becomes the reference; keys without one are done. Keys with many values,
    and keys still changing after the rounds, are followed one by one, event
    to event (``_threshold_rounds``)."""
    order = group_order(slots)
    s, v = slots[order], values[order]
    size = len(s)
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, size]))
    group_slots = s[starts]
    new = group_slots >= known
    group_ref = ref[np.where(new, 0, group_slots)].copy()
    group_ref[new] = v[starts[new]]
    event = np.zeros(size, dtype=bool)
    event[starts[new]] = True
    if threshold == 0:
        before = np.empty_like(v)
        before[1:] = v[:-1]
        before[starts] = group_ref
        event |= v != before
        group_ref = v[np.r_[starts[1:], size] - 1]
    else:
        pending = np.ones(size, dtype=bool)
        pending[starts[new]] = False
        _threshold_rounds(v, group, group_ref, event, np.flatnonzero(pending), threshold)
    out = np.empty(size, dtype=bool)
    out[order] = event
    return out, group_slots, group_ref


def group_order(slots: np.ndarray) -> np.ndarray:
    """A stable argsort of non-negative slots. NumPy sorts 16-bit integers
    stably by radix, several times faster than 64-bit ones, so slots are
    sorted 16 bits at a time (least significant first)."""
    top = int(slots.max()) if slots.size else 0
    if top >= 1 << 32:
        return np.argsort(slots, kind="stable")
    order = (slots & 0xFFFF).astype(np.uint16).argsort(kind="stable")
    if top >= 1 << 16:
        high = (slots >> 16).astype(np.uint16)[order]
        order = order[high.argsort(kind="stable")]
    return order


def _threshold_rounds(v: np.ndarray, group: np.ndarray, group_ref: np.ndarray,
                      event: np.ndarray, pending: np.ndarray, threshold: float) -> None:
    """Threshold events of grouped values, in place (see ``scan``). A round
    costs a few numpy operations per pending value and finds one event per
    key; following a key costs some microseconds per event. So keys with
    more than ``FOLLOW_SIZE`` values are followed at once, the others go
    through at most ``MAX_ROUNDS`` rounds, and the keys left are followed."""
    heads, tails = _runs(group[pending])
    big = tails - heads >= FOLLOW_SIZE
    followed = [pending[heads[big]], pending[tails[big] - 1] + 1]
    if big.any():
        pending = pending[np.repeat(~big, tails - heads)]
    for _ in range(MAX_ROUNDS):
        if not pending.size:
            break
        past = np.abs(v[pending] - group_ref[group[pending]]) > threshold
        hits = pending[past]
        if not hits.size:
            pending = hits
            break
        first = hits[np.r_[True, group[hits][1:] != group[hits][:-1]]]
        event[first] = True
        group_ref[group[first]] = v[first]
        cut = np.full(len(group_ref), len(v))
        cut[group[first]] = first
        pending = pending[pending > cut[group[pending]]]
    if pending.size:
        heads, tails = _runs(group[pending])
        followed = [np.r_[followed[0], pending[heads]], np.r_[followed[1], pending[tails - 1] + 1]]
    for lo, hi in zip(followed[0].tolist(), followed[1].tolist()):
        g = int(group[lo])
        ref = int(group_ref[g])
        while (at := _next_past(v, lo, hi, ref, threshold)) >= 0:
            event[at] = True
            ref = int(v[at])
            lo = at + 1
        group_ref[g] = ref


def _runs(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) of each run of equal labels."""
    if not labels.size:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    heads = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]])
    return heads, np.r_[heads[1:], len(labels)]


def _next_past(v: np.ndarray, lo: int, hi: int, ref: int, threshold: float) -> int:
    """First index in [lo, hi) whose value is more than ``threshold`` from
    ``ref``, or -1; looks in windows growing fourfold, so the cost follows
    the distance to the next event rather than the run's length."""
    above, below = ref + threshold, ref - threshold
    width = 32
    while lo < hi:
        window = v[lo:min(lo + width, hi)]
        past = (window > above) | (window < below)
        at = int(past.argmax())
        if past[at]:
            return lo + at
        lo += width
        width *= 4
    return -1


def tables(compiled: bool | None = None) -> dict[str, MetricTable]:
    """An empty Info table per metric."""
    return {metric.name: MetricTable(metric, compiled) for metric in METRICS}
