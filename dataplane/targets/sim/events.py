"""Virtual time: a discrete-event loop with an asyncio-like clock.

Time is kept in integer nanoseconds so serialization delays of small packets
on fast links stay exact and runs are bit-for-bit reproducible; P4
timestamps and apps see microseconds and seconds derived from it.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from typing import Any

NS_PER_US = 1_000
NS_PER_S = 1_000_000_000


class Simulator:
    """The event loop of one simulated network.

    Events scheduled for the same instant run in the order they were
    scheduled (a sequence number breaks ties), which keeps runs
    deterministic. ``heap`` and ``seq`` are public for the hot paths that
    push an event themselves: ``(when_ns, next(seq), fn, args)``, never
    earlier than ``now_ns``.
    """

    __slots__ = ("now_ns", "heap", "seq", "events_run", "_stopped")

    def __init__(self) -> None:
        self.now_ns = 0
        self.heap: list[tuple[int, int, Callable[..., Any], tuple[Any, ...]]] = []
        self.seq = itertools.count()
        self.events_run = 0
        self._stopped = False

    # -- clock interface for apps (seconds, like asyncio's loop) ------------

    def now(self) -> float:
        """Current virtual time in seconds."""
        return self.now_ns / NS_PER_S

    def now_us(self) -> int:
        return self.now_ns // NS_PER_US

    def call_later(self, delay_s: float, fn: Callable[..., Any], *args: Any) -> None:
        self.at_ns(self.now_ns + round(delay_s * NS_PER_S), fn, *args)

    def call_at(self, when_s: float, fn: Callable[..., Any], *args: Any) -> None:
        self.at_ns(round(when_s * NS_PER_S), fn, *args)

    # -- engine interface (nanoseconds) -------------------------------------

    def at_ns(self, when_ns: int, fn: Callable[..., Any], *args: Any) -> None:
        if when_ns < self.now_ns:
            when_ns = self.now_ns
        heapq.heappush(self.heap, (when_ns, next(self.seq), fn, args))

    def after_ns(self, delay_ns: int, fn: Callable[..., Any], *args: Any) -> None:
        heapq.heappush(self.heap, (self.now_ns + delay_ns, next(self.seq), fn, args))

    def stop(self) -> None:
        """Stop ``run`` after the current event."""
        self._stopped = True

    def pending(self) -> int:
        return len(self.heap)

    def run(self, until_ns: int | None = None,
            progress: Callable[[int], None] | None = None,
            progress_every_ns: int = NS_PER_S) -> int:
        """Run events up to and including ``until_ns`` (or until none are
        left). Returns the number of events run. ``progress`` is called with
        the virtual time about every ``progress_every_ns``."""
        heap = self.heap
        pop = heapq.heappop
        limit = until_ns if until_ns is not None else 1 << 62
        next_progress = self.now_ns + progress_every_ns
        count = 0
        self._stopped = False
        while heap and heap[0][0] <= limit and not self._stopped:
            when, _, fn, args = pop(heap)
            self.now_ns = when
            fn(*args)
            count += 1
            if progress is not None and when >= next_progress:
                progress(when)
                next_progress = when + progress_every_ns
        if until_ns is not None and not self._stopped:
            self.now_ns = max(self.now_ns, until_ns)
        self.events_run += count
        return count
