"""P4Runtime action profile members, groups and one-shot action sets on
``tests/p4/ecmp_selector.p4``, with the status codes PI gives over BMv2, and
the member a group picks checked against a CRC-16/ARC written here."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether

from controller.p4rt import P4RuntimeError
from controller.p4rt.protos import protos
from tests.p4rt.conftest import Rig, make_rig

PROGRAM = Path(__file__).resolve().parents[1] / "p4" / "ecmp_selector.p4"
pb = protos().p4runtime_pb2


def crc16_arc(data: bytes) -> int:
    """BMv2's ``crc16`` (CRC-16/ARC) as the textbook polynomial division: the
    message with every byte bit-reversed, times x^16, modulo x^16+x^15+x^2+1;
    the remainder bit-reversed (init 0, no final xor)."""
    bits = "".join(f"{b:08b}"[::-1] for b in data)
    rem = int(bits, 2) << 16 if bits else 0
    poly = 0x18005
    while rem.bit_length() > 16:
        rem ^= poly << (rem.bit_length() - 17)
    return int(f"{rem:016b}"[::-1], 2)


def five_tuple(src: str, dst: str, proto: int, sport: int, dport: int) -> bytes:
    """The selector input as BMv2 packs it: the key fields' bytes back to back."""
    return (bytes(int(x) for x in src.split(".")) + bytes(int(x) for x in dst.split("."))
            + bytes([proto]) + sport.to_bytes(2, "big") + dport.to_bytes(2, "big"))


@pytest.fixture
def rig() -> Rig:
    return make_rig(PROGRAM)


def ids(rig: Rig) -> dict[str, int]:
    names = rig.client.names
    return {
        "ecmp": names.table("ecmp").preamble.id,
        "by_port": names.table("by_port").preamble.id,
        "selector": next(p.preamble.id for p in rig.client.p4info.action_profiles
                         if p.preamble.alias == "ecmp_selector"),
        "profile": next(p.preamble.id for p in rig.client.p4info.action_profiles
                        if p.preamble.alias == "port_profile"),
        "set_nhop": names.action("set_nhop").preamble.id,
        "drop": names.action("drop").preamble.id,
    }


def nhop(rig: Rig, action: Any, port: int, dmac: int = 0) -> None:
    i = ids(rig)
    action.action_id = i["set_nhop"]
    action.params.add(param_id=1, value=dmac.to_bytes(6, "big"))
    action.params.add(param_id=2, value=port.to_bytes(2, "big"))


def member(rig: Rig, kind: str, member_id: int, port: int = 1, profile: str = "selector",
           action: str = "set_nhop") -> Any:
    update = pb.Update(type=getattr(pb.Update, kind.upper()))
    m = update.entity.action_profile_member
    m.action_profile_id = ids(rig)[profile]
    m.member_id = member_id
    if kind != "delete":
        if action == "set_nhop":
            nhop(rig, m.action, port, dmac=port)
        else:
            m.action.action_id = ids(rig)[action]
    return update


def group(rig: Rig, kind: str, group_id: int, members: list[tuple[int, int]] = (),
          max_size: int = 0, profile: str = "selector") -> Any:
    update = pb.Update(type=getattr(pb.Update, kind.upper()))
    g = update.entity.action_profile_group
    g.action_profile_id = ids(rig)[profile]
    g.group_id = group_id
    g.max_size = max_size
    for member_id, weight in members:
        g.members.add(member_id=member_id, weight=weight)
    return update


def entry(rig: Rig, kind: str, prefix: str = "10.0.0.0", plen: int = 8, *,
          member_id: int | None = None, group_id: int | None = None,
          oneshot: list[tuple[int, int]] | None = None, direct_port: int | None = None) -> Any:
    update = pb.Update(type=getattr(pb.Update, kind.upper()))
    te = update.entity.table_entry
    te.table_id = ids(rig)["ecmp"]
    fm = te.match.add(field_id=1)
    fm.lpm.value = bytes(int(x) for x in prefix.split("."))
    fm.lpm.prefix_len = plen
    if member_id is not None:
        te.action.action_profile_member_id = member_id
    if group_id is not None:
        te.action.action_profile_group_id = group_id
    if oneshot is not None:
        action_set = te.action.action_profile_action_set
        action_set.SetInParent()
        for port, weight in oneshot:
            item = action_set.action_profile_actions.add(weight=weight)
            nhop(rig, item.action, port, dmac=port)
    if direct_port is not None:
        nhop(rig, te.action.action, direct_port)
    return update


