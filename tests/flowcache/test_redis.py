"""Reader threads flush the rings to a private redis-server while packets
are fed; flows, events and histograms read back from Redis equal the
trace's ground truth and the cache's own output."""

from __future__ import annotations

import time

import numpy as np
import pytest

from orchestration.redis_server import RedisServer, redis_available
from sinks.flowcache.cache import FlowCache
from sinks.flowcache.config import FlowCacheConfig
from sinks.flowcache.ingest import rows_to_batch
from sinks.flowcache.layout import MEASURED, METRICS
from sinks.flowcache.redis_sink import PartialWrite, RedisSink, RingReaders, flow_name
from sinks.flowcache.trace import TraceSpec, generate

FLOWS = 600
CONFIG = FlowCacheConfig(rows=96, buckets=4, max_hops=3, rings=4, ring_entries=1 << 14,
                         aging_period_ns=1_000_000, aging_interval_ns=500_000,
                         thresholds={"threshold": {"queue_occupancy": 100},
                                     "change": {"hop_latency": 150}})


def test_rings_flushed_to_redis_read_back(server: RedisServer) -> None:
    trace = generate(TraceSpec(packets=20_000, flows=FLOWS, hops=3, instructions=4, seed=8,
                               rate_pps=1_000_000))
    batch = rows_to_batch(trace.rows, trace.ts, 3)
    cache, twin = FlowCache(CONFIG), FlowCache(CONFIG)
    twin_events = []
    sink = RedisSink(server.client())
    with RingReaders(cache, sink, event_threads=2, period_s=0.002):
        for at in range(0, len(batch), 1000):
            piece = batch.take(slice(at, at + 1000))
            cache.process(piece)
            twin.process(piece)
            ev = twin.drain_events()
            twin_events += list(zip(ev.key0.tolist(), ev.key1.tolist(), ev.switch.tolist(),
                                    ev.hop.tolist(), ev.value.tolist(), ev.bitmap.tolist(),
                                    ev.ts.tolist()))
            twin.drain_evictions()
    cache.flush(int(trace.ts[-1]) + 1, sink.write_evictions)
    client = server.client()
    c = cache.counters
    assert c["evicted_collision"] > 1000 and c["evicted_aged"] > 500 and c["events"] > 5000
    assert c["event_ring_overflow"] == 0 and c["general_ring_overflow"] == 0

    # flows: every packet counted once, per-hop sums equal to the trace's
    counts = np.bincount(trace.flow, minlength=FLOWS)
    sums = np.zeros((FLOWS, 3, 4), np.int64)
    np.add.at(sums, trace.flow, trace.values.astype(np.int64))
    keys = sorted(client.scan_iter("flowcache:flow:*"))
    assert len(keys) == FLOWS
    pipe = client.pipeline(transaction=False)
    for f in range(FLOWS):
        src, dst, proto, sport, dport = trace.tuples[f].tolist()
        pipe.hgetall("flowcache:flow:" + flow_name((src << 32) | dst,
                                                    (proto << 32) | (sport << 16) | dport))
    for f, stored in enumerate(pipe.execute()):
        assert int(stored["count"]) == counts[f]
        for h in range(3):
            for m, column in enumerate(METRICS):
                assert int(stored[f"h{h}:{column}:sum"]) == sums[f, h, m]
                assert int(stored[f"h{h}:{column}:samples"]) == counts[f]

    # events: the stream holds what an identical cache emitted, each once
    entries = client.xrange("flowcache:events")
    assert len(entries) == c["events"] == len(twin_events)
    got = sorted((e["flow"], int(e["switch"]), int(e["hop"]), int(e["value"]),
                  int(e["bitmap"]), int(e["ts"])) for _, e in entries)
    want = sorted((flow_name(k0, k1), s, h, v, b, t) for k0, k1, s, h, v, b, t in twin_events)
    assert got == want

    # histograms: one hash per switch, the cache's counters
    hist = cache.histograms()
    assert len(list(client.scan_iter("flowcache:hist:*"))) == len(hist)
    for switch, table in hist.items():
        stored = client.hgetall(f"flowcache:hist:{switch}")
        for m, metric in enumerate(MEASURED):
            for b, lower in enumerate(CONFIG.edges[metric]):
                assert int(stored[f"{metric}:{lower}"]) == table[m, b]


