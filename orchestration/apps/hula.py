"""HULA probing on the sim target, and the packet-loss run of INT-label's
figure 14 (background loss under a rate limit, versus the probing interval).

HULA probes originate at the ToR switches themselves (Katta et al., SOSR
2016). A v1model switch cannot start packets on its own, so the first host
of each ToR stands in: it sends the ToR's probe frame, addressed to the ToR,
and the ToR's ``probe_replicate`` entry for that host port floods it up.
From the ToR on, probes cross exactly the links HULA's would; only the
server->ToR link carries them in addition. That link has no loss and no
switch queue (the host's NIC queue is unbounded), so it never drops
background packets; background loss is counted end to end, sent versus
received.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from common.seeds import derive_seed, stream
from controller.hula import (
    PortSets,
    install_probe_groups,
    probe_port_sets,
    switch_tiers,
    tor_ids,
)
from dataplane.targets.sim.events import NS_PER_S
from orchestration.apps.traffic import play, record
from orchestration.sim import build
from topologies.generators import build_topology
from topologies.model import Topology, mac_to_int
from traffic.receiver import Receiver
from traffic.schedules import flows_to_random_servers
from traffic.sender import Sender, SentLog

PROBE_ETHERTYPE = 0x2345
"""p4src/hula.p4's ETHERTYPE_HULA."""
PROBE_FRAME_BYTES = 64
"""Probe frame length: the 64-byte probes of INT-label's HULA counting model."""
_HEAD = struct.Struct("!6s6sHIII")  # Ethernet, then torId, maxUtil, seq
_PAD = bytes(PROBE_FRAME_BYTES - _HEAD.size)


def probe_frame(tor_id: int, seq: int, dst_mac: str, src_mac: str, max_util: int = 0) -> bytes:
    """A 64-byte probe: Ethernet (type 0x2345), origin ToR, path utilisation
    and sequence number (32 bits each), zero padding."""
    head = _HEAD.pack(_mac(dst_mac), _mac(src_mac), PROBE_ETHERTYPE, tor_id & 0xFFFFFFFF,
                      max_util & 0xFFFFFFFF, seq & 0xFFFFFFFF)
    return head + _PAD


def parse_probe(frame: bytes) -> tuple[int, int, int] | None:
    """``(tor_id, max_util, seq)`` of a probe frame, None for other frames."""
    if len(frame) < _HEAD.size or frame[12:14] != b"\x23\x45":
        return None
    _, _, _, tor, util, seq = _HEAD.unpack_from(frame)
    return tor, util, seq


def is_probe(frame: bytes) -> bool:
    return frame[12:14] == b"\x23\x45"


def _mac(mac: str) -> bytes:
    return mac_to_int(mac).to_bytes(6, "big")


@dataclass(frozen=True, slots=True)
class ProbeOrigin:
    """A ToR, its probe id, and the host sending its probes on its behalf."""

    tor: str
    tor_id: int
    host: str


def probe_origins(topo: Topology) -> list[ProbeOrigin]:
    """One origin per ToR that has hosts; the stand-in is the host on the
    ToR's lowest host port."""
    tiers = switch_tiers(topo)
    ids = tor_ids(topo, tiers)
    out = []
    for tor, tor_id in ids.items():
        hosts = [peer for _, peer, _ in topo.port_peers(tor) if peer in topo.hosts]
        if hosts:
            out.append(ProbeOrigin(tor, tor_id, hosts[0]))
    return out


class HulaProber:
    """Sends every origin's probe each ``interval_s`` seconds of virtual
    time from ``start_s`` until before ``stop_s``; each origin starts at its
    own phase offset, uniform in [0, interval), drawn from ``seed``."""

    def __init__(self, net: Any, interval_s: float, seed: int = 0, *,
                 start_s: float = 0.0, stop_s: float | None = None,
                 origins: Sequence[ProbeOrigin] | None = None) -> None:
        if interval_s <= 0:
            raise ValueError(f"probing interval must be positive, not {interval_s}")
        self.net = net
        self.interval_ns = round(interval_s * NS_PER_S)
        self.start_ns = round(start_s * NS_PER_S)
        self.stop_ns = None if stop_s is None else round(stop_s * NS_PER_S)
        self.seed = seed
        self.origins = list(probe_origins(net.topo) if origins is None else origins)
        self.sent: dict[str, int] = {o.tor: 0 for o in self.origins}

    def start(self) -> None:
        sim = self.net.sim
        for origin in self.origins:
            phase = stream(self.seed, "hula-phase", origin.tor).randrange(self.interval_ns)
            host = self.net.hosts[origin.host]
            tor_mac = self.net.topo.switches[origin.tor].mac
            sim.at_ns(self.start_ns + phase, self._send, origin, host, tor_mac)

    def _send(self, origin: ProbeOrigin, host: Any, tor_mac: str) -> None:
        sim = self.net.sim
        if self.stop_ns is not None and sim.now_ns >= self.stop_ns:
            return
        seq = self.sent[origin.tor]
        host.send(probe_frame(origin.tor_id, seq, tor_mac, host.mac))
        self.sent[origin.tor] = seq + 1
        sim.after_ns(self.interval_ns, self._send, origin, host, tor_mac)

    @property
    def total_sent(self) -> int:
        return sum(self.sent.values())


