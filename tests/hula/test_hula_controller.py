"""controller/hula.py: tiers, the probe flood's port sets, and installing
them as multicast groups and probe_replicate entries."""

from __future__ import annotations

from typing import Any

import pytest

from controller.hula import (
    AGG,
    CORE,
    PROBE_ACTION,
    PROBE_KEY,
    PROBE_TABLE,
    TOR,
    install_probe_groups,
    probe_group_id,
    probe_port_sets,
    switch_tiers,
    tor_ids,
)
from orchestration.sim import build
from topologies.generators import build_topology, fat_tree
from topologies.model import Topology, TopologyError

# Fabric ports (topologies.generators.fat_tree, k = 4): a ToR's hosts on 1-2
# and leaves on 3-4; a leaf's ToRs on 1-2 and spines on 3-4; spine port p
# leads to pod p.
FABRIC_SETS = {
    **{f"spine{i}": {1: (2,), 2: (1,)} for i in range(1, 5)},
    **{f"leaf{i}": {1: (2, 3, 4), 2: (1, 3, 4), 3: (1, 2), 4: (1, 2)} for i in range(1, 5)},
    **{f"tor{i}": {1: (3, 4), 2: (3, 4)} for i in range(1, 5)},
}


def test_fabric_tiers_and_port_sets() -> None:
    topo = build_topology("intlabel-fabric")
    tiers = switch_tiers(topo)
    assert [s for s, t in tiers.items() if t == CORE] == [f"spine{i}" for i in range(1, 5)]
    assert [s for s, t in tiers.items() if t == AGG] == [f"leaf{i}" for i in range(1, 5)]
    assert [s for s, t in tiers.items() if t == TOR] == [f"tor{i}" for i in range(1, 5)]
    assert probe_port_sets(topo) == FABRIC_SETS
    assert tor_ids(topo) == {"tor1": 8, "tor2": 9, "tor3": 10, "tor4": 11}


def test_fat_tree_k4_port_sets() -> None:
    sets = probe_port_sets(fat_tree(4))
    assert len(sets) == 20
    for i in range(1, 5):  # a core reaches 4 pods: every other pod, never back
        assert sets[f"spine{i}"] == {1: (2, 3, 4), 2: (1, 3, 4), 3: (1, 2, 4), 4: (1, 2, 3)}
    for i in range(1, 9):
        assert sets[f"leaf{i}"] == FABRIC_SETS["leaf1"]
        assert sets[f"tor{i}"] == FABRIC_SETS["tor1"]


def flood(topo: Topology, origin: str) -> tuple[dict[str, int], int]:
    """Copies of one probe from ``origin``'s first host port that each ToR
    consumes, and the number of switch-port transmissions."""
    sets = probe_port_sets(topo)
    peers = {s: {p: (peer, pp) for p, peer, pp in topo.port_peers(s)} for s in topo.switches}
    work = [(origin, min(sets[origin]))]
    consumed: dict[str, int] = {}
    sent = 0
    while work:
        switch, port = work.pop()
        out = sets[switch].get(port)
        if out is None:
            consumed[switch] = consumed.get(switch, 0) + 1
            continue
        for p in out:
            sent += 1
            peer, peer_port = peers[switch][p]
            assert peer in topo.switches, f"{switch} floods a probe to host {peer}"
            work.append((peer, peer_port))
    return consumed, sent


@pytest.mark.parametrize(("k", "pods", "transmissions"), [(4, 2, 20), (4, 4, 44), (6, 6, 198)])
def test_every_other_tor_consumes_the_probe(k: int, pods: int, transmissions: int) -> None:
    """HULA's flood: a ToR of the origin's pod gets k/2 copies (one per
    aggregation switch), a ToR of another pod (k/2)^2 (one per core)."""
    topo = fat_tree(k, pods=pods)
    half = k // 2
    consumed, sent = flood(topo, "tor1")
    expected = {f"tor{t}": half for t in range(2, half + 1)}
    expected.update({f"tor{t}": half * half for t in range(half + 1, pods * half + 1)})
    assert consumed == expected
    # Up h, aggregation h*(h-1 + h), cores h^2*(pods-1), down h^3*(pods-1).
    assert sent == transmissions == (half + half * (2 * half - 1)
                                     + half**2 * (pods - 1) + half**3 * (pods - 1))


def test_structural_tiers_without_tier_names() -> None:
    """Names that say nothing: ToRs are the switches with hosts, aggregation
    the switches next to a ToR, core the rest."""
    topo = fat_tree(4, pods=2)
    rename = {s: f"s{i}" for i, s in enumerate(topo.switches)}
    renamed = Topology("anonymous")
    for s in topo.switches:
        renamed.add_switch(rename[s])
    for h in topo.hosts.values():
        renamed.add_host(h.name, h.mac, h.ip)
    for link in topo.links:
        renamed.add_link(rename.get(link.a, link.a), rename.get(link.b, link.b),
                         link.a_port, link.b_port)
    assert switch_tiers(renamed) == {rename[s]: t for s, t in switch_tiers(topo).items()}
    assert probe_port_sets(renamed) == {rename[s]: v for s, v in FABRIC_SETS.items()}


def test_probe_group_id_is_port_plus_one() -> None:
    assert probe_group_id(0) == 1 and probe_group_id(510) == 511
    with pytest.raises(TopologyError):
        probe_group_id(0xFFFF)


class Recorder:
    """The probe table's inserts and the multicast groups' in one ``calls`` list."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.tables = {PROBE_TABLE: RecordedTable(PROBE_TABLE, self.calls)}
        self.multicast_groups = RecordedGroups(self.calls)


class RecordedTable:
    def __init__(self, name: str, calls: list[tuple[Any, ...]]) -> None:
        self.name = name
        self.calls = calls

    def insert(self, match: dict[str, Any], action: str, params: dict[str, int],
               priority: int | None = None) -> None:
        self.calls.append(("entry", self.name, match, action, params))


class RecordedGroups:
    def __init__(self, calls: list[tuple[Any, ...]]) -> None:
        self.calls = calls

    def insert(self, group: int, replicas: Any) -> None:
        self.calls.append(("group", group, list(replicas)))


def test_install_writes_one_group_and_entry_per_ingress_port() -> None:
    topo = build_topology("intlabel-fabric")
    rec = Recorder()
    assert install_probe_groups(rec, topo, "leaf1") == FABRIC_SETS["leaf1"]
    assert rec.calls[:2] == [
        ("group", 2, [(2, 0), (3, 0), (4, 0)]),
        ("entry", PROBE_TABLE, {PROBE_KEY: 1}, PROBE_ACTION, {"grp": 2}),
    ]
    assert [c[1] for c in rec.calls if c[0] == "group"] == [2, 3, 4, 5]
    with pytest.raises(TopologyError):
        install_probe_groups(rec, topo, "nope")


def test_install_through_p4runtime_on_the_sim_target() -> None:
    topo = build_topology("intlabel-fabric")
    net = build(topo, "hula", routes=False)
    client = net.clients["tor1"]
    install_probe_groups(client, topo, "tor1")
    assert client.multicast_groups.read() == {2: [(3, 0), (4, 0)], 3: [(3, 0), (4, 0)]}
    entries = client.tables[PROBE_TABLE].read()
    assert sorted((e["match"][PROBE_KEY], e["params"]["grp"]) for e in entries) == [(1, 2), (2, 3)]
