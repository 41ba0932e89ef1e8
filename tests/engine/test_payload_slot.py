"""The payload between ingress and egress: a program whose generated code
reads the payload slot (a ``*_with_payload`` checksum) gets the bytes after
its parsed headers there, in ingress and in egress; any other program's
jobs carry the arriving frame and the payload's offset, and every program
emits the payload unchanged after its headers."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from v1model_text import v1model

from dataplane.compiler.frontend.parser import parse_file
from dataplane.compiler.pipeline import compile_program
from dataplane.runtime.switch import EgressJob, Switch
from tests.crc_reference import internet_checksum

PROGRAM = v1model(
    types="header h_t { bit<8> a; bit<16> sum; }\nstruct H { h_t h; }\nstruct M { }\n",
    parser="parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {\n"
           "    state start { pkt.extract(hdr.h); transition accept; }\n}\n",
    ingress="control I(inout H hdr, inout M m, inout standard_metadata_t sm) {\n"
            "    apply { sm.egress_spec = 2; }\n}\n",
    compute="control C(inout H hdr, inout M m) {\n"
            "    apply { UPDATE(hdr.h.a != 0, { hdr.h.a }, hdr.h.sum,\n"
            "                   HashAlgorithm.csum16); }\n}\n",
    deparser="control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }\n")


def _switch(tmp_path: Path, update: str) -> Switch:
    src = tmp_path / f"{update}.p4"
    src.write_text(PROGRAM.replace("UPDATE", update))
    return Switch(compile_program(parse_file(src), src))


@pytest.mark.parametrize("update", ["update_checksum_with_payload", "update_checksum"])
def test_the_payload_reaches_egress_whether_or_not_the_program_reads_it(
        tmp_path: Path, update: str) -> None:
    sw = _switch(tmp_path, update)
    reads = update.endswith("payload")
    assert sw.program.reads_payload is reads
    rng = random.Random(update)
    for size in range(0, 41):
        payload = bytes(rng.randrange(256) for _ in range(size))
        a = rng.randrange(1, 256)
        frame = bytes([a, 0xAA, 0x55]) + payload
        [(port, out)] = sw.process(1, frame)
        covered = bytes([a]) + (payload if reads else b"")
        assert port == 2
        assert out == bytes([a]) + internet_checksum(covered).to_bytes(2, "big") + payload, size


def test_a_job_names_its_payload_by_frame_and_offset() -> None:
    job = EgressJob(3, [], b"headerPAYLOAD", 13, 6)
    assert job.payload == b"PAYLOAD" and job.frame == b"headerPAYLOAD"
    assert EgressJob(3, [], b"whole", 5).payload == b"whole"
    assert "7 bytes" in repr(job)
