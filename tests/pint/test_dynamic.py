"""Dynamic per-flow aggregation: KLL quantiles within the sketch's rank
error on exact streams, and per-hop latency quantiles end to end within
the sketch's, the sampling's (DKW) and the approximation's bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from common.errors import InvalidValueError
from sinks.pint.dynamic import LatencySketches, encode_samples, sampled_hops
from sinks.pint.hashing import GlobalHashes
from sinks.pint.simulate import flow_packet_ids
from sinks.pint.values import ValueCodec

QUANTILES = (0.1, 0.5, 0.9, 0.99)


def rank(sorted_values: np.ndarray, x: float) -> float:
    return np.searchsorted(sorted_values, x, side="right") / sorted_values.shape[0]


@pytest.mark.parametrize("k", [64, 200])
def test_kll_quantiles_within_the_rank_error(k: int) -> None:
    rng = np.random.default_rng(k)
    sketches = LatencySketches(k)
    streams = {
        1: rng.lognormal(3.0, 1.0, size=200000),
        2: rng.exponential(50.0, size=100000),
        3: np.arange(50000, dtype=np.float64),
    }
    for flow, values in streams.items():
        sketches.update(np.full(values.shape[0], flow), np.full(values.shape[0], 1), values)
    eps = sketches.rank_error
    assert 0 < eps < 0.1
    for flow, values in streams.items():
        exact = np.sort(values.astype(np.float32))
        assert sketches.count(flow, 1) == values.shape[0]
        for q in QUANTILES:
            estimate = sketches.quantile(flow, 1, q)
            assert abs(rank(exact, estimate) - q) <= eps


def test_sampled_hop_is_the_writer() -> None:
    """Each hop writes a value only it can produce; the sink's recomputed
    writer decodes to exactly that hop's value."""
    codec = ValueCodec(8, 1.0, 2.0**20)
    hashes = GlobalHashes(1, "lat")
    pids = flow_packet_ids(np.random.default_rng(2), 4, 5000).ravel()
    k = 20
    levels = codec.levels()
    own = np.array([levels[10 * h] for h in range(1, k + 1)])
    hops = np.random.default_rng(3).integers(1, k + 1, size=pids.shape[0])
    digests = encode_samples(pids, np.repeat(own[:, None], pids.shape[0], axis=1), codec,
                             hashes, hops)
    writer = sampled_hops(hashes, pids, hops)
    assert np.all(writer <= hops)
    assert np.array_equal(codec.decode(digests), own[writer - 1])


def test_per_hop_latency_quantiles_end_to_end() -> None:
    rng = np.random.default_rng(8)
    codec = ValueCodec(8, 0.1, 1e5)
    hashes = GlobalHashes(8, "lat")
    flows, packets, k = 3, 30000, 5
    pids = flow_packet_ids(rng, flows, packets).ravel()
    flow_of = np.repeat(np.arange(flows), packets)
    scale = np.arange(1, k + 1, dtype=np.float64)[:, None] * 10.0
    latency = rng.lognormal(0.0, 0.7, size=(k, pids.shape[0])) * scale
    digests = encode_samples(pids, latency, codec, hashes)
    hop = sampled_hops(hashes, pids, np.full(pids.shape[0], k))
    sketches = LatencySketches(200)
    sketches.update(flow_of, hop, codec.decode(digests))
    factor = 1 + codec.eps
    for f in range(flows):
        for h in range(1, k + 1):
            m = sketches.count(f, h)
            assert m == int(np.sum((flow_of == f) & (hop == h)))
            exact = np.sort(latency[h - 1, flow_of == f])
            slack = sketches.rank_error + math.sqrt(math.log(2 / 1e-4) / (2 * m))
            for q in QUANTILES[:3]:
                estimate = sketches.quantile(f, h, q)
                assert rank(exact, estimate * factor) >= q - slack
                assert rank(exact, estimate / factor) <= q + slack


def test_unknown_stream_and_bad_size() -> None:
    with pytest.raises(InvalidValueError, match="no samples of flow 9 at hop 2"):
        LatencySketches().quantile(9, 2, 0.5)
    with pytest.raises(InvalidValueError, match="between 8 and 65535"):
        LatencySketches(2)
