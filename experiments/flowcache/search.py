"""The fewest of something that passes a measured test: doubling from one
until a count passes, then bisection between the last count that failed
and the first that passed. Needs a test that, like readers draining
rings, does not fail at a count once a lower one passes; costs about
2 log2(answer) trials instead of one per count."""

from __future__ import annotations

from collections.abc import Callable


def fewest(ok: Callable[[int], bool], top: int) -> tuple[int | None, dict[int, bool]]:
    """The smallest count in 1..``top`` for which ``ok`` holds (None if
    ``top`` fails too), and every count tried with its outcome."""
    tried: dict[int, bool] = {}

    def test(k: int) -> bool:
        if k not in tried:
            tried[k] = ok(k)
        return tried[k]

    low, k = 0, 1
    while not test(k):
        if k >= top:
            return None, tried
        low, k = k, min(2 * k, top)
    high = k
    while high - low > 1:
        mid = (low + high) // 2
        if test(mid):
            high = mid
        else:
            low = mid
    return high, tried
