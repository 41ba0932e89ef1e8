"""The SmartNIC flow-cache figures 3-6: each quick run through ``intbed
run`` writes its results, and they hold what the cache must do: rates fall
or stay flat with more values per packet, events per packet follow the
trace's exponential values, every trial's events reach Redis, readers
needed do not fall as the rate rises, each latency workload takes its
operation's path, and the histogram loss equals the one computed here
from the trace and the cache's histograms."""

from __future__ import annotations

import ast
import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from experiments.flowcache.accuracy import E2E_EDGES
from experiments.framework import load_all
from intbed.cli import cli
from orchestration.redis_server import redis_available
from sinks.flowcache.config import default_edges
from sinks.flowcache.trace import TraceSpec, generate

NAMES = ("flowcache-fig3", "flowcache-fig4", "flowcache-fig5", "flowcache-fig6")


def _value(text: str) -> Any:
    """A CSV cell as the number or bool it was written from, else the text."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _read(path: Path) -> list[dict[str, Any]]:
    with path.open() as fh:
        return [{k: _value(v) for k, v in r.items()} for r in csv.DictReader(fh)]


def _run(tmp_path: Path, name: str, *extra: str) -> tuple[Path, list[dict[str, Any]],
                                                          dict[str, dict[str, Any]]]:
    out = tmp_path / name
    result = CliRunner().invoke(cli, ["run", name, "--quick", "--quiet", "--out", str(out),
                                      *extra])
    assert result.exit_code == 0, result.output
    for f in ("config.json", "metrics.csv", "figure.png", "figure.svg", "summary.md",
              "summary.json"):
        assert (out / f).stat().st_size > 0, f
    heads = {h["name"]: h for h in json.loads((out / "summary.json").read_text())["headlines"]}
    return out, _read(out / "metrics.csv"), heads


def test_registered_with_paper_defaults() -> None:
    exps = load_all()
    assert set(NAMES) <= set(exps)
    fig3 = exps["flowcache-fig3"].resolve({}, quick=False)
    assert fig3["hops"] == [1, 2, 3, 4, 5] and fig3["instructions"] == [1, 2, 3, 4]
    assert fig3["rows"] == 1 << 19
    assert exps["flowcache-fig4"].resolve({}, quick=False)["max_readers"] == 8
    assert exps["flowcache-fig6"].resolve({}, quick=False)["ring_entries"][0] == 1 << 16


def test_fig3_quick(tmp_path: Path) -> None:
    _, rows, heads = _run(tmp_path, "flowcache-fig3")
    a = {(r["hops"], r["instructions"]): r for r in rows if r["panel"] == "a"}
    assert set(a) == {(1, 1), (1, 4), (5, 1), (5, 4)}
    assert all(r["packets_per_cpu_s"] > 0 and r["events"] == 0 for r in a.values())
    # 20 values per packet cost at least as much as 1 (within the noise of a shared machine)
    assert a[5, 4]["packets_per_cpu_s"] <= 1.25 * a[1, 1]["packets_per_cpu_s"]
    assert a[5, 4]["frame_bytes"] == 60 + 16 + 80 and a[1, 1]["frame_bytes"] == 60 + 16 + 4
    b = {r["queue_threshold"]: r for r in rows if r["panel"] == "b"}
    assert b[300]["events"] == 0  # queue occupancy is capped at 300
    # queue occupancy floor(Exp(mean 40)): P(q > t) = exp(-(t + 1) / 40), 5 hops
    for t in (60, 0):
        expected = 5 * math.exp(-(t + 1) / 40)
        assert b[t]["events_per_packet"] == pytest.approx(expected, rel=0.05), t
    assert b[0]["events_per_cpu_s"] == pytest.approx(b[0]["events"] / b[0]["cpu_s"])
    assert all(r["event_ring_overflow"] == 0 for r in rows)
    assert heads["(a) 5 hops x 4 instructions, packets/s"]["paper"] == 6.57e6
    assert heads["(b) packets/s at 1.6 M events/s"]["paper"] == 5.3e6


@pytest.fixture
def with_redis() -> None:
    if redis_available() is None:
        pytest.skip("redis-server is not installed: install the Debian package redis-server")


@pytest.mark.usefixtures("with_redis")
def test_fig4_quick(tmp_path: Path) -> None:
    _, rows, heads = _run(tmp_path, "flowcache-fig4")
    loads = sorted({r["load"] for r in rows})
    assert loads == [0.2, 3.0]
    needed = [next(r["readers_needed"] for r in rows if r["load"] == x) for x in loads]
    as_count = [math.inf if n == -1 else n for n in needed]
    assert as_count == sorted(as_count), needed
    assert needed[0] == 1  # a fifth of one reader's capacity
    for r in rows:
        assert r["written_total"] == r["events"] > 0  # every event reached Redis at the end
        assert r["written_in_window"] <= r["events"]
        if r["keeps_up"]:
            assert r["event_ring_overflow"] == 0
            assert r["events"] - r["written_in_window"] <= r["rate"] * 0.25
    assert heads["readers needed at that rate"]["paper"] == 8


def test_fig4_without_redis_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("orchestration.redis_server.redis_available", lambda: None)
    result = CliRunner().invoke(cli, ["run", "flowcache-fig4", "--quick", "--quiet", "--out",
                                      str(tmp_path / "r")])
    lines = [ln for ln in result.output.strip().splitlines() if ln]
    assert result.exit_code == 1 and len(lines) == 1, result.output
    assert "needs a real Redis" in lines[0] and "redis-server not found" in lines[0]


def test_fig5_quick(tmp_path: Path) -> None:
    _, rows, heads = _run(tmp_path, "flowcache-fig5")
    by = {r["operation"]: r for r in rows}
    assert set(by) == {"update", "eviction", "notification"}
    for r in rows:
        assert 0 < r["median_ns"] <= r["max_ns"], r["operation"]
        assert r["call_overhead_ns"] > 0 and r["packets"] == r["calls"] * r["batch"]
    assert by["update"]["hits"] == by["update"]["packets"] and by["update"]["events"] == 0
    assert by["eviction"]["evictions"] == by["eviction"]["packets"]
    # hop latency floor(Exp(mean 50)) > 0 with probability exp(-1/50), 5 hops
    assert by["notification"]["events_per_packet"] == pytest.approx(5 * math.exp(-1 / 50),
                                                                     rel=0.03)
    assert heads["update: median latency per packet"]["paper"] == 5000
    assert heads["eviction: maximum latency per packet"]["paper"] == 25000


def _true_counts(values: np.ndarray, edges: tuple[int, ...]) -> np.ndarray:
    """np.histogram with the last bin open above."""
    return np.histogram(values, bins=[*edges, np.iinfo(np.int64).max])[0]


def test_fig6_quick(tmp_path: Path) -> None:
    out, rows, heads = _run(tmp_path, "flowcache-fig6")
    params = json.loads((out / "config.json").read_text())["params"]
    seed = rows[0]["trace_seed"]
    trace = generate(TraceSpec(packets=params["packets"], flows=params["flows"], hops=5,
                               instructions=4, seed=seed))
    first = int(trace.values[0, 0, 0])
    assert all(r["first_switch"] == first for r in rows)
    at_first = trace.values[:, :, 0] == first
    edges = default_edges()
    truth = {"e2e_latency": _true_counts(trace.values[:, :, 1].astype(np.int64).sum(1),
                                         E2E_EDGES),
             "queue_occupancy": _true_counts(trace.values[:, :, 2][at_first],
                                             edges["queue_occupancy"]),
             "link_utilization": _true_counts(trace.values[:, :, 3][at_first],
                                              edges["link_utilization"])}
    totals = {(t["ring_entries"], t["metric"]): t for t in _read(out / "loss.csv")}
    for size in params["ring_entries"]:
        for metric, counts in truth.items():
            sel = [r for r in rows if r["ring_entries"] == size and r["metric"] == metric]
            assert [r["trace"] for r in sel] == counts.tolist(), (size, metric)
            loss = 1 - sum(r["observed"] for r in sel) / counts.sum()
            assert heads[f"{metric} loss, rings of {size:,}"]["ours"] == pytest.approx(100 * loss)
            assert totals[size, metric]["loss"] == pytest.approx(loss)
            if metric != "e2e_latency":  # the cache's own histograms lose nothing
                assert [r["observed"] for r in sel] == counts.tolist()
    big, small = params["ring_entries"]
    assert totals[big, "e2e_latency"]["loss"] == 0
    # one end-to-end event per packet whose latency sum is above 0; what is
    # not observed is what overflowed the small rings
    lost = totals[small, "e2e_latency"]
    assert lost["event_ring_overflow"] > 0
    zero = int((trace.values[:, :, 1].astype(np.int64).sum(1) == 0).sum())
    assert lost["trace"] - lost["observed"] == lost["event_ring_overflow"] + zero
    assert heads[f"e2e_latency loss, rings of {big:,}"]["paper"] == 0.04


def test_bad_parameter_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["run", "flowcache-fig3", "--quick", "--set", "hops=0,6",
                                      "--out", str(tmp_path / "r")])
    lines = [ln for ln in result.output.strip().splitlines() if ln]
    assert result.exit_code == 1 and len(lines) == 1 and "must be in 1..5" in lines[0]


def test_the_old_names_say_what_they_became() -> None:
    result = CliRunner().invoke(cli, ["run", "nicsink-fig4", "--quick"])
    assert result.exit_code == 1
    assert "experiment 'nicsink-fig4' is now 'flowcache-fig4'" in result.output
