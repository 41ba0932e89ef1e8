"""p4src/int_md.p4: its STF files, and what STF cannot reach.

The int_md_*.stf files in tests/p4 run here (test_stf_programs.py runs them
too, with every STF file). STF has no range keys and holds the clock at 0
with empty queues, so the rest drives engine Switches one pipeline half at
a time (``Switch.ingress`` / ``Switch.egress``, as the sim target does)
with a clock and queue metadata set by the test: the values of every hop
in the reports the sink emits, parsed by ``sinks.intcollector.reports``,
are checked against those inputs. Frames are built with Scapy, and UDP
checksums checked with Scapy, independently of the switch. Formats:
docs/int_md_format.md.
"""

from __future__ import annotations

import random
import shutil
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from controller.p4rt.protos import protos
from controller.routing import (
    ECMP_ACTION,
    ECMP_COUNT_PARAM,
    ECMP_GROUP_PARAM,
    FORWARD_ACTION,
    FORWARD_MAC_PARAM,
    FORWARD_PORT_PARAM,
)
from dataplane.compiler.p4info import build_p4info
from dataplane.compiler.pipeline import CompiledProgram, compile_file
from dataplane.runtime.switch import Switch
from dataplane.runtime.tables import Lpm, RangeMatch, Ternary
from dataplane.testing.stf import Expect, Packet, parse_stf, run_stf
from orchestration.binaries.bmv2_stf import program_for
from p4src import program_path
from sinks.intcollector.reports import IntSignal, ParsedReport, parse_packet, parse_report

PROGRAM = program_path("int_md")
STF_FILES = sorted((Path(__file__).resolve().parents[1] / "p4").glob("int_md_*.stf"))
INT_DSCP, INT_PORT = 0x17, 0x1E1E
SESSION, COLLECTOR_PORT, REPORT_UDP_PORT = 500, 500, 32766
ALL_ITEMS = 0xFF80  # bits 0-8
PORT_SIGNAL = IntSignal(dscp=INT_DSCP, ports=frozenset({INT_PORT}))
HOST_MAC, ROUTER_MAC = "00:00:00:00:00:0a", "00:00:00:00:01:01"
EV = {name: i for i, name in enumerate(
    ("source", "hop", "exhausted", "skipped", "sink", "report", "broken", "remarked"))}


@pytest.fixture(scope="module")
def program() -> CompiledProgram:
    return compile_file(PROGRAM)


# --- the STF files ----------------------------------------------------------------------------

def test_stf_files_exist_and_target_int_md_p4() -> None:
    assert {p.stem for p in STF_FILES} == {"int_md_source", "int_md_transit", "int_md_sink"}
    assert {program_for(stf) for stf in STF_FILES} == {PROGRAM}


@pytest.mark.parametrize("stf", STF_FILES, ids=lambda p: p.stem)
def test_stf(program: CompiledProgram, stf: Path) -> None:
    result = run_stf(program, stf)
    assert result.passed, result.diff


def _stf_frames() -> list[tuple[str, bytes, bool]]:
    """(where, frame with `*` read as 0, has wildcards) of every frame sent or expected."""
    frames = []
    for stf in STF_FILES:
        for cmd in parse_stf(stf):
            if isinstance(cmd, Packet):
                frames.append((f"{stf.name}:{cmd.loc.line}", cmd.data, False))
            elif isinstance(cmd, Expect) and cmd.nibbles:
                frames.append((f"{stf.name}:{cmd.loc.line}",
                               bytes.fromhex(cmd.nibbles.replace("*", "0")), "*" in cmd.nibbles))
    return frames


def _udp_checksum_ok(ip: IP) -> bool:
    """The UDP checksum of ``ip`` as Scapy computes it over the datagram."""
    again = IP(src=ip.src, dst=ip.dst) / UDP(sport=ip[UDP].sport, dport=ip[UDP].dport) / Raw(
        bytes(ip[UDP].payload))
    return IP(bytes(again))[UDP].chksum == ip[UDP].chksum


