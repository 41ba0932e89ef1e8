"""IPv4 forwarding entries computed from a Topology: one /32 route per host
over shortest paths (hop count), with every equal-cost next hop kept for ECMP.

The entries target ``p4src/l3_forward.p4``'s tables; their names sit in the
constants below. A route with one next hop is a plain ``ipv4_forward``; with
several, the LPM entry picks an ECMP group (``set_ecmp(group, count)``) and
the program selects member ``crc16(5-tuple) % count`` in ``ecmp_nhop``.
Groups with the same members are shared, numbered from 1 per switch.

The next hop's MAC is the host's own for an attached host, else the next
switch's (``topologies.model.switch_mac``): ``ipv4_forward`` writes it as the
destination and the next switch makes it the source.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from topologies.model import Topology, TopologyError, ip_to_int, mac_to_int, switch_mac

LPM_TABLE = "MyIngress.ipv4_lpm"
LPM_KEY = "hdr.ipv4.dstAddr"
ECMP_TABLE = "MyIngress.ecmp_nhop"
ECMP_GROUP_KEY = "meta.ecmp_group"
ECMP_SELECT_KEY = "meta.ecmp_select"
FORWARD_ACTION = "MyIngress.ipv4_forward"
FORWARD_MAC_PARAM = "dstAddr"
FORWARD_PORT_PARAM = "port"
ECMP_ACTION = "MyIngress.set_ecmp"
ECMP_GROUP_PARAM = "group"
ECMP_COUNT_PARAM = "count"
DROP_ACTION = "MyIngress.drop"
# set_ecmp's group and count are bit<16>.
MAX_ECMP_GROUPS = 0xFFFF
HOST_PREFIX_LEN = 32


@dataclass(slots=True)
class Route:
    """Destination prefix and its next hops ``(port, next_hop_mac)``, by port."""

    prefix: str
    prefix_len: int
    next_hops: list[tuple[int, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class TableEntry:
    """One table entry as handed to ``P4RuntimeClient.tables[table].insert``."""

    table: str
    match: dict[str, Any]
    action: str
    params: dict[str, int]


class TableWriter(Protocol):
    def insert(self, match: dict[str, Any], action: str, params: dict[str, int],
               priority: int | None = None) -> Any: ...


class TableClient(Protocol):
    """What ``install_routes`` needs of a ``P4RuntimeClient``."""

    @property
    def tables(self) -> Mapping[str, TableWriter]: ...


def compute_routes(topo: Topology) -> dict[str, list[Route]]:
    """Every switch's routes to every host it can reach, ordered by IP.

    Hosts never carry transit traffic, so distances are counted over
    switch-to-switch links only: one BFS per access switch. A switch's next
    hops toward a host are all its ports whose neighbour switch is one hop
    closer, parallel links included.
    """
    by_access: dict[str, list[tuple[str, int]]] = {}
    for host in topo.hosts:
        switch, port = topo.host_switch(host)
        by_access.setdefault(switch, []).append((host, port))
    peers = {s: [(port, peer) for port, peer, _ in topo.port_peers(s) if peer in topo.switches]
             for s in topo.switches}
    routes: dict[str, list[Route]] = {s: [] for s in topo.switches}
    for access, hosts in by_access.items():
        dist = _hops_to(access, peers)
        for switch, d in dist.items():
            if switch == access:
                continue
            hops = [(port, switch_mac(topo.switches[peer].device_id))
                    for port, peer in peers[switch] if dist.get(peer) == d - 1]
            for host, _ in hosts:
                routes[switch].append(Route(topo.hosts[host].ip, HOST_PREFIX_LEN, list(hops)))
        for host, port in hosts:
            routes[access].append(Route(topo.hosts[host].ip, HOST_PREFIX_LEN,
                                        [(port, topo.hosts[host].mac)]))
    order = {h.ip: ip_to_int(h.ip) for h in topo.hosts.values()}
    for table in routes.values():
        table.sort(key=lambda route: (order[route.prefix], route.prefix_len))
    return routes


def _hops_to(target: str, peers: Mapping[str, list[tuple[int, str]]]) -> dict[str, int]:
    dist = {target: 0}
    queue = deque([target])
    while queue:
        node = queue.popleft()
        for _, peer in peers[node]:
            if peer not in dist:
                dist[peer] = dist[node] + 1
                queue.append(peer)
    return dist


def table_entries(routes: list[Route]) -> list[TableEntry]:
    """The entries that realise one switch's routes: LPM entries first, then
    the members of each ECMP group in group order."""
    lpm: list[TableEntry] = []
    groups: dict[tuple[tuple[int, str], ...], int] = {}
    for route in routes:
        match = {LPM_KEY: (ip_to_int(route.prefix), route.prefix_len)}
        if len(route.next_hops) == 1:
            lpm.append(TableEntry(LPM_TABLE, match, FORWARD_ACTION,
                                  _forward_params(*route.next_hops[0])))
            continue
        if not route.next_hops:
            raise TopologyError(f"route to {route.prefix}/{route.prefix_len} has no next hop")
        members = tuple(route.next_hops)
        group = groups.setdefault(members, len(groups) + 1)
        if group > MAX_ECMP_GROUPS or len(members) > MAX_ECMP_GROUPS:
            raise TopologyError(f"more than {MAX_ECMP_GROUPS} ECMP groups or members")
        lpm.append(TableEntry(LPM_TABLE, match, ECMP_ACTION,
                              {ECMP_GROUP_PARAM: group, ECMP_COUNT_PARAM: len(members)}))
    ecmp = [TableEntry(ECMP_TABLE, {ECMP_GROUP_KEY: group, ECMP_SELECT_KEY: index},
                       FORWARD_ACTION, _forward_params(port, mac))
            for members, group in groups.items()
            for index, (port, mac) in enumerate(members)]
    return lpm + ecmp


def _forward_params(port: int, mac: str) -> dict[str, int]:
    return {FORWARD_MAC_PARAM: mac_to_int(mac), FORWARD_PORT_PARAM: port}


def install_routes(client: TableClient, topo: Topology, switch: str,
                   routes: Mapping[str, list[Route]] | None = None) -> list[TableEntry]:
    """Insert ``switch``'s routing entries through ``client`` and return them.

    Pass ``routes`` (from :func:`compute_routes`) when installing several
    switches, so the paths are computed once.
    """
    if switch not in topo.switches:
        raise TopologyError(f"unknown switch '{switch}'")
    if routes is None:
        routes = compute_routes(topo)
    entries = table_entries(routes.get(switch, []))
    for entry in entries:
        client.tables[entry.table].insert(entry.match, entry.action, entry.params)
    return entries
