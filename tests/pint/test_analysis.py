"""Expected packets to decode: the formulas against each other and against
Monte Carlo of the real encoders and decoder (seeded; means within four
standard errors of the sample)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sinks.pint.analysis import (
    harmonic,
    online_expected,
    reservoir_expected,
    step_probabilities,
    tuned_hybrid,
)
from sinks.pint.pathtrace import PathCoding
from sinks.pint.simulate import packets_to_decode


def test_reservoir_is_the_coupon_collector() -> None:
    assert harmonic(4) == pytest.approx(25 / 12)
    assert reservoir_expected(4) == pytest.approx(4 * 25 / 12)
    for k in (1, 7, 59):
        assert online_expected(k, 1.0, 0.0) == pytest.approx(k * harmonic(k))


@pytest.mark.parametrize(("k", "fragments"), [(1, 4), (5, 2), (36, 4), (59, 2)])
def test_fragments_by_poissonisation_equal_the_coupon_collector(k: int, fragments: int) -> None:
    assert online_expected(k, 1.0, 0.0, fragments) == pytest.approx(
        reservoir_expected(k, fragments), rel=1e-6)


def test_step_probabilities_of_pure_xor() -> None:
    probs = step_probabilities(3, 0.0, 0.5)
    assert list(probs) == pytest.approx([3 * 0.5 * 0.25, 2 * 0.5 * 0.5, 0.5])


def test_tuned_hybrid_beats_both_pure_schemes() -> None:
    for k in (10, 36, 59):
        tau, p = tuned_hybrid(k)
        assert 0.0 < tau < 1.0
        hybrid = online_expected(k, tau, p)
        assert hybrid < reservoir_expected(k)
        assert hybrid < min(online_expected(k, 0.0, q / k) for q in (0.5, 1.0, 2.0))


def mc(coding: PathCoding, k: int, flows: int, seed: int, max_pending: int | None):
    expected = online_expected(k, coding.tau, coding.p, coding.fragments)
    needed = packets_to_decode(coding, k, flows, int(expected * 4) + 64, seed, max_pending)
    assert np.all(needed > 0), "every flow decodes within four times the expectation"
    return expected, needed.mean(), needed.std(ddof=1) / math.sqrt(flows)


SCHEMES = {
    "reservoir": lambda k, bits: PathCoding.reservoir(bits),
    "xor": lambda k, bits: PathCoding.xor(bits, 1.0 / k),
    "hybrid": lambda k, bits: PathCoding(bits, 32, *tuned_hybrid(k)),
}


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
@pytest.mark.parametrize("k", [5, 36, 59])
def test_online_decoding_matches_the_exact_expectation(scheme: str, k: int) -> None:
    coding = SCHEMES[scheme](k, 32)
    expected, mean, stderr = mc(coding, k, 400, 100 + k, 0)
    assert abs(mean - expected) < 4 * stderr


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_online_decoding_of_fragments_matches(scheme: str) -> None:
    coding = SCHEMES[scheme](20, 8)
    assert coding.fragments == 4
    expected, mean, stderr = mc(coding, 20, 250, 7, 0)
    assert abs(mean - expected) < 4 * stderr


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
@pytest.mark.parametrize("k", [5, 36, 59])
def test_stored_decoding_needs_at_most_the_online_expectation(scheme: str, k: int) -> None:
    coding = SCHEMES[scheme](k, 16)
    expected, mean, stderr = mc(coding, k, 300, 200 + k, None)
    assert mean < expected + 4 * stderr
    if scheme == "reservoir":  # one writer per packet: nothing to wait for
        assert abs(mean - expected) < 4 * stderr


def test_hybrid_needs_fewer_packets_than_the_baseline_at_59_hops() -> None:
    baseline = packets_to_decode(PathCoding.reservoir(32), 59, 200, 1500, 3)
    hybrid = packets_to_decode(PathCoding(32, 32, *tuned_hybrid(59)), 59, 200, 1500, 3)
    assert hybrid.mean() < 0.6 * baseline.mean()
