"""ICMP echo between the hosts of any network: all-pairs reachability and RTTs."""

from __future__ import annotations

import struct
from dataclasses import dataclass

import networkx as nx

from common.checksum import internet_checksum
from dataplane.targets.sim.events import NS_PER_S, NS_PER_US
from orchestration.network import FrameHandler, Network
from topologies.model import Topology

ETH = struct.Struct("!6s6sH")
IPV4 = struct.Struct("!BBHHHBBH4s4s")
ICMP = struct.Struct("!BBHHH")
ECHO_REQUEST, ECHO_REPLY = 8, 0
PAYLOAD = bytes(range(56))


def _mac(text: str) -> bytes:
    return bytes.fromhex(text.replace(":", ""))


def _ip(text: str) -> bytes:
    return bytes(int(x) for x in text.split("."))


def icmp_echo(src_mac: str, dst_mac: str, src_ip: str, dst_ip: str, ident: int, seq: int,
              kind: int = ECHO_REQUEST, payload: bytes = PAYLOAD) -> bytes:
    icmp = ICMP.pack(kind, 0, 0, ident, seq) + payload
    icmp = icmp[:2] + internet_checksum(icmp).to_bytes(2, "big") + icmp[4:]
    total = IPV4.size + len(icmp)
    hdr = IPV4.pack(0x45, 0, total, seq & 0xFFFF, 0x4000, 64, 1, 0, _ip(src_ip), _ip(dst_ip))
    hdr = hdr[:10] + internet_checksum(hdr).to_bytes(2, "big") + hdr[12:]
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


def echo_responder(net: Network, host: str) -> FrameHandler:
    """A handler that answers echo requests addressed to ``host``, as its
    kernel would (``Network.listen`` on targets whose hosts have none)."""
    spec = net.topo.hosts[host]
    me = _ip(spec.ip)

    def handler(frames: list[tuple[bytes, float]]) -> None:
        for packet, _ in frames:
            echo = parse_echo(packet)
            if echo is None or echo[0] != ECHO_REQUEST or echo[4] != me:
                continue
            _, ident, seq, src, _, src_mac = echo
            payload = packet[ETH.size + IPV4.size + ICMP.size:]
            src_ip = ".".join(str(b) for b in src)
            net.send_frame(host, icmp_echo(spec.mac, src_mac.hex(":"), spec.ip, src_ip, ident,
                                           seq, ECHO_REPLY, payload))

    return handler


@dataclass
class PingResult:
    src: str
    dst: str
    rtt_us: float | None  # None: lost


def all_pairs(net: Network, spacing_s: float = 0.001, timeout_s: float = 1.0
              ) -> list[PingResult]:
    """Ping every ordered pair of hosts once, one ping at a time, so no two
    pings share a queue. Returns one result per pair. Hosts without a kernel
    of their own (``net.host_kernels`` false) get an echo responder."""
    hosts = list(net.topo.hosts)
    replies: dict[tuple[str, int], float] = {}

    def listener(name: str) -> FrameHandler:
        def on_frames(frames: list[tuple[bytes, float]]) -> None:
            for packet, t in frames:
                echo = parse_echo(packet)
                if echo is not None and echo[0] == ECHO_REPLY:
                    replies[(name, echo[2])] = t
        return on_frames

    for h in hosts:
        if not net.host_kernels:
            net.listen(h, echo_responder(net, h))
        net.listen(h, listener(h))
    clock = net.clock
    start_ns = round(clock.now() * NS_PER_S)
    step_ns = round(spacing_s * NS_PER_S)
    sent: dict[tuple[str, int], tuple[str, int]] = {}
    seq = 0
    for a in hosts:
        for b in hosts:
            if a == b:
                continue
            seq += 1
            when_ns = start_ns + seq * step_ns
            sa, sb = net.topo.hosts[a], net.topo.hosts[b]
            pkt = icmp_echo(sa.mac, "00:00:00:00:00:00", sa.ip, sb.ip, 1, seq)
            clock.call_later(when_ns / NS_PER_S - clock.now(), net.send_frame, a, pkt)
            sent[(a, seq)] = (b, when_ns)
    net.run((seq + 1) * spacing_s + timeout_s)
    results: dict[tuple[str, str], PingResult] = {}
    for (src, s), (dst, when_ns) in sent.items():
        got = replies.get((src, s))
        rtt = None if got is None else (round(got * NS_PER_S) - when_ns) / NS_PER_US
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
