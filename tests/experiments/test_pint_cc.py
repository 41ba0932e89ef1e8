"""pint-cc: HPCC fed by full INT and by PINT's 8-bit maximum. A lone flow's
completion time against a store-and-forward model written here, frame by
frame and link by link, with each variant's telemetry bytes on each link;
the web-search workload against its CDF and Poisson rate; and a --quick run:
every flow completes, no slowdown below 1, PINT's bytes per packet fixed and
INT's growing with the path, the same rows for the same seed."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from experiments.framework import ExperimentError, load_all, run_experiment
from experiments.pint.cc import WEB_SEARCH_CDF, mean_size, web_search_flows
from orchestration.network import open_network
from orchestration.systems.pint_cc import MSS, PLAIN_BYTES, CcFlow, run_hpcc
from topologies.generators import fat_tree

INT_BYTES = 16  # shim and INT-MD header
INT_HOP = 20    # hop latency, queue id + occupancy, egress timestamp, tx utilization
PINT_BYTES = 3  # shim (next protocol, budget) and the 8-bit digest


def store_and_forward_ns(sizes: list[int], grow: list[int], bandwidth_bps: int,
                         delay_ns: int) -> int:
    """When the last frame reaches the receiver: frame i leaves link j when
    its whole ``sizes[i] + grow[j]`` bytes crossed and link j is free."""
    free = [0] * len(grow)
    arrive = 0
    for size in sizes:
        t = 0
        for j, extra in enumerate(grow):
            start = max(t, free[j])
            free[j] = start + (size + extra) * 8 * 10**9 // bandwidth_bps
            t = free[j] + delay_ns
        arrive = t
    return arrive


@pytest.mark.parametrize("mode", ["int", "pint"])
def test_a_lone_flow_takes_exactly_the_store_and_forward_time(mode: str) -> None:
    topo = fat_tree(4)
    hosts = sorted(topo.hosts)
    src, dst = hosts[0], hosts[-1]  # another pod: 5 switches, 6 links
    flow = CcFlow(0, src, dst, 7 * MSS + 123, 0)  # 8 packets: below the window
    # Exactly the links' time: switches that take none (the paper's ns-3 ones).
    net = open_network("sim", topo, "int_md" if mode == "int" else "pint", seed=2,
                       switch_model="ideal")
    r = run_hpcc(net, topo, [flow], mode=mode, seed=2)
    (out,) = r.outcomes
    assert out.switches == 5 and out.received == 8
    links = out.switches + 1
    if mode == "int":  # the stack grows by a hop at every switch's egress
        grow = [0] + [INT_BYTES + INT_HOP * j for j in range(1, links)]
    else:  # the first switch adds the digest, later ones rewrite it
        grow = [0] + [PINT_BYTES] * (links - 1)
    sizes = [PLAIN_BYTES + flow.data_bytes(i) for i in range(flow.packets)]
    link = topo.links[0]
    expected = store_and_forward_ns(sizes, grow, round(link.bandwidth_mbps * 1e6),
                                    round(link.delay_us * 1000))
    assert out.fct_ns == expected
    assert out.ideal_ns == store_and_forward_ns(sizes, [0] * links,
                                                round(link.bandwidth_mbps * 1e6),
                                                round(link.delay_us * 1000))
    assert out.telemetry_bytes == 8 * grow[-1]
    assert r.acks == 8 and r.queue_drops == 0


def test_web_search_sizes_and_arrivals_follow_the_cdf_and_the_load() -> None:
    hosts = [f"h{i}" for i in range(16)]
    n, load, scale = 20_000, 0.4, 0.1
    flows = web_search_flows(hosts, n, load, 1000.0, scale, seed=5)
    sizes = np.array([f.size for f in flows]) / scale
    # DKW at 99.9 %: the empirical CDF within sqrt(ln(2/0.001) / 2n) everywhere.
    bound = math.sqrt(math.log(2 / 0.001) / (2 * n))
    for x, pct in WEB_SEARCH_CDF[1:-1]:
        assert abs(np.mean(sizes <= x) - pct / 100) <= bound + 1e-3, x
    # Poisson: n exponential gaps with mean 1/rate; their mean within 4 standard errors.
    rate = load * 16 * 1000e6 / 8 / (mean_size() * scale)
    gaps = np.diff([0] + [f.start_ns for f in flows]) / 1e9
    assert abs(gaps.mean() * rate - 1) < 4 / math.sqrt(n)
    assert all(f.src != f.dst for f in flows)
    assert len({f.src for f in flows}) == 16


def test_mean_of_the_piecewise_linear_cdf() -> None:
    # Brute force: the mean of many inverse-transform draws through np.interp.
    u = (np.arange(2_000_000) + 0.5) / 2_000_000
    xs = [x for x, _ in WEB_SEARCH_CDF]
    ps = [p / 100 for _, p in WEB_SEARCH_CDF]
    assert mean_size() == pytest.approx(np.interp(u, ps, xs).mean(), rel=1e-6)


def test_registered_with_full_and_quick_values_and_checks() -> None:
    exp = load_all()["pint-cc"]
    full, quick = exp.resolve({}, quick=False), exp.resolve({}, quick=True)
    assert full["loads"] == [0.3, 0.5] and full["k"] == 4
    assert quick["flows"] < full["flows"] and quick["size_scale"] < full["size_scale"]
    with pytest.raises(ExperimentError, match="loads between 0 and 1"):
        exp.resolve({"loads": "0.3,1.2"}, quick=True)
    with pytest.raises(ExperimentError, match="k = 2, 4, 6 or 8"):
        exp.resolve({"k": "5"}, quick=True)


def rows_of(out: Path) -> list[dict[str, Any]]:
    with (out / "metrics.csv").open() as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_experiment("pint-cc", quick=True, seed=1,
                          out=tmp_path_factory.mktemp("pint-cc") / "run")


def test_quick_run_completes_every_flow_no_faster_than_ideal(quick_run: Path) -> None:
    rows = rows_of(quick_run)
    quick = load_all()["pint-cc"].resolve({}, quick=True)
    assert len(rows) == quick["flows"] * len(quick["loads"]) * 2
    for row in rows:
        assert row["fct_ns"] != "", row
        assert int(row["received"]) == int(row["packets"])
        assert float(row["slowdown"]) >= 1.0
        assert int(row["fct_ns"]) >= int(row["ideal_ns"]) > 0
    assert (quick_run / "figure.png").stat().st_size > 0


def test_quick_run_pint_overhead_is_fixed_and_smaller(quick_run: Path) -> None:
    for row in rows_of(quick_run):
        per_packet = float(row["telemetry_bytes_per_packet"])
        if row["mode"] == "pint":
            assert per_packet == PINT_BYTES
        else:
            assert per_packet == INT_BYTES + INT_HOP * int(row["switches"])
            assert per_packet > PINT_BYTES


def test_same_seed_same_rows(quick_run: Path, tmp_path: Path) -> None:
    again = run_experiment("pint-cc", quick=True, seed=1, out=tmp_path / "again")
    assert (again / "metrics.csv").read_bytes() == (quick_run / "metrics.csv").read_bytes()
