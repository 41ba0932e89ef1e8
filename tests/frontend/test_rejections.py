"""Programs p4c rejects (front end or BMv2 back end) are rejected here too,
each with the line of the construct at fault; a valid neighbour of each
compiles, so the rule is not simply refusing the construct."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.errors import IntbedError, P4UnsupportedError
from dataplane.compiler.pipeline import compile_file

TEMPLATE = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { bit<8> x; }
parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition select(hdr.h.a) { SELECT } }
    state next { transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    LOCALS
    apply { APPLY }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
LINE = {"SELECT": 7, "LOCALS": 12, "APPLY": 13}

TABLE = ("action set(bit<8> v) { m.x = v; } "
         "table t { key = { KEYS } actions = { set; NoAction; } default_action = NoAction; "
         "PROPS } ")


def program(select: str = "default: accept;", local: str = "", apply: str = "") -> str:
    return (TEMPLATE.replace("SELECT", select).replace("LOCALS", local)
            .replace("APPLY", apply))


def table(keys: str, props: str = "") -> str:
    return TABLE.replace("KEYS", keys).replace("PROPS", props)


CASES = [
    # (name, bad program, good neighbour, where, message, unsupported on BMv2)
    ("select label from a field",
     program(select="hdr.h.b: next; default: accept;"),
     program(select="8w3: next; default: accept;"), "SELECT", "compile-time known", False),
    ("select range from a field",
     program(select="hdr.h.b .. 8w9: next; default: accept;"),
     program(select="8w1 .. 8w9: next; default: accept;"), "SELECT", "compile-time known", False),
    ("two default labels",
     program(local=table("hdr.h.a: exact;"), apply="switch (t.apply().action_run) { "
             "set: { } default: { } default: { } }"),
     program(local=table("hdr.h.a: exact;"), apply="switch (t.apply().action_run) { "
             "set: { } default: { } }"), "APPLY", "more than one 'default'", False),
    ("switch in an action",
     program(local="action a() { switch (m.x) { 1: { } } } "
             "table t { actions = { a; } default_action = a; }", apply="t.apply();"),
     program(local="action a() { if (m.x == 1) { } } "
             "table t { actions = { a; } default_action = a; }", apply="t.apply();"),
     "LOCALS", "switch statement inside an action", True),
    ("string shift amount",
     program(apply='hdr.h.a = hdr.h.a >> "two";'),
     program(apply="hdr.h.a = hdr.h.a >> 2;"), "APPLY", "shift amount", False),
    ("two lpm keys",
     program(local=table("hdr.h.a: lpm; hdr.h.b: lpm;"), apply="t.apply();"),
     program(local=table("hdr.h.a: lpm; hdr.h.b: ternary;"), apply="t.apply();"),
     "LOCALS", "2 lpm keys", True),
    ("a direct meter as counters",
     program(local="direct_meter<bit<8>>(MeterType.packets) dm; " + table(
         "hdr.h.a: exact;", "counters = dm;"), apply="t.apply();"),
     program(local="direct_counter(CounterType.packets) dc; " + table(
         "hdr.h.a: exact;", "counters = dc;"), apply="t.apply();"),
     "LOCALS", "needs a direct_counter", False),
    ("a direct meter no action reads",
     program(local="direct_meter<bit<8>>(MeterType.packets) dm; " + table(
         "hdr.h.a: exact;", "meters = dm;"), apply="t.apply();"),
     program(local="direct_meter<bit<8>>(MeterType.packets) dm; " + table(
         "hdr.h.a: exact;", "meters = dm;").replace("m.x = v;", "m.x = v; dm.read(m.x);"),
         apply="t.apply();"), "LOCALS", "no action reads", True),
    ("two tables with one name",
     program(local=table("hdr.h.a: exact;") + table("hdr.h.b: exact;").replace(
         "table t", "@name(\"t\") table u").replace("action set", "action set2").replace(
         "{ set;", "{ set2;"), apply="t.apply(); u.apply();"),
     program(local=table("hdr.h.a: exact;") + table("hdr.h.b: exact;").replace(
         "table t", "table u").replace("action set", "action set2").replace(
         "{ set;", "{ set2;"), apply="t.apply(); u.apply();"),
     "LOCALS", "control-plane name 'I.t'", False),
    ("an lpm entry mask that is not a prefix",
     program(local=table("hdr.h.a: lpm;", "const entries = { 8w0x10 &&& 8w0xE1: set(1); }"),
             apply="t.apply();"),
     program(local=table("hdr.h.a: lpm;", "const entries = { 8w0x10 &&& 8w0xF0: set(1); }"),
             apply="t.apply();"), "LOCALS", "not a prefix", False),
    ("a mask on an exact key",
     program(local=table("hdr.h.a: exact;", "const entries = { 8w0x10 &&& 8w0xF0: set(1); }"),
             apply="t.apply();"),
     program(local=table("hdr.h.a: exact;", "const entries = { 8w0x10: set(1); }"),
             apply="t.apply();"), "LOCALS", "not a key for match kind exact", False),
    ("entry priorities from the second entry on",
     program(local=table("hdr.h.a: ternary;", "entries = { 8w1 &&& 8w1: set(1); "
                         "priority = 5: 8w2 &&& 8w2: set(2); }"), apply="t.apply();"),
     program(local=table("hdr.h.a: ternary;", "entries = { priority = 9: 8w1 &&& 8w1: set(1); "
                         "8w2 &&& 8w2: set(2); }"), apply="t.apply();"),
     "LOCALS", "the first entry has no priority", False),
    ("entry priorities below one",
     program(local=table("hdr.h.a: ternary;", "priority_delta = 5; entries = { "
                         "priority = 6: 8w1 &&& 8w1: set(1); 8w2 &&& 8w2: set(2); "
                         "8w3 &&& 8w3: set(3); }"), apply="t.apply();"),
     program(local=table("hdr.h.a: ternary;", "priority_delta = 2; entries = { "
                         "priority = 6: 8w1 &&& 8w1: set(1); 8w2 &&& 8w2: set(2); "
                         "8w3 &&& 8w3: set(3); }"), apply="t.apply();"),
     "LOCALS", "priority would be -4", False),
    ("a translation to bool",
     '@p4runtime_translation("x.org/T", bool)\ntype bit<8> T;\n' + program(),
     '@p4runtime_translation("x.org/T", 8)\ntype bit<8> T;\n' + program(),
     None, "@p4runtime_translation", False),
]


@pytest.mark.parametrize(("name", "bad", "good", "where", "message", "unsupported"), CASES,
                         ids=[c[0] for c in CASES])
def test_rejected_with_the_line_at_fault(tmp_path: Path, name: str, bad: str, good: str,
                                         where: str | None, message: str,
                                         unsupported: bool) -> None:
    ok = tmp_path / "good.p4"
    ok.write_text(good)
    assert compile_file(ok).runnable
    src = tmp_path / "bad.p4"
    src.write_text(bad)
    with pytest.raises(IntbedError) as err:
        compile_file(src)
    assert message in err.value.message
    assert isinstance(err.value, P4UnsupportedError) == unsupported
    assert err.value.loc is not None
    assert err.value.loc.line == (LINE[where] if where else 1)


def test_a_block_with_the_wrong_parameters_for_its_place(tmp_path: Path) -> None:
    src = tmp_path / "bad.p4"
    src.write_text(program().replace(
        "control V(inout H hdr, inout M m)", "control V(inout H hdr, inout M m, "
        "inout standard_metadata_t sm)"))
    with pytest.raises(IntbedError, match="verify block takes 2 parameters; 'V' has 3"):
        compile_file(src)


def test_headers_that_are_not_headers(tmp_path: Path) -> None:
    src = tmp_path / "bad.p4"
    src.write_text(program().replace("struct H { h_t h; }", "struct H { h_t h; bit<8> n; }"))
    with pytest.raises(P4UnsupportedError, match="field 'n' of type bit<8>"):
        compile_file(src)