def test_stf_frames_are_consistent() -> None:
    """Every frame is IPv4 with a right header checksum and total length;
    a data frame's UDP length and checksum (when present and not `*`) hold
    over the datagram; INT in it has the length its shim says; every report
    without `*` parses with the sequence number, node and hop count its
    comment names, its inner packet cut right after the stack."""
    checked = reports = 0
    bad: list[str] = []
    for where, frame, wild in _stf_frames():
        ip = Ether(frame)[IP]
        header = bytes(ip)[:20]
        again = IP(header[:10] + b"\0\0" + header[12:])
        again.chksum = None
        assert bytes(again)[10:12] == header[10:12], where
        assert ip.len == len(frame) - 14, where
        if ip.proto != 17:
            continue
        udp = ip[UDP]
        if udp.dport == REPORT_UDP_PORT:
            result = parse_report(bytes(udp.payload), PORT_SIGNAL)
            assert isinstance(result, ParsedReport), (where, result)
            assert result.node_id == 0x33 and result.tracked, where
            assert udp.chksum == 0 and udp.len == ip.len - 20, where
            reports += 1
            continue
        assert udp.len == ip.len - 20, where
        if udp.chksum and not wild:
            assert _udp_checksum_ok(ip), where
        if ip.tos >> 2 == INT_DSCP or udp.dport == INT_PORT:
            body = bytes(udp.payload)
            # A v1.0 shim's Length (third byte) counts itself, v2.0's (second) not.
            int_bytes = 4 * body[2] if body[0] == 0x01 else 4 + 4 * body[1]
            if len(body) - int_bytes != len(b"payload-0123"):
                bad.append(where.split(":")[0])
        checked += 1
    assert checked > 50 and reports == 7
    # On purpose: shim Length 2 (transit in and out, sink in), a stack cut
    # short (transit in and out), and a host's packet with the INT DSCP but
    # no INT (source in).
    assert sorted(bad) == ["int_md_sink.stf", "int_md_source.stf"] + ["int_md_transit.stf"] * 4


# --- switches one pipeline half at a time -----------------------------------------------------

class Clock:
    """The switches' clock in microseconds, moved by the test."""

    def __init__(self) -> None:
        self.us = 0

    def __call__(self) -> int:
        return self.us


@dataclass(frozen=True)
class Hop:
    """What one switch sees of a packet: ingress and egress times (us) and
    the queue depth at enqueue; ``report_qdepth`` is the collector queue's,
    which must not show up in any report."""

    t_in: int
    t_out: int
    qdepth: int
    report_qdepth: int = 99


def make_switch(program: CompiledProgram, clock: Clock, node_id: int, *,
                source: bool = False, sink: bool = False, report: int | None = 2,
                by_port: int = 0, int_version: int = 2, domain: int = 0,
                instructions: int = ALL_ITEMS, max_hops: int = 8) -> Switch:
    """A switch of a line: port 1 toward h1, port 2 toward h2 (10.0.2.0/24).
    ``source``: port 1 faces h1, with one watchlist entry for UDP to
    10.0.2.0/24, ports 5000-5999; ``sink``: port 2 faces h2."""
    sw = Switch(program, clock=clock)
    sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": Lpm(0x0A000200, 24)},
                 "MyIngress.ipv4_forward", {"dstAddr": 0x0200 + node_id, "port": 2})
    sw.table_set_default("MyEgress.int_node_config", "MyEgress.set_node_id",
                         {"node_id": node_id})
    if source:
        sw.table_add("MyIngress.int_source_port", {"standard_metadata.ingress_port": 1},
                     "MyIngress.set_source_port")
        sw.table_add("MyIngress.int_watchlist",
                     {"hdr.ipv4.dstAddr": Ternary(0x0A000200, 0xFFFFFF00),
                      "hdr.ipv4.protocol": Ternary(17, 0xFF),
                      "meta.l4_dport": RangeMatch(5000, 5999)},
                     "MyIngress.int_watch",
                     {"instructions": instructions, "max_hop_cnt": max_hops}, priority=10)
        sw.table_set_default("MyIngress.int_source_config", "MyIngress.set_source_config",
                             {"by_port": by_port, "int_version": int_version,
                              "domain_id": domain})
    if sink:
        sw.table_add("MyEgress.int_sink_port", {"standard_metadata.egress_port": 2},
                     "MyEgress.set_sink_port")
        sw.mirroring_add(SESSION, COLLECTOR_PORT)
        if report is not None:
            sw.table_set_default("MyEgress.int_report_config", "MyEgress.set_report", {
                "src_mac": 0x3301, "collector_mac": 0xFFFFFE, "src_ip": 0x0A000033,
                "collector_ip": 0x0AFFFFFE, "src_port": 4660,
                "collector_port": REPORT_UDP_PORT, "hw_id": 5, "version": report})
    return sw


