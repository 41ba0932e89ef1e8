"""Fuzzed ``intbed run --set PARAM=VALUE`` values aimed at the directory of
an earlier, finished run: every one is refused or rejected in one line (exit
1, or 2 for what click refuses), and that run's files stay byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_cli_support import assert_handled, fuzz_settings, invoke
from hypothesis import given
from hypothesis import strategies as st

from experiments.framework import load_all

EXPERIMENTS = load_all()
PARAMS = sorted({p.name for exp in EXPERIMENTS.values() for p in exp.params})
VALUES = st.one_of(
    st.text(max_size=12),
    st.integers(-(2**66), 2**66).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.lists(st.integers(-5, 50).map(str), max_size=4).map(",".join),
    st.sampled_from(["", "0", "-1", "nan", "inf", "1e309", "[1, 2]", "{}", "none", "true",
                     "gpint-3,snmp", "10,20", "0.5", "1/0", "=", ",,", "'", "\"x\""]),
)


class EarlierRun:
    """A finished run's directory and every byte in it."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.files = snapshot(out)

    def __repr__(self) -> str:  # hypothesis prints the fixture with a failing example
        return f"EarlierRun({self.out}, {len(self.files)} files)"


@pytest.fixture(scope="module")
def earlier_run(tmp_path_factory: pytest.TempPathFactory) -> EarlierRun:
    out = tmp_path_factory.mktemp("earlier") / "r"
    done = invoke("run", "intlabel-fig21", "--quiet", "--out", str(out))
    assert done.code == 0, done.stderr
    return EarlierRun(out)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@fuzz_settings(60)
@given(name=st.sampled_from(sorted(EXPERIMENTS)),
       settings=st.lists(st.tuples(st.one_of(st.sampled_from(PARAMS), st.text(max_size=6)),
                                   VALUES), min_size=1, max_size=3),
       quick=st.booleans(), separator=st.sampled_from(["=", " = ", ""]))
def test_fuzzed_settings_leave_an_earlier_run_alone(
        earlier_run: EarlierRun, name: str,
        settings: list[tuple[str, str]], quick: bool, separator: str) -> None:
    out = earlier_run.out
    args = ["run", name, "--quiet", "--out", str(out)] + (["--quick"] if quick else [])
    for key, value in settings:
        args += ["--set", f"{key}{separator}{value}"]
    outcome = invoke(*args)
    assert_handled(outcome, usage=True)
    assert outcome.code != 0, "a run into a finished run's directory without --force"
    assert snapshot(out) == earlier_run.files
