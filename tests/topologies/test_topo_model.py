"""The Topology model built in code: port assignment, queries, validation."""

from __future__ import annotations

import pytest

from topologies.model import PortSpec, Topology, TopologyError, switch_mac


def small() -> Topology:
    topo = Topology("t")
    topo.add_switch("s1")
    topo.add_switch("s2", queue_depth=10)
    topo.add_host("h1", "00:00:00:00:00:01", "10.0.0.1")
    topo.add_host("h2", "00:00:00:00:00:02", "10.0.0.2")
    topo.add_link("h1", "s1")
    topo.add_link("s1", "s2", bandwidth_mbps=10)
    topo.add_link("s1", "s2", a_port=7)
    topo.add_link("s2", "h2")
    return topo


def test_ports_are_assigned_from_one_like_mininet() -> None:
    topo = small()
    assert [(k.a, k.a_port, k.b, k.b_port) for k in topo.links] == [
        ("h1", 0, "s1", 1), ("s1", 2, "s2", 1), ("s1", 7, "s2", 2), ("s2", 3, "h2", 0)]
    assert sorted(topo.switches["s1"].ports) == [1, 2, 7]
    assert topo.switches["s2"].device_id == 1


def test_queries() -> None:
    topo = small()
    assert topo.neighbors("s1") == ["h1", "s2"]
    assert topo.neighbors("h2") == ["s2"]
    assert topo.switch_port_to("s1", "s2") == 2
    assert topo.switch_port_to("h1", "s1") == 0
    assert topo.host_switch("h2") == ("s2", 3)
    assert [k.b_port for k in topo.links_of("s2")] == [1, 2, 0]
    assert topo.host_by_ip("10.0.0.2").name == "h2"
    with pytest.raises(TopologyError, match="'h1' has no link to 's2'"):
        topo.switch_port_to("h1", "s2")
    graph = topo.to_networkx()
    assert graph.number_of_edges("s1", "s2") == 2  # parallel links stay apart
    assert graph.nodes["h1"]["kind"] == "host"
    assert topo.switches["s1"].mac == "02:00:00:00:00:00"
    assert switch_mac(0x1234) == "02:00:00:00:12:34"


def test_errors_in_code_have_no_location() -> None:
    topo = small()
    with pytest.raises(TopologyError) as info:
        topo.add_link("s1", "s3")
    assert str(info.value) == ("error: link end b: unknown node 's3' (dangling link: no "
                               "switch or host of that name)")
    with pytest.raises(TopologyError, match="port 7 of 's1' used twice"):
        topo.add_link("s1", "s2", a_port=7)
    with pytest.raises(TopologyError, match="duplicate IP 10.0.0.1"):
        topo.add_host("h3", "00:00:00:00:00:03", "10.0.0.1")
    with pytest.raises(TopologyError, match="link joins two hosts"):
        topo.add_link("h1", "h2")
    with pytest.raises(TopologyError, match="device_id 1 is already used"):
        topo.add_switch("s9", 1)


def test_validate_sees_edits_made_in_place() -> None:
    topo = small()
    topo.validate()
    topo.hosts["h2"].ip = "10.0.0.1"
    with pytest.raises(TopologyError, match="duplicate IP"):
        topo.validate()
    topo = small()
    topo.links[1].loss = 2.0
    with pytest.raises(TopologyError, match=r"loss must be a number in \[0, 1\]"):
        topo.validate()
    topo = small()
    topo.switches["s1"].ports[9] = PortSpec(queue_depth=3)
    with pytest.raises(TopologyError, match="port 9 has settings but no link uses it"):
        topo.validate()
    topo = small()
    topo.add_host("h3", "02:00:00:00:00:01", "10.0.0.3")
    topo.add_link("h3", "s1")
    with pytest.raises(TopologyError, match="is the MAC of switch 's2'"):
        topo.validate()
