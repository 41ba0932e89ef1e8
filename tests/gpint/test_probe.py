"""GPINT probe bytes against packets Scapy builds from layers declared here
after docs/gpint_format.md, round trips, build limits and every way a
received frame can be malformed."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.fields import (
    BitField,
    ByteField,
    FieldLenField,
    FieldListField,
    IntField,
    PacketListField,
    ShortField,
)
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether
from scapy.packet import Packet

from common.errors import IntbedError
from controller.gpint.probe import (
    KIND_FEEDBACK,
    KIND_NOTICE,
    KIND_PROBE,
    MAX_PROBE_BYTES,
    Addresses,
    Dlv,
    Probe,
    ProbeBuildError,
    ProbeError,
    SrEntry,
    SwitchReading,
    build_probe,
    encode,
    parse_probe,
    probe_bytes,
)

# ------------------------------------------------------------ Scapy layers


class GpintReq(Packet):
    name = "GPINT Req META"
    fields_desc = [BitField("request_id", 0, 15), BitField("request_type", 0, 1)]

    def guess_payload_class(self, payload: bytes) -> Any:
        return GpintSrStack if payload else Packet.guess_payload_class(self, payload)


class GpintSr(Packet):
    name = "GPINT SR entry"
    fields_desc = [ByteField("next_port", 0), ShortField("mea_range", 0)]

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        return b"", s


class GpintSrStack(Packet):
    name = "GPINT SR stack"
    fields_desc = [FieldLenField("sr_count", None, count_of="entries", fmt="H"),
                   PacketListField("entries", [], GpintSr,
                                   count_from=lambda pkt: pkt.sr_count)]

    def guess_payload_class(self, payload: bytes) -> Any:
        return GpintIntStack


class GpintDlv(Packet):
    name = "GPINT DLV"
    fields_desc = [ByteField("switch_id", 0), ByteField("qdepth", 0), ShortField("mea_count", 0)]

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        return b"", s


class GpintIntStack(Packet):
    name = "GPINT INT stack"
    fields_desc = [FieldLenField("dlv_count", None, count_of="dlvs", fmt="H"),
                   PacketListField("dlvs", [], GpintDlv, count_from=lambda pkt: pkt.dlv_count),
                   FieldLenField("mea_total", None, count_of="values", fmt="H"),
                   FieldListField("values", [], IntField("value", 0),
                                  count_from=lambda pkt: pkt.mea_total)]


def mac_text(value: int) -> str:
    return ":".join(f"{b:02x}" for b in value.to_bytes(6, "big"))


def ip_text(value: int) -> str:
    return ".".join(str(b) for b in value.to_bytes(4, "big"))


def scapy_frame(p: Probe) -> bytes:
    """``p`` built by Scapy: lengths, counts and checksum are Scapy's."""
    a = p.addrs
    pkt = (Ether(dst=mac_text(a.eth_dst), src=mac_text(a.eth_src))
           / IP(tos=p.kind << 2, id=a.ident, flags="DF", ttl=a.ttl, proto=254,
                src=ip_text(a.ip_src), dst=ip_text(a.ip_dst))
           / GpintReq(request_id=p.request_id, request_type=p.request_type))
    if p.kind != KIND_FEEDBACK:
        pkt = (pkt
               / GpintSrStack(entries=[GpintSr(next_port=e.next_port,
                                               mea_range=(e.mea_start << 8) | e.mea_count)
                                       for e in p.sr])
               / GpintIntStack(dlvs=[GpintDlv(switch_id=d.switch_id, qdepth=d.qdepth,
                                              mea_count=d.mea_count) for d in p.dlv],
                               values=list(p.values)))
    return bytes(pkt)


