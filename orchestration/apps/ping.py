"""ICMP echo between simulated hosts: all-pairs reachability and RTTs."""

from __future__ import annotations

import struct
from dataclasses import dataclass

import networkx as nx

from dataplane.targets.sim.events import NS_PER_S, NS_PER_US
from dataplane.targets.sim.network import SimHost
from topologies.model import Topology

ETH = struct.Struct("!6s6sH")
IPV4 = struct.Struct("!BBHHHBBH4s4s")
ICMP = struct.Struct("!BBHHH")
ECHO_REQUEST, ECHO_REPLY = 8, 0
PAYLOAD = bytes(range(56))


def _csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _mac(text: str) -> bytes:
    return bytes.fromhex(text.replace(":", ""))


def _ip(text: str) -> bytes:
    return bytes(int(x) for x in text.split("."))


def icmp_echo(src_mac: str, dst_mac: str, src_ip: str, dst_ip: str, ident: int, seq: int,
              kind: int = ECHO_REQUEST, payload: bytes = PAYLOAD) -> bytes:
    icmp = ICMP.pack(kind, 0, 0, ident, seq) + payload
    icmp = icmp[:2] + _csum(icmp).to_bytes(2, "big") + icmp[4:]
    total = IPV4.size + len(icmp)
    hdr = IPV4.pack(0x45, 0, total, seq & 0xFFFF, 0x4000, 64, 1, 0, _ip(src_ip), _ip(dst_ip))
    hdr = hdr[:10] + _csum(hdr).to_bytes(2, "big") + hdr[12:]
    return ETH.pack(_mac(dst_mac), _mac(src_mac), 0x0800) + hdr + icmp


def parse_echo(packet: bytes) -> tuple[int, int, int, bytes, bytes, bytes] | None:
    """(kind, ident, seq, src_ip, dst_ip, src_mac) of an ICMP echo, or None."""
    if len(packet) < ETH.size + IPV4.size + ICMP.size:
        return None
    dst_mac, src_mac, etype = ETH.unpack_from(packet)
    if etype != 0x0800:
        return None
    vihl, _, _, _, _, _, proto, _, src, dst = IPV4.unpack_from(packet, ETH.size)
    if proto != 1 or vihl != 0x45:
        return None
    kind, _, _, ident, seq = ICMP.unpack_from(packet, ETH.size + IPV4.size)
    if kind not in (ECHO_REQUEST, ECHO_REPLY):
        return None
    return kind, ident, seq, src, dst, src_mac


def answer_pings(host: SimHost) -> None:
    """Make ``host`` answer echo requests addressed to it."""
    me = _ip(host.ip)

    def handler(h: SimHost, packet: bytes, now_ns: int) -> None:
        echo = parse_echo(packet)
        if echo is None or echo[0] != ECHO_REQUEST or echo[4] != me:
            return
        _, ident, seq, src, _, src_mac = echo
        payload = packet[ETH.size + IPV4.size + ICMP.size:]
        src_ip = ".".join(str(b) for b in src)
        h.send(icmp_echo(h.mac, src_mac.hex(":"), h.ip, src_ip, ident, seq, ECHO_REPLY,
                         payload))

    host.handlers.append(handler)


@dataclass
class PingResult:
    src: str
    dst: str
    rtt_us: float | None  # None: lost


def all_pairs(net, spacing_s: float = 0.001, timeout_s: float = 1.0) -> list[PingResult]:
    """Ping every ordered pair of hosts once, one ping at a time, so no two
    pings share a queue. Returns one result per pair."""
    hosts = list(net.hosts.values())
    for h in hosts:
        answer_pings(h)
    sent: dict[tuple[str, int], tuple[str, int]] = {}
    results: dict[tuple[str, str], PingResult] = {}
    replies: dict[tuple[str, int], int] = {}

    def listener(h: SimHost, packet: bytes, now_ns: int) -> None:
        echo = parse_echo(packet)
        if echo is not None and echo[0] == ECHO_REPLY:
            replies[(h.name, echo[2])] = now_ns

    for h in hosts:
        h.handlers.append(listener)
    start = net.sim.now_ns
    seq = 0
    for a in hosts:
        for b in hosts:
            if a is b:
                continue
            seq += 1
            when = start + seq * round(spacing_s * NS_PER_S)
            pkt = icmp_echo(a.mac, "00:00:00:00:00:00", a.ip, b.ip, 1, seq)
            net.sim.at_ns(when, a.send, pkt)
            sent[(a.name, seq)] = (b.name, when)
    net.run((seq + 1) * spacing_s + timeout_s)
    for (src, s), (dst, when) in sent.items():
        got = replies.get((src, s))
        rtt = None if got is None else (got - when) / NS_PER_US
        results[(src, dst)] = PingResult(src, dst, rtt)
    return list(results.values())


def expected_rtt_us(topo: Topology, src: str, dst: str, size: int) -> float:
    """Round-trip time on an idle network: each link on a shortest path
    adds serialization plus propagation, in both directions."""
    graph = nx.Graph()
    for link in topo.links:
        graph.add_edge(link.a, link.b, link=link)
    path = nx.shortest_path(graph, src, dst)
    total_ns = 0
    for u, v in zip(path, path[1:]):
        link = graph.edges[u, v]["link"]
        bw = round(link.bandwidth_mbps * 1_000_000)
        total_ns += size * 8 * NS_PER_S // bw + round(link.delay_us * NS_PER_US)
    return 2 * total_ns / NS_PER_US