def through(sw: Switch, clock: Clock, frame: bytes, hop: Hop,
            port: int = 1) -> dict[int, list[bytes]]:
    """One packet through ``sw``: ingress at ``hop.t_in``, egress at
    ``hop.t_out`` with queue depth ``hop.qdepth``; an egress clone's pass
    runs at once, with the collector queue's depth."""
    out: dict[int, list[bytes]] = {}
    clock.us = hop.t_in
    jobs, again = sw.ingress(port, frame)
    assert not again
    pending = [(job, hop.qdepth) for job in jobs]
    clock.us = hop.t_out
    while pending:
        job, qdepth = pending.pop(0)
        sent, clones, recirc = sw.egress(job, enq_timestamp=hop.t_in, enq_qdepth=qdepth,
                                         deq_timedelta=hop.t_out - hop.t_in)
        assert not recirc
        for p, data in sent:
            out.setdefault(p, []).append(data)
        pending.extend((c, hop.report_qdepth) for c in clones)
    return out


def host_frame(*, dport: int = 5555, sport: int = 1111, tos: int = 0x28, ident: int = 7,
               payload: bytes = b"x" * 37, chksum: int | None = None) -> bytes:
    return bytes(Ether(dst=ROUTER_MAC, src=HOST_MAC)
                 / IP(src="10.0.1.1", dst="10.0.2.2", tos=tos, id=ident)
                 / UDP(sport=sport, dport=dport, chksum=chksum) / Raw(payload))


def routed(sent: bytes, hops: int) -> bytes:
    """``sent`` as ``hops`` routers deliver it: TTL down, IPv4 checksum again
    (the MACs are the last router's business and compared apart)."""
    ip = IP(sent[14:])
    ip.ttl -= hops
    del ip.chksum
    return bytes(ip)


def events(sw: Switch) -> dict[str, int]:
    names = [e.qname for e in sw.program.externs]
    packets = sw.externs[names.index("int_md_events")].packets
    return {name: packets[i] for name, i in EV.items() if packets[i]}


@dataclass
class Line:
    """s1 (source) - s2 - s3 (sink): h1 on port 1 of s1, h2 on port 2 of s3."""

    switches: list[Switch]
    clocks: list[Clock]

    def send(self, frame: bytes, hops: Sequence[Hop]) -> tuple[list[bytes], list[bytes]]:
        """(frames h2 got, reports the collector got)."""
        reports: list[bytes] = []
        data = [frame]
        for sw, clock, hop in zip(self.switches, self.clocks, hops):
            nxt: list[bytes] = []
            for d in data:
                out = through(sw, clock, d, hop)
                nxt.extend(out.get(2, []))
                reports.extend(out.get(COLLECTOR_PORT, []))
                assert set(out) <= {2, COLLECTOR_PORT}
            data = nxt
        return data, reports


def make_line(program: CompiledProgram, n: int = 3, **kw: int) -> Line:
    clocks = [Clock() for _ in range(n)]
    source_kw = {k: v for k, v in kw.items() if k != "report"}
    sink_kw = {k: v for k, v in kw.items() if k == "report"}
    switches = [make_switch(program, clocks[i], i + 1,
                            **(source_kw if i == 0 else {}),
                            **(sink_kw if i == n - 1 else {}),
                            source=i == 0, sink=i == n - 1) for i in range(n)]
    return Line(switches, clocks)


HOPS = [Hop(0x1_0000_1000, 0x1_0000_1025, 3),
        Hop(0x1_0000_2000, 0x1_0000_2100, 17),
        Hop(0x1_0000_3000, 0x1_0000_3007, 0x7FFFF)]


