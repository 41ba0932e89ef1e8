"""INT-label's Python parsers against p4src/include/intlabel_headers.p4 and
intlabel.p4's headers struct: sinks/intlabel/report.py (the
telemetry report) and orchestration/systems/intlabel/metrics.py (labeled
packets on the data links). Constants, struct layouts and offsets, then
frames packed from the P4 field widths alone, parsed field by field."""

from __future__ import annotations

import random

from p4headers import ipv4, program, struct_fields

from orchestration.systems.intlabel import metrics
from sinks.intlabel import report

P4 = program("intlabel")
ETH, IP, UDP = P4.header("ethernet_t"), P4.header("ipv4_t"), P4.header("udp_t")
OPTION, ITEM = P4.header("int_option_t"), P4.header("int_item_t")
REPORT, WORD = P4.header("report_t"), P4.header("int_item_word_t")
PORTS = P4.header("l4_ports_t")

COVERS = {(h.file, h.name) for h in (ETH, IP, UDP, OPTION, ITEM, REPORT, WORD, PORTS)}
"""The P4 headers this module checks a Python parser against (test_formats_coverage)."""


def test_report_constants_are_the_p4_programs() -> None:
    assert P4.const("REPORT_VERSION") == report.REPORT_VERSION
    assert P4.const("REPORT_FLAG_SPECIFIC") == report.REPORT_FLAG_SPECIFIC
    assert P4.const("ITEM_FLAG_BOTTOM") == report.ITEM_FLAG_BOTTOM
    assert report.ITEM_BYTES == ITEM.size == P4.const("INT_ITEM_BYTES")
    assert P4.const("ETHERTYPE_IPV4") == report.ETHERTYPE_IPV4
    assert P4.const("IPPROTO_UDP") == report.IPPROTO_UDP
    # the sink emits each item as one word of the item's width
    assert WORD.bits == ITEM.bits


def test_report_offsets_follow_the_headers_struct() -> None:
    """The report is emitted as headers_t's members in order: ethernet,
    rep_ipv4, rep_udp, report, rep_items, ipv4 (restored), [option, items
    removed], l4."""
    members = [(m.name, m.type) for m in P4.members("headers_t")]
    assert members == [("ethernet", "ethernet_t"), ("rep_ipv4", "ipv4_t"), ("rep_udp", "udp_t"),
                       ("report", "report_t"), ("rep_items", "int_item_word_t"),
                       ("ipv4", "ipv4_t"), ("int_option", "int_option_t"),
                       ("int_items", "int_item_t"), ("l4", "l4_ports_t")]
    assert ETH.size + IP.size + UDP.size == report.REPORT_HDR_OFFSET
    assert report.REPORT_HDR_OFFSET + REPORT.size == report.ITEMS_OFFSET
    assert REPORT.size == P4.const("REPORT_HDR_BYTES")
    assert report.ITEMS_OFFSET + IP.size + PORTS.size == report.REPORT_FIXED_BYTES
    assert (ETH.size, IP.size, UDP.size) == (report._ETH, report._IP, report._UDP)


def test_report_struct_layouts_read_the_p4_fields() -> None:
    # the 48-bit timestamps in a high and a low part, flags with enq_qdepth,
    # reserved with deq_qdepth (parse_item masks the 24-bit depths)
    assert struct_fields(report._ITEM, ITEM) == [
        "switch_id", "ingress_port", "egress_port", "ingress_ts[47:32]", "ingress_ts[31:0]",
        "label_ts[47:32]", "label_ts[31:0]", "hop_latency", "flags+enq_qdepth",
        "reserved+deq_qdepth"]
    assert report._MASK24 == ITEM.field("enq_qdepth").mask == ITEM.field("deq_qdepth").mask
    assert ITEM.field("flags").bits == 8
    assert struct_fields(report._HDR, REPORT) == ["version+flags", "int_num", "item_count",
                                                  "max_hop", "switch_id"]
    assert (REPORT.field("version").bits, REPORT.field("flags").bits) == (4, 4)
    assert struct_fields(report._INNER, IP) == [
        "-version+ihl+diffserv+totalLen", "identification", "-flags+fragOffset", "ttl",
        "protocol", "-hdrChecksum", "srcAddr", "dstAddr"]
    assert struct_fields(report._PORTS, PORTS) == ["srcPort", "dstPort"]
    # parse_report reads the UDP destination port 2 bytes into UDP
    assert UDP.offset("dstPort") == 2
    assert struct_fields(report._U16, UDP, at=2, exact=False) == ["dstPort"]


