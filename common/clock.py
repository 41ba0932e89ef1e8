"""The clock an app is written against: the simulator's virtual time on
the ``sim`` target, the wall clock (e.g. an asyncio loop) on live ones."""

from __future__ import annotations

import heapq
import itertools
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


class VirtualClock:
    """A ``Clock`` that moves only when told: ``advance_to`` runs the calls
    due by then, in time order, each seeing its own due time as ``now``
    (a capture's time in replay, a test's time)."""

    def __init__(self) -> None:
        self.t = 0.0
        self._heap: list[tuple[float, int, Callable[..., Any], tuple[Any, ...]]] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self.t

    def call_later(self, delay_s: float, fn: Callable[..., Any], *args: Any) -> float:
        due = self.t + max(delay_s, 0.0)
        heapq.heappush(self._heap, (due, next(self._seq), fn, args))
        return due

    def next_due(self) -> float:
        """When the next call falls due (infinity with none)."""
        return self._heap[0][0] if self._heap else float("inf")

    def advance_to(self, t: float) -> None:
        while self._heap and self._heap[0][0] <= t:
            due, _, fn, args = heapq.heappop(self._heap)
            self.t = max(self.t, due)
            fn(*args)
        self.t = max(self.t, t)
