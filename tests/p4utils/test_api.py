"""The p4-utils APIs: each call leaves a switch in the state the equivalent
P4Runtime writes leave another, read back through P4Runtime; bad input
prints p4-utils' error and returns None; calls P4Runtime cannot express
raise, naming the call."""

from __future__ import annotations

from typing import Any

import pytest

from controller.p4rt import InProcessTransport, P4RuntimeClient
from controller.p4rt.protos import protos
from controller.p4utils.connect import CONTROLLER_ELECTION_ID
from controller.p4utils.errors import NotHonouredError
from controller.p4utils.p4runtime_api import SimpleSwitchP4RuntimeAPI
from controller.p4utils.thrift_api import SimpleSwitchThriftAPI
from tests.p4app.test_cli_commands import DST, PORT, Rig, equivalent_writes, state


class ApiRig(Rig):
    """A switch whose service takes register writes (as a controller's
    network does), a controller's session and an observer's."""

    def __init__(self) -> None:
        super().__init__()
        self.service.register_writes = True
        self.session = P4RuntimeClient(InProcessTransport(self.service), self.service.p4info,
                                       election_id=CONTROLLER_ELECTION_ID)

    def thrift(self) -> SimpleSwitchThriftAPI:
        return SimpleSwitchThriftAPI(9090, p4rt=self.session)

    def p4runtime(self) -> SimpleSwitchP4RuntimeAPI:
        return SimpleSwitchP4RuntimeAPI(1, 9559, p4rt=self.session)


def thrift_calls(api: SimpleSwitchThriftAPI) -> dict[str, Any]:
    """The command file of test_cli_commands, as a controller calls it."""
    out: dict[str, Any] = {}
    api.table_set_default("dmac", "drop", [])
    out["h0"] = api.table_add("dmac", "metered_forward", ["00:00:0a:00:00:01", "1"], ["2"])
    out["h1"] = api.table_add("dmac", "metered_forward", ["0x00000a000002", "2"], ["3"])
    out["h2"] = api.table_add("Ing.dmac", "drop", ["00:00:0a:00:00:03", "3"], [])
    api.table_modify("dmac", "metered_forward", out["h1"], ["7"])
    api.table_delete("dmac", out["h2"])
    out["h2b"] = api.table_add("dmac", "NoAction", ["167772164", "4"])
    api.table_add("ipv4_lpm", "set_nhop", ["10.0.1.0/24"], ["00:00:00:00:01:01", "1"])
    api.table_add("ipv4_lpm", "set_nhop", ["10.0.2.7/32"], ["00:00:00:00:02:07", "2"])
    api.table_set_default("acl", "count_acl", ["0x10"])
    api.table_add("acl", "deny", ["10.0.0.0&&&0xff000000", "6->17"], [], prio=10)
    api.table_add("acl", "count_acl", ["0x0a000001&&&0xffffffff", "0->255"], ["0x2a"], prio=5)
    api.mirroring_add(5, 3)
    api.mirroring_add(6, 4)
    api.mirroring_add(6, 9)
    api.mc_mgrp_create(1)
    out["n0"] = api.mc_node_create(0, [1, 2])
    out["n1"] = api.mc_node_create(7, [3])
    api.mc_node_associate(1, out["n0"])
    api.mc_node_associate(1, out["n1"])
    api.mc_mgrp_create(2)
    api.register_write("last_len", 3, 1500)
    api.register_write("Ing.last_len", 4, 0xFFFFFFFF)
    api.counter_write("port_pkts", 2, 10, 1000)
    api.counter_reset("port_pkts")
    api.counter_write("port_pkts", 5, 7, 700)
    api.meter_set_rates("port_meter", 2, [(0.5, 10), (1, 20)])
    api.meter_set_rates("dmac_meter", out["h0"], [(0.001, 100), (0.002, 200)])
    return out


