"""Ethernet, IPv4 and the L4 ports as every program in p4src declares them,
against the Python code that builds or reads them for any program:
traffic/packets.py (hosts' packets), traffic/receiver.py (what hosts get),
orchestration/apps/ping.py (ICMP echo; ICMP itself, which no program
parses, against Scapy) and sinks/intcollector/replay.py (the UDP
payload of a captured report). Layouts and constants, then frames packed
from the P4 field widths alone."""

from __future__ import annotations

import random

import pytest
from p4headers import Header, ipv4, programs, struct_fields
from p4headers import program as p4program
from scapy.layers.inet import ICMP, IP
from scapy.layers.l2 import Ether

from orchestration.apps import ping
from sinks.intcollector import replay
from traffic import packets, receiver
from traffic.packets import FlowSpec, PacketFactory

P4 = p4program("l3_forward")  # the forwarding every program shares
ETH, IP4, PORTS = P4.header("ethernet_t"), P4.header("ipv4_t"), P4.header("l4_ports_t")
UDP = p4program("int_md").header("udp_t")
COPIES = ("ethernet_t", "ipv4_t", "l4_ports_t", "udp_t", "tcp_ports_t")
"""Headers every program declares its own copy of, all checked against one."""

COVERS = {(h.file, h.name) for p in programs() for h in p.headers.values() if h.name in COPIES}
"""The P4 headers this module checks a Python parser against (test_formats_coverage)."""


def _same(h: Header) -> tuple[tuple[str, int], ...]:
    """A header's layout with ipv4_t's TOS byte as one field, whether split
    into DSCP and ECN or not, and udp_t's length under one name (the
    programs differ only there)."""
    if h.name == "udp_t":
        return tuple(("len" if name == "length" else name, bits) for name, bits in h.layout)
    if h.name == "ipv4_t" and "dscp" in h.names:
        out = []
        for name, bits in h.layout:
            if name == "dscp":
                out.append(("diffserv", 8))
            elif name != "ecn":
                out.append((name, bits))
        assert h.field("ecn").offset == h.field("dscp").end and h.field("dscp").bits == 6
        return tuple(out)
    return h.layout


@pytest.mark.parametrize("name", COPIES)
def test_every_programs_copy_is_the_same_layout(name: str) -> None:
    copies = {p.name: _same(p.headers[name]) for p in programs() if name in p.headers}
    want = _same(PORTS if name == "tcp_ports_t" else
                 UDP if name == "udp_t" else P4.header(name))
    assert copies and all(c == want for c in copies.values()), copies


def test_traffic_sizes_and_structs_are_the_p4_headers() -> None:
    assert ETH.size == packets.ETH_LEN
    assert IP4.size == packets.IPV4_LEN
    assert UDP.size == packets.UDP_LEN
    assert P4.const("ETHERTYPE_IPV4") == packets.ETHERTYPE_IPV4
    assert {"udp": P4.const("IP_PROTO_UDP"), "tcp": P4.const("IP_PROTO_TCP")} == \
        packets.PROTO_NUMBERS
    assert IP4.field("totalLen").mask == packets.MAX_IP_LEN
    assert struct_fields(packets._IPV4, IP4) == [
        "version+ihl", "diffserv", "totalLen", "identification", "flags+fragOffset", "ttl",
        "protocol", "hdrChecksum", "srcAddr", "dstAddr"]
    assert struct_fields(packets._UDP, UDP) == ["srcPort", "dstPort", "len", "checksum"]
    assert struct_fields(packets._HH, PORTS) == ["srcPort", "dstPort"]


@pytest.mark.parametrize("proto", ["udp", "tcp"])
def test_traffic_packets_unpack_by_the_p4_widths(proto: str) -> None:
    rng = random.Random(len(proto))
    for _ in range(10):
        flow = FlowSpec("02:00:00:00:00:01", "02:00:00:00:00:02",
                        f"10.0.{rng.randrange(256)}.1", f"10.1.0.{rng.randrange(256)}", proto,
                        rng.getrandbits(16), rng.getrandbits(16), rng.randrange(8, 200),
                        dscp=rng.getrandbits(6), ttl=rng.getrandbits(8))
        seq = rng.getrandbits(40)
        frame = PacketFactory(flow).packet(seq)
        eth, ip = ETH.unpack(frame), IP4.unpack(frame, ETH.size)
        assert eth == {"dstAddr": 0x02_00_00_00_00_02, "srcAddr": 0x02_00_00_00_00_01,
                       "etherType": P4.const("ETHERTYPE_IPV4")}
        assert (ip["version"], ip["ihl"], ip["diffserv"], ip["ttl"], ip["protocol"]) == (
            4, 5, flow.dscp << 2, flow.ttl, packets.PROTO_NUMBERS[proto])
        assert (ip["totalLen"], ip["identification"]) == (len(frame) - ETH.size, seq & 0xFFFF)
        assert ip["srcAddr"].to_bytes(4, "big") == bytes(map(int, flow.src_ip.split(".")))
        assert ipv4(IP4, **ip) == frame[ETH.size:ETH.size + IP4.size]  # checksum patched right
        assert PORTS.unpack(frame, ETH.size + IP4.size) == {"srcPort": flow.sport,
                                                            "dstPort": flow.dport}
        # the receiver's view of the same frame
        key, got_seq, _ = receiver.parse_frame(frame)
        assert (key, got_seq) == (flow.key, seq)


