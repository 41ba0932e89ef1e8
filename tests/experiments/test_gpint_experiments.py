"""GPINT's figures 8-15: registered with the paper's parameters, one cheap
run writes its results, and the confidence interval is the textbook one."""

from __future__ import annotations

import csv
import json
import math
import statistics
from pathlib import Path

import pytest

from experiments.framework import ExperimentError, load_all, run_experiment
from experiments.gpint.figures import aggregate, configs
from experiments.stats import mean_ci, t975, verdict
from orchestration.network import TARGETS
from orchestration.systems.gpint import GpintRunConfig

FIGS = [f"gpint-fig{n}" for n in range(8, 16)]
WITH_PDPS = {"gpint-fig12", "gpint-fig15"}


@pytest.mark.parametrize("name", FIGS)
def test_registered_with_paper_defaults_and_quick_values(name: str) -> None:
    exp = load_all()[name]
    full, quick = exp.resolve({}, quick=False), exp.resolve({}, quick=True)
    assert full["sizes"] == [20, 40, 60, 80, 100] and quick["sizes"] == [20, 30]
    assert full["repetitions"] == 20 and quick["repetitions"] == 1
    assert full["sessions"] == 10 and quick["sessions"] == 2
    assert quick["duration_s"] == 5.0 and full["duration_s"] > quick["duration_s"]
    assert full["planners"] and full["loads"]
    assert full["mea_count"] == GpintRunConfig().mea_count >= 1  # probes carry values
    assert ("pdps" in full) == (name in WITH_PDPS)
    if name in WITH_PDPS:
        assert full["pdps"] == [0.05, 0.10, 0.15, 0.20]
    live = name in ("gpint-fig10", "gpint-fig13")  # the crosscheck's and a recovery figure
    assert exp.targets == (tuple(TARGETS) if live else ("sim",))
    assert full["capacity_model"] == "identical" and full["monitor_cost"] == "measured"
    assert full["probe_timeout_s"] == GpintRunConfig().probe_timeout_s


def test_paper_planners_and_loads() -> None:
    exps = load_all()
    everyone = ["gpint-2", "gpint-3", "gpint-5", "euler", "snmp"]
    for name in ("gpint-fig9", "gpint-fig10", "gpint-fig11", "gpint-fig13"):
        assert exps[name].param("planners").default == everyone
    assert exps["gpint-fig14"].param("planners").default == [*everyone, "gpint-3-ft"]
    assert exps["gpint-fig12"].param("planners").default == ["gpint-3", "snmp"]
    assert exps["gpint-fig15"].param("planners").default == ["gpint-3-ft", "snmp"]
    loads = {n: exps[n].param("loads").default for n in FIGS}
    assert loads["gpint-fig8"] == loads["gpint-fig9"] == [10_000.0, 14_000.0]
    assert loads["gpint-fig10"] == loads["gpint-fig13"] == [10_000.0]
    assert all(loads[n] == [14_000.0] for n in ("gpint-fig11", "gpint-fig12", "gpint-fig14",
                                                "gpint-fig15"))


def test_planner_names_checked() -> None:
    exps = load_all()
    with pytest.raises(ExperimentError, match="unknown planner"):
        exps["gpint-fig9"].resolve({"planners": "gpint-4"}, quick=True)
    with pytest.raises(ExperimentError, match="recovery-on"):
        exps["gpint-fig9"].resolve({"planners": "gpint-3-ft"}, quick=True)
    assert configs(["gpint-3-ft", "snmp"], recovery=True) == [("gpint-3", "ft"),
                                                              ("snmp", "paper")]
    assert configs(["euler"], recovery=False) == [("euler", "off")]


def test_confidence_interval_by_hand() -> None:
    # 1, 2, 3, 4: mean 2.5, s = sqrt(5/3), t(0.975, 3) = 3.182, half width t*s/sqrt(4).
    mean, half, count = mean_ci([1.0, 2.0, 3.0, 4.0, math.nan])
    assert (mean, count) == (2.5, 4)
    assert half == pytest.approx(3.182 * math.sqrt(5 / 3) / 2) == pytest.approx(2.05398, 1e-4)
    mean, half, count = mean_ci([0.3])
    assert mean == 0.3 and math.isnan(half) and count == 1
    assert math.isnan(mean_ci([math.nan])[0])
    assert t975(1) == 12.706 and t975(19) == 2.093 and t975(35) == 2.042 and t975(500) == 1.96


def test_aggregate_groups_repetitions() -> None:
    base = {"n": 20, "planner": "gpint-3", "recovery": "ft", "load_pps": 14e3, "link_loss": 0.05,
            "background_loss": 0.0, "failed_probe_ratio": 0.0, "failed_session_ratio": 0.0,
            "recovery_path_ratio": 10.0, "sessions": 2, "paths": 6, "mea_count": 4}
    rows = [{**base, "repetition": r, "latency_s": v} for r, v in enumerate((1.0, 3.0))]
    rows.append({**base, "n": 30, "repetition": 0, "latency_s": 5.0})
    agg = {r["n"]: r for r in aggregate(rows)}
    assert agg[20]["config"] == "GPINT-3-FT" and agg[20]["repetitions"] == 2
    assert agg[20]["latency_s"] == 2.0
    assert agg[20]["latency_s_ci95"] == pytest.approx(12.706 * math.sqrt(2) / math.sqrt(2))
    assert agg[30]["latency_s"] == 5.0 and math.isnan(agg[30]["latency_s_ci95"])


