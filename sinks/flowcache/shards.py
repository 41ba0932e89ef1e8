"""H_P split over worker processes, as the SmartNIC splits it over its
packet engines: a flow belongs to shard ``flow_hash % shards`` and to row
``(flow_hash // shards) % rows`` of that shard's own table, so the shards
share nothing and need no locks. A dispatcher cuts each batch by shard
(order kept within a shard, which is all a flow's updates depend on) and
hands the pieces over in shared memory.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np

from sinks.flowcache.cache import VALUES, FlowCache, PacketBatch
from sinks.flowcache.config import FlowCacheConfig
from sinks.flowcache.kernel import flow_hashes

_FIELDS = (("key0", np.uint64, ()), ("key1", np.uint64, ()), ("ts", np.int64, ()),
           ("hops", np.uint8, ()), ("present", np.uint8, ()), ("values", np.uint32, (VALUES,)))


def shard_of(batch: PacketBatch, shards: int) -> np.ndarray:
    """Each packet's shard, by the hash that also picks its row."""
    return (flow_hashes(batch.key0, batch.key1) % np.uint64(shards)).astype(np.int64)


def split(batch: PacketBatch, shards: int) -> list[PacketBatch]:
    """The batch cut by shard, arrival order kept within each piece."""
    owner = shard_of(batch, shards)
    order = np.argsort(owner, kind="stable")
    bounds = np.searchsorted(owner[order], np.arange(1, shards))
    return [batch.take(part) for part in np.split(order, bounds)]


def shard_config(config: FlowCacheConfig, shard: int, shards: int) -> FlowCacheConfig:
    """One shard's table: 1/shards of the rows (at least one)."""
    return replace(config, rows=max(1, config.rows // shards), shard=shard, shards=shards)


@dataclass(frozen=True)
class SharedBatch:
    """A PacketBatch's arrays in one shared-memory block, by name."""

    name: str
    size: int
    max_hops: int

    @staticmethod
    def create(batch: PacketBatch) -> tuple[SharedBatch, SharedMemory]:
        n, hops = len(batch), batch.values.shape[1]
        shm = SharedMemory(create=True, size=max(1, _nbytes(n, hops)))
        ref = SharedBatch(shm.name, n, hops)
        for (name, _, _), view in zip(_FIELDS, ref.views(shm)):
            view[...] = getattr(batch, name)
        return ref, shm

    def views(self, shm: SharedMemory) -> list[np.ndarray]:
        out, offset = [], 0
        for _, dtype, tail in _FIELDS:
            shape = (self.size, self.max_hops, *tail) if tail else (self.size,)
            count = int(np.prod(shape))
            out.append(np.ndarray(shape, dtype, shm.buf, offset))
            offset += count * np.dtype(dtype).itemsize
        return out

    def attach(self) -> tuple[PacketBatch, SharedMemory]:
        shm = SharedMemory(name=self.name)
        return PacketBatch(*self.views(shm)), shm


def _nbytes(n: int, hops: int) -> int:
    return sum(n * (hops * tail[0] if tail else 1) * np.dtype(dtype).itemsize
               for _, dtype, tail in _FIELDS)


def _worker(conn: Connection, config: FlowCacheConfig) -> None:
    """A shard's loop: feed shared batches in pieces, drain the rings after
    each piece as the host's readers would, answer with counters and times."""
    cache = FlowCache(config)
    while True:
        message = conn.recv()
        if message is None:
            return
        shared, piece, ts_shift = message
        batch, shm = shared.attach()
        try:
            drained = {"events": 0, "evictions": 0}
            cpu, start = time.process_time(), time.perf_counter()
            for at in range(0, len(batch), piece):
                part = batch.take(slice(at, at + piece))
                if ts_shift:
                    part = replace(part, ts=part.ts + ts_shift)
                cache.process(part)
                drained["events"] += len(cache.drain_events())
                drained["evictions"] += len(cache.drain_evictions())
            end = time.perf_counter()
            conn.send({"start": start, "end": end, "cpu_s": time.process_time() - cpu,
                       "packets": len(batch), "counters": cache.counters, **drained})
        finally:
            del batch
            shm.close()


class ShardWorkers:
    """``workers`` processes, one shard of H_P each. ``run`` feeds each its
    piece of a batch (already cut by ``split``) and returns when all are done."""

    def __init__(self, config: FlowCacheConfig, workers: int) -> None:
        ctx = mp.get_context("spawn")
        self.workers = workers
        self._conns: list[Connection] = []
        self._procs: list[Any] = []
        for shard in range(workers):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(child, shard_config(config, shard, workers)),
                               daemon=True, name=f"flowcache-shard-{shard}")
            proc.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(proc)

    def run(self, pieces: list[SharedBatch], piece: int = 8192,
            ts_shift: int = 0) -> list[dict[str, Any]]:
        for conn, shared in zip(self._conns, pieces):
            conn.send((shared, piece, ts_shift))
        return [conn.recv() for conn in self._conns]

    def close(self) -> None:
        for conn in self._conns:
            try:
                conn.send(None)
            except OSError:
                pass
        for proc in self._procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
                proc.join()
        self._conns, self._procs = [], []

    def __enter__(self) -> ShardWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
