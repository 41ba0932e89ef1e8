"""Table entries through client -> InProcessTransport -> RuntimeService -> Switch."""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from controller.p4rt import P4RuntimeError, UnknownNameError, UpdateError, protos
from dataplane.compiler.p4info import load_text

pb = protos().p4runtime_pb2

ROUTER = "00:00:00:00:00:aa"
NH1, NH2, NH3 = "00:00:00:00:01:01", "00:00:00:00:02:02", "00:00:00:00:03:03"
LPM = "ipv4_lpm"
DST = "hdr.ipv4.dstAddr"


def frame(dst: str, ttl: int = 64) -> bytes:
    return bytes(
        Ether(dst=ROUTER, src="00:00:00:00:00:01")
        / IP(src="10.0.0.1", dst=dst, ttl=ttl)
        / UDP(sport=1234, dport=80)
        / b"payload"
    )


def routed(data: bytes, next_hop: str) -> bytes:
    """What ipv4_forward makes of ``data``: MACs shifted, TTL - 1, new checksum."""
    p = Ether(data)
    p[Ether].src = p[Ether].dst
    p[Ether].dst = next_hop
    p[IP].ttl -= 1
    del p[IP].chksum
    return bytes(p)


def route(client, prefix: str, mac: str, port: int) -> None:
    client.tables[LPM].insert({DST: prefix}, "ipv4_forward", {"dstAddr": mac, "port": port})


def raw_update(kind: int, build) -> object:
    update = pb.Update(type=kind)
    build(update.entity)
    return update


def lpm_entity(l3, value: bytes, plen: int, port: bytes = b"\x02") -> object:
    info = l3.client.names
    table = info.table(LPM)
    action = info.action("ipv4_forward")
    entity = pb.Entity()
    te = entity.table_entry
    te.table_id = table.preamble.id
    fm = te.match.add(field_id=table.match_fields[0].id)
    fm.lpm.value, fm.lpm.prefix_len = value, plen
    te.action.action.action_id = action.preamble.id
    te.action.action.params.add(param_id=1, value=b"\x01\x01")
    te.action.action.params.add(param_id=2, value=port)
    return entity


def insert(entity) -> object:
    update = pb.Update(type=pb.Update.INSERT)
    update.entity.CopyFrom(entity)
    return update


# --------------------------------------------------------------------------- l3_forward


def test_lpm_route_installed_by_name_forwards_packets(l3):
    route(l3.client, "10.0.0.0/16", NH3, 3)
    route(l3.client, "10.0.1.0/24", NH1, 2)
    near, far, none = frame("10.0.1.7"), frame("10.0.9.9"), frame("192.168.0.1")
    assert l3.switch.process(1, near) == [(2, routed(near, NH1))]
    assert l3.switch.process(1, far) == [(3, routed(far, NH3))]
    assert l3.switch.process(1, none) == []  # default action drop()
    route(l3.client, "0.0.0.0/0", NH2, 9)  # prefix length 0: the field is left out
    assert l3.switch.process(1, none) == [(9, routed(none, NH2))]
    assert l3.client.tables[LPM].read()[-1]["match"] == {}


def test_read_back_is_canonical(l3):
    route(l3.client, "10.0.1.0/24", NH1, 2)
    assert l3.client.tables[LPM].read() == [
        {
            "table": "MyIngress.ipv4_lpm",
            "match": {DST: (0x0A000100, 24)},
            "action": "MyIngress.ipv4_forward",
            "params": {"dstAddr": 0x0101, "port": 2},
            "priority": 0,
            "is_const": False,
        }
    ]
    entity = pb.Entity()
    entity.table_entry.table_id = l3.client.names.table(LPM).preamble.id
    (found,) = l3.client.read([entity])
    te = found.table_entry
    assert te.match[0].lpm.value == b"\x0a\x00\x01\x00"
    assert te.match[0].lpm.prefix_len == 24
    assert [(p.param_id, p.value) for p in te.action.action.params] == [
        (1, b"\x01\x01"),
        (2, b"\x02"),
    ]


