"""controller/gpint/probe.py against p4src/include/gpint_headers.p4 (and the
stacks of gpint.p4's headers struct): its constants and struct layouts,
then frames packed from the P4 field widths alone, parsed by
``parse_probe``, and ``encode``'s frames unpacked by the P4 widths."""

from __future__ import annotations

import random

import pytest
from p4headers import Header, ipv4, program, struct_fields

from controller.gpint import probe
from controller.gpint.probe import Addresses, Dlv, Probe, SrEntry, encode, parse_probe

P4 = program("gpint")
ETH, IP = P4.header("ethernet_t"), P4.header("ipv4_t")
REQ, COUNT = P4.header("gpint_req_t"), P4.header("gpint_count_t")
SR, DLV, MEA = P4.header("gpint_sr_t"), P4.header("gpint_dlv_t"), P4.header("gpint_mea_t")

COVERS = {(h.file, h.name) for h in (ETH, IP, REQ, COUNT, SR, DLV, MEA)}
"""The P4 headers this module checks a Python parser against (test_formats_coverage)."""


def test_constants_are_the_p4_programs() -> None:
    assert P4.const("IPPROTO_GPINT") == probe.GPINT_PROTO
    assert P4.const("ETHERTYPE_IPV4") == probe.ETHERTYPE_IPV4
    assert (P4.const("DSCP_PROBE"), P4.const("DSCP_FEEDBACK"), P4.const("DSCP_NOTICE")) == (
        probe.KIND_PROBE, probe.KIND_FEEDBACK, probe.KIND_NOTICE)
    assert (P4.const("REQ_RULE_HITS"), P4.const("REQ_PORT_PACKETS")) == (
        probe.REQ_RULE_HITS, probe.REQ_PORT_COUNTERS)
    # the DSCP kinds fit the P4 field that carries them
    assert max(probe.KIND_NAMES) <= IP.field("dscp").mask


def test_sizes_are_the_p4_headers() -> None:
    assert ETH.size == probe.ETH_BYTES
    assert probe.IPV4_BYTES == IP.size == P4.const("IPV4_BYTES")
    assert probe.REQ_BYTES == REQ.size == P4.const("REQ_BYTES")
    assert probe.SR_BYTES == SR.size == P4.const("SR_ENTRY_BYTES")
    assert probe.DLV_BYTES == DLV.size == P4.const("DLV_ENTRY_BYTES")
    assert probe.VALUE_BYTES == MEA.size == P4.const("MEA_VALUE_BYTES")
    assert ETH.size + IP.size + REQ.size == probe.FEEDBACK_BYTES
    assert ETH.size + IP.size + REQ.size + 3 * COUNT.size == probe.EMPTY_PROBE_BYTES
    assert REQ.field("request_id").mask == probe.MAX_REQUEST_ID


def test_limits_are_the_p4_stacks() -> None:
    """sr_top plus the sr stack, the dlv and the mea stacks of headers_t."""
    assert 1 + P4.member("headers_t", "sr").stack == probe.MAX_SR
    assert P4.member("headers_t", "dlv").stack == probe.MAX_DLV
    assert P4.member("headers_t", "mea").stack == probe.MAX_VALUES
    order = [m.type for m in P4.members("headers_t")]
    # the wire order parse_probe walks: Req META, sr_count, SR, dlv_count, DLV, mea_total, MEA
    assert order[:13] == ["ethernet_t", "ipv4_t", "gpint_req_t", "gpint_count_t", "gpint_sr_t",
                          "gpint_sr_t", "gpint_count_t", "gpint_dlv_t", "gpint_dlv_t",
                          "gpint_count_t", "gpint_mea_t", "gpint_mea_t", "l4_ports_t"]


def test_struct_layouts_read_the_p4_fields() -> None:
    assert struct_fields(probe._ETH, ETH) == ["dstAddr", "srcAddr", "etherType"]
    assert struct_fields(probe._IP, IP) == [
        "version+ihl", "dscp+ecn", "totalLen", "identification", "flags+fragOffset", "ttl",
        "protocol", "hdrChecksum", "srcAddr", "dstAddr"]
    # Req META is request_id << 1 | request_type in one 16-bit word
    assert struct_fields(probe._U16, REQ) == ["request_id+request_type"]
    assert struct_fields(probe._U16, COUNT) == ["count"]
    # the SR entry's range word is start << 8 | count
    assert struct_fields(probe._SR, SR) == ["next_port", "mea_start+mea_count"]
    assert struct_fields(probe._DLV, DLV) == ["switch_id", "qdepth", "mea_count"]
    # the DF bit parse_probe tolerates is the top flags bit of flags+fragOffset
    flags = IP.field("flags")
    assert 0b010 << IP.field("fragOffset").bits == probe._DF and flags.bits == 3