def report_payload(frame: bytes) -> bytes:
    """The UDP payload of a report frame, its outer headers checked."""
    eth = Ether(frame)
    assert eth.dst == "00:00:00:ff:ff:fe" and eth.src == "00:00:00:00:33:01"
    ip = eth[IP]
    assert (ip.src, ip.dst, ip.ttl, ip.flags.DF, ip.len) == (
        "10.0.0.51", "10.255.255.254", 64, True, len(frame) - 14)
    assert (ip[UDP].sport, ip[UDP].dport, ip[UDP].chksum) == (4660, REPORT_UDP_PORT, 0)
    return bytes(ip[UDP].payload)


# --- reports, parsed ---------------------------------------------------------------------------

@pytest.mark.parametrize(("tr", "version", "by_port"),
                         [(2, 2, 0), (2, 2, 1), (1, 1, 0), (1, 2, 0), (2, 1, 0)])
def test_reports_parse_with_every_hops_own_values(program: CompiledProgram, tr: int,
                                                  version: int, by_port: int) -> None:
    line = make_line(program, report=tr, int_version=version, by_port=by_port, domain=0x4242)
    sent = host_frame()
    got, reports = line.send(sent, HOPS)
    assert len(got) == 1 and got[0][14:] == routed(sent, 3)
    assert Ether(got[0]).dst == "00:00:00:00:02:03"
    [frame] = reports
    signal = PORT_SIGNAL if by_port else IntSignal()
    result = parse_report(report_payload(frame), signal)
    assert isinstance(result, ParsedReport), result
    assert parse_packet(report_payload(frame), signal) == [result]
    assert (result.report_version, result.hw_id, result.seq, result.node_id) == (tr, 5, 0, 3)
    assert (result.dropped, result.congested, result.tracked, result.intermediate) == (
        False, False, True, False)
    # TR v1.0 carries the sink's ingress time (low 32 bits); v2.0 has none.
    assert result.ingress_ts == (HOPS[2].t_in & 0xFFFF_FFFF if tr == 1 else None)
    assert result.flow == (0x0A000101, 0x0A000202, 17, 1111, 5555)
    v2_port = version == 2 and by_port
    assert result.inner_dscp == (0x0A if v2_port else INT_DSCP)
    assert result.int_version == version
    bitmap = ALL_ITEMS if version == 2 else 0xFF00
    assert (result.instructions, result.hop_ml) == (bitmap, 12 if version == 2 else 9)
    header = dict(result.int_header)
    assert header.pop("remaining_hop_cnt") == 8 - 3 and header.pop("e") == 0
    assert header.pop("orig_dport" if v2_port else "dscp") == (5555 if v2_port else 0x0A)
    if version == 2:
        assert header.pop("domain_id") == 0x4242 and header.pop("npt") == by_port
    assert set(header.values()) == {0}  # D, M, DS words; v1.0 Rep, C, M
    assert result.hop_count == 3
    # Newest first: s3, s2, s1; each with the clock and queue it saw.
    ts_mask = (1 << 64) - 1 if version == 2 else 0xFFFF_FFFF
    want = {
        "node_id": (3, 2, 1),
        "l1_ingress_port": (1, 1, 1), "l1_egress_port": (2, 2, 2),
        "hop_latency": tuple(h.t_out - h.t_in for h in reversed(HOPS)),
        "queue_id": (0, 0, 0),
        "queue_occupancy": tuple(h.qdepth for h in reversed(HOPS)),
        "ingress_ts": tuple(h.t_in & ts_mask for h in reversed(HOPS)),
        "egress_ts": tuple(h.t_out & ts_mask for h in reversed(HOPS)),
        "l2_ingress_port": (1, 1, 1), "l2_egress_port": (2, 2, 2),
        "egress_tx_util": (0xFFFF_FFFF,) * 3,
    }
    if version == 2:
        want |= {"buffer_id": (0xFF,) * 3, "buffer_occupancy": (0xFFFFFF,) * 3}
    assert dict(result.hops) == want
    assert events(line.switches[2]) == {"hop": 1, "sink": 1, "report": 1}


