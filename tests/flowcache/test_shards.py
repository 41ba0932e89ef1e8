"""H_P split over worker processes: each flow lands in one shard, in
arrival order, and a worker's shard behaves exactly as the same shard fed
in this process."""

from __future__ import annotations

import numpy as np

from sinks.flowcache.cache import FlowCache
from sinks.flowcache.config import FlowCacheConfig
from sinks.flowcache.ingest import rows_to_batch
from sinks.flowcache.shards import (
    ShardWorkers,
    SharedBatch,
    shard_config,
    shard_of,
    split,
)
from sinks.flowcache.trace import TraceSpec, generate
from tests.flowcache.reference_model import row_and_shard

CONFIG = FlowCacheConfig(rows=64, buckets=4, max_hops=3, rings=2, ring_entries=4096,
                         thresholds={"threshold": {"queue_occupancy": 60}})


def test_split_keeps_each_flow_in_one_shard_in_arrival_order() -> None:
    trace = generate(TraceSpec(packets=5000, flows=300, hops=3, instructions=4, seed=3))
    batch = rows_to_batch(trace.rows, trace.ts, 3)
    pieces = split(batch, 3)
    assert sum(map(len, pieces)) == len(batch)
    for shard, piece in enumerate(pieces):
        assert (np.diff(piece.ts) > 0).all()
        for k0, k1 in zip(piece.key0[:50].tolist(), piece.key1[:50].tolist()):
            assert row_and_shard(k0, k1, 32, 3)[1] == shard
    assert (shard_of(pieces[1], 3) == 1).all()


def test_workers_match_the_same_shards_in_process() -> None:
    trace = generate(TraceSpec(packets=20_000, flows=500, hops=3, instructions=4, seed=4))
    batch = rows_to_batch(trace.rows, trace.ts, 3)
    pieces = split(batch, 2)
    expected = []
    for shard, piece in enumerate(pieces):
        cache = FlowCache(shard_config(CONFIG, shard, 2))
        events = 0
        for at in range(0, len(piece), 1000):
            cache.process(piece.take(slice(at, at + 1000)))
            events += len(cache.drain_events())
            cache.drain_evictions()
        expected.append((cache.counters, events))
    shared = [SharedBatch.create(p) for p in pieces]
    try:
        with ShardWorkers(CONFIG, 2) as pool:
            results = pool.run([s for s, _ in shared], piece=1000)
    finally:
        for _, shm in shared:
            shm.close()
            shm.unlink()
    assert [(r["counters"], r["events"]) for r in results] == expected
    assert sum(r["packets"] for r in results) == len(batch)
    assert all(c["evicted_collision"] > 0 and e > 0 for c, e in expected)
