"""Topology YAML: round trips, and each bad description refused at its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from topologies.generators import GENERATORS, YAML_DIR, build_topology, fat_tree, intlabel_fabric
from topologies.model import PortSpec, Topology, TopologyError
from topologies.yamlio import dump_yaml, parse_yaml

GOOD = """\
name: small
switches:
  - {name: s1, device_id: 0}
  - name: s2
    device_id: 1
    queue_depth: 16
    ports:
      2: {queue_depth: 4, queue_rate_pps: 500}
hosts:
  - {name: h1, mac: "00:00:00:00:00:01", ip: 10.0.1.1}
  - {name: h2, mac: "00:00:00:00:00:02", ip: 10.0.2.1}
links:
  - {a: h1, b: s1}
  - {a: s1, b: s2, bandwidth_mbps: 100, delay_us: 25.5, loss: 0.01}
  - {a: h2, b: s2}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(text)
    return path


def load_error(tmp_path: Path, text: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(TopologyError) as info:
        Topology.load_yaml(path)
    return str(info.value).replace(str(path), "t.yaml")


def test_load_fills_ports_defaults_and_overrides(tmp_path: Path) -> None:
    topo = Topology.load_yaml(write(tmp_path, GOOD))
    assert topo.name == "small"
    assert [(k.a, k.a_port, k.b, k.b_port) for k in topo.links] == [
        ("h1", 0, "s1", 1), ("s1", 2, "s2", 1), ("h2", 0, "s2", 2)]
    s1, s2 = topo.switches["s1"], topo.switches["s2"]
    assert s1.ports == {1: PortSpec(), 2: PortSpec()}
    assert s2.ports == {1: PortSpec(), 2: PortSpec(4, 500)}
    assert (s2.port_queue_depth(1), s2.port_queue_depth(2)) == (16, 4)
    assert (s2.port_queue_rate_pps(1), s2.port_queue_rate_pps(2)) == (None, 500)
    assert (s1.queue_depth, s1.queue_rate_pps, s1.clock_offset_us) == (64, None, 0)
    link = topo.links[1]
    assert (link.bandwidth_mbps, link.delay_us, link.loss) == (100, 25.5, 0.01)
    assert (topo.links[0].bandwidth_mbps, topo.links[0].delay_us) == (1000.0, 10.0)
    assert topo.host_switch("h2") == ("s2", 2)


def test_round_trip_keeps_everything(tmp_path: Path) -> None:
    topo = Topology.load_yaml(write(tmp_path, GOOD))
    topo.switches["s1"].program = "p4src/l3_forward.p4"
    topo.switches["s1"].clock_offset_us = -40
    topo.switches["s1"].processing_rate_pps = 1e5
    out = tmp_path / "out.yaml"
    topo.save_yaml(out)
    again = Topology.load_yaml(out)
    assert again.to_dict() == topo.to_dict()
    assert again.switches == topo.switches
    assert again.hosts == topo.hosts
    assert again.links == topo.links
    assert dump_yaml(again) == out.read_text()


@pytest.mark.parametrize("make", [intlabel_fabric, lambda: fat_tree(4),
                                  lambda: GENERATORS["watts-strogatz"](n=12, k=4, p=0.3, seed=5),
                                  lambda: GENERATORS["line"](n=5)])
def test_generated_round_trip(tmp_path: Path, make) -> None:
    topo = make()
    path = tmp_path / "g.yaml"
    topo.save_yaml(path)
    again = Topology.load_yaml(path)
    assert again.to_dict() == topo.to_dict()
    assert again.links == topo.links


def test_from_dict_without_lines() -> None:
    data = {"switches": [{"name": "s1"}], "hosts": [{"name": "h1", "mac": "00:00:00:00:00:01",
                                                    "ip": "10.0.0.1"}],
            "links": [{"a": "s1", "b": "h1"}]}
    topo = Topology.from_dict(data)
    assert topo.links[0].a_port == 1 and topo.links[0].b_port == 0
    data["links"].append({"a": "s1", "b": "h9"})
    with pytest.raises(TopologyError) as info:
        Topology.from_dict(data)
    assert info.value.loc is None
    assert "unknown node 'h9'" in str(info.value)


def test_shipped_intlabel_yaml_matches_generator() -> None:
    shipped = Topology.load_yaml(YAML_DIR / "intlabel-fabric.yaml")
    assert shipped.to_dict() == intlabel_fabric().to_dict()


def test_shipped_diamond_by_name() -> None:
    topo = build_topology("diamond")
    assert topo.total_switch_ports() == 10
    assert topo.switches["s1"].port_queue_depth(2) == 8
    assert topo.switches["s1"].port_queue_depth(3) == 32
    assert topo.switches["s2"].clock_offset_us == 150


BAD = [
    # (description, yaml, expected "line: error: message" part)
    ("dangling link", GOOD + "  - {a: s2, b: s9}\n",
     "t.yaml:16: error: link end b: unknown node 's9' (dangling link: no switch or host of "
     "that name)"),
    ("duplicate IP", GOOD.replace("ip: 10.0.2.1", "ip: 10.0.1.1"),
     "t.yaml:11: error: host 'h2': duplicate IP 10.0.1.1, already the IP of host 'h1' "
     "(line 10)"),
    ("duplicate MAC", GOOD.replace('"00:00:00:00:00:02"', '"00:00:00:00:00:01"'),
     "t.yaml:11: error: host 'h2': duplicate MAC 00:00:00:00:00:01, already the MAC of host "
     "'h1' (line 10)"),
    ("port used twice", GOOD + "  - {a: s2, a_port: 1, b: s1}\n",
     "t.yaml:16: error: port 1 of 's2' used twice: already used by the link s1-s2 (line 14)"),
    ("port used twice (switch)", GOOD.replace("  - {a: h2, b: s2}",
                                              "  - {a: h2, b: s2, b_port: 1}"),
     "t.yaml:15: error: port 1 of 's2' used twice: already used by the link s1-s2 (line 14)"),
    ("host used twice", GOOD + "  - {a: h1, b: s2}\n",
     "t.yaml:16: error: port 0 of 'h1' used twice: already used by the link h1-s1 (line 13)"),
    ("duplicate name", GOOD.replace("{name: h2,", "{name: s1,"),
     "t.yaml:11: error: duplicate node name 's1': already a switch (line 3)"),
    ("negative bandwidth", GOOD.replace("bandwidth_mbps: 100", "bandwidth_mbps: -5"),
     "t.yaml:14: error: bandwidth_mbps must be a number > 0, not -5"),
    ("loss above 1", GOOD.replace("loss: 0.01", "loss: 1.5"),
     "t.yaml:14: error: loss must be a number in [0, 1], not 1.5"),
    ("negative delay", GOOD.replace("delay_us: 25.5", "delay_us: -1"),
     "t.yaml:14: error: delay_us must be a number >= 0, not -1"),
    ("unknown link key", GOOD.replace("loss: 0.01", "los: 0.01"),
     "t.yaml:14: error: link: unknown key 'los' (known: a, a_port, b, b_port, bandwidth_mbps, "
     "delay_us, loss)"),
    ("unknown switch key on its own line", GOOD.replace("    queue_depth: 16\n",
                                                        "    queue_depht: 16\n"),
     "t.yaml:6: error: switch: unknown key 'queue_depht' (known: name, device_id, program, "
     "queue_depth, queue_rate_pps, processing_rate_pps, clock_offset_us, ports)"),
    ("unknown top-level key", GOOD + "routers: []\n",
     "t.yaml:16: error: topology: unknown key 'routers' (known: name, switches, hosts, links)"),
    ("bad queue depth on its own line", GOOD.replace("    queue_depth: 16\n",
                                                     "    queue_depth: 0\n"),
     "t.yaml:6: error: queue_depth must be an integer in 1..2147483647, not 0"),
    ("bad port override", GOOD.replace("{queue_depth: 4,", "{queue_depth: -4,"),
     "t.yaml:7: error: port 2 queue_depth must be an integer in 1..2147483647, not -4"),
    ("override of an unused port", GOOD.replace("      2: {", "      7: {"),
     "t.yaml:4: error: switch 's2': port 7 has settings but no link uses it"),
    ("duplicate device id", GOOD.replace("    device_id: 1\n", "    device_id: 0\n"),
     "t.yaml:5: error: switch 's2': device_id 0 is already used by switch 's1' (line 3)"),
    ("unquoted MAC read as a number", GOOD.replace('"00:00:00:00:00:02"', "10:00:00:00:00:02"),
     "t.yaml:11: error: host 'h2': MAC must be a string like '00:00:00:00:00:01' (quote it in "
     "YAML), not 7776000002"),
    ("bad IP", GOOD.replace("ip: 10.0.2.1", "ip: 10.0.300.1"),
     "t.yaml:11: error: host 'h2': IP must be a dotted IPv4 address, not '10.0.300.1'"),
    ("missing key", GOOD.replace("{name: h2, ", "{"),
     "t.yaml:11: error: host: missing key 'name'"),
    ("host without link", GOOD.replace("  - {a: h1, b: s1}\n", ""),
     "t.yaml:10: error: host 'h1' has no link"),
    ("self loop", GOOD + "  - {a: s1, b: s1}\n", "t.yaml:16: error: link joins 's1' to itself"),
    ("port above 510", GOOD.replace("  - {a: h2, b: s2}", "  - {a: h2, b: s2, b_port: 511}"),
     "t.yaml:15: error: b_port must be an integer in 0..510, not 511"),
    ("host port other than 0", GOOD.replace("  - {a: h2, b: s2}", "  - {a: h2, a_port: 1, b: s2}"),
     "t.yaml:15: error: a_port: host 'h2' has only port 0, not 1"),
    ("key given twice", GOOD.replace("{name: s1, device_id: 0}", "{name: s1, name: s3}"),
     "t.yaml:3: error: key 'name' given twice (first at line 3)"),
    ("syntax error", GOOD.replace("  - {a: h1, b: s1}", "  - {a: h1, b: s1"),
     "t.yaml:13: error: YAML syntax: flow mapping not closed "
     "(expected ',' or '}', but got '{' at line 14)"),
    ("section not a list", "switches: {s1: 1}\n",
     "t.yaml:1: error: 'switches' must be a list, not a mapping"),
]


@pytest.mark.parametrize(("text", "expected"), [case[1:] for case in BAD],
                         ids=[case[0] for case in BAD])
def test_bad_yaml_is_refused_at_its_line(tmp_path: Path, text: str, expected: str) -> None:
    assert load_error(tmp_path, text) == expected


def test_issue_acceptance_cases_name_line_and_problem(tmp_path: Path) -> None:
    dangling = load_error(tmp_path, GOOD.replace("{a: s1, b: s2,", "{a: s1, b: s3,"))
    assert dangling.startswith("t.yaml:14: error: ") and "dangling link" in dangling
    dup_ip = load_error(tmp_path, GOOD.replace("ip: 10.0.2.1", "ip: 10.0.1.1"))
    assert dup_ip.startswith("t.yaml:11: error: ") and "duplicate IP 10.0.1.1" in dup_ip
    twice = load_error(tmp_path, GOOD.replace("{a: s1, b: s2,", "{a: s1, a_port: 1, b: s2,"))
    assert twice == ("t.yaml:14: error: port 1 of 's1' used twice: already used by the link "
                     "h1-s1 (line 13)")


def test_parse_yaml_keeps_lines() -> None:
    tree = parse_yaml("a:\n  - {x: 1}\n  - y: 2\n    z: 3\n")
    assert tree.line == 1 and tree.key_lines == {"a": 1}
    assert tree["a"].item_lines == [2, 3]
    assert tree["a"][1].key_lines == {"y": 3, "z": 4}
