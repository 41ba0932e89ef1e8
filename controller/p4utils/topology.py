"""``NetworkGraph``: p4-utils' queries over a ``topology.json``.

The file is networkx node-link JSON as p4-utils writes it: nodes carry
``isHost``/``isSwitch``/``isP4Switch`` and the switch's ports and ids,
each edge the two ends' attributes suffixed ``1`` (``node1``'s side) and
``2``. A query about the interface of ``a`` facing ``b`` sees that edge's
attributes from ``a``'s side: its own without the digit, the far end's
with ``_neigh`` (``port``, ``port_neigh``, ``addr``, ``ip``, ``intfName``).
"""

from __future__ import annotations

import json
from typing import Any

import networkx as nx
from networkx.readwrite import json_graph


class NodeDoesNotExist(Exception):
    def __init__(self, node: str) -> None:
        super().__init__(node)
        self.node = node

    def __str__(self) -> str:
        return f"Node {self.node} does not exist."


class IntfDoesNotExist(Exception):
    def __init__(self, a: str, b: str) -> None:
        super().__init__(a, b)
        self.a, self.b = a, b

    def __str__(self) -> str:
        return f"Interface between {self.a} and {self.b} does not exist."


class InvalidHostIP(Exception):
    def __init__(self, ip: str) -> None:
        super().__init__(ip)
        self.ip = ip

    def __str__(self) -> str:
        return f"No host has IP {self.ip}."


def _side(link: dict[str, Any], me: str) -> dict[str, Any]:
    """The edge's attributes as seen from ``me``'s end."""
    mine, theirs = ("1", "2") if link.get("node1") == me else ("2", "1")
    out: dict[str, Any] = {}
    for key, value in link.items():
        if key.endswith(mine):
            out[key[:-1]] = value
        elif key.endswith(theirs):
            out[key[:-1] + "_neigh"] = value
        else:
            out[key] = value
    return out


def _select(items: dict[str, dict[str, Any]], fields: list[str]) -> dict[str, Any]:
    """p4-utils' ``fields``: all attributes, one value, or a tuple of values."""
    if not fields:
        return items
    if len(fields) == 1:
        return {k: v.get(fields[0]) for k, v in items.items()}
    return {k: tuple(v.get(f) for f in fields) for k, v in items.items()}


