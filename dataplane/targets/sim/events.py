"""Virtual time: a discrete-event loop with an asyncio-like clock.

Time is kept in integer nanoseconds so serialization delays of small packets
on fast links stay exact and runs are bit-for-bit reproducible; P4
timestamps and apps see microseconds and seconds derived from it.

Events run in (time, sequence number) order, kept by an event queue:
``EventQueue`` here, ``heapq`` over tuples, is the reference; the compiled
fast path's is ``heap4.EventHeap``, a four-ary heap over machine words
behind the same interface, which ``new_queue`` chooses. Both pop the same
events in the same order: the keys are the same and unique.

An event is a callable and its arguments (``push``), or a ``Target`` and
a kind and one argument (``push_to``): compiled, the loop calls the
target's ``fire`` as a C method, where a callable is a call through
Python's protocol with an argument tuple (the sim's switches, ports and
hosts are targets: a few hundred instructions fewer an event).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from typing import Any

import cython

NS_PER_US = 1_000
NS_PER_S = 1_000_000_000


class EventQueue:
    """The reference event queue. ``push`` an event (a callable, or a
    target when ``kind`` is at least 0); ``n`` events wait, the earliest
    at ``head_ns`` (while ``n`` is not 0); ``pop`` returns its callable or
    target and leaves its arguments and kind in ``popped_args`` and
    ``popped_kind``. Plain attributes, not methods: compiled, the loop
    reads them as struct members."""

    __slots__ = ("_heap", "_seq", "n", "head_ns", "popped_args", "popped_kind")

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Any, Any, int]] = []
        self._seq = itertools.count()
        self.n = 0
        self.head_ns = 0
        self.popped_args: Any = None
        self.popped_kind = -1

    def push(self, when_ns: int, fn: Any, args: Any, kind: int) -> None:
        heap = self._heap
        heapq.heappush(heap, (when_ns, next(self._seq), fn, args, kind))
        self.n += 1
        self.head_ns = heap[0][0]

    def pop(self) -> Any:
        heap = self._heap
        _, _, fn, self.popped_args, self.popped_kind = heapq.heappop(heap)
        self.n -= 1
        if heap:
            self.head_ns = heap[0][0]
        return fn


def new_queue() -> Any:
    """The one place the queue's algorithm is chosen: the four-ary heap
    where this module runs compiled (its group loads compiled only as a
    whole, ``fastpath.loader``), the reference in Python."""
    if cython.compiled:
        from dataplane.targets.sim import heap4
        return heap4.EventHeap()
    return EventQueue()


class Target:
    """What ``Simulator.push_to`` schedules: ``fire(kind, arg)`` runs the
    event, ``kind`` (at least 0) saying which of the target's events it
    is. Compiled, an extension type whose ``fire`` the loop calls in C; a
    Python subclass overrides it as any method."""

    __slots__ = ()

    def fire(self, kind: int, arg: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} has no events")


class Simulator:
    """The event loop of one simulated network.

    Events scheduled for the same instant run in the order they were
    scheduled (a sequence number breaks ties), which keeps runs
    deterministic. Hot paths call ``push(when_ns, fn, args)`` (no
    clamping: never earlier than ``now_ns``).
    """

    __slots__ = ("now_ns", "events_run", "_stopped", "_queue")

    def __init__(self) -> None:
        self.now_ns = 0
        self.events_run = 0
        self._stopped = False
        self._queue = new_queue()

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
        self.push(when_ns, fn, args)

    def after_ns(self, delay_ns: int, fn: Callable[..., Any], *args: Any) -> None:
        self.push(self.now_ns + delay_ns, fn, args)

    def push(self, when_ns: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        """Run ``fn(*args)`` at ``when_ns`` (not before ``now_ns``)."""
        self._queue.push(when_ns, fn, args, -1)

    def push_to(self, when_ns: int, target: Target, kind: int, arg: Any) -> None:
        """Run ``target.fire(kind, arg)`` at ``when_ns`` (not before
        ``now_ns``; ``kind`` at least 0), in turn with ``push``'s events."""
        self._queue.push(when_ns, target, arg, kind)

    def stop(self) -> None:
        """Stop ``run`` after the current event."""
        self._stopped = True

    def pending(self) -> int:
        return self._queue.n

    @cython.locals(limit=cython.longlong, when=cython.longlong, count=cython.longlong,
                   next_progress=cython.longlong, kind=cython.longlong)
    def run(self, until_ns: int | None = None,
            progress: Callable[[int], None] | None = None,
            progress_every_ns: int = NS_PER_S) -> int:
        """Run events up to and including ``until_ns`` (or until none are
        left). Returns the number of events run. ``progress`` is called with
        the virtual time about every ``progress_every_ns``."""
        limit = until_ns if until_ns is not None else 1 << 62
        next_progress = self.now_ns + progress_every_ns
        count = 0
        self._stopped = False
        queue = self._queue
        while queue.n and queue.head_ns <= limit and not self._stopped:
            when = queue.head_ns
            fn = queue.pop()
            self.now_ns = when
            kind = queue.popped_kind
            if kind < 0:
                fn(*queue.popped_args)
            else:
                cython.cast(Target, fn).fire(kind, queue.popped_args)
            count += 1
            if progress is not None and when >= next_progress:
                progress(when)
                next_progress = when + progress_every_ns
        queue.popped_args = None  # the last event's arguments are not kept alive
        if until_ns is not None and not self._stopped:
            self.now_ns = max(self.now_ns, until_ns)
        self.events_run += count
        return count
