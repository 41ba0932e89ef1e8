"""pint-path-tracing: registered, checked, and a --quick run writes rows
whose Baseline analytic values are the coupon collector's."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from experiments.framework import ExperimentError, load_all, run_experiment
from sinks.pint.analysis import harmonic


def test_registered_with_defaults_and_checks() -> None:
    exp = load_all()["pint-path-tracing"]
    full, quick = exp.resolve({}, quick=False), exp.resolve({}, quick=True)
    assert 36 in full["hops"] and 59 in full["hops"] and full["bits"] == [8, 16, 32]
    assert quick["flows"] < full["flows"]
    with pytest.raises(ExperimentError, match="between 1 and 64"):
        exp.resolve({"hops": "5,65"}, quick=True)
    with pytest.raises(ExperimentError, match="8, 16 or 32"):
        exp.resolve({"bits": "12"}, quick=True)
    with pytest.raises(ExperimentError, match="unknown scheme nope"):
        exp.resolve({"schemes": "nope"}, quick=True)


def test_quick_run(tmp_path: Path) -> None:
    out = run_experiment("pint-path-tracing", quick=True, out=tmp_path / "run")
    with (out / "metrics.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    quick = load_all()["pint-path-tracing"].resolve({}, quick=True)
    assert len(rows) == len(quick["hops"]) * len(quick["bits"]) * 3
    for row in rows:
        k, f = int(row["hops"]), int(row["fragments"])
        assert f == math.ceil(32 / int(row["bits"]))
        assert float(row["expected_baseline"]) == pytest.approx(k * f * harmonic(k * f))
        if row["scheme"] == "reservoir":
            assert float(row["expected_online"]) == pytest.approx(
                float(row["expected_baseline"]), rel=1e-6)
        assert int(row["undecoded_stored"]) == 0 and int(row["undecoded_online"]) == 0
        assert float(row["mean_stored"]) > 0
        assert float(row["extra_bits_stored"]) == pytest.approx(
            float(row["mean_stored"]) * int(row["bits"]))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["experiment"] == "pint-path-tracing"
    assert (out / "figure.png").stat().st_size > 0
