"""Every STF packet test under tests/p4 passes on intbed's engine.

A test NAME.stf runs against tests/p4/NAME.p4, or else p4src/NAME.p4, or
else the p4src program whose name is the longest prefix of NAME (so
``intlabel_base_a.stf`` tests ``p4src/intlabel.p4``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dataplane.compiler.pipeline import compile_file
from dataplane.testing.stf import run_stf
from orchestration.binaries.bmv2_stf import program_for

HERE = Path(__file__).resolve().parent

STF_FILES = sorted(HERE.glob("*.stf"))


def test_there_are_stf_tests() -> None:
    assert len(STF_FILES) >= 10


@pytest.mark.parametrize("stf", STF_FILES, ids=lambda p: p.stem)
def test_stf(stf: Path) -> None:
    result = run_stf(compile_file(program_for(stf)), stf)
    assert result.passed, result.diff