def _frame(rng: random.Random, kind: int, hops: int, dlvs: int, per: int) -> tuple[bytes, dict]:
    """A GPINT frame from the P4 headers, with what went into it."""
    sr = [SR.sample(rng) for _ in range(hops)]
    dlv = [DLV.sample(rng, mea_count=per) for _ in range(dlvs)]
    values = [MEA.sample(rng) for _ in range(per * dlvs)]
    req = REQ.sample(rng)
    body = REQ.pack(req)
    if kind != probe.KIND_FEEDBACK:
        body += b"".join([COUNT.pack(count=len(sr)), *map(SR.pack, sr),
                          COUNT.pack(count=len(dlv)), *map(DLV.pack, dlv),
                          COUNT.pack(count=len(values)), *map(MEA.pack, values)])
    eth = ETH.sample(rng, etherType=P4.const("ETHERTYPE_IPV4"))
    ip = IP.sample(rng, dscp=kind, totalLen=IP.size + len(body), flags=0b010, fragOffset=0,
                   protocol=P4.const("IPPROTO_GPINT"))
    frame = ETH.pack(eth) + ipv4(IP, **ip) + body
    return frame, {"eth": eth, "ip": ip, "req": req, "sr": sr, "dlv": dlv, "values": values}


@pytest.mark.parametrize("kind", [probe.KIND_PROBE, probe.KIND_FEEDBACK, probe.KIND_NOTICE])
def test_frames_packed_from_the_p4_widths_parse_field_by_field(kind: int) -> None:
    rng = random.Random(kind)
    for hops, dlvs, per in [(0, 0, 0), (1, 0, 0), (3, 2, 4), (5, 4, 1)]:
        frame, put = _frame(rng, kind, hops, dlvs, per)
        p = parse_probe(frame + bytes(7))  # Ethernet padding after totalLen is ignored
        assert p.kind == kind
        assert (p.request_id, p.request_type) == (put["req"]["request_id"],
                                                  put["req"]["request_type"])
        ip, eth = put["ip"], put["eth"]
        assert p.addrs == Addresses(eth["dstAddr"], eth["srcAddr"], ip["srcAddr"],
                                    ip["dstAddr"], ip["ttl"], ip["identification"])
        if kind == probe.KIND_FEEDBACK:
            assert (p.sr, p.dlv, p.values) == ([], [], [])
            continue
        assert p.sr == [SrEntry(e["next_port"], e["mea_start"], e["mea_count"])
                        for e in put["sr"]]
        assert p.dlv == [Dlv(d["switch_id"], d["qdepth"], d["mea_count"]) for d in put["dlv"]]
        assert p.values == [v["value"] for v in put["values"]]


def _unpack(frame: bytes, headers: list[Header]) -> tuple[list[dict[str, int]], int]:
    out, at = [], 0
    for h in headers:
        out.append(h.unpack(frame, at))
        at += h.size
    return out, at


def test_encoded_probes_unpack_by_the_p4_widths() -> None:
    rng = random.Random(7)
    sr = [SrEntry(rng.getrandbits(8), rng.getrandbits(8), rng.getrandbits(8)) for _ in range(3)]
    dlv = [Dlv(rng.getrandbits(8), rng.getrandbits(8), 2) for _ in range(2)]
    values = [rng.getrandbits(32) for _ in range(4)]
    addrs = Addresses(0x0200_0000_0001, 0x0200_0000_0002, 0x0A00_0001, 0x0A00_0002, 17, 0x1234)
    p = Probe(probe.KIND_NOTICE, 0x5A5A, probe.REQ_PORT_COUNTERS, sr, dlv, values, addrs)
    frame = encode(p)
    (eth, ip, req, n_sr), at = _unpack(frame, [ETH, IP, REQ, COUNT])
    assert (eth["dstAddr"], eth["srcAddr"], eth["etherType"]) == (
        addrs.eth_dst, addrs.eth_src, P4.const("ETHERTYPE_IPV4"))
    assert (ip["version"], ip["ihl"], ip["dscp"], ip["ecn"]) == (4, 5, probe.KIND_NOTICE, 0)
    assert (ip["totalLen"], ip["identification"], ip["ttl"], ip["protocol"]) == (
        len(frame) - ETH.size, 0x1234, 17, P4.const("IPPROTO_GPINT"))
    assert (ip["srcAddr"], ip["dstAddr"], ip["fragOffset"]) == (addrs.ip_src, addrs.ip_dst, 0)
    assert (req["request_id"], req["request_type"]) == (0x5A5A, probe.REQ_PORT_COUNTERS)
    assert n_sr["count"] == len(sr)
    got_sr, at2 = _unpack(frame[at:], [SR] * len(sr))
    assert [SrEntry(e["next_port"], e["mea_start"], e["mea_count"]) for e in got_sr] == sr
    at += at2
    (n_dlv,), at2 = _unpack(frame[at:], [COUNT])
    at += at2
    got_dlv, at2 = _unpack(frame[at:], [DLV] * n_dlv["count"])
    assert [Dlv(d["switch_id"], d["qdepth"], d["mea_count"]) for d in got_dlv] == dlv
    at += at2
    (n_mea,), at2 = _unpack(frame[at:], [COUNT])
    at += at2
    got, at2 = _unpack(frame[at:], [MEA] * n_mea["count"])
    assert [v["value"] for v in got] == values
    assert at + at2 == len(frame)
    # a feedback stops after Req META
    fb = encode(Probe(probe.KIND_FEEDBACK, 3, addrs=addrs))
    (_, ip, req), at = _unpack(fb, [ETH, IP, REQ])
    assert at == len(fb) == probe.FEEDBACK_BYTES and ip["dscp"] == probe.KIND_FEEDBACK
