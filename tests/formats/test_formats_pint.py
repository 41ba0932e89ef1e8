"""PINT's Python parsers and builders against p4src/pint.p4:
sinks/pint/sink_reports.py (the sink's report), and the data packets
orchestration/systems/pint.py and pint_cc.py build and read (IPv4, the
shim, the 8/16/32-bit digest, the L4 ports). Constants, the report's dtype,
then frames packed from the P4 field widths alone, parsed field by field."""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pytest
from p4headers import dtype_fields, ipv4, program

from orchestration.systems import pint, pint_cc
from sinks.pint import sink_reports
from sinks.pint.hashing import packet_ids
from sinks.pint.sink_reports import SinkReports

P4 = program("pint")
ETH, IP, SHIM = P4.header("ethernet_t"), P4.header("ipv4_t"), P4.header("pint_shim_t")
PORTS, REPORT = P4.header("l4_ports_t"), P4.header("pint_report_t")
BUDGETS = (8, 16, 32)

COVERS = {(h.file, h.name) for h in (ETH, IP, SHIM, PORTS, REPORT)} | {
    (P4.header(f"pint_d{b}_t").file, f"pint_d{b}_t") for b in BUDGETS}
"""The P4 headers this module checks a Python parser against (test_formats_coverage)."""


def test_report_constants_are_the_p4_programs() -> None:
    assert P4.const("ETHERTYPE_PINT_REPORT") == sink_reports.REPORT_ETHERTYPE
    assert sink_reports.REPORT_LEN == ETH.size + REPORT.size == P4.const("REPORT_BYTES")
    # a report is Ethernet then the report header, as headers_t orders them
    assert [m.type for m in P4.members("headers_t")][:2] == ["ethernet_t", "pint_report_t"]


def test_report_dtype_reads_the_p4_fields() -> None:
    assert dtype_fields(sink_reports._DTYPE, REPORT) == {
        "pid": "packet_id", "src": "srcAddr", "dst": "dstAddr", "proto": "protocol",
        "sport": "srcPort", "dport": "dstPort", "ip_id": "identification",
        "hops": "hop_count", "budget": "budget", "digest": "digest", "switch": "switch_id"}


@dataclass
class _Recorder:
    """What SinkReports asks of a Recorder: the plan's budget, and ingest."""

    budget: int
    got: list[tuple[np.ndarray, ...]] = field(default_factory=list)

    @property
    def plan(self) -> SimpleNamespace:
        return SimpleNamespace(budget=self.budget)

    def ingest(self, keys: np.ndarray, pids: np.ndarray, hops: np.ndarray,
               digests: np.ndarray) -> None:
        self.got.append((keys, pids, hops, digests))


def test_reports_packed_from_the_p4_widths_feed_field_by_field() -> None:
    rng = random.Random(11)
    rows = []
    for _ in range(16):
        r = REPORT.sample(rng, budget=32)
        r["packet_id"] = int(packet_ids(r["srcAddr"], r["dstAddr"], r["protocol"],
                                        r["srcPort"], r["dstPort"], r["identification"]))
        rows.append(r)
    frames = [ETH.pack(ETH.sample(rng, etherType=P4.const("ETHERTYPE_PINT_REPORT")))
              + REPORT.pack(r) for r in rows]
    rec = _Recorder(32)
    sink = SinkReports(rec)  # type: ignore[arg-type]
    assert sink.feed(frames) == len(rows) and not sink.problems
    (keys, pids, hops, digests), = rec.got
    assert pids.tolist() == [r["packet_id"] for r in rows]
    assert hops.tolist() == [r["hop_count"] for r in rows]
    assert digests.tolist() == [r["digest"] for r in rows]
    assert [sink.flows[k] for k in keys.tolist()] == [
        (r["srcAddr"], r["dstAddr"], r["protocol"], r["srcPort"], r["dstPort"]) for r in rows]
    # a frame of another EtherType is not a report
    assert sink.feed([ETH.pack(etherType=P4.const("ETHERTYPE_IPV4")) + REPORT.pack()]) == 0
    assert sink.problems["not-a-report"] == 1


def test_data_packet_constants_are_the_p4_programs() -> None:
    assert P4.const("PINT_PROTO") == pint.PINT_PROTO
    digests = [P4.header(f"pint_d{budget}_t") for budget in BUDGETS]
    assert [h.name for h in digests] == ["pint_d8_t", "pint_d16_t", "pint_d32_t"]
    assert [h.layout for h in digests] == [(("digest", budget),) for budget in BUDGETS]
    # ipv4, shim, digest, l4: the order headers_t (and the deparser) keep
    names = [m.name for m in P4.members("headers_t")]
    assert names[2:] == ["ipv4", "shim", "d8", "d16", "d32", "l4"]