def test_sequence_numbers_count_reports_and_wrap_at_22_bits(program: CompiledProgram) -> None:
    for tr, start, seqs in ((2, (1 << 22) - 2, [(1 << 22) - 2, (1 << 22) - 1, 0]),
                            (1, (1 << 22) - 1, [(1 << 22) - 1, 1 << 22, (1 << 22) + 1])):
        line = make_line(program, report=tr, int_version=tr)
        sink = line.switches[2]
        names = [e.qname for e in program.externs]
        sink.externs[names.index("int_report_seq")].values[0] = start
        got = []
        for i in range(3):
            _, reports = line.send(host_frame(ident=i), HOPS)
            got.append(parse_report(report_payload(reports[0])).seq)  # type: ignore[union-attr]
        assert got == seqs


def test_sink_hop_is_measured_on_the_host_port_not_the_collector_port(
        program: CompiledProgram) -> None:
    """The report clone leaves by port 500 from a queue of its own; the
    sink's hop it carries is the original's, toward the host."""
    line = make_line(program)
    hops = [HOPS[0], HOPS[1], Hop(5000, 5044, 12, report_qdepth=4321)]
    _, [frame] = line.send(host_frame(), hops)
    top = parse_report(report_payload(frame)).hop(0)  # type: ignore[union-attr]
    assert (top["node_id"], top["l1_egress_port"], top["queue_occupancy"],
            top["hop_latency"], top["egress_ts"]) == (3, 2, 12, 44, 5044)


def test_remaining_hop_count_limits_the_stack_and_sets_e(program: CompiledProgram) -> None:
    line = make_line(program, max_hops=2)
    _, [frame] = line.send(host_frame(), HOPS)
    result = parse_report(report_payload(frame))
    assert isinstance(result, ParsedReport)
    assert result.hop_count == 2 and result.hops["node_id"] == (2, 1)
    assert result.int_header["e"] == 1 and result.int_header["remaining_hop_cnt"] == 0
    assert events(line.switches[2]) == {"exhausted": 1, "sink": 1, "report": 1}


def test_watchlist_ranges_pick_the_flows(program: CompiledProgram) -> None:
    """Watchlist: UDP to 10.0.2.0/24, destination port 5000-5999 (range),
    source port 1000-1999 from a second entry at a higher priority with
    its own bitmap; everything else passes without INT."""
    clock = Clock()
    sw = make_switch(program, clock, 1, source=True, instructions=0x8000)
    sw.table_add("MyIngress.int_watchlist", {"meta.l4_sport": RangeMatch(1000, 1999)},
                 "MyIngress.int_watch", {"instructions": 0xC000, "max_hop_cnt": 4},
                 priority=20)

    def bitmap(**kw: int) -> int | None:
        [out] = through(sw, clock, host_frame(**kw), Hop(0, 0, 0))[2]
        ip = IP(out[14:])
        if ip.tos >> 2 != INT_DSCP:
            return None
        return struct.unpack_from("!H", bytes(ip[UDP].payload), 8)[0]

    assert [bitmap(dport=d, sport=2222) for d in (4999, 5000, 5999, 6000)] == [
        None, 0x8000, 0x8000, None]
    assert [bitmap(dport=9999, sport=s) for s in (999, 1000, 1999, 2000)] == [
        None, 0xC000, 0xC000, None]
    assert bitmap(dport=5000, sport=1500) == 0xC000


# --- restoration and the UDP checksum ----------------------------------------------------------

def _checksum_ffff_frame() -> bytes:
    """A UDP packet whose checksum is 0xFFFF (its sum is ones' complement
    zero): two payload bytes chosen to make it so, and Scapy agreeing."""
    for filler in range(1, 20):
        base = host_frame(payload=bytes([filler]) * 10 + b"\0\0", chksum=0)
        ip = IP(base[14:])
        pseudo = struct.pack("!4s4sBBH", bytes(ip)[12:16], bytes(ip)[16:20], 0, 17, ip[UDP].len)
        data = pseudo + bytes(ip[UDP])
        total = sum(struct.unpack(f"!{len(data) // 2}H", data))
        fix = (0xFFFF - total % 0xFFFF) % 0xFFFF
        frame = host_frame(payload=bytes([filler]) * 10 + fix.to_bytes(2, "big"))
        if IP(frame[14:])[UDP].chksum == 0xFFFF:
            return frame
    raise AssertionError("no payload gives checksum 0xffff")


