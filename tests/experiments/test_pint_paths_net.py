"""pint-path-tracing-net: registered for every target, and a --quick run on
the sim target decodes every flow's path as the switches took it, with
packets needed no fewer than a path's switches could teach (each packet
carries one 32-bit digest) and every packet reported by its sink."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from experiments.framework import ExperimentError, load_all, run_experiment
from orchestration.network import TARGETS


def test_registered_for_every_target_with_checks() -> None:
    exp = load_all()["pint-path-tracing-net"]
    assert exp.targets == tuple(TARGETS)
    full, quick = exp.resolve({}, quick=False), exp.resolve({}, quick=True)
    assert quick["flows"] < full["flows"]
    with pytest.raises(ExperimentError, match="8, 16 or 32 bits"):
        exp.resolve({"bits": "12"}, quick=True)


def test_quick_sim_run_decodes_every_path(tmp_path: Path) -> None:
    out = run_experiment("pint-path-tracing-net", quick=True, seed=2, out=tmp_path / "run")
    with (out / "metrics.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    quick = load_all()["pint-path-tracing-net"].resolve({}, quick=True)
    assert len(rows) == quick["flows"]
    for row in rows:
        assert row["decoded"] == "True", row
        assert row["conflicts"] == "0"
        # A packet's 32-bit digest teaches at most one switch id.
        assert int(row["switches"]) <= int(row["packets_needed"]) <= quick["packets"]
        assert int(row["reports"]) == int(row["sent"]) == quick["flows"] * quick["packets"]
    assert {int(r["switches"]) for r in rows} <= {1, 3, 5}
