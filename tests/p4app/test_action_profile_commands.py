"""simple_switch_CLI's action-profile commands (act_prof_*, table_indirect_*)
leave a switch as the equivalent P4Runtime writes do, and a group built by
commands sends packets to its members only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.bmcli import CommandFileError, CommandRunner
from controller.bmcli.parse import parse_commands
from controller.p4rt import InProcessTransport, P4RuntimeClient
from controller.p4rt.protos import protos
from dataplane.compiler.pipeline import compile_file
from dataplane.control.service import RuntimeService
from dataplane.runtime.switch import Switch

PROGRAM = Path(__file__).resolve().parents[1] / "p4" / "ecmp_selector.p4"
SEL = "Ingress.ecmp_selector"
PROF = "port_profile"

COMMANDS = """\
act_prof_create_member ecmp_selector set_nhop 00:00:00:00:00:01 1
act_prof_create_member ecmp_selector set_nhop 00:00:00:00:00:02 2
act_prof_create_member ecmp_selector set_nhop 00:00:00:00:00:03 3
act_prof_create_member ecmp_selector drop
act_prof_delete_member ecmp_selector 3
act_prof_modify_member ecmp_selector set_nhop 2 00:00:00:00:00:0c 12
act_prof_create_group ecmp_selector
act_prof_add_member_to_group ecmp_selector 0 0
act_prof_add_member_to_group ecmp_selector 1 0
act_prof_add_member_to_group ecmp_selector 2 0
act_prof_remove_member_from_group ecmp_selector 1 0
act_prof_create_group ecmp_selector
table_indirect_add_with_group ecmp 10.0.0.0/8 => 0
table_indirect_add ecmp 192.168.0.0/16 => 1
table_indirect_add ecmp 172.16.0.0/12 => 2
table_indirect_delete ecmp 2
table_indirect_create_member by_port set_nhop 00:00:00:00:00:09 9
table_indirect_add by_port 5 => 0
"""


def rig() -> tuple[Switch, P4RuntimeClient]:
    """The ECMP program on an engine switch behind its in-process service."""
    switch = Switch(compile_file(PROGRAM))
    service = RuntimeService(switch)
    return switch, P4RuntimeClient(InProcessTransport(service), service.p4info)


def state(client: P4RuntimeClient) -> dict[str, Any]:
    pb = protos().p4runtime_pb2
    out: dict[str, Any] = {
        "entries": {t.preamble.name: sorted(map(repr, client.tables[t.preamble.name].read()))
                    for t in client.p4info.tables},
        "defaults": {t.preamble.name: client.tables[t.preamble.name].default.read()
                     for t in client.p4info.tables},
    }
    for kind in ("action_profile_member", "action_profile_group"):
        query = pb.Entity()
        getattr(query, kind).SetInParent()
        out[kind] = sorted(e.SerializeToString(deterministic=True)
                           for e in client.read([query]))
    return out


def by_hand(c: P4RuntimeClient) -> None:
    c.action_profiles[SEL].members.insert(0, "set_nhop", {"dmac": 1, "port": 1})
    c.action_profiles[SEL].members.insert(1, "set_nhop", {"dmac": 2, "port": 2})
    c.action_profiles[SEL].members.insert(2, "set_nhop", {"dmac": 3, "port": 3})
    c.action_profiles[SEL].members.insert(3, "drop")
    c.action_profiles[SEL].members.delete(3)
    c.action_profiles[SEL].members.modify(2, "set_nhop", {"dmac": 12, "port": 12})
    c.action_profiles[SEL].groups.insert(0, [])
    c.action_profiles[SEL].groups.modify(0, [0, 2])
    c.action_profiles[SEL].groups.insert(1, [])
    c.tables["ecmp"].insert({"h.ipv4.dst_addr": "10.0.0.0/8"}, group=0)
    c.tables["ecmp"].insert({"h.ipv4.dst_addr": "192.168.0.0/16"}, member=1)
    c.tables["ecmp"].insert({"h.ipv4.dst_addr": "172.16.0.0/12"}, member=2)
    c.tables["ecmp"].delete({"h.ipv4.dst_addr": "172.16.0.0/12"})
    c.action_profiles[PROF].members.insert(0, "set_nhop", {"dmac": 9, "port": 9})
    c.tables["by_port"].insert({"sm.ingress_port": 5}, member=0)


def test_commands_match_the_equivalent_p4runtime_writes() -> None:
    (_, by_commands), (_, by_writes) = rig(), rig()
    runner = CommandRunner(by_commands)
    runner.run(parse_commands(COMMANDS, "cmds.txt"))
    by_hand(by_writes)
    assert state(by_commands) == state(by_writes)
    assert runner.output.count("Group has been created with handle 1") == 1
    assert "Member has been created with handle 3" in runner.output
    # Member 3 was deleted, so the next member of that profile reuses no
    # handle here (it is another profile), and the port profile starts at 0.
    assert runner.output[-2:] == ["Member has been created with handle 0",
                                  "Entry has been added with handle 0"]


@pytest.mark.parametrize(("text", "expect"), [
    ("act_prof_create_member nosuch set_nhop 1 1", "action profile"),
    ("act_prof_create_member ecmp_selector set_nhop 1", "takes 2 parameters"),
    ("act_prof_add_member_to_group ecmp_selector 0 0", "has no member 0"),
    ("act_prof_create_member ecmp_selector drop\nact_prof_add_member_to_group ecmp_selector 0 4",
     "has no group 4"),
    ("table_indirect_add dmac_nosuch 1 => 0", "table"),
    ("act_prof_create_member ecmp_selector drop\ntable_indirect_add ecmp 10.0.0.0/8 0",
     "usage: table_indirect_add"),
    # P4Runtime (PI over BMv2) keeps an indirect table's default entry to the
    # program: the switch's refusal is the line's error.
    ("act_prof_create_group ecmp_selector\ntable_indirect_set_default_with_group ecmp 0",
     "cannot set / reset default action for indirect table"),
])
def test_bad_lines_are_one_located_line(text: str, expect: str) -> None:
    with pytest.raises(CommandFileError) as err:
        CommandRunner(rig()[1]).run(parse_commands(text, "cmds.txt"))
    assert expect in err.value.message
    assert err.value.loc is not None and err.value.loc.file == "cmds.txt"


def test_packets_follow_the_members_the_commands_built() -> None:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    switch, client = rig()
    CommandRunner(client).run(parse_commands(COMMANDS, "cmds.txt"))
    seen: dict[str, set[int]] = {"10.": set(), "192.168.": set()}
    for i in range(200):
        for prefix, dst in (("10.", f"10.0.{i % 250}.{i % 7 + 1}"), ("192.168.", "192.168.1.1")):
            frame = bytes(Ether() / IP(src=f"1.2.3.{i % 250}", dst=dst) / UDP(sport=1000 + i,
                                                                             dport=53))
            (port, _), = switch.process(0, frame)
            seen[prefix].add(port)
    # The group holds members 0 (port 1) and 2 (modified to port 12), not
    # member 1, which was removed; 192.168/16 points at member 1 (port 2).
    assert seen == {"10.": {1, 12}, "192.168.": {2}}
