"""Schedules: exact constant-rate times, Poisson counts, seeded choices."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from common.seeds import derive_seed
from traffic.errors import TrafficError
from traffic.packets import Endpoint, FlowSpec
from traffic.schedules import (
    Schedule,
    SendEvent,
    constant_rate,
    flows_to_random_servers,
    merge,
    poisson,
    random_destinations,
)

HOSTS = [Endpoint(f"h{i}", f"02:00:00:00:00:{i:02x}", f"10.0.0.{i}") for i in range(1, 6)]


def test_constant_rate_exact_times() -> None:
    s = constant_rate(rate_pps=1000, duration_us=1_000_000, packet_size=100, start_us=500)
    assert len(s) == 1000
    events = list(s)
    assert events[0] == SendEvent(500, None, 0, 100)
    assert events[1] == SendEvent(1500, None, 1, 100)
    assert events[-1] == SendEvent(999_500, None, 999, 100)


@pytest.mark.parametrize(
    ("rate", "duration", "count"),
    [
        (1000, 1_000_000, 1000),
        (3, 1_000_000, 3),
        (0.1, 25_000_000, 3),
        (7, 1, 1),
        (1e6, 10, 10),
        (333_333, 1_000_000, 333_333),
        (1000, 0, 0),
    ],
)
def test_constant_rate_exact_count(rate: float, duration: int, count: int) -> None:
    assert len(constant_rate(rate_pps=rate, duration_us=duration, packet_size=64)) == count


def test_constant_rate_fractional_period_floors() -> None:
    # 3 pps: period 333333.33 us, times floor(i * 1e6 / 3).
    s = constant_rate(rate_pps=3, duration_us=1_000_000, packet_size=64)
    assert s.times_us.tolist() == [0, 333_333, 666_666]


def test_constant_bitrate() -> None:
    # 1 Gb/s of 1000-byte frames = 125000 pps: one frame per 8 us.
    s = constant_rate(bitrate_bps=1e9, packet_size=1000, duration_us=1_000_000)
    assert len(s) == 125_000
    assert s.times_us[:3].tolist() == [0, 8, 16]
    assert s.rate_bps(1_000_000) == 1e9
    assert s.total_bytes == 125_000_000


def test_constant_rate_needs_one_rate() -> None:
    with pytest.raises(TrafficError, match="exactly one"):
        constant_rate(duration_us=10, packet_size=64)
    with pytest.raises(TrafficError, match="exactly one"):
        constant_rate(duration_us=10, packet_size=64, rate_pps=1, bitrate_bps=8)
    with pytest.raises(TrafficError, match="must be positive"):
        constant_rate(duration_us=10, packet_size=64, rate_pps=0)


@pytest.mark.parametrize("seed", [1, 2, 3, 12345, derive_seed(7, "traffic", "h1")])
def test_poisson_count_in_99_percent_interval(seed: int) -> None:
    lam = 10_000  # 10000 pps for 1 s
    s = poisson(rate_pps=10_000, duration_us=1_000_000, seed=seed, packet_size=64, start_us=10)
    half = 2.5758 * math.sqrt(lam)  # normal approximation of Poisson(10000)
    assert lam - half <= len(s) <= lam + half
    t = s.times_us
    assert t[0] >= 10 and t[-1] < 1_000_010
    assert np.all(np.diff(t) >= 0)
    assert s.seqs.tolist() == list(range(len(s)))


def test_poisson_gaps_are_exponential() -> None:
    s = poisson(rate_pps=1000, duration_us=100_000_000, seed=5, packet_size=64)
    gaps = np.diff(s.times_us).astype(float)
    assert abs(gaps.mean() - 1000) < 15  # ~100k gaps: std error ~3 us
    assert abs(gaps.std() / gaps.mean() - 1) < 0.02  # exponential: CV = 1


def test_poisson_deterministic() -> None:
    a = poisson(rate_pps=5000, duration_us=200_000, seed=42, packet_size=64)
    b = poisson(rate_pps=5000, duration_us=200_000, seed=42, packet_size=64)
    c = poisson(rate_pps=5000, duration_us=200_000, seed=43, packet_size=64)
    assert list(a) == list(b)
    assert a.times_us.tolist() != c.times_us.tolist()


def test_poisson_many_chunks() -> None:
    # Zero duration and very long windows both go through the chunked draw.
    assert len(poisson(rate_pps=100, duration_us=0, seed=1, packet_size=64)) == 0
    s = poisson(rate_pps=1, duration_us=10_000_000_000, seed=1, packet_size=64)
    assert 10_000 - 258 <= len(s) <= 10_000 + 258


def test_random_destinations_uniform_and_seeded() -> None:
    dests = ["a", "b", "c", "d"]
    s = constant_rate(
        rate_pps=1000,
        duration_us=40_000_000,
        packet_size=64,
        dest=random_destinations(dests, seed=9),
    )
    counts = Counter(e.dest for e in s)
    assert set(counts) == set(dests)
    chi2 = sum((c - 10_000) ** 2 / 10_000 for c in counts.values())
    assert chi2 < 11.34  # chi-square, 3 degrees of freedom, 99%
    again = constant_rate(
        rate_pps=1000,
        duration_us=40_000_000,
        packet_size=64,
        dest=random_destinations(dests, seed=9),
    )
    assert [e.dest for e in s] == [e.dest for e in again]
    other = random_destinations(dests, seed=10).pick(100).tolist()
    assert other != s.dest_index[:100].tolist()


def test_merge_orders_by_time_then_argument() -> None:
    a = constant_rate(rate_pps=1000, duration_us=3000, packet_size=100, dest="a")
    b = constant_rate(rate_pps=2000, duration_us=2000, packet_size=200, dest="b", start_us=500)
    m = merge(a, b)
    assert [(e.time_us, e.dest, e.seq, e.size) for e in m] == [
        (0, "a", 0, 100),
        (500, "b", 0, 200),
        (1000, "a", 1, 100),
        (1000, "b", 1, 200),
        (1500, "b", 2, 200),
        (2000, "a", 2, 100),
        (2000, "b", 3, 200),
    ]
    assert len(merge()) == 0


def test_schedule_reiterates() -> None:
    # Speed is measured by `intbed bench prep` (benchmarks/prep.py), not here.
    s = poisson(
        rate_pps=100_000,
        duration_us=1_000_000,
        seed=3,
        packet_size=64,
        dest=random_destinations(["x", "y"], seed=4),
    )
    assert len(s) > 99_000
    assert sum(1 for _ in s) == len(s)
    assert list(s)[:50] == list(s)[:50]


def test_schedule_columns_must_agree() -> None:
    z = np.zeros(2, dtype=np.int64)
    with pytest.raises(TrafficError, match="differ in length"):
        Schedule(z, z, z, np.zeros(3, dtype=np.int64), (None,))


def test_flows_to_random_servers() -> None:
    src = HOSTS[0]
    s = flows_to_random_servers(
        src, HOSTS, rate_bps=8e6, packet_size=1000, duration_us=1_000_000, seed=11
    )
    assert len(s) == 1000  # 8 Mb/s of 1000-byte frames = 1000 pps
    assert s.times_us[:3].tolist() == [0, 1000, 2000]
    flows = {e.dest for e in s}
    assert all(isinstance(f, FlowSpec) for f in flows)
    assert {f.dst_ip for f in flows} == {h.ip for h in HOSTS[1:]}  # never itself
    for f in flows:
        assert (f.src_ip, f.src_mac, f.frame_size, f.proto) == (src.ip, src.mac, 1000, "udp")
        assert f.dst_mac == next(h.mac for h in HOSTS if h.ip == f.dst_ip)
    again = flows_to_random_servers(src, HOSTS, 8e6, 1000, 1_000_000, seed=11)
    assert list(s) == list(again)


def test_flows_to_random_servers_poisson_and_gateway() -> None:
    seq = np.random.SeedSequence(77)
    kw = dict(
        rate_bps=8e7,
        packet_size=500,
        duration_us=1_000_000,
        seed=seq,
        arrivals="poisson",
        gateway_mac="02:aa:00:00:00:01",
        proto="tcp",
    )
    s = flows_to_random_servers(HOSTS[2], HOSTS, **kw)  # type: ignore[arg-type]
    lam = 20_000
    assert abs(len(s) - lam) <= 2.5758 * math.sqrt(lam)
    assert {e.dest.dst_mac for e in s} == {"02:aa:00:00:00:01"}
    assert {e.dest.proto for e in s} == {"tcp"}
    # The seed sequence is not consumed: the same call gives the same events.
    again = flows_to_random_servers(HOSTS[2], HOSTS, **kw)  # type: ignore[arg-type]
    assert list(s) == list(again)


def test_flows_to_random_servers_errors() -> None:
    with pytest.raises(TrafficError, match="no server other than"):
        flows_to_random_servers(HOSTS[0], HOSTS[:1], 1e6, 100, 1000, seed=1)
    with pytest.raises(TrafficError, match="arrivals 'bursty'"):
        flows_to_random_servers(HOSTS[0], HOSTS, 1e6, 100, 1000, seed=1, arrivals="bursty")