def refused(rig: Rig, *updates: Any) -> str:
    with pytest.raises(P4RuntimeError) as info:
        rig.client.write(list(updates))
    return info.value.code


def read(rig: Rig, kind: str, **fields: int) -> list[Any]:
    entity = pb.Entity()
    getattr(entity, kind).SetInParent()
    for name, value in fields.items():
        setattr(getattr(entity, kind), name, value)
    return [getattr(e, kind) for e in rig.client.read([entity])]


def frame(src: str, dst: str, sport: int, dport: int, udp: bool = False) -> bytes:
    l4 = UDP(sport=sport, dport=dport) if udp else TCP(sport=sport, dport=dport)
    return bytes(Ether(dst="00:00:00:00:00:01", src="00:00:00:00:00:02") / IP(src=src, dst=dst)
                 / l4 / b"payload")


def out_port(rig: Rig, data: bytes) -> int | None:
    out = rig.switch.process(0, data)
    return out[0][0] if out else None


# ----------------------------------------------------------------------------- members


def test_member_write_read_modify_delete(rig: Rig) -> None:
    rig.client.write([member(rig, "insert", 7, port=3)])
    (m,) = read(rig, "action_profile_member", action_profile_id=ids(rig)["selector"])
    assert (m.member_id, m.action.action_id) == (7, ids(rig)["set_nhop"])
    assert [p.value for p in m.action.params] == [b"\x03", b"\x03"]
    rig.client.write([member(rig, "modify", 7, port=5)])
    (m,) = read(rig, "action_profile_member", action_profile_id=ids(rig)["selector"],
                member_id=7)
    assert [p.value for p in m.action.params] == [b"\x05", b"\x05"]
    rig.client.write([member(rig, "delete", 7)])
    assert read(rig, "action_profile_member") == []


def test_member_errors_carry_pi_codes(rig: Rig) -> None:
    rig.client.write([member(rig, "insert", 1)])
    assert refused(rig, member(rig, "insert", 1)) == "ALREADY_EXISTS"
    assert refused(rig, member(rig, "modify", 2)) == "NOT_FOUND"
    assert refused(rig, member(rig, "delete", 2)) == "NOT_FOUND"
    unknown = member(rig, "insert", 3)
    unknown.entity.action_profile_member.action_profile_id = 0x11000001
    assert refused(rig, unknown) == "NOT_FOUND"
    # An action none of the profile's tables may use.
    no_params = member(rig, "insert", 4, action="drop")
    no_params.entity.action_profile_member.action.action_id = ids(rig)["set_nhop"]
    assert refused(rig, no_params) == "INVALID_ARGUMENT"  # missing parameters
    # A member still in a group: BMv2 says MBR_STILL_USED, PI answers UNKNOWN.
    rig.client.write([group(rig, "insert", 1, [(1, 1)])])
    assert refused(rig, member(rig, "delete", 1)) == "UNKNOWN"
    rig.client.write([group(rig, "delete", 1), member(rig, "delete", 1)])
    assert read(rig, "action_profile_member") == []


# ------------------------------------------------------------------------------ groups


def test_group_write_read_modify_delete(rig: Rig) -> None:
    rig.client.write([member(rig, "insert", m, port=m) for m in (1, 2, 3)])
    rig.client.write([group(rig, "insert", 9, [(1, 1), (3, 2)], max_size=8)])
    (g,) = read(rig, "action_profile_group", action_profile_id=ids(rig)["selector"])
    assert (g.group_id, g.max_size) == (9, 8)
    assert [(m.member_id, m.weight) for m in g.members] == [(1, 1), (3, 2)]
    rig.client.write([group(rig, "modify", 9, [(2, 1)])])
    (g,) = read(rig, "action_profile_group", group_id=9)
    assert [(m.member_id, m.weight) for m in g.members] == [(2, 1)]
    rig.client.write([group(rig, "delete", 9)])
    assert read(rig, "action_profile_group") == []


