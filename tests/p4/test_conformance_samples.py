"""Every p4c STF sample in ``../shared/p4-conformance/samples`` is a test
case of its own: compiled by intbed's front end and run on its engine, it
must give BMv2's recorded output (``intbed p4 conformance`` runs the same
cases). A regression in one sample then fails ``make test`` by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from dataplane.testing.stf import find_conformance_cases, run_conformance_case

SAMPLES = Path(__file__).resolve().parents[2] / ".." / "shared" / "p4-conformance" / "samples"
CASES = find_conformance_cases(SAMPLES) if SAMPLES.is_dir() else []


@pytest.mark.skipif(not CASES, reason=f"no conformance samples at {SAMPLES.resolve()}")
@pytest.mark.parametrize("sample", CASES or [None], ids=lambda p: p.stem if p else "none")
def test_the_sample_gives_bmv2s_output(sample: Path) -> None:
    name, passed, reason = run_conformance_case(sample)
    assert passed, f"{name}: {reason}"


def test_the_samples_are_all_there() -> None:
    if not SAMPLES.is_dir():
        pytest.skip(f"no conformance samples at {SAMPLES.resolve()}")
    assert len(CASES) == 117
