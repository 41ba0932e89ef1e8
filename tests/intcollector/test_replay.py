"""Replaying a pcap: the reports in it give the same counters, and the same
points at the same times, as feeding them to a collector one by one on a
clock that follows the capture; frames that are not reports are skipped
by reason; a file that is not a pcap is one clear line."""

from __future__ import annotations

import json
import struct
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from report_builders import frame
from test_receiver import first_round_events, flow_reports, second_round_events

from common.clock import VirtualClock
from common.pcap import PcapWriter
from intbed.cli import cli
from sinks.intcollector.pipeline import Collector, CollectorConfig
from sinks.intcollector.replay import (
    CUT,
    FRAGMENT,
    LINKTYPE_RAW,
    NOT_IPV4,
    NOT_UDP,
    OTHER_PORT,
    ReplayError,
    replay,
    udp_payload,
)
from sinks.intcollector.stores import MemoryStore, Point

PORT = 32766
T0_NS = 1_700_000_000_123_456_789
GAP_NS = 7_000_000  # 7 ms between reports: 2,000 reports span 14 s, a push at 10 s


def udp_frame(payload: bytes, dport: int = PORT, *, vlan: bool = False, proto: int = 17,
              flags_frag: int = 0, ethertype: int = 0x0800) -> bytes:
    """Ethernet (+802.1Q) / IPv4 / UDP around ``payload``, by struct (no
    checksums: the replay reads none)."""
    udp = struct.pack("!HHHH", 5000, dport, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, flags_frag, 64, proto, 0,
                     bytes([10, 254, 0, 9]), bytes([10, 255, 255, 254])) + udp
    eth = b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01"
    if vlan:
        eth += struct.pack("!HH", 0x8100, 5)
    return eth + struct.pack("!H", ethertype) + ip


def capture(tmp_path: Path) -> tuple[Path, list[tuple[int, bytes]], Counter[str]]:
    """A capture of two rounds of reports (the second with changed values)
    among frames that are not reports; the reports with their times and
    the skip reasons expected."""
    first, second = flow_reports(1000), flow_reports(1000, latency=200, occupancy=110)
    noise = {NOT_IPV4: udp_frame(b"x", ethertype=0x0806), NOT_UDP: udp_frame(b"x", proto=6),
             OTHER_PORT: udp_frame(first[0], dport=4790),
             FRAGMENT: udp_frame(first[0], flags_frag=0x2000), CUT: udp_frame(first[0])[:30]}
    path = tmp_path / "reports.pcap"
    reports: list[tuple[int, bytes]] = []
    with PcapWriter(path, nanosecond=True) as out:
        for i, payload in enumerate(first + second):
            t_ns = T0_NS + i * GAP_NS
            if i % 400 == 7:
                for junk in noise.values():
                    out.write(junk, t_ns)
            out.write(udp_frame(payload, vlan=i % 3 == 0) if i % 10 else frame(payload, PORT),
                      t_ns)
            reports.append((t_ns, payload))
    skipped = Counter({reason: 5 for reason in noise})
    return path, reports, skipped


def fed_one_by_one(reports: list[tuple[int, bytes]], config: CollectorConfig) -> Collector:
    """The reference: each report fed alone at its capture time, the clock
    (and so the normal path's timers) advanced to it first."""
    clock = VirtualClock()
    origin = reports[0][0]
    store = MemoryStore()
    collector = Collector(store, clock, CollectorConfig(**{**config.__dict__,
                                                           "time_origin_ns": origin}))
    collector.start()
    for t_ns, payload in reports:
        t = (t_ns - origin) / 1e9
        clock.advance_to(t)
        collector.feed([payload], t)
    collector.stop()
    return collector


def sorted_points(points: list[Point]) -> list[Point]:
    return sorted(points, key=lambda p: (p.time_ns, p.measurement, p.tags, repr(p.fields)))


@pytest.mark.parametrize("batch", [1, 300, 4096])
def test_replay_gives_the_counters_and_points_of_a_direct_feed(tmp_path: Path,
                                                               batch: int) -> None:
    path, reports, skipped = capture(tmp_path)
    config = CollectorConfig(push_period_s=10.0)
    store = MemoryStore()
    done = replay(path, store, config, port=PORT, batch=batch)
    stats, counters = done.stats, done.collector.counters
    assert stats.reports == len(reports) == 2000
    assert stats.frames == 2000 + sum(skipped.values())
    assert stats.skipped == skipped
    assert (stats.first_ns, stats.last_ns) == (reports[0][0], reports[-1][0])
    assert counters.reports.total == counters.reports.accepted == 2000
    assert counters.events == first_round_events(1000) + second_round_events(1000)
    assert counters.pushes == 1  # at 10 s of the capture's 14 s

    reference = fed_one_by_one(reports, config)
    assert (counters.reports, counters.values, counters.events, counters.exported_points,
            counters.pushes) == (reference.counters.reports, reference.counters.values,
                                 reference.counters.events, reference.counters.exported_points,
                                 reference.counters.pushes)
    # the same points; within one batch the fast path hands them on metric by metric
    assert sorted_points(store.points) == sorted_points(reference.store.points)  # type: ignore[attr-defined]
    times = {p.time_ns for p in store.points}
    assert times <= {t for t, _ in reports}  # points carry capture times


