"""Parameter checks of the INT-label experiments, answered by the run's own
configuration so that each rule is written once (``RunConfig``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from common.errors import IntbedError
from orchestration.systems.intlabel.config import RunConfig

Check = Callable[[Any, dict[str, Any]], "str | None"]


def run_check(field: str, scale: float = 1.0, **setup: Any) -> Check:
    """A parameter check that asks ``RunConfig`` (the one place INT-label's
    run parameters are validated): ``field`` set to the value, or to each
    value of a list, times ``scale``, with ``setup`` besides."""
    def check(v: Any, p: dict[str, Any]) -> str | None:
        values = v if isinstance(v, list | tuple) else [v]
        if not values:
            return "give at least one value"
        for x in values:
            try:
                RunConfig(**{field: x * scale if scale != 1.0 else x}, **setup)
            except IntbedError as exc:
                return exc.message
        return None
    return check


def positive_list(what: str) -> Check:
    """For sweeps that are no run parameter (ratios)."""
    def check(v: Any, p: dict[str, Any]) -> str | None:
        return None if v and all(x > 0 for x in v) else f"every {what} must be positive"
    return check
