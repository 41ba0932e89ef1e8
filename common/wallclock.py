"""The ``Clock`` of live targets: monotonic seconds and one timer thread.

``now()`` counts from the clock's creation (``time.monotonic``, so a wall
clock step does not move deadlines). ``call_later`` callbacks run in order
of due time (ties in call order) on the clock's own thread, one at a time,
each under ``lock`` when one is given: apps whose other inputs arrive on
other threads (the Redis expiry listener, the collector) share that lock
with them so their state is touched by one thread at a time. A callback
that raises is recorded in ``errors`` and the timer thread carries on.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from types import TracebackType
from typing import Any

log = logging.getLogger(__name__)


class WallClock:
    """``Clock`` on the monotonic clock; ``close()`` stops the timer thread
    and drops pending calls, and calls scheduled after it (say, by a
    callback that was running) are dropped too."""

    __slots__ = ("lock", "errors", "_origin", "_heap", "_seq", "_cv", "_thread", "_closed",
                 "_name")

    def __init__(self, *, lock: AbstractContextManager[Any] | None = None,
                 name: str = "intbed-wallclock") -> None:
        self.lock = lock
        self.errors: list[BaseException] = []
        self._origin = time.monotonic()
        self._heap: list[tuple[float, int, Callable[..., Any], tuple[Any, ...]]] = []
        self._seq = itertools.count()
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._name = name

    def now(self) -> float:
        return time.monotonic() - self._origin

    def call_later(self, delay_s: float, fn: Callable[..., Any], *args: Any) -> float:
        """Schedule ``fn(*args)``; returns its due time (clock seconds)."""
        due = self.now() + max(delay_s, 0.0)
        with self._cv:
            if self._closed:
                return due
            heapq.heappush(self._heap, (due, next(self._seq), fn, args))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._cv.notify()
        return due

    def pending(self) -> int:
        with self._cv:
            return len(self._heap)

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._heap.clear()
            self._cv.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def __enter__(self) -> WallClock:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _run(self) -> None:
        guard = self.lock if self.lock is not None else nullcontext()
        while True:
            with self._cv:
                while True:
                    if self._closed:
                        return
                    if self._heap:
                        wait = self._heap[0][0] - self.now()
                        if wait <= 0:
                            _, _, fn, args = heapq.heappop(self._heap)
                            break
                        self._cv.wait(wait)
                    else:
                        self._cv.wait()
            try:
                with guard:
                    fn(*args)
            except Exception as exc:  # a faulty callback must not stop the clock
                self.errors.append(exc)
                log.exception("WallClock callback %r failed", fn)
