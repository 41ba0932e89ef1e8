"""Telemetry reports built with Scapy, independently of the parser, after
docs/telemetry_report_format.md: one Packet class per header and per
metadata item, so every width and bit position is written down a second
time in a different form. ``build`` gives a report's UDP payload from a
``ReportSpec``; ``expected`` gives the ParsedReport it must parse to."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from scapy.all import IP, TCP, UDP, Dot1Q, Ether, Packet, Raw
from scapy.fields import (
    BitField,
    ByteField,
    IntField,
    LongField,
    ShortField,
    ThreeBytesField,
    XIntField,
    XShortField,
)

from sinks.intcollector.reports import ParsedReport

INT_PORT = 4790  # UDP port signalling INT in tests that use port signalling
INT_DSCP = 0x17  # the specs' example DSCP, the parser's default signal


# --- report headers ---------------------------------------------------------

class ReportV05(Packet):
    name = "Telemetry Report v0.5 fixed header"
    fields_desc = [BitField("ver", 0, 4), BitField("nproto", 0, 4), BitField("d", 0, 1),
                   BitField("q", 0, 1), BitField("f", 1, 1), BitField("reserved", 0, 15),
                   BitField("hw_id", 0, 6), IntField("seq", 0), IntField("ingress_ts", 0)]


class DropHeaderV05(Packet):
    name = "Telemetry Drop Report header v0.5"
    fields_desc = [IntField("switch_id", 0), ShortField("l1_ingress_port", 0),
                   ShortField("l1_egress_port", 0), ByteField("queue_id", 0),
                   ByteField("drop_reason", 0), ShortField("pad", 0)]


class LocalHeaderV05(Packet):
    name = "Telemetry Switch Local Report header v0.5"
    fields_desc = [IntField("switch_id", 0), ShortField("l1_ingress_port", 0),
                   ShortField("l1_egress_port", 0), ByteField("queue_id", 0),
                   ThreeBytesField("queue_occupancy", 0), IntField("egress_ts", 0)]


class ReportV10(Packet):
    name = "Telemetry Report v1.0 header"
    fields_desc = [BitField("ver", 1, 4), BitField("length", 4, 4), BitField("nprot", 0, 3),
                   BitField("rep_md_bits", 0, 6), BitField("reserved", 0, 6), BitField("d", 0, 1),
                   BitField("q", 0, 1), BitField("f", 1, 1), BitField("hw_id", 0, 6),
                   IntField("switch_id", 0), IntField("seq", 0), IntField("ingress_ts", 0)]


class GroupHeaderV20(Packet):
    name = "Telemetry Report v2.0 group header"
    fields_desc = [BitField("ver", 2, 4), BitField("hw_id", 0, 6), BitField("seq", 0, 22),
                   IntField("node_id", 0)]


class IndividualHeaderV20(Packet):
    name = "Telemetry Report v2.0 individual report header"
    fields_desc = [BitField("rep_type", 1, 4), BitField("in_type", 3, 4),
                   ByteField("report_length", 0), ByteField("md_length", 0), BitField("d", 0, 1),
                   BitField("q", 0, 1), BitField("f", 1, 1), BitField("i", 0, 1),
                   BitField("rsvd", 0, 4)]


class IntContentsV20(Packet):
    name = "Telemetry Report v2.0 INT main contents"
    fields_desc = [XShortField("rep_md_bits", 0), ShortField("domain_specific_id", 0),
                   XShortField("ds_md_bits", 0), ShortField("ds_md_status", 0)]


# --- INT headers -------------------------------------------------------------

class ShimV05(Packet):
    fields_desc = [ByteField("type", 1), ByteField("reserved", 0), ByteField("length", 0),
                   ByteField("reserved2", 0)]


class TailV05(Packet):
    fields_desc = [ByteField("proto", 0), ShortField("dport", 0), ByteField("dscp", 0)]


class ShimV10(Packet):
    fields_desc = [ByteField("type", 1), ByteField("reserved", 0), ByteField("length", 0),
                   BitField("dscp", 0, 6), BitField("r", 0, 2)]


class ShimV20(Packet):
    fields_desc = [BitField("type", 1, 4), BitField("npt", 0, 2), BitField("r", 0, 2),
                   ByteField("length", 0), ShortField("npt_field", 0)]


class MetadataHeaderV05(Packet):
    fields_desc = [BitField("ver", 0, 4), BitField("rep", 0, 2), BitField("c", 0, 1),
                   BitField("e", 0, 1), BitField("r", 0, 3), BitField("ins_cnt", 0, 5),
                   ByteField("max_hop_cnt", 0), ByteField("total_hop_cnt", 0),
                   XShortField("instructions", 0), ShortField("reserved", 0)]


class MetadataHeaderV10(Packet):
    fields_desc = [BitField("ver", 1, 4), BitField("rep", 0, 2), BitField("c", 0, 1),
                   BitField("e", 0, 1), BitField("m", 0, 1), BitField("reserved", 0, 10),
                   BitField("hop_ml", 0, 5), ByteField("remaining_hop_cnt", 0),
                   XShortField("instructions", 0), ShortField("reserved2", 0)]


class MetadataHeaderV20(Packet):
    fields_desc = [BitField("ver", 2, 4), BitField("d", 0, 1), BitField("e", 0, 1),
                   BitField("m", 0, 1), BitField("reserved", 0, 12), BitField("hop_ml", 0, 5),
                   ByteField("remaining_hop_cnt", 0), XShortField("instructions", 0),
                   ShortField("domain_id", 0), XShortField("ds_instructions", 0),
                   XShortField("ds_flags", 0)]


# --- metadata items ----------------------------------------------------------

def _item(name: str, *fields: object) -> type[Packet]:
    """One metadata item as its own Scapy packet class."""
    return type(name, (Packet,), {"name": name, "fields_desc": list(fields)})


NodeId = _item("NodeId", IntField("node_id", 0))
L1Ports = _item("L1Ports", ShortField("l1_ingress_port", 0), ShortField("l1_egress_port", 0))
HopLatency = _item("HopLatency", IntField("hop_latency", 0))
Queue = _item("Queue", ByteField("queue_id", 0), ThreeBytesField("queue_occupancy", 0))
Congestion = _item("Congestion", ByteField("congestion_queue_id", 0),
                   ThreeBytesField("queue_congestion", 0))
IngressTs32 = _item("IngressTs32", IntField("ingress_ts", 0))
EgressTs32 = _item("EgressTs32", IntField("egress_ts", 0))
IngressTs64 = _item("IngressTs64", LongField("ingress_ts", 0))
EgressTs64 = _item("EgressTs64", LongField("egress_ts", 0))
L2Ports = _item("L2Ports", IntField("l2_ingress_port", 0), IntField("l2_egress_port", 0))
TxUtil = _item("TxUtil", IntField("egress_tx_util", 0))
Buffer = _item("Buffer", ByteField("buffer_id", 0), ThreeBytesField("buffer_occupancy", 0))
Checksum = _item("Checksum", IntField("checksum_complement", 0))
Drop = _item("Drop", ByteField("drop_queue_id", 0), ByteField("drop_reason", 0),
             ShortField("pad", 0))
# What a hop writes for an instruction it does not know, and a domain-specific word.
ReservedWord = _item("ReservedWord", XIntField("reserved", 0xFFFF_FFFF))
DomainWord = _item("DomainWord", XIntField("ds_word", 0xD5D5_D5D5))


# Instruction bit (0 = most significant) -> item, per INT version.
INT_ITEMS: dict[int, dict[int, type[Packet]]] = {
    0: {0: NodeId, 1: L1Ports, 2: HopLatency, 3: Queue, 4: IngressTs32, 5: EgressTs32,
        6: Congestion, 7: TxUtil},
    1: {0: NodeId, 1: L1Ports, 2: HopLatency, 3: Queue, 4: IngressTs32, 5: EgressTs32,
        6: L2Ports, 7: TxUtil, 15: Checksum},
    2: {0: NodeId, 1: L1Ports, 2: HopLatency, 3: Queue, 4: IngressTs64, 5: EgressTs64,
        6: L2Ports, 7: TxUtil, 8: Buffer, 15: Checksum},
}
# Report metadata bits: TR v1.0 (6 bits) and TR v2.0 (16 bits).
TR10_ITEMS: dict[int, type[Packet]] = {0: L1Ports, 1: HopLatency, 2: Queue, 3: EgressTs32,
                                       4: Drop, 5: TxUtil}
TR20_ITEMS: dict[int, type[Packet]] = {1: L1Ports, 2: HopLatency, 3: Queue, 4: IngressTs64,
                                       5: EgressTs64, 6: L2Ports, 7: TxUtil, 8: Buffer,
                                       15: Drop}
V05_HEADERS = {1: DropHeaderV05, 2: LocalHeaderV05}

ALL_V05 = 0xFF00  # bits 0-7
ALL_V10 = 0xFF01  # bits 0-7 and 15
ALL_V20 = 0xFF80  # bits 0-8: the nine baseline items


def value_fields(cls: type[Packet]) -> dict[str, int]:
    """An item's value fields and their widths in bits (padding left out)."""
    return {f.name: 8 * f.sz for f in cls.fields_desc if f.name not in ("pad", "reserved")}


