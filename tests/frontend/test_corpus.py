"""p4c's v1model front-end corpus through ``intbed p4 corpus``: nothing
crashes, every rejection is located, and the command counts as stated."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from dataplane.testing.corpus import find_cases, run_corpus
from intbed.cli import cli

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "p4-frontend"
LOCATED = re.compile(r"^\S+\.p4:\d+(:\d+)?: error: ")

GOOD = """#include <core.p4>
#include <v1model.p4>
struct H { }
struct M { }
parser P(packet_in b, out H h, inout M m, inout standard_metadata_t s) {
    state start { transition accept; } }
control V(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t s) { apply { %s } }
control E(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
control C(inout H h, inout M m) { apply { } }
control D(packet_out b, in H h) { apply { } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the corpus is not at {CORPUS}")
def test_the_corpus_never_crashes_and_every_rejection_is_located() -> None:
    report = run_corpus(CORPUS, jobs=2)
    assert len(report.outcomes) == len(find_cases(CORPUS)) > 250
    crashed = [o.case.name for o in report.outcomes if o.status == "crashed"]
    assert crashed == []
    for o in report.outcomes:
        if o.status != "compiled":
            assert LOCATED.match(o.message), (o.case.name, o.message)
    # Every *-bmv2 sample goes through p4c's BMv2 back end: none may be
    # rejected as wrong (only a documented unsupported construct may stop it).
    wrongly = [o.case.name for o in report.outcomes
               if o.case.expect == "accept" and o.status == "rejected"
               and o.case.path.stem.endswith("-bmv2")]
    assert wrongly == []


def _corpus(tmp_path: Path) -> Path:
    samples = tmp_path / "p4_16_samples"
    errors = tmp_path / "p4_16_errors"
    samples.mkdir()
    errors.mkdir()
    (samples / "good.p4").write_text(GOOD % "")
    (samples / "wrongly-rejected.p4").write_text(GOOD % "s.egress_spec = h;")
    (errors / "rightly-rejected.p4").write_text(GOOD % "undefined_name = 1;")
    (errors / "wrongly-accepted.p4").write_text(GOOD % "s.egress_spec = 1;")
    return tmp_path


def test_the_command_counts_accepted_and_rejected_programs(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["p4", "corpus", str(_corpus(tmp_path))])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[-1] == "2 passed, 2 failed"
    assert any(line.startswith("REJECTED p4_16_samples/wrongly-rejected.p4: ") for line in lines)
    assert any(line.startswith("COMPILED p4_16_errors/wrongly-accepted.p4: ") for line in lines)
    assert not any("good.p4" in line or "rightly-rejected" in line for line in lines)


def test_an_empty_directory_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["p4", "corpus", str(tmp_path)])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"error: no p4_16_samples/, p4_16_errors/ or p4_16_bmv_errors/ programs in {tmp_path}"]
