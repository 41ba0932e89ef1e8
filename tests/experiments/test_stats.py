"""The book's verdict rule and the interval behind it."""

from __future__ import annotations

import math

import numpy as np

from experiments.stats import mean_ci, t975, verdict


def test_a_value_within_ten_percent_of_the_paper_is_reproduced() -> None:
    assert verdict(10.9, 10.0) == "reproduced"
    assert verdict(11.1, 10.0) == "not reproduced"


def test_a_wide_interval_covers_the_paper_and_a_tight_one_does_not() -> None:
    assert verdict(14.0, 10.0, ci95=4.5) == "reproduced"
    assert verdict(14.0, 10.0, ci95=0.5) == "not reproduced"


def test_the_paper_trend_held_makes_direction_only() -> None:
    assert verdict(43.0, 15.0, ci95=2.0, direction=True) == "direction only"
    assert verdict(43.0, 15.0, ci95=2.0, direction=False) == "not reproduced"


def test_a_paper_value_of_zero_needs_an_explicit_tolerance() -> None:
    assert verdict(0.01, 0.0) == "not reproduced"
    assert verdict(0.01, 0.0, tolerance=0.05) == "reproduced"


def test_a_missing_side_is_not_comparable() -> None:
    assert verdict(None, 1.0) == "not comparable"
    assert verdict(1.0, None) == "not comparable"
    assert verdict(math.nan, 1.0) == "not comparable"


def test_the_interval_covers_the_true_mean_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(7)
    trials, covered = 2000, 0
    for _ in range(trials):
        mean, half, n = mean_ci(rng.normal(3.0, 2.0, size=8))
        covered += abs(mean - 3.0) <= half
    # binomial(2000, 0.95): sd 0.49 %; five sd either side
    assert 0.925 <= covered / trials <= 0.975


def test_fractional_degrees_of_freedom_round_to_the_wider_interval() -> None:
    assert t975(2.94) == t975(2) > t975(3)
    assert t975(1000) == 1.96