def scapy_dissect(frame: bytes) -> dict[str, Any]:
    """The fields Scapy reads from ``frame`` (no global layer bindings)."""
    eth = Ether(frame)
    ip = eth[IP]
    req = GpintReq(bytes(ip.payload))
    out: dict[str, Any] = {"kind": ip.tos >> 2, "len": ip.len, "chksum": ip.chksum,
                           "proto": ip.proto, "request_id": req.request_id,
                           "request_type": req.request_type}
    if GpintSrStack in req:
        sr = req[GpintSrStack]
        ints = req[GpintIntStack]
        out["sr"] = [(e.next_port, e.mea_range >> 8, e.mea_range & 0xFF) for e in sr.entries]
        out["dlv"] = [(d.switch_id, d.qdepth, d.mea_count) for d in ints.dlvs]
        out["values"] = list(ints.values)
    return out


# -------------------------------------------------------------- strategies

u8 = st.integers(0, 0xFF)


@st.composite
def addresses(draw: st.DrawFn) -> Addresses:
    return Addresses(draw(st.integers(0, (1 << 48) - 1)), draw(st.integers(0, (1 << 48) - 1)),
                     draw(st.integers(0, (1 << 32) - 1)), draw(st.integers(0, (1 << 32) - 1)),
                     draw(u8), draw(st.integers(0, 0xFFFF)))


@st.composite
def probes(draw: st.DrawFn) -> Probe:
    kind = draw(st.sampled_from([KIND_PROBE, KIND_FEEDBACK, KIND_NOTICE]))
    rid = draw(st.integers(0, (1 << 15) - 1))
    rtype = draw(st.integers(0, 1))
    addrs = draw(addresses())
    if kind == KIND_FEEDBACK:
        return Probe(kind, rid, rtype, addrs=addrs)
    # Sizes stay small here (Scapy is slow); the limits have tests of their own.
    sr = [SrEntry(*t) for t in draw(st.lists(st.tuples(u8, u8, u8), max_size=24))]
    values = draw(st.lists(st.integers(0, (1 << 32) - 1), max_size=32))
    m = draw(st.integers(1 if values else 0, 24))
    cuts = sorted(draw(st.lists(st.integers(0, len(values)), min_size=max(m - 1, 0),
                                max_size=max(m - 1, 0))))
    bounds = [0, *cuts, len(values)]
    dlv = [Dlv(draw(u8), draw(u8), bounds[j + 1] - bounds[j]) for j in range(m)]
    return Probe(kind, rid, rtype, sr, dlv, values, addrs)


# ------------------------------------------------------------------ builds

HOPS = [(2, 0, 3), (7, 16, 0), (0, 4, 2)]


def test_build_matches_scapy() -> None:
    frame = build_probe(5, HOPS, request_type=1)
    want = Probe(KIND_PROBE, 5, 1, [SrEntry(*h) for h in HOPS])
    assert frame == scapy_frame(want)
    fields = scapy_dissect(frame)
    assert fields["kind"] == 0x17 and fields["proto"] == 254
    assert fields["len"] == len(frame) - 14 == 20 + 2 + 2 + 3 * 3 + 2 + 2
    assert (fields["request_id"], fields["request_type"]) == (5, 1)
    assert fields["sr"] == HOPS and fields["dlv"] == [] and fields["values"] == []


def test_scapy_notice_parses_grouped_per_switch() -> None:
    p = Probe(KIND_NOTICE, 77, 0, [SrEntry(3, 0, 1)],
              [Dlv(1, 4, 2), Dlv(2, 255, 0), Dlv(9, 0, 3)], [10, 11, 20, 21, 22])
    got = parse_probe(scapy_frame(p))
    assert got == p
    assert got.readings() == [SwitchReading(1, 4, (10, 11)), SwitchReading(2, 255, ()),
                              SwitchReading(9, 0, (20, 21, 22))]
    # A 6-switch path: one entry left means switch 4 sent it; DLVs from 2 on.
    assert (got.first_position(6), got.last_position(6)) == (2, 4)


def test_feedback_is_req_meta_only() -> None:
    frame = encode(Probe(KIND_FEEDBACK, 300, 1))
    assert len(frame) == 36
    assert frame == scapy_frame(Probe(KIND_FEEDBACK, 300, 1))
    assert parse_probe(frame + bytes(24)) == Probe(KIND_FEEDBACK, 300, 1)  # Ethernet padding


@settings(max_examples=150, deadline=None)
@given(probes())
def test_encode_equals_scapy(p: Probe) -> None:
    assert encode(p) == scapy_frame(p)


