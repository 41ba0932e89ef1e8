"""HULA probing on any target, and the packet-loss run of INT-label's
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

from collections.abc import Sequence
from typing import Any

from common.errors import InvalidValueError
from common.seeds import derive_seed, stream
from controller.hula import (
    ProbeOrigin,
    copies_per_probe,
    install_probe_groups,
    is_probe,
    probe_frame,
    probe_origins,
    probe_port_sets,
)
from orchestration.network import Network, RunEnv
from topologies.generators import build_topology
from topologies.model import Topology
from traffic.receiver import Receiver
from traffic.schedules import flows_to_random_servers
from traffic.sender import SentLog

PROGRAM = "hula"


class HulaProber:
    """Sends every origin's probe each ``interval_s`` seconds of the network's
    clock from ``start_s`` until before ``stop_s``; each origin starts at its
    own phase offset, uniform in [0, interval), drawn from ``seed``."""

    def __init__(self, net: Network, interval_s: float, seed: int = 0, *,
                 start_s: float = 0.0, stop_s: float | None = None,
                 origins: Sequence[ProbeOrigin] | None = None) -> None:
        if interval_s <= 0:
            raise InvalidValueError(f"probing interval must be positive, not {interval_s}")
        self.net = net
        self.interval_ns = round(interval_s * 1e9)
        self.start_ns = round(start_s * 1e9)
        self.stop_ns = None if stop_s is None else round(stop_s * 1e9)
        self.seed = seed
        self.origins = list(probe_origins(net.topo) if origins is None else origins)
        self.sent: dict[str, int] = {o.tor: 0 for o in self.origins}

    def start(self) -> None:
        clock = self.net.clock
        for origin in self.origins:
            phase = stream(self.seed, "hula-phase", origin.tor).randrange(self.interval_ns)
            host = self.net.topo.hosts[origin.host]
            tor_mac = self.net.topo.switches[origin.tor].mac
            delay_s = (self.start_ns + phase) / 1e9 - clock.now()
            clock.call_later(delay_s, self._send, origin, host.mac, tor_mac)

    def _send(self, origin: ProbeOrigin, host_mac: str, tor_mac: str) -> None:
        clock = self.net.clock
        if self.stop_ns is not None and round(clock.now() * 1e9) >= self.stop_ns:
            return
        seq = self.sent[origin.tor]
        self.net.send_frame(origin.host, probe_frame(origin.tor_id, seq, tor_mac, host_mac))
        self.sent[origin.tor] = seq + 1
        clock.call_later(self.interval_ns / 1e9, self._send, origin, host_mac, tor_mac)

    @property
    def total_sent(self) -> int:
        return sum(self.sent.values())


def install_hula(net: Network) -> None:
    """Probe groups and ``probe_replicate`` entries on every switch of a
    started network running hula.p4."""
    sets = probe_port_sets(net.topo)
    for name in net.topo.switches:
        install_probe_groups(net.clients[name], net.topo, name, sets)


def build_hula_network(topo: Topology, env: RunEnv | None = None, **options: Any) -> Network:
    """A started network of ``topo`` where every switch runs hula.p4 (on
    ``env``'s target, with its seed; default the sim, seed 0), with
    shortest-path routes and probe flooding installed."""
    net = (env or RunEnv()).open(topo, PROGRAM, **options)
    net.start()
    net.install_routes()
    install_hula(net)
    return net


def limit_data_ports(topo: Topology, rate_pps: float | None, depth: int) -> None:
    """Every switch port with a link gets ``depth`` packets of queue and at
    most ``rate_pps`` dequeues per second (BMv2 set_queue_depth/rate)."""
    for spec in topo.switches.values():
        for ps in spec.ports.values():
            ps.queue_depth = depth
            ps.queue_rate_pps = rate_pps


def run_hula_loss(probe_interval_ms: float | None, *, rate_limit_pps: float | None,
                  queue_depth: int = 64, background: float = 5e6, packet_size: int = 1000,
                  senders: Sequence[str] = ("h1", "h8"), duration_s: float = 2.0,
                  drain_s: float = 0.5, env: RunEnv | None = None) -> dict[str, Any]:
    """INT-label's figure 14 setup: the INT-label fabric running hula.p4 with
    shortest-path routes and probe flooding, ``senders`` each sending
    ``background`` b/s of ``packet_size``-byte frames to random servers for
    ``duration_s``, HULA probes every ``probe_interval_ms`` (None: none),
    and every data port's queue limited to ``rate_limit_pps`` packets/s
    (None: line rate) and ``queue_depth`` packets.

    Returns the background loss (sent versus received, unique packets), probe
    counts, queue drops and the busiest data port's packet rate over the run.
    ``probe_copies_lost`` counts the copies the flood would have made but did
    not: a copy dropped in a queue takes its downstream copies with it.
    """
    topo = build_topology("intlabel-fabric")
    limit_data_ports(topo, rate_limit_pps, queue_depth)
    env = env or RunEnv()
    seed = env.seed
    with build_hula_network(topo, env, label=f"hula-{probe_interval_ms}ms-seed{seed}") as net:
        hosts = list(topo.hosts.values())
        for h in hosts:
            net.add_receiver(h.name)
        duration_us = round(duration_s * 1e6)
        for name in senders:
            sched = flows_to_random_servers(topo.hosts[name], hosts, background, packet_size,
                                            duration_us, derive_seed(seed, "traffic", name))
            net.add_sender(name, sched, seed=derive_seed(seed, "loss", name, 0))
        probe_tx = [0]

        def count_probes(_t: int, _node: str, _port: int, packet: bytes) -> None:
            if is_probe(packet):
                probe_tx[0] += 1

        net.tap_transmitted(count_probes)
        t0 = net.start_traffic()
        prober = None
        if probe_interval_ms is not None:
            prober = HulaProber(net, probe_interval_ms / 1000, seed, start_s=t0,
                                stop_s=t0 + duration_s)
            prober.start()
        net.run_traffic(duration_s, drain_s)
        counters = net.finish()
        stats = Receiver.merged(list(net.received().values())).stats(
            SentLog.merged(list(net.sent_logs().values())))
    expected = 0
    if prober is not None:
        sets = probe_port_sets(topo)
        expected = sum(n * copies_per_probe(topo, o, sets)
                       for o in prober.origins for n in [prober.sent[o.tor]])
    busiest = max(counters.port_tx.values(), default=0) / duration_s
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
        "queue_drops": counters.queue_drops,
        "busiest_port_pps": busiest,
    }


def background_rate_limit(margin: float = 1.02, **background: Any) -> float:
    """The figure's rate limit: the busiest data port's packet rate with the
    background traffic alone at line rate, times ``margin``. ``background``
    takes run_hula_loss's traffic arguments (background, packet_size,
    senders, duration_s) and its run environment (env)."""
    run = run_hula_loss(None, rate_limit_pps=None, **background)
    return run["busiest_port_pps"] * margin
