"""The sim switches' timing model: profiles load or fail clearly, service
times follow the profile's distribution, a switch under Poisson load waits
as queueing theory says (Pollaczek-Khinchine), and the pipeline delay is a
constant on every hop."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dataplane.targets.sim.timing import (
    IDEAL_MODEL,
    ServiceDraws,
    SwitchModel,
    SwitchModelError,
    available_models,
    load_model,
)
from orchestration.apps.ping import all_pairs, expected_rtt_us
from orchestration.sim import build
from topologies.generators import line
from traffic.packets import FlowSpec
from traffic.schedules import poisson

QUANTILES_US = (5.0, 10.0, 20.0, 40.0, 100.0)
MODEL = SwitchModel("test", tuple(q * 1000 for q in QUANTILES_US), pipeline_delay_ns=30_000)


def moments(quantiles: tuple[float, ...]) -> tuple[float, float]:
    """E[S] and E[S^2] of the piecewise-linear inverse CDF through the
    quantiles (evenly spaced probabilities), integrated segment by segment."""
    dp = 1.0 / (len(quantiles) - 1)
    m1 = sum(dp * (a + b) / 2 for a, b in zip(quantiles, quantiles[1:]))
    m2 = sum(dp * (a * a + a * b + b * b) / 3 for a, b in zip(quantiles, quantiles[1:]))
    return m1, m2


def test_the_draws_follow_the_profiles_distribution() -> None:
    n = 40_000
    draws = ServiceDraws(np.asarray(MODEL.service_quantiles_ns), seed=3)
    values = np.sort(np.concatenate([draws.batch(4096) for _ in range(n // 4096 + 1)])[:n])
    probs = np.linspace(0, 1, len(QUANTILES_US))
    # Kolmogorov-Smirnov at the 0.1 % level: sup |F_n - F| < 1.95 / sqrt(n).
    cdf = np.interp(values, np.asarray(MODEL.service_quantiles_ns), probs)
    ecdf = np.arange(1, n + 1) / n
    assert np.max(np.abs(ecdf - cdf)) < 1.95 / math.sqrt(n)
    mean, _ = moments(MODEL.service_quantiles_ns)
    assert MODEL.mean_service_ns == pytest.approx(mean)
    assert MODEL.capacity_pps == pytest.approx(1e9 / mean)


def test_the_same_seed_draws_the_same_times() -> None:
    a = ServiceDraws(np.asarray(MODEL.service_quantiles_ns), seed=9)
    b = ServiceDraws(np.asarray(MODEL.service_quantiles_ns), seed=9)
    c = ServiceDraws(np.asarray(MODEL.service_quantiles_ns), seed=10)
    first = a.batch(100)
    assert first == b.batch(100) and first != c.batch(100)
    assert all(type(v) is int and v >= 1 for v in first)


def sojourns_us(model: SwitchModel, rate_pps: float, packets: int, *,
                processing_rate_pps: float | None = None) -> np.ndarray:
    """Time each packet spends in s1 (arrival at its port to leaving on the
    egress link) for Poisson arrivals from h1 to h2."""
    topo = line(1, hosts_per_switch=2)
    topo.switches["s1"].processing_rate_pps = processing_rate_pps
    net = build(topo, seed=1, switch_model=model)
    link = next(ln for ln in topo.links if "h1" in (ln.a, ln.b))
    size = 100
    inbound_ns = size * 8 * 1_000_000_000 // round(link.bandwidth_mbps * 1e6) \
        + round(link.delay_us * 1000)
    out: list[int] = []
    net.tap_transmitted(lambda t_ns, sw, port, frame: out.append(t_ns))
    h2 = topo.hosts["h2"]
    duration_us = round(packets / rate_pps * 1e6)
    sched = poisson(rate_pps=rate_pps, duration_us=duration_us, seed=5, packet_size=size,
                    dest=_flow(topo.hosts["h1"], h2))
    net.add_sender("h1", sched)
    net.add_receiver("h2")
    net.start_traffic()
    net.run_traffic(duration_us / 1e6, 1.0)
    sent_ns = np.asarray(sched.times_us, dtype=np.int64) * 1000 + inbound_ns
    tapped = np.asarray(out, dtype=np.int64)
    assert len(tapped) == len(sent_ns), "no packet may be lost at this load"
    return (tapped - sent_ns) / 1000.0


def _flow(src: Any, dst: Any) -> FlowSpec:
    return FlowSpec(src.mac, dst.mac, src.ip, dst.ip, "udp", 4000, 5000, 100 - 42)


@pytest.mark.parametrize("rho", [0.3, 0.6])
def test_a_switch_under_poisson_load_waits_as_mg1_says(rho: float) -> None:
    """Mean sojourn E[S] + lambda E[S^2] / (2 (1 - rho)) (Pollaczek-Khinchine),
    plus the pipeline delay, which rides on the egress link's delay."""
    m1, m2 = moments(tuple(q / 1e9 for q in MODEL.service_quantiles_ns))
    lam = rho / m1
    stay = sojourns_us(MODEL, lam, 30_000)
    expected_us = (m1 + lam * m2 / (2 * (1 - rho))) * 1e6
    # The tap sees a packet when its egress starts, before the link's delay:
    # the pipeline delay is not in it.
    assert stay.mean() == pytest.approx(expected_us, rel=0.08)
    assert stay.min() >= QUANTILES_US[0] - 1e-6


