"""HULA's probe flooding on ``p4src/hula.p4``: which ports a probe goes on to.

Katta et al., "HULA" (SOSR 2016), section 3.2: each ToR sends its probe up
to all aggregation switches; an aggregation switch copies a probe from a ToR
to the other ToRs of its pod and to all core switches; a core copies it
down to the aggregation switches of every other pod (never back where it
came from); an aggregation switch copies a probe from a core down to its
ToRs; a ToR consumes probes that come down.

That rule depends only on the port a probe arrives on, so each switch gets
one multicast group per ingress port (group id = port + 1, since group 0
means "no replication" in v1model) and a ``MyIngress.probe_replicate`` entry
selecting it. A port without an entry drops the probe (consumption).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from topologies.model import Topology, TopologyError, mac_to_int

PROBE_TABLE = "MyIngress.probe_replicate"
PROBE_KEY = "standard_metadata.ingress_port"
PROBE_ACTION = "MyIngress.set_probe_group"
PROBE_GROUP_PARAM = "grp"
# v1model: standard_metadata.mcast_grp is bit<16> and 0 means no replication.
MAX_GROUP = 0xFFFF

TOR, AGG, CORE = "tor", "agg", "core"
TIERS = (TOR, AGG, CORE)
# Switch-name prefixes of the usual three-tier vocabularies.
NAME_PREFIXES: tuple[tuple[str, str], ...] = (
    ("tor", TOR), ("edge", TOR), ("leaf", AGG), ("agg", AGG), ("spine", CORE), ("core", CORE),
)

PortSets = dict[str, dict[int, tuple[int, ...]]]


class _TableWriter(Protocol):
    def insert(self, match: dict[str, Any], action: str, params: dict[str, int],
               priority: int | None = None) -> Any: ...


class _GroupWriter(Protocol):
    def insert(self, group: int, replicas: Any) -> Any: ...


class ProbeClient(Protocol):
    """What ``install_probe_groups`` needs of a ``P4RuntimeClient``."""

    @property
    def tables(self) -> Mapping[str, _TableWriter]: ...

    @property
    def multicast_groups(self) -> _GroupWriter: ...


def switch_tiers(topo: Topology) -> dict[str, str]:
    """Every switch's tier: by name when every name starts with a known
    prefix (tor/edge, leaf/agg, spine/core), else by structure: switches with
    hosts are ToRs, switches next to a ToR aggregation, the rest core."""
    by_name = {s: _tier_by_name(s) for s in topo.switches}
    if all(by_name.values()):
        return {s: t for s, t in by_name.items() if t is not None}
    tiers: dict[str, str] = {}
    for s in topo.switches:
        if any(peer in topo.hosts for _, peer, _ in topo.port_peers(s)):
            tiers[s] = TOR
    for s in topo.switches:
        if s not in tiers:
            near_tor = any(tiers.get(peer) == TOR for _, peer, _ in topo.port_peers(s))
            tiers[s] = AGG if near_tor else CORE
    return tiers


def _tier_by_name(name: str) -> str | None:
    low = name.lower()
    for prefix, tier in NAME_PREFIXES:
        if low.startswith(prefix):
            return tier
    return None


def probe_port_sets(topo: Topology, tiers: Mapping[str, str] | None = None) -> PortSets:
    """For every switch, ingress port -> the sorted ports a probe arriving
    there is copied to. Ports with nothing to copy to are left out."""
    tiers = switch_tiers(topo) if tiers is None else tiers
    out: PortSets = {}
    for switch in topo.switches:
        tier = tiers[switch]
        peers = [(port, peer) for port, peer, _ in topo.port_peers(switch)]
        sets: dict[int, tuple[int, ...]] = {}
        if tier == TOR:
            up = tuple(_ports_to(peers, tiers, AGG))
            for port, peer in peers:
                if peer in topo.hosts:
                    sets[port] = up
        elif tier == AGG:
            down, up = _ports_to(peers, tiers, TOR), _ports_to(peers, tiers, CORE)
            for port in down:
                sets[port] = tuple(sorted([p for p in down if p != port] + up))
            for port in up:
                sets[port] = tuple(down)
        elif tier == CORE:
            down = _ports_to(peers, tiers, AGG)
            for port in down:
                sets[port] = tuple(p for p in down if p != port)
        else:
            raise TopologyError(f"switch '{switch}': unknown tier '{tier}'")
        out[switch] = {port: ports for port, ports in sorted(sets.items()) if ports}
    return out


def _ports_to(peers: list[tuple[int, str]], tiers: Mapping[str, str], tier: str) -> list[int]:
    return [port for port, peer in peers if tiers.get(peer) == tier]


def probe_group_id(port: int) -> int:
    """The multicast group used for probes arriving on ``port``."""
    group = port + 1
    if not 1 <= group <= MAX_GROUP:
        raise TopologyError(f"port {port} has no probe group id (1..{MAX_GROUP})")
    return group


def tor_ids(topo: Topology, tiers: Mapping[str, str] | None = None) -> dict[str, int]:
    """Each ToR's probe origin id: its device id."""
    tiers = switch_tiers(topo) if tiers is None else tiers
    return {s: topo.switches[s].device_id for s in topo.switches if tiers[s] == TOR}


