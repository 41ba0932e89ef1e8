"""Clone sessions and multicast groups through PacketReplicationEngineEntry.

The programs and expected outputs are those of tests/p4/clone.p4 and
tests/p4/multicast.p4 (see their STF files for how BMv2 behaves); here the
sessions and groups are written over P4Runtime instead of the STF commands.
"""

from __future__ import annotations

import pytest

from common.paths import PACKAGE_ROOT
from controller.p4rt import P4RuntimeError

P4_DIR = PACKAGE_ROOT / "tests" / "p4"


def hexbytes(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


def code_of(call, *args, **kwargs) -> str:
    with pytest.raises(P4RuntimeError) as info:
        call(*args, **kwargs)
    return info.value.code


# --------------------------------------------------------------------------- clone sessions


def test_clone_sessions_feed_i2e_and_e2e_clones(make):
    rig = make(P4_DIR / "clone.p4")
    with rig.client.batch():
        rig.client.clone_sessions.insert(5, [2])
        rig.client.clone_sessions.insert(6, [3])
    i2e = hexbytes("000000000002 000000000001 1111 cafef00d")
    # the I2E copy is queued before the original: compare port by port
    assert sorted(rig.switch.process(0, i2e)) == [
        (1, hexbytes("00 00 00 01 0012 000000000002 aaaaaaaaaaaa 1111 cafef00d")),
        (2, hexbytes("01 00 00 02 0012 000000000002 000000000001 1111 cafef00d")),
    ]
    e2e = hexbytes("000000000002 000000000001 3333 cafef00d")
    assert sorted(rig.switch.process(0, e2e)) == [
        (1, hexbytes("00 00 3c 01 0012 000000000002 bbbbbbbbbbbb 3333 cafef00d")),
        # the E2E copy's packet_length counts the tag egress added (BMv2)
        (3, hexbytes("02 00 00 03 0018 000000000002 bbbbbbbbbbbb 3333 cafef00d")),
    ]
    assert rig.client.clone_sessions.read() == {5: [(2, 0)], 6: [(3, 0)]}


def test_clone_session_modify_delete_and_errors(make):
    rig = make(P4_DIR / "clone.p4")
    c = rig.client
    c.clone_sessions.insert(5, [2])
    assert code_of(c.clone_sessions.insert, 5, [4]) == "ALREADY_EXISTS"
    c.clone_sessions.modify(5, [4])
    packet = hexbytes("000000000002 000000000001 1111 cafef00d")
    assert sorted(port for port, _ in rig.switch.process(0, packet)) == [1, 4]
    c.clone_sessions.delete(5)
    assert [port for port, _ in rig.switch.process(0, packet)] == [1]
    assert rig.switch.mirror == {}
    assert code_of(c.clone_sessions.delete, 5) == "NOT_FOUND"
    assert code_of(c.clone_sessions.modify, 7, [1]) == "NOT_FOUND"
    assert code_of(c.clone_sessions.insert, 0, [1]) == "INVALID_ARGUMENT"
    assert code_of(c.clone_sessions.insert, 32768, [1]) == "INVALID_ARGUMENT"
    assert code_of(c.clone_sessions.insert, 8, [1, 1]) == "INVALID_ARGUMENT"
    assert c.clone_sessions.read() == {}


def test_clone_session_without_replicas_copies_nothing(make):
    rig = make(P4_DIR / "clone.p4")
    rig.client.clone_sessions.insert(5, [])
    packet = hexbytes("000000000002 000000000001 1111 cafef00d")
    assert [port for port, _ in rig.switch.process(0, packet)] == [1]
    assert rig.client.clone_sessions.read() == {5: []}


# --------------------------------------------------------------------------- multicast


def test_multicast_group_replicates_by_rid_then_port(make):
    rig = make(P4_DIR / "multicast.p4")
    rig.client.multicast_groups.insert(1, [(2, 20), (2, 10), (1, 10)])
    packet = hexbytes("000000000001 00000000000f 0800 0102")
    # PI builds one node per rid (ascending), ports ascending within a node.
    assert rig.switch.process(0, packet) == [
        (1, hexbytes("000a 05 01 0001 000000000001 00000000000f 0800 0102")),
        (2, hexbytes("000a 05 02 0001 000000000001 00000000000f 0800 0102")),
        (2, hexbytes("0014 05 02 0001 000000000001 00000000000f 0800 0102")),
    ]
    assert rig.client.multicast_groups.read() == {1: [(1, 10), (2, 10), (2, 20)]}


def test_multicast_group_modify_delete_reuse(make):
    rig = make(P4_DIR / "multicast.p4")
    c = rig.client
    c.multicast_groups.insert(1, [3, 4])
    c.multicast_groups.insert(2, [(5, 7)])
    packet = hexbytes("000000000001 00000000000f 0800 0102")
    assert [port for port, _ in rig.switch.process(0, packet)] == [3, 4]
    c.multicast_groups.modify(1, [(6, 1)])
    out = rig.switch.process(0, packet)
    assert out == [(6, hexbytes("0001 05 06 0001 000000000001 00000000000f 0800 0102"))]
    c.multicast_groups.delete(1)
    assert rig.switch.process(0, packet) == []
    assert c.multicast_groups.read() == {2: [(5, 7)]}
    c.multicast_groups.insert(1, [9])
    assert [port for port, _ in rig.switch.process(0, packet)] == [9]
    # freed replication nodes are reused, not leaked
    assert len(rig.switch.mc_nodes) == 2


def test_multicast_group_errors_change_nothing(make):
    rig = make(P4_DIR / "multicast.p4")
    c = rig.client
    c.multicast_groups.insert(1, [1, 2])
    assert code_of(c.multicast_groups.insert, 1, [3]) == "ALREADY_EXISTS"
    assert code_of(c.multicast_groups.modify, 2, [3]) == "NOT_FOUND"
    assert code_of(c.multicast_groups.delete, 2) == "NOT_FOUND"
    assert code_of(c.multicast_groups.insert, 0, [3]) == "INVALID_ARGUMENT"
    assert code_of(c.multicast_groups.insert, 1 << 16, [3]) == "OUT_OF_RANGE"
    assert code_of(c.multicast_groups.modify, 1, [(3, 1), (3, 1)]) == "INVALID_ARGUMENT"
    assert c.multicast_groups.read() == {1: [(1, 0), (2, 0)]}
    packet = hexbytes("000000000001 00000000000f 0800 0102")
    assert [port for port, _ in rig.switch.process(0, packet)] == [1, 2]
