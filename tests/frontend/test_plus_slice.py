"""``e[base +: width]`` reads and writes the same bits as ``e[hi:lo]``."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.errors import P4SemanticError
from dataplane.compiler.pipeline import compile_file
from dataplane.runtime.switch import Switch

PROGRAM = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; }
struct H { h_t h; }
struct M { }
parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { BODY } }
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.mark.parametrize(("plus", "classic"), [
    ("hdr.h.a = hdr.h.c[4 +: 8];", "hdr.h.a = hdr.h.c[11:4];"),
    ("hdr.h.c[8 +: 8] = 8w0xAB;", "hdr.h.c[15:8] = 8w0xAB;"),
    ("hdr.h.b = (bit<8>)hdr.h.c[0 +: 3];", "hdr.h.b = (bit<8>)hdr.h.c[2:0];"),
])
def test_same_bits_as_the_classic_slice(tmp_path: Path, plus: str, classic: str) -> None:
    outs = []
    for i, body in enumerate((plus, classic)):
        src = tmp_path / f"p{i}.p4"
        src.write_text(PROGRAM.replace("BODY", body))
        outs.append(Switch(compile_file(src)).process(0, bytes([1, 2, 0x5C, 0xD7])))
    assert outs[0] == outs[1]
    assert outs[0][0][1] != bytes([1, 2, 0x5C, 0xD7])


def test_a_slice_past_the_end_is_located(tmp_path: Path) -> None:
    src = tmp_path / "p.p4"
    src.write_text(PROGRAM.replace("BODY", "hdr.h.a = hdr.h.c[12 +: 8];"))
    with pytest.raises(P4SemanticError, match=r"slice \[19:12\] out of range"):
        compile_file(src)