def install_probe_groups(client: ProbeClient, topo: Topology, switch: str,
                         port_sets: PortSets | None = None) -> dict[int, tuple[int, ...]]:
    """Write ``switch``'s probe multicast groups and ``probe_replicate``
    entries through ``client``; return its ingress port -> ports map."""
    if switch not in topo.switches:
        raise TopologyError(f"unknown switch '{switch}'")
    sets = (probe_port_sets(topo) if port_sets is None else port_sets).get(switch, {})
    for port, ports in sets.items():
        group = probe_group_id(port)
        client.multicast_groups.insert(group, [(p, 0) for p in ports])
        client.tables[PROBE_TABLE].insert({PROBE_KEY: port}, PROBE_ACTION,
                                          {PROBE_GROUP_PARAM: group})
    return sets


# --------------------------------------------------------------------------- probes

PROBE_ETHERTYPE = 0x2345
"""p4src/hula.p4's ETHERTYPE_HULA."""
PROBE_FRAME_BYTES = 64
"""Probe frame length: the 64-byte probes of INT-label's HULA counting model."""
_HEAD = struct.Struct("!6s6sHIII")  # Ethernet, then torId, maxUtil, seq
_PAD = bytes(PROBE_FRAME_BYTES - _HEAD.size)


def probe_frame(tor_id: int, seq: int, dst_mac: str, src_mac: str, max_util: int = 0) -> bytes:
    """A 64-byte probe: Ethernet (type 0x2345), origin ToR, path utilisation
    and sequence number (32 bits each), zero padding."""
    head = _HEAD.pack(_mac(dst_mac), _mac(src_mac), PROBE_ETHERTYPE, tor_id & 0xFFFFFFFF,
                      max_util & 0xFFFFFFFF, seq & 0xFFFFFFFF)
    return head + _PAD


def parse_probe(frame: bytes) -> tuple[int, int, int] | None:
    """``(tor_id, max_util, seq)`` of a probe frame, None for other frames."""
    if len(frame) < _HEAD.size or frame[12:14] != b"\x23\x45":
        return None
    _, _, _, tor, util, seq = _HEAD.unpack_from(frame)
    return tor, util, seq


def is_probe(frame: bytes) -> bool:
    return frame[12:14] == b"\x23\x45"


def _mac(mac: str) -> bytes:
    return mac_to_int(mac).to_bytes(6, "big")


@dataclass(frozen=True, slots=True)
class ProbeOrigin:
    """A ToR, its probe id, and the host sending its probes on its behalf."""

    tor: str
    tor_id: int
    host: str


def probe_origins(topo: Topology) -> list[ProbeOrigin]:
    """One origin per ToR that has hosts; the stand-in is the host on the
    ToR's lowest host port."""
    tiers = switch_tiers(topo)
    ids = tor_ids(topo, tiers)
    out = []
    for tor, tor_id in ids.items():
        hosts = [peer for _, peer, _ in topo.port_peers(tor) if peer in topo.hosts]
        if hosts:
            out.append(ProbeOrigin(tor, tor_id, hosts[0]))
    return out


def copies_per_probe(topo: Topology, origin: ProbeOrigin,
                     sets: PortSets | None = None) -> int:
    """Switch-port transmissions one probe of ``origin`` makes when nothing
    is lost (walks the flood over the port sets)."""
    sets = probe_port_sets(topo) if sets is None else sets
    _, port = topo.host_switch(origin.host)
    work = [(origin.tor, port)]
    count = 0
    while work:
        switch, in_port = work.pop()
        for out in sets[switch].get(in_port, ()):
            count += 1
            peer, peer_port = _peer(topo, switch, out)
            if peer in topo.switches:
                work.append((peer, peer_port))
    return count


def _peer(topo: Topology, switch: str, port: int) -> tuple[str, int]:
    for p, peer, peer_port in topo.port_peers(switch):
        if p == port:
            return peer, peer_port
    raise KeyError((switch, port))