def test_quick_fig9_writes_metrics_and_headlines(tmp_path: Path) -> None:
    out = run_experiment("gpint-fig9", {"sizes": [20], "planners": ["gpint-3", "snmp"],
                                        "loads": [10_000.0], "repetitions": 1, "sessions": 1,
                                        "duration_s": 2.0},
                         quick=True, out=tmp_path / "g9")
    with (out / "metrics.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["config"] for r in rows] == ["GPINT-3", "SNMP"]
    for metric in ("background_loss", "failed_probe_ratio", "failed_session_ratio",
                   "latency_s", "recovery_path_ratio", "sessions", "paths"):
        assert metric in rows[0] and f"{metric}_ci95" in rows[0]
    assert {"n", "planner", "recovery", "load_pps", "link_loss", "repetitions"} <= set(rows[0])
    assert all(r["recovery"] == "off" and r["repetitions"] == "1" for r in rows)
    assert [int(r["paths"].split(".")[0]) for r in rows] == [6, 20]
    assert (out / "repetitions.csv").exists() and (out / "figure.png").stat().st_size > 0
    summary = json.loads((out / "summary.json").read_text())
    heads = {h["name"]: h for h in summary["headlines"]}
    # The headline is the largest mean over the rows at that load, in %.
    low = heads["failed probes at 10k pps, every planner (max)"]
    assert low["ours"] == pytest.approx(100 * max(float(r["failed_probe_ratio"]) for r in rows))
    assert low["verdict"] in ("reproduced", "direction only", "not reproduced")
    assert "fewer than the paper's 20" in (out / "summary.md").read_text()


def test_fig9_headlines_carry_interval_repetitions_and_order(tmp_path: Path) -> None:
    """Two repetitions: ours is the peak row's mean, its ci95 that row's
    (from repetitions.csv, by the t rule), n the repetitions, and the
    direction says whether Euler's failed probes exceed GPINT's."""
    out = run_experiment("gpint-fig9", {"sizes": [20], "planners": ["gpint-3", "euler"],
                                        "loads": [14_000.0], "repetitions": 2, "sessions": 2,
                                        "duration_s": 3.0, "warmup_s": 0.5},
                         quick=True, out=tmp_path / "g9")
    reps = list(csv.DictReader((out / "repetitions.csv").open(newline="")))
    per = {c: [float(r["failed_probe_ratio"]) for r in reps if r["config"] == c]
           for c in ("Euler", "GPINT-3")}
    heads = {h["name"]: h for h in json.loads((out / "summary.json").read_text())["headlines"]}
    for name, config in (("failed probes at 14k pps, Euler (max)", "Euler"),
                         ("failed probes at 14k pps, GPINT (max)", "GPINT-3")):
        h = heads[name]
        mean, half, count = mean_ci(per[config])
        assert h["ours"] == pytest.approx(100 * mean) and h["n"] == count == 2
        if math.isfinite(half):
            assert h["ci95"] == pytest.approx(100 * half)
        assert h["direction"] == (statistics.fmean(per["Euler"])
                                  > statistics.fmean(per["GPINT-3"]))
    for h in heads.values():
        assert h["verdict"] == verdict(h["ours"], h["paper"], ci95=h.get("ci95"),
                                       tolerance=h.get("tolerance"),
                                       direction=h.get("direction"))


# One size, two planners (one per family), one short session: each figure's
# whole pipeline (sweep, aggregation, plot, headlines) in 10-20 s.
SMALL = {"sizes": "20", "repetitions": "1", "sessions": "1", "warmup_s": "0.5",
         "duration_s": "2.0"}
SMALL_PLANNERS = {"gpint-fig8": None, "gpint-fig12": "gpint-3,snmp",
                  "gpint-fig14": "gpint-3-ft,snmp", "gpint-fig15": "gpint-3-ft,snmp"}


@pytest.mark.parametrize("name", FIGS)
def test_every_figure_runs_small_and_its_numbers_are_ratios(tmp_path: Path, name: str) -> None:
    overrides = dict(SMALL)
    planners = SMALL_PLANNERS.get(name, "gpint-3,snmp")
    if planners is not None:
        overrides["planners"] = planners
    if name in WITH_PDPS:
        overrides["pdps"] = "0.1"
    out = run_experiment(name, overrides, quick=True, out=tmp_path / name)
    for f in ("config.json", "metrics.csv", "figure.png", "figure.svg", "summary.md",
              "summary.json"):
        assert (out / f).stat().st_size > 0, f
    rows = list(csv.DictReader((out / "metrics.csv").open()))
    assert rows
    for row in rows:
        for key in ("background_loss", "failed_probe_ratio", "failed_session_ratio"):
            v = float(row[key])
            assert math.isnan(v) or 0.0 <= v <= 1.0, (key, v)
        latency = float(row["latency_s"])
        assert math.isnan(latency) or 0.0 < latency < 2.0  # within the 2 s of traffic
        assert float(row["recovery_path_ratio"]) >= 0.0
    heads = json.loads((out / "summary.json").read_text())["headlines"]
    assert heads and all({"name", "ours", "paper", "unit", "verdict"} <= set(h) for h in heads)
