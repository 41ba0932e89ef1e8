"""The Topology model: a plain description of switches, hosts and links.

As in Mininet's ``Topo``, a Topology only describes a network; each target
(``sim``, ``mininet``, ``bmv2``) builds its own network from it. Every problem
in a description raises :class:`TopologyError`, located at the YAML line when
the description came from a file (see :mod:`topologies.yamlio`).
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from common.errors import IntbedError, Loc

if TYPE_CHECKING:
    import networkx as nx

# simple_switch's egress queues hold 64 packets per port unless told otherwise.
DEFAULT_QUEUE_DEPTH = 64
# v1model ports are bit<9> and BMv2 drops on port 511, so 0..510 can carry links.
MAX_PORT = 510
# A host's interface prefix when none is given; routes are /32 per host regardless.
DEFAULT_HOST_PREFIX_LEN = 24
# Hosts have one interface (Mininet's h-eth0): port 0.
HOST_PORT = 0
# Switch ports are numbered from 1 when a link does not name one, as in Mininet.
FIRST_SWITCH_PORT = 1

_MAC_RE = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


class TopologyError(IntbedError):
    """A topology description that is inconsistent or ill-formed.

    ``key`` names the field at fault, so a YAML loader can point at its line.
    """

    def __init__(self, message: str, loc: Loc | None = None, key: str | None = None) -> None:
        super().__init__(message, loc)
        self.key = key


@dataclass(slots=True)
class PortSpec:
    """Per-port overrides of the switch's queue settings (None: the switch's)."""

    queue_depth: int | None = None
    queue_rate_pps: float | None = None


@dataclass(slots=True)
class SwitchSpec:
    """One P4 switch. ``ports`` holds every port a link uses (filled by links)."""

    name: str
    device_id: int
    program: str | None = None
    queue_depth: int = DEFAULT_QUEUE_DEPTH
    queue_rate_pps: float | None = None  # None: drained at line rate
    processing_rate_pps: float | None = None  # None: no processing limit
    clock_offset_us: int = 0
    ports: dict[int, PortSpec] = field(default_factory=dict)

    @property
    def mac(self) -> str:
        return switch_mac(self.device_id)

    def port_queue_depth(self, port: int) -> int:
        spec = self.ports.get(port)
        if spec is not None and spec.queue_depth is not None:
            return spec.queue_depth
        return self.queue_depth

    def port_queue_rate_pps(self, port: int) -> float | None:
        spec = self.ports.get(port)
        if spec is not None and spec.queue_rate_pps is not None:
            return spec.queue_rate_pps
        return self.queue_rate_pps


@dataclass(slots=True)
class HostSpec:
    """One end host with a single interface (port 0).

    ``prefix_len`` is the prefix of the host's interface address; routing
    installs a /32 route per host whatever it is.
    """

    name: str
    mac: str
    ip: str
    prefix_len: int = DEFAULT_HOST_PREFIX_LEN


@dataclass(slots=True)
class LinkSpec:
    """A full-duplex link; parameters apply to each direction."""

    a: str
    a_port: int
    b: str
    b_port: int
    bandwidth_mbps: float = 1000.0
    delay_us: float = 10.0
    loss: float = 0.0

    def peer(self, node: str, port: int) -> tuple[str, int]:
        """The far end seen from (node, port)."""
        if node == self.a and port == self.a_port:
            return self.b, self.b_port
        return self.a, self.a_port


def switch_mac(device_id: int) -> str:
    """The MAC a switch answers to: locally administered (02:...) and built
    from the 40 low bits of its device id, so it never clashes with the
    00:00:00:00:xx:yy addresses the generators give hosts."""
    value = (0x02 << 40) | (device_id & ((1 << 40) - 1))
    return mac_to_str(value)


def mac_to_int(mac: str) -> int:
    return int(mac.replace(":", ""), 16)


def mac_to_str(value: int) -> str:
    raw = f"{value:012x}"
    return ":".join(raw[i:i + 2] for i in range(0, 12, 2))


def ip_to_int(ip: str) -> int:
    return int(ipaddress.IPv4Address(ip))


class Topology:
    """Switches, hosts and links with numbered ports.

    Build it with ``add_switch``, ``add_host`` and ``add_link`` (which check
    each addition at once), or load it with :meth:`load_yaml`. ``locs`` maps
    ``("switch"|"host"|"link", name or index)`` to where it was declared.
    """

    def __init__(self, name: str = "topology") -> None:
        self.name = name
        self.switches: dict[str, SwitchSpec] = {}
        self.hosts: dict[str, HostSpec] = {}
        self.links: list[LinkSpec] = []
        self.locs: dict[tuple[str, Any], Loc] = {}
        # node -> {port: index of the link using it}
        self._ports: dict[str, dict[int, int]] = {}
        # indexes for the uniqueness checks: value -> owner's name
        self._device_ids: dict[int, str] = {}
        self._ips: dict[int, str] = {}
        self._macs: dict[int, str] = {}

    # ------------------------------------------------------------------ build
    def add_switch(self, name: str, device_id: int | None = None, *,
                   loc: Loc | None = None, **params: Any) -> SwitchSpec:
        """Add a switch; ``device_id`` defaults to the lowest unused id."""
        self._check_new_name(name, loc)
        used = self._device_ids
        if device_id is None:
            device_id = len(used)
            while device_id in used:
                device_id += 1
        _check_int("device_id", device_id, 0, (1 << 64) - 1, loc)
        other = used.get(device_id)
        if other is not None:
            raise TopologyError(
                f"switch '{name}': device_id {device_id} is already used by switch "
                f"'{other}'{self._where('switch', other)}", loc, "device_id")
        spec = SwitchSpec(name, device_id, **params)
        _check_switch(spec, loc)
        self.switches[name] = spec
        used[device_id] = name
        if loc is not None:
            self.locs[("switch", name)] = loc
        return spec

    def add_host(self, name: str, mac: str, ip: str,
                 prefix_len: int = DEFAULT_HOST_PREFIX_LEN, *,
                 loc: Loc | None = None) -> HostSpec:
        self._check_new_name(name, loc)
        spec = HostSpec(name, mac, ip, prefix_len)
        _check_host(spec, loc)
        ip_value, mac_value = ip_to_int(ip), mac_to_int(mac)
        other = self._ips.get(ip_value)
        if other is not None:
            raise TopologyError(
                f"host '{name}': duplicate IP {ip}, already the IP of host "
                f"'{other}'{self._where('host', other)}", loc, "ip")
        other = self._macs.get(mac_value)
        if other is not None:
            raise TopologyError(
                f"host '{name}': duplicate MAC {mac}, already the MAC of host "
                f"'{other}'{self._where('host', other)}", loc, "mac")
        self.hosts[name] = spec
        self._ips[ip_value] = name
        self._macs[mac_value] = name
        if loc is not None:
            self.locs[("host", name)] = loc
        return spec

    def add_link(self, a: str, b: str, a_port: int | None = None, b_port: int | None = None,
                 *, loc: Loc | None = None, **params: Any) -> LinkSpec:
        """Link two nodes; a switch port left out is the switch's next free
        port counting from 1, a host's port is always 0."""
        for end, node in (("a", a), ("b", b)):
            if node not in self.switches and node not in self.hosts:
                raise TopologyError(
                    f"link end {end}: unknown node '{node}' (dangling link: no switch or host "
                    "of that name)", loc, end)
        if a == b:
            raise TopologyError(f"link joins '{a}' to itself", loc)
        if a in self.hosts and b in self.hosts:
            raise TopologyError(f"link joins two hosts ('{a}', '{b}'); hosts attach to "
                                "switches", loc)
        a_port = self._pick_port(a, a_port, "a_port", loc)
        b_port = self._pick_port(b, b_port, "b_port", loc)
        link = LinkSpec(a, a_port, b, b_port, **params)
        _check_link(link, loc)
        index = len(self.links)
        self.links.append(link)
        for node, port in ((a, a_port), (b, b_port)):
            self._ports.setdefault(node, {})[port] = index
            if node in self.switches:
                self.switches[node].ports.setdefault(port, PortSpec())
        if loc is not None:
            self.locs[("link", index)] = loc
        return link

    def _pick_port(self, node: str, port: int | None, key: str, loc: Loc | None) -> int:
        if node in self.hosts:
            if port is None:
                port = HOST_PORT
            if port != HOST_PORT or isinstance(port, bool):
                raise TopologyError(f"{key}: host '{node}' has only port {HOST_PORT}, "
                                    f"not {port!r}", loc, key)
        elif port is None:
            used_ports = self._ports.get(node, {})
            port = FIRST_SWITCH_PORT
            while port in used_ports:
                port += 1
        _check_int(key, port, 0, MAX_PORT, loc)
        used = self._ports.get(node, {}).get(port)
        if used is not None:
            other = self.links[used]
            raise TopologyError(
                f"port {port} of '{node}' used twice: already used by the link "
                f"{other.a}-{other.b}{self._where('link', used)}", loc, key)
        return port

    def _check_new_name(self, name: str, loc: Loc | None) -> None:
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise TopologyError(f"bad node name {name!r}: use letters, digits, '_', '.', '-', "
                                "starting with a letter", loc, "name")
        for kind, table in (("switch", self.switches), ("host", self.hosts)):
            if name in table:
                raise TopologyError(f"duplicate node name '{name}': already a {kind}"
                                    f"{self._where(kind, name)}", loc, "name")

    def _where(self, kind: str, key: Any) -> str:
        loc = self.locs.get((kind, key))
        return f" (line {loc.line})" if loc is not None else ""

    # ------------------------------------------------------------------ query
    def nodes(self) -> Iterator[str]:
        yield from self.switches
        yield from self.hosts

    def links_of(self, node: str) -> list[LinkSpec]:
        """The links of ``node``, in the order of its ports."""
        self._require(node)
        ports = self._ports.get(node, {})
        return [self.links[ports[port]] for port in sorted(ports)]

    def port_peers(self, node: str) -> list[tuple[int, str, int]]:
        """``(port, neighbor, neighbor_port)`` for every used port of ``node``, by port."""
        self._require(node)
        ports = self._ports.get(node, {})
        return [(port, *self.links[ports[port]].peer(node, port)) for port in sorted(ports)]

    def neighbors(self, node: str) -> list[str]:
        """Distinct neighbours of ``node`` in the order of its ports."""
        seen: dict[str, None] = {}
        for _, peer, _ in self.port_peers(node):
            seen.setdefault(peer, None)
        return list(seen)

    def switch_port_to(self, node: str, neighbor: str) -> int:
        """The (lowest) port of ``node`` whose link leads to ``neighbor``."""
        for port, peer, _ in self.port_peers(node):
            if peer == neighbor:
                return port
        raise TopologyError(f"'{node}' has no link to '{neighbor}'")

    def host_switch(self, host: str) -> tuple[str, int]:
        """The switch ``host`` hangs off, and the switch's port toward it."""
        if host not in self.hosts:
            raise TopologyError(f"unknown host '{host}'")
        index = self._ports.get(host, {}).get(HOST_PORT)
        if index is None:
            raise TopologyError(f"host '{host}' has no link")
        return self.links[index].peer(host, HOST_PORT)

    def host_by_ip(self, ip: str) -> HostSpec:
        owner = self._ips.get(ip_to_int(ip))
        if owner is not None:
            return self.hosts[owner]
        raise TopologyError(f"no host has IP {ip}")

    def total_switch_ports(self) -> int:
        return sum(len(s.ports) for s in self.switches.values())

    def to_networkx(self) -> nx.MultiGraph:
        """A MultiGraph (parallel links stay apart): nodes carry ``kind``
        ('switch'/'host') and ``spec``; edges carry ``spec`` and the ports."""
        import networkx as nx

        graph = nx.MultiGraph(name=self.name)
        for name, spec in self.switches.items():
            graph.add_node(name, kind="switch", spec=spec)
        for name, spec in self.hosts.items():
            graph.add_node(name, kind="host", spec=spec)
        for link in self.links:
            graph.add_edge(link.a, link.b, spec=link, ports={link.a: link.a_port,
                                                            link.b: link.b_port})
        return graph

    def switch_graph(self) -> nx.Graph:
        """Switches only, one edge per adjacent pair (for hop counts)."""
        import networkx as nx

        graph = nx.Graph()
        graph.add_nodes_from(self.switches)
        for link in self.links:
            if link.a in self.switches and link.b in self.switches:
                graph.add_edge(link.a, link.b)
        return graph

    def _require(self, node: str) -> None:
        if node not in self.switches and node not in self.hosts:
            raise TopologyError(f"unknown node '{node}'")

    # ------------------------------------------------------------- validation
    def validate(self) -> None:
        """Check the whole description again (specs may have been edited in
        place after they were added) and what only the whole can show: port
        overrides no link uses and hosts with no link."""
        rebuilt = Topology(self.name)
        rebuilt.locs = self.locs
        for name, spec in self.switches.items():
            loc = self.locs.get(("switch", name))
            if spec.name != name:
                raise TopologyError(f"switch stored as '{name}' is named '{spec.name}'", loc)
            params = {k: getattr(spec, k) for k in _SWITCH_PARAMS}
            params["ports"] = dict(spec.ports) if isinstance(spec.ports, dict) else spec.ports
            rebuilt.add_switch(name, spec.device_id, loc=loc, **params)
        for name, spec in self.hosts.items():
            loc = self.locs.get(("host", name))
            if spec.name != name:
                raise TopologyError(f"host stored as '{name}' is named '{spec.name}'", loc)
            rebuilt.add_host(name, spec.mac, spec.ip, spec.prefix_len, loc=loc)
        macs = {switch_mac(s.device_id): s.name for s in self.switches.values()}
        for host in self.hosts.values():
            owner = macs.get(mac_to_str(mac_to_int(host.mac)))
            if owner is not None:
                raise TopologyError(f"host '{host.name}': MAC {host.mac} is the MAC of "
                                    f"switch '{owner}'", self.locs.get(("host", host.name)))
        for index, link in enumerate(self.links):
            params = {k: getattr(link, k) for k in _LINK_PARAMS}
            rebuilt.add_link(link.a, link.b, link.a_port, link.b_port,
                             loc=self.locs.get(("link", index)), **params)
        for name, spec in self.switches.items():
            used = rebuilt._ports.get(name, {})
            for port in spec.ports:
                if port not in used:
                    raise TopologyError(f"switch '{name}': port {port} has settings but no "
                                        "link uses it", self.locs.get(("switch", name)))
            for port in used:
                spec.ports.setdefault(port, PortSpec())
        for name in self.hosts:
            if HOST_PORT not in rebuilt._ports.get(name, {}):
                raise TopologyError(f"host '{name}' has no link", self.locs.get(("host", name)))
        self._ports = rebuilt._ports
        self._device_ids, self._ips, self._macs = rebuilt._device_ids, rebuilt._ips, rebuilt._macs

    # ----------------------------------------------------------- persistence
    def to_dict(self) -> dict[str, Any]:
        from topologies.yamlio import topology_to_dict

        return topology_to_dict(self)

    @classmethod
    def from_dict(cls, data: Any, file: str = "<dict>") -> Topology:
        from topologies.yamlio import topology_from_dict

        return topology_from_dict(data, file)

    def save_yaml(self, path: Any) -> None:
        from topologies.yamlio import save_yaml

        save_yaml(self, path)

    @classmethod
    def load_yaml(cls, path: Any) -> Topology:
        from topologies.yamlio import load_yaml

        return load_yaml(path)

    def __repr__(self) -> str:
        return (f"Topology({self.name!r}: {len(self.switches)} switches, "
                f"{len(self.hosts)} hosts, {len(self.links)} links)")