@settings(max_examples=150, deadline=None)
@given(probes())
def test_round_trip(p: Probe) -> None:
    frame = encode(p)
    assert parse_probe(frame) == p
    assert scapy_dissect(frame)["kind"] == p.kind


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(u8, u8, st.integers(0, 3)), min_size=1, max_size=40),
       st.integers(0, (1 << 15) - 1))
def test_build_round_trip(hops: list[tuple[int, int, int]], rid: int) -> None:
    p = parse_probe(build_probe(rid, hops))
    assert (p.kind, p.request_id, p.sr, p.dlv, p.values) == (KIND_PROBE, rid, hops, [], [])


# ------------------------------------------------------------------ limits

def test_limits_at_the_edge_build() -> None:
    hops = [(1, 0, 0)] * 199 + [(0, 0, 128)]
    assert probe_bytes(200, 128) == 42 + 4 * 200 + 4 * 128 <= MAX_PROBE_BYTES
    assert parse_probe(build_probe(1, hops)).sr[-1] == (0, 0, 128)
    # The same probe filled in by all 200 switches, as the monitor gets it.
    full = Probe(KIND_PROBE, 1, 0, [], [Dlv(j % 256, 0, 0) for j in range(199)] + [Dlv(7, 0, 128)],
                 list(range(128)))
    frame = encode(full)
    assert len(frame) == probe_bytes(200, 128)
    assert frame == scapy_frame(full) and parse_probe(frame) == full


@pytest.mark.parametrize(("hops", "words"), [
    ([(1, 0, 0)] * 201, ["201 hops", "split the path"]),
    ([(1, 0, 100), (0, 0, 29)], ["129 values", "shorten the MEA ranges"]),
    ([], ["at least one hop"]),
])
def test_build_refuses_over_limits(hops: list[tuple[int, int, int]], words: list[str]) -> None:
    with pytest.raises(ProbeBuildError) as info:
        build_probe(1, hops)
    assert isinstance(info.value, IntbedError)
    for w in words:
        assert w in str(info.value)


def test_build_refuses_over_byte_limit() -> None:
    hops = [(1, 0, 2)] * 40  # 42 + 160 + 320 = 522 bytes at the monitor
    assert probe_bytes(40, 80) == 522
    build_probe(1, hops, max_bytes=522)
    with pytest.raises(ProbeBuildError, match=r"522 bytes.*521-byte limit.*40 hops.*80 values"):
        build_probe(1, hops, max_bytes=521)


@pytest.mark.parametrize(("probe", "word"), [
    (Probe(KIND_PROBE, 1 << 15), "request_id"),
    (Probe(KIND_PROBE, 1, 2), "request_type"),
    (Probe(KIND_PROBE, 1, 0, [SrEntry(256)]), "next_port"),
    (Probe(KIND_PROBE, 1, 0, [SrEntry(1, 256)]), "mea_start"),
    (Probe(KIND_NOTICE, 1, 0, [], [Dlv(256, 0, 0)]), "switch_id"),
    (Probe(KIND_NOTICE, 1, 0, [], [Dlv(1, 0, 1)], []), "count 1 values"),
    (Probe(KIND_PROBE, 1, 0, [], [Dlv(1, 0, 1)], [1 << 32]), "32 bits"),
    (Probe(KIND_FEEDBACK, 1, 0, [SrEntry(1)]), "Req META only"),
    (Probe(0x18, 1), "no GPINT kind"),
])
def test_encode_refuses_bad_fields(probe: Probe, word: str) -> None:
    with pytest.raises(ProbeBuildError, match=word):
        encode(probe)


# --------------------------------------------------------------- malformed

def _with_ip(frame: bytes, **changes: int) -> bytes:
    """``frame`` with IPv4 fields changed and the checksum made right again."""
    ip = bytearray(frame[14:34])
    at = {"tos": (1, "B"), "total_len": (2, "H"), "proto": (9, "B"), "ver_ihl": (0, "B"),
          "frag": (6, "H")}
    for name, value in changes.items():
        off, fmt = at[name]
        struct.pack_into("!" + fmt, ip, off, value)
    struct.pack_into("!H", ip, 10, 0)
    words = sum(struct.unpack("!10H", ip))
    while words >> 16:
        words = (words & 0xFFFF) + (words >> 16)
    struct.pack_into("!H", ip, 10, ~words & 0xFFFF)
    return frame[:14] + bytes(ip) + frame[34:]


