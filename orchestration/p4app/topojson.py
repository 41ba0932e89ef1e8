"""``topology.json`` as p4-utils writes it when a network starts, so that
controllers' ``load_topo('topology.json')`` and other tools that read the
file see intbed's network.

The format is networkx node-link JSON (``directed``, ``multigraph``,
``graph``, ``nodes`` with ``id``, ``links`` with ``source``/``target``).
Switch nodes carry ``isSwitch``, ``isP4Switch``, ``isP4RuntimeSwitch``,
``device_id``, ``json_path``/``p4rt_path`` (where p4-utils' compiler
would write them) and the Thrift and gRPC ports p4-utils would give them
(9090 and 9559 up, in name order), and with a CPU port ``cpu_port_num``,
``cpu_intf`` and ``cpu_ctl_intf``; host nodes ``isHost`` and ``ip``. Each
link lists both ends: ``node1``/``node2``, ``port1``/``port2``,
``intfName1``/``intfName2`` (``s1-eth2``, a host's ``h1-eth0``),
``addr1``/``addr2`` (MACs), ``ip1``/``ip2`` where p4-utils assigns one
(hosts; with the l3 strategy also the switch side: the gateway toward a
host, ``20.A.B.1/24`` and ``.2/24`` between switches ``sA`` and ``sB``),
``bw``, ``delay``, ``loss`` and ``weight`` (1 unless the link gives one).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from orchestration.p4app.spec import P4App

THRIFT_BASE = 9090
GRPC_BASE = 9559
_NUMBER = re.compile(r"(\d+)$")


def switch_ports(app: P4App) -> dict[str, tuple[int, int]]:
    """switch -> (Thrift port, gRPC port) as p4-utils numbers them."""
    return {name: (THRIFT_BASE + i, GRPC_BASE + i)
            for i, name in enumerate(sorted(app.topo.switches))}


def _compiled_paths(program: Path | None) -> dict[str, str]:
    """Where p4-utils' compiler leaves a program's BMv2 JSON and P4Info text
    (beside the source); P4Runtime controllers pass them on, intbed's API
    does not read them (the switch already runs the program)."""
    if program is None:
        return {}
    return {"json_path": str(program.with_suffix(".json")),
            "p4rt_path": str(program.with_name(f"{program.stem}_p4rt.txt"))}


def cpu_interfaces(switch: str) -> tuple[str, str]:
    """p4-utils' CPU veth: the switch's end, and the end a controller sniffs."""
    return f"{switch}-cpu-eth0", f"{switch}-cpu-eth1"


def _intf(node: str, port: int) -> str:
    return f"{node}-eth{port}"


def _number(name: str, fallback: int) -> int:
    m = _NUMBER.search(name)
    return int(m.group(1)) if m else fallback


def topology_data(app: P4App) -> dict[str, Any]:
    topo = app.topo
    ports = switch_ports(app)
    nodes: list[dict[str, Any]] = []
    for name, host in topo.hosts.items():
        node: dict[str, Any] = {"id": name, "isHost": True, "ip": f"{host.ip}/{host.prefix_len}",
                                "mac": host.mac}
        if name in app.gateways:
            node["defaultRoute"] = f"via {app.gateways[name]}"
        nodes.append(node)
    for name, sw in topo.switches.items():
        thrift, grpc = ports[name]
        nodes.append({"id": name, "isSwitch": True, "isP4Switch": True,
                      "isP4RuntimeSwitch": True, "device_id": sw.device_id,
                      "thrift_port": thrift, "grpc_port": grpc, "cpu_port": False,
                      "p4_src": str(app.programs.get(name, "")),
                      **_compiled_paths(app.programs.get(name))})
        if name in app.cpu_ports:
            inner, outer = cpu_interfaces(name)
            nodes[-1].update(cpu_port=True, cpu_port_num=app.cpu_ports[name], cpu_intf=inner,
                             cpu_ctl_intf=outer)
    links = []
    for link in topo.links:
        edge: dict[str, Any] = {"source": link.a, "target": link.b, "node1": link.a,
                                "node2": link.b, "port1": link.a_port, "port2": link.b_port,
                                "intfName1": _intf(link.a, link.a_port),
                                "intfName2": _intf(link.b, link.b_port),
                                "bw": link.bandwidth_mbps, "delay": f"{link.delay_us:g}us",
                                "loss": link.loss * 100,
                                "weight": app.weights.get((link.a, link.b),
                                                          app.weights.get((link.b, link.a), 1))}
        for end, node_name in (("1", link.a), ("2", link.b)):
            host = topo.hosts.get(node_name)
            if host is not None:
                edge[f"addr{end}"] = host.mac
                edge[f"ip{end}"] = f"{host.ip}/{host.prefix_len}"
            else:
                edge[f"addr{end}"] = topo.switches[node_name].mac
        _switch_ips(app, edge, link.a, link.b)
        links.append(edge)
    return {"directed": False, "multigraph": False, "graph": {}, "nodes": nodes,
            "links": links}


def _switch_ips(app: P4App, edge: dict[str, Any], a: str, b: str) -> None:
    """The switch-side addresses p4-utils gives: a host's gateway, and with
    the l3 strategy the 20.A.B.0/24 subnet between two switches."""
    topo = app.topo
    for end, me, other in (("1", a, b), ("2", b, a)):
        if me in topo.switches and other in app.gateways:
            edge[f"ip{end}"] = f"{app.gateways[other]}/{topo.hosts[other].prefix_len}"
    if app.strategy == "l3" and a in topo.switches and b in topo.switches:
        na = _number(a, topo.switches[a].device_id)
        nb = _number(b, topo.switches[b].device_id)
        edge["ip1"], edge["ip2"] = f"20.{na}.{nb}.1/24", f"20.{na}.{nb}.2/24"


def write_topology(app: P4App, path: Path) -> Path:
    path.write_text(json.dumps(topology_data(app), indent=1))
    return path
