"""Named arguments in any order: to the V1Switch package, to extern
functions and to extern methods, checked by the packets they produce."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.errors import P4SemanticError
from dataplane.compiler.pipeline import compile_file
from dataplane.runtime.switch import Switch

PROGRAM = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> sum; }
struct H { h_t h; }
struct M { }
parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    register<bit<8>>(4) r;
    apply {
        r.write(value = hdr.h.a, index = 2);
        r.read(index = 2, result = hdr.h.b);
        sm.egress_spec = 3;
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) {
    apply {
        update_checksum(checksum = hdr.h.sum, algo = HashAlgorithm.csum16,
                        data = { hdr.h.a, hdr.h.b }, condition = true);
    }
}
control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(ig = I(), dep = D(), p = P(), eg = E(), vr = V(), ck = C()) main;
"""


def csum16(data: bytes) -> int:
    total = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def test_named_arguments_bind_by_name(tmp_path: Path) -> None:
    src = tmp_path / "named.p4"
    src.write_text(PROGRAM)
    out = Switch(compile_file(src)).process(0, bytes([0x5A, 0, 0, 0]))
    assert out == [(3, bytes([0x5A, 0x5A]) + csum16(bytes([0x5A, 0x5A])).to_bytes(2, "big"))]


@pytest.mark.parametrize(("before", "after", "message"), [
    ("ig = I()", "ingress = I()", "V1Switch has no parameter 'ingress'"),
    ("dep = D()", "ig = D()", "argument 'ig' given twice"),
])
def test_wrong_package_argument_names_are_located(tmp_path: Path, before: str, after: str,
                                                  message: str) -> None:
    src = tmp_path / "named.p4"
    src.write_text(PROGRAM.replace(before, after))
    with pytest.raises(P4SemanticError) as err:
        compile_file(src)
    assert message in err.value.message
    assert err.value.loc is not None and err.value.loc.line == PROGRAM.count("\n")
