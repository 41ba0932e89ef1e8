"""Every switch of a live network gets ports of its own, even when the
kernel hands the same free port out twice in a row; ``free_port``
remembers a bounded number of the ports it gave."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestration import redis_server
from orchestration.live.network import LiveNetwork
from orchestration.redis_server import RECENT_PORTS, free_port
from topologies.generators import build_topology


@pytest.fixture
def forgetful(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh memory of handed-out ports, so earlier tests do not count."""
    monkeypatch.setattr(redis_server, "_recent", type(redis_server._recent)())
    monkeypatch.setattr(redis_server, "_recent_set", set())


def test_switches_never_share_a_port(forgetful: None, monkeypatch: pytest.MonkeyPatch,
                                     tmp_path: Path) -> None:
    # A kernel that answers each free port twice: the worst case.
    answers = iter(p for port in range(40000, 40100) for p in (port, port))
    monkeypatch.setattr(redis_server, "_kernel_free_port", lambda bind: next(answers))
    topo = build_topology("fat-tree", k=4)
    net = LiveNetwork(topo, "l3_forward", run_dir=tmp_path)  # built, never started
    records = [net._switch_record(name) for name in topo.switches]
    ports = [int(r.grpc_addr.rsplit(":", 1)[1]) for r in records] + [r.thrift_port
                                                                     for r in records]
    assert len(ports) == 2 * len(topo.switches) == len(set(ports))


def test_the_memory_of_given_ports_is_bounded(forgetful: None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    answers = iter([*range(1, RECENT_PORTS + 2), 1])
    monkeypatch.setattr(redis_server, "_kernel_free_port", lambda bind: next(answers))
    given = [free_port() for _ in range(RECENT_PORTS + 1)]
    assert given == list(range(1, RECENT_PORTS + 2))
    # Port 1 has been forgotten (RECENT_PORTS later), so it may be given again.
    assert free_port() == 1
    assert len(redis_server._recent) == len(redis_server._recent_set) == RECENT_PORTS
