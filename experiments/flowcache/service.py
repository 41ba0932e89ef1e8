"""intbed's own host reader, measured: how many events per second one
reader takes out of the event rings and writes to Redis (what a
``RingReaders`` event thread does each period: ``drain_events`` then
``RedisSink.write_events``, XADD in MULTI/EXEC chunks), on its own, in
wall-clock time. Fig. 4 states rates as multiples of it; Fig. 6 serves the
rings at it by default."""

from __future__ import annotations

import time

from experiments.framework import ExperimentError
from orchestration.redis_server import RedisServer, RedisServerError
from sinks.flowcache.cache import FlowCache, PacketBatch
from sinks.flowcache.config import FlowCacheConfig
from sinks.flowcache.redis_sink import RedisSink

STREAM = "flowcache:events"


def start_redis(name: str) -> RedisServer:
    """The private server, or one line saying why there is none."""
    try:
        return RedisServer().start()
    except RedisServerError as exc:
        raise ExperimentError(f"{name} needs a real Redis and cannot start one: "
                              f"{exc.message}") from None


def fill(config: FlowCacheConfig, batch: PacketBatch, events: int) -> FlowCache:
    """A cache whose event rings hold at least ``events`` (or all the
    batch makes), fed 4,096 packets at a time."""
    cache = FlowCache(config)
    at = 0
    while cache.counters["events"] < events and at < len(batch):
        cache.process(batch.take(slice(at, at + 4096)))
        at += 4096
    return cache


def reader_rates(server: RedisServer, config: FlowCacheConfig, batch: PacketBatch,
                 events: int, repeats: int) -> list[tuple[float, float]]:
    """Per repetition: (events/s drained and written to Redis, events/s
    drained alone), each over a fresh ring fill of ``events``."""
    client = server.client()
    sink = RedisSink(client)
    out = []
    for _ in range(repeats):
        cache = fill(config, batch, events)
        client.delete(STREAM)
        start = time.perf_counter()
        ev = cache.drain_events()
        sink.write_events(ev)
        whole = len(ev) / (time.perf_counter() - start)
        again = fill(config, batch, events)
        start = time.perf_counter()
        n = len(again.drain_events())
        out.append((whole, n / (time.perf_counter() - start)))
    client.delete(STREAM)
    return out