def bits_of(bitmap: int, width: int = 16) -> list[int]:
    return [b for b in range(width) if bitmap & (1 << (width - 1 - b))]


def hop_fields(int_version: int, instructions: int) -> dict[str, int]:
    """Field name -> width in bits of every value a hop carries."""
    out: dict[str, int] = {}
    for bit in bits_of(instructions):
        cls = INT_ITEMS[int_version].get(bit)
        if cls is not None:
            out.update(value_fields(cls))
    return out


def _items(table: dict[int, type[Packet]], bits: list[int], values: dict[str, int]) -> bytes:
    out = b""
    for bit in bits:
        cls = table.get(bit, ReservedWord)
        out += bytes(cls(**{k: values[k] for k in value_fields(cls) if k in values}))
    return out


def _md_bits(table: dict[int, type[Packet]], values: dict[str, int], width: int) -> int:
    bitmap = 0
    for bit, cls in table.items():
        names = set(value_fields(cls))
        if names & values.keys():
            assert names <= values.keys(), f"give all of {sorted(names)}"
            bitmap |= 1 << (width - 1 - bit)
    return bitmap


@dataclass
class ReportSpec:
    """Everything a test can choose about one report; defaults make a valid
    TR v2.0 report of a UDP packet with INT v2.0 signalled by DSCP."""

    report_version: int = 2
    int_version: int | None = 2
    instructions: int = ALL_V20
    hops: list[dict[str, int]] = field(default_factory=list)  # newest first
    hop_ml: int | None = None  # None: what the instructions need
    ds_words: int = 0  # v2.0 domain-specific words per hop
    hw_id: int = 3
    seq: int = 77
    node_id: int = 9
    ingress_ts: int = 123456
    dropped: bool = False
    congested: bool = False
    tracked: bool = True
    intermediate: bool = False
    report_md: dict[str, int] = field(default_factory=dict)
    v05_header: int = 0  # TR v0.5 NProto: 0 none, 1 drop header, 2 switch-local header
    inner: str = "ethernet"  # "ethernet", "vlan", "ipv4" or (v2.0) "none"
    rep_type: int = 1  # v2.0: 0 inner only, 1 INT
    domain_specific_id: int = 0
    ds_md_bits: int = 0
    ds_md_status: int = 0
    ds_md_words: int = 0  # v2.0 report: domain-specific metadata words after the baseline
    l4: str = "udp"  # "udp", "tcp" or "icmp"
    tcp_options: list[tuple[str, object]] = field(default_factory=list)
    src: str = "10.0.1.1"
    dst: str = "10.0.2.2"
    sport: int = 1234
    dport: int = 80
    dscp: int = INT_DSCP
    by_port: bool = False  # signal INT by UDP destination port INT_PORT instead of DSCP
    rep: int = 0
    c: int = 0
    e: int = 0
    m: int = 0
    d: int = 0
    max_hop_cnt: int = 8
    remaining_hop_cnt: int = 2
    int_dscp: int = 5  # original DSCP kept in the shim (v1.0, v2.0 NPT 0) or v0.5 tail
    npt: int = 0
    orig_proto: int = 6  # v2.0 NPT 2
    domain_id: int = 0
    ds_instructions: int = 0
    ds_flags: int = 0
    payload: bytes = b""


