"""What the INTCollector figures share: the paper's title and the checks
of their parameters (each an error message for a bad value, or None)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

PAPER = ("INTCollector: A High-performance Collector for In-band Network Telemetry "
         "(Van Tu, Hyun, Kim, Yoo, Hong)")

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
even_arity = each(lambda x: x in (4, 6, 8, 10, 12, 14, 16), "must be an even number in 4..16")


def within(low: int, high: int) -> Check:
    return each(lambda x: low <= x <= high, f"must be in {low}..{high}")


def one_of(names: Sequence[str]) -> Check:
    return each(lambda x: x in names, f"choose from {', '.join(names)}")