def test_wildcard_read_of_all_tables(l3):
    route(l3.client, "10.0.1.0/24", NH1, 2)
    route(l3.client, "10.0.2.0/24", NH2, 3)
    entries = l3.client.tables.read()
    assert [e["match"][DST] for e in entries] == [(0x0A000100, 24), (0x0A000200, 24)]


def test_non_canonical_bytestrings_are_accepted(l3):
    entity = lpm_entity(l3, b"\x00\x00\x0a\x00\x01\x00", 24, port=b"\x00\x02")
    l3.client.write([insert(entity)])
    (entry,) = l3.client.tables[LPM].read()
    assert entry["match"] == {DST: (0x0A000100, 24)}
    assert entry["params"]["port"] == 2
    data = frame("10.0.1.1")
    assert l3.switch.process(1, data) == [(2, routed(data, NH1))]


def test_modify_and_delete(l3):
    route(l3.client, "10.0.1.0/24", NH1, 2)
    l3.client.tables[LPM].modify({DST: ("10.0.1.0", 24)}, "ipv4_forward",
                                 {"dstAddr": NH2, "port": 4})
    data = frame("10.0.1.7")
    assert l3.switch.process(1, data) == [(4, routed(data, NH2))]
    assert l3.client.tables[LPM].read()[0]["params"] == {"dstAddr": 0x0202, "port": 4}
    l3.client.tables[LPM].delete({DST: "10.0.1.0/24"})
    assert l3.client.tables[LPM].read() == []
    assert l3.switch.process(1, data) == []


def test_default_action_modify_and_reset(l3):
    l3.client.tables[LPM].default.modify("ipv4_forward", {"dstAddr": NH3, "port": 5})
    data = frame("172.16.0.1")
    assert l3.switch.process(1, data) == [(5, routed(data, NH3))]
    default = l3.client.tables[LPM].default.read()
    assert default["action"] == "MyIngress.ipv4_forward"
    assert default["params"] == {"dstAddr": 0x0303, "port": 5}
    assert default["is_default"] is True
    l3.client.tables[LPM].default.reset()
    assert l3.client.tables[LPM].default.read()["action"] == "MyIngress.drop"
    assert l3.switch.process(1, data) == []


# --------------------------------------------------------------------------- errors


def expect_error(code: str, call, *args, **kwargs) -> P4RuntimeError:
    with pytest.raises(P4RuntimeError) as info:
        call(*args, **kwargs)
    assert info.value.code == code, info.value
    return info.value


def test_unknown_table_id_is_not_found(l3):
    entity = lpm_entity(l3, b"\x0a\x00\x01\x00", 24)
    entity.table_entry.table_id = 0x02FFFFFF
    err = expect_error("NOT_FOUND", l3.client.write, [insert(entity)])
    assert err.index == 0
    assert "unknown table id" in err.message


def test_unknown_table_name_is_refused_before_sending(l3):
    with pytest.raises(UnknownNameError) as info:
        l3.client.tables["no_such_table"].insert({}, "drop")
    assert info.value.code == "NOT_FOUND"
    assert "no table named 'no_such_table'" in info.value.message
    with pytest.raises(UnknownNameError):
        l3.client.tables[LPM].insert({"no_such_field": 1}, "drop")


def test_unknown_action_id_is_not_found(l3):
    entity = lpm_entity(l3, b"\x0a\x00\x01\x00", 24)
    entity.table_entry.action.action.action_id = 0x01FFFFFF
    expect_error("NOT_FOUND", l3.client.write, [insert(entity)])
    assert l3.client.tables[LPM].read() == []


def test_wrong_key_width_is_invalid_and_changes_nothing(l3):
    err = expect_error("INVALID_ARGUMENT", l3.client.tables[LPM].insert,
                       {DST: (1 << 32, 32)}, "ipv4_forward", {"dstAddr": NH1, "port": 1})
    assert "does not fit in 32 bits" in err.message
    expect_error("INVALID_ARGUMENT", l3.client.write,
                 [insert(lpm_entity(l3, b"\x01\x0a\x00\x01\x00", 24))])
    expect_error("INVALID_ARGUMENT", l3.client.write, [insert(lpm_entity(l3, b"", 24))])
    # a 9-bit port parameter cannot hold 512
    expect_error("INVALID_ARGUMENT", route, l3.client, "10.0.1.0/24", NH1, 512)
    assert l3.client.tables[LPM].read() == []
    assert l3.switch.process(1, frame("10.0.1.1")) == []


