"""The collector against a real InfluxDB 1.x: a private influxd, reports
over loopback UDP, the events read back with InfluxQL and compared with the
collector's own counts; influxd stopped mid-run and restarted while the
writer buffers and retries, with nothing lost. The same read-back through
``intbed collector query`` on the SQLite store, and the command line's
errors for a store that does not answer.

The tests that need influxd skip, saying why, when it is not installed
(Debian package influxdb)."""

from __future__ import annotations

import json
import socket
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_receiver import (
    LiveCollector,
    first_round_events,
    flow_reports,
    free_udp_port,
    second_round_events,
    send_when_bound,
    wait_for,
)

from common.wallclock import WallClock
from intbed.cli import cli
from orchestration.influx_server import (
    InfluxServer,
    InfluxServerError,
    influx_available,
    query,
    series_query,
)
from sinks.intcollector.pipeline import Collector, CollectorConfig
from sinks.intcollector.stores import InfluxWriter, SqliteStore

AVAILABLE = influx_available()
needs_influx = pytest.mark.skipif(not AVAILABLE, reason=AVAILABLE.reason)
FLOWS = 2000
EVENTS = first_round_events(FLOWS) + second_round_events(FLOWS)


@pytest.fixture
def influx() -> Iterator[InfluxServer]:
    with InfluxServer() as server:
        yield server
    assert server.dir is None and not server.running


def fast_retrying_writer(server: InfluxServer) -> InfluxWriter:
    return InfluxWriter(server.url, server.db, timeout_s=5.0, retry_initial_s=0.05,
                        retry_max_s=0.5)


@needs_influx
def test_events_read_back_and_an_outage_loses_nothing(influx: InfluxServer) -> None:
    writer = fast_retrying_writer(influx)
    live = LiveCollector(store=writer)
    counters = live.collector.counters
    first = sum(first_round_events(FLOWS).values())
    try:
        live.sender.send(flow_reports(FLOWS))
        wait_for(lambda: writer.stats.sent == first, 20, "first round written")
        assert Counter(influx.count_by_measurement()) == first_round_events(FLOWS)

        influx.halt()  # the writer now finds nobody and keeps the points
        live.sender.send(flow_reports(FLOWS, latency=200, occupancy=110))
        wait_for(lambda: counters.exported_points == sum(EVENTS.values()), 20,
                 "second round exported")
        wait_for(lambda: writer.stats.failed_requests > 0, 20, "a write failed")
        assert len(writer) == sum(second_round_events(FLOWS).values())
        with pytest.raises(InfluxServerError, match="does not answer"):
            influx.count_by_measurement()

        influx.start()  # same port, same data
        wait_for(lambda: len(writer) == 0, 30, "the buffered points sent")
    finally:
        live.close()
        writer.close()
    assert counters.reports.accepted == 2 * FLOWS
    assert counters.events == EVENTS
    assert writer.stats.sent == counters.exported_points == sum(EVENTS.values())
    assert (writer.stats.dropped, writer.stats.rejected) == (0, 0)
    assert Counter(influx.count_by_measurement()) == EVENTS

    one_flow = query(influx.url, influx.db, series_query("flow_latency", {"src_port": "1000"}))
    assert len(one_flow) == 1
    assert [value for _, value in one_flow[0].points] == [300, 600]
    hop = query(influx.url, influx.db,
                series_query("flow_hop_latency", {"src_port": "1001", "sw_id": "12"}))
    assert [value for _, value in hop[0].points] == [100, 200]


@needs_influx
def test_cli_query_reads_an_influx_series(influx: InfluxServer, tmp_path: Path) -> None:
    writer = fast_retrying_writer(influx)
    clock = WallClock()
    collector = Collector(writer, clock, CollectorConfig(push_period_s=3600.0))
    try:
        collector.feed(flow_reports(50), 1.0)
        collector.feed(flow_reports(50, latency=200, occupancy=110), 2.0)
        collector.stop()
    finally:
        clock.close()
        writer.close()
    assert len(writer) == 0
    store = f"influx:{influx.url}/{influx.db}"
    png = tmp_path / "latency.png"
    result = CliRunner().invoke(cli, ["collector", "query", "--store", store, "flow_latency",
                                      "--tag", "src_port=1049", "--json", "--png", str(png)])
    assert (result.exit_code, result.stderr) == (0, "")
    series = json.loads(result.stdout)["series"]
    assert [(s["tags"]["src_port"], [v for _, v in s["points"]]) for s in series] == [
        ("1049", [300, 600])]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    result = CliRunner().invoke(cli, ["collector", "query", "--store", store, "flow_path"])
    assert result.exit_code == 0
    assert result.stdout.count("flow_path,dst_ip=10.0.2.2") == 50
    assert result.stdout.count(" 11,12,13\n") == 50  # one path per flow, written once


