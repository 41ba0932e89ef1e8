"""Value approximation: codes within a (1+eps) factor, unbiased rounding,
saturation; the per-packet path maximum within the same factor."""

from __future__ import annotations

import math

import numpy as np
import pytest

from common.errors import InvalidValueError
from sinks.pint.hashing import GlobalHashes
from sinks.pint.simulate import flow_packet_ids
from sinks.pint.values import ValueCodec, max_aggregate


@pytest.mark.parametrize(("bits", "lo", "hi"), [(8, 1.0, 1e6), (4, 0.5, 100.0), (16, 1e-3, 1e3)])
def test_levels_are_geometric_and_decoded_values_within_the_factor(bits, lo, hi) -> None:
    codec = ValueCodec(bits, lo, hi)
    steps = 2**bits - 2
    assert (1 + codec.eps) ** steps == pytest.approx(hi / lo, rel=1e-9)
    reference = [0.0] + [lo * (1 + codec.eps) ** i for i in range(steps + 1)]
    assert np.allclose(codec.levels(), reference, rtol=1e-9)
    rng = np.random.default_rng(bits)
    values = np.exp(rng.uniform(math.log(lo), math.log(hi), size=20000))
    coins = rng.integers(0, 2**32, size=values.shape[0], dtype=np.uint64).astype(np.uint32)
    codes, saturated = codec.encode(values, coins)
    assert saturated == 0
    decoded = codec.decode(codes)
    factor = 1 + codec.eps
    assert np.all(decoded <= values * factor * (1 + 1e-12))
    assert np.all(decoded >= values / factor * (1 - 1e-12))
    below = np.searchsorted(np.array(reference), values, side="right") - 1
    assert np.all((codes == below) | (codes == below + 1))


def test_randomized_rounding_is_unbiased() -> None:
    codec = ValueCodec(8, 1.0, 1e6)
    rng = np.random.default_rng(9)
    for value in (0.3, 1.7, 123.4, 98765.0):
        coins = rng.integers(0, 2**32, size=40000, dtype=np.uint64).astype(np.uint32)
        decoded = codec.decode(codec.encode(np.full(40000, value), coins)[0])
        spread = decoded.std() / math.sqrt(decoded.shape[0])
        assert abs(decoded.mean() - value) < 5 * spread + 1e-9 * value


def test_saturation_is_counted() -> None:
    codec = ValueCodec(8, 1.0, 100.0)
    codes, saturated = codec.encode(np.array([50.0, 500.0, 1e9]), np.zeros(3, dtype=np.uint32))
    assert saturated == 2
    assert list(codes[1:]) == [255, 255]


def test_bad_codec_settings_are_refused() -> None:
    with pytest.raises(InvalidValueError, match="0 < lo < hi"):
        ValueCodec(8, 5.0, 1.0)
    with pytest.raises(InvalidValueError, match="2 to 32 bits"):
        ValueCodec(1, 1.0, 2.0)


def test_path_maximum_within_the_factor() -> None:
    codec = ValueCodec(8, 1.0, 1e5)
    rng = np.random.default_rng(4)
    pids = flow_packet_ids(rng, 10, 2000).ravel()
    k = 12
    values = np.exp(rng.uniform(0.0, math.log(1e5), size=(k, pids.shape[0])))
    hops = rng.integers(1, k + 1, size=pids.shape[0])
    digests, saturated = max_aggregate(pids, values, codec, GlobalHashes(4, "util"), hops)
    assert saturated == 0
    live = np.arange(k)[:, None] < hops[None, :]
    truth = np.where(live, values, 0.0).max(axis=0)
    decoded = codec.decode(digests)
    factor = 1 + codec.eps
    assert np.all(decoded <= truth * factor * (1 + 1e-12))
    assert np.all(decoded >= truth / factor * (1 - 1e-12))
