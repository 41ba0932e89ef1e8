"""Collector counts, and the ground-truth tap and window coverage of the metrics."""

from __future__ import annotations

import struct

from intlabel_frames import item_bytes, report_frame

from dataplane.targets.sim.events import Simulator
from orchestration.systems.intlabel.metrics import (
    GroundTruth,
    frame_packet_id,
    report_packet_id,
    updates_by_window,
    window_coverage,
)
from sinks.intlabel import Collector, MemoryIntDatabase


def test_collector_counts_reports_items_and_refusals() -> None:
    sim = Simulator()
    db = MemoryIntDatabase()
    col = Collector(db, sim)
    two = report_frame([item_bytes(3, 1, 2, 0, 500, 0, 0, 0),
                        item_bytes(1, 1, 4, 0, 400, 0, 0, 0, True)])
    one_old = report_frame([item_bytes(3, 1, 2, 0, 100, 0, 0, 0, True)])
    assert col.feed(two, 0.5) is not None
    assert col.feed(one_old, 0.6) is not None          # older label of (3, 2): stale
    assert col.feed(two[:-3], 0.7) is None             # truncated
    assert col.feed(b"\x00" * 20, 0.8) is None         # runt
    col.host_handler(None, report_frame([]), 900_000_000)   # a report without items
    st = col.stats
    assert (st.reports, st.items, st.accepted_items, st.stale_items) == (3, 3, 2, 1)
    assert st.items_per_report == [1, 1, 1, 0, 0, 0, 0, 0, 0]
    assert st.report_bytes == len(two) + len(one_old) + 74
    assert dict(st.malformed) == {"truncated": 1, "short": 1} and st.malformed_total == 2
    assert db.get((3, 2)).label_time == 500 and db.get((3, 2)).arrival_s == 0.5
    assert list(db.arrivals()) == [(0.5, (3, 2), True), (0.5, (1, 4), True),
                                   (0.6, (3, 2), False)]


def test_specific_flow_reports_are_counted() -> None:
    col = Collector(MemoryIntDatabase(), Simulator(), max_hop=5)
    col.feed(report_frame([item_bytes(1, 1, 2, 0, 1, 0, 0, 0, True)], int_num=6, count=1,
                          flags=1), 0.0)
    assert col.stats.specific_reports == 1 and col.stats.items == 1


def labeled_frame(n_items: int, int_num: int | None = None, ip_id: int = 5) -> bytes:
    """Ethernet | IPv4 (protocol 253) | option | n items | UDP 8 | payload 100."""
    body = (struct.pack("!BB", 17, n_items if int_num is None else int_num)
            + bytes(32 * n_items) + bytes(8 + 100))
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(body), ip_id, 0, 64, 253, 0,
                     bytes([10, 0, 1, 1]), bytes([10, 0, 2, 1]))
    return bytes(12) + b"\x08\x00" + ip + body


def plain_frame(ip_id: int = 6) -> bytes:
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 108, ip_id, 0, 64, 17, 0,
                     bytes([10, 0, 1, 1]), bytes([10, 0, 2, 1]))
    return bytes(12) + b"\x08\x00" + ip + bytes(108)


def test_ground_truth_counts_int_bytes_per_link_and_windows() -> None:
    gt = GroundTruth(100_000_000, max_hop=5, skip_ports=(500,))
    gt.tap(10_000_000, "s1", 2, plain_frame())
    gt.tap(20_000_000, "s1", 3, labeled_frame(1))
    gt.tap(30_000_000, "s2", 1, labeled_frame(2))          # same packet, one more label
    gt.tap(150_000_000, "s2", 1, labeled_frame(3, int_num=8, ip_id=9))  # specific: 3 items
    gt.tap(160_000_000, "s2", 500, labeled_frame(1))       # collector port: ignored
    assert gt.active == {0: {("s1", 2), ("s1", 3), ("s2", 1)}, 1: {("s2", 1)}}
    assert gt.int_bytes == (2 + 32) + (2 + 64) + (2 + 96)
    plain = 14 + 128
    assert gt.user_bytes == 3 * plain + plain  # every frame minus its INT bytes
    assert gt.frames == 4 and gt.int_frames == 3
    pid = frame_packet_id(labeled_frame(1))
    assert pid == report_packet_id(0x0A000101, 0x0A000201, 5)
    assert gt.labeled == {pid: 2, report_packet_id(0x0A000101, 0x0A000201, 9): 3}


def test_window_coverage_accepted_and_arrived() -> None:
    active = {0: {("a", 1), ("a", 2)}, 1: {("a", 1), ("b", 1)}, 2: set(), 3: {("a", 1)}}
    arrivals = [(0.05, ("a", 1), True), (0.07, ("x", 9), True),   # x:9 carried no traffic
                (0.12, ("a", 1), False), (0.13, ("b", 1), True),
                (0.31, ("a", 1), False)]
    acc = updates_by_window(arrivals, 100_000_000, accepted_only=True)
    arr = updates_by_window(arrivals, 100_000_000, accepted_only=False)
    cov = window_coverage(active, acc, 100_000_000, range(0, 4))
    assert [(w.t_start_s, w.coverage, w.active_ports, w.updated_ports) for w in cov] == [
        (0.0, 0.5, 2, 1), (0.1, 0.5, 2, 1), (0.3, 0.0, 1, 0)]
    cov2 = window_coverage(active, arr, 100_000_000, range(0, 4))
    assert [w.coverage for w in cov2] == [0.5, 1.0, 1.0]
