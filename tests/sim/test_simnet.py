"""Whole networks on the sim target: reachability, RTTs, determinism."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from benchmarks.sim import random_server_traffic
from intbed.cli import cli
from orchestration.apps.ping import PAYLOAD, all_pairs, expected_rtt_us
from orchestration.sim import build
from topologies.generators import build_topology


@pytest.mark.parametrize(("topo", "params", "pairs"),
                         [("intlabel-fabric", {}, 56), ("fat-tree", {"k": 4}, 240)])
def test_all_pairs_ping_matches_link_delays(topo: str, params: dict, pairs: int) -> None:
    t = build_topology(topo, **params)
    net = build(t, "l3_forward", switch_model="ideal")  # switches that take no time
    results = all_pairs(net)
    assert len(results) == pairs
    size = 14 + 20 + 8 + len(PAYLOAD)
    for r in results:
        assert r.rtt_us is not None, f"{r.src} -> {r.dst} lost"
        assert r.rtt_us == pytest.approx(expected_rtt_us(t, r.src, r.dst, size), abs=0.001)


def test_sim_ping_cli_json() -> None:
    result = CliRunner().invoke(cli, ["sim", "ping", "--topo", "fat-tree", "--k", "4", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)["summary"]
    assert summary["pairs"] == summary["reachable"] == 240
    assert summary["lost"] == 0 and summary["not_matching_link_delays"] == 0


def received_log(seed: int) -> bytes:
    topo = build_topology("intlabel-fabric")
    net = build(topo, "l3_forward", seed=seed)
    hosts = list(topo.hosts)
    receivers = random_server_traffic(net, [hosts[0], hosts[-1]], 2e6, 500, 0.2, seed)
    net.run(0.3)
    return b"".join(rx.log_bytes() for rx in receivers)


def test_same_seed_gives_identical_logs_and_another_seed_differs() -> None:
    a = received_log(11)
    assert a == received_log(11)
    assert a != received_log(12)
    assert a.count(b"\n") > 100  # packets really flowed
