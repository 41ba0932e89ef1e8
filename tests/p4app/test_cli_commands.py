"""simple_switch_CLI command files: each kind of command leaves the switch in
the state the equivalent P4Runtime writes leave it in (read back through
P4Runtime), and bad lines are one located line each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.bmcli import CommandFileError, CommandRunner, cli_priority_to_p4rt
from controller.bmcli.parse import parse_commands
from controller.p4rt import InProcessTransport, P4RuntimeClient
from controller.p4rt.protos import protos
from dataplane.compiler.pipeline import compile_file
from dataplane.control.service import RuntimeService
from dataplane.runtime.switch import Switch
from orchestration.switch_access import EngineRegisters

PROGRAM = Path(__file__).resolve().parent / "cli_kinds.p4"
DST = "hdr.ethernet.dstAddr"
PORT = "sm.ingress_port"

COMMANDS = """\
// every kind of command the translator knows
table_set_default dmac drop
table_add dmac metered_forward 00:00:0a:00:00:01 1 => 2
table_add dmac metered_forward 0x00000a000002 2 => 3
table_add Ing.dmac drop 00:00:0a:00:00:03 3 =>
table_modify dmac metered_forward 1 7
table_delete dmac 2
table_add dmac NoAction 167772164 4 =>
table_add ipv4_lpm set_nhop 10.0.1.0/24 => 00:00:00:00:01:01 1
table_add ipv4_lpm set_nhop 10.0.2.7/32 => 00:00:00:00:02:07 2
table_set_default acl count_acl 0x10
table_add acl deny 10.0.0.0&&&0xff000000 6->17 => 10
table_add acl count_acl 0x0a000001&&&0xffffffff 0->255 => 0x2a 5
mirroring_add 5 3
mirroring_add 6 4
mirroring_add 6 9
mc_mgrp_create 1
mc_node_create 0 1 2
mc_node_create 7 3
mc_node_associate 1 0
mc_node_associate 1 1
mc_mgrp_create 2
register_write last_len 3 1500
register_write Ing.last_len 4 0xffffffff
counter_write port_pkts 2 10 1000
counter_reset port_pkts
counter_write port_pkts 5 7 700
meter_set_rates port_meter 2 0.5:10 1:20
meter_set_rates dmac_meter 0 0.001:100 0.002:200
"""


class Rig:
    def __init__(self) -> None:
        self.switch = Switch(compile_file(PROGRAM))
        self.service = RuntimeService(self.switch)
        self.client = P4RuntimeClient(InProcessTransport(self.service), self.service.p4info)


def state(client: P4RuntimeClient) -> dict[str, Any]:
    """Everything a command file can change, read back through P4Runtime."""
    pb = protos().p4runtime_pb2
    tables = [t.preamble.name for t in client.p4info.tables]
    out: dict[str, Any] = {
        "entries": {t: sorted(map(repr, client.tables[t].read())) for t in tables},
        "defaults": {t: client.tables[t].default.read() for t in tables},
        "clones": client.clone_sessions.read(),
        "groups": client.multicast_groups.read(),
        "counter": client.counters["port_pkts"].read(),
        "meter": [client.meters["port_meter"].read(i) for i in range(64)],
        "register": client.registers["last_len"].read(),
    }
    query = pb.Entity()
    query.direct_meter_entry.table_entry.table_id = client.names.table("dmac").preamble.id
    out["direct_meters"] = sorted(e.SerializeToString(deterministic=True)
                                  for e in client.read([query]))
    return out


def equivalent_writes(rig: Rig) -> None:
    """What COMMANDS does, written as P4Runtime requests by hand."""
    c = rig.client
    c.tables["dmac"].default.modify("drop")
    c.tables["dmac"].insert({DST: 0x00000A000001, PORT: 1}, "metered_forward", {"port": 2})
    c.tables["dmac"].insert({DST: 0x00000A000002, PORT: 2}, "metered_forward", {"port": 3})
    c.tables["dmac"].insert({DST: 0x00000A000003, PORT: 3}, "drop")
    c.tables["dmac"].modify({DST: 0x00000A000002, PORT: 2}, "metered_forward", {"port": 7})
    c.tables["dmac"].delete({DST: 0x00000A000003, PORT: 3})
    c.tables["dmac"].insert({DST: 167772164, PORT: 4}, "NoAction")
    c.tables["ipv4_lpm"].insert({"hdr.ipv4.dstAddr": (0x0A000100, 24)}, "set_nhop",
                                {"dmac": 0x000000000101, "port": 1})
    c.tables["ipv4_lpm"].insert({"hdr.ipv4.dstAddr": (0x0A000207, 32)}, "set_nhop",
                                {"dmac": 0x000000000207, "port": 2})
    c.tables["acl"].default.modify("count_acl", {"tag": 16})
    c.tables["acl"].insert({"hdr.ipv4.srcAddr": (0x0A000000, 0xFF000000),
                            "hdr.ipv4.protocol": (6, 17)}, "deny",
                           priority=cli_priority_to_p4rt(10))
    c.tables["acl"].insert({"hdr.ipv4.srcAddr": (0x0A000001, 0xFFFFFFFF),
                            "hdr.ipv4.protocol": (0, 255)}, "count_acl", {"tag": 42},
                           priority=cli_priority_to_p4rt(5))
    c.clone_sessions.insert(5, [3])
    c.clone_sessions.insert(6, [4])
    c.clone_sessions.modify(6, [9])
    c.multicast_groups.insert(1, [])
    c.multicast_groups.modify(1, [(1, 0), (2, 0)])
    c.multicast_groups.modify(1, [(1, 0), (2, 0), (3, 7)])
    c.multicast_groups.insert(2, [])
    regs = rig.switch.externs[[e.qname for e in rig.switch.program.externs].index("Ing.last_len")]
    regs.set(3, 1500)
    regs.set(4, 0xFFFFFFFF)
    c.counters["port_pkts"].modify(2, packets=10, bytes=1000)
    c.counters["port_pkts"].modify(None)
    c.counters["port_pkts"].modify(5, packets=7, bytes=700)
    c.meters["port_meter"].modify(2, (500_000, 10, 1_000_000, 20))
    c.tables["dmac"].direct_meter.modify({DST: 0x00000A000001, PORT: 1}, (1000, 100, 2000, 200))


def run_text(rig: Rig, text: str, file: str = "s1-commands.txt") -> CommandRunner:
    runner = CommandRunner(rig.client, registers=EngineRegisters(rig.switch))
    runner.run(parse_commands(text, file))
    return runner


def test_every_command_kind_matches_the_equivalent_p4runtime_writes() -> None:
    by_file, by_hand = Rig(), Rig()
    runner = run_text(by_file, COMMANDS)
    equivalent_writes(by_hand)
    got, want = state(by_file.client), state(by_hand.client)
    for key in want:
        assert got[key] == want[key], key
    # The state is the intended one, not merely the same mistake twice.
    assert got["counter"][2] == (0, 0) and got["counter"][5] == (7, 700)
    assert got["register"][3:5] == [1500, 0xFFFFFFFF]
    assert got["clones"] == {5: [(3, 0)], 6: [(9, 0)]}
    assert got["groups"] == {1: [(1, 0), (2, 0), (3, 7)], 2: []}
    assert got["meter"][2] == (500_000, 10, 1_000_000, 20)
    assert len(got["entries"]["Ing.dmac"]) == 3
    # BMv2's handles: 0, 1, 2 in order, then the deleted 2 is the lowest free.
    assert [line for line in runner.output if "handle" in line][:4] == [
        f"Entry has been added with handle {h}" for h in (0, 1, 2, 2)]


def test_register_reset_and_counter_reset_clear_every_cell() -> None:
    rig = Rig()
    run_text(rig, "register_write last_len 9 77\ncounter_write port_pkts 1 3 300\n")
    assert rig.client.registers["last_len"].read(9) == 77
    run_text(rig, "register_reset last_len\ncounter_reset port_pkts\n")
    assert set(rig.client.registers["last_len"].read()) == {0}
    assert set(rig.client.counters["port_pkts"].read()) == {(0, 0)}


def test_direct_counter_reset_zeroes_every_entry_of_its_table() -> None:
    rig = Rig()
    run_text(rig, "table_add acl deny 10.0.0.0&&&0xff000000 6->17 => 1\n")
    match = {"hdr.ipv4.srcAddr": (0x0A000000, 0xFF000000), "hdr.ipv4.protocol": (6, 17)}
    pb = protos().p4runtime_pb2
    entity = pb.Entity()
    rig.client.tables["acl"]._key(entity.direct_counter_entry.table_entry, match,
                                  cli_priority_to_p4rt(1))
    entity.direct_counter_entry.data.packet_count = 5
    update = pb.Update(type=pb.Update.MODIFY)
    update.entity.CopyFrom(entity)
    rig.client.write([update])
    assert rig.client.tables["acl"].direct_counter.read(match, cli_priority_to_p4rt(1))[0] == 5
    run_text(rig, "counter_reset acl_hits\n")
    assert rig.client.tables["acl"].direct_counter.read(match, cli_priority_to_p4rt(1))[0] == 0


def test_register_write_without_target_access_reports_the_switch_refusal() -> None:
    rig = Rig()
    runner = CommandRunner(rig.client)
    with pytest.raises(CommandFileError) as err:
        runner.run(parse_commands("register_write last_len 1 5\n", "r.txt"))
    assert err.value.line().startswith("r.txt:1: error: register_write: ")
    assert "UNIMPLEMENTED" in err.value.line() or "not supported" in err.value.line()


@pytest.mark.parametrize(("text", "line", "expect"), [
    ("table_add dmac drop 00:00:0a:00:00:01 1 =>\ntable_dump dmac\n", 2,
     "table_dump: this simple_switch_CLI command is not supported"),
    ("\n\nfoo_bar 1 2\n", 3, "unknown command 'foo_bar'"),
    ("table_add dmac drop 00:00:0a:00:00:01 =>\n", 1,
     "table_add: table Ing.dmac has 2 match fields"),
    ("table_add dmac metered_forward 00:00:0a:00:00:01 1 => 512\n", 1,
     "table_add: parameter port of Ing.metered_forward '512' is too wide: 10 bits for a "
     "9-bit field"),
    ("table_add nosuch drop 1 =>\n", 1, "table_add: no table named 'nosuch'"),
    ("table_add acl deny 10.0.0.0&&&0xff000000 6->17 =>\n", 1,
     "give a priority after the action parameters"),
    ("table_delete dmac 4\n", 1, "table Ing.dmac has no entry with handle 4"),
    ("mc_node_associate 3 0\n", 1, "multicast group 3 was not created"),
    ("set_queue_rate 100\n", 1, "queues cannot be set"),
])
def test_bad_lines_are_one_located_line(text: str, line: int, expect: str) -> None:
    rig = Rig()
    with pytest.raises(CommandFileError) as err:
        run_text(rig, text, "cmds.txt")
    message = err.value.line()
    assert "\n" not in message
    assert message.startswith(f"cmds.txt:{line}: error: ")
    assert expect in message, message
    assert "(in '" in message  # the command itself is quoted


def test_a_failing_line_stops_the_file_there() -> None:
    rig = Rig()
    text = ("table_add dmac drop 00:00:0a:00:00:01 1 =>\n"
            "table_add dmac drop 00:00:0a:00:00:01 1 =>\n"
            "table_add dmac drop 00:00:0a:00:00:02 2 =>\n")
    with pytest.raises(CommandFileError) as err:
        run_text(rig, text, "dup.txt")
    assert err.value.line().startswith("dup.txt:2: error: table_add: ")
    assert len(rig.client.tables["dmac"].read()) == 1