def test_group_errors_carry_pi_codes(rig: Rig) -> None:
    rig.client.write([member(rig, "insert", 1), member(rig, "insert", 2)])
    rig.client.write([group(rig, "insert", 5, [(1, 1)])])
    assert refused(rig, group(rig, "insert", 5)) == "ALREADY_EXISTS"
    assert refused(rig, group(rig, "modify", 6)) == "NOT_FOUND"
    assert refused(rig, group(rig, "delete", 6)) == "NOT_FOUND"
    assert refused(rig, group(rig, "insert", 6, [(3, 1)])) == "NOT_FOUND"  # no member 3
    assert refused(rig, group(rig, "insert", 6, [(1, 0)])) == "INVALID_ARGUMENT"  # weight 0
    assert refused(rig, group(rig, "insert", 6, [(1, 1), (1, 2)])) == "INVALID_ARGUMENT"
    # @max_group_size(16): a larger max_size is refused, heavier weights exhaust it.
    assert refused(rig, group(rig, "insert", 6, max_size=17)) == "INVALID_ARGUMENT"
    assert refused(rig, group(rig, "insert", 6, [(1, 10), (2, 7)])) == "RESOURCE_EXHAUSTED"
    assert refused(rig, group(rig, "insert", 6, [(1, 2), (2, 2)], max_size=3)) \
        == "RESOURCE_EXHAUSTED"
    assert refused(rig, group(rig, "modify", 5, [(1, 1)], max_size=4)) == "INVALID_ARGUMENT"
    # A plain action profile has no groups.
    assert refused(rig, group(rig, "insert", 1, profile="profile")) == "INVALID_ARGUMENT"
    # A group an entry points at: BMv2's GRP_STILL_USED is PI's UNKNOWN.
    rig.client.write([entry(rig, "insert", group_id=5)])
    assert refused(rig, group(rig, "delete", 5)) == "UNKNOWN"
    # None of the refusals left anything behind.
    assert [g.group_id for g in read(rig, "action_profile_group")] == [5]


# ------------------------------------------------------------------------ table entries


def test_entries_point_at_members_and_groups(rig: Rig) -> None:
    rig.client.write([member(rig, "insert", m, port=m) for m in (1, 2)])
    rig.client.write([group(rig, "insert", 1, [(2, 1)])])
    rig.client.write([entry(rig, "insert", "10.0.0.0", 8, member_id=1),
                      entry(rig, "insert", "20.0.0.0", 8, group_id=1)])
    assert out_port(rig, frame("1.1.1.1", "10.1.2.3", 1, 2)) == 1
    assert out_port(rig, frame("1.1.1.1", "20.1.2.3", 1, 2)) == 2
    got = {e.table_entry.match[0].lpm.value: e.table_entry.action
           for e in rig.client.read([table_read(rig)])}
    assert got[bytes([10, 0, 0, 0])].action_profile_member_id == 1
    assert got[bytes([20, 0, 0, 0])].action_profile_group_id == 1
    # A member's new action reaches the entries using it.
    rig.client.write([member(rig, "modify", 1, port=7)])
    assert out_port(rig, frame("1.1.1.1", "10.1.2.3", 1, 2)) == 7
    rig.client.write([entry(rig, "modify", "10.0.0.0", 8, group_id=1)])
    assert out_port(rig, frame("1.1.1.1", "10.1.2.3", 1, 2)) == 2
    rig.client.write([entry(rig, "delete", "10.0.0.0", 8), entry(rig, "delete", "20.0.0.0", 8)])
    rig.client.write([group(rig, "delete", 1), member(rig, "delete", 1),
                      member(rig, "delete", 2)])
    assert out_port(rig, frame("1.1.1.1", "10.1.2.3", 1, 2)) is None  # default: drop


def table_read(rig: Rig) -> Any:
    entity = pb.Entity()
    entity.table_entry.table_id = ids(rig)["ecmp"]
    return entity


def test_entry_errors_carry_pi_codes(rig: Rig) -> None:
    rig.client.write([member(rig, "insert", 1)])
    rig.client.write([group(rig, "insert", 1)])
    assert refused(rig, entry(rig, "insert", member_id=2)) == "INVALID_ARGUMENT"
    assert refused(rig, entry(rig, "insert", group_id=2)) == "INVALID_ARGUMENT"
    assert refused(rig, entry(rig, "insert", direct_port=1)) == "INVALID_ARGUMENT"
    # An empty group: BMv2's EMPTY_GRP, PI's UNKNOWN.
    assert refused(rig, entry(rig, "insert", group_id=1)) == "UNKNOWN"
    default = entry(rig, "modify", member_id=1)
    default.entity.table_entry.ClearField("match")
    default.entity.table_entry.is_default_action = True
    assert refused(rig, default) == "INVALID_ARGUMENT"
    # Mixing members and one-shot sets on one profile.
    assert refused(rig, entry(rig, "insert", oneshot=[(1, 1)])) == "INVALID_ARGUMENT"
    assert list(rig.switch.table("ecmp").entries) == []


