"""Every switch of a live network gets ports of its own, even when the
kernel hands the same free port out twice in a row."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestration.live import network as live_network
from orchestration.live.network import LiveNetwork
from topologies.generators import build_topology


def test_switches_never_share_a_port(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A kernel that answers each free port twice: the worst case.
    answers = iter(p for port in range(40000, 40100) for p in (port, port))
    monkeypatch.setattr(live_network, "free_port", lambda: next(answers))
    topo = build_topology("fat-tree", k=4)
    net = LiveNetwork(topo, "l3_forward", run_dir=tmp_path)  # built, never started
    records = [net._switch_record(name) for name in topo.switches]
    ports = [int(r.grpc_addr.rsplit(":", 1)[1]) for r in records] + [r.thrift_port
                                                                     for r in records]
    assert len(ports) == 2 * len(topo.switches) == len(set(ports))
