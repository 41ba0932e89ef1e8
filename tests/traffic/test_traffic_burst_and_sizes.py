"""On-off sources and packet-size mixes: the mean rate and the share of
silent time follow from the periods' means, bursts make counts
over-dispersed where Poisson's are not, and sizes follow their weights."""

from __future__ import annotations

import math

import numpy as np
import pytest

from traffic.errors import TrafficError
from traffic.packets import Endpoint
from traffic.schedules import flows_to_random_servers, on_off, poisson, with_sizes

DURATION_US = 20_000_000


def counts(times_us: np.ndarray, bin_us: int) -> np.ndarray:
    return np.bincount(times_us // bin_us, minlength=DURATION_US // bin_us)[
        : DURATION_US // bin_us]


def test_an_on_off_source_sends_its_mean_rate_in_bursts() -> None:
    rate, on_us, off_us = 2_000.0, 20_000.0, 60_000.0
    s = on_off(rate_pps=rate, mean_on_us=on_us, mean_off_us=off_us, duration_us=DURATION_US,
               seed=4, packet_size=100)
    mean = rate * on_us / (on_us + off_us)  # 500 packets/s
    got = len(s) / (DURATION_US / 1e6)
    # 250 on-off cycles of 80 ms: the count's spread is that of the on time,
    # sd of the total on time = sqrt(cycles * (on^2 + off^2)) (exponential periods).
    cycles = DURATION_US / (on_us + off_us)
    sd = rate * math.sqrt(cycles * (on_us**2 + off_us**2)) / 1e6 / (DURATION_US / 1e6)
    assert abs(got - mean) < 4 * sd
    assert np.all(np.diff(s.times_us) >= 0)
    # Silent 1 ms bins: about the off share (3/4), where Poisson at the same
    # mean rate leaves e^-0.5 = 61 % of them silent.
    silent = float((counts(s.times_us, 1000) == 0).mean())
    assert 0.70 < silent < 0.85
    # Over-dispersed counts in 10 ms bins (variance well above the mean).
    c = counts(s.times_us, 10_000)
    assert c.var() > 3 * c.mean()
    p = poisson(rate_pps=mean, duration_us=DURATION_US, seed=4, packet_size=100)
    cp = counts(p.times_us, 10_000)
    assert 0.8 < cp.var() / cp.mean() < 1.2


def test_the_same_seed_gives_the_same_bursts() -> None:
    kw = {"rate_pps": 1000.0, "mean_on_us": 5000.0, "mean_off_us": 5000.0,
          "duration_us": 1_000_000, "packet_size": 64}
    a, b, c = on_off(seed=1, **kw), on_off(seed=1, **kw), on_off(seed=2, **kw)
    assert np.array_equal(a.times_us, b.times_us)
    assert not np.array_equal(a.times_us, c.times_us)


def test_sizes_follow_the_mix() -> None:
    base = poisson(rate_pps=10_000.0, duration_us=5_000_000, seed=3, packet_size=100)
    mix = ((64, 7.0), (576, 4.0), (1500, 1.0))
    s = with_sizes(base, mix, seed=8)
    n = len(s)
    for size, weight in mix:
        p = weight / 12
        share = float((s.sizes == size).mean())
        assert abs(share - p) < 4 * math.sqrt(p * (1 - p) / n)
    assert np.array_equal(s.times_us, base.times_us)
    with pytest.raises(TrafficError, match="a size mix"):
        with_sizes(base, ((32, 1.0),), seed=0)


def test_random_servers_meet_the_bit_rate_with_a_mix_and_in_bursts() -> None:
    src = Endpoint("h1", "00:00:00:00:00:01", "10.0.0.1")
    servers = [Endpoint(f"h{i}", f"00:00:00:00:00:0{i}", f"10.0.0.{i}") for i in range(2, 6)]
    mix = ((64, 7.0), (576, 4.0), (1500, 1.0))
    for arrivals in ("poisson", "onoff"):
        s = flows_to_random_servers(src, servers, 5e6, 1000, DURATION_US, seed=6,
                                    arrivals=arrivals, size_mix=mix,
                                    on_off_us=(10_000.0, 30_000.0))
        bps = s.total_bytes * 8 / (DURATION_US / 1e6)
        assert bps == pytest.approx(5e6, rel=0.1), arrivals
        assert set(np.unique(s.sizes)) == {64, 576, 1500}
    with pytest.raises(TrafficError, match="'onoff'"):
        flows_to_random_servers(src, servers, 5e6, 1000, 1000, seed=0, arrivals="bursty")
