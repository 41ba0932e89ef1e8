"""The storage run's network: flows over a fat-tree and a queue model of
its egress ports.

Section V-B2 counts metric values for "a fat-tree network with 20
switches, each switch has 4 ports; 5000 flows ... the average flow path is
5 hops": a k = 4 fat-tree (``topologies.generators.fat_tree``). Each flow
runs between two hosts in different pods, so its path is five switches
(ToR, leaf, spine, leaf, ToR), one of the four equal-cost paths drawn at
random per flow as ECMP would hash it; ports are the topology's.

Queue model, per egress port (80 of them): the port's utilisation u is
constant between load changes; the changes form a Poisson process over the
network (``changes_per_s``), each giving one random port a new u, uniform
in [0.05, 0.95]. From u (M/M/1 mean queue N = u / (1 - u) packets of
1,500 bytes, 100 Gb/s links):

- hop latency: 300 ns + 120 ns per queued packet, +/- 4 ns of noise;
- queue occupancy: N in 80-byte cells, +/- 3 cells;
- link utilisation: u in per mille, +/- 2;
- queue congestion: u in percent.

The noise stays within the collector's default thresholds (50) even summed
over five hops, so events come from load changes and new keys only: each
change is an event for the port's queue and link and for the hop and flow
latency of every flow through the port (about 310 flows per port here).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import networkx as nx
import numpy as np

from experiments.intcollector.reports import Flows
from topologies.generators import fat_tree

U_LOW, U_HIGH = 0.05, 0.95


@dataclass(frozen=True)
class Network:
    """Flows over the fat-tree, and each (flow, hop)'s egress port as an
    index into the network's ports."""

    flows: Flows
    port: np.ndarray  # (flows, hops) index of the egress port
    ports: int
    switches: int


def fat_tree_flows(count: int, k: int, rng: np.random.Generator) -> Network:
    topo = fat_tree(k)
    graph = topo.switch_graph()
    hosts = sorted(topo.hosts, key=lambda h: int(h[1:]))
    tor_of = {h: topo.host_switch(h) for h in hosts}
    pod = {h: (int(tor_of[h][0].removeprefix("tor")) - 1) // (k // 2) for h in hosts}
    port_index: dict[tuple[str, int], int] = {}
    for name in topo.switches:
        for p, _, _ in topo.port_peers(name):
            port_index[(name, p)] = len(port_index)
    routes: dict[tuple[str, str], list[list[str]]] = {}
    src, dst, sport = [], [], []
    path, ingress, egress, port = [], [], [], []
    for i in range(count):
        a = hosts[int(rng.integers(len(hosts)))]
        others = [h for h in hosts if pod[h] != pod[a]]
        b = others[int(rng.integers(len(others)))]
        (ta, pa), (tb, pb) = tor_of[a], tor_of[b]
        choices = routes.setdefault((ta, tb), sorted(nx.all_shortest_paths(graph, ta, tb)))
        route = choices[int(rng.integers(len(choices)))]
        ins = [pa] + [topo.switch_port_to(route[j], route[j - 1]) for j in range(1, len(route))]
        outs = [topo.switch_port_to(route[j], route[j + 1]) for j in range(len(route) - 1)]
        outs.append(pb)
        src.append(int(ipaddress.IPv4Address(topo.hosts[a].ip)))
        dst.append(int(ipaddress.IPv4Address(topo.hosts[b].ip)))
        sport.append(1024 + i)
        path.append([topo.switches[s].device_id for s in route])
        ingress.append(ins)
        egress.append(outs)
        port.append([port_index[(s, o)] for s, o in zip(route, outs)])
    u64 = np.uint64
    flows = Flows(src=np.array(src, u64), dst=np.array(dst, u64), sport=np.array(sport, u64),
                  dport=np.full(count, 5001, u64), path=np.array(path, u64),
                  ingress=np.array(ingress, u64), egress=np.array(egress, u64))
    return Network(flows, np.array(port, np.intp), len(port_index), len(topo.switches))


class PortLoads:
    """Each port's utilisation, changed by a Poisson process of load
    changes; ``values`` derives the INT fields from it."""

    def __init__(self, ports: int, changes_per_s: float, rng: np.random.Generator) -> None:
        self.rng = rng
        self.u = rng.uniform(U_LOW, U_HIGH, ports)
        self.rate = changes_per_s
        self.next_change = self._gap()
        self.changes = 0

    def _gap(self) -> float:
        return float(self.rng.exponential(1.0 / self.rate)) if self.rate > 0 else np.inf

    def advance(self, t: float) -> None:
        """Apply every change due before ``t``."""
        while self.next_change < t:
            self.u[int(self.rng.integers(len(self.u)))] = self.rng.uniform(U_LOW, U_HIGH)
            self.changes += 1
            self.next_change += self._gap()

    def values(self, port: np.ndarray, egress: np.ndarray) -> dict[str, np.ndarray]:
        """Per-hop INT values for reports whose hops leave by ``port``
        (network-wide index) with port id ``egress`` (the queue id: one
        queue per port, so (sw_id, queue_id) names a port as the paper's
        80 queue keys do)."""
        rng, u = self.rng, self.u[port]
        queued = u / (1 - u)
        return {
            "hop_latency": np.rint(300 + 120 * queued).astype(np.int64)
            + rng.integers(-4, 5, port.shape),
            "queue_id": egress,
            "queue_occupancy": np.maximum(np.rint(queued * 1500 / 80).astype(np.int64)
                                          + rng.integers(-3, 4, port.shape), 0),
            "congestion_queue_id": egress,
            "queue_congestion": np.rint(100 * u).astype(np.int64),
            "egress_tx_util": np.rint(1000 * u).astype(np.int64) + rng.integers(-2, 3, port.shape),
        }
