"""PINT on the ``mininet`` target: intbed-switch processes running
p4src/pint.p4 on a k=4 fat-tree, real packets from the hosts, the sinks'
reports read from the collector host, and path tracing decoding the path
every flow took (from the switches' own pcaps), as on the sim target with
the same run (``orchestration.systems.pint.run_pint``). Needs root, Mininet
and intbed-switch; skipped with the reason otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestration.live.network import live_available
from orchestration.live.options import LiveOptions
from orchestration.network import open_network
from orchestration.systems.pint import random_flows, run_pint
from sinks.pint.analysis import tuned_hybrid
from sinks.pint.pathtrace import PathCoding
from topologies.generators import build_topology

_LIVE = live_available("mininet")
live = pytest.mark.skipif(_LIVE is not None, reason=f"live PINT runs: {_LIVE}")

SEED = 3
CODING = PathCoding(32, 32, *tuned_hybrid(5))


@live
def test_path_tracing_decodes_the_real_paths(clean: None, tmp_path: Path) -> None:
    topo = build_topology("fat-tree", k=4)
    flows = {f: 40 for f in random_flows(topo, 12, SEED)}
    net = open_network("mininet", topo, "pint", seed=SEED,
                       live=LiveOptions(results_dir=tmp_path))
    r = run_pint(net, topo, flows=flows, coding=CODING, seed=SEED, gap_s=0.01, drain_s=1.0)
    assert r.reports == r.sent == 12 * 40
    assert r.problems == {}
    assert len(r.true_paths) == len(r.decoded) == 12
    for flow, result in r.decoded.items():
        assert tuple(result.path) == r.true_paths[flow], flow  # type: ignore[union-attr]
    # Paths of 1, 3 and 5 switches on a fat-tree: the random flows cover more than one.
    assert len({len(p) for p in r.true_paths.values()}) > 1
