"""A table's key is evaluated in the table's own generated function.

A key expression that needs statements of its own (a 31-63-bit sum goes
through machine-word temporaries; an isValid on a stack element) had its
statements written into the function that applied the table, so the
table's lookup named temporaries it could not see: p4c's
``gauntlet_variable_shadowing-bmv2`` ended with ``NameError: name '_x14'
is not defined``. Here the same shape, a 32-bit sum as an exact key in a
control applied from another control, is checked against a reference
model of the lookup on random packets, beside a key of plain fields."""

from __future__ import annotations

import random
from pathlib import Path

from v1model_text import v1model

from dataplane.compiler.frontend.parser import parse_file
from dataplane.compiler.pipeline import compile_program
from dataplane.runtime.switch import Switch

PROGRAM = v1model(
    types="header h_t { bit<32> a; bit<32> b; bit<8> c; }\n"
          "struct H { h_t h; }\nstruct M { bit<8> m; }\n",
    parser="parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {\n"
           "    state start { pkt.extract(hdr.h); transition accept; }\n}\n",
    ingress="""control inner(inout h_t h) {
    action hit(bit<8> v) { h.c = v; }
    table t { key = { h.a + h.b: exact @name("sum"); } actions = { hit; NoAction; }
              default_action = NoAction(); }
    table u { key = { h.a: exact; h.b: exact; } actions = { hit; NoAction; }
              default_action = NoAction(); }
    apply {
        bit<8> tmp = 0;
        t.apply();
        if (h.c == 0) { u.apply(); }
        tmp = 1;
    }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    inner() c;
    apply {
        bit<8> tmp = 7;
        c.apply(hdr.h);
        sm.egress_spec = 1;
    }
}
""",
    deparser="control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }\n")


def test_a_key_that_needs_statements_is_computed_in_the_tables_function(
        tmp_path: Path) -> None:
    src = tmp_path / "keys.p4"
    src.write_text(PROGRAM)
    program = compile_program(parse_file(src), src)
    sw = Switch(program)
    rng = random.Random(9)
    sums = {rng.randrange(2**32): rng.randrange(1, 256) for _ in range(20)}
    pairs = {(rng.randrange(2**32), rng.randrange(2**32)): rng.randrange(1, 256)
             for _ in range(20)}
    for key, v in sums.items():
        sw.table_add("I.c.t", {"sum": key}, "I.c.hit", [v])
    for (a, b), v in pairs.items():
        sw.table_add("I.c.u", {"h.a": a, "h.b": b}, "I.c.hit", [v])
    cases = [(a, (s - a) % 2**32) for s in sums for a in (rng.randrange(2**32),)]
    cases += list(pairs) + [(rng.randrange(2**32), rng.randrange(2**32)) for _ in range(40)]
    for a, b in cases:
        out = sw.process(0, a.to_bytes(4, "big") + b.to_bytes(4, "big") + bytes([0]))
        assert out, (a, b)
        (_port, frame), = out
        want = sums.get((a + b) % 2**32) or pairs.get((a, b), 0)  # the model of t, then u
        assert frame[8] == want, (a, b)