GOOD = encode(Probe(KIND_NOTICE, 9, 0, [SrEntry(1, 0, 1)], [Dlv(1, 0, 2)], [5, 6]))


def _set_u16(frame: bytes, off: int, value: int) -> bytes:
    return frame[:off] + struct.pack("!H", value) + frame[off + 2:]


# offsets in GOOD: Req META 34, sr_count 36, SR 38, dlv_count 41, DLV 43, mea_total 47
MALFORMED = [
    ("short", GOOD[:35]),
    ("short", GOOD[:-1]),
    ("not-ipv4", GOOD[:12] + b"\x86\xdd" + GOOD[14:]),
    ("ipv4-header", _with_ip(GOOD, ver_ihl=0x65)),
    ("ipv4-header", _with_ip(GOOD, ver_ihl=0x44)),
    ("ipv4-header", _with_ip(GOOD, ver_ihl=0x46)),
    ("ipv4-fragment", _with_ip(GOOD, frag=0x2000)),
    ("ipv4-fragment", _with_ip(GOOD, frag=0x4001)),
    ("ipv4-checksum", GOOD[:24] + bytes([GOOD[24] ^ 1]) + GOOD[25:]),
    ("not-gpint", _with_ip(GOOD, proto=253)),
    ("dscp", _with_ip(GOOD, tos=0x18 << 2)),
    ("dscp", _with_ip(GOOD, tos=0)),
    ("length", _with_ip(GOOD[:35], total_len=21) + b"\x00"),
    ("length", _with_ip(GOOD, total_len=len(GOOD) - 14 - 1)),
    ("length", _with_ip(GOOD + b"\x00\x00", total_len=len(GOOD) - 14 + 2)),
    ("length", _set_u16(GOOD, 36, 7)),
    ("length", _set_u16(GOOD, 41, 3)),
    ("length", _set_u16(GOOD, 47, 3)),
    ("length", _set_u16(GOOD, 47, 1)),
    ("length", _with_ip(encode(Probe(KIND_FEEDBACK, 1)) + b"\x00\x00", total_len=24)),
    ("length", _with_ip(GOOD[:36], total_len=22, tos=KIND_PROBE << 2)),
    ("limits", _set_u16(GOOD, 36, 201)),
    ("limits", _set_u16(GOOD, 47, 129)),
    ("mea-total", GOOD[:43] + struct.pack("!BBH", 1, 0, 1) + GOOD[47:]),
]


@pytest.mark.parametrize(("kind", "frame"), MALFORMED,
                         ids=[f"{k}-{i}" for i, (k, _) in enumerate(MALFORMED)])
def test_malformed(kind: str, frame: bytes) -> None:
    with pytest.raises(ProbeError) as info:
        parse_probe(frame)
    assert info.value.kind == kind
    assert isinstance(info.value, IntbedError)


def test_dlv_count_over_limit() -> None:
    frame = encode(Probe(KIND_PROBE, 1, 0, [], [Dlv(1, 0, 0)] * 200, []))
    parse_probe(frame)
    with pytest.raises(ProbeError) as info:
        parse_probe(_set_u16(frame, 38, 201))
    assert info.value.kind == "limits"


@settings(max_examples=200, deadline=None)
@given(probes(), st.data())
def test_damage_is_only_ever_a_probe_error(p: Probe, data: st.DataObject) -> None:
    frame = bytearray(encode(p))
    cut = data.draw(st.integers(0, len(frame)))
    flips = data.draw(st.lists(st.tuples(st.integers(0, len(frame) - 1), u8), max_size=4))
    for at, byte in flips:
        frame[at] = byte
    try:
        parse_probe(bytes(frame[:cut]))
    except ProbeError:
        pass