def install_hula(net: Any) -> None:
    """Probe groups and ``probe_replicate`` entries on every switch of a
    started network running hula.p4."""
    sets = probe_port_sets(net.topo)
    for name in net.switches:
        install_probe_groups(net.clients[name], net.topo, name, sets)


def build_hula_network(topo: Topology, *, seed: int = 0) -> Any:
    """A sim network of ``topo`` where every switch runs hula.p4, with
    shortest-path routes and probe flooding installed."""
    net = build(topo, "hula", seed=seed)
    install_hula(net)
    return net


def copies_per_probe(topo: Topology, origin: ProbeOrigin,
                     sets: PortSets | None = None) -> int:
    """Switch-port transmissions one probe of ``origin`` makes when nothing
    is lost (walks the flood over the port sets)."""
    sets = probe_port_sets(topo) if sets is None else sets
    _, port = topo.host_switch(origin.host)
    work = [(origin.tor, port)]
    count = 0
    while work:
        switch, in_port = work.pop()
        for out in sets[switch].get(in_port, ()):
            count += 1
            peer, peer_port = _peer(topo, switch, out)
            if peer in topo.switches:
                work.append((peer, peer_port))
    return count


def _peer(topo: Topology, switch: str, port: int) -> tuple[str, int]:
    for p, peer, peer_port in topo.port_peers(switch):
        if p == port:
            return peer, peer_port
    raise KeyError((switch, port))


# --------------------------------------------------------------------------- figure 14


def data_ports(net: Any) -> Iterable[tuple[str, int, Any]]:
    """``(switch, port, EgressPort)`` of every port with a topology link."""
    for name, spec in net.topo.switches.items():
        for port in spec.ports:
            ep = net.switches[name].ports.get(port)
            if ep is not None:
                yield name, port, ep


def run_hula_loss(probe_interval_ms: float | None, *, rate_limit_pps: float | None,
                  queue_depth: int = 64, background: float = 5e6, packet_size: int = 1000,
                  senders: Sequence[str] = ("h1", "h8"), duration_s: float = 2.0,
                  seed: int = 0, drain_s: float = 0.5) -> dict[str, Any]:
    """INT-label's figure 14 setup on the sim target: the INT-label fabric
    running hula.p4 with shortest-path routes and probe flooding, ``senders``
    each sending ``background`` b/s of ``packet_size``-byte frames to random
    servers for ``duration_s``, HULA probes every ``probe_interval_ms`` (None:
    none), and every data port's queue limited to ``rate_limit_pps`` packets/s
    (None: line rate) and ``queue_depth`` packets (BMv2 set_queue_rate and
    set_queue_depth).

    Returns the background loss (sent versus received, unique packets), probe
    counts, queue drops and the busiest data port's packet rate over the run.
    ``probe_copies_lost`` counts the copies the flood would have made but did
    not: a copy dropped in a queue takes its downstream copies with it.
    """
    topo = build_topology("intlabel-fabric")
    net = build_hula_network(topo, seed=seed)
    for _, _, ep in data_ports(net):
        ep.set_rate(rate_limit_pps)
        ep.depth = queue_depth

    hosts = list(topo.hosts.values())
    receivers = [record(net.hosts[h.name]) for h in hosts]
    logs: list[SentLog] = []
    duration_us = round(duration_s * 1e6)
    for name in senders:
        sched = flows_to_random_servers(topo.hosts[name], hosts, background, packet_size,
                                        duration_us, derive_seed(seed, "traffic", name))
        sender = Sender(sched)
        logs.append(sender.log)
        play(net.sim, net.hosts[name], sender)

    probe_tx = [0]

    def count_probes(_t: int, _node: str, _port: int, packet: bytes) -> None:
        if is_probe(packet):
            probe_tx[0] += 1

    for sw in net.switches.values():
        sw.taps.append(count_probes)
    prober = None
    if probe_interval_ms is not None:
        prober = HulaProber(net, probe_interval_ms / 1000, seed, stop_s=duration_s)
        prober.start()

    net.run(duration_s + drain_s)

    stats = Receiver.merged(receivers).stats(SentLog.merged(logs))
    expected = 0
    if prober is not None:
        sets = probe_port_sets(topo)
        expected = sum(n * copies_per_probe(topo, o, sets)
                       for o in prober.origins for n in [prober.sent[o.tor]])
    busiest = max(ep.tx_packets for _, _, ep in data_ports(net)) / duration_s
    drops = net.queue_drops()
    return {
        "probe_interval_ms": probe_interval_ms,
        "rate_limit_pps": rate_limit_pps,
        "queue_depth": queue_depth,
        "background_sent": stats.sent,
        "background_received": (stats.sent or 0) - (stats.lost or 0),
        "background_lost": stats.lost,
        "background_loss_rate": stats.loss_rate,
        "probes_sent": prober.total_sent if prober is not None else 0,
        "probe_copies_expected": expected,
        "probe_copies_sent": probe_tx[0],
        "probe_copies_lost": expected - probe_tx[0],
        "queue_drops": sum(drops.values()),
        "busiest_port_pps": busiest,
    }


def background_rate_limit(margin: float = 1.02, **background: Any) -> float:
    """The figure's rate limit: the busiest data port's packet rate with the
    background traffic alone at line rate, times ``margin``. ``background``
    takes run_hula_loss's traffic arguments (background, packet_size,
    senders, duration_s, seed)."""
    run = run_hula_loss(None, rate_limit_pps=None, **background)
    return run["busiest_port_pps"] * margin
