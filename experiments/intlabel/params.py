"""Parameter checks of the INT-label experiments, answered by the run's own
configuration so that each rule is written once (``RunConfig``)."""

from __future__ import annotations

from typing import Any

from experiments.framework import Check, config_check
from orchestration.systems.intlabel.config import RunConfig


def run_check(field: str, scale: float = 1.0, **setup: Any) -> Check:
    """``RunConfig`` checks ``field`` (times ``scale``, with ``setup``)."""
    return config_check(RunConfig, field, scale, **setup)


def positive_list(what: str) -> Check:
    """For sweeps that are no run parameter (ratios)."""
    def check(v: Any, p: dict[str, Any]) -> str | None:
        return None if v and all(x > 0 for x in v) else f"every {what} must be positive"
    return check
