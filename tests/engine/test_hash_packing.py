"""hash() over whole-byte fields is packed by struct (``packed_fields``),
anything else by ``pack_bits``: both give BMv2's bytes. Checked against
CRC-32 (zlib's, the same function BMv2's crc32 is) of bytes built in the
test, with a header that is valid or not (its fields left out)."""

from __future__ import annotations

import random
import zlib
from pathlib import Path

from v1model_text import v1model

from dataplane.compiler.frontend.parser import parse_file
from dataplane.compiler.pipeline import compile_program
from dataplane.runtime.switch import Switch

PROGRAM = v1model(
    types="""header a_t { bit<8> p; bit<16> q; bit<32> r; bit<48> m; bit<64> w; bit<13> odd;
                  bit<3> pad; bit<32> packed; bit<32> general; }
header b_t { bit<16> x; }
struct H { a_t a; b_t b; }
struct M { }
""",
    parser="""parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.a); transition select(hdr.a.p) { 1: with_b; default: accept; } }
    state with_b { pkt.extract(hdr.b); transition accept; }
}
""",
    ingress="""control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        hash(hdr.a.packed, HashAlgorithm.crc32, 32w0,
             { hdr.a.p, hdr.b.x, hdr.a.m, hdr.a.w, hdr.a.r, hdr.a.q }, 33w0x100000000);
        hash(hdr.a.general, HashAlgorithm.crc32, 32w0,
             { hdr.a.q, hdr.b.x, hdr.a.odd }, 33w0x100000000);
        sm.egress_spec = 1;
    }
}
""",
    deparser="control D(packet_out pkt, in H hdr) {\n"
             "    apply { pkt.emit(hdr.a); pkt.emit(hdr.b); }\n}\n")


def test_packed_and_general_hash_inputs_are_bmv2s_bytes(tmp_path: Path) -> None:
    src = tmp_path / "h.p4"
    src.write_text(PROGRAM)
    program = compile_program(parse_file(src), src)
    text = program.python_source
    assert text.count("hash_bytes(") == 1 and text.count("compute_hash(") == 1
    sw = Switch(program)
    rng = random.Random(5)
    for _ in range(200):
        p = rng.choice((0, 1))
        head = bytes([p]) + bytes(rng.randrange(256) for _ in range(20))
        b = bytes(rng.randrange(256) for _ in range(2))
        odd_pad = bytes(rng.randrange(256) for _ in range(2))
        frame = head + odd_pad + bytes(8) + (b if p == 1 else b"")
        [(port, out)] = sw.process(0, frame)
        assert port == 1
        q, r, m, w = head[1:3], head[3:7], head[7:13], head[13:21]
        odd = int.from_bytes(odd_pad, "big") >> 3
        x = b if p == 1 else b""
        packed = zlib.crc32(bytes([p]) + x + m + w + r + q)
        # 16 + (16) + 13 bits, MSB first, zero-padded to whole bytes.
        bits = (int.from_bytes(q + x, "big") << 13) | odd
        nbits = 8 * len(q + x) + 13
        pad = -nbits % 8
        general = zlib.crc32((bits << pad).to_bytes((nbits + pad) // 8, "big"))
        assert out[23:27] == packed.to_bytes(4, "big")
        assert out[27:31] == general.to_bytes(4, "big")
