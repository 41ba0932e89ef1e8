"""All-pairs ping on a p4-utils network, addressed as its hosts' kernels
address frames: p4-utils fills every host's ARP table at start, so a frame
to a host in the same subnet carries that host's MAC and any other frame
the gateway's. intbed gives a gateway the MAC of the host's switch.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from dataplane.targets.sim.events import NS_PER_S, NS_PER_US
from orchestration.apps.ping import ECHO_REPLY, ECHO_REQUEST, PingResult, icmp_echo, parse_echo
from orchestration.network import FrameHandler, Network
from orchestration.p4app.spec import P4App


def next_hop_mac(app: P4App, src: str, dst_ip: str) -> str:
    """The destination MAC ``src``'s kernel puts on a frame to ``dst_ip``."""
    topo = app.topo
    me = topo.hosts[src]
    subnet = ipaddress.IPv4Interface(f"{me.ip}/{me.prefix_len}").network
    if ipaddress.IPv4Address(dst_ip) in subnet:
        for host in topo.hosts.values():
            if host.ip == dst_ip:
                return host.mac
    switch, _ = topo.host_switch(src)
    return topo.switches[switch].mac


def _host_stack(net: Network, app: P4App, host: str,
                replies: dict[tuple[str, int], float]) -> FrameHandler:
    """Answers echo requests to ``host`` (unless its kernel does) and records replies."""
    spec = app.topo.hosts[host]
    me = ipaddress.IPv4Address(spec.ip).packed

    def on_frames(frames: list[tuple[bytes, float]]) -> None:
        for packet, t in frames:
            echo = parse_echo(packet)
            if echo is None or echo[4] != me:
                continue
            kind, ident, seq, src, _, _ = echo
            if kind == ECHO_REPLY:
                replies[(host, seq)] = t
            elif kind == ECHO_REQUEST and not net.host_kernels:
                peer = str(ipaddress.IPv4Address(src))
                payload = packet[42:]
                net.send_frame(host, icmp_echo(spec.mac, next_hop_mac(app, host, peer), spec.ip,
                                               peer, ident, seq, ECHO_REPLY, payload))
    return on_frames


def ping_all(net: Network, app: P4App, spacing_s: float = 0.001,
             timeout_s: float = 1.0, *, lock: Any = None,
             run: Callable[[float], None] | None = None) -> list[PingResult]:
    """One echo per ordered pair of hosts, one at a time; a result per pair.

    ``run(seconds)`` lets the time pass (default ``net.run``); a caller whose
    own thread moves the clock passes a wait, and the ``lock`` its thread
    holds while it does, taken here while the pings are scheduled."""
    hosts = list(app.topo.hosts)
    replies: dict[tuple[str, int], float] = {}
    pairs = [(a, b) for a in hosts for b in hosts if a != b]
    with lock if lock is not None else nullcontext():
        for host in hosts:
            net.listen(host, _host_stack(net, app, host, replies))
        clock = net.clock
        start_ns = round(clock.now() * NS_PER_S)
        for seq, (a, b) in enumerate(pairs, 1):
            sa, sb = app.topo.hosts[a], app.topo.hosts[b]
            frame = icmp_echo(sa.mac, next_hop_mac(app, a, sb.ip), sa.ip, sb.ip, 1, seq)
            when = start_ns / NS_PER_S + seq * spacing_s
            clock.call_later(when - clock.now(), net.send_frame, a, frame)
    (run or net.run)((len(pairs) + 1) * spacing_s + timeout_s)
    out = []
    for seq, (a, b) in enumerate(pairs, 1):
        got = replies.get((a, seq))
        sent_ns = start_ns + round(seq * spacing_s * NS_PER_S)
        rtt = None if got is None else (round(got * NS_PER_S) - sent_ns) / NS_PER_US
        out.append(PingResult(a, b, rtt))
    return out