def test_thrift_api_calls_match_the_equivalent_p4runtime_writes() -> None:
    by_api, by_hand = ApiRig(), Rig()
    handles = thrift_calls(by_api.thrift())
    equivalent_writes(by_hand)
    got, want = state(by_api.client), state(by_hand.client)
    for key in want:
        assert got[key] == want[key], key
    # BMv2's handles: the lowest free one, a deleted handle reused first.
    assert [handles[k] for k in ("h0", "h1", "h2", "h2b")] == [0, 1, 2, 2]
    assert (handles["n0"], handles["n1"]) == (0, 1)
    assert got["register"][3:5] == [1500, 0xFFFFFFFF]


def test_thrift_api_reads_what_p4runtime_reads() -> None:
    rig = ApiRig()
    api = rig.thrift()
    thrift_calls(api)
    observer = rig.client
    assert api.register_read("last_len", 3) == observer.registers["last_len"].read(3) == 1500
    assert api.register_read("last_len") == observer.registers["last_len"].read()
    value = api.counter_read("port_pkts", 5)
    packets, nbytes = observer.counters["port_pkts"].read(5)
    assert (value.bytes, value.packets) == (nbytes, packets) == (700, 7)
    assert tuple(value) == (700, 7)  # p4-utils returns (bytes, packets)
    assert api.table_num_entries("dmac") == len(observer.tables["dmac"].read()) == 3
    assert api.meter_get_rates("port_meter", 2) == [(0.5, 10), (1.0, 20)]
    assert api.mirroring_get(6) == [p for p, _ in observer.clone_sessions.read()[6]] == [9]
    assert api.get_handle_from_match("dmac", ["00:00:0a:00:00:01", "1"]) == 0


def test_thrift_match_based_calls_and_ranges() -> None:
    rig = ApiRig()
    api = rig.thrift()
    api.table_add("dmac", "metered_forward", ["00:00:0a:00:00:01", "1"], ["2"])
    api.table_modify_match("dmac", "metered_forward", ["00:00:0a:00:00:01", "1"], ["5"])
    (entry,) = rig.client.tables["dmac"].read()
    assert (entry["action"], entry["params"]) == ("Ing.metered_forward", {"port": 5})
    api.table_delete_match("dmac", ["00:00:0a:00:00:01", "1"])
    assert rig.client.tables["dmac"].read() == []
    api.register_write("last_len", [10, 12], 9)
    assert rig.client.registers["last_len"].read()[9:14] == [0, 9, 9, 9, 0]
    api.register_reset("last_len")
    assert set(rig.client.registers["last_len"].read()) == {0}


def test_reset_state_clears_what_the_calls_set() -> None:
    rig = ApiRig()
    api = rig.thrift()
    thrift_calls(api)
    api.reset_state()
    fresh = state(Rig().client)
    got = state(rig.client)
    for key in fresh:
        assert got[key] == fresh[key], key
    # Handles start again from 0 after a reset, as on BMv2.
    assert api.table_add("dmac", "drop", ["00:00:0a:00:00:09", "1"]) == 0


