"""The flow cache as a network's monitor node: the 5-switch INT line of
``tests/int_md`` (``p4src/int_md.p4``; s1 the source, s5 the sink, which
reports to the collector host) with ``MonitorFeeder`` on that host, the
cache's rings drained to a private Redis. What Redis holds, read back, must
equal what the reports carried: every flow with its packet count and, per
hop, the switches' node ids in path order; the events the cache emitted;
a histogram per switch. Runs on the sim target, and on Mininet as root."""

from __future__ import annotations

from collections import Counter
from ipaddress import IPv4Address
from pathlib import Path

import pytest

from orchestration.live.network import live_available
from orchestration.live.options import LiveOptions
from orchestration.network import open_network
from orchestration.redis_server import RedisServer
from sinks.flowcache.cache import FlowCache
from sinks.flowcache.config import FlowCacheConfig
from sinks.flowcache.ingest import SINK_SIGNAL
from sinks.flowcache.monitor import MonitorFeeder
from sinks.flowcache.redis_sink import RedisSink, RingReaders
from sinks.intcollector.replay import udp_payload
from sinks.intcollector.reports import ParsedReport, parse_report
from tests.int_md.test_int_md_sim import (
    NODE_BASE,
    REPORT_UDP_PORT,
    SEND_GAP_NS,
    SWITCHES,
    configure_int,
    frame,
    line_topology,
)

PACKETS = 120
CONFIG = FlowCacheConfig(rows=64, buckets=4, max_hops=8, rings=2, ring_entries=1 << 12,
                         thresholds={"threshold": {"hop_latency": 0}})
_LIVE = live_available("mininet")


def run_monitor(target: str, server: RedisServer, tmp_path: Path) -> tuple[
        FlowCache, MonitorFeeder, list[bytes]]:
    topo = line_topology()
    live = LiveOptions(results_dir=tmp_path) if target != "sim" else None
    net = open_network(target, topo, "int_md", seed=3, live=live)
    cache = FlowCache(CONFIG)
    feeder = MonitorFeeder(cache, REPORT_UDP_PORT)
    seen: list[bytes] = []

    def handler(frames: list[tuple[bytes, float]]) -> None:
        seen.extend(f for f, _ in frames)
        feeder(frames)

    sink = RedisSink(server.client())
    with net:
        net.attach_collector(handler)
        net.install_routes()
        configure_int(net, topo)  # type: ignore[arg-type]
        with RingReaders(cache, sink, period_s=0.01):
            # 40,000 packets/s into s3's port limited to 10,000/s: its queue,
            # and so its hop latency, builds up (on Mininet as fast as the
            # test sends).
            for seq in range(PACKETS):
                net.send_frame("h1", frame(seq, topo))
                if target == "sim":
                    net.run(SEND_GAP_NS / 1e9)
            net.run(0.05 if target == "sim" else 1.5)
    cache.flush(feeder.last_ns + 1, sink.write_evictions)
    sink.write_events(cache.drain_events())
    sink.write_histograms(cache)
    return cache, feeder, seen


def check_redis(server: RedisServer, cache: FlowCache, feeder: MonitorFeeder,
                frames: list[bytes]) -> None:
    reports = []
    for f in frames:
        payload = udp_payload(f, 1, REPORT_UDP_PORT)
        if isinstance(payload, bytes):
            parsed = parse_report(payload, SINK_SIGNAL)
            assert isinstance(parsed, ParsedReport), parsed
            reports.append(parsed)
    assert len(reports) == PACKETS == feeder.stats.accepted
    flows = Counter(r.flow for r in reports)
    client = server.client()
    stored = {k.split(":", 2)[2]: client.hgetall(k) for k in client.scan_iter("flowcache:flow:*")}
    assert len(stored) == len(flows)
    path = [NODE_BASE + i + 1 for i in range(len(SWITCHES))]
    for (src, dst, proto, sport, dport), count in flows.items():
        entry = stored[f"{IPv4Address(src)}:{IPv4Address(dst)}:{proto}:{sport}:{dport}"]
        assert int(entry["count"]) == count
        assert [int(entry[f"h{h}:switch_id:latest"]) for h in range(len(path))] == path
    # Threshold 0 on hop latency: an event for every hop whose latency is
    # above 0, which the queue at s3 makes certain.
    latent = sum(1 for r in reports for v in r.hops.get("hop_latency", ()) if v > 0)
    assert len(client.xrange("flowcache:events")) == cache.counters["events"] >= latent > 0
    assert sorted(int(k.rsplit(":", 1)[1]) for k in client.scan_iter("flowcache:hist:*")) == path


def test_monitor_node_on_sim(server: RedisServer, tmp_path: Path) -> None:
    cache, feeder, frames = run_monitor("sim", server, tmp_path)
    check_redis(server, cache, feeder, frames)


@pytest.mark.skipif(_LIVE is not None, reason=f"the monitor node on Mininet: {_LIVE}")
def test_monitor_node_on_mininet(clean: None, server: RedisServer, tmp_path: Path) -> None:
    cache, feeder, frames = run_monitor("mininet", server, tmp_path)
    check_redis(server, cache, feeder, frames)
