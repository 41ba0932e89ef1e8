"""Parameter checks any experiment can use: each returns an error message
for a bad value (one, or each of a list), or None."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Check = Callable[[Any, dict[str, Any]], "str | None"]


def each(ok: Callable[[Any], bool], message: str) -> Check:
    """A check that every value (one, or each of a list) passes ``ok``."""
    def check(v: Any, p: dict[str, Any]) -> str | None:
        values = v if isinstance(v, list | tuple) else [v]
        if not values:
            return "give at least one value"
        return None if all(ok(x) for x in values) else message
    return check


positive = each(lambda x: x > 0, "must be positive")
non_negative = each(lambda x: x >= 0, "must not be negative")


def within(low: int, high: int) -> Check:
    return each(lambda x: low <= x <= high, f"must be in {low}..{high}")


def one_of(names: Sequence[str]) -> Check:
    return each(lambda x: x in names, f"choose from {', '.join(names)}")