_SWITCH_PARAMS = ("program", "queue_depth", "queue_rate_pps", "processing_rate_pps",
                  "clock_offset_us", "ports")
_LINK_PARAMS = ("bandwidth_mbps", "delay_us", "loss")


def _check_int(key: str, value: Any, low: int, high: int, loc: Loc | None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TopologyError(f"{key} must be an integer in {low}..{high}, not {value!r}", loc,
                            key)


def _check_number(key: str, value: Any, loc: Loc | None, *, positive: bool = False,
                  high: float | None = None) -> None:
    ok = (not isinstance(value, bool) and isinstance(value, int | float)
          and math.isfinite(value) and (value > 0 if positive else value >= 0)
          and (high is None or value <= high))
    if not ok:
        bound = "> 0" if positive else ">= 0"
        if high is not None:
            bound = f"in [0, {high:g}]"
        raise TopologyError(f"{key} must be a number {bound}, not {value!r}", loc, key)


def _check_switch(spec: SwitchSpec, loc: Loc | None) -> None:
    if spec.program is not None and not isinstance(spec.program, str):
        raise TopologyError(f"switch '{spec.name}': program must be a path, "
                            f"not {spec.program!r}", loc, "program")
    _check_int("queue_depth", spec.queue_depth, 1, (1 << 31) - 1, loc)
    for key in ("queue_rate_pps", "processing_rate_pps"):
        value = getattr(spec, key)
        if value is not None:
            _check_number(key, value, loc, positive=True)
    _check_int("clock_offset_us", spec.clock_offset_us, -(1 << 47), (1 << 47) - 1, loc)
    if not isinstance(spec.ports, dict):
        raise TopologyError(f"switch '{spec.name}': ports must map port numbers to "
                            "settings", loc, "ports")
    for port, override in spec.ports.items():
        _check_port(spec.name, port, override, loc)


def _check_port(switch: str, port: Any, spec: Any, loc: Loc | None) -> None:
    try:
        _check_int("port", port, 0, MAX_PORT, loc)
        if not isinstance(spec, PortSpec):
            raise TopologyError(f"switch '{switch}': port {port} settings must be a PortSpec",
                                loc)
        if spec.queue_depth is not None:
            _check_int(f"port {port} queue_depth", spec.queue_depth, 1, (1 << 31) - 1, loc)
        if spec.queue_rate_pps is not None:
            _check_number(f"port {port} queue_rate_pps", spec.queue_rate_pps, loc,
                          positive=True)
    except TopologyError as exc:
        exc.key = "ports"
        raise


def _check_host(spec: HostSpec, loc: Loc | None) -> None:
    if not isinstance(spec.mac, str) or not _MAC_RE.match(spec.mac):
        raise TopologyError(f"host '{spec.name}': MAC must be a string like "
                            f"'00:00:00:00:00:01' (quote it in YAML), not {spec.mac!r}",
                            loc, "mac")
    try:
        if not isinstance(spec.ip, str):
            raise ValueError
        ipaddress.IPv4Address(spec.ip)
    except ValueError:
        raise TopologyError(f"host '{spec.name}': IP must be a dotted IPv4 address, "
                            f"not {spec.ip!r}", loc, "ip") from None
    _check_int("prefix_len", spec.prefix_len, 0, 32, loc)


def _check_link(link: LinkSpec, loc: Loc | None) -> None:
    _check_number("bandwidth_mbps", link.bandwidth_mbps, loc, positive=True)
    _check_number("delay_us", link.delay_us, loc)
    _check_number("loss", link.loss, loc, high=1.0)