def _stack(spec: ReportSpec) -> bytes:
    assert spec.int_version is not None
    bits = bits_of(spec.instructions)
    table = INT_ITEMS[spec.int_version]
    out = b""
    for hop in spec.hops:
        before = [b for b in bits if b != 15]
        out += _items(table, before, hop) + bytes(DomainWord()) * spec.ds_words
        if 15 in bits:
            out += _items(table, [15], hop)
    return out


def _hop_words(spec: ReportSpec) -> int:
    assert spec.int_version is not None
    if spec.hop_ml is not None:
        return spec.hop_ml
    bits = bits_of(spec.instructions)
    if spec.int_version == 0:
        return len(bits)
    size = len(_items(INT_ITEMS[spec.int_version], bits, {}))
    return size // 4 + spec.ds_words


def int_bytes(spec: ReportSpec) -> bytes:
    """Shim, metadata header, stack (and the v0.5 tail)."""
    stack = _stack(spec)
    hop_ml = _hop_words(spec)
    if spec.int_version == 0:
        shim = ShimV05(length=(16 + len(stack)) // 4)
        md = MetadataHeaderV05(rep=spec.rep, c=spec.c, e=spec.e, ins_cnt=hop_ml,
                               max_hop_cnt=spec.max_hop_cnt, total_hop_cnt=len(spec.hops),
                               instructions=spec.instructions)
        tail = TailV05(proto=17 if spec.l4 == "udp" else 6, dport=spec.dport, dscp=spec.int_dscp)
        return bytes(shim) + bytes(md) + stack + bytes(tail)
    if spec.int_version == 1:
        shim = ShimV10(length=(12 + len(stack)) // 4, dscp=spec.int_dscp)
        md = MetadataHeaderV10(rep=spec.rep, c=spec.c, e=spec.e, m=spec.m, hop_ml=hop_ml,
                               remaining_hop_cnt=spec.remaining_hop_cnt,
                               instructions=spec.instructions)
        return bytes(shim) + bytes(md) + stack
    npt_field = {0: spec.int_dscp << 2, 1: spec.dport, 2: spec.orig_proto}[spec.npt]
    shim = ShimV20(npt=spec.npt, length=(12 + len(stack)) // 4, npt_field=npt_field)
    md = MetadataHeaderV20(d=spec.d, e=spec.e, m=spec.m, hop_ml=hop_ml,
                           remaining_hop_cnt=spec.remaining_hop_cnt,
                           instructions=spec.instructions, domain_id=spec.domain_id,
                           ds_instructions=spec.ds_instructions, ds_flags=spec.ds_flags)
    return bytes(shim) + bytes(md) + stack


def inner_packet(spec: ReportSpec) -> bytes:
    """The packet the sink saw: IPv4, TCP/UDP, INT, payload; behind Ethernet
    (and an 802.1Q tag) unless the report starts at IPv4."""
    ip = IP(src=spec.src, dst=spec.dst, tos=spec.dscp << 2, ttl=61, id=7)
    dport = INT_PORT if spec.by_port else spec.dport
    tail = spec.payload
    if spec.int_version is not None:
        tail = int_bytes(spec) + tail
    if spec.int_version == 2 and spec.npt == 2:
        original = TCP(sport=spec.sport, dport=spec.dport) if spec.orig_proto == 6 else \
            UDP(sport=spec.sport, dport=spec.dport)
        pkt = ip / UDP(sport=999, dport=dport) / Raw(int_bytes(spec) + bytes(original)
                                                     + spec.payload)
    elif spec.l4 == "udp":
        pkt = ip / UDP(sport=spec.sport, dport=dport) / Raw(tail)
    elif spec.l4 == "tcp":
        pkt = ip / TCP(sport=spec.sport, dport=dport, options=spec.tcp_options) / Raw(tail)
    else:
        pkt = IP(src=spec.src, dst=spec.dst, tos=spec.dscp << 2, proto=1) / Raw(tail)
    if spec.inner == "ethernet":
        pkt = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / pkt
    elif spec.inner == "vlan":
        pkt = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / Dot1Q(vlan=5) / pkt
    return bytes(pkt)


def _report_v05(spec: ReportSpec, inner: bytes) -> bytes:
    header = ReportV05(nproto=spec.v05_header, d=spec.dropped, q=spec.congested,
                       f=spec.tracked, hw_id=spec.hw_id, seq=spec.seq,
                       ingress_ts=spec.ingress_ts)
    local = b""
    if spec.v05_header:
        local = bytes(V05_HEADERS[spec.v05_header](switch_id=spec.node_id, **spec.report_md))
    return bytes(header) + local + inner


def _report_v10(spec: ReportSpec, inner: bytes) -> bytes:
    md_bits = _md_bits(TR10_ITEMS, spec.report_md, 6)
    md = _items(TR10_ITEMS, bits_of(md_bits, 6), spec.report_md)
    header = ReportV10(length=4 + len(md) // 4, nprot=0 if spec.inner != "ipv4" else 1,
                       rep_md_bits=md_bits, d=spec.dropped, q=spec.congested, f=spec.tracked,
                       hw_id=spec.hw_id, switch_id=spec.node_id, seq=spec.seq,
                       ingress_ts=spec.ingress_ts)
    return bytes(header) + md + inner


def _report_v20(spec: ReportSpec, inner: bytes) -> bytes:
    inner += b"\x00" * (-len(inner) % 4)  # Report Length counts words
    contents = b""
    md_words = 0
    if spec.rep_type == 1:
        md_bits = _md_bits(TR20_ITEMS, spec.report_md, 16)
        md = _items(TR20_ITEMS, bits_of(md_bits), spec.report_md)
        md += bytes(DomainWord()) * spec.ds_md_words
        md_words = len(md) // 4
        contents = bytes(IntContentsV20(rep_md_bits=md_bits,
                                        domain_specific_id=spec.domain_specific_id,
                                        ds_md_bits=spec.ds_md_bits,
                                        ds_md_status=spec.ds_md_status)) + md
    words = (len(contents) + len(inner)) // 4
    in_type = {"ethernet": 3, "vlan": 3, "ipv4": 4, "none": 0}[spec.inner]
    individual = IndividualHeaderV20(rep_type=spec.rep_type, in_type=in_type,
                                     report_length=min(words, 0xFF), md_length=md_words,
                                     d=spec.dropped, q=spec.congested, f=spec.tracked,
                                     i=spec.intermediate)
    group = GroupHeaderV20(hw_id=spec.hw_id, seq=spec.seq, node_id=spec.node_id)
    return bytes(group) + bytes(individual) + contents + inner


def build(spec: ReportSpec) -> bytes:
    """The report's UDP payload."""
    inner = b"" if spec.inner == "none" else inner_packet(spec)
    builder = {0: _report_v05, 1: _report_v10, 2: _report_v20}[spec.report_version]
    return builder(spec, inner)


def frame(payload: bytes, collector_port: int = 32766) -> bytes:
    """A whole report frame, for tests that go through pcaps or sockets."""
    outer = Ether() / IP(src="10.254.0.9", dst="10.255.255.254") / UDP(dport=collector_port)
    return bytes(outer / Raw(payload))


def _int_header(spec: ReportSpec) -> dict[str, int]:
    if spec.int_version == 0:
        return {"rep": spec.rep, "c": spec.c, "e": spec.e, "max_hop_cnt": spec.max_hop_cnt,
                "tail_proto": 17 if spec.l4 == "udp" else 6, "tail_dport": spec.dport,
                "tail_dscp": spec.int_dscp}
    if spec.int_version == 1:
        return {"dscp": spec.int_dscp, "rep": spec.rep, "c": spec.c, "e": spec.e, "m": spec.m,
                "remaining_hop_cnt": spec.remaining_hop_cnt}
    shim = {0: {"dscp": spec.int_dscp}, 1: {"orig_dport": spec.dport},
            2: {"orig_proto": spec.orig_proto}}[spec.npt]
    return {"npt": spec.npt, "d": spec.d, "e": spec.e, "m": spec.m,
            "domain_id": spec.domain_id, "ds_instructions": spec.ds_instructions,
            "ds_flags": spec.ds_flags, "remaining_hop_cnt": spec.remaining_hop_cnt, **shim}


def _flow(spec: ReportSpec) -> tuple[int, int, int, int, int] | None:
    if spec.inner == "none":
        return None
    src, dst = int(ipaddress.IPv4Address(spec.src)), int(ipaddress.IPv4Address(spec.dst))
    proto = {"udp": 17, "tcp": 6, "icmp": 1}[spec.l4]
    if proto == 1:
        return src, dst, 1, 0, 0
    dport = INT_PORT if spec.by_port else spec.dport
    if spec.int_version == 0 and spec.by_port:
        dport = spec.dport  # the tail keeps the original port
    if spec.int_version == 2 and spec.npt in (1, 2):
        dport = spec.dport  # the shim or the original L4 header has it
    if spec.int_version == 2 and spec.npt == 2:
        proto = spec.orig_proto
    return src, dst, proto, spec.sport, dport


def expected(spec: ReportSpec) -> ParsedReport:
    """What ``build(spec)`` must parse to (with INT signalled the way the
    spec says: DSCP INT_DSCP, or port INT_PORT when ``by_port``)."""
    has_int = spec.int_version is not None and spec.inner != "none" and spec.l4 != "icmp"
    report_md = dict(spec.report_md)
    if spec.report_version == 2 and spec.rep_type == 1:
        report_md.update(domain_specific_id=spec.domain_specific_id, ds_md_bits=spec.ds_md_bits,
                         ds_md_status=spec.ds_md_status)
    node_id: int | None = spec.node_id
    if spec.report_version == 0 and not spec.v05_header:
        node_id = None
    hops: dict[str, tuple[int, ...]] = {}
    if has_int:
        assert spec.int_version is not None
        hops = {name: tuple(hop[name] for hop in spec.hops)
                for name in hop_fields(spec.int_version, spec.instructions)}
    return ParsedReport(
        report_version=spec.report_version, hw_id=spec.hw_id, seq=spec.seq, node_id=node_id,
        ingress_ts=None if spec.report_version == 2 else spec.ingress_ts,
        dropped=spec.dropped, congested=spec.congested, tracked=spec.tracked,
        intermediate=spec.report_version == 2 and spec.intermediate, report_md=report_md,
        flow=_flow(spec), inner_dscp=None if spec.inner == "none" else spec.dscp,
        int_version=spec.int_version if has_int else None,
        instructions=spec.instructions if has_int else 0,
        hop_ml=_hop_words(spec) if has_int else 0,
        int_header=_int_header(spec) if has_int else {},
        hop_count=len(spec.hops) if has_int else 0, hops=hops)