def test_raw_ip_captures_and_udp_payload() -> None:
    payload = flow_reports(1)[0]
    ip_only = udp_frame(payload)[14:]
    assert udp_payload(ip_only, LINKTYPE_RAW, PORT) == payload
    assert udp_payload(udp_frame(payload, vlan=True), 1, PORT) == payload
    assert udp_payload(udp_frame(payload), 1, PORT + 1) == OTHER_PORT
    sll = b"\x00\x00\x00\x01\x00\x06" + b"\x02" * 8 + b"\x08\x00" + ip_only
    assert udp_payload(sll, 113, PORT) == payload


def test_a_capture_cut_mid_record_gives_its_complete_records(tmp_path: Path) -> None:
    path = tmp_path / "cut.pcap"
    payloads = flow_reports(10)
    with PcapWriter(path) as out:
        for i, payload in enumerate(payloads):
            out.write(udp_frame(payload), T0_NS + i * 1000)
    path.write_bytes(path.read_bytes()[:-5])
    done = replay(path, MemoryStore())
    assert done.stats.reports == done.collector.counters.reports.accepted == 9


def test_a_file_that_is_not_a_pcap_is_one_clear_error(tmp_path: Path) -> None:
    text = tmp_path / "notes.pcap"
    text.write_text("these are notes, not packets\n")
    with pytest.raises(ReplayError, match=r"notes.pcap: not a pcap file \(magic 74686573\)"):
        replay(text, MemoryStore())
    result = CliRunner().invoke(cli, ["collector", "replay", str(text)])
    assert result.exit_code == 1
    assert result.stderr == f"error: {text}: not a pcap file (magic 74686573)\n"
    assert "Traceback" not in result.output

    pcapng = tmp_path / "capture.pcapng"
    pcapng.write_bytes(b"\x0a\x0d\x0d\x0a" + b"\x00" * 40)
    result = CliRunner().invoke(cli, ["collector", "replay", str(pcapng)])
    assert result.exit_code == 1 and "a pcapng file" in result.stderr
    empty = tmp_path / "empty.pcap"
    empty.write_bytes(b"")
    result = CliRunner().invoke(cli, ["collector", "replay", str(empty)])
    assert (result.exit_code, result.stderr) == (
        1, f"error: {empty}: not a pcap file (shorter than a pcap header)\n")
    result = CliRunner().invoke(cli, ["collector", "replay", str(tmp_path / "missing.pcap")])
    assert (result.exit_code, result.stderr) == (
        1, f"error: {tmp_path / 'missing.pcap'}: no such file\n")


def test_cli_replay_into_sqlite_and_query_back(tmp_path: Path) -> None:
    path, reports, _ = capture(tmp_path)
    db = tmp_path / "points.sqlite"
    runner = CliRunner()
    # T(flow_latency) = 400: the second round's 300 -> 600 is no event; the
    # push at 10 s still writes each flow's 600 (seen at 7-14 s) for those seen by then.
    result = runner.invoke(cli, ["collector", "replay", str(path), "--store", f"sqlite:{db}",
                                 "--threshold", "flow_latency=400", "--json"])
    assert (result.exit_code, result.stderr) == (0, "")
    out = json.loads(result.stdout)
    assert out["replay"]["reports"] == 2000 and out["replay"]["reports_per_s"] > 0
    counters = out["counters"]
    assert counters["reports"] == counters["accepted"] == 2000
    events = first_round_events(1000) + second_round_events(1000)
    events["flow_latency"] -= 1000
    assert counters["events_by_metric"] == dict(events)
    assert counters["pushes"] == 1

    result = runner.invoke(cli, ["collector", "query", "--store", f"sqlite:{db}",
                                 "flow_latency", "--tag", "src_port=1000", "--json"])
    assert (result.exit_code, result.stderr) == (0, "")
    series = json.loads(result.stdout)["series"]
    assert len(series) == 1
    assert series[0]["tags"]["src_port"] == "1000"
    second_time = reports[1000][0]  # the flow's report of the second round
    assert series[0]["points"] == [[reports[0][0], 300], [second_time, 600]]

    # a flow first seen after the push at 10 s: its second-round value is never pushed
    after_push = 10_000_000_000 // GAP_NS + 1  # index of the first report after 10 s
    late = 1000 + (after_push - 1000)  # its flow's source port (second round: index - 1000)
    result = runner.invoke(cli, ["collector", "query", "--store", f"sqlite:{db}",
                                 "flow_latency", "--tag", f"src_port={late}", "--json"])
    assert [v for _, v in json.loads(result.stdout)["series"][0]["points"]] == [300]

    text = runner.invoke(cli, ["collector", "replay", str(path)])
    assert text.exit_code == 0
    assert "2000 reports of 2025 frames" in text.stdout
    assert "reports/s" in text.stdout
