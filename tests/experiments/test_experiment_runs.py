"""Every registered experiment runs (quick) and writes its results; runs
are reproducible; bad input is one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from experiments.framework import load_all, run_experiment
from intbed.cli import cli

NAMES = sorted(load_all())
FILES = ("config.json", "metrics.csv", "figure.png", "figure.svg", "summary.md", "summary.json")


def test_every_intlabel_figure_is_registered() -> None:
    expected = {f"intlabel-fig{n}" for n in range(6, 22)} - {"intlabel-fig22"}
    assert expected <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_quick_run_writes_results(tmp_path: Path, name: str) -> None:
    out = run_experiment(name, quick=True, out=tmp_path / name, jobs=1)
    for f in FILES:
        assert (out / f).stat().st_size > 0, f
    summary = json.loads((out / "summary.json").read_text())
    assert summary["headlines"], "an experiment states its headline numbers"
    for h in summary["headlines"]:
        assert set(h) == {"name", "ours", "paper", "unit"}
    config = json.loads((out / "config.json").read_text())
    assert config["experiment"] == name and config["quick"] is True


def test_same_seed_same_csv_other_seed_differs(tmp_path: Path) -> None:
    a = run_experiment("intlabel-fig7", quick=True, seed=5, out=tmp_path / "a")
    b = run_experiment("intlabel-fig7", quick=True, seed=5, out=tmp_path / "b")
    c = run_experiment("intlabel-fig7", quick=True, seed=6, out=tmp_path / "c")
    assert (a / "metrics.csv").read_bytes() == (b / "metrics.csv").read_bytes()
    assert (a / "metrics.csv").read_bytes() != (c / "metrics.csv").read_bytes()


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["run", "intlabel-fig99"], "unknown experiment 'intlabel-fig99'"),
        (["run", "intlabel-fig9", "--set", "T_ms=0"], "T must be positive"),
        (["run", "intlabel-fig18", "--set", "ratios=0.5,1.5"], "T1 > T"),
        (["run", "intlabel-fig9", "--set", "max_hop=0"], "MAX_hop"),
        (["run", "intlabel-fig9", "--set", "nosuch=1"], "no parameter 'nosuch'"),
        (["run", "intlabel-fig9", "--set", "T_ms=abc"], "cannot read 'abc'"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], fragment: str) -> None:
    code, output = run_cli(*args, "--quick", "--out", str(tmp_path / "r"))
    assert code == 1
    lines = [ln for ln in output.strip().splitlines() if ln]
    assert len(lines) == 1 and "error" in lines[0] and fragment in lines[0], output
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_results_are_not_overwritten_without_force(tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert run_cli("run", "intlabel-fig21", "--out", str(out))[0] == 0
    before = (out / "metrics.csv").read_bytes()
    code, output = run_cli("run", "intlabel-fig21", "--out", str(out), "--set", "ks=10")
    assert code == 1 and "--force" in output
    assert (out / "metrics.csv").read_bytes() == before
    assert run_cli("run", "intlabel-fig21", "--out", str(out), "--set", "ks=10", "--force")[0] == 0
    assert (out / "metrics.csv").read_bytes() != before


def test_unwritable_output_directory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    code, output = run_cli("run", "intlabel-fig21", "--out", str(blocker / "sub"))
    assert code == 1 and "cannot write results here" in output
