"""GPINT's run on the sim target end to end: planner, gpint.p4 on every
switch, the monitor on the collector host, background traffic, recovery."""

from __future__ import annotations

import math

import pytest

from orchestration.network import RunEnv, TargetError
from orchestration.systems.gpint import (
    GpintRunConfig,
    GpintRunError,
    derived_capacities,
    run_gpint,
    run_topology,
    switch_loads,
)
from topologies.generators import gpint_ws

SMALL = {"n": 10, "hosts": 20, "planner": "gpint-3", "load_pps": 2000.0, "duration_s": 2.0,
         "warmup_s": 0.2, "sessions": 2, "mea_count": 2}


def test_switch_loads_add_up_to_the_mean_path_length() -> None:
    """Summed over switches, the load is the rate times the mean number of
    switches a packet crosses, which a BFS over host pairs gives directly."""
    import itertools

    import networkx as nx

    topo = gpint_ws(n=12, hosts=24, seed=3)
    graph = topo.switch_graph()
    home = [topo.host_switch(h)[0] for h in topo.hosts]
    dist = dict(nx.all_pairs_shortest_path_length(graph))
    hops = [dist[a][b] + 1 for a, b in itertools.permutations(home, 2)]
    loads = switch_loads(topo, 1000.0)
    assert sum(loads.values()) == pytest.approx(1000.0 * sum(hops) / len(hops), rel=1e-9)
    caps = derived_capacities(topo, 1000.0, 0.5, model="per-switch")
    assert all(caps[s] == pytest.approx(2 * loads[s]) for s in loads if loads[s] > 0)
    same = derived_capacities(topo, 1000.0, 0.5)
    assert all(c == pytest.approx(2 * max(loads.values())) for c in same.values())


def test_sessions_complete_without_loss() -> None:
    r = run_gpint(GpintRunConfig(**SMALL))
    s = r.summary()
    assert s["sessions"] == 2 and s["failed_session_ratio"] == 0 and s["failed_probe_ratio"] == 0
    assert 0 < s["latency_s"] < 0.5
    assert r.background_sent > 0 and r.background_loss == 0.0
    assert r.malformed_probes == 0
    # every switch of every path reported once per session
    assert all(row["failed_probes"] == 0 for row in r.sessions)


def test_a_dead_link_is_recovered_and_named() -> None:
    cfg = GpintRunConfig(**SMALL, recovery="ft")
    path = next(p for p in cfg.paths() if len(p) >= 3)
    dead = (path[1], path[2])
    r = run_gpint(GpintRunConfig(**{**SMALL, "recovery": "ft", "failed_links": (dead,)}))
    assert r.sessions and all(row["completed"] for row in r.sessions), r.sessions
    assert sum(row["recovery_sent"] for row in r.sessions) >= 1
    assert any(str(tuple(sorted(dead))) in row["unavailable"] for row in r.sessions), r.sessions


def test_without_recovery_a_dead_link_fails_the_session() -> None:
    cfg = GpintRunConfig(**SMALL)
    path = next(p for p in cfg.paths() if len(p) >= 3)
    r = run_gpint(GpintRunConfig(**{**SMALL, "failed_links": ((path[1], path[2]),),
                                    "sessions": 1}))
    s = r.summary()
    assert s["failed_session_ratio"] == 1.0 and s["failed_probe_ratio"] > 0
    assert math.isnan(s["latency_s"])


@pytest.mark.parametrize("kw, text", [
    ({"recovery": "maybe"}, "recovery must be one of off, paper, ft"),
    ({"sessions": 0}, "sessions must be at least 1"),
    ({"failed_links": (("s1", "s99"),)}, "no link between s1 and s99"),
])
def test_bad_configurations(kw: dict, text: str) -> None:
    with pytest.raises(GpintRunError, match=text.replace("(", r"\(")):
        run_gpint(GpintRunConfig(**{**SMALL, **kw}))


def test_an_unknown_target_is_refused_where_the_run_is_placed() -> None:
    with pytest.raises(TargetError, match="tofino"):
        run_gpint(GpintRunConfig(**SMALL), RunEnv("tofino"))  # type: ignore[arg-type]


def test_the_seed_draws_the_network_and_is_recorded() -> None:
    a, b = GpintRunConfig(**SMALL).paths(1), GpintRunConfig(**SMALL).paths(2)
    assert a != b
    r = run_gpint(GpintRunConfig(**{**SMALL, "sessions": 1}), RunEnv(seed=1))
    assert r.config["seed"] == 1 and r.config["target"] == "sim"
    assert r.path_lengths == [len(p) for p in a]


def test_a_link_failing_mid_session_is_recovered() -> None:
    """The link dies while the first session's probes are on their way
    (Network.fail_link); recovery completes that session and the next."""
    cfg = GpintRunConfig(**SMALL, recovery="ft")
    path = next(p for p in cfg.paths() if len(p) >= 3)
    r = run_gpint(GpintRunConfig(**{**SMALL, "recovery": "ft", "failed_links":
                                    ((path[1], path[2]),), "fail_at_s": SMALL["warmup_s"]}))
    assert len(r.sessions) == 2 and all(row["completed"] for row in r.sessions), r.sessions
    assert sum(row["recovery_sent"] for row in r.sessions) >= 1


def test_measured_capacity_is_the_switch_models() -> None:
    """'measured': no processing rate from the paper's utilisation; each
    switch serves what its timing model measured (the profile's capacity)."""
    from dataplane.targets.sim.timing import load_model

    cfg = GpintRunConfig(**{**SMALL, "capacity_model": "measured", "sessions": 1})
    assert all(spec.processing_rate_pps is None for spec in run_topology(cfg).switches.values())
    r = run_gpint(cfg, RunEnv(switch_model="bmv2"))
    assert set(r.capacities_pps.values()) == {load_model("bmv2").capacity_pps}
    assert r.input_drops == 0 and r.summary()["failed_session_ratio"] == 0


def test_drop_diagnosis_predicts_no_loss_where_no_switch_drops() -> None:
    """experiments.gpint.drops reads every switch's counters after the
    run: with light load nothing is dropped, so survival is 1 and the
    predicted failure is the measured one, 0."""
    from experiments.gpint.drops import diagnose

    cfg = GpintRunConfig(**{**SMALL, "planner": "euler", "load_pps": 500.0})
    out = diagnose(cfg, seed=0)
    assert out["largest_drop_ratio"] == 0 and out["busiest_utilisation"] < 1
    assert out["predicted_failed"] == out["measured_failed"] == 0
    assert out["lengths"] == [len(p) for p in cfg.paths()]
