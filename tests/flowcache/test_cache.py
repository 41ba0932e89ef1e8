"""Flow cache behaviour case by case: LRU eviction order, aging, each event
class per switch and end to end, path changes, histogram bins, ring
overflow counts, thresholds changed while running, configuration errors."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import InvalidValueError
from sinks.flowcache.cache import FlowCache, PacketBatch, flow_key, make_batch, split_key
from sinks.flowcache.config import FlowCacheConfig
from sinks.flowcache.kernel import flow_hash
from sinks.flowcache.layout import (
    C_E2E_LATENCY,
    C_HOP_LATENCY,
    C_LINK_UTILIZATION,
    C_QUEUE_OCCUPANCY,
    E2E_HOP,
    EVICT_AGED,
    EVICT_COLLISION,
    EVICT_FLUSH,
    PATH_CHANGE,
    T_E2E_LATENCY,
    T_HOP_LATENCY,
    T_LINK_UTILIZATION,
    T_QUEUE_OCCUPANCY,
    UNKNOWN_SWITCH,
    WHOLE_PATH,
)
from tests.flowcache.reference_model import path_digest

ALL = 15  # switch id, hop latency, queue occupancy, link utilization


def flow(i: int) -> tuple[int, int]:
    return flow_key(0x0A000000 + i, 0x0A0000FF, 17, 1000 + i, 5001)


def packets(rows: list[tuple[int, int, list[tuple[int, int, int, int]]]], max_hops: int = 3,
            present: int = ALL) -> PacketBatch:
    """(flow number, time, hops as (switch, latency, queue, utilization))."""
    n = len(rows)
    values = np.zeros((n, max_hops, 4), np.uint32)
    for i, (_, _, hops) in enumerate(rows):
        for h, hop in enumerate(hops):
            values[i, h] = hop
    keys = [flow(f) for f, _, _ in rows]
    return make_batch(np.array([k[0] for k in keys], np.uint64),
                      np.array([k[1] for k in keys], np.uint64), [t for _, t, _ in rows],
                      [len(h) for _, _, h in rows], np.full(n, present), values)


def one_row(**kw: object) -> FlowCache:
    settings = dict(rows=1, buckets=3, max_hops=3, rings=1, ring_entries=64)
    settings.update(kw)
    return FlowCache(FlowCacheConfig(**settings))  # type: ignore[arg-type]


HOP = [(7, 10, 10, 10)]


def test_a_full_row_evicts_its_least_recently_updated_bucket() -> None:
    cache = one_row()
    cache.process(packets([(1, 100, HOP), (2, 200, HOP), (3, 300, HOP), (1, 400, HOP)]))
    assert len(cache.drain_evictions()) == 0
    cache.process(packets([(4, 500, HOP)]))  # 2 is now the least recently updated
    cache.process(packets([(5, 600, HOP)]))  # then 3
    cache.process(packets([(1, 700, HOP), (6, 800, HOP)]))  # 1 was refreshed: 4 goes
    ev = cache.drain_evictions()
    assert [(int(a), int(b)) for a, b in zip(ev.key0, ev.key1)] == [flow(2), flow(3), flow(4)]
    assert ev.reason.tolist() == [EVICT_COLLISION] * 3
    assert ev.time.tolist() == [500, 600, 800]
    assert ev.last_ts.tolist() == [200, 300, 500]
    assert ev.count.tolist() == [1, 1, 1]
    assert split_key(int(ev.key0[0]), int(ev.key1[0])) == (0x0A000002, 0x0A0000FF, 17, 1002, 5001)
    c = cache.counters
    assert (c["packets"], c["hits"], c["inserts"], c["evicted_collision"]) == (8, 2, 6, 3)
    assert sorted(e["key1"] for e in cache.entries()) == sorted([flow(1)[1], flow(5)[1],
                                                                 flow(6)[1]])


def test_equal_update_times_evict_the_first_bucket_of_the_row() -> None:
    cache = one_row()
    cache.process(packets([(1, 50, HOP), (2, 50, HOP), (3, 50, HOP), (4, 60, HOP)]))
    ev = cache.drain_evictions()
    assert (int(ev.key0[0]), int(ev.key1[0])) == flow(1)


def test_evicted_bucket_carries_latest_values_and_cumulative_sums() -> None:
    cache = one_row(buckets=1)
    cache.process(packets([(1, 1, [(7, 10, 20, 30), (8, 1, 2, 3)]),
                           (1, 2, [(7, 14, 22, 36), (8, 5, 2, 1)]),
                           (2, 3, HOP)]))
    ev = cache.drain_evictions()
    assert ev.hops.tolist() == [2] and ev.count.tolist() == [2]
    assert ev.latest[0, :2].tolist() == [[7, 14, 22, 36], [8, 5, 2, 1]]
    assert ev.sums[0, :2].tolist() == [[14, 24, 42, 66], [16, 6, 4, 4]]
    assert ev.samples[0, :2].tolist() == [[2, 2, 2, 2], [2, 2, 2, 2]]
    assert ev.averages()[0, 0].tolist() == [7.0, 12.0, 21.0, 33.0]


def test_aging_evicts_buckets_idle_longer_than_the_period() -> None:
    cache = one_row(buckets=4, aging_period_ns=1000, aging_interval_ns=500)
    # the timer starts at the first packet: sweeps fall due at 500 and then 500 after each
    cache.process(packets([(1, 0, HOP), (2, 400, HOP), (1, 450, HOP)]))
    cache.process(packets([(3, 1300, HOP)]))  # sweep at 1300: 1 idle 850, 2 idle 900: stay
    assert len(cache.drain_evictions()) == 0
    cache.process(packets([(3, 1700, HOP)]))  # not due before 1800
    cache.process(packets([(3, 1800, HOP)]))  # sweep: 1 idle 1350, 2 idle 1400 go
    ev = cache.drain_evictions()
    assert [(int(a), int(b)) for a, b in zip(ev.key0, ev.key1)] == [flow(1), flow(2)]
    assert ev.reason.tolist() == [EVICT_AGED, EVICT_AGED] and ev.time.tolist() == [1800, 1800]
    assert cache.counters["aging_sweeps"] == 2 and cache.counters["evicted_aged"] == 2
    cache.age(2801)  # a sweep on demand: 3 has been idle 1001 ns
    ev = cache.drain_evictions()
    assert (int(ev.key0[0]), int(ev.key1[0])) == flow(3) and cache.entries() == []


def test_flush_exports_every_bucket_without_overflowing_a_ring() -> None:
    cache = FlowCache(FlowCacheConfig(rows=64, buckets=4, max_hops=1, rings=2, ring_entries=8))
    cache.process(packets([(i, i, HOP) for i in range(150)], max_hops=1))
    cache.drain_evictions()
    live = len(cache.entries())
    got = []
    cache.flush(10_000, got.append)
    assert sum(len(e) for e in got) == live and cache.entries() == []
    assert all((e.reason == EVICT_FLUSH).all() for e in got)
    assert cache.counters["general_ring_overflow"] == 0


def events(cache: FlowCache) -> list[tuple[int, int, int, int, int]]:
    ev = cache.drain_events()
    return list(zip(ev.switch.tolist(), ev.hop.tolist(), ev.value.tolist(), ev.bitmap.tolist(),
                    ev.ts.tolist()))


def test_threshold_events_per_switch_and_metric() -> None:
    cache = one_row(thresholds={"threshold": {"hop_latency": 100, "queue_occupancy": 50,
                                              "link_utilization": 70}})
    cache.process(packets([(1, 5, [(7, 100, 51, 70), (8, 101, 50, 71)])]))
    assert events(cache) == [(7, 0, 51, T_QUEUE_OCCUPANCY, 5), (8, 1, 101, T_HOP_LATENCY, 5),
                             (8, 1, 71, T_LINK_UTILIZATION, 5)]


def test_change_events_compare_with_the_flows_previous_value_at_that_switch() -> None:
    cache = one_row(thresholds={"change": {"hop_latency": 10, "queue_occupancy": 5,
                                           "link_utilization": 0}})
    cache.process(packets([(1, 1, [(7, 50, 50, 50)])]))  # first packet: nothing to compare
    cache.process(packets([(2, 2, [(7, 0, 0, 0)])]))  # another flow: its own history
    assert events(cache) == []
    cache.process(packets([(1, 3, [(7, 61, 45, 50)]), (1, 4, [(7, 50, 39, 51)])]))
    # 61 vs 50 (+11 > 10); 45 vs 50 and 50 vs 50 are within their thresholds;
    # then 50 vs 61, 39 vs 45 (6 > 5), 51 vs 50 (1 > 0)
    assert events(cache) == [(7, 0, 61, C_HOP_LATENCY, 3), (7, 0, 50, C_HOP_LATENCY, 4),
                             (7, 0, 39, C_QUEUE_OCCUPANCY, 4), (7, 0, 51, C_LINK_UTILIZATION, 4)]


def test_change_and_threshold_on_one_value_share_one_event() -> None:
    cache = one_row(thresholds={"change": {"queue_occupancy": 5},
                                "threshold": {"queue_occupancy": 40}})
    cache.process(packets([(1, 1, [(7, 0, 10, 0)]), (1, 2, [(7, 0, 50, 0)])]))
    assert events(cache) == [(7, 0, 50, T_QUEUE_OCCUPANCY | C_QUEUE_OCCUPANCY, 2)]


def test_a_new_switch_at_a_hop_is_not_compared_with_the_old_one() -> None:
    cache = one_row(thresholds={"change": {"hop_latency": 5}}, events=["c_hop_latency"])
    cache.process(packets([(1, 1, [(7, 10, 0, 0)]), (1, 2, [(9, 90, 0, 0)]),
                           (1, 3, [(9, 10, 0, 0)])]))
    assert events(cache) == [(9, 0, 10, C_HOP_LATENCY, 3)]


def test_end_to_end_latency_events_sum_the_hops() -> None:
    cache = one_row(thresholds={"threshold": {"e2e_latency": 100},
                                "change": {"e2e_latency": 30}})
    cache.process(packets([(1, 1, [(7, 40, 0, 0), (8, 60, 0, 0)]),  # 100: not above
                           (1, 2, [(7, 41, 0, 0), (8, 60, 0, 0)]),  # 101: T
                           (1, 3, [(7, 80, 0, 0), (8, 60, 0, 0)])]))  # 140: T and C (+39)
    assert events(cache) == [(WHOLE_PATH, E2E_HOP, 101, T_E2E_LATENCY, 2),
                             (WHOLE_PATH, E2E_HOP, 140, T_E2E_LATENCY | C_E2E_LATENCY, 3)]


def test_path_change_events_name_the_first_switch_that_differs() -> None:
    cache = one_row()
    a, b, c = (7, 0, 0, 0), (8, 0, 0, 0), (9, 0, 0, 0)
    cache.process(packets([(1, 1, [a, b]), (1, 2, [a, b]), (1, 3, [a, c]), (1, 4, [a, c, b]),
                           (1, 5, [a])]))
    assert events(cache) == [(9, 1, path_digest([7, 9]), PATH_CHANGE, 3),
                             (8, 2, path_digest([7, 9, 8]), PATH_CHANGE, 4),
                             (WHOLE_PATH, 1, path_digest([7]), PATH_CHANGE, 5)]


def test_no_path_events_without_switch_ids() -> None:
    cache = one_row()
    cache.process(packets([(1, 1, [(7, 0, 0, 0)]), (1, 2, [(8, 0, 0, 0), (9, 0, 0, 0)])],
                          present=0b1110))
    assert events(cache) == []


def test_thresholds_and_event_types_change_between_batches() -> None:
    cache = one_row()
    batch = packets([(1, 1, [(7, 500, 0, 0)])])
    cache.process(batch)
    assert events(cache) == []
    cache.set_threshold("threshold", "hop_latency", 499)
    cache.process(batch)
    assert events(cache) == [(7, 0, 500, T_HOP_LATENCY, 1)]
    cache.set_events(["path_change"])
    cache.process(batch)
    assert events(cache) == []
    cache.set_events(None)
    cache.set_threshold("threshold", "hop_latency", None)
    cache.process(batch)
    assert events(cache) == []


def test_histogram_bins_per_switch_and_metric() -> None:
    edges = {"hop_latency": (10, 20, 30), "queue_occupancy": (0, 100),
             "link_utilization": (0, 70_000, 70_001)}  # past the lookup table's reach
    cache = one_row(edges=edges)
    cache.process(packets([(1, 1, [(7, 9, 0, 69_999), (8, 10, 99, 70_000)]),
                           (1, 2, [(7, 19, 100, 70_001), (8, 30, 1 << 30, 1 << 31)]),
                           (2, 3, [(70_000, 20, 5, 5)])]))
    hist = cache.histograms()
    assert sorted(hist) == [7, 8, 70_000]
    assert hist[7].tolist() == [[2, 0, 0], [1, 1, 0], [1, 0, 1]]
    assert hist[8].tolist() == [[1, 0, 1], [1, 1, 0], [0, 1, 1]]
    assert hist[70_000].tolist() == [[0, 1, 0], [1, 0, 0], [1, 0, 0]]


def test_hops_without_switch_ids_count_under_their_hop_index() -> None:
    cache = one_row()
    cache.process(packets([(1, 1, [(7, 5, 5, 5), (8, 15, 15, 15)])], present=0b1110))
    assert sorted(cache.histograms()) == [UNKNOWN_SWITCH | 0, UNKNOWN_SWITCH | 1]


def test_histogram_switches_beyond_the_directory_are_counted() -> None:
    cache = one_row(max_switches=2)
    cache.process(packets([(1, 1, [(7, 1, 1, 1), (8, 1, 1, 1), (9, 1, 1, 1)]),
                           (1, 2, [(9, 1, 1, 1)])]))
    assert sorted(cache.histograms()) == [7, 8]
    assert cache.counters["histogram_switch_overflow"] == 2


def test_full_rings_drop_the_newest_entries_and_count_them() -> None:
    cache = one_row(buckets=1, rings=1, ring_entries=2,
                    thresholds={"threshold": {"hop_latency": 0}})
    cache.process(packets([(i, i, [(7, 5, 0, 0)]) for i in range(6)]))
    ev = cache.drain_events()
    assert ev.ts.tolist() == [0, 1] and cache.counters["event_ring_overflow"] == 4
    gone = cache.drain_evictions()
    assert gone.time.tolist() == [1, 2] and cache.counters["general_ring_overflow"] == 3
    assert cache.counters["events"] == 6 and cache.counters["evicted_collision"] == 5
    cache.process(packets([(9, 9, [(7, 5, 0, 0)])]))  # drained: room again
    assert cache.drain_events().ts.tolist() == [9]


def test_rings_are_chosen_by_row() -> None:
    cache = FlowCache(FlowCacheConfig(rows=16, buckets=1, max_hops=1, rings=4, ring_entries=64,
                                      thresholds={"threshold": {"hop_latency": 0}}))
    cache.process(packets([(i, i, [(7, 5, 0, 0)]) for i in range(64)], max_hops=1))
    ev = cache.drain_events()
    rows = [int(flow_hash(np.uint64(a), np.uint64(b))) % 16 for a, b in zip(ev.key0, ev.key1)]
    assert ev.ring.tolist() == [r % 4 for r in rows] and len(set(ev.ring.tolist())) == 4


@pytest.mark.parametrize("settings, message", [
    (dict(rows=0), "rows must be an integer >= 1"),
    (dict(thresholds={"threshold": {"jitter": 3}}), "unknown threshold metric 'jitter'"),
    (dict(thresholds={"sometimes": {}}), "unknown event class 'sometimes'"),
    (dict(thresholds={"change": {"hop_latency": -1}}), "must be a non-negative integer"),
    (dict(edges={"hop_latency": (5, 5)}), "strictly increasing"),
    (dict(edges={"jitter": (0,)}), "unknown metric 'jitter'"),
    (dict(events=["t_jitter"]), "unknown event 't_jitter'"),
    (dict(shard=2, shards=2), "shard 2 is not in 0..1"),
])
def test_bad_configuration_is_one_line(settings: dict, message: str) -> None:
    with pytest.raises(InvalidValueError) as err:
        FlowCacheConfig(**settings)
    line = err.value.line()
    assert message in line and "\n" not in line and line.startswith("error: ")


def test_a_batch_for_another_hop_count_is_refused() -> None:
    with pytest.raises(ValueError, match="max_hops=3"):
        one_row().process(packets([(1, 1, HOP)], max_hops=2))