def _report_frame(rng: random.Random, n: int, *, specific: bool) -> tuple[bytes, dict]:
    max_hop = rng.randrange(max(2, n), 10)  # Algorithm 4: a plain count is at most MAX_hop
    int_num = n + max_hop if specific else n
    items = [ITEM.sample(rng, flags=report.ITEM_FLAG_BOTTOM if i == n - 1 else 0)
             for i in range(n)]
    hdr = REPORT.sample(rng, version=P4.const("REPORT_VERSION"),
                        flags=P4.const("REPORT_FLAG_SPECIFIC") if specific else 0,
                        int_num=int_num, item_count=n, max_hop=max_hop)
    inner = IP.sample(rng)
    ports = PORTS.sample(rng)
    udp_len = UDP.size + REPORT.size + ITEM.size * n + IP.size + PORTS.size
    frame = b"".join([
        ETH.pack(ETH.sample(rng, etherType=P4.const("ETHERTYPE_IPV4"))),
        ipv4(IP, **IP.sample(rng, protocol=P4.const("IPPROTO_UDP"), totalLen=IP.size + udp_len)),
        UDP.pack(UDP.sample(rng, dstPort=report.REPORT_UDP_PORT, length=udp_len)),
        REPORT.pack(hdr), *(ITEM.pack(i) for i in items), IP.pack(inner), PORTS.pack(ports)])
    return frame, {"hdr": hdr, "items": items, "inner": inner, "ports": ports}


def test_reports_packed_from_the_p4_widths_parse_field_by_field() -> None:
    rng = random.Random(3)
    for n in (1, 2, 5, 8):
        for specific in (False, True):
            frame, put = _report_frame(rng, n, specific=specific)
            r = report.parse_report(frame)
            hdr, inner, ports = put["hdr"], put["inner"], put["ports"]
            assert (r.sink_switch, r.int_num, r.max_hop, r.specific) == (
                hdr["switch_id"], hdr["int_num"], hdr["max_hop"], specific)
            assert r.items == [
                report.IntItem(i["switch_id"], i["ingress_port"], i["egress_port"],
                               i["ingress_ts"], i["label_ts"], i["hop_latency"],
                               i["enq_qdepth"], i["deq_qdepth"],
                               bool(i["flags"] & report.ITEM_FLAG_BOTTOM))
                for i in put["items"]]
            assert r.flow == (inner["srcAddr"], inner["dstAddr"], inner["protocol"],
                              ports["srcPort"], ports["dstPort"])
            assert (r.ttl, r.ip_id) == (inner["ttl"], inner["identification"])


def test_metrics_constants_and_offsets_are_the_p4_programs() -> None:
    assert P4.const("IPPROTO_INT") == metrics.INT_TYPE
    assert metrics.OPTION_BYTES == OPTION.size == P4.const("INT_OPTION_BYTES")
    assert metrics.ITEM_BYTES == ITEM.size == P4.const("INT_ITEM_BYTES")
    assert P4.member("headers_t", "int_items").stack == metrics.MAX_ITEMS
    at_ip = ETH.size
    assert at_ip == metrics._IP
    assert at_ip + IP.offset("identification") == metrics._IP_ID
    assert at_ip + IP.offset("protocol") == metrics._IP_PROTO
    assert at_ip + IP.offset("srcAddr") == metrics._IP_SRC
    assert metrics._IP_END == at_ip + IP.size == at_ip + IP.offset("dstAddr") + 4
    assert at_ip + IP.size + OPTION.offset("int_num") == metrics._INT_NUM


def test_labeled_frames_packed_from_the_p4_widths_are_counted() -> None:
    rng = random.Random(5)
    truth = metrics.GroundTruth(window_ns=1000, max_hop=4)
    expected_int = 0
    for n, specific in [(1, False), (3, False), (2, True)]:
        ip = IP.sample(rng, protocol=P4.const("IPPROTO_INT"))
        int_num = n + 4 if specific else n
        items = b"".join(ITEM.pack(ITEM.sample(rng)) for _ in range(n))
        frame = (ETH.pack(ETH.sample(rng, etherType=P4.const("ETHERTYPE_IPV4"))) + ipv4(IP, **ip)
                 + OPTION.pack(nh=17, int_num=int_num) + items + PORTS.pack(PORTS.sample(rng))
                 + bytes(20))
        truth.tap(10, "s1", 1, frame)
        expected_int += OPTION.size + ITEM.size * n
        pid = ip["srcAddr"].to_bytes(4, "big") + ip["dstAddr"].to_bytes(4, "big") \
            + ip["identification"].to_bytes(2, "big")
        assert metrics.frame_packet_id(frame) == pid
        assert metrics.report_packet_id(ip["srcAddr"], ip["dstAddr"], ip["identification"]) == pid
        assert truth.labeled[pid] == n
    assert (truth.int_frames, truth.int_bytes) == (3, expected_int)
    plain = ETH.pack(etherType=P4.const("ETHERTYPE_IPV4")) + ipv4(IP, protocol=17) + bytes(30)
    truth.tap(10, "s1", 1, plain)
    assert truth.int_frames == 3