def test_an_outage_loses_nothing_below_the_rings_capacity() -> None:
    """Redis stops while packets keep coming: the readers keep what they
    could not write, drain no more, and once a server answers on the same
    port again every event and every evicted flow of the outage lands, once."""
    if redis_available() is None:
        pytest.skip("redis-server is not installed: install the Debian package redis-server")
    trace = generate(TraceSpec(packets=6_000, flows=200, hops=3, instructions=4, seed=9,
                               rate_pps=1_000_000))
    batch = rows_to_batch(trace.rows, trace.ts, 3)
    cache, twin = FlowCache(CONFIG), FlowCache(CONFIG)
    first = RedisServer().start()
    port = first.port
    client = first.client()
    readers = RingReaders(cache, RedisSink(client), event_threads=2, period_s=0.005).start()
    try:
        first.stop()  # gone before any packet: everything below waits in the rings
        for at in range(0, len(batch), 500):
            piece = batch.take(slice(at, at + 500))
            cache.process(piece)
            twin.process(piece)
            time.sleep(0.01)  # the readers try, and fail, meanwhile
        second = RedisServer(port=port).start()
    finally:
        readers.stop()  # drains the rest into the restarted server
    try:
        events = twin.drain_events()
        c = cache.counters
        assert c["event_ring_overflow"] == 0 and c["general_ring_overflow"] == 0
        assert len(events) > 1000
        assert len(client.xrange("flowcache:events")) == len(events)
        evicted = twin.drain_evictions()
        counted = sum(int(v) for k in client.scan_iter("flowcache:flow:*")
                      for v in [client.hget(k, "count")])
        assert counted == int(evicted.count.sum())
    finally:
        second.stop()


class _QueuedCache:
    """A cache whose event rings hand out the batches queued here, one per
    drain (ring numbers ignored), and no evictions."""

    def __init__(self) -> None:
        self.config = FlowCacheConfig(rings=1)
        self.batches: list[list[int]] = []

    def drain_events(self, rings: list[int]) -> list[int]:
        return self.batches.pop(0) if self.batches else []

    def drain_evictions(self) -> list[int]:
        return []


class _BackAtStop:
    """A sink whose Redis is away until ``stop()`` begins, then answers."""

    def __init__(self) -> None:
        self.readers: RingReaders | None = None
        self.failed = 0
        self.written: list[int] = []

    def write_events(self, batch: list[int], start: int = 0) -> None:
        assert self.readers is not None
        if not self.readers._stop.is_set():
            self.failed += 1
            raise PartialWrite(start, ConnectionError("refused"))
        self.written += batch[start:]

    def write_evictions(self, batch: list[int], start: int = 0) -> None:
        self.written += batch[start:]

    def write_histograms(self, cache: object) -> None:
        pass


def test_the_last_drain_takes_what_came_during_the_outage() -> None:
    """Redis answers again only as the readers stop: the batch kept from the
    outage is written, and so is everything the rings took meanwhile (the
    final drain goes on until the rings are empty, not one batch)."""
    cache, sink = _QueuedCache(), _BackAtStop()
    readers = RingReaders(cache, sink, event_threads=1, period_s=0.002)  # type: ignore[arg-type]
    sink.readers = readers
    cache.batches.append([1, 2, 3])
    readers.start()
    deadline = time.monotonic() + 5
    while sink.failed < 2 and time.monotonic() < deadline:
        time.sleep(0.002)
    assert sink.failed >= 2  # the first batch is held, retried and refused
    cache.batches += [[4, 5], [6]]
    readers.stop()
    assert sink.written == [1, 2, 3, 4, 5, 6]
