"""topology.json as p4-utils writes it, read back by ``load_topo``: every
query answers what intbed's Topology of the same p4app.json says."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest

from common.paths import shared_dir
from controller.p4utils.topology import IntfDoesNotExist, NodeDoesNotExist, load_topo
from orchestration.p4app.load import load_app
from orchestration.p4app.topojson import switch_ports, write_topology

EXERCISES = shared_dir() / "third-party" / "p4-learning"
TRACE = EXERCISES / "09-Traceroutable"
REROUTE = EXERCISES / "12-Fast-Reroute"
pytestmark = pytest.mark.skipif(not EXERCISES.is_dir(),
                                reason=f"the p4-learning exercises are not at {EXERCISES}")


def loaded(app_file: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    app = load_app(app_file)
    return app, load_topo(str(write_topology(app, tmp_path / "topology.json")))


def test_node_link_format_as_p4utils_writes_it(tmp_path: Path) -> None:
    app = load_app(TRACE / "p4app.json")
    data = json.loads(write_topology(app, tmp_path / "topology.json").read_text())
    assert {k: data[k] for k in ("directed", "multigraph")} == {"directed": False,
                                                                 "multigraph": False}
    assert {n["id"] for n in data["nodes"]} == set(app.topo.switches) | set(app.topo.hosts)
    assert len(data["links"]) == len(app.topo.links)
    # networkx itself reads it (the format p4-utils' load_topo hands to it).
    graph = nx.node_link_graph(data, edges="links")
    assert graph.number_of_edges() == len(app.topo.links)


def test_queries_answer_what_the_topology_says(tmp_path: Path) -> None:
    app, topo = loaded(TRACE / "p4app.json", tmp_path)
    t = app.topo
    assert sorted(topo.get_p4switches()) == sorted(t.switches)
    assert sorted(topo.get_hosts()) == sorted(t.hosts)
    for name, sw in t.switches.items():
        assert topo.get_p4switch_id(name) == sw.device_id
        assert topo.get_thrift_port(name) == switch_ports(app)[name][0]
        assert topo.get_grpc_port(name) == switch_ports(app)[name][1]
        for port, peer, peer_port in t.port_peers(name):
            assert topo.node_to_node_port_num(name, peer) == port
            assert topo.node_to_node_port_num(peer, name) == peer_port
            assert topo.port_to_node(name, port) == peer
            assert topo.interface_to_port(name, f"{name}-eth{port}") == port
        assert sorted(topo.get_hosts_connected_to(name)) == sorted(
            p for _, p, _ in t.port_peers(name) if p in t.hosts)
    for name, host in t.hosts.items():
        switch, port = t.host_switch(name)
        assert topo.get_host_ip(name) == host.ip
        assert topo.get_host_mac(name) == host.mac
        assert topo.get_host_name(host.ip) == name
        assert topo.get_host_gateway_name(name) == switch
        # l3: the switch side of a host link is the host's gateway.
        assert topo.node_to_node_interface_ip(switch, name) == f"{app.gateways[name]}/24"


def test_paths_and_l3_switch_addresses(tmp_path: Path) -> None:
    app, topo = loaded(TRACE / "p4app.json", tmp_path)
    paths = topo.get_shortest_paths_between_nodes("s1", "s6")
    assert sorted(p[1] for p in paths) == ["s2", "s3", "s4", "s5"]
    assert all(len(p) == 3 and p[0] == "s1" and p[-1] == "s6" for p in paths)
    assert topo.node_to_node_interface_ip("s1", "s2") == "20.1.2.1/24"
    assert topo.node_to_node_interface_ip("s2", "s1") == "20.1.2.2/24"
    assert topo.subnet("s1", "s2") == "20.1.2.0/24"


@pytest.mark.parametrize("front_door", ["p4app.json", "network.py"])
def test_link_weights_steer_shortest_paths(tmp_path: Path, front_door: str) -> None:
    """12-Fast-Reroute weighs s3-s4 at 5 and the diagonals at 10 (in its
    p4app.json and its NetworkAPI script alike)."""
    _, topo = loaded(REROUTE / front_door, tmp_path)
    assert topo.edges["s3", "s4"]["weight"] == 5
    assert topo.get_shortest_paths_between_nodes("s1", "s3") == [("s1", "s2", "s3")]
    assert topo.get_shortest_paths_between_nodes("s3", "s4") == [("s3", "s2", "s1", "s4")]
    assert nx.dijkstra_path_length(topo, "s1", "s3") == 2


def test_unknown_names_raise_as_p4utils(tmp_path: Path) -> None:
    _, topo = loaded(TRACE / "p4app.json", tmp_path)
    with pytest.raises(NodeDoesNotExist):
        topo.get_hosts_connected_to("s9")
    with pytest.raises(IntfDoesNotExist):
        topo.node_to_node_port_num("h1", "s6")
    with pytest.raises(TypeError, match="is not a host"):
        topo.get_host_ip("s1")
    with pytest.raises(TypeError, match="is not a P4 switch"):
        topo.get_thrift_port("h1")


def test_cpu_port_as_p4utils_numbers_it(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """04-L2_Learning's cpu variant: the CPU port follows the switch's last link."""
    learn = EXERCISES / "04-L2_Learning"
    app, topo = loaded(learn / "p4app_cpu.json", tmp_path)
    last = max(port for port, _, _ in app.topo.port_peers("s1"))
    assert topo.get_cpu_port_index("s1") == last + 1 == app.cpu_ports["s1"]
    assert topo.get_cpu_port_intf("s1") == "s1-cpu-eth0"
    assert topo.get_ctl_cpu_intf("s1") == "s1-cpu-eth1"
    _, plain = loaded(learn / "p4app_digest.json", tmp_path)
    assert plain.get_cpu_port_index("s1") is None
    assert "Switch s1 has no cpu port." in capsys.readouterr().out
