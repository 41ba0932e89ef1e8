"""The engine's action profiles against BMv2's rules: smallest-free handles,
groups as sorted handle sets, MatchErrorCode refusals, the empty group, and
the STF commands that program them."""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from common.errors import P4SemanticError, P4UnsupportedError, StfError
from dataplane.compiler.pipeline import compile_file
from dataplane.runtime.action_profiles import ActionProfile, ActionProfileError, IndirectRef
from dataplane.runtime.switch import Switch
from dataplane.testing.stf import apply_command, parse_stf_text

PROGRAM = Path(__file__).resolve().parents[1] / "p4" / "ecmp_selector.p4"


def refused(code: str, fn, *args) -> None:  # noqa: ANN001 - any profile method
    with pytest.raises(ActionProfileError) as info:
        fn(*args)
    assert info.value.code == code


def test_handles_are_smallest_free_and_groups_stay_sorted() -> None:
    ap = ActionProfile("p", 8, "crc16")
    assert [ap.add_member(0, ()) for _ in range(4)] == [0, 1, 2, 3]
    ap.delete_member(1)
    assert ap.add_member(0, (5,)) == 1  # the freed handle comes back first
    g = ap.create_group()
    for m in (3, 0, 2):
        ap.add_to_group(g, m)
    assert ap.group(g).members == [0, 2, 3]
    ap.remove_from_group(g, 2)
    assert ap.group(g).members == [0, 3]
    assert ap.create_group() == 1
    ap.delete_group(1)
    assert ap.create_group() == 1


def test_refusals_carry_bmv2_match_error_codes() -> None:
    ap = ActionProfile("p", 8, "crc16")
    m = ap.add_member(0, ())
    g = ap.create_group()
    refused("INVALID_MBR_HANDLE", ap.delete_member, 5)
    refused("INVALID_GRP_HANDLE", ap.delete_group, 5)
    refused("EMPTY_GRP", ap.use, ~g)
    ap.add_to_group(g, m)
    refused("MBR_ALREADY_IN_GRP", ap.add_to_group, g, m)
    refused("MBR_STILL_USED", ap.delete_member, m)
    ap.use(~g)
    refused("GRP_STILL_USED", ap.delete_group, g)
    ap.release(~g)
    ap.delete_group(g)  # a non-empty group may go; its members are free again
    ap.delete_member(m)
    refused("MBR_NOT_IN_GRP", ap.remove_from_group, ap.create_group(), ap.add_member(0, ()))
    plain = ActionProfile("q", 8)
    refused("ERROR", plain.create_group)
    refused("INVALID_GRP_HANDLE", plain.use, ~0)


def test_choose_uses_hash_modulo_size_and_empty_group_gives_none() -> None:
    ap = ActionProfile("p", 8, "identity")
    handles = [ap.add_member(0, (i,)) for i in range(3)]
    g = ap.create_group()
    assert ap.choose(g, ((7, 8),)) is None
    for h in handles:
        ap.add_to_group(g, h)
    # identity: the packed byte is the hash, so 7 % 3 = rank 1.
    assert ap.choose(g, ((7, 8),)).args == (1,)  # type: ignore[union-attr]
    # identity over more than 4 bytes: BMv2 casts the uint64 to a 32-bit int.
    assert ap.choose(g, ((0x1_0000_0002, 40),)).args == (2,)  # type: ignore[union-attr]


def test_empty_group_at_lookup_runs_no_action() -> None:
    """BMv2 logs "yielded empty group" and runs an empty action: no drop, no
    forward; the packet keeps egress_spec 0."""
    sw = Switch(compile_file(PROGRAM))
    ap = sw.action_profile("ecmp_selector")
    m = sw.act_prof_create_member("ecmp_selector", "set_nhop", (9, 9))
    g = ap.create_group()
    ap.add_to_group(g, m)
    sw.table_add("ecmp", {"h.ipv4.dst_addr": None}, IndirectRef.group(g))
    ap.remove_from_group(g, m)
    frame = bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
                  / IP(src="192.168.0.1", dst="10.0.0.1") / TCP(sport=1, dport=2))
    out = sw.process(0, frame)
    assert [port for port, _ in out] == [0]
    assert Ether(out[0][1]).dst == "02:00:00:00:00:02"  # set_nhop did not run