def test_oneshot_sets_write_read_modify_delete(rig: Rig) -> None:
    rig.client.write([entry(rig, "insert", oneshot=[(4, 1), (5, 2)])])
    (got,) = rig.client.read([table_read(rig)])
    items = got.table_entry.action.action_profile_action_set.action_profile_actions
    assert [(i.weight, i.action.params[1].value) for i in items] == [(1, b"\x04"), (2, b"\x05")]
    profile = rig.switch.action_profile("ecmp_selector")
    assert sum(m is not None for m in profile.members) == 3  # one BMv2 member per weight unit
    rig.client.write([entry(rig, "modify", oneshot=[(6, 1)])])
    assert out_port(rig, frame("1.1.1.1", "10.1.2.3", 1, 2)) == 6
    assert sum(m is not None for m in profile.members) == 1
    assert refused(rig, entry(rig, "insert", "11.0.0.0", oneshot=[])) == "UNIMPLEMENTED"
    assert refused(rig, entry(rig, "insert", "11.0.0.0", oneshot=[(1, 0)])) == "INVALID_ARGUMENT"
    assert refused(rig, entry(rig, "insert", "11.0.0.0", oneshot=[(1, 17)])) \
        == "RESOURCE_EXHAUSTED"
    rig.client.write([entry(rig, "delete")])
    assert not any(profile.members) and not any(profile.groups)
    # Empty again: the profile may now take members.
    rig.client.write([member(rig, "insert", 1)])


# ------------------------------------------------------------------- member selection


def test_group_picks_member_by_crc16_in_handle_order(rig: Rig) -> None:
    """Members created as ids 40, 10, 30, 20 get BMv2 handles 0..3; the group
    lists them by id, but BMv2 picks rank ``crc16 % 4`` in handle order."""
    ports = {40: 4, 10: 1, 30: 3, 20: 2}
    rig.client.write([member(rig, "insert", m, port=ports[m]) for m in (40, 10, 30, 20)])
    rig.client.write([group(rig, "insert", 1, [(10, 1), (20, 1), (30, 1), (40, 1)])])
    rig.client.write([entry(rig, "insert", "10.0.0.0", 8, group_id=1)])
    by_handle = [40, 10, 30, 20]
    rng = random.Random(2024)
    seen = set()
    for _ in range(300):
        src = f"192.168.{rng.randrange(256)}.{rng.randrange(256)}"
        dst = f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
        sport, dport = rng.randrange(1024, 65536), rng.randrange(1, 1024)
        udp = rng.random() < 0.5
        h = crc16_arc(five_tuple(src, dst, 17 if udp else 6, sport, dport))
        want = ports[by_handle[h % 4]]
        assert out_port(rig, frame(src, dst, sport, dport, udp)) == want
        seen.add(want)
    assert seen == {1, 2, 3, 4}


def test_weights_are_member_copies_with_their_own_handles(rig: Rig) -> None:
    """Weight 2 adds a second BMv2 member (the next free handle) to the group:
    handles 0 (id 1), 1 (id 2), 2 (id 2's copy) give ranks 1, 2, 2."""
    rig.client.write([member(rig, "insert", 1, port=1), member(rig, "insert", 2, port=2)])
    rig.client.write([group(rig, "insert", 1, [(1, 1), (2, 2)])])
    rig.client.write([entry(rig, "insert", "10.0.0.0", 8, group_id=1)])
    rng = random.Random(7)
    for _ in range(150):
        src = f"172.16.{rng.randrange(256)}.{rng.randrange(256)}"
        sport, dport = rng.randrange(65536), rng.randrange(65536)
        h = crc16_arc(five_tuple(src, "10.0.0.1", 6, sport, dport))
        assert out_port(rig, frame(src, "10.0.0.1", sport, dport)) == [1, 2, 2][h % 3]
    # Back to weight 1: the copy is deleted, its handle free again.
    rig.client.write([group(rig, "modify", 1, [(1, 1), (2, 1)])])
    profile = rig.switch.action_profile("ecmp_selector")
    assert [m is not None for m in profile.members] == [True, True, False]
    assert profile.group(0).members == [0, 1]


def test_plain_action_profile_table(rig: Rig) -> None:
    update = member(rig, "insert", 3, port=9, profile="profile")
    rig.client.write([update])
    te_update = pb.Update(type=pb.Update.INSERT)
    te = te_update.entity.table_entry
    te.table_id = ids(rig)["by_port"]
    te.match.add(field_id=1).exact.value = b"\x00"
    te.action.action_profile_member_id = 3
    rig.client.write([te_update])
    non_ip = bytes(Ether(dst="00:00:00:00:00:01", type=0x88B5) / (b"x" * 20))
    assert out_port(rig, non_ip) == 9
