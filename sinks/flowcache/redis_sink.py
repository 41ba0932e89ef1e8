"""The host side of section III-D: reader threads empty the rings and
flush what they read to Redis, flows as hashes, events as a stream,
histograms as hashes.

Keys (``prefix`` default "flowcache"):

- ``{prefix}:flow:{src}:{dst}:{proto}:{sport}:{dport}`` (addresses dotted):
  a hash per flow, accumulated over every time the flow left H_P:
  ``count`` and, per hop h and column, ``h{h}:{column}:sum`` and
  ``...:samples`` (incremented, so the average over the flow's whole life
  is sum / samples), ``...:latest`` and ``last_ts``, ``hops``, ``reason``,
  ``exported`` (set from the last export).
- ``{prefix}:events``: a stream, one entry per event: flow, switch, hop,
  value, bitmap, ts.
- ``{prefix}:hist:{switch key}``: a hash per switch, ``{metric}:{lower
  bound}`` -> count, a snapshot of the cache's counters.

Threads: one reads the general rings and the histograms, ``event_threads``
read the event rings (ring r belongs to thread r % event_threads), as the
paper dedicates one host thread to R_G and up to eight to R_I. The numba
call that feeds the cache holds the interpreter lock, and a ring's tail
moves only after its entries are copied, so readers need no lock.
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Callable

import numpy as np
import redis

from sinks.flowcache.cache import Events, Evictions, FlowCache, split_key
from sinks.flowcache.layout import EVICT_REASONS, MEASURED, METRICS

PIPELINE_CHUNK = 2000


def flow_name(key0: int, key1: int) -> str:
    src, dst, proto, sport, dport = split_key(key0, key1)
    return (f"{ipaddress.IPv4Address(src)}:{ipaddress.IPv4Address(dst)}:{proto}:{sport}:"
            f"{dport}")


class RedisSink:
    """Writes drained rings and histograms to one Redis database."""

    def __init__(self, client: redis.Redis, prefix: str = "flowcache") -> None:
        self.client = client
        self.prefix = prefix

    def flow_key(self, key0: int, key1: int) -> str:
        return f"{self.prefix}:flow:{flow_name(key0, key1)}"

    def write_evictions(self, ev: Evictions, start_at: int = 0) -> None:
        """Chunks of PIPELINE_CHUNK flows, each applied whole (MULTI/EXEC:
        the counts are increments, so a chunk half applied and sent again
        would count twice); a failure raises ``PartialWrite`` with where to
        start again."""
        for start in range(start_at, len(ev), PIPELINE_CHUNK):
            pipe = self.client.pipeline(transaction=True)
            for i in range(start, min(len(ev), start + PIPELINE_CHUNK)):
                key = self.flow_key(int(ev.key0[i]), int(ev.key1[i]))
                hops = int(ev.hops[i])
                pipe.hincrby(key, "count", int(ev.count[i]))
                latest: dict[str, int | str] = {
                    "last_ts": int(ev.last_ts[i]), "hops": hops, "exported": int(ev.time[i]),
                    "reason": EVICT_REASONS[int(ev.reason[i])]}
                seen = np.argwhere(ev.samples[i] > 0)
                for h, m in seen.tolist():
                    cell = f"h{h}:{METRICS[m]}"
                    pipe.hincrby(key, cell + ":sum", int(ev.sums[i, h, m]))
                    pipe.hincrby(key, cell + ":samples", int(ev.samples[i, h, m]))
                    latest[cell + ":latest"] = int(ev.latest[i, h, m])
                pipe.hset(key, mapping=latest)  # type: ignore[arg-type]
            _execute(pipe, start)

    def write_events(self, ev: Events, start_at: int = 0) -> None:
        """As ``write_evictions``: whole chunks, ``PartialWrite`` on failure."""
        stream = f"{self.prefix}:events"
        for start in range(start_at, len(ev), PIPELINE_CHUNK):
            pipe = self.client.pipeline(transaction=True)
            for i in range(start, min(len(ev), start + PIPELINE_CHUNK)):
                pipe.xadd(stream, {"flow": flow_name(int(ev.key0[i]), int(ev.key1[i])),
                                   "switch": int(ev.switch[i]), "hop": int(ev.hop[i]),
                                   "value": int(ev.value[i]), "bitmap": int(ev.bitmap[i]),
                                   "ts": int(ev.ts[i])})
            _execute(pipe, start)

    def write_histograms(self, cache: FlowCache) -> None:
        edges = cache.config.edges
        pipe = self.client.pipeline(transaction=False)
        for switch, counts in cache.histograms().items():
            fields = {f"{metric}:{lower}": int(counts[m, b])
                      for m, metric in enumerate(MEASURED)
                      for b, lower in enumerate(edges[metric])}
            pipe.hset(f"{self.prefix}:hist:{switch}", mapping=fields)  # type: ignore[arg-type]
        pipe.execute()


class PartialWrite(Exception):
    """Redis went away during a write; entries before ``done`` were applied."""

    def __init__(self, done: int, cause: BaseException) -> None:
        super().__init__(f"Redis write stopped after {done} entries: {cause}")
        self.done = done


def _execute(pipe: redis.client.Pipeline, start: int) -> None:
    try:
        pipe.execute()
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        raise PartialWrite(start, exc) from exc


class RingReaders:
    """Threads that drain ``cache``'s rings into ``sink`` every ``period_s``
    until ``stop()``, which drains once more. While Redis is unreachable a
    thread keeps the batch it could not write (from the first chunk not
    applied) and drains nothing more, so entries wait in the rings, lost
    only past their capacity (counted as overflow); it writes them once
    Redis answers again. Other errors stop the thread and are raised by
    ``stop()``; so is an outage still on at ``stop()``."""

    def __init__(self, cache: FlowCache, sink: RedisSink, event_threads: int = 1,
                 period_s: float = 0.01) -> None:
        self.cache, self.sink, self.period_s = cache, sink, period_s
        self._stop = threading.Event()
        self._errors: list[BaseException] = []
        rings = cache.config.rings
        self._threads = [threading.Thread(target=self._loop, args=(self._general,),
                                          name="flowcache-general", daemon=True)]
        for t in range(event_threads):
            mine = [r for r in range(rings) if r % event_threads == t]
            self._threads.append(threading.Thread(
                target=self._loop,
                args=(lambda pending, mine=mine: self._events(mine, pending),),
                name=f"flowcache-events-{t}", daemon=True))

    def start(self) -> RingReaders:
        for thread in self._threads:
            thread.start()
        return self

    def _general(self, pending: list[tuple[object, int]]) -> bool:
        return self._write(pending, self.cache.drain_evictions, self.sink.write_evictions)

    def _events(self, rings: list[int], pending: list[tuple[object, int]]) -> bool:
        return self._write(pending, lambda: self.cache.drain_events(rings),
                           self.sink.write_events)

    @staticmethod
    def _write(pending: list[tuple[object, int]], drain: Callable[[], object],
               write: Callable[[object, int], None]) -> bool:
        """The batch left over from an outage, else a fresh drain: whether
        there was anything to write."""
        if not pending:
            batch = drain()
            if not len(batch):  # type: ignore[arg-type]
                return False
            pending.append((batch, 0))
        batch, start = pending[0]
        try:
            write(batch, start)
        except PartialWrite as exc:
            pending[0] = (batch, exc.done)
            raise
        pending.clear()
        return True

    def _loop(self, step: Callable[[list[tuple[object, int]]], bool]) -> None:
        pending: list[tuple[object, int]] = []
        outage: PartialWrite | None = None
        try:
            while not self._stop.wait(self.period_s):
                try:
                    step(pending)
                    outage = None
                except PartialWrite as exc:
                    outage = exc  # keep the batch; try again next period
            # The last drain: the batch kept from an outage, then whatever
            # the rings hold, until a drain finds them empty (unless Redis
            # is still away).
            while step(pending):
                pass
        except PartialWrite as exc:
            self._errors.append(outage or exc)
        except BaseException as exc:  # noqa: BLE001 - handed to stop()
            self._errors.append(exc)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()
        self.sink.write_histograms(self.cache)
        if self._errors:
            raise self._errors[0]

    def __enter__(self) -> RingReaders:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