def _data_frame(rng: random.Random, budget: int | None, proto: int) -> tuple[bytes, dict]:
    ip = IP.sample(rng, ihl=5, flags=0, fragOffset=0,
                   protocol=P4.const("PINT_PROTO") if budget else proto)
    ports = PORTS.sample(rng)
    body = b""
    digest = None
    if budget:
        digest_hdr = P4.header(f"pint_d{budget}_t")
        digest = rng.getrandbits(budget)
        body = SHIM.pack(nextProto=proto, budget=budget) + digest_hdr.pack(digest=digest)
    # the L4 ports, then the rest of a UDP header (length 16, no checksum) and 8 bytes
    l4 = PORTS.pack(ports) + (16).to_bytes(2, "big") + bytes(2) + bytes(8)
    ip["totalLen"] = IP.size + len(body) + len(l4)
    eth = ETH.sample(rng, etherType=P4.const("ETHERTYPE_IPV4"))
    frame = ETH.pack(eth) + ipv4(IP, **ip) + body + l4
    return frame, {"ip": ip, "ports": ports, "digest": digest, "body": len(body)}


@pytest.mark.parametrize("budget", [None, *BUDGETS])
def test_data_frames_packed_from_the_p4_widths_parse(budget: int | None) -> None:
    rng = random.Random(budget or 0)
    for proto in (P4.const("IP_PROTO_UDP"), P4.const("IP_PROTO_TCP")):
        frame, put = _data_frame(rng, budget, proto)
        ip, ports = put["ip"], put["ports"]
        l4 = ETH.size + IP.size + put["body"]
        assert pint.transport(frame) == (proto, l4, put["digest"])
        assert pint.frame_flow(frame) == (
            (ip["srcAddr"], ip["dstAddr"], proto, ports["srcPort"], ports["dstPort"]),
            ip["identification"])
        udp = pint_cc.parse_udp(frame)
        if proto != P4.const("IP_PROTO_UDP"):
            assert udp is None
            continue
        assert udp is not None
        assert (udp.ttl, udp.dport, udp.payload, udp.digest) == (
            ip["ttl"], ports["dstPort"], l4 + 8, put["digest"])


def test_built_udp_frames_unpack_by_the_p4_widths() -> None:
    eth = ETH.pack(dstAddr=0x02_00_00_00_00_01, srcAddr=0x0A, etherType=0x0800)
    frame = pint.udp_frame(eth, bytes([10, 0, 0, 1]), bytes([10, 0, 1, 2]), 0x1_2345, 4000,
                           5001, b"\x01\x02\x03\x04")
    ip = IP.unpack(frame, ETH.size)
    assert {k: ip[k] for k in ("version", "ihl", "totalLen", "identification", "flags",
                               "fragOffset", "ttl", "protocol", "srcAddr", "dstAddr")} == {
        "version": 4, "ihl": 5, "totalLen": len(frame) - ETH.size, "identification": 0x2345,
        "flags": 0, "fragOffset": 0, "ttl": pint.INIT_TTL, "protocol": P4.const("IP_PROTO_UDP"),
        "srcAddr": 0x0A000001, "dstAddr": 0x0A000102}
    assert ipv4(IP, **ip) == frame[ETH.size:ETH.size + IP.size]  # the checksum is right
    assert PORTS.unpack(frame, ETH.size + IP.size) == {"srcPort": 4000, "dstPort": 5001}


def test_packet_id_hashes_the_p4_field_list() -> None:
    """pint.p4 hashes its packet id with crc32 over one field list:
    ``packet_ids`` must hash the same bytes, fields in the program's order,
    each as wide as the program declares it."""
    (inputs,) = P4.hash_inputs("meta.pid")
    names = [name for name, _ in inputs]
    assert names == ["hdr.ipv4.srcAddr", "hdr.ipv4.dstAddr", "meta.proto", "hdr.l4.srcPort",
                     "hdr.l4.dstPort", "hdr.ipv4.identification"]  # packet_ids' arguments
    rng = random.Random(12)
    for _ in range(20):
        values = [rng.getrandbits(bits) for _, bits in inputs]
        word, total = 0, 0
        for value, (_, bits) in zip(values, inputs):
            word, total = word << bits | value, total + bits
        want = zlib.crc32(word.to_bytes(total // 8, "big"))
        assert int(packet_ids(*values)) == want
