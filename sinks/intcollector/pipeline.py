"""INTCollector's two processing paths (Van Tu et al., section III-B).

Fast path, run for every batch of reports in the caller's thread: parse
(``parse_batch``), turn reports into metric values, detect events against
the Info tables and update them with the latest values; the events (with
detection off: every value) go to a bounded queue. A full queue drops the
batch and counts its values: the fast path never waits for the slow one.

Normal path, run by the clock's timer: every ``event_flush_s`` the event
processor drains the queue, turns events into points and the exporter
writes them to the store; every ``push_period_s`` (P) the exporter also
writes the latest value of every key seen during the period, read from the
Info tables, so a key's live status shows in the database even when it
raises no events (keys not seen during a period are not pushed).

Baselines of the paper's evaluation: ``event_detection=False`` exports
every metric value of every report (and has no periodic push: nothing is
left out); ``per_report_push=True`` writes each report's points with a
store write of its own, as the Prometheus INT exporter pushes per report.

Time comes from an injected ``Clock`` (``now`` and ``call_later``), so
tests and the simulator run the collector in virtual time.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from common.clock import Clock
from sinks.intcollector.events import MetricTable, Thresholds, tables
from sinks.intcollector.metrics import (
    BY_NAME,
    DECODED,
    FLOW_PATH,
    METRICS,
    KeySpace,
    Metric,
    extract,
    path_text,
    tags,
)
from sinks.intcollector.reports import (
    DEFAULT_SIGNAL,
    BatchResult,
    IntSignal,
    ReportStats,
    parse_batch,
    parse_rows,
)
from sinks.intcollector.stores.base import Point, Store

log = logging.getLogger(__name__)

_METRIC_INDEX = {metric: i for i, metric in enumerate(METRICS)}

Times = float | Sequence[float] | np.ndarray
"""Arrival time of a batch (one for all reports) or of each report, in
seconds on the collector's clock."""


@dataclass(frozen=True)
class CollectorConfig:
    push_period_s: float = 10.0  # P: the periodic push of the Info tables
    event_flush_s: float = 1.0  # events reach the store at most this late
    event_detection: bool = True
    per_report_push: bool = False
    queue_values: int = 1_000_000  # metric values the queue holds
    thresholds: Mapping[str, float] | None = None  # T(m); DEFAULT_THRESHOLDS otherwise
    signal: IntSignal = DEFAULT_SIGNAL
    time_origin_ns: int = 0  # Unix time (ns) of the clock's zero: added to point times


@dataclass
class Counters:
    """What went through the collector. ``reports`` counts reports in,
    accepted and rejected by reason; ``values`` metric values extracted;
    ``events`` per metric; ``queue_drops`` values dropped at a full queue
    (in ``queue_dropped_batches`` batches); ``exported_points`` points
    handed to the store, ``store_writes`` the write calls."""

    reports: ReportStats = field(default_factory=ReportStats)
    values: int = 0
    events: Counter[str] = field(default_factory=Counter)
    queue_drops: int = 0
    queue_dropped_batches: int = 0
    exported_points: int = 0
    store_writes: int = 0
    store_errors: int = 0
    pushes: int = 0

    @property
    def reports_in(self) -> int:
        return self.reports.total

    @property
    def rejected(self) -> Counter[str]:
        return self.reports.rejected

    def summary(self) -> str:
        return (f"{self.reports.summary()}; values {self.values}, events "
                f"{sum(self.events.values())}, exported {self.exported_points} points in "
                f"{self.store_writes} writes, queue drops {self.queue_drops}")


@dataclass(slots=True)
class MetricValues:
    """Values of one metric going to the normal path: slot in the metric's
    Info table, value, time (ns) and position of the report in its batch."""

    metric: Metric
    slots: np.ndarray
    values: np.ndarray
    times_ns: np.ndarray
    reports: np.ndarray


@dataclass(slots=True)
class ValueBatch:
    parts: list[MetricValues]
    size: int


