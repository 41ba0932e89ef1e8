"""Header extract and emit on fields of awkward widths and kinds.

The parser reads a header with one ``struct`` call and splits fields that
share bytes; the deparser packs them back. A reference bit slicer written
here says what every field must be; the program copies each field, changed
in a known way, into a second header, so both directions are checked
against it on random packets."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from dataplane.compiler.pipeline import compile_file
from dataplane.runtime.switch import Switch

# (name, P4 type, width, kind): units of 1, 6, 1, 16, 9, 4, 3 and 5 bytes.
FIELDS = [
    ("a", "bit<3>", 3, "u"), ("b", "int<5>", 5, "s"),
    ("mac", "bit<48>", 48, "u"),
    ("f", "bool", 1, "b"), ("g", "bit<7>", 7, "u"),
    ("wide", "bit<128>", 128, "u"),
    ("p", "bit<4>", 4, "u"), ("q", "bit<64>", 64, "u"), ("r", "bit<4>", 4, "u"),
    ("x", "bit<12>", 12, "u"), ("y", "int<20>", 20, "s"),
    ("z", "bit<24>", 24, "u"),
    ("w", "bit<40>", 40, "u"),
]
NBYTES = sum(f[2] for f in FIELDS) // 8


def program() -> str:
    decl = " ".join(f"{t} {n};" for n, t, _, _ in FIELDS)
    body = []
    for name, _, _, kind in FIELDS:
        if kind == "b":
            body.append(f"hdr.o.{name} = !hdr.h.{name};")
        elif kind == "s":
            body.append(f"hdr.o.{name} = hdr.h.{name} - 1;")
        else:
            body.append(f"hdr.o.{name} = hdr.h.{name} + 1;")
    return f"""#include <core.p4>
#include <v1model.p4>
header h_t {{ {decl} }}
struct H {{ h_t h; h_t o; }}
struct M {{ }}
parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(hdr.h); transition accept; }}
}}
control V(inout H hdr, inout M m) {{ apply {{ }} }}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {{
    apply {{ hdr.o.setValid(); {' '.join(body)} sm.egress_spec = 1; }}
}}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout H hdr, inout M m) {{ apply {{ }} }}
control D(packet_out pkt, in H hdr) {{ apply {{ pkt.emit(hdr.h); pkt.emit(hdr.o); }} }}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def reference_fields(data: bytes) -> list[int]:
    """Each field's raw bits, most significant first, by plain bit slicing."""
    value = int.from_bytes(data[:NBYTES], "big")
    left = NBYTES * 8
    out = []
    for _, _, width, _ in FIELDS:
        left -= width
        out.append((value >> left) & ((1 << width) - 1))
    return out


def reference_output(data: bytes) -> bytes:
    """What the program must emit after the original header."""
    value = 0
    for (_, _, width, kind), raw in zip(FIELDS, reference_fields(data)):
        mask = (1 << width) - 1
        changed = raw ^ 1 if kind == "b" else (raw - 1 if kind == "s" else raw + 1) & mask
        value = value << width | changed
    return value.to_bytes(NBYTES, "big")


@pytest.fixture(scope="module")
def switch(tmp_path_factory: pytest.TempPathFactory) -> Switch:
    src = tmp_path_factory.mktemp("hio") / "fields.p4"
    src.write_text(program())
    return Switch(compile_file(src))


def test_the_generated_code_reads_and_writes_headers_with_struct(switch: Switch) -> None:
    source = switch.program.python_source
    assert "SU0(b, " in source and "OUT.append(SP0(" in source


def test_random_headers_match_a_reference_bit_slicer(switch: Switch) -> None:
    rng = random.Random(7)
    edge = [bytes(NBYTES), b"\xff" * NBYTES]
    for i in range(300):
        head = edge[i] if i < len(edge) else rng.randbytes(NBYTES)
        payload = rng.randbytes(rng.randrange(0, 9))
        out = switch.process(0, head + payload)
        assert out == [(1, head + reference_output(head) + payload)], head.hex()


def test_a_short_packet_is_rejected_not_misread(switch: Switch) -> None:
    data = bytes(range(NBYTES - 1))
    # Parser reject: the header stays invalid; ingress still makes the copy
    # from the invalid (zero) header, and the unparsed bytes follow as payload.
    out = switch.process(0, data)
    assert out == [(1, reference_output(bytes(NBYTES)) + data)]


def test_an_empty_header_and_a_zero_width_field(tmp_path: Path) -> None:
    src = tmp_path / "zero.p4"
    src.write_text("""#include <core.p4>
#include <v1model.p4>
header e_t { }
header h_t { bit<8> a; bit<0> z; }
struct H { e_t e; h_t h; }
struct M { }
parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.e); pkt.extract(hdr.h); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { if (hdr.e.isValid()) { hdr.h.a = hdr.h.a + 1; } sm.egress_spec = 1; }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.e); pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
""")
    sw = Switch(compile_file(src))
    # The empty header is valid and takes no bytes; the next one is read after it.
    assert sw.process(0, bytes([5, 9, 9])) == [(1, bytes([6, 9, 9]))]
