"""PINT's quantile experiment: registered with full and quick values, quick
runs write their results, and what they write holds against independent
models: brute-force ranks and the KLL bound. (INT-label's Fig. 22, which
uses PINT's path tracing, is tested in test_intlabel_fig22.py.)"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from experiments.framework import ExperimentError, load_all, run_experiment
from experiments.pint.quantiles import chunks, dkw, rank_error

FILES = ("config.json", "metrics.csv", "figure.png", "figure.svg", "summary.md", "summary.json")


def rows_of(out: Path) -> list[dict[str, Any]]:
    def cell(v: str) -> Any:
        try:
            return float(v)
        except ValueError:
            return v
    with (out / "metrics.csv").open(newline="") as fh:
        return [{k: cell(v) for k, v in row.items()} for row in csv.DictReader(fh)]


def heads_of(out: Path) -> dict[str, dict[str, Any]]:
    return {h["name"]: h for h in json.loads((out / "summary.json").read_text())["headlines"]}


@pytest.fixture(scope="module")
def quantiles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_experiment("pint-quantiles", quick=True, out=tmp_path_factory.mktemp("pq") / "r")


def test_registered_with_full_and_quick_values() -> None:
    pq = load_all()["pint-quantiles"]
    full, quick = pq.resolve({}, False), pq.resolve({}, True)
    assert max(full["packets"]) > max(quick["packets"]) and full["k"] == quick["k"] == 200
    with pytest.raises(ExperimentError, match="k=4.*between 8 and 65535"):
        pq.resolve({"k": "4"}, True)


def test_rank_error_against_brute_force() -> None:
    rng = np.random.default_rng(3)
    values = np.sort(rng.integers(0, 20, 300).astype(np.float32))  # many ties
    for low, high, q in ((5.0, 5.0, 0.5), (3.0, 9.0, 0.99), (19.0, 19.0, 0.01), (7.5, 7.5, 0.3)):
        ranks = [(np.sum(values < v) / 300, np.sum(values <= v) / 300)
                 for v in values if low <= v <= high]
        ranks += [(np.sum(values < low) / 300,) * 2]  # nothing in range: the gap's rank
        want = min(max(lo - q, q - hi, 0.0) for lo, hi in ranks)
        assert rank_error(values, low, high, q) == pytest.approx(want, abs=1e-12)


def test_chunks_cover_every_packet_once() -> None:
    spans = chunks([100, 1_000_000])
    assert spans[0] == (0, 100, True) and spans[-1][1:] == (1_000_000, True)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert sum(1 for s in spans if s[2]) == 2


def test_quantile_errors_within_the_kll_bound(quantiles: Path) -> None:
    for f in FILES:
        assert (quantiles / f).stat().st_size > 0, f
    rows = rows_of(quantiles)
    params = json.loads((quantiles / "config.json").read_text())["params"]
    flows, hops = params["flows"], params["hops"]
    # datasketches' single-quantile bound at 99 %: 2.296 / k^0.9723
    bound = 2.296 / params["k"] ** 0.9723
    assert len(rows) == len(params["packets"]) * flows * hops * 2
    for r in rows:
        assert r["kll_bound"] == pytest.approx(bound, rel=1e-3)
        assert r["kll_rank_error"] <= r["kll_bound"], r
        assert r["e2e_bound"] == pytest.approx(bound + dkw(int(r["samples"])))
        assert r["e2e_rank_error"] <= r["e2e_bound"], r
    for n in params["packets"]:
        at = [r for r in rows if r["packets"] == n and r["q"] == 0.5]
        for f in range(flows):  # each packet carries one hop's sample
            assert sum(r["samples"] for r in at if r["flow"] == f) == n
        counts = np.array([r["samples"] for r in at])
        # reservoir sampling: each hop with probability 1/hops (binomial, 5 sigma)
        sd = math.sqrt(n * (1 / hops) * (1 - 1 / hops))
        assert np.all(np.abs(counts - n / hops) <= 5 * sd + 1)
    big = [r for r in rows if r["packets"] == max(params["packets"]) and r["q"] == 0.5]
    # a sketch far beyond its capacity still answers within its bound, and not exactly
    assert any(r["kll_rank_error"] > 0 for r in rows)
    assert all(r["samples"] > 10 * params["k"] for r in big)
