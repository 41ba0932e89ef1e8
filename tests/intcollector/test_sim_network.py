"""Reports of a simulated INT network through the collector into stores.

The 5-switch line of ``tests/int_md`` (``p4src/int_md.p4``, s1 the INT
source, s5 the sink, s3's port toward s4 rate-limited so its queue fills
and drains in each of two bursts) sends its reports to the sim's collector host;
``FrameFeeder`` hands them to a collector running on the simulator's own
clock. What the store holds, read back (InfluxQL from a private influxd;
``intbed collector query`` on SQLite), must be exactly the events a model
written here finds, value by value, in the report payloads as they arrived.
"""

from __future__ import annotations

import json
import struct
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_pipeline import Model

from intbed.cli import cli
from orchestration.influx_server import InfluxServer, influx_available, query, series_query
from orchestration.network import open_network
from orchestration.sim import SimNetwork
from sinks.intcollector.frames import FrameFeeder
from sinks.intcollector.metrics import METRICS
from sinks.intcollector.pipeline import Collector, CollectorConfig
from sinks.intcollector.replay import udp_payload
from sinks.intcollector.reports import ParsedReport, parse_report
from sinks.intcollector.stores import InfluxWriter, SqliteStore
from sinks.intcollector.stores.base import Point, Store
from tests.int_md.test_int_md_sim import (
    BURST_GAP_NS,
    BURST_SIZE,
    REPORT_UDP_PORT,
    SEND_GAP_NS,
    configure_int,
    frame,
    line_topology,
)

AVAILABLE = influx_available()
RUN_BURSTS = 2  # of the int_md test's three: the queue fills and drains twice
ORIGIN_NS = 1_700_000_000 * 10**9  # points at a plausible Unix time, not 1970
THRESHOLDS = {"flow_latency": 300.0, "flow_hop_latency": 200.0, "queue_occupancy": 10.0,
              "queue_congestion": 1.0, "link_utilization": 50.0}
CONFIG = CollectorConfig(push_period_s=3600.0, event_flush_s=0.005, thresholds=THRESHOLDS,
                         time_origin_ns=ORIGIN_NS)  # no periodic push within the run: events only


def run_network(store: Store) -> tuple[Collector, FrameFeeder, list[tuple[bytes, float]]]:
    """The three bursts through the line; the collector fed by the sim's
    collector host. Returns the collector (stopped: everything handed to
    the store), the feeder and every frame the collector host got."""
    topo = line_topology()
    # Switches that take no time: the reports' queue values are the
    # configured queue's alone, which the test computes.
    net = open_network("sim", topo, "int_md", seed=3, switch_model="ideal")
    assert isinstance(net, SimNetwork)
    collector = Collector(store, net.clock, CONFIG)
    feeder = FrameFeeder(collector, REPORT_UDP_PORT)
    seen: list[tuple[bytes, float]] = []

    def handler(frames: list[tuple[bytes, float]]) -> None:
        seen.extend(frames)
        feeder(frames)

    net.attach_collector(handler)
    with net:
        net.install_routes()
        configure_int(net, topo)
        collector.start()
        for b in range(RUN_BURSTS):
            for k in range(BURST_SIZE):
                seq = b * BURST_SIZE + k
                net.sim.at_ns(b * BURST_GAP_NS + k * SEND_GAP_NS, net.send_frame, "h1",
                              frame(seq, topo))
        net.run(RUN_BURSTS * BURST_GAP_NS / 1e9 + 0.02)
        collector.stop()
    return collector, feeder, seen


def expected_events(frames: list[tuple[bytes, float]]) -> list[Point]:
    """The rule of section III-D, report by report, value by value."""
    model = Model(THRESHOLDS)
    for data, at in frames:
        payload = udp_payload(data, 1, REPORT_UDP_PORT)
        assert isinstance(payload, bytes)
        report = parse_report(payload)
        assert isinstance(report, ParsedReport), report
        model.take(report, ORIGIN_NS + round(at * 1e9))
    return model.events