def test_p4runtime_api_calls_match_the_equivalent_p4runtime_writes() -> None:
    rig, by_hand = ApiRig(), Rig()
    api = rig.p4runtime()
    api.table_add("dmac", "metered_forward", ["00:00:0a:00:00:01", "1"], ["2"])
    api.table_add("acl", "deny", ["10.0.0.0&&&0xff000000", "6..17"], [], prio=7)
    api.table_set_default("ipv4_lpm", "set_nhop", ["00:00:00:00:01:01", "3"])
    api.mc_mgrp_create(3, [1, 2], [0, 5])
    api.cs_create(4, [6])
    api.counter_write("port_pkts", 1, 3, 300)
    api.meter_array_set_rates("port_meter", [(0.25, 4), (0.5, 8)])
    c = by_hand.client
    c.tables["dmac"].insert({DST: 0x00000A000001, PORT: 1}, "metered_forward", {"port": 2})
    c.tables["acl"].insert({"hdr.ipv4.srcAddr": (0x0A000000, 0xFF000000),
                            "hdr.ipv4.protocol": (6, 17)}, "deny", priority=7)
    c.tables["ipv4_lpm"].default.modify("set_nhop", {"dmac": 0x000000000101, "port": 3})
    c.multicast_groups.insert(3, [(1, 0), (2, 5)])
    c.clone_sessions.insert(4, [6])
    c.counters["port_pkts"].modify(1, packets=3, bytes=300)
    c.meters["port_meter"].modify(None, (250_000, 4, 500_000, 8))
    got, want = state(rig.client), state(c)
    for key in want:
        assert got[key] == want[key], key
    assert api.counter_read("port_pkts", 1) == (300, 3)
    assert api.mc_get_replicas(3) == [(1, 0), (2, 5)]
    assert api.cs_get_replicas(4) == [(6, 0)]
    api.table_delete_match("acl", ["10.0.0.0&&&0xff000000", "6..17"], prio=7)
    api.cs_destroy(4)
    api.mc_mgrp_destroy(3)
    assert rig.client.tables["acl"].read() == []
    assert rig.client.clone_sessions.read() == {} and rig.client.multicast_groups.read() == {}


@pytest.mark.parametrize("call, message", [
    (lambda a: a.table_add("nope", "drop", ["1"]), "Error: no table named 'nope'"),
    (lambda a: a.table_add("dmac", "nope", ["1", "2"]), "no action named 'nope'"),
    (lambda a: a.table_add("dmac", "drop", ["1"]), "has 2 match fields"),
    (lambda a: a.register_read("nope", 0), "Error: Invalid register name (nope)"),
])
def test_bad_input_prints_as_p4utils_and_returns_none(call: Any, message: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    rig = ApiRig()
    assert call(rig.thrift()) is None
    assert message in capsys.readouterr().out
    assert rig.client.tables["dmac"].read() == []


def test_the_p4runtime_api_prints_what_a_call_raises(capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    api = ApiRig().p4runtime()
    assert api.table_add("nope", "drop", ["1"]) is None
    assert api.table_add("dmac", "drop", "not a list") is None
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("no table named 'nope'")
    assert out[1] == "match_keys is not a list."


@pytest.mark.parametrize("call, name", [
    (lambda a: a.set_queue_depth(10), "set_queue_depth"),
    (lambda a: a.mirroring_add_mc(3, 1), "mirroring_add_mc"),
    (lambda a: a.mc_node_create(0, [1], [2]), "mc_node_create"),
    (lambda a: a.swap_configs(), "swap_configs"),
])
def test_calls_intbed_cannot_honour_raise_naming_the_call(call: Any, name: str) -> None:
    with pytest.raises(NotHonouredError) as err:
        call(ApiRig().thrift())
    assert f"SimpleSwitchThriftAPI.{name}: not supported by intbed: " in err.value.message


def test_p4runtime_table_add_with_rates_sets_the_direct_meter() -> None:
    rig = ApiRig()
    api = rig.p4runtime()
    api.table_add("dmac", "drop", ["00:00:0a:00:00:01", "1"], rates=[(0.001, 100), (0.002, 200)])
    api.table_add("ipv4_lpm", "drop", ["10.0.0.0/8"], rates=[(1, 1), (2, 2)])  # no meter
    assert [e["table"] for e in rig.client.tables.read()] == ["Ing.dmac"]  # nothing half-done
    pb = protos().p4runtime_pb2
    query = pb.Entity()
    query.direct_meter_entry.table_entry.table_id = rig.client.names.table("dmac").preamble.id
    (found,) = rig.client.read([query])
    config = found.direct_meter_entry.config
    assert (config.cir, config.cburst, config.pir, config.pburst) == (1000, 100, 2000, 200)
