"""The statistics every experiment reports with: Student's t quantile, a
mean with its 95 % interval, and the rule that turns ours and the paper's
value into a verdict (one place, so the book and the summaries agree)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

# Two-sided 95 % quantiles of Student's t by degrees of freedom; between
# entries the lower df's (larger, so conservative) value; beyond: normal.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
        16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074,
        23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045,
        30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


def t975(df: float) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom
    (fractional, as Welch's are, rounds down: the conservative side)."""
    if df < 1:
        raise ValueError("a t quantile needs at least one degree of freedom")
    if df > max(T975):
        return 1.960
    return T975[max(d for d in T975 if d <= df)]


def mean_ci(values: Iterable[float | None]) -> tuple[float, float, int]:
    """Mean, 95 % confidence half width (t distribution) and count of the
    finite values; one value has no interval (NaN), none has no mean."""
    xs = np.array([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if xs.size == 0:
        return math.nan, math.nan, 0
    if xs.size == 1:
        return float(xs[0]), math.nan, 1
    half = t975(xs.size - 1) * float(xs.std(ddof=1)) / math.sqrt(xs.size)
    return float(xs.mean()), half, int(xs.size)


REL_TOLERANCE = 0.10
VERDICTS = ("reproduced", "direction only", "not reproduced", "not comparable")


def verdict(ours: float | None, paper: float | None, *, ci95: float | None = None,
            tolerance: float | None = None, direction: bool | None = None) -> str:
    """The book's rule, in order: no number on either side is ``not
    comparable``; ours within the larger of its 95 % half width and the
    tolerance (absolute; by default 10 % of the paper's value) is
    ``reproduced``; else ``direction only`` when the experiment found the
    trend or ordering the paper states (``direction``), else ``not
    reproduced``."""
    if ours is None or paper is None or not math.isfinite(ours) or not math.isfinite(paper):
        return "not comparable"
    allowed = REL_TOLERANCE * abs(paper) if tolerance is None else tolerance
    if ci95 is not None and math.isfinite(ci95):
        allowed = max(allowed, ci95)
    if abs(ours - paper) <= allowed:
        return "reproduced"
    return "direction only" if direction else "not reproduced"
