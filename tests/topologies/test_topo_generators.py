"""Generators: sizes, wiring, addressing, connectivity and determinism."""

from __future__ import annotations

import networkx as nx
import pytest

from topologies.generators import (
    GENERATORS,
    build_topology,
    choices,
    fat_tree,
    generator_params,
    intlabel_fabric,
    line,
    watts_strogatz,
)
from topologies.model import Topology, TopologyError


def connected(topo: Topology) -> bool:
    return nx.is_connected(nx.Graph(topo.to_networkx()))


def test_intlabel_fabric_sizes_and_wiring() -> None:
    topo = intlabel_fabric()
    assert topo.name == "intlabel-fabric"
    assert (len(topo.switches), len(topo.hosts), len(topo.links)) == (12, 8, 24)
    assert topo.total_switch_ports() == 40
    assert [s for s in topo.switches] == (
        [f"spine{i}" for i in range(1, 5)] + [f"leaf{i}" for i in range(1, 5)]
        + [f"tor{i}" for i in range(1, 5)])
    assert [s.device_id for s in topo.switches.values()] == list(range(12))
    assert {name: len(s.ports) for name, s in topo.switches.items()} == {
        **{f"spine{i}": 2 for i in range(1, 5)}, **{f"leaf{i}": 4 for i in range(1, 5)},
        **{f"tor{i}": 4 for i in range(1, 5)}}
    # ToR: hosts on 1..2, leaves on 3..4; leaf: ToRs on 1..2, spines on 3..4.
    assert topo.port_peers("tor1") == [(1, "h1", 0), (2, "h2", 0), (3, "leaf1", 1),
                                       (4, "leaf2", 1)]
    assert topo.port_peers("leaf3") == [(1, "tor3", 3), (2, "tor4", 3), (3, "spine1", 2),
                                        (4, "spine2", 2)]
    assert topo.port_peers("spine4") == [(1, "leaf2", 4), (2, "leaf4", 4)]
    assert connected(topo)
    assert nx.diameter(topo.switch_graph()) == 4


@pytest.mark.parametrize(("k", "switches", "hosts"), [(2, 5, 2), (4, 20, 16), (8, 80, 128)])
def test_fat_tree_sizes(k: int, switches: int, hosts: int) -> None:
    topo = fat_tree(k)
    assert (len(topo.switches), len(topo.hosts)) == (switches, hosts)
    assert hosts == k ** 3 // 4
    assert len(topo.links) == 3 * k ** 3 // 4  # host, ToR-leaf and leaf-spine links
    assert all(len(s.ports) == k for s in topo.switches.values())  # every switch has k ports
    assert connected(topo)
    topo.validate()


def test_fat_tree_addresses() -> None:
    topo = fat_tree(4)
    assert [(h.name, h.ip, h.mac) for h in list(topo.hosts.values())[:3]] == [
        ("h1", "10.0.1.1", "00:00:00:00:00:01"), ("h2", "10.0.1.2", "00:00:00:00:00:02"),
        ("h3", "10.0.2.1", "00:00:00:00:00:03")]
    assert topo.host_switch("h16") == ("tor8", 2)
    big = fat_tree(16)
    h300 = big.hosts["h300"]
    assert (h300.ip, h300.mac) == ("10.0.38.4", "00:00:00:00:01:2c")
    assert len({h.ip for h in big.hosts.values()}) == 1024


@pytest.mark.parametrize("k", [0, 3, -2, True, 4.0])
def test_fat_tree_bad_k(k: object) -> None:
    with pytest.raises(TopologyError):
        fat_tree(k)  # type: ignore[arg-type]


def test_watts_strogatz_connected_and_seeded() -> None:
    a = watts_strogatz(30, 4, 0.5, seed=7)
    b = watts_strogatz(30, 4, 0.5, seed=7)
    c = watts_strogatz(30, 4, 0.5, seed=8)
    assert a.to_dict() == b.to_dict()
    assert a.to_dict()["links"] != c.to_dict()["links"]
    assert (len(a.switches), len(a.hosts)) == (30, 30)
    switch_links = [k for k in a.links if k.a in a.switches and k.b in a.switches]
    assert len(switch_links) == 30 * 4 // 2  # rewiring keeps the edge count
    for seed in range(20):
        assert nx.is_connected(watts_strogatz(12, 2, 0.9, seed=seed).switch_graph())


def test_watts_strogatz_hosts_per_switch() -> None:
    topo = watts_strogatz(6, 2, 0.0, seed=1, hosts_per_switch=3)
    assert len(topo.hosts) == 18
    assert [p for p, peer, _ in topo.port_peers("s2") if peer in topo.hosts] == [1, 2, 3]
    assert topo.hosts["h4"].ip == "10.0.2.1"
    assert watts_strogatz(6, 2, 0.0, seed=1, hosts_per_switch=0).hosts == {}
    with pytest.raises(TopologyError, match="k must be smaller than n"):
        watts_strogatz(4, 4, 0.1, seed=1)
    with pytest.raises(TopologyError, match="probability"):
        watts_strogatz(10, 4, 1.5, seed=1)


def test_line() -> None:
    topo = line(4)
    assert (len(topo.switches), len(topo.hosts), len(topo.links)) == (4, 4, 7)
    assert topo.port_peers("s1") == [(1, "h1", 0), (2, "s2", 2)]
    assert topo.port_peers("s2") == [(1, "h2", 0), (2, "s1", 2), (3, "s3", 2)]
    assert nx.diameter(topo.switch_graph()) == 3
    single = line(1)
    assert (len(single.switches), len(single.hosts)) == (1, 1)


def test_registry_and_build_topology() -> None:
    assert list(GENERATORS) == ["intlabel-fabric", "fat-tree", "watts-strogatz", "line",
                                "gpint-ws"]
    assert generator_params("watts-strogatz") == {"n": 20, "k": 4, "p": 0.1, "seed": 0,
                                                  "hosts_per_switch": 1}
    assert generator_params("intlabel-fabric") == {}
    assert len(build_topology("fat-tree", k=8).hosts) == 128
    assert len(build_topology("line", n=3, k=None).switches) == 3  # None: default
    assert "diamond" in choices()
    with pytest.raises(TopologyError) as info:
        build_topology("torus")
    assert str(info.value) == (
        "error: unknown topology 'torus': choose one of intlabel-fabric, fat-tree, "
        "watts-strogatz, line, gpint-ws, diamond, or give a YAML file")
    with pytest.raises(TopologyError, match=r"takes no parameter p \(it takes: k, pods\)"):
        build_topology("fat-tree", p=0.5)
    with pytest.raises(TopologyError, match="takes no parameters"):
        build_topology("diamond", n=3)
