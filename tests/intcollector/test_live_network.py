"""Reports of an INT network on the ``mininet`` target through the
collector: the 5-switch line of ``tests/int_md`` as intbed-switch
processes, the sink's reports read on the collector host (``FrameFeeder``
on ``Network.attach_collector``, kernel arrival times), events into the
embedded store and read back with ``intbed collector query``. They must be
exactly what a model written in the tests finds, value by value, in the
report payloads as they arrived. Needs root, Mininet and intbed-switch;
skipped with the reason otherwise."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pytest
from test_sim_network import CONFIG, assert_sqlite_holds, expected_events

from orchestration.live.network import live_available
from orchestration.live.options import LiveOptions
from orchestration.network import open_network
from sinks.intcollector.frames import FrameFeeder
from sinks.intcollector.pipeline import Collector
from sinks.intcollector.stores import SqliteStore
from tests.int_md.test_int_md_sim import REPORT_UDP_PORT, configure_int, frame, line_topology

PACKETS = 150
_LIVE = live_available("mininet")


@pytest.mark.skipif(_LIVE is not None, reason=f"the collector on Mininet: {_LIVE}")
def test_mininet_reports_into_sqlite_read_back_by_cli_query(clean: None, tmp_path: Path) -> None:
    topo = line_topology()
    net = open_network("mininet", topo, "int_md", seed=3, live=LiveOptions(results_dir=tmp_path))
    path = tmp_path / "events.sqlite"
    store = SqliteStore(path)
    collector = Collector(store, net.clock, CONFIG)
    feeder = FrameFeeder(collector, REPORT_UDP_PORT)
    seen: list[tuple[bytes, float]] = []
    lock = threading.Lock()

    def handler(frames: list[tuple[bytes, float]]) -> None:  # a reader thread's call
        with lock:
            seen.extend(frames)
            feeder(frames)

    try:
        with net:
            net.attach_collector(handler)
            net.install_routes()
            configure_int(net, topo)  # type: ignore[arg-type]
            collector.start()
            for seq in range(PACKETS):
                net.send_frame("h1", frame(seq, topo))
            net.run(1.5)
            collector.stop()
    finally:
        store.close()
    assert feeder.frames == len(seen) == PACKETS and not feeder.skipped
    counters = collector.counters
    assert counters.reports.accepted == PACKETS and not counters.reports.rejected
    events = expected_events(seen)
    assert counters.events == Counter(p.measurement for p in events)
    assert counters.events["flow_path"] == PACKETS  # each packet a flow of its own
    assert_sqlite_holds(path, events)  # node ids as on sim, every event read back
