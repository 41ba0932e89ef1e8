"""The Prometheus endpoint: scraped over HTTP, parsed with the client
library's own text parser, its counters equal the collector's and its
switch-level gauges the values the reports carry; ``intbed collector run
--prometheus`` serves it while it runs, and a busy port is one line."""

from __future__ import annotations

import socket
import threading
import urllib.request
from collections.abc import Iterator

import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families
from test_receiver import (
    EGRESS_PORT,
    QUEUE_ID,
    SWITCHES,
    LiveCollector,
    first_round_events,
    flow_reports,
    free_udp_port,
    send_when_bound,
    wait_for,
)

from intbed.cli import cli
from sinks.intcollector.prometheus import PrometheusEndpoint


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics by (name, sorted labels)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


@pytest.fixture
def live() -> Iterator[LiveCollector]:
    running = LiveCollector()
    try:
        yield running
    finally:
        running.close()


def test_scrape_gives_the_counters_and_the_latest_switch_values(live: LiveCollector) -> None:
    endpoint = PrometheusEndpoint(live.collector, 0, "127.0.0.1", live.receiver)
    try:
        flows = 300
        live.sender.send(flow_reports(flows, occupancy=17) + [b"\x20" * 7])
        first = scrape(endpoint.port)
        live.sender.send(flow_reports(flows, occupancy=130))
        second = scrape(endpoint.port)
    finally:
        endpoint.close()
    counters = live.collector.counters
    assert first[("intcollector_reports_total", (("outcome", "accepted"),))] == flows
    assert first[("intcollector_reports_total", (("outcome", "truncated"),))] == 1
    for metric, count in first_round_events(flows).items():
        assert first[("intcollector_events_total", (("metric", metric),))] == count
    assert second[("intcollector_reports_total", (("outcome", "accepted"),))] == 2 * flows
    assert second[("intcollector_values_total", ())] == counters.values
    assert second[("intcollector_datagrams_total", ())] == 2 * flows + 1
    assert second[("intcollector_keys", (("metric", "flow_hop_latency"),))] == flows * len(
        SWITCHES)
    for sw in SWITCHES:
        queue = (("queue_id", str(QUEUE_ID)), ("sw_id", str(sw)))
        assert first[("intcollector_queue_occupancy", queue)] == 17
        assert second[("intcollector_queue_occupancy", queue)] == 130
        link = (("egress_id", str(EGRESS_PORT)), ("sw_id", str(sw)))
        assert second[("intcollector_link_utilization", link)] == 40
    # per-flow keys are not exported as series
    assert not any(name.startswith("intcollector_flow") for name, _ in second)


def test_cli_run_serves_metrics_while_it_runs() -> None:
    udp = free_udp_port()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        http = probe.getsockname()[1]
    payloads = flow_reports(200)
    sender = send_when_bound(udp, payloads)
    seen: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}

    def scraper() -> None:
        def accepted() -> bool:
            try:
                seen.update(scrape(http))
            except OSError:
                return False
            return seen.get(("intcollector_reports_total", (("outcome", "accepted"),))) == 200

        wait_for(accepted, 20, "all reports counted on /metrics")

    watcher = threading.Thread(target=scraper)
    watcher.start()
    result = CliRunner().invoke(cli, ["collector", "run", "--listen", f"127.0.0.1:{udp}",
                                      "--store", "none", "--seconds", "4", "--prometheus",
                                      str(http)])
    sender.join()
    watcher.join()
    assert result.exit_code == 0, result.output
    assert f"prometheus metrics on http://127.0.0.1:{http}/metrics" in result.output
    assert seen[("intcollector_events_total", (("metric", "flow_path"),))] == 200


def test_cli_prometheus_port_in_use_is_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(cli, ["collector", "run", "--listen",
                                          f"127.0.0.1:{free_udp_port()}", "--store", "none",
                                          "--seconds", "1", "--prometheus", str(port)])
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and f"--prometheus {port}: cannot listen on TCP" in lines[0], lines