@needs_influx
def test_cli_run_into_a_private_influx() -> None:
    port = free_udp_port()
    sender = send_when_bound(port, flow_reports(500))
    result = CliRunner().invoke(cli, ["collector", "run", "--listen", f"127.0.0.1:{port}",
                                      "--store", "influx:private", "--seconds", "3",
                                      "--period", "3600", "--json"])
    sender.join()
    assert (result.exit_code, result.stderr) == (0, "")
    out = json.loads(result.stdout)
    assert out["counters"]["events_by_metric"] == dict(first_round_events(500))
    stored = next(n for n in out["notes"] if n.startswith("influx: stored "))
    counts = dict(item.rsplit(" ", 1) for item in stored.removeprefix("influx: stored ")
                  .split(", "))
    assert {m: int(n) for m, n in counts.items()} == dict(first_round_events(500))


def test_sqlite_events_read_back_through_cli_query(tmp_path: Path) -> None:
    path = tmp_path / "points.sqlite"
    store = SqliteStore(path)
    live = LiveCollector(store=store)
    try:
        live.sender.send(flow_reports(FLOWS))
        live.sender.send(flow_reports(FLOWS, latency=200, occupancy=110))
    finally:
        live.close()
        store.close()
    assert live.collector.counters.events == EVENTS
    runner = CliRunner()
    stored: Counter[str] = Counter()
    for metric in EVENTS:
        result = runner.invoke(cli, ["collector", "query", "--store", f"sqlite:{path}", metric,
                                     "--json"])
        assert (result.exit_code, result.stderr) == (0, "")
        stored[metric] = sum(len(s["points"]) for s in json.loads(result.stdout)["series"])
    assert stored == EVENTS
    result = runner.invoke(cli, ["collector", "query", "--store", f"sqlite:{path}",
                                 "flow_hop_latency", "--tag", "src_port=1001", "--tag",
                                 "sw_id=12"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == ("flow_hop_latency,dst_ip=10.0.2.2,dst_port=80,proto=17,"
                        "src_ip=10.0.1.1,src_port=1001,sw_id=12: 2 points")
    assert [line.split()[1] for line in lines[1:]] == ["100", "200"]


def test_a_store_that_does_not_answer_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        dead = closed.getsockname()[1]
    runner = CliRunner()
    listen = f"127.0.0.1:{free_udp_port()}"
    cases = {
        ("run", "--listen", listen, "--store", f"influx:http://127.0.0.1:{dead}/int",
         "--seconds", "1"): f"error: InfluxDB at http://127.0.0.1:{dead} does not answer: ",
        ("query", "--store", f"influx:127.0.0.1:{dead}/int", "flow_path"):
            f"error: InfluxDB at http://127.0.0.1:{dead} does not answer: ",
        ("run", "--listen", listen, "--store", "influx:http://127.0.0.1:8086",
         "--seconds", "1"): "error: --store influx:http://127.0.0.1:8086: want influx:",
        ("query", "--store", "influx:private", "flow_path"): "error: --store influx:private",
        ("replay", "x.pcap", "--store", "mysql:db"): "error: --store mysql:db: want ",
        ("query", "--store", f"sqlite:{tmp_path / 'none.sqlite'}", "flow_path"):
            "error: --store sqlite:",
    }
    for args, start in cases.items():
        result = runner.invoke(cli, ["collector", *args])
        assert result.exit_code == 1, (args, result.output)
        assert result.stderr.startswith(start), (args, result.stderr)
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert not (tmp_path / "none.sqlite").exists()
