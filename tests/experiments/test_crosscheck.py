"""``intbed crosscheck``'s verdict: Welch's 95 % interval from the seeds'
spread, checked against values worked out by hand, and a whole run of
two targets' results into one report."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from experiments.crosscheck import compare, crosscheck, t975
from experiments.framework import ExperimentError
from orchestration.network import TARGETS


def test_the_tolerance_is_welchs_interval() -> None:
    a, b = [1.0, 2.0, 3.0], [2.0, 4.0, 6.0]
    # var/n: 1/3 and 4/3; df = (5/3)^2 / ((1/9)/2 + (16/9)/2) = 25/9 / (17/18) = 2.94
    r = compare("x", "", a, b)
    assert r.tolerance == pytest.approx(t975(2.94) * math.sqrt(5 / 3))
    assert t975(2.94) == 4.303  # Welch df rounds down: the wider interval
    assert r.difference == 2.0 and r.agrees  # 2.0 < 4.11
    far = compare("x", "", a, [12.0, 14.0, 16.0])
    assert not far.agrees and far.difference == 12.0


def test_values_without_spread_agree_only_when_equal() -> None:
    assert compare("x", "", [0.5, 0.5], [0.5, 0.5]).agrees
    assert not compare("x", "", [0.5, 0.5], [0.5000001, 0.5000001]).agrees
    one_sided = compare("x", "", [1.0, 1.0], [0.9, 1.1])  # only b varies: df = n_b - 1
    assert one_sided.tolerance == pytest.approx(12.706 * math.sqrt(0.02 / 2))


def test_one_seed_is_not_enough() -> None:
    with pytest.raises(ExperimentError, match="two or more seeds"):
        compare("x", "", [1.0], [1.0])


def test_a_crosscheck_writes_every_run_and_the_report(tmp_path: Path) -> None:
    """Two sim targets (a live one needs root): the same experiment and
    seeds give the same headlines, which agree."""
    sim = TARGETS["sim"]
    results = crosscheck("intlabel-fig15", targets=(sim, sim), seeds=2, quick=True,
                         out=tmp_path, force=True)
    assert results and all(r.agrees and r.difference == 0 for r in results)
    report = json.loads((tmp_path / "crosscheck.json").read_text())
    assert report["agree"] and report["seeds"] == 2
    assert (tmp_path / "sim" / "seed1" / "summary.json").is_file()


def test_a_collector_profile_prices_the_sims_side(tmp_path: Path) -> None:
    """The profile named reaches every sim run and the report, which the
    book turns into the command that made it."""
    sim = TARGETS["sim"]
    crosscheck("intlabel-fig15", targets=(sim, sim), seeds=2, quick=True, out=tmp_path,
               force=True, collector_profile="amd-epyc")
    report = json.loads((tmp_path / "crosscheck.json").read_text())
    assert report["collector_profile"] == "amd-epyc"
    for seed in (0, 1):
        config = json.loads((tmp_path / "sim" / f"seed{seed}" / "config.json").read_text())
        assert config["collector_profile"] == "amd-epyc"
    # Resumed, the finished runs are kept; priced otherwise, they are not.
    again = crosscheck("intlabel-fig15", targets=(sim, sim), seeds=2, quick=True,
                       out=tmp_path, resume=True, collector_profile="amd-epyc")
    assert all(r.agrees for r in again)
    with pytest.raises(ExperimentError, match="differs in collector_profile"):
        crosscheck("intlabel-fig15", targets=(sim, sim), seeds=2, quick=True, out=tmp_path,
                   resume=True)


def test_a_collector_profile_is_refused_where_the_collector_is_real() -> None:
    from experiments.framework import run_experiment

    with pytest.raises(ExperimentError, match="--collector-profile applies to the sim"):
        run_experiment("intlabel-fig12", quick=True, target="mininet",
                       collector_profile="amd-epyc")
