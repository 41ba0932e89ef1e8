"""Controls applied on the caller's variables in place, against the
copy-in/copy-out reference.

Where every data argument of a control's apply is a whole variable and no
two overlap, the generated control works on those variables directly
(``CallMixin.shared_params``). That must be invisible: each program below
runs the same random packets compiled both ways, and the expected bytes are
worked out by hand from P4's copy semantics for the cases where sharing
storage would show (aliased arguments, a control applied to two different
variables).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from test_engine_semantics import HEAD  # the small program every engine test extends

from dataplane.compiler.frontend.parser import parse_file
from dataplane.compiler.pipeline import CompiledProgram, compile_program
from dataplane.runtime.switch import Switch

WHOLE_HEADERS = """
control Sub(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        hdr.h.a = hdr.h.a + 1;
        m.x = hdr.h.b;
        if (m.x == 7) { exit; }
        hdr.h.c = 16w0xBEEF;
    }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Sub() sub;
    apply { sub.apply(hdr, m, sm); hdr.h.b = m.x + 1; }
}
"""

ALIASED = """
control Two(inout bit<8> x, inout bit<8> y) { apply { x = x + 1; y = y + 10; } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Two() two;
    apply { bit<8> v = hdr.h.a; two.apply(v, v); hdr.h.a = v; }
}
"""

IN_ALIASED = """
control Add(in bit<8> k, inout bit<8> v) { apply { v = v + k; v = v + k; } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Add() add;
    apply {
        bit<8> u = hdr.h.a;
        bit<8> w = hdr.h.b;
        add.apply(u, w);
        add.apply(w, w);
        hdr.h.b = w;
    }
}
"""

IN_DISTINCT = """
control Add(in bit<8> k, inout bit<8> v) { apply { v = v + k; v = v + k; } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Add() add;
    apply { bit<8> u = hdr.h.a; bit<8> w = hdr.h.b; add.apply(u, w); hdr.h.b = w; }
}
"""

TWO_TARGETS = """
control Inc(inout bit<8> x) { apply { x = x + 1; } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Inc() inc;
    apply {
        bit<8> v1 = hdr.h.a;
        bit<8> v2 = hdr.h.b;
        inc.apply(v1);
        inc.apply(v2);
        inc.apply(v2);
        hdr.h.a = v1;
        hdr.h.b = v2;
    }
}
"""

OUT_PARAM = """
control Put(out bit<8> x, inout bit<8> y) { apply { y = x; x = 5; } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Put() put;
    apply { bit<8> v = hdr.h.a; bit<8> w = 9; put.apply(v, w); hdr.h.a = v; hdr.h.b = w; }
}
"""


def compiled(tmp_path: Path, body: str, share: bool) -> CompiledProgram:
    src = tmp_path / f"prog_{int(share)}.p4"
    src.write_text(HEAD + body + "V1Switch(P(), V(), I(), E(), C(), D()) main;\n")
    return compile_program(parse_file(src), src, share_params=share)


def both_ways(tmp_path: Path, body: str, packets: list[bytes]
              ) -> tuple[list[list[tuple[int, bytes]]], CompiledProgram, CompiledProgram]:
    """Outputs of every packet, which must agree between the two; and both
    compiled programs."""
    shared, copied = compiled(tmp_path, body, True), compiled(tmp_path, body, False)
    a, b = Switch(shared), Switch(copied)
    outs = [a.process(0, p) for p in packets]
    assert outs == [b.process(0, p) for p in packets]
    return outs, shared, copied


def random_packets(n: int = 60, seed: int = 1) -> list[bytes]:
    rng = random.Random(seed)
    packets = [bytes(rng.randrange(256) for _ in range(4)) for _ in range(n)]
    return packets + [bytes([3, 7, 0, 0]), bytes([255, 7, 1, 2])]  # the exit path


def test_whole_headers_shared_in_place(tmp_path: Path) -> None:
    packets = random_packets()
    outs, shared, copied = both_ways(tmp_path, WHOLE_HEADERS, packets)
    for p, out in zip(packets, outs):
        a = (p[0] + 1) & 0xFF
        if p[1] == 7:  # exit: what the control wrote so far stays
            assert out == [(0, bytes([a, p[1], p[2], p[3]]))]
        else:
            assert out == [(0, bytes([a, (p[1] + 1) & 0xFF, 0xBE, 0xEF]))]
    # No frame for hdr, m and sm: the state is as small as the program's own.
    assert len(shared.layout.template) < len(copied.layout.template)


@pytest.mark.parametrize(("body", "expect"), [
    # x and y copied in as v, copied out x then y: y's v+10 wins.
    (ALIASED, lambda a, b: ((a + 10) & 0xFF, b)),
    # (u, w): w + 2u; then (w, w): k is a copy of w taken before the call: 3w.
    (IN_ALIASED, lambda a, b: (a, (3 * ((b + 2 * a) & 0xFF)) & 0xFF)),
    (IN_DISTINCT, lambda a, b: (a, (b + 2 * a) & 0xFF)),
    (TWO_TARGETS, lambda a, b: ((a + 1) & 0xFF, (b + 2) & 0xFF)),
    # an out parameter starts uninitialized (0 here, as BMv2's fresh
    # storage), whatever the argument held.
    (OUT_PARAM, lambda a, b: (5, 0)),
])
def test_copy_semantics_kept(tmp_path: Path, body: str, expect) -> None:
    packets = random_packets()
    outs, _, _ = both_ways(tmp_path, body, packets)
    for p, out in zip(packets, outs):
        a, b = expect(p[0], p[1])
        assert out == [(0, bytes([a, b, p[2], p[3]]))]


@pytest.mark.parametrize(("body", "shares"), [
    (IN_DISTINCT, True),  # distinct variables: in place
    (ALIASED, False),  # one variable twice: copies
    (IN_ALIASED, False),  # applied again with other variables: generated again with copies
    (TWO_TARGETS, False),
    (OUT_PARAM, False),  # an out parameter needs storage of its own
])
def test_which_applies_share(tmp_path: Path, body: str, shares: bool) -> None:
    shared, copied = compiled(tmp_path, body, True), compiled(tmp_path, body, False)
    assert (len(shared.layout.template) < len(copied.layout.template)) is shares
