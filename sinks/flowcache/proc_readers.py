"""Event-ring readers as processes: the rings in shared memory, so reader
processes drain them to Redis while the feeding process writes, each on
its own interpreter (threads share one lock, so more of them add no
encoding capacity).

Single producer, single consumer per ring, no lock. The producer's head
stays private to the feeding process while the compiled loop runs, and
``publish()`` copies it to the shared head after each ``process`` call,
when every entry below it is written; a reader copies the entries below
the published head, then moves the shared tail, which the loop reads to
know the free space (a stale tail only makes a ring look fuller). Ring r
belongs to reader r % readers, as in ``redis_sink.RingReaders``.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from dataclasses import dataclass, replace
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np
import redis

from sinks.flowcache.cache import Events, FlowCache, drain_rings
from sinks.flowcache.redis_sink import RedisSink

_CTX = mp.get_context("fork")  # a reader needs no fresh interpreter, only its own


@dataclass(frozen=True)
class RingLayout:
    """The shared block: published head, tail, per-reader written counts,
    then the entry arrays of ``FlowCache.ering`` (after head and tail)."""

    name: str
    rings: int
    entries: int
    readers: int
    dtypes: tuple[str, ...]

    def views(self, shm: SharedMemory) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                list[np.ndarray]]:
        offset, out = 0, []
        for shape, dtype in [((self.rings,), "int64"), ((self.rings,), "int64"),
                             ((self.readers,), "int64"),
                             *[((self.rings, self.entries), d) for d in self.dtypes]]:
            out.append(np.ndarray(shape, dtype, shm.buf, offset))
            offset += int(np.prod(shape)) * np.dtype(dtype).itemsize
        return out[0], out[1], out[2], out[3:]

    def nbytes(self) -> int:
        return 8 * (2 * self.rings + self.readers) + sum(
            self.rings * self.entries * np.dtype(d).itemsize for d in self.dtypes)


class SharedEventRings:
    """Moves ``cache``'s event rings into shared memory (they must be empty)."""

    def __init__(self, cache: FlowCache, readers: int) -> None:
        head, tail, *arrays = cache.ering
        if int((head - tail).sum()):
            raise ValueError("the event rings must be empty to be shared")
        self.layout = RingLayout("", len(head), arrays[0].shape[1], readers,
                                 tuple(a.dtype.str for a in arrays))
        self.shm = SharedMemory(create=True, size=self.layout.nbytes())
        self.layout = replace(self.layout, name=self.shm.name)
        self.published, self.tail, self.written, shared = self.layout.views(self.shm)
        for view in (self.published, self.tail, self.written, *shared):
            view[...] = 0
        self.head = head  # private: the compiled loop moves it
        self.tail[:] = tail
        cache.ering = (head, self.tail, *shared)
        self.cache = cache

    def publish(self) -> None:
        """After a ``process`` call: the entries below head are there."""
        self.published[:] = self.head

    def backlog(self) -> int:
        return int((self.head - self.tail).sum())

    def close(self) -> None:
        """Free the block; the cache and the counts keep private copies."""
        self.published, self.tail, self.written = (a.copy() for a in
                                                   (self.published, self.tail, self.written))
        head, _, *shared = self.cache.ering
        self.cache.ering = (head, self.tail, *(a.copy() for a in shared))
        del shared
        self.shm.close()
        self.shm.unlink()


def _reader(layout: RingLayout, slot: int, url: str, period_s: float, stop: Any,
            ready: Any) -> None:
    shm = SharedMemory(name=layout.name)
    published, tail, written, arrays = layout.views(shm)
    mine = [r for r in range(layout.rings) if r % layout.readers == slot]
    sink = RedisSink(redis.Redis.from_url(url))
    sink.client.ping()
    ready.set()
    try:
        while True:
            stopping = stop.is_set()
            ring, out = drain_rings(published, tail, tuple(arrays), mine)
            if len(ring):
                sink.write_events(Events(ring, *out))
                written[slot] += len(ring)
            elif stopping:
                return
            else:
                time.sleep(period_s)
    finally:
        del published, tail, written, arrays
        shm.close()


class ReaderProcesses:
    """``readers`` processes draining ``rings`` into the Redis at ``url``
    every ``period_s`` while they find nothing; ``stop()`` lets each drain
    what is published, then joins them."""

    def __init__(self, rings: SharedEventRings, url: str, period_s: float = 0.005) -> None:
        self.rings = rings
        self._stop = _CTX.Event()
        self._ready = [_CTX.Event() for _ in range(rings.layout.readers)]
        self._procs = [_CTX.Process(target=_reader, args=(rings.layout, k, url, period_s,
                                                          self._stop, self._ready[k]),
                                    name=f"flowcache-reader-{k}", daemon=True)
                       for k in range(rings.layout.readers)]

    def start(self, timeout_s: float = 30.0) -> ReaderProcesses:
        for p in self._procs:
            p.start()
        for p, ready in zip(self._procs, self._ready):
            if not ready.wait(timeout_s):
                self.stop()
                raise RuntimeError(f"{p.name} did not start (exit code {p.exitcode})")
        return self

    @property
    def written(self) -> int:
        return int(self.rings.written.sum())

    def stop(self) -> None:
        self.rings.publish()
        self._stop.set()
        for p in self._procs:
            p.join()
        bad = [p for p in self._procs if p.exitcode]
        if bad:
            raise RuntimeError(f"{bad[0].name} failed (exit code {bad[0].exitcode})")
