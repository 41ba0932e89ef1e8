"""The collector pipeline in virtual time: metric values against
``report_values`` of each report, events and periodic pushes against a
value-by-value model, the queue between the paths, the baselines (no
detection, per-report push), and the fast path's rate."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from report_builders import ALL_V05, ALL_V10, ALL_V20, ReportSpec, build, hop_fields, int_bytes
from test_reports import best_of

from common.clock import VirtualClock
from sinks.intcollector import fastloop
from sinks.intcollector.metrics import (
    FLOW_HOP_LATENCY,
    FLOW_PATH,
    METRICS,
    QUEUE_CONGESTION,
    KeySpace,
    Metric,
    extract,
    path_text,
    report_values,
    tags,
)
from sinks.intcollector.pipeline import Collector, CollectorConfig
from sinks.intcollector.reports import ParsedReport, parse_batch, parse_report, parse_rows
from sinks.intcollector.stores import MemoryStore, Point, SqliteStore

ALL_BITS = {0: ALL_V05, 1: ALL_V10, 2: ALL_V20}


class RecordingStore(MemoryStore):
    """A MemoryStore that notes the clock time of every write and whether
    it came from a periodic push (``watch`` marks the collector's pushes)."""

    def __init__(self, clock: VirtualClock) -> None:
        super().__init__()
        self.clock = clock
        self.written_at: list[float] = []
        self.pushed: list[bool] = []
        self.batches: list[list[Point]] = []
        self._pushing = False

    def write(self, points: Sequence[Point]) -> None:
        super().write(points)
        self.written_at += [self.clock.now()] * len(points)
        self.pushed += [self._pushing] * len(points)
        self.batches.append(list(points))

    def watch(self, collector: Collector) -> None:
        push = collector.normal.push

        def marked() -> int:
            self._pushing = True
            try:
                return push()
            finally:
                self._pushing = False

        collector.normal.push = marked  # type: ignore[method-assign]


# --- reports ---------------------------------------------------------------------

HOP_BYTES = 48  # INT v2.0, all nine baseline instructions
OFFSETS = {"node_id": (0, 4), "l1_egress_port": (6, 2), "hop_latency": (8, 4),
           "queue_id": (12, 1), "queue_occupancy": (13, 3), "egress_tx_util": (40, 4)}


def hop(sw: int, **values: int) -> dict[str, int]:
    base = {name: 0 for name in hop_fields(2, ALL_V20)}
    base.update(node_id=sw, l1_egress_port=sw % 7 + 1, **values)
    return base


class Flow:
    """Reports of one flow over a fixed path (INT source first), TR v2.0 with
    INT v2.0: one Scapy-built template, per-hop values patched in place."""

    def __init__(self, index: int, path: Sequence[int]) -> None:
        spec = ReportSpec(hops=[hop(sw) for sw in reversed(path)],
                          src=f"10.0.{index // 250}.{index % 250 + 1}", sport=1000 + index)
        self.template = bytearray(build(spec))
        self.stack = self.template.find(int_bytes(spec)) + 16
        self.path = list(path)

    def report(self, **per_hop: Sequence[int]) -> bytes:
        """A report with per-hop values given INT source first."""
        data = self.template[:]
        count = len(self.path)
        for name, values in per_hop.items():
            offset, size = OFFSETS[name]
            for i, value in enumerate(values):
                at = self.stack + (count - 1 - i) * HOP_BYTES + offset
                data[at:at + size] = int(value).to_bytes(size, "big")
        return bytes(data)


def test_patched_reports_parse_to_the_values_put_in() -> None:
    flow = Flow(3, [11, 12, 13])
    got = parse_report(flow.report(hop_latency=[5, 6, 7], queue_occupancy=[1, 2, 0x30000]))
    assert isinstance(got, ParsedReport)
    assert got.hops["node_id"] == (13, 12, 11) and got.hops["hop_latency"] == (7, 6, 5)
    assert got.hops["queue_occupancy"] == (0x30000, 2, 1)


def test_report_values_by_hand() -> None:
    report = parse_report(Flow(3, [11, 12, 13]).report(
        hop_latency=[5, 6, 7], queue_occupancy=[1, 2, 3], egress_tx_util=[40, 50, 60]))
    assert isinstance(report, ParsedReport)
    flow = (0x0A000004, 0x0A000202, 17, 1003, 80)  # 10.0.0.4 -> 10.0.2.2, UDP
    by_name = {metric.name: values for metric, values in report_values(report).items()}
    assert by_name == {
        "flow_path": [(flow, (11, 12, 13))],
        "flow_latency": [(flow, 18)],
        "flow_hop_latency": [((*flow, 11), 5), ((*flow, 12), 6), ((*flow, 13), 7)],
        "queue_occupancy": [((11, 0), 1), ((12, 0), 2), ((13, 0), 3)],
        "link_utilization": [((11, 5), 40), ((12, 6), 50), ((13, 7), 60)],  # egress sw % 7 + 1
    }
    assert tags(FLOW_HOP_LATENCY, (*flow, 12)) == (
        ("dst_ip", "10.0.2.2"), ("dst_port", "80"), ("proto", "17"), ("src_ip", "10.0.0.4"),
        ("src_port", "1003"), ("sw_id", "12"))


# --- metric values -----------------------------------------------------------------

def random_spec(rng: random.Random, tr: int, intv: int) -> ReportSpec:
    """Few flows and switches, so keys repeat; sometimes fewer instructions."""
    instructions = ALL_BITS[intv] if rng.random() < 0.6 else rng.choice(
        [0x8000, 0x2000, 0xA000, 0x9000, 0x8100, 0xB100])
    widths = hop_fields(intv, instructions)
    hops = []
    for _ in range(rng.randint(0, 6)):
        values = {name: rng.getrandbits(bits) for name, bits in widths.items()}
        for name in ("node_id", "queue_id", "congestion_queue_id", "l1_egress_port"):
            if name in values:
                values[name] = rng.randint(1, 4)
        hops.append(values)
    return ReportSpec(report_version=tr, int_version=intv, instructions=instructions, hops=hops,
                      src=f"10.0.0.{rng.randint(1, 3)}", sport=rng.randint(1, 3),
                      l4=rng.choice(["udp", "tcp"]), inner=rng.choice(["ethernet", "vlan"]))


def test_batch_values_equal_report_values() -> None:
    rng = random.Random(4)
    specs = [random_spec(rng, tr, intv) for tr in (0, 1, 2) for intv in (0, 1, 2)
             for _ in range(8)]
    rng.shuffle(specs)
    data = [build(spec) for spec in specs] + [b"\x20" * 5]  # one truncated report
    space = KeySpace()
    found = extract(parse_batch(data), space)
    want: dict[Metric, list[tuple[tuple[int, ...], object]]] = {m: [] for m in METRICS}
    for payload in data:
        result = parse_report(payload)
        if isinstance(result, ParsedReport):
            for metric, values in report_values(result).items():
                want[metric] += values
    for metric in METRICS:
        obs = found.get(metric)
        got = [] if obs is None else [
            (space.ids(metric, key), space.paths.paths[v] if metric is FLOW_PATH else v)
            for key, v, _ in zip(*(column.tolist() for column in obs.flat()))]
        assert got == want[metric], metric.name
    assert want[FLOW_HOP_LATENCY] and want[QUEUE_CONGESTION]  # congestion: INT v0.5 only


# --- a run in virtual time -----------------------------------------------------------

class Model:
    """Expected store contents, value by value: events by the rule of
    section III-D, periodic pushes of keys seen during each period."""

    def __init__(self, thresholds: dict[str, float]) -> None:
        self.thresholds = thresholds
        self.reported: dict[tuple[Metric, tuple[int, ...]], object] = {}
        self.latest: dict[tuple[Metric, tuple[int, ...]], tuple[object, int]] = {}
        self.dirty: set[tuple[Metric, tuple[int, ...]]] = set()
        self.events: list[Point] = []
        self.pushes: list[Point] = []

    def take(self, report: ParsedReport, time_ns: int) -> None:
        for metric, values in report_values(report).items():
            for ids, value in values:
                key = (metric, ids)
                last = self.reported.get(key)
                if last is None or (value != last if metric.categorical else
                                    abs(value - last) > self.thresholds[metric.name]):  # type: ignore[operator]
                    self.reported[key] = value
                    self.events.append(point(metric, ids, value, time_ns))
                self.latest[key] = (value, time_ns)
                self.dirty.add(key)

    def push(self) -> None:
        for metric, ids in sorted(self.dirty, key=lambda k: (k[0].name, k[1])):
            value, time_ns = self.latest[(metric, ids)]
            self.pushes.append(point(metric, ids, value, time_ns))
        self.dirty.clear()


def point(metric: Metric, ids: tuple[int, ...], value: object, time_ns: int) -> Point:
    text = path_text(value) if metric is FLOW_PATH else value  # type: ignore[arg-type]
    return Point(metric.name, tags(metric, ids), {"value": text}, time_ns)  # type: ignore[arg-type]


def key(p: Point) -> tuple[Any, ...]:
    return p.measurement, p.tags, p.fields["value"], p.time_ns


PATHS = [[11, 12, 13], [11, 14, 13], [15, 12, 13]]


def scenario(steps: int, seed: int = 1) -> list[tuple[float, list[bytes]]]:
    """Every 0.1 s one report per flow; hop latencies swing slowly with
    bursts, queues and links fluctuate; flow 2 moves to a new path midway."""
    rng = np.random.default_rng(seed)
    flows = [Flow(i, path) for i, path in enumerate(PATHS)]
    moved = Flow(2, [15, 16, 13])
    out = []
    for k in range(steps):
        batch = []
        for i, flow in enumerate(flows):
            if i == 2 and k >= steps // 2:
                flow = moved
            latency = 100 + 40 * np.sin(k / 40 + i + np.arange(3)) + rng.normal(0, 5, 3)
            latency += (rng.random(3) < 0.02) * 120
            batch.append(flow.report(
                hop_latency=np.rint(latency).astype(int).tolist(),
                queue_occupancy=rng.integers(0, 120, 3).tolist(),
                egress_tx_util=(1000 + rng.integers(-30, 30, 3)).tolist()))
        out.append((k / 10, batch))
    return out


def model_of(run: list[tuple[float, list[bytes]]], thresholds: dict[str, float],
             push_times: list[float], change: tuple[float, str, float] | None = None) -> Model:
    model = Model(dict(thresholds))
    pushes = iter(push_times)
    next_push = next(pushes)
    for t, batch in run:
        while t >= next_push:  # the push at time P runs before reports fed at P
            model.push()
            next_push = next(pushes, float("inf"))
        if change is not None and t >= change[0]:
            model.thresholds[change[1]] = change[2]
        for payload in batch:
            report = parse_report(payload)
            assert isinstance(report, ParsedReport)
            model.take(report, round(t * 1e9))
    if next_push != float("inf"):
        model.push()
    return model


THRESHOLDS = {"flow_latency": 60.0, "flow_hop_latency": 40.0, "queue_occupancy": 50.0,
              "queue_congestion": 50.0, "link_utilization": 45.0}


def run_collector(run: list[tuple[float, list[bytes]]], store: Any, clock: VirtualClock,
                  config: CollectorConfig, end: float,
                  change: tuple[float, str, float] | None = None) -> Collector:
    collector = Collector(store, clock, config)
    if isinstance(store, RecordingStore):
        store.watch(collector)
    collector.start()
    for t, batch in run:
        clock.advance_to(t)
        if change is not None and t == change[0]:
            collector.set_threshold(change[1], change[2])
        collector.feed(batch)
    clock.advance_to(end)
    return collector


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
def test_events_exported_every_flush_and_tables_every_p(compiled: bool,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled loop and the numpy rounds (used when numba does not
    import) write the same points, those of the model."""
    if compiled and not fastloop.COMPILED:
        pytest.skip("numba does not import here")
    monkeypatch.setattr(fastloop, "COMPILED", compiled)
    clock = VirtualClock()
    store = RecordingStore(clock)
    run = scenario(300)
    change = (15.0, "flow_hop_latency", 10.0)
    config = CollectorConfig(push_period_s=10, event_flush_s=1, thresholds=THRESHOLDS)
    collector = run_collector(run, store, clock, config, end=30.5, change=change)
    model = model_of(run, THRESHOLDS, [10.0, 20.0, 30.0], change)

    written = list(zip(store.points, store.written_at, store.pushed))
    event_points = [p for p, _, pushed in written if not pushed]
    push_points = [p for p, _, pushed in written if pushed]
    assert sorted(map(key, event_points)) == sorted(map(key, model.events))
    assert sorted(map(key, push_points)) == sorted(map(key, model.pushes))
    assert {at for _, at, pushed in written if pushed} == {10.0, 20.0, 30.0}
    # Each event reaches the store at the first flush after its report.
    for p, at, pushed in written:
        if not pushed:
            assert at == int(p.time_ns // 1_000_000_000) + 1
    counters = collector.counters
    assert counters.reports_in == 900 and counters.reports.accepted == 900
    assert sum(counters.events.values()) == len(model.events)
    assert counters.values == 900 * (1 + 1 + 3 + 3 + 3)
    assert counters.exported_points == len(store.points) == len(model.events) + len(model.pushes)
    assert counters.pushes == 3 and counters.queue_drops == 0
    assert counters.events["flow_path"] == 4  # three new flows, one path change
    hop_events = [p for p in model.events if p.measurement == "flow_hop_latency"]
    before = sum(p.time_ns < 15e9 for p in hop_events)
    assert len(hop_events) - before > before  # the lowered threshold shows


def test_queue_drops_when_the_normal_path_stalls() -> None:
    clock = VirtualClock()
    store = MemoryStore()
    run = scenario(10)
    config = CollectorConfig(event_detection=False, queue_values=100)
    collector = Collector(store, clock, config)
    collector.start()
    for _, batch in run:  # the clock does not move: the normal path never runs
        collector.feed(batch)
    counters = collector.counters
    per_batch = 3 * 11
    assert collector.queue.size == 3 * per_batch
    assert counters.queue_drops == 7 * per_batch and counters.queue_dropped_batches == 7
    assert store.points == []
    clock.advance_to(1.0)
    assert len(store.points) == 3 * per_batch
    assert counters.values == counters.exported_points + counters.queue_drops


def all_values(run: list[tuple[float, list[bytes]]]) -> list[tuple[Any, ...]]:
    out = []
    for t, batch in run:
        for payload in batch:
            report = parse_report(payload)
            assert isinstance(report, ParsedReport)
            out += [key(point(metric, ids, value, round(t * 1e9)))
                    for metric, values in report_values(report).items() for ids, value in values]
    return out


def test_detection_off_exports_every_value() -> None:
    clock = VirtualClock()
    store = MemoryStore()
    run = scenario(40)
    collector = run_collector(run, store, clock, CollectorConfig(event_detection=False,
                                                                 push_period_s=1), end=5.5)
    assert sorted(map(key, store.points)) == sorted(all_values(run))
    assert collector.counters.pushes == 0 and not collector.counters.events
    detected = run_collector(run, MemoryStore(), VirtualClock(), CollectorConfig(), end=5.5)
    assert detected.counters.exported_points < len(store.points) // 5


def test_per_report_push_writes_each_report_on_its_own() -> None:
    clock = VirtualClock()
    store = RecordingStore(clock)
    run = scenario(5)
    config = CollectorConfig(event_detection=False, per_report_push=True)
    collector = run_collector(run, store, clock, config, end=1.0)
    assert store.writes == 15 == collector.counters.store_writes
    per_report = [all_values([(t, [payload])]) for t, batch in run for payload in batch]
    assert [sorted(map(key, batch)) for batch in store.batches] == [sorted(v) for v in per_report]


def test_rejected_reports_are_counted_by_reason() -> None:
    collector = Collector(MemoryStore(), VirtualClock())
    good = Flow(0, [1, 2]).report(hop_latency=[3, 4])
    collector.feed([b"", good, b"\x90" * 20, good[:30], good])
    counters = collector.counters
    assert counters.reports_in == 5 and counters.reports.accepted == 2
    assert counters.rejected == Counter({"truncated": 2, "unknown_version": 1})


def test_sqlite_store_end_to_end(tmp_path: Path) -> None:
    clock = VirtualClock()
    store = SqliteStore(tmp_path / "int.db")
    run = scenario(250)
    config = CollectorConfig(push_period_s=10, thresholds=THRESHOLDS)
    run_collector(run, store, clock, config, end=25.5)
    model = model_of(run, THRESHOLDS, [10.0, 20.0])
    flow_tags = dict(tags(FLOW_HOP_LATENCY, (0x0A000001, 0x0A000202, 17, 1000, 80, 12)))
    want = {p.time_ns: p.fields["value"] for p in model.events + model.pushes
            if dict(p.tags) == flow_tags and p.measurement == "flow_hop_latency"}
    assert store.read("flow_hop_latency", flow_tags) == sorted(want.items())
    assert len(want) > 5
    paths = store.read("flow_path", dict(tags(FLOW_PATH, (0x0A000003, 0x0A000202, 17, 1002, 80))))
    assert [v for _, v in paths][0] == "15,12,13" and "15,16,13" in [v for _, v in paths]
    store.close()


# --- rate -----------------------------------------------------------------------------

def put(rows: np.ndarray, at: int, size: int, values: np.ndarray) -> None:
    """Big-endian ``values`` into bytes [at, at + size) of every row."""
    for b in range(size):
        rows[:, at + size - 1 - b] = (values >> (8 * b)) & 0xFF


def bench_rows(count: int, flows: int, noise: int) -> np.ndarray:
    """``count`` 6-hop TR v2.0 reports of ``flows`` flows (fixed paths over
    100 switches): hop latencies, queues and links within +/- ``noise`` of
    steady levels, with bursts of 400 in one value of a thousand."""
    rng = np.random.default_rng(3)
    template = Flow(0, [1, 2, 3, 4, 5, 6])
    rows = np.tile(np.frombuffer(bytes(template.template), dtype=np.uint8), (count, 1))
    flow = np.arange(count) % flows
    put(rows, bytes(template.template).find(bytes([10, 0, 0, 1])) + 2, 2, flow)
    for h in range(6):
        at = template.stack + h * HOP_BYTES
        put(rows, at, 4, (flow * 7 + h * 13) % 100 + 1)
        for (offset, size), level in ((OFFSETS["hop_latency"], 500),
                                      (OFFSETS["queue_occupancy"], 300),
                                      (OFFSETS["egress_tx_util"], 1000)):
            value = level + rng.integers(-noise, noise + 1, count) + (
                rng.random(count) < 0.001) * 400
            put(rows, at + offset, size, value)
    return rows


def test_fast_path_rate(capsys: pytest.CaptureFixture[str]) -> None:
    """Reports per second through parse + metrics + event detection, with
    thresholds of 50: "quiet" values move less than that between reports
    (events come from bursts), "busy" ones cross it often (flow latency, a
    sum of six hops, varies by up to 240)."""
    count, flows = 100_000, 5000
    lines = []
    for label, noise in (("quiet", 5), ("busy", 20)):
        rows = bench_rows(count, flows, noise)
        if noise == 5:
            wall, cpu = best_of(3, partial(parse_rows, rows))
            lines.append(f"  {'parse_rows':26} {count / wall:>10,.0f} reports/s wall, "
                         f"{count / cpu:>10,.0f} reports/s CPU")
        collector = Collector(MemoryStore(), VirtualClock())
        collector.feed_rows(rows[:20_000])  # every key is new here
        assert collector.counters.reports.accepted == 20_000
        known = sum(collector.counters.events.values())
        wall, cpu = best_of(3, partial(collector.feed_rows, rows))
        events = (sum(collector.counters.events.values()) - known) // 3
        assert 0 < events < 20 * count // 20
        lines.append(f"  {'fast path, ' + label:26} {count / wall:>10,.0f} reports/s wall, "
                     f"{count / cpu:>10,.0f} reports/s CPU, {events / count:.3f} events/report")
    with capsys.disabled():
        print(f"\n{count:,} 6-hop TR v2.0 reports (20 metric values each), {flows} flows:",
              *lines, sep="\n")


def test_all_ones_addresses_are_an_ordinary_flow() -> None:
    """(255.255.255.255, 255.255.255.255) packs to the key table's empty
    mark; its reports still make one flow with its own events."""
    hops = [hop(sw) for sw in (13, 12, 11)]
    odd = build(ReportSpec(hops=hops, src="255.255.255.255", dst="255.255.255.255"))
    usual = build(ReportSpec(hops=hops))
    collector = Collector(MemoryStore(), VirtualClock())
    collector.feed([odd, usual, odd, usual])
    counters = collector.counters
    assert counters.reports.accepted == 4
    assert counters.events["flow_path"] == 2 and counters.events["flow_latency"] == 2
    assert len(collector.fast.tables["flow_path"]) == 2
