"""Packet templates: patched bytes equal Scapy's build, field by field."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.utils import checksum

from traffic.errors import TrafficError
from traffic.packets import FlowSpec, PacketFactory, payload_bytes, scapy_packet

MAC_A = "02:00:00:00:00:01"
MAC_B = "02:00:00:00:00:02"


def flow(proto: str = "udp", payload: int = 100, **kw: object) -> FlowSpec:
    args: dict[str, object] = dict(
        src_mac=MAC_A,
        dst_mac=MAC_B,
        src_ip="10.0.0.1",
        dst_ip="10.0.0.2",
        proto=proto,
        sport=1234,
        dport=5678,
        payload_size=payload,
    )
    args.update(kw)
    return FlowSpec(**args)  # type: ignore[arg-type]


def test_golden_udp_bytes() -> None:
    f = flow("udp", 12, dscp=46)
    got = PacketFactory(f).packet(0x0102030405060708)
    assert got == bytes.fromhex(
        "020000000002020000000001080045b800280708000040115f030a0000010a000002"
        "04d2162e0014ae9b010203040506070808090a0b"
    )


def test_golden_tcp_bytes() -> None:
    got = PacketFactory(flow("tcp", 8)).packet(3)
    # seq 3 * 8 payload bytes = 24; flags PSH|ACK; window 8192 (Scapy's default).
    assert got == bytes.fromhex(
        "02000000000202000000000108004500003000030000400666c30a0000010a000002"
        "04d2162e00000018000000005018200060a700000000000000000003"
    )


@pytest.mark.parametrize("proto", ["udp", "tcp"])
def test_checksums_verify(proto: str) -> None:
    pkt = PacketFactory(flow(proto, 33)).packet(987654321)
    assert checksum(pkt[14:34]) == 0  # Scapy's, independent of the code under test
    seg = pkt[34:]
    pseudo = pkt[26:34] + bytes((0, 17 if proto == "udp" else 6)) + struct.pack("!H", len(seg))
    assert checksum(pseudo + seg) == 0


@pytest.mark.parametrize("proto", ["udp", "tcp"])
@pytest.mark.parametrize("udp_checksum", [True, False])
@pytest.mark.parametrize("payload", [8, 9, 64, 1458])
def test_equals_scapy(proto: str, udp_checksum: bool, payload: int) -> None:
    f = flow(proto, payload, dscp=10, ttl=17, udp_checksum=udp_checksum)
    factory = PacketFactory(f)
    for seq in (0, 1, 0xFFFF, 0x10000, 2**32 + 5, 2**63, 2**64 - 1):
        for ports in ((None, None), (0, 0), (65535, 1), (80, 443)):
            assert factory.packet(seq, *ports) == bytes(scapy_packet(f, seq, *ports))


def test_udp_zero_checksum_when_disabled() -> None:
    pkt = PacketFactory(flow("udp", 20, udp_checksum=False)).packet(5)
    assert pkt[40:42] == b"\0\0"


@settings(max_examples=150, deadline=None)
@given(
    proto=st.sampled_from(["udp", "tcp"]),
    payload=st.integers(8, 300),
    seq=st.integers(0, 2**64 - 1),
    sport=st.integers(0, 65535),
    dport=st.integers(0, 65535),
    dscp=st.integers(0, 63),
    ttl=st.integers(0, 255),
    last_octet=st.integers(0, 255),
)
def test_equals_scapy_property(
    proto: str,
    payload: int,
    seq: int,
    sport: int,
    dport: int,
    dscp: int,
    ttl: int,
    last_octet: int,
) -> None:
    f = flow(proto, payload, dscp=dscp, ttl=ttl, dst_ip=f"192.168.7.{last_octet}")
    assert PacketFactory(f).packet(seq, sport, dport) == bytes(scapy_packet(f, seq, sport, dport))


def test_payload_carries_seq_then_pattern() -> None:
    pkt = PacketFactory(flow("udp", 20)).packet(258)
    assert pkt[42:] == bytes.fromhex("0000000000000102") + bytes(range(8, 20))
    assert payload_bytes(20, 258) == pkt[42:]
    assert pkt[18:20] == b"\x01\x02"  # IP id = seq mod 2^16


def test_sizes_and_key() -> None:
    u, t = flow("udp", 100), flow("tcp", 100)
    assert (u.frame_size, t.frame_size) == (142, 154)
    assert len(PacketFactory(u).packet(0)) == 142
    assert len(PacketFactory(t).packet(0)) == 154
    assert u.with_frame_size(64).payload_size == 22
    assert tuple(u.key) == ("10.0.0.1", "10.0.0.2", 17, 1234, 5678)
    assert str(t.key) == "tcp 10.0.0.1:1234 > 10.0.0.2:5678"


@pytest.mark.parametrize(
    ("kw", "fragment"),
    [
        ({"proto": "icmp"}, "protocol 'icmp'"),
        ({"src_mac": "02:00:00:00:00"}, "source MAC"),
        ({"dst_ip": "10.0.0.256"}, "destination IP"),
        ({"sport": 70000}, "source port 70000 is outside 0..65535"),
        ({"dscp": 64}, "DSCP"),
        ({"payload_size": 7}, "payload size 7 is outside 8..65507"),
        ({"payload_size": 65508}, "payload size"),
    ],
)
def test_bad_flow_is_rejected(kw: dict[str, object], fragment: str) -> None:
    with pytest.raises(TrafficError, match=fragment) as info:
        flow(**kw)  # type: ignore[arg-type]
    assert str(info.value).startswith("error: ")