def test_bits_beyond_prefix_and_bad_prefix_lengths(l3):
    expect_error("INVALID_ARGUMENT", route, l3.client, "10.0.1.1/24", NH1, 1)
    expect_error("INVALID_ARGUMENT", l3.client.write,
                 [insert(lpm_entity(l3, b"\x0a\x00\x01\x00", 33))])
    # prefix length 0 is a wildcard that must be omitted
    expect_error("INVALID_ARGUMENT", l3.client.write, [insert(lpm_entity(l3, b"\x00", 0))])
    assert l3.client.tables[LPM].read() == []


def test_priority_on_an_lpm_table_is_invalid(l3):
    expect_error("INVALID_ARGUMENT", l3.client.tables[LPM].insert, {DST: "10.0.1.0/24"},
                 "ipv4_forward", {"dstAddr": NH1, "port": 1}, priority=5)


def test_missing_parameter_is_invalid(l3):
    err = expect_error("INVALID_ARGUMENT", l3.client.tables[LPM].insert,
                       {DST: "10.0.1.0/24"}, "ipv4_forward", {"dstAddr": NH1})
    assert "missing parameter port" in err.message


def test_duplicate_insert_is_already_exists_and_keeps_the_entry(l3):
    route(l3.client, "10.0.1.0/24", NH1, 2)
    expect_error("ALREADY_EXISTS", route, l3.client, "10.0.1.0/24", NH2, 3)
    assert l3.client.tables[LPM].read()[0]["params"] == {"dstAddr": 0x0101, "port": 2}
    data = frame("10.0.1.7")
    assert l3.switch.process(1, data) == [(2, routed(data, NH1))]


def test_delete_or_modify_of_a_missing_entry_is_not_found(l3):
    expect_error("NOT_FOUND", l3.client.tables[LPM].delete, {DST: "10.0.1.0/24"})
    expect_error("NOT_FOUND", l3.client.tables[LPM].modify, {DST: "10.0.1.0/24"},
                 "ipv4_forward", {"dstAddr": NH1, "port": 1})


def test_default_entry_only_takes_modify(l3):
    entity = pb.Entity()
    te = entity.table_entry
    te.table_id = l3.client.names.table(LPM).preamble.id
    te.is_default_action = True
    te.action.action.action_id = l3.client.names.action("drop").preamble.id
    expect_error("INVALID_ARGUMENT", l3.client.write, [insert(entity)])


def test_batch_reports_the_failing_update_and_applies_the_rest(l3):
    with pytest.raises(P4RuntimeError) as info, l3.client.batch():
        route(l3.client, "10.0.1.0/24", NH1, 2)
        route(l3.client, "10.0.2.0/24", NH2, 999)
        route(l3.client, "10.0.3.0/24", NH3, 3)
    err = info.value
    assert (err.code, err.index) == ("INVALID_ARGUMENT", 1)
    assert err.details == [UpdateError(1, "INVALID_ARGUMENT", err.message)]
    assert "parameter port" in err.message
    installed = [e["match"][DST] for e in l3.client.tables[LPM].read()]
    assert installed == [(0x0A000100, 24), (0x0A000300, 24)]


def test_batch_sends_one_write_request(l3):
    seen = []
    write = l3.service.write
    l3.service.write = lambda request: seen.append(len(request.updates)) or write(request)
    with l3.client.batch():
        route(l3.client, "10.0.1.0/24", NH1, 2)
        route(l3.client, "10.0.2.0/24", NH2, 3)
        assert seen == []
    assert seen == [2]


