"""Generic structs and headers (spec 7.2.12) run: each list of type
arguments is a type of its own, laid out with the arguments' widths, as
p4c's front end specializes them."""

from __future__ import annotations

from pathlib import Path

from dataplane.compiler.pipeline import compile_file
from dataplane.runtime.switch import Switch

PROGRAM = """#include <core.p4>
#include <v1model.p4>
header pair_t<T> { T a; T b; }
struct wrap_t<T> { pair_t<T> p; }
struct H { pair_t<bit<8>> small; pair_t<bit<16>> big; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t s) {
    state start { pk.extract(h.small); pk.extract(h.big); transition accept; } }
control V(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    apply {
        wrap_t<bit<8>> w = { p = h.small };
        h.small.a = w.p.b;
        h.small.b = w.p.a;
        h.big.b = h.big.a + (bit<16>)w.p.a;
        s.egress_spec = 2;
    } }
control E(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
control C(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.small); pk.emit(h.big); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_two_instances_have_their_own_widths_and_run(tmp_path: Path) -> None:
    src = tmp_path / "generic.p4"
    src.write_text(PROGRAM)
    program = compile_file(src)
    small_a, small_b, big_a = 0x11, 0x22, 0xFFF0
    packet = bytes([small_a, small_b]) + big_a.to_bytes(2, "big") + bytes(2) + b"rest"
    out = Switch(program).process(1, packet)
    big_b = (big_a + small_a) & 0xFFFF  # wraps at 16 bits
    assert out == [(2, bytes([small_b, small_a]) + big_a.to_bytes(2, "big")
                    + big_b.to_bytes(2, "big") + b"rest")]
