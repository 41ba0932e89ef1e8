"""Routing entries from a Topology: shortest paths, ECMP, and what reaches the client."""

from __future__ import annotations

from typing import Any

import networkx as nx
import pytest

from controller.routing import (
    ECMP_TABLE,
    LPM_TABLE,
    Route,
    compute_routes,
    install_routes,
    table_entries,
)
from topologies.generators import build_topology, fat_tree, line, watts_strogatz
from topologies.model import Topology, TopologyError, mac_to_int, switch_mac

Call = tuple[str, dict[str, Any], str, dict[str, int], int | None]


class FakeTable:
    """Records ``insert`` calls as a P4RuntimeClient table would receive them."""

    def __init__(self, name: str, calls: list[Call]) -> None:
        self.name = name
        self.calls = calls

    def insert(self, match: dict[str, Any], action: str, params: dict[str, int],
               priority: int | None = None) -> None:
        self.calls.append((self.name, match, action, params, priority))


class FakeClient:
    """The routing tables' inserts, in order, as ``calls``."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.tables = {t: FakeTable(t, self.calls) for t in (LPM_TABLE, ECMP_TABLE)}


def route_to(routes: dict[str, list[Route]], switch: str, ip: str) -> Route:
    (route,) = [r for r in routes[switch] if r.prefix == ip]
    return route


def mac_of(topo: Topology, switch: str) -> str:
    return switch_mac(topo.switches[switch].device_id)


def test_fat_tree_ecmp_toward_another_pod() -> None:
    topo = fat_tree(4)
    routes = compute_routes(topo)
    far = topo.hosts["h16"].ip  # pod 4, behind tor8
    assert route_to(routes, "tor1", far) == Route(far, 32, [(3, mac_of(topo, "leaf1")),
                                                           (4, mac_of(topo, "leaf2"))])
    assert route_to(routes, "leaf1", far).next_hops == [(3, mac_of(topo, "spine1")),
                                                        (4, mac_of(topo, "spine2"))]
    # A spine has one way down into each pod.
    assert route_to(routes, "spine1", far).next_hops == [(4, mac_of(topo, "leaf7"))]
    assert route_to(routes, "leaf7", far).next_hops == [(2, mac_of(topo, "tor8"))]
    assert route_to(routes, "tor8", far).next_hops == [(2, "00:00:00:00:00:10")]
    # Same pod, other ToR: up to either leaf.
    assert len(route_to(routes, "tor1", topo.hosts["h3"].ip).next_hops) == 2
    assert all(len(table) == 16 for table in routes.values())
    assert [r.prefix for r in routes["tor1"]][:3] == ["10.0.1.1", "10.0.1.2", "10.0.2.1"]


def test_every_ecmp_branch_is_a_shortest_path() -> None:
    for topo in (fat_tree(4), watts_strogatz(16, 4, 0.4, seed=3),
                 build_topology("diamond"), line(3)):
        routes = compute_routes(topo)
        graph = nx.Graph(topo.to_networkx())
        by_port = {(s, port): peer for s in topo.switches for port, peer, _ in
                   topo.port_peers(s)}
        for src in topo.hosts:
            for dst, spec in topo.hosts.items():
                if src == dst:
                    continue
                want = nx.shortest_path_length(graph, src, dst)
                frontier = {topo.host_switch(src)[0]}
                for _ in range(want - 1):
                    frontier = {by_port[(s, port)] for s in frontier
                                for port, _ in route_to(routes, s, spec.ip).next_hops}
                assert frontier == {dst}, (topo.name, src, dst)


def test_entries_single_next_hop_and_shared_groups() -> None:
    topo = fat_tree(4)
    entries = table_entries(compute_routes(topo)["tor1"])
    lpm = [e for e in entries if e.table == LPM_TABLE]
    ecmp = [e for e in entries if e.table == ECMP_TABLE]
    assert len(lpm) == 16
    assert lpm[0].match == {"hdr.ipv4.dstAddr": (0x0A000101, 32)}
    assert (lpm[0].action, lpm[0].params) == ("MyIngress.ipv4_forward",
                                              {"dstAddr": 1, "port": 1})
    assert (lpm[2].action, lpm[2].params) == ("MyIngress.set_ecmp", {"group": 1, "count": 2})
    # Every remote host of tor1 leaves by leaf1 or leaf2: one group serves them all.
    assert {e.params["group"] for e in lpm[2:]} == {1}
    assert [(e.match, e.action, e.params) for e in ecmp] == [
        ({"meta.ecmp_group": 1, "meta.ecmp_select": 0}, "MyIngress.ipv4_forward",
         {"dstAddr": mac_to_int(mac_of(topo, "leaf1")), "port": 3}),
        ({"meta.ecmp_group": 1, "meta.ecmp_select": 1}, "MyIngress.ipv4_forward",
         {"dstAddr": mac_to_int(mac_of(topo, "leaf2")), "port": 4}),
    ]
    assert mac_to_int(mac_of(topo, "leaf2")) == 0x02_00_00_00_00_05


def test_install_routes_through_client() -> None:
    topo = build_topology("diamond")
    client = FakeClient()
    entries = install_routes(client, topo, "s1")
    assert client.calls == [
        ("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0x0A000101, 32)},
         "MyIngress.ipv4_forward", {"dstAddr": 0x01, "port": 1}, None),
        ("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0x0A000401, 32)},
         "MyIngress.set_ecmp", {"group": 1, "count": 2}, None),
        ("MyIngress.ecmp_nhop", {"meta.ecmp_group": 1, "meta.ecmp_select": 0},
         "MyIngress.ipv4_forward", {"dstAddr": 0x02_00_00_00_00_01, "port": 2}, None),
        ("MyIngress.ecmp_nhop", {"meta.ecmp_group": 1, "meta.ecmp_select": 1},
         "MyIngress.ipv4_forward", {"dstAddr": 0x02_00_00_00_00_02, "port": 3}, None),
    ]
    assert len(entries) == 4
    routes = compute_routes(topo)
    other = FakeClient()
    install_routes(other, topo, "s2", routes)
    assert other.calls == [
        ("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0x0A000101, 32)},
         "MyIngress.ipv4_forward", {"dstAddr": 0x02_00_00_00_00_00, "port": 1}, None),
        ("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": (0x0A000401, 32)},
         "MyIngress.ipv4_forward", {"dstAddr": 0x02_00_00_00_00_03, "port": 2}, None),
    ]
    with pytest.raises(TopologyError, match="unknown switch 'sX'"):
        install_routes(other, topo, "sX")


def test_unreachable_hosts_get_no_route() -> None:
    topo = Topology("split")
    for name in ("s1", "s2"):
        topo.add_switch(name)
    topo.add_host("h1", "00:00:00:00:00:01", "10.0.0.1")
    topo.add_host("h2", "00:00:00:00:00:02", "10.0.0.2")
    topo.add_link("h1", "s1")
    topo.add_link("h2", "s2")
    routes = compute_routes(topo)
    assert [r.prefix for r in routes["s1"]] == ["10.0.0.1"]
    assert [r.prefix for r in routes["s2"]] == ["10.0.0.2"]


def test_routes_are_deterministic() -> None:
    a = compute_routes(watts_strogatz(20, 4, 0.3, seed=11))
    b = compute_routes(watts_strogatz(20, 4, 0.3, seed=11))
    assert a == b
