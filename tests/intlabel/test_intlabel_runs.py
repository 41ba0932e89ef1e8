"""End-to-end INT-label runs on the sim target (2,000 packets each: the
paper's workload, a fifth of its 10,000 packets, to keep the suite quick)."""

from __future__ import annotations

import json
import math
import pickle
from functools import cache

import pytest

from controller.intlabel import IntLabelConfigError
from orchestration.network import RunEnv
from orchestration.systems.intlabel.config import RunConfig, RunConfigError
from orchestration.systems.intlabel.metrics import RunMetrics
from orchestration.systems.intlabel.run import run_intlabel

PACKETS = 2000


@cache
def run(seed: int = 0, **kw: object) -> RunMetrics:
    return run_intlabel(RunConfig(packets=PACKETS, **kw), RunEnv(seed=seed))  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["A", "B"])
def test_coverage_at_t50_ti100(mode: str) -> None:
    """Paper section 6.2: 99.72% at T = 50 ms, T_i = 100 ms."""
    m = run(mode=mode, T_ms=50, Ti_ms=100, seed=0)
    assert m.mean_coverage >= 0.99
    assert m.mean_coverage_arrived >= m.mean_coverage
    assert m.malformed_reports == 0
    # 1.6 s of traffic: windows 2..15 are measured after the 0.2 s warm-up.
    assert len(m.windows) >= 16
    assert all(0.0 <= c <= 1.0 and 0 <= u <= a for _, c, a, u in m.windows)


def test_base_b_labels_fewer_packets_than_base_a_at_t100() -> None:
    a = run(mode="A", T_ms=100, seed=0)
    b = run(mode="B", T_ms=100, seed=0)
    assert b.labeled_packets < a.labeled_packets
    # Base B concentrates labels: more labels per report, at least as many in all.
    assert b.labeling_times / b.reports > a.labeling_times / a.reports
    assert b.labeling_times >= a.labeling_times * 0.9


def test_counts_are_consistent_without_loss() -> None:
    m = run(mode="A", T_ms=50, Ti_ms=100, seed=0)
    assert (m.packets_sent, m.packets_delivered, m.loss_rate) == (PACKETS, PACKETS, 0.0)
    assert m.labeled_lost == 0 and m.labeled_packets == m.reports
    assert sum(m.items_per_report) == m.reports and m.items_per_report[0] == 0
    assert m.labeling_times == m.items_reported == sum(
        i * n for i, n in enumerate(m.items_per_report))
    assert sum(m.labels_per_packet) == m.packets_delivered
    assert m.labels_per_packet[1:] == m.items_per_report[1:]
    # Paths of the fabric have at most 5 switches; every port labels its first packet.
    assert m.items_per_report[6:] == [0, 0, 0]
    assert 20 <= m.active_ports <= 25
    expected_int = m.int_bytes / m.traffic_bytes
    assert m.bandwidth_occupation == expected_int and 0 < expected_int < 0.05
    assert m.stale_items == 0 and m.pro_changes == []


def test_same_seed_same_metrics_other_seed_differs() -> None:
    first = run(mode="A", T_ms=50, Ti_ms=100, seed=0)
    again = run_intlabel(RunConfig(packets=PACKETS, mode="A", T_ms=50, Ti_ms=100))
    other = run(mode="A", T_ms=50, Ti_ms=100, seed=1)
    assert again.comparable() == first.comparable()
    assert other.comparable() != first.comparable()


def test_metrics_are_plain_data() -> None:
    m = run(mode="A", T_ms=50, Ti_ms=100, seed=0)
    back = json.loads(m.to_json())
    assert back["reports"] == m.reports and back["config"]["T_ms"] == 50
    assert pickle.loads(pickle.dumps(m)).comparable() == m.comparable()
    cfg = RunConfig.from_dict(back["config"])
    assert cfg == RunConfig(packets=PACKETS, mode="A", T_ms=50, Ti_ms=100)
    assert back["env"] == {"seed": 0, "target": "sim", "switch_model": "bmv2"}
    assert run(mode="A", T_ms=50, Ti_ms=100, seed=1).env["seed"] == 1


def test_loss_is_measured_with_lost_labels() -> None:
    m = run(mode="A", T_ms=50, seed=0, link_loss=0.2)
    assert m.link_losses > 0 and 0 < m.loss_rate < 1
    assert m.packets_delivered == round(PACKETS * (1 - m.loss_rate))
    assert m.labeled_lost > 0 and m.labeled_packets == m.reports + m.labeled_lost
    assert m.labeling_times > m.items_reported


def test_queue_limits_drop_packets() -> None:
    m = run(mode="A", T_ms=50, seed=0, queue_rate_pps=300, queue_depth=8)
    assert m.queue_drops > 0 and m.loss_rate > 0.1
    assert not math.isnan(m.mean_coverage)


@pytest.mark.parametrize("kw, exc, text", [
    ({"packets": None}, RunConfigError, "give exactly one of packets and duration_s"),
    ({"senders": ("h1", "h99")}, RunConfigError, "sender 'h99' is not a host"),
    ({"link_loss": 1.5}, RunConfigError, "link_loss must be a probability"),
    ({"lossy_links": (("tor1", "tor2"),), "link_loss": 0.1}, RunConfigError,
     "no link between tor1 and tor2"),
    ({"T_ms": 50, "T1_ms": 80}, IntLabelConfigError, "rest time T1 (80 ms)"),
])
def test_bad_run_configs(kw: dict, exc: type, text: str) -> None:
    with pytest.raises(exc) as info:
        run_intlabel(RunConfig(**kw))
    assert text in str(info.value)


def test_duration_instead_of_packets() -> None:
    cfg = RunConfig(packets=None, duration_s=0.5)
    assert cfg.per_sender_packets() == [313, 313]  # ceil(0.5 s x 625 packets/s)
    assert cfg.traffic_duration_s() == 0.5


def test_update_gaps_are_per_port_and_inside_the_measured_time() -> None:
    from orchestration.systems.intlabel.metrics import update_gaps_ms

    a, b = ("s1", 1), ("s1", 2)
    arrivals = [(0.10, a, True), (0.30, b, True), (0.16, a, True), (0.20, a, False),
                (0.25, a, True), (0.37, b, True), (0.90, a, True)]
    # a: 0.10 -> 0.16 -> 0.25 (the rejected 0.20 is no update); b: 0.30 -> 0.37;
    # 0.90 is after the end.
    assert sorted(update_gaps_ms(arrivals, 0.05, 0.5)) == pytest.approx([60.0, 70.0, 90.0])
    assert update_gaps_ms(arrivals, 0.2, 0.5) == pytest.approx([70.0])
    # Labels of a port are at least T apart; two reports' transit times differ
    # by at most a path's worth (5 switches) of the model's largest delay and
    # service time.
    from dataplane.targets.sim.timing import load_model

    model = load_model(None)
    slack_ms = 5 * (model.delay_quantiles_ns[-1] + model.service_quantiles_ns[-1]) / 1e6
    m = run(mode="A", T_ms=50, Ti_ms=100, seed=0)
    assert m.update_gaps_ms and min(m.update_gaps_ms) >= 50.0 - slack_ms
