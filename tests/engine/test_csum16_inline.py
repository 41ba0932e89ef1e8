"""The inlined Internet checksum (``fast_csum16``) over fields of awkward
widths and offsets, against the ones'-complement sum of the 16-bit words
computed here from the packet's bytes."""

from __future__ import annotations

import random
from pathlib import Path

from v1model_text import v1model

from dataplane.compiler.pipeline import compile_file
from dataplane.runtime.switch import Switch
from tests.crc_reference import internet_checksum

WIDTHS = [3, 13, 32, 7, 9, 48, 1, 5, 8, 2]  # 128 bits: no field on a word boundary
PROGRAM = v1model(
    types="header h_t { " + " ".join(f"bit<{w}> f{i};" for i, w in enumerate(WIDTHS))
    + " bit<16> sum; bit<8> odd; }\nstruct H { h_t h; }\nstruct M { }\n",
    parser="""parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
""",
    ingress="""control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        update_checksum(true, { """ + ", ".join(f"hdr.h.f{i}" for i in range(len(WIDTHS)))
    + """, hdr.h.odd }, hdr.h.sum, HashAlgorithm.csum16);
    }
}
""",
    deparser="control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }\n")


def test_inline_csum16_matches_the_word_sum(tmp_path: Path) -> None:
    src = tmp_path / "csum.p4"
    src.write_text(PROGRAM)
    program = compile_file(src)
    assert "compute_hash" not in program.python_source and "update_checksum(" not in \
        program.python_source.split("def make", 1)[1]  # the inline path was taken
    sw = Switch(program)
    rng = random.Random(5)
    for k in range(400):
        fields = bytes(rng.randrange(256) for _ in range(16))
        if k < 4:  # all zero, all ones: the two ends of the sum
            fields = bytes(16) if k < 2 else b"\xff" * 16
        odd = bytes([rng.randrange(256)])
        out = sw.process(0, fields + b"\0\0" + odd)
        # the checksum covers the fields and the odd byte, padded to a word
        assert out == [(1, fields + internet_checksum(fields + odd).to_bytes(2, "big") + odd)]