def by_measurement(points: list[Point]) -> dict[str, list[tuple[Any, ...]]]:
    out: dict[str, list[tuple[Any, ...]]] = {}
    for p in points:
        out.setdefault(p.measurement, []).append(
            (tuple(sorted(p.tags)), p.time_ns, p.fields["value"]))
    return {name: sorted(rows) for name, rows in out.items()}


def check_run(collector: Collector, feeder: FrameFeeder,
              frames: list[tuple[bytes, float]]) -> list[Point]:
    """Every packet gave one report, all fed; the collector's counts equal
    the model's. Returns the model's events."""
    assert feeder.frames == len(frames) == RUN_BURSTS * BURST_SIZE
    assert feeder.reports == len(frames) and not feeder.skipped
    counters = collector.counters
    assert counters.reports.accepted == len(frames) and not counters.reports.rejected
    events = expected_events(frames)
    assert counters.events == Counter(p.measurement for p in events)
    assert counters.exported_points == len(events) and counters.queue_drops == 0
    # Each packet is a flow of its own (ports vary): one path event each. The
    # five queues are shared: new once, then events as s3's queue moves.
    assert counters.events["flow_path"] == len(frames)
    assert counters.events["queue_occupancy"] > 5 + 2 * RUN_BURSTS
    return events


def test_sim_reports_into_sqlite_read_back_by_cli_query(tmp_path: Path) -> None:
    path = tmp_path / "events.sqlite"
    store = SqliteStore(path)
    try:
        collector, feeder, frames = run_network(store)
    finally:
        store.close()
    events = check_run(collector, feeder, frames)
    assert_sqlite_holds(path, events)


def assert_sqlite_holds(path: Path, events: list[Point]) -> None:
    """``intbed collector query`` on the SQLite store gives exactly ``events``,
    metric by metric."""
    want = by_measurement(events)
    runner = CliRunner()
    for metric in METRICS:
        result = runner.invoke(cli, ["collector", "query", "--store", f"sqlite:{path}",
                                     metric.name, "--json"])
        assert result.exit_code == 0, result.output
        answer = json.loads(result.output)
        got = sorted((tuple(sorted(s["tags"].items())), t, v)
                     for s in answer["series"] for t, v in s["points"])
        assert got == want.get(metric.name, []), metric.name
    assert want["flow_path"][0][2] == "257,258,259,260,261"  # node ids 0x101.., source first


@pytest.mark.skipif(not AVAILABLE, reason=AVAILABLE.reason)
def test_sim_reports_into_a_private_influxd_read_back_by_influxql() -> None:
    with InfluxServer() as server:
        writer = InfluxWriter(server.url, server.db, timeout_s=10.0)
        try:
            collector, feeder, frames = run_network(writer)
            writer.flush()
            assert writer.stats.sent == collector.counters.exported_points
        finally:
            writer.close()
        events = check_run(collector, feeder, frames)
        want = by_measurement(events)
        for metric in METRICS:
            found = query(server.url, server.db, series_query(metric.name))
            got = sorted((tuple(sorted(s.tags.items())), t, v) for s in found
                         for t, v in s.points)
            assert got == want.get(metric.name, []), metric.name


def test_frames_that_are_not_reports_are_skipped_by_reason() -> None:
    """Only UDP to the report port is fed; the rest is counted."""
    fed: list[int] = []

    class Counting:
        def feed(self, payloads: list[bytes], times: list[float]) -> None:
            fed.append(len(payloads))

    feeder = FrameFeeder(Counting(), REPORT_UDP_PORT)  # type: ignore[arg-type]
    eth = bytes(12) + b"\x08\x00"
    ip = bytes([0x45, 0, 0, 36]) + bytes(4) + bytes([64, 17, 0, 0]) + bytes(8)
    report = eth + ip + struct.pack("!HHHH", 4000, REPORT_UDP_PORT, 16, 0) + bytes(8)
    other = eth + ip + struct.pack("!HHHH", 4000, 9999, 16, 0) + bytes(8)
    arp = bytes(12) + b"\x08\x06" + bytes(28)
    feeder([(report, 0.1), (other, 0.2), (arp, 0.3), (report, 0.4)])
    assert fed == [2] and feeder.reports == 2 and feeder.frames == 4
    assert feeder.skipped == Counter({"other_port": 1, "not_ipv4": 1})
