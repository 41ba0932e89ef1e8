"""The clock an app is written against: the simulator's virtual time on
the ``sim`` target, the wall clock (e.g. an asyncio loop) on live ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Current time in seconds."""
        ...

    def call_later(self, delay_s: float, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` after ``delay_s`` seconds. The result is not
        relied on: callers cannot cancel, they ignore stale calls."""
        ...
