"""Direct invocation of controls and parsers, lookahead of composite types,
and values with no slots: constructs of p4c's sample programs, checked by
the packets a small program produces."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.errors import P4UnsupportedError
from dataplane.compiler.pipeline import compile_file
from dataplane.runtime.switch import Switch

CORPUS = (Path(__file__).resolve().parents[2] / ".." / "shared" / "p4-frontend"
          / "p4_16_samples").resolve()
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(),
                                  reason=f"p4c's front-end corpus is not at {CORPUS}")

PROGRAM = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; h_t g; }
struct M { bit<8> x; }
parser Inner(packet_in pkt, out h_t h) {
    state start { pkt.extract(h); transition accept; }
}
parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { Inner.apply(pkt, hdr.h); transition second; }
    state second { Inner.apply(pkt, hdr.g); transition accept; }
}
control Add(inout h_t h, in bit<8> k) {
    action add(bit<8> v) { h.a = h.a + v + k; }
    table t { key = { h.b : exact; } actions = { add; NoAction; } default_action = NoAction; }
    apply { t.apply(); }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { Add.apply(hdr.h, 8w1); sm.egress_spec = 1; }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { Add.apply(hdr.g, 8w2); }
}
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.g); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_each_direct_call_is_its_own_instance(tmp_path: Path) -> None:
    src = tmp_path / "direct.p4"
    src.write_text(PROGRAM)
    program = compile_file(src)
    # Two calls, two instances, each named after the control inside the
    # block that calls it, as p4c names them.
    names = [t.info.name for t in program.tables]
    assert names == ["I.Add.t", "E.Add.t"]
    # Parsed by two instances of one parser type; no entry: unchanged.
    out = Switch(program).process(0, bytes([5, 7, 6, 7, 0xEE]))
    assert out == [(1, bytes([5, 7, 6, 7, 0xEE]))]


def test_direct_calls_keep_their_arguments(tmp_path: Path) -> None:
    src = tmp_path / "direct.p4"
    src.write_text(PROGRAM.replace("default_action = NoAction;", "default_action = add(3);"))
    sw = Switch(compile_file(src))
    # h.a + 3 + 1 on the first header, g.a + 3 + 2 on the second.
    assert sw.process(0, bytes([5, 7, 6, 7])) == [(1, bytes([9, 7, 11, 7]))]


@needs_corpus
def test_lookahead_of_a_struct_holding_a_stack() -> None:
    # issue2465-bmv2: a select on three stack elements read by lookahead
    # picks how many one-byte headers to extract; the deparser emits none,
    # so what leaves is the packet less what the chosen state extracted.
    sw = Switch(compile_file(CORPUS / "issue2465-bmv2.p4"))
    for head, extracted in (((1, 9, 9), 1), ((0, 1, 9), 2), ((0, 0, 1), 3), ((0, 0, 0), 0)):
        packet = bytes(head) + bytes(range(10, 20))
        assert sw.process(0, packet) == [(0, packet[extracted:])], head


@needs_corpus
def test_programs_with_empty_values_compile() -> None:
    # Empty structs as action arguments and function results used to make
    # the generated code invalid Python.
    for name in ("action-synth", "def-use", "inline-bmv2", "issue2355"):
        assert compile_file(CORPUS / f"{name}.p4").name == name


@needs_corpus
def test_a_one_key_entry_written_as_a_list() -> None:
    # action-two-params: `{(a ++ b ++ c ++ d)} : act(42, (e ++ f ++ g ++ h))`.
    program = compile_file(CORPUS / "action-two-params.p4")
    (matches, _action, args, _prio), = program.tables[0].const_entries
    assert [m.value for m in matches] == [0x20020420]
    assert args == (42, 0x20024200)


EXTERN_PARAM = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control Bump(inout h_t h, register<bit<8>> r) {
    apply { bit<8> v; r.read(v, (bit<32>)h.a); v = v + 1; r.write((bit<32>)h.a, v); h.b = v; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    register<bit<8>>(4) counts;
    register<bit<8>>(4) other;
    Bump() bump;
    apply { bump.apply(hdr.h, counts); SECOND sm.egress_spec = 1; }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_an_extern_passed_to_a_control_is_the_instance_given(tmp_path: Path) -> None:
    src = tmp_path / "p.p4"
    src.write_text(EXTERN_PARAM.replace("SECOND", ""))
    sw = Switch(compile_file(src))
    assert sw.process(0, bytes([2, 0])) == [(1, bytes([2, 1]))]
    assert sw.process(0, bytes([2, 0])) == [(1, bytes([2, 2]))]
    assert sw.process(0, bytes([3, 0])) == [(1, bytes([3, 1]))]


def test_other_instances_on_a_second_apply_are_refused(tmp_path: Path) -> None:
    src = tmp_path / "p.p4"
    src.write_text(EXTERN_PARAM.replace("SECOND", "bump.apply(hdr.h, other);"))
    with pytest.raises(P4UnsupportedError, match="other extern instances"):
        compile_file(src)


def test_int_parameters_take_the_constant_of_each_call(tmp_path: Path) -> None:
    # issue3394: a directionless `int` apply parameter, given a constant.
    src = tmp_path / "p.p4"
    src.write_text(EXTERN_PARAM.replace(
        "control V(", "control AddK(int k, inout bit<8> x) { apply { x = x + k; } }\n"
        "control V(").replace("SECOND", "AddK.apply(5, hdr.h.a); AddK.apply(7, hdr.h.a);"))
    sw = Switch(compile_file(src))
    assert sw.process(0, bytes([2, 0])) == [(1, bytes([14, 1]))]


def test_indexing_a_stack_a_function_returns(tmp_path: Path) -> None:
    # issue3001-1: h()[0].isValid() on a stack that is only a value.
    src = tmp_path / "p.p4"
    src.write_text(EXTERN_PARAM.replace(
        "control V(", "h_t[2] pair(in bit<8> v) { h_t[2] s; s[1].setValid(); s[1].a = v; "
        "return s; }\ncontrol V(").replace(
        "SECOND", "if (pair(9)[1].isValid() && !pair(9)[0].isValid()) "
        "{ hdr.h.a = pair(hdr.h.a)[1].a + 100; }"))
    sw = Switch(compile_file(src))
    assert sw.process(0, bytes([2, 0])) == [(1, bytes([102, 1]))]
