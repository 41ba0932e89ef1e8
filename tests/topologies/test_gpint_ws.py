"""The gpint-ws generator: GPINT's section V-A network."""

from __future__ import annotations

import networkx as nx
import pytest

from topologies.generators import build_topology, generator_params, gpint_ws, watts_strogatz
from topologies.model import Topology, TopologyError


def switch_links(topo: Topology) -> list:
    return [k for k in topo.links if k.a in topo.switches and k.b in topo.switches]


def test_defaults_are_the_papers_setup() -> None:
    assert generator_params("gpint-ws") == {"n": 20, "k": 4, "p": 0.1, "seed": 0, "hosts": 60,
                                            "link_loss": 0.0, "queue_depth": 1000}
    topo = build_topology("gpint-ws")
    topo.validate()
    assert (len(topo.switches), len(topo.hosts)) == (20, 60)
    assert nx.is_connected(nx.Graph(topo.to_networkx()))
    assert all(s.queue_depth == 1000 for s in topo.switches.values())
    assert all(link.loss == 0.0 for link in topo.links)


def test_same_switch_graph_as_watts_strogatz() -> None:
    for seed in range(5):
        a, b = gpint_ws(30, 4, 0.3, seed=seed), watts_strogatz(30, 4, 0.3, seed=seed)
        assert sorted(map(sorted, a.switch_graph().edges())) == sorted(
            map(sorted, b.switch_graph().edges()))
        assert nx.is_connected(a.switch_graph())


@pytest.mark.parametrize(("n", "hosts"), [(20, 60), (50, 60), (7, 10), (10, 0)])
def test_hosts_round_robin(n: int, hosts: int) -> None:
    topo = gpint_ws(n, hosts=hosts, seed=3)
    topo.validate()
    assert len(topo.hosts) == hosts
    per_switch = [sum(1 for _, peer, _ in topo.port_peers(s) if peer in topo.hosts)
                  for s in topo.switches]
    assert per_switch == [hosts // n + (1 if i < hosts % n else 0) for i in range(n)]
    # Hosts take a switch's first ports, as in every generator.
    for switch in topo.switches:
        ports = [(port, peer in topo.hosts) for port, peer, _ in topo.port_peers(switch)]
        assert [is_host for _, is_host in ports] == sorted(
            (is_host for _, is_host in ports), reverse=True)


def test_loss_only_on_switch_links_and_queue_depth() -> None:
    topo = gpint_ws(40, seed=1, link_loss=0.2, queue_depth=50)
    topo.validate()
    inter = switch_links(topo)
    assert inter and all(link.loss == 0.2 for link in inter)
    assert all(link.loss == 0.0 for link in topo.links if link not in inter)
    assert all(s.queue_depth == 50 and s.port_queue_depth(1) == 50
               for s in topo.switches.values())
    assert topo.to_dict() == gpint_ws(40, seed=1, link_loss=0.2, queue_depth=50).to_dict()


@pytest.mark.parametrize(("params", "message"), [
    ({"link_loss": 1.5}, "link_loss must be a probability"),
    ({"link_loss": -0.1}, "link_loss must be a probability"),
    ({"queue_depth": 0}, "queue_depth must be an integer >= 1"),
    ({"hosts": -1}, "hosts must be an integer >= 0"),
    ({"k": 20}, "k must be smaller than n"),
    ({"n": 3, "k": 2, "hosts": 800}, "hosts per switch must be in 0..254"),
])
def test_bad_parameters(params: dict, message: str) -> None:
    with pytest.raises(TopologyError, match=message):
        build_topology("gpint-ws", **params)
