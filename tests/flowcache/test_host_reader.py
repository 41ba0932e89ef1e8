"""The host reader in time (experiments.flowcache.hostreader), the search
for the fewest readers (experiments.flowcache.search) and reader processes
over shared rings (sinks.flowcache.proc_readers), against a fluid queue's
bounds, a linear scan, and a twin cache's events."""

from __future__ import annotations

import math
import time
from collections import Counter

import numpy as np
import pytest

from experiments.flowcache.hostreader import fluid_loss, serve, share
from experiments.flowcache.search import fewest
from orchestration.redis_server import RedisServer
from sinks.flowcache.cache import FlowCache, PacketBatch
from sinks.flowcache.config import FlowCacheConfig
from sinks.flowcache.ingest import rows_to_batch
from sinks.flowcache.proc_readers import ReaderProcesses, SharedEventRings
from sinks.flowcache.redis_sink import flow_name
from sinks.flowcache.trace import TraceSpec, generate

E = 100_000.0  # events/s: one end-to-end event per packet (threshold 0)
TICK = 1e-3


def _config(entries: int) -> FlowCacheConfig:
    return FlowCacheConfig(rows=1 << 12, max_hops=5, ring_entries=entries,
                           thresholds={"threshold": {"e2e_latency": 0}},
                           events=["t_e2e_latency"])


@pytest.fixture(scope="module")
def batch() -> PacketBatch:
    trace = generate(TraceSpec(packets=40_000, flows=2_000, hops=5, instructions=4, seed=4,
                               latency_mean=1e6))  # no hop sums to 0: an event per packet
    return rows_to_batch(trace.rows, trace.ts, 5)


def test_share_is_work_conserving_and_bounded() -> None:
    rng = np.random.default_rng(1)
    for _ in range(300):
        fill = rng.integers(0, 50, 8)
        budget = int(rng.integers(0, 300))
        take = share(fill, budget)
        assert (take >= 0).all() and (take <= fill).all()
        assert take.sum() == min(budget, fill.sum())
        # as even as the rings allow: a ring left with entries got no less than any other
        for r in np.flatnonzero(take < fill):
            assert take[r] >= take.max() - 1


@pytest.mark.parametrize("load", [0.3, 0.6, 0.85])
def test_a_slow_reader_loses_about_one_minus_r_over_e(batch: PacketBatch, load: float) -> None:
    cache = FlowCache(_config(256))
    n = 200_000  # 2 s of packets, the batch replayed
    got = serve(cache, batch, n, E, load * E, TICK)
    assert got.produced == n and got.read + got.dropped == n
    loss = got.dropped / n
    # a fluid queue with the 8 rings pooled loses the least; one reader always
    # busy once behind cannot read more than r T + what is left at the end
    assert fluid_loss(E, load * E, 8 * 256, n) <= loss + 1e-9
    assert loss <= 1 - load + 1e-3
    assert loss == pytest.approx(1 - load, abs=0.03)


def test_a_fast_reader_with_rings_above_a_tick_loses_nothing(batch: PacketBatch) -> None:
    cache = FlowCache(_config(256))  # a tick writes 100 events over 8 rings
    got = serve(cache, batch, 100_000, E, 1.2 * E, TICK)
    assert got.dropped == 0 and got.read == 100_000
    assert got.peak_fill < 256


def test_loss_falls_as_the_reader_speeds_up(batch: PacketBatch) -> None:
    losses = [serve(FlowCache(_config(128)), batch, 60_000, E, x * E, TICK).dropped
              for x in (0.25, 0.5, 0.75, 1.0, 1.5)]
    assert losses == sorted(losses, reverse=True) and losses[-1] == 0 and losses[0] > 0


def _linear(ok, top: int) -> int | None:  # type: ignore[no-untyped-def]
    return next((k for k in range(1, top + 1) if ok(k)), None)


def test_fewest_is_the_minimum_of_a_monotone_test() -> None:
    for need in [*range(1, 40), None]:
        calls: list[int] = []

        def ok(k: int, need: int | None = need, calls: list[int] = calls) -> bool:
            calls.append(k)
            return need is not None and k >= need

        found, tried = fewest(ok, 32)
        assert found == _linear(lambda k, need=need: need is not None and k >= need, 32)
        assert len(calls) == len(set(calls)) == len(tried)
        if found is not None:
            assert len(calls) <= 2 * math.ceil(math.log2(found)) + 1


def test_fewest_readers_on_a_fake_reader(batch: PacketBatch) -> None:
    """k fake readers of rate r0 each serve k r0: the search's answer loses
    nothing and one reader fewer loses, in the time model itself."""
    r0 = E / 3.4

    def loses(k: int) -> int:
        return serve(FlowCache(_config(128)), batch, 60_000, E, k * r0, TICK).dropped

    found, tried = fewest(lambda k: loses(k) == 0, 8)
    assert found == math.ceil(E / r0) == 4
    assert loses(found) == 0 and loses(found - 1) > 0
    assert set(tried) <= {1, 2, 3, 4, 8}


def _tuples(key0, key1, switch, value, ts) -> list[tuple[int, ...]]:  # type: ignore[no-untyped-def]
    return list(zip(*(np.asarray(a).tolist() for a in (key0, key1, switch, value, ts))))


def test_reader_processes_write_every_event_once(server: RedisServer,
                                                 batch: PacketBatch) -> None:
    cfg = FlowCacheConfig(rows=1 << 12, max_hops=5, ring_entries=1 << 15,
                          thresholds={"threshold": {"queue_occupancy": 60}},
                          events=["t_queue_occupancy"])
    cache, twin = FlowCache(cfg), FlowCache(cfg)
    rings = SharedEventRings(cache, 3)
    expected = []
    procs = ReaderProcesses(rings, server.url, 0.002).start()
    try:
        for at in range(0, 20_000, 500):
            piece = batch.take(slice(at, at + 500))
            cache.process(piece)
            rings.publish()
            twin.process(piece)
            ev = twin.drain_events()
            expected += _tuples(ev.key0, ev.key1, ev.switch, ev.value, ev.ts)
            time.sleep(0.001)
    finally:
        procs.stop()
        rings.close()
    assert cache.counters["event_ring_overflow"] == 0 and procs.written == len(expected) > 1000
    stream = server.client().xrange("flowcache:events")
    got = [(f["flow"], int(f["switch"]), int(f["value"]), int(f["ts"])) for _, f in stream]
    want = [(flow_name(k0, k1), s, v, t) for k0, k1, s, v, t in expected]
    assert Counter(got) == Counter(want)
    # one flow's events stay in its order (one ring, one reader)
    for flow in {g[0] for g in got[:50]}:
        assert [g for g in got if g[0] == flow] == [w for w in want if w[0] == flow]
