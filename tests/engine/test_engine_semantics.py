"""Engine behaviour checked on small programs with exact bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from dataplane.compiler.pipeline import compile_file
from dataplane.runtime.switch import Switch

HEAD = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; }
struct H { h_t h; }
struct M { bit<8> x; }
parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }
"""


def run(tmp_path: Path, ingress: str, packet: bytes, setup=None) -> list[tuple[int, bytes]]:
    src = tmp_path / "prog.p4"
    src.write_text(HEAD + "control I(inout H hdr, inout M m, inout standard_metadata_t sm) {\n"
                   + ingress + "\n}\nV1Switch(P(), V(), I(), E(), C(), D()) main;\n")
    sw = Switch(compile_file(src))
    if setup:
        setup(sw)
    return sw.process(0, packet)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("hdr.h.a = hdr.h.a + 8w255;", bytes([0x00, 2, 0, 3])),  # wraps modulo 2^8
        ("hdr.h.a = hdr.h.a |+| 8w255;", bytes([0xFF, 2, 0, 3])),  # saturates
        ("hdr.h.b = hdr.h.b |-| 8w5;", bytes([1, 0, 0, 3])),
        ("hdr.h.c = hdr.h.c << 15;", bytes([1, 2, 0x80, 0])),
        ("hdr.h.c = (bit<16>)(hdr.h.a ++ hdr.h.b);", bytes([1, 2, 1, 2])),
        ("hdr.h.a = hdr.h.c[7:0] - 1;", bytes([2, 2, 0, 3])),
        ("hdr.h.c[15:8] = 8w0xab;", bytes([1, 2, 0xAB, 3])),
        ("hdr.h.a = (bit<8>)(-(int<8>)hdr.h.b >> 1);", bytes([0xFF, 2, 0, 3])),
        ("hdr.h.a = hdr.h.b == 2 ? 8w9 : 8w7;", bytes([9, 2, 0, 3])),
    ],
)
def test_arithmetic(tmp_path: Path, body: str, expected: bytes) -> None:
    out = run(tmp_path, f"apply {{ {body} }}", bytes([1, 2, 0, 3]))
    assert out == [(0, expected)]


def test_mark_to_drop_drops(tmp_path: Path) -> None:
    assert run(tmp_path, "apply { mark_to_drop(sm); }", bytes(4)) == []


@pytest.mark.parametrize(("index", "expected_c"), [(2, 7), (3, 7), (4, 0x5A), (200, 0x5A)])
def test_register_cells_in_and_out_of_range(tmp_path: Path, index: int, expected_c: int) -> None:
    """Generated code indexes an unsigned register's cells itself: a write
    past the end changes nothing, a read past the end leaves its
    destination as it was (BMv2), a write keeps the register's width."""
    ingress = """register<bit<8>>(4) r;
    apply {
        r.write((bit<32>)hdr.h.a, hdr.h.b);
        bit<8> v = 0x5a;
        r.read(v, (bit<32>)hdr.h.a);
        hdr.h.c = (bit<16>)v;
    }"""
    cells = []
    out = run(tmp_path, ingress, bytes([index, 7, 0, 0]),
              setup=lambda sw: cells.append(sw.externs[0].values))
    assert out == [(0, bytes([index, 7, 0, expected_c]))]
    assert cells[0] == [7 if i == index else 0 for i in range(4)]


def test_short_packet_sets_parser_error_and_keeps_payload(tmp_path: Path) -> None:
    body = """apply {
        if (sm.parser_error == error.PacketTooShort) { hdr.h.setValid(); hdr.h.a = 0xee; }
    }"""
    out = run(tmp_path, body, bytes([7, 8]))
    assert out == [(0, bytes([0xEE, 0, 0, 0, 7, 8]))]


def test_table_hit_and_default(tmp_path: Path) -> None:
    body = """
    action set(bit<8> v) { hdr.h.b = v; }
    table t { key = { hdr.h.a : exact; } actions = { set; NoAction; } default_action = set(0x55); }
    apply { t.apply(); }"""
    out = run(tmp_path, body, bytes([1, 2, 0, 3]),
              lambda sw: sw.table_add("t", {"hdr.h.a": 1}, "set", {"v": 0x77}))
    assert out == [(0, bytes([1, 0x77, 0, 3]))]
    out = run(tmp_path, body, bytes([9, 2, 0, 3]))
    assert out == [(0, bytes([9, 0x55, 0, 3]))]


def test_copy_in_copy_out(tmp_path: Path) -> None:
    body = """
    action swap(inout bit<8> x, inout bit<8> y) { bit<8> t = x; x = y; y = t; }
    apply { swap(hdr.h.a, hdr.h.b); }"""
    assert run(tmp_path, body, bytes([1, 2, 0, 3])) == [(0, bytes([2, 1, 0, 3]))]


def test_generated_code_is_deterministic(tmp_path: Path) -> None:
    from dataplane.compiler.frontend.parser import parse_file
    from dataplane.compiler.pipeline import compile_program

    src = tmp_path / "prog.p4"
    src.write_text(HEAD + "control I(inout H hdr, inout M m, inout standard_metadata_t sm) "
                   "{ apply { hdr.h.a = 1; } }\nV1Switch(P(), V(), I(), E(), C(), D()) main;\n")
    a = compile_program(parse_file(src), src).python_source
    b = compile_program(parse_file(src), src).python_source
    assert a == b


def test_digest_with_typed_list_and_assert(tmp_path: Path) -> None:
    from dataplane.runtime.support import AssertionFailed

    body = """apply { digest<M>(1, {hdr.h.b}); assert(hdr.h.a != 9); }"""
    sw_out = run(tmp_path, body, bytes([1, 2, 0, 3]))
    assert sw_out == [(0, bytes([1, 2, 0, 3]))]
    src = tmp_path / "prog.p4"
    sw = Switch(compile_file(src))
    sw.process(0, bytes([1, 7, 0, 3]))
    assert [(d.name, d.values) for d in sw.digests] == [("M", (7,))]
    with pytest.raises(AssertionFailed) as info:
        sw.process(0, bytes([9, 7, 0, 3]))
    assert str(info.value).startswith(f"{src}:")


def test_hash_random_is_refused_at_compile_time(tmp_path: Path) -> None:
    from common.errors import P4UnsupportedError

    body = """apply { hash(hdr.h.c, HashAlgorithm.random, 16w0, {hdr.h.a}, 16w8); }"""
    with pytest.raises(P4UnsupportedError, match="random"):
        run(tmp_path, body, bytes(4))