def test_receiver_reads_frames_packed_from_the_p4_widths() -> None:
    rng = random.Random(4)
    for proto in (P4.const("IP_PROTO_UDP"), P4.const("IP_PROTO_TCP")):
        ports = PORTS.sample(rng)
        seq = rng.getrandbits(64)
        if proto == P4.const("IP_PROTO_UDP"):
            l4 = PORTS.pack(ports) + (16).to_bytes(2, "big") + bytes(2)
        else:  # data offset 5 words, byte 12 of TCP
            l4 = PORTS.pack(ports) + bytes(8) + bytes([5 << 4]) + bytes(7)
        payload = seq.to_bytes(8, "big")
        ip = IP4.sample(rng, protocol=proto, flags=0, fragOffset=0,
                        totalLen=IP4.size + len(l4) + len(payload))
        frame = ETH.pack(etherType=P4.const("ETHERTYPE_IPV4")) + ipv4(IP4, **ip) + l4 + payload
        key, got_seq, got_payload = receiver.parse_frame(frame)
        assert key is not None
        assert (key.proto, key.sport, key.dport, got_seq, got_payload) == (
            proto, ports["srcPort"], ports["dstPort"], seq, payload)
        assert key.src_ip == ".".join(str(b) for b in ip["srcAddr"].to_bytes(4, "big"))


def test_ping_structs_are_the_p4_headers() -> None:
    assert struct_fields(ping.ETH, ETH) == ["dstAddr", "srcAddr", "etherType"]
    assert struct_fields(ping.IPV4, IP4) == [
        "version+ihl", "diffserv", "totalLen", "identification", "flags+fragOffset", "ttl",
        "protocol", "hdrChecksum", "srcAddr", "dstAddr"]


def test_ping_echo_against_scapy_and_the_p4_widths() -> None:
    frame = ping.icmp_echo("02:00:00:00:00:01", "02:00:00:00:00:02", "10.0.0.1", "10.0.1.2",
                           ident=0x1234, seq=0x0102)
    ip = IP4.unpack(frame, ETH.size)
    assert (ip["version"], ip["ihl"], ip["protocol"], ip["identification"]) == (4, 5, 1, 0x0102)
    assert ipv4(IP4, **ip) == frame[ETH.size:ETH.size + IP4.size]
    pkt = Ether(frame)
    assert pkt[IP].chksum == IP(bytes(pkt[IP])).chksum  # Scapy agrees on the checksum
    icmp = pkt[ICMP]
    assert (icmp.type, icmp.code, icmp.id, icmp.seq) == (8, 0, 0x1234, 0x0102)
    rebuilt = ICMP(bytes(icmp))
    del rebuilt.chksum
    assert ICMP(bytes(rebuilt)).chksum == icmp.chksum
    assert ping.parse_echo(frame) == (8, 0x1234, 0x0102, bytes([10, 0, 0, 1]),
                                      bytes([10, 0, 1, 2]), bytes.fromhex("020000000001"))
    # an echo Scapy builds parses too
    scapy_reply = bytes(Ether(src="02:00:00:00:00:02", dst="02:00:00:00:00:01")
                        / IP(src="10.0.1.2", dst="10.0.0.1") / ICMP(type=0, id=7, seq=9))
    assert ping.parse_echo(scapy_reply)[:3] == (0, 7, 9)


def test_replay_reads_the_udp_payload_where_the_p4_headers_put_it() -> None:
    rng = random.Random(6)
    payload = bytes(rng.getrandbits(8) for _ in range(23))
    udp = UDP.sample(rng, dstPort=32766, len=UDP.size + len(payload))
    ip = IP4.sample(rng, protocol=P4.const("IP_PROTO_UDP"), flags=0b010, fragOffset=0,
                    totalLen=IP4.size + udp["len"])
    frame = ETH.pack(etherType=P4.const("ETHERTYPE_IPV4")) + ipv4(IP4, **ip) + UDP.pack(udp) \
        + payload + bytes(5)  # Ethernet padding is not payload
    assert replay.udp_payload(frame, replay.LINKTYPE_ETHERNET, 32766) == payload
    assert replay.udp_payload(frame, replay.LINKTYPE_ETHERNET, 32767) == replay.OTHER_PORT
    frag = ETH.pack(etherType=0x0800) + ipv4(IP4, **(ip | {"fragOffset": 1})) + UDP.pack(udp)
    assert replay.udp_payload(frag + payload, replay.LINKTYPE_ETHERNET, 32766) == replay.FRAGMENT