class NetworkGraph(nx.Graph):
    """A p4-utils topology: an undirected graph with p4-utils' queries."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.edge_to_intf: dict[str, dict[str, dict[str, Any]]] = {n: {} for n in self.nodes}
        self.node_to_intf: dict[str, dict[str, dict[str, Any]]] = {n: {} for n in self.nodes}
        self.ip_to_host: dict[str, dict[str, Any]] = {}
        for a, b, link in self.edges(data=True):
            for me, other in ((a, b), (b, a)):
                intf = _side(link, me)
                self.edge_to_intf[me][other] = intf
                self.node_to_intf[me][intf.get("intfName", f"{me}-{other}")] = intf
        for name, attrs in self.nodes(data=True):
            if attrs.get("isHost") and attrs.get("ip"):
                self.ip_to_host[attrs["ip"].split("/")[0]] = {"name": name, **attrs}

    # -------------------------------------------------------------- node kinds

    def _kind(self, flag: str, fields: list[str]) -> dict[str, Any]:
        return _select({n: a for n, a in self.nodes(data=True) if a.get(flag)}, fields)

    def get_nodes(self, fields: list[str] | None = None) -> dict[str, Any]:
        return _select(dict(self.nodes(data=True)), fields or [])

    def get_hosts(self, fields: list[str] | None = None) -> dict[str, Any]:
        return self._kind("isHost", fields or [])

    def get_switches(self, fields: list[str] | None = None) -> dict[str, Any]:
        return self._kind("isSwitch", fields or [])

    def get_p4switches(self, fields: list[str] | None = None) -> dict[str, Any]:
        return self._kind("isP4Switch", fields or [])

    def get_p4rtswitches(self, fields: list[str] | None = None) -> dict[str, Any]:
        return self._kind("isP4RuntimeSwitch", fields or [])

    def get_routers(self, fields: list[str] | None = None) -> dict[str, Any]:
        return self._kind("isRouter", fields or [])

    def isNode(self, name: str) -> bool:  # noqa: N802 - p4-utils' names
        return name in self.nodes

    def checkNode(self, name: str) -> None:  # noqa: N802
        if name not in self.nodes:
            raise NodeDoesNotExist(name)

    def _flag(self, name: str, flag: str) -> bool:
        self.checkNode(name)
        return bool(self.nodes[name].get(flag, False))

    def isHost(self, name: str) -> bool:  # noqa: N802
        return self._flag(name, "isHost")

    def isSwitch(self, name: str) -> bool:  # noqa: N802
        return self._flag(name, "isSwitch")

    def isP4Switch(self, name: str) -> bool:  # noqa: N802
        return self._flag(name, "isP4Switch")

    def isP4RuntimeSwitch(self, name: str) -> bool:  # noqa: N802
        return self._flag(name, "isP4RuntimeSwitch")

    def isRouter(self, name: str) -> bool:  # noqa: N802
        return self._flag(name, "isRouter")

    def isType(self, name: str, node_type: str) -> bool:  # noqa: N802
        flags = {"host": "isHost", "switch": "isSwitch", "p4switch": "isP4Switch",
                 "p4rtswitch": "isP4RuntimeSwitch", "router": "isRouter"}
        if node_type not in flags:
            raise ValueError(f"unknown node type {node_type!r} (one of {', '.join(flags)})")
        return self._flag(name, flags[node_type])

    def isIntf(self, node1: str, node2: str) -> bool:  # noqa: N802
        return node2 in self.edge_to_intf.get(node1, {})

    def checkIntf(self, node1: str, node2: str) -> None:  # noqa: N802
        if not self.isIntf(node1, node2):
            raise IntfDoesNotExist(node1, node2)

    # -------------------------------------------------------------- interfaces

    def get_intfs(self, fields: list[str] | None = None) -> dict[str, dict[str, Any]]:
        return {n: _select(d, fields or []) for n, d in self.edge_to_intf.items()}

    def get_node_intfs(self, fields: list[str] | None = None) -> dict[str, dict[str, Any]]:
        return {n: _select(d, fields or []) for n, d in self.node_to_intf.items()}

    def _intf(self, node: str, intf: str) -> dict[str, Any]:
        self.checkNode(node)
        found = self.node_to_intf[node].get(intf)
        if found is None:
            raise IntfDoesNotExist(intf, node)
        return found

    def _facing(self, node1: str, node2: str, key: str) -> Any:
        self.checkIntf(node1, node2)
        return self.edge_to_intf[node1][node2].get(key)

    def get_interfaces(self, name: str) -> list[str]:
        self.checkNode(name)
        return list(self.node_to_intf[name])

    def get_interfaces_to_node(self, node: str) -> dict[str, str]:
        self.checkNode(node)
        return {intf: p["node_neigh"] for intf, p in self.node_to_intf[node].items()}

    def interface_to_node(self, node: str, intf: str) -> str:
        return self._intf(node, intf)["node_neigh"]

    def interface_to_port(self, node: str, intf: str) -> int:
        return self._intf(node, intf)["port"]

    def node_interface_ip(self, node: str, intf: str) -> str | None:
        return self._intf(node, intf).get("ip")

    def node_interface_bw(self, node: str, intf: str) -> float | None:
        return self._intf(node, intf).get("bw")

    def node_to_node_interface_ip(self, node1: str, node2: str) -> str | None:
        return self._facing(node1, node2, "ip")

    def node_to_node_interface_bw(self, node1: str, node2: str) -> float | None:
        return self._facing(node1, node2, "bw")

    def node_to_node_port_num(self, node1: str, node2: str) -> int:
        return self._facing(node1, node2, "port")

    def node_to_node_mac(self, node1: str, node2: str) -> str:
        return self._facing(node1, node2, "addr")

    def port_to_node(self, node: str, port: int) -> str:
        for neighbor in self.get_neighbors(node):
            if self.node_to_node_port_num(node, neighbor) == port:
                return neighbor
        raise Exception(f"Node {node} does not have port {port}")

    def subnet(self, node1: str, node2: str) -> str:
        import ipaddress

        ip = self.node_to_node_interface_ip(node1, node2)
        if ip is None:
            raise IntfDoesNotExist(node1, node2)
        return str(ipaddress.ip_interface(ip).network)

    # ----------------------------------------------------------------- switches

    def _p4(self, name: str, key: str, runtime: bool = False) -> Any:
        if not (self.isP4RuntimeSwitch(name) if runtime else self.isP4Switch(name)):
            kind = "P4 runtime switch" if runtime else "P4 switch"
            raise TypeError(f"{name} is not a {kind}.")
        return self.nodes[name][key]

    def get_thrift_port(self, name: str) -> int:
        return self._p4(name, "thrift_port")

    def get_thrift_ip(self, name: str) -> str:
        self._p4(name, "thrift_port")
        return "0.0.0.0"

    def get_grpc_port(self, name: str) -> int:
        return self._p4(name, "grpc_port", runtime=True)

    def get_grpc_ip(self, name: str) -> str:
        self._p4(name, "grpc_port", runtime=True)
        return "0.0.0.0"

    def get_p4switch_id(self, name: str) -> int:
        return self._p4(name, "device_id")

    def _cpu(self, name: str, key: str, quiet: bool) -> Any:
        if self.isP4Switch(name) and self.nodes[name].get("cpu_port"):
            return self.nodes[name][key]
        if not quiet:
            print(f"Switch {name} has no cpu port.")
        return None

    def get_cpu_port_intf(self, name: str, quiet: bool = False) -> str | None:
        return self._cpu(name, "cpu_intf", quiet)

    def get_cpu_port_index(self, name: str, quiet: bool = False) -> int | None:
        return self._cpu(name, "cpu_port_num", quiet)

    def get_ctl_cpu_intf(self, name: str) -> str:
        found = self._cpu(name, "cpu_ctl_intf", True)
        if found is None:
            raise TypeError(f"Switch {name} has no cpu port.")
        return found

    # -------------------------------------------------------------------- hosts

    def _host(self, name: str) -> dict[str, Any]:
        if not self.isHost(name):
            raise TypeError(f"{name} is not a host.")
        return self.nodes[name]

    def get_host_name(self, ip: str) -> str:
        found = self.ip_to_host.get(ip)
        if found is None:
            raise InvalidHostIP(ip)
        return found["name"]

    def get_host_first_interface(self, name: str) -> str:
        self._host(name)
        return next(iter(self.node_to_intf[name]))

    def get_host_gateway_name(self, name: str) -> str:
        return self._intf(name, self.get_host_first_interface(name))["node_neigh"]

    def get_host_ip(self, name: str) -> str | None:
        ip = self._host(name).get("ip")
        return None if ip is None else ip.split("/")[0]

    def get_host_mac(self, name: str) -> str:
        return self._intf(name, self.get_host_first_interface(name))["addr"]

    # ---------------------------------------------------------------- neighbours

    def get_neighbors(self, name: str) -> list[str]:
        return list(self.neighbors(name))

    def are_neighbors(self, node1: str, node2: str) -> bool:
        self.checkNode(node1)
        self.checkNode(node2)
        return self.has_edge(node1, node2)

    def _connected(self, name: str, test: str) -> list[str]:
        self.checkNode(name)
        return [n for n in self.neighbors(name) if self.nodes[n].get(test)]

    def get_hosts_connected_to(self, name: str) -> list[str]:
        return self._connected(name, "isHost")

    def get_switches_connected_to(self, name: str) -> list[str]:
        return self._connected(name, "isSwitch")

    def get_p4switches_connected_to(self, name: str) -> list[str]:
        return self._connected(name, "isP4Switch")

    def get_routers_connected_to(self, name: str) -> list[str]:
        return self._connected(name, "isRouter")

    def get_direct_host_networks_from_switch(self, name: str) -> set[str]:
        return {self.subnet(h, name) for h in self.get_hosts_connected_to(name)}

    # -------------------------------------------------------------------- paths

    def get_shortest_paths_between_nodes(self, node1: str, node2: str) -> list[tuple[str, ...]]:
        self.checkNode(node1)
        self.checkNode(node2)
        return [tuple(p) for p in nx.all_shortest_paths(self, node1, node2, "weight")]

    def get_all_paths_between_nodes(self, node1: str, node2: str) -> list[tuple[str, ...]]:
        self.checkNode(node1)
        self.checkNode(node2)
        return [tuple(p) for p in nx.shortest_simple_paths(self, node1, node2, "weight")]

    def total_number_of_paths(self) -> int:
        hosts = list(self.get_hosts())
        return sum(sum(1 for _ in nx.all_shortest_paths(self, a, b, "weight"))
                   for a in hosts for b in hosts if a != b)

    def keep_only_switches(self) -> nx.Graph:
        return self.subgraph(list(self.get_switches()))

    def keep_only_p4switches(self) -> nx.Graph:
        return self.subgraph(list(self.get_p4switches()))

    def keep_only_p4switches_and_hosts(self) -> nx.Graph:
        return self.subgraph([*self.get_p4switches(), *self.get_hosts()])


def load_topo(json_path: str) -> NetworkGraph:
    """The topology in ``json_path`` (p4-utils' ``load_topo``)."""
    with open(json_path) as f:
        data = json.load(f)
    edges = "links" if "links" in data else "edges"
    return NetworkGraph(json_graph.node_link_graph(data, edges=edges))