class ValueQueue:
    """The queue between the paths, bounded in metric values rather than
    items. ``put`` never blocks: a batch that does not fit is refused whole
    (the fast path counts it as dropped)."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("queue capacity must be positive")
        self.capacity = capacity
        self.size = 0
        self._items: deque[ValueBatch] = deque()
        self._lock = threading.Lock()

    def put(self, batch: ValueBatch) -> bool:
        with self._lock:
            if self.size + batch.size > self.capacity:
                return False
            self._items.append(batch)
            self.size += batch.size
            return True

    def take(self) -> list[ValueBatch]:
        """Everything queued, oldest first."""
        with self._lock:
            items, self._items, self.size = list(self._items), deque(), 0
            return items


def _times_ns(times: Times, reports: int, origin_ns: int) -> np.ndarray:
    seconds = np.asarray(times, dtype=np.float64)
    if seconds.ndim == 0:
        seconds = np.full(reports, float(seconds))
    elif len(seconds) != reports:
        raise ValueError(f"{len(seconds)} times for {reports} reports")
    return origin_ns + np.rint(seconds * 1e9).astype(np.int64)


class FastPath:
    """Parser, event detector and Info tables. ``lock`` guards the tables:
    the normal path reads them (periodic push, tags) from its own thread."""

    def __init__(self, queue: ValueQueue, counters: Counters, thresholds: Thresholds,
                 event_detection: bool = True, signal: IntSignal = DEFAULT_SIGNAL,
                 time_origin_ns: int = 0) -> None:
        self.queue = queue
        self.counters = counters
        self.thresholds = thresholds
        self.event_detection = event_detection
        self.signal = signal
        self.time_origin_ns = time_origin_ns
        self.space = KeySpace()
        self.tables: dict[str, MetricTable] = tables()
        self.lock = threading.Lock()

    def process(self, payloads: Sequence[bytes], times: Times) -> int:
        """Parse and take a batch of report payloads; returns its events."""
        return self.process_result(parse_batch(payloads, self.signal, DECODED), times)

    def process_rows(self, rows: np.ndarray, times: Times) -> int:
        """``process`` for equal-length reports in a (reports, length) array."""
        return self.process_result(parse_rows(rows, self.signal, DECODED), times)

    def process_result(self, result: BatchResult, times: Times) -> int:
        times_ns = _times_ns(times, result.size, self.time_origin_ns)
        counters = self.counters
        thresholds = self.thresholds.array()
        detect = self.event_detection
        parts = []
        with self.lock:
            counters.reports.merge(result.stats)
            for metric, obs in extract(result, self.space).items():
                found = self.tables[metric.name].observe_rows(
                    obs.keys, obs.values, obs.reports, times_ns,
                    thresholds[_METRIC_INDEX[metric]], detect, obs.flows,
                    self.space.flows.count)
                counters.values += len(obs)
                if detect:
                    counters.events[metric.name] += len(found)
                if len(found):
                    parts.append(MetricValues(metric, found.slots, found.values,
                                              times_ns[found.reports], found.reports))
        size = sum(len(part.values) for part in parts)
        if size and not self.queue.put(ValueBatch(parts, size)):
            counters.queue_drops += size
            counters.queue_dropped_batches += 1
        return size if detect else 0


class NormalPath:
    """Event processor and exporter: queue to points to store."""

    def __init__(self, fast: FastPath, queue: ValueQueue, store: Store, counters: Counters,
                 per_report_push: bool = False) -> None:
        self.fast = fast
        self.queue = queue
        self.store = store
        self.counters = counters
        self.per_report_push = per_report_push
        self._pending: list[Point] = []
        self._tags: dict[str, list[tuple[tuple[str, str], ...]]] = {m.name: [] for m in METRICS}

    def _tag_sets(self, metric: Metric, table: MetricTable) -> list[tuple[tuple[str, str], ...]]:
        """Tag sets by slot, rendered once per key."""
        cache = self._tags[metric.name]
        if len(cache) < len(table):
            with self.fast.lock:
                space, index = self.fast.space, table.index
                cache.extend(tags(metric, space.ids(metric, index.key(slot)))
                             for slot in range(len(cache), index.count))
        return cache

    def points(self, part: MetricValues) -> list[Point]:
        metric = part.metric
        tag_sets = self._tag_sets(metric, self.fast.tables[metric.name])
        values: list[int] | list[str] = part.values.tolist()
        if metric is FLOW_PATH:
            paths = self.fast.space.paths.paths
            values = [path_text(paths[v]) for v in values]
        name = metric.name
        return [Point(name, tag_sets[s], {"value": v}, t)
                for s, v, t in zip(part.slots.tolist(), values, part.times_ns.tolist())]

    def process_events(self) -> int:
        """Drain the queue. Points wait for ``flush``, or, pushing per report,
        are written at once with one store write per report."""
        count = 0
        for batch in self.queue.take():
            if self.per_report_push:
                count += self._write_per_report(batch)
                continue
            for part in batch.parts:
                points = self.points(part)
                self._pending.extend(points)
                count += len(points)
        return count

    def _write_per_report(self, batch: ValueBatch) -> int:
        by_report: dict[int, list[Point]] = {}
        for part in batch.parts:
            for report, point in zip(part.reports.tolist(), self.points(part)):
                by_report.setdefault(report, []).append(point)
        for report in sorted(by_report):
            self._write(by_report[report])
        return sum(map(len, by_report.values()))

    def _write(self, points: list[Point]) -> None:
        self.store.write(points)
        self.counters.exported_points += len(points)
        self.counters.store_writes += 1

    def flush(self) -> int:
        """Write the points waiting, and let the store send what it buffers."""
        points, self._pending = self._pending, []
        if points:
            self._write(points)
        self.store.flush()
        return len(points)

    def push(self) -> int:
        """Periodic push: the latest value of every key seen since the last
        push, timed when it was seen; returns the points written."""
        parts = []
        with self.fast.lock:
            for name, table in self.fast.tables.items():
                slots = np.flatnonzero(table.dirty[:len(table)])
                if slots.size:
                    table.dirty[slots] = False
                    parts.append(MetricValues(BY_NAME[name], slots, table.latest[slots],
                                              table.seen_ns[slots], slots))
        points = [point for part in parts for point in self.points(part)]
        if points:
            self._write(points)
        self.store.flush()
        self.counters.pushes += 1
        return len(points)


class Collector:
    """The collector: ``feed`` runs the fast path on a batch; after
    ``start`` the clock runs the normal path (event flush every
    ``event_flush_s``, push every P). ``step`` runs the event flush by hand."""

    def __init__(self, store: Store, clock: Clock,
                 config: CollectorConfig = CollectorConfig()) -> None:
        if config.push_period_s <= 0 or config.event_flush_s <= 0:
            raise ValueError("push_period_s and event_flush_s must be positive")
        self.config = config
        self.clock = clock
        self.store = store
        self.counters = Counters()
        self.thresholds = Thresholds(config.thresholds)
        self.queue = ValueQueue(config.queue_values)
        self.fast = FastPath(self.queue, self.counters, self.thresholds,
                             config.event_detection, config.signal, config.time_origin_ns)
        self.normal = NormalPath(self.fast, self.queue, store, self.counters,
                                 config.per_report_push)
        self._generation = 0
        self._running = False
        self._normal_lock = threading.Lock()

    def feed(self, payloads: Sequence[bytes], times: Times | None = None) -> int:
        """Run the fast path on report payloads that arrived at ``times``
        (default: now); returns the events detected."""
        return self.fast.process(payloads, self.clock.now() if times is None else times)

    def feed_rows(self, rows: np.ndarray, times: Times | None = None) -> int:
        return self.fast.process_rows(rows, self.clock.now() if times is None else times)

    def set_threshold(self, metric: str, value: float) -> None:
        """Change T(m) while running: applies from the next batch on."""
        self.thresholds.set(metric, value)

    def step(self) -> int:
        """Event processor and exporter once: drain the queue, write."""
        with self._normal_lock:
            self.normal.process_events()
            return self.normal.flush()

    def push(self) -> int:
        with self._normal_lock:
            return self.normal.push()

    def start(self) -> None:
        """Schedule the normal path on the clock."""
        self._generation += 1
        self._running = True
        generation = self._generation
        self.clock.call_later(self.config.event_flush_s, self._on_flush, generation)
        if self.config.event_detection:
            self.clock.call_later(self.config.push_period_s, self._on_push, generation)

    def stop(self) -> None:
        """Stop the timers, then hand everything queued to the store."""
        self._running = False
        self._generation += 1
        self.step()
        self.store.flush()

    def _on_flush(self, generation: int) -> None:
        if not self._running or generation != self._generation:
            return
        self.clock.call_later(self.config.event_flush_s, self._on_flush, generation)
        self._guarded(self.step)

    def _on_push(self, generation: int) -> None:
        if not self._running or generation != self._generation:
            return
        self.clock.call_later(self.config.push_period_s, self._on_push, generation)
        self._guarded(self.push)

    def _guarded(self, work: Callable[[], object]) -> None:
        """A store failure is logged and counted; the timers keep running."""
        try:
            work()
        except Exception:
            self.counters.store_errors += 1
            log.exception("collector normal path failed")