def run_commands(sw: Switch, text: str) -> None:
    for cmd in parse_stf_text(text, "t.stf"):
        apply_command(sw, sw.program.schema, cmd)


def test_stf_commands_program_members_and_groups() -> None:
    sw = Switch(compile_file(PROGRAM))
    run_commands(sw, """
act_prof_create_member ecmp_selector set_nhop 1 1
act_prof_create_member ecmp_selector set_nhop 0x2 2
act_prof_create_group ecmp_selector
act_prof_add_member_to_group ecmp_selector 1 0
act_prof_add_member_to_group ecmp_selector 0 0
act_prof_remove_member_from_group ecmp_selector 1 0
table_indirect_add_with_group ecmp 0x0a000000/8 => 0
table_indirect_add ecmp 0x14000000/8 => 1
add by_port ingress_port:3 drop()
""")
    ap = sw.action_profile("ecmp_selector")
    assert ap.group(0).members == [0]
    assert [m.args for m in ap.members] == [(1, 1), (2, 2)]  # type: ignore[union-attr]
    refs = sorted(e.ref for e in sw.table("ecmp").entries)  # type: ignore[type-var]
    assert refs == [~0, 1]
    (entry,) = sw.table("by_port").entries
    assert sw.action_profile("port_profile").member(entry.ref).action == \
        sw.action_ids["Ingress.drop"]  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "message"), [
    ("act_prof_create_group", "needs an action profile name"),
    ("act_prof_delete_member ecmp_selector", "takes a profile and 1 handle"),
    ("act_prof_frobnicate ecmp_selector", "unknown STF command"),
    ("table_indirect_add ecmp 0x0a000000/8", "expected TABLE KEY... => HANDLE"),
    ("act_prof_delete_member ecmp_selector 4", "no member with handle 4"),
    ("table_indirect_add_with_group ecmp 0x0a000000/8 => 0", "no group with handle 0"),
    ("table_indirect_add ecmp 1 2 => 0", "needs 1 key(s), got 2"),
    ("act_prof_create_member nothing set_nhop 1 1", "nothing"),
])
def test_stf_command_errors_name_the_line(text: str, message: str) -> None:
    sw = Switch(compile_file(PROGRAM))
    with pytest.raises(StfError) as info:
        run_commands(sw, "\n" + text)
    assert message in info.value.message
    assert info.value.loc is not None and info.value.loc.line == 2


def test_random_selector_hash_is_refused_as_bmv2_refuses_it() -> None:
    with pytest.raises(P4UnsupportedError) as info:
        ActionProfile("sel", 8, "random")
    assert "HashAlgorithm.random" in info.value.message


PROGRAM_TEMPLATE = """
#include <core.p4>
#include <v1model.p4>
struct H { } struct M { bit<16> a; bit<16> b; }
parser P(packet_in p, out H h, inout M m, inout standard_metadata_t s) {
    state start { transition accept; } }
control V(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    action fwd(bit<9> port) { s.egress_spec = port; }
    action_selector(HashAlgorithm.crc16, 32w16, 32w16) sel;
    TABLES
}
control E(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
control C(inout H h, inout M m) { apply { } }
control D(packet_out p, in H h) { apply { } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""

SHARED_MISMATCH = """
    table t1 { key = { m.a : selector; m.b : selector; } actions = { fwd; }
               implementation = sel; }
    table t2 { key = { m.b : selector; m.a : selector; } actions = { fwd; }
               implementation = sel; }
    apply { t1.apply(); t2.apply(); }
"""

CONST_ENTRIES = """
    table t1 { key = { m.a : exact; } actions = { fwd; } implementation = sel;
               const entries = { 1 : fwd(2); } }
    apply { t1.apply(); }
"""


@pytest.mark.parametrize(("tables", "error", "message"), [
    (SHARED_MISMATCH, P4SemanticError, "used by multiple tables with different selector inputs"),
    (CONST_ENTRIES, P4UnsupportedError, "entries in a table with an implementation"),
])
def test_compile_time_refusals(tmp_path: Path, tables: str, error: type, message: str) -> None:
    path = tmp_path / "prog.p4"
    path.write_text(PROGRAM_TEMPLATE.replace("TABLES", tables))
    with pytest.raises(error) as info:
        compile_file(path)
    assert message in info.value.message
    assert info.value.loc is not None and info.value.loc.line > 0