def test_udp_checksum_0xffff_and_0_come_back_exactly(program: CompiledProgram) -> None:
    frame = _checksum_ffff_frame()
    for sent in (frame, host_frame(chksum=0)):
        line = make_line(program)
        got, reports = line.send(sent, HOPS)
        assert got[0][14:] == routed(sent, 3) and len(reports) == 1


def test_random_packets_round_trip_with_valid_checksums_inside(program: CompiledProgram) -> None:
    """200 random UDP packets (ports in the watched range, DSCP, payload
    0-80 bytes, random clock and queue values) in every signalling and
    version mode: inside the domain the UDP checksum is right for the
    datagram with INT, h2 gets exactly what h1 sent (TTL aside), and every
    report parses with 3 hops."""
    rng = random.Random(11)
    for version, by_port in ((2, 0), (2, 1), (1, 0)):
        line = make_line(program, int_version=version, by_port=by_port)
        for i in range(200 // 3 + 1):
            sent = host_frame(dport=rng.randrange(5000, 6000), sport=rng.randrange(1, 65536),
                              tos=rng.randrange(64) << 2 | rng.randrange(4), ident=i,
                              payload=rng.randbytes(rng.randrange(81)))
            hops = []
            t = rng.randrange(1 << 40)
            for _ in range(3):
                wait = rng.randrange(5000)
                hops.append(Hop(t, t + wait, rng.randrange(1 << 19)))
                t += wait + rng.randrange(100)
            data = sent
            for sw, clock, hop in zip(line.switches[:2], line.clocks, hops):
                [data] = through(sw, clock, data, hop)[2]
                assert _udp_checksum_ok(IP(data[14:])), i
            out = through(line.switches[2], line.clocks[2], data, hops[2])
            [got], [report] = out[2], out[COLLECTOR_PORT]
            assert got[14:] == routed(sent, 3), i
            signal = PORT_SIGNAL if by_port else IntSignal()
            result = parse_report(report_payload(report), signal)
            assert isinstance(result, ParsedReport) and result.hop_count == 3, i
            assert result.hops["queue_occupancy"] == tuple(h.qdepth for h in reversed(hops))


def test_host_packets_marked_like_int_are_remarked(program: CompiledProgram) -> None:
    """A host's packet with the INT DSCP is not INT: it leaves the source with
    DSCP 0, and nothing downstream takes it for INT."""
    line = make_line(program)
    sent = host_frame(dport=80, tos=INT_DSCP << 2 | 2)
    got, reports = line.send(sent, HOPS)
    assert reports == [] and IP(got[0][14:]).tos == 2
    assert events(line.switches[0]) == {"remarked": 1}


def test_long_stack_report_runs_to_the_end(program: CompiledProgram) -> None:
    """20 hops of 12 words reach the sink (shim Length 243); its hop makes
    255, the largest the shim can say, and the report 265 words, so its
    Report Length is 0xFF (to the end of the payload). A 21-hop stack leaves
    no room for the sink's hop: the report has the 21 upstream hops."""
    for upstream, sink_hop in ((20, True), (21, False)):
        clock = Clock()
        sink = make_switch(program, clock, 0x33, sink=True)
        sent = host_frame()
        ip = IP(sent[14:])
        stack = b"".join(struct.pack("!IHHIIQQIIII", 100 + k, 1, 2, 0, 0, 0, 0, 1, 2,
                                     0xFFFFFFFF, 0xFFFFFFFF) for k in range(upstream))
        shim = struct.pack("!BBH", 0x10, 3 + len(stack) // 4, ip.tos)
        md = struct.pack("!IHHHH", 2 << 28 | 12 << 8 | 30, ALL_ITEMS, 0, 0, 0)
        body = shim + md + stack + bytes(ip[UDP].payload)
        marked = bytes(Ether(dst=ROUTER_MAC, src=HOST_MAC)
                       / IP(src=ip.src, dst=ip.dst, tos=INT_DSCP << 2, id=ip.id)
                       / UDP(sport=ip[UDP].sport, dport=ip[UDP].dport) / Raw(body))
        out = through(sink, clock, marked, Hop(10, 20, 1))
        assert out[2][0][14:] == routed(sent, 1)
        payload = report_payload(out[COLLECTOR_PORT][0])
        assert payload[9] == 0xFF
        result = parse_report(payload)
        assert isinstance(result, ParsedReport)
        assert result.hop_count == 21
        assert result.hops["node_id"][0] == (0x33 if sink_hop else 100)
        assert events(sink) == ({"sink": 1, "report": 1} | (
            {"hop": 1} if sink_hop else {"skipped": 1}))


# --- control-plane contract and p4c ------------------------------------------------------------

def test_p4info_names_the_control_plane_contract(program: CompiledProgram) -> None:
    p4info = build_p4info(program.schema)
    tables = {t.preamble.name: [(m.name, m.bitwidth, m.match_type) for m in t.match_fields]
              for t in p4info.tables}
    mf = protos().p4info_pb2.MatchField
    EXACT, LPM, TERNARY, RANGE = mf.EXACT, mf.LPM, mf.TERNARY, mf.RANGE
    assert tables == {
        "MyIngress.ipv4_lpm": [("hdr.ipv4.dstAddr", 32, LPM)],
        "MyIngress.ecmp_nhop": [("meta.ecmp_group", 16, EXACT), ("meta.ecmp_select", 16, EXACT)],
        "MyIngress.int_source_port": [("standard_metadata.ingress_port", 9, EXACT)],
        "MyIngress.int_watchlist": [("hdr.ipv4.srcAddr", 32, TERNARY),
                                    ("hdr.ipv4.dstAddr", 32, TERNARY),
                                    ("hdr.ipv4.protocol", 8, TERNARY),
                                    ("meta.l4_sport", 16, RANGE), ("meta.l4_dport", 16, RANGE)],
        "MyIngress.int_source_config": [],
        "MyEgress.int_node_config": [],
        "MyEgress.int_sink_port": [("standard_metadata.egress_port", 9, EXACT)],
        "MyEgress.int_report_config": [],
    }
    actions = {a.preamble.name: [(p.name, p.bitwidth) for p in a.params] for a in p4info.actions}
    assert actions[FORWARD_ACTION] == [(FORWARD_MAC_PARAM, 48), (FORWARD_PORT_PARAM, 9)]
    assert actions[ECMP_ACTION] == [(ECMP_GROUP_PARAM, 16), (ECMP_COUNT_PARAM, 16)]
    assert actions["MyIngress.int_watch"] == [("instructions", 16), ("max_hop_cnt", 8)]
    assert actions["MyIngress.set_source_config"] == [("by_port", 1), ("int_version", 4),
                                                      ("domain_id", 16)]
    assert actions["MyEgress.set_node_id"] == [("node_id", 32)]
    assert actions["MyEgress.set_report"] == [
        ("src_mac", 48), ("collector_mac", 48), ("src_ip", 32), ("collector_ip", 32),
        ("src_port", 16), ("collector_port", 16), ("hw_id", 6), ("version", 4)]
    assert {r.preamble.name: r.size for r in p4info.registers} == {"int_report_seq": 1}
    assert {c.preamble.name: c.size for c in p4info.counters} == {"int_md_events": 8}


@pytest.mark.skipif(shutil.which("p4c") is None,
                    reason="p4c not found on PATH (build p4c to run this)")
def test_compiles_with_p4c(tmp_path: Path) -> None:
    from orchestration.binaries.p4c import compile_bmv2
    p4info = compile_bmv2(PROGRAM, tmp_path).p4info.read_text()
    missing = [name for name in ("MyIngress.int_watchlist", "MyIngress.int_watch",
                                 "MyEgress.int_sink_port", "MyEgress.set_report",
                                 "int_report_seq", "int_md_events") if name not in p4info]
    assert missing == []
