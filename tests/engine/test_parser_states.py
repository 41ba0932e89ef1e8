"""Parser states merged into the states that lead to them
(``codegen.parser_states``): the transitions of a chain or a diamond are
replaced by the target's body, a loop stays a return to the driving loop,
and the merged parser gives the same bytes as BMv2 (the conformance suite
runs every sample's parser through it; here two shapes with hand-worked
bytes)."""

from __future__ import annotations

import re
from pathlib import Path

from v1model_text import v1model

from dataplane.compiler.codegen import parser_states
from dataplane.compiler.codegen.parser_states import live_states, merge_states
from dataplane.compiler.pipeline import compile_file
from dataplane.runtime.switch import Switch

B = parser_states.BODY_INDENT


def test_chain_and_diamond_merge_into_the_start_state() -> None:
    bodies = {
        "p_start": [B + "x = 1", B + "if x:", B + "    return p_a", B + "return p_b"],
        "p_a": [B + "y = 2", B + "return p_c"],
        "p_b": [B + "return p_c"],
        "p_c": [B + "z = 3", B + "return None"],
    }
    merged = merge_states(bodies)
    assert merged["p_start"] == [
        B + "x = 1", B + "if x:", B + "    y = 2", B + "    z = 3", B + "    return None",
        B + "z = 3", B + "return None"]
    assert live_states(merged, "p_start") == set()  # no loop: no state function left


def test_a_loop_stays_a_return() -> None:
    bodies = {
        "p_start": [B + "return p_more"],
        "p_more": [B + "n = n + 1", B + "if n < 3:", B + "    return p_more", B + "return None"],
    }
    merged = merge_states(bodies)
    assert merged["p_start"] == [B + "n = n + 1", B + "if n < 3:", B + "    return p_more",
                                 B + "return None"]
    assert live_states(merged, "p_start") == {"p_start", "p_more"}


def test_size_bound_keeps_the_return(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(parser_states, "MAX_LINES", 3)
    bodies = {"p_start": [B + "return p_big"], "p_big": [B + f"v{i} = {i}" for i in range(5)]}
    assert merge_states(bodies)["p_start"] == [B + "return p_big"]


PROGRAM = v1model(
    types="""header h_t { bit<8> kind; }
header e_t { bit<8> v; bit<8> last; }
struct H { h_t h; e_t a; e_t b; e_t[4] st; }
struct M { }
""",
    parser="""parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.kind) { 1: one; 2: two; 3: many; default: accept; }
    }
    state one { pkt.extract(hdr.a); transition both; }
    state two { pkt.extract(hdr.b); transition both; }
    state both { pkt.extract(hdr.st.next); transition accept; }
    state many {
        pkt.extract(hdr.st.next);
        transition select(hdr.st.last.last) { 0: many; default: accept; }
    }
}
""",
    ingress="""control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.a.isValid()) { hdr.a.v = hdr.a.v + 1; }
        if (hdr.b.isValid()) { hdr.b.v = hdr.b.v + 2; }
        if (hdr.st[1].isValid()) { hdr.st[1].v = 0xee; }
    }
}
""",
    deparser="""control D(packet_out pkt, in H hdr) {
    apply { pkt.emit(hdr.h); pkt.emit(hdr.a); pkt.emit(hdr.b); pkt.emit(hdr.st); }
}
""")


def test_merged_parser_bytes(tmp_path: Path) -> None:
    src = tmp_path / "shapes.p4"
    src.write_text(PROGRAM)
    program = compile_file(src)
    # one, two and both live only inside start; many loops, so start and
    # many stay functions driven by the loop
    assert sorted(re.findall(r"def p_P_\d+_(\w+)\(", program.python_source)) == [
        "many", "start"]
    sw = Switch(program)
    # diamond: kind 1 -> a -> st[0]; kind 2 -> b -> st[0]; the rest is payload
    assert sw.process(0, bytes([1, 5, 0, 7, 0, 9])) == [(1, bytes([1, 6, 0, 7, 0, 9]))]
    assert sw.process(0, bytes([2, 5, 0, 7, 0, 9])) == [(1, bytes([2, 7, 0, 7, 0, 9]))]
    # the loop: three elements, the second rewritten
    assert sw.process(0, bytes([3, 1, 0, 2, 0, 3, 1, 4])) == [
        (1, bytes([3, 1, 0, 0xEE, 0, 3, 1, 4]))]
    assert sw.process(0, bytes([9, 1, 2])) == [(1, bytes([9, 1, 2]))]