def test_a_processing_rate_rescales_the_profile_to_its_mean() -> None:
    """GPINT's capacities: the profile's shape, the topology's rate. At
    rho = 0.5 the wait is the M/G/1 value for the rescaled times, more than
    the constant service (M/D/1) that the ideal model gives."""
    rate = 20_000.0
    scale = (1 / rate) / moments(tuple(q / 1e9 for q in MODEL.service_quantiles_ns))[0]
    m1, m2 = moments(tuple(q / 1e9 * scale for q in MODEL.service_quantiles_ns))
    assert m1 == pytest.approx(1 / rate)
    lam = 0.5 * rate
    stay = sojourns_us(MODEL, lam, 30_000, processing_rate_pps=rate)
    assert stay.mean() == pytest.approx((m1 + lam * m2 / (2 * 0.5)) * 1e6, rel=0.08)
    ideal = sojourns_us(IDEAL_MODEL, lam, 30_000, processing_rate_pps=rate)
    s = 1 / rate
    assert ideal.mean() == pytest.approx((s + lam * s * s / (2 * 0.5)) * 1e6, rel=0.08)
    assert stay.mean() > 1.2 * ideal.mean()


def test_the_pipeline_delay_is_added_on_every_hop() -> None:
    """One ping at a time: each of the 2 x 3 switch traversals of a round
    trip on a three-switch line takes the pipeline delay plus a service time
    between the profile's smallest and largest."""
    topo = line(3)
    net = build(topo, seed=2, switch_model=MODEL)
    hops = 2 * 3
    for r in all_pairs(net):
        if {r.src, r.dst} != {"h1", "h3"}:
            continue
        base = expected_rtt_us(topo, r.src, r.dst, 14 + 20 + 8 + 56)
        extra = r.rtt_us - base
        assert hops * (30 + QUANTILES_US[0]) - 1 <= extra <= hops * (30 + QUANTILES_US[-1]) + 1


def test_the_ideal_model_takes_no_time() -> None:
    topo = line(2)
    net = build(topo, seed=2, switch_model="ideal")
    for r in all_pairs(net):
        assert r.rtt_us == pytest.approx(expected_rtt_us(topo, r.src, r.dst, 14 + 20 + 8 + 56),
                                         abs=0.001)


def test_shipped_profiles_load_and_say_how_they_were_measured() -> None:
    for name in available_models():
        model = load_model(name)
        assert model.name
        if name != "ideal":
            assert model.capacity_pps is not None and model.source.get("commands"), name


@pytest.mark.parametrize("text, message", [
    ("name: x\nservice_quantiles_us: [3, 2]\n", "must not decrease"),
    ("name: x\nservice_quantiles_us: [1]\n", "two or more positive"),
    ("name: x\nservice_quantiles_us: [1, 2]\npipeline_delay_us: -1\n", "non-negative"),
    ("name: x\nspeed: 3\n", "unknown field(s) speed"),
    ("name: x\nservice_quantiles_us: [1, 2\n", ":3: not valid YAML"),
    ("- 1\n", "a switch profile is a mapping"),
])
def test_bad_profiles_are_refused_with_the_file_and_the_fix(
        tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(SwitchModelError) as info:
        load_model(path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_an_unknown_model_names_the_known_ones() -> None:
    with pytest.raises(SwitchModelError, match="unknown switch model 'tofino' .*ideal"):
        load_model("tofino")