def test_unknown_device_is_not_found(l3, make):
    """Arbitrating for an unknown device ends that stream; unary calls for it
    are NOT_FOUND too. The primary's own session is not disturbed."""
    from controller.p4rt import InProcessTransport, P4RuntimeClient

    transport = InProcessTransport(l3.service.session())
    expect_error("NOT_FOUND", P4RuntimeClient, transport, l3.service.p4info, device_id=7)
    other = P4RuntimeClient(transport, l3.service.p4info, device_id=7, arbitrate=False)
    expect_error("NOT_FOUND", route, other, "10.0.1.0/24", NH1, 1)
    assert l3.client.is_primary
    route(l3.client, "10.0.1.0/24", NH1, 1)


def test_only_the_primary_client_writes(l3):
    from controller.p4rt import InProcessTransport, P4RuntimeClient

    backup = P4RuntimeClient(InProcessTransport(l3.service.session()), l3.service.p4info,
                             election_id=(0, 0))
    assert l3.client.is_primary and not backup.is_primary
    expect_error("PERMISSION_DENIED", route, backup, "10.0.1.0/24", NH1, 1)
    assert backup.tables[LPM].read() == []  # reads stay open
    route(l3.client, "10.0.1.0/24", NH1, 1)


# --------------------------------------------------------------------------- packet_io.p4


def test_missing_exact_field_is_invalid(io):
    err = expect_error("INVALID_ARGUMENT", io.client.tables["fwd"].insert, {}, "to_port",
                       {"port": 1})
    assert "missing exact match field hdr.ethernet.dstAddr" in err.message
    assert io.client.tables["fwd"].read() == []


def test_ternary_range_optional_priorities(io):
    c = io.client
    acl = "acl"
    c.tables[acl].insert({"srcAddr": (0x0A, 0xFF)}, "acl_redirect", {"port": 7}, priority=1)
    c.tables[acl].insert({"srcAddr": (0x0A, 0xFF), "etherType": (0x800, 0x8FF)},
                         "acl_redirect", {"port": 8}, priority=5)
    c.tables[acl].insert({"ingress_port": 3, "srcAddr": (0, 0)}, "acl_drop", priority=9)
    base = bytes.fromhex("000000000002" "00000000000a")
    ip, arp = base + b"\x08\x00" + b"x", base + b"\x08\x06" + b"x"
    assert io.switch.process(1, ip) == [(8, ip)]
    assert io.switch.process(1, arp) == [(8, arp)]
    assert io.switch.process(1, base + b"\x86\xdd" + b"x") == [(7, base + b"\x86\xddx")]
    assert io.switch.process(3, ip) == []
    entries = io.client.tables[acl].read()
    assert [(e["priority"], e["match"]) for e in entries] == [
        (1, {"hdr.ethernet.srcAddr": (0x0A, 0xFF)}),
        (5, {"hdr.ethernet.srcAddr": (0x0A, 0xFF), "hdr.ethernet.etherType": (0x800, 0x8FF)}),
        (9, {"standard_metadata.ingress_port": 3}),
    ]
    # same match, different priority: a different entry
    c.tables[acl].insert({"srcAddr": (0x0A, 0xFF)}, "acl_drop", priority=2)
    expect_error("ALREADY_EXISTS", c.tables[acl].insert, {"srcAddr": (0x0A, 0xFF)},
                 "acl_drop", priority=2)
    c.tables[acl].delete({"srcAddr": (0x0A, 0xFF)}, priority=2)
    expect_error("NOT_FOUND", c.tables[acl].delete, {"srcAddr": (0x0A, 0xFF)}, priority=3)


def test_priority_rules_and_dont_care_encodings(io):
    c = io.client
    expect_error("INVALID_ARGUMENT", c.tables["acl"].insert, {"srcAddr": (1, 0xFF)},
                 "acl_drop")
    expect_error("INVALID_ARGUMENT", c.tables["acl"].insert, {"srcAddr": (0x100, 0xFF)},
                 "acl_drop", priority=1)
    expect_error("INVALID_ARGUMENT", c.tables["acl"].insert, {"etherType": (9, 2)},
                 "acl_drop", priority=1)
    table = c.names.table("acl")
    entity = pb.Entity()
    te = entity.table_entry
    te.table_id, te.priority = table.preamble.id, 1
    te.action.action.action_id = c.names.action("acl_drop").preamble.id
    fm = te.match.add(field_id=1)
    fm.ternary.value, fm.ternary.mask = b"\x00", b"\x00"
    err = expect_error("INVALID_ARGUMENT", c.write, [insert(entity)])
    assert "zero mask" in err.message
    fm.ClearField("ternary")
    fm.field_id = 2
    fm.range.low, fm.range.high = b"\x00", b"\xff\xff"
    err = expect_error("INVALID_ARGUMENT", c.write, [insert(entity)])
    assert "full range" in err.message
    fm.ClearField("range")
    fm.exact.value = b"\x01"
    err = expect_error("INVALID_ARGUMENT", c.write, [insert(entity)])
    assert "is range, got a exact match" in err.message
    assert c.tables["acl"].read() == []


def test_const_default_action_is_permission_denied(io):
    expect_error("PERMISSION_DENIED", io.client.tables["acl"].default.modify, "acl_drop")


def test_action_scope_and_table_membership(io):
    with pytest.raises(UnknownNameError):
        io.client.tables["fwd"].insert({"dstAddr": 1}, "acl_drop")
    entity = pb.Entity()
    te = entity.table_entry
    te.table_id = io.client.names.table("fwd").preamble.id
    te.match.add(field_id=1).exact.value = b"\x01"
    te.action.action.action_id = io.client.names.action("acl_drop").preamble.id
    err = expect_error("INVALID_ARGUMENT", io.client.write, [insert(entity)])
    assert "is not an action of IoIngress.fwd" in err.message


# --------------------------------------------------------------------------- p4c's samples


def test_sample_with_p4c_p4info_and_named_key_fields(samples, make):
    p4info = load_text(samples / "match-on-exprs-bmv2.p4info.txtpb")
    rig = make(samples / "match-on-exprs-bmv2.p4", p4info)
    rig.client.tables["t1"].insert(
        {"ethernet.srcAddr.slice": 0x1F, "dstAddr_lsbs": 0x010101010101,
         "etherType_less_10": 0xF00F},
        "foo",
        {"out_port": 3},
    )
    (entry,) = rig.client.read([_wildcard(rig, "t1")])
    assert entry.table_entry.table_id == 49173205  # p4c's id for ingressImpl.t1
    packet = bytes.fromhex("ff01ff01ff01" "0000007c003e" "f019")
    assert rig.switch.process(1, packet) == [(3, bytes.fromhex("ff01ff7dff01" "0000007c003e"
                                                              "f019"))]


def test_const_entries_are_read_and_protected(samples, make):
    rig = make(samples / "table-entries-ternary-bmv2.p4")
    entries = rig.client.tables["t_ternary"].read()
    assert [(e["match"], e["params"], e["is_const"]) for e in entries] == [
        ({"h.h.t": (0x1111 & 0xF, 0xF)}, {"x": 1}, True),
        ({"h.h.t": (0x1187, 0xFFFF)}, {"x": 2}, True),
        ({"h.h.t": (0x1000, 0xF000)}, {"x": 3}, True),
        ({}, {"x": 4}, True),
    ]
    priorities = [e["priority"] for e in entries]
    assert priorities == sorted(priorities, reverse=True) and min(priorities) > 0
    expect_error("PERMISSION_DENIED", rig.client.tables["t_ternary"].insert,
                 {"h.h.t": (0x2222, 0xFFFF)}, "a", priority=100)
    expect_error("PERMISSION_DENIED", rig.client.tables["t_ternary"].delete,
                 {"h.h.t": (0x1187, 0xFFFF)}, priority=priorities[1])
    assert len(rig.client.tables["t_ternary"].read()) == 4


def _wildcard(rig, table: str) -> object:
    entity = pb.Entity()
    entity.table_entry.table_id = rig.client.names.table(table).preamble.id
    return entity
