"""The compiled flow cache against the reference model on 100,000 random
packets: the same evictions (order, reasons, contents), the same events,
counters and histograms, with thresholds changed while running."""

from __future__ import annotations

import numpy as np
import pytest

from sinks.flowcache.cache import FlowCache
from sinks.flowcache.config import FlowCacheConfig
from tests.flowcache.model_driver import (
    RandomTraffic,
    event_tuples,
    eviction_tuples,
    feed_reference,
    histogram_dict,
    settings_of,
)
from tests.flowcache.reference_model import RefCache

EDGES = {"hop_latency": (0, 10, 50, 100, 1000), "queue_occupancy": (5, 40, 80),
         "link_utilization": (0, 1, 2, 3, 60, 61, 4000)}
THRESHOLDS = {"threshold": {"hop_latency": 100, "queue_occupancy": 110, "link_utilization": 3000,
                            "e2e_latency": 400},
              "change": {"hop_latency": 90, "queue_occupancy": 115, "link_utilization": 1000,
                         "e2e_latency": 300}}
CHANGES = [("threshold", "hop_latency", 60), ("change", "queue_occupancy", None),
           ("threshold", "e2e_latency", 250), ("change", "hop_latency", 20),
           ("threshold", "queue_occupancy", 10)]

CASES = {
    "large rings": dict(ring_entries=1 << 15, max_switches=64),
    "small rings, few histograms": dict(ring_entries=40, max_switches=12,
                                        events=["t_hop_latency", "c_queue_occupancy",
                                                "t_e2e_latency", "c_e2e_latency",
                                                "path_change", "t_link_utilization"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_same_evictions_events_and_histograms_as_the_reference(case: str) -> None:
    cfg = FlowCacheConfig(rows=8, buckets=4, max_hops=4, rings=3, aging_period_ns=5_000,
                          aging_interval_ns=3_000, thresholds=THRESHOLDS, edges=EDGES,
                          **CASES[case])
    cache, ref = FlowCache(cfg), RefCache(settings_of(cfg))
    traffic = RandomTraffic(seed=7, flows=150, max_hops=cfg.max_hops)
    sizes = np.random.default_rng(11).integers(1, 2500, 200)
    fed, evictions, events, step = 0, 0, 0, 0
    for size in sizes.tolist():
        size = min(size, 100_000 - fed)
        if size <= 0:
            break
        batch = traffic.batch(size)
        cache.process(batch)
        feed_reference(ref, batch)
        fed += size
        got_ev = eviction_tuples(cache.drain_evictions())
        assert got_ev == ref.drain_general(), f"evictions differ after {fed} packets"
        got = event_tuples(cache.drain_events())
        assert got == ref.drain_events(), f"events differ after {fed} packets"
        evictions += len(got_ev)
        events += len(got)
        if fed > (step + 1) * 15_000 and step < len(CHANGES):
            cls, metric, value = CHANGES[step]
            cache.set_threshold(cls, metric, value)
            if value is None:
                ref.s.thresholds.pop((cls, metric), None)
            else:
                ref.s.thresholds[(cls, metric)] = value
            step += 1
    assert fed == 100_000 and step == len(CHANGES)
    counters = cache.counters
    for name, value in ref.counts.items():
        assert counters[name] == value, name
    assert histogram_dict(cache) == ref.hist
    # the run exercised what it is meant to compare
    assert counters["evicted_collision"] > 1000 and counters["evicted_aged"] > 20
    assert evictions > 1000 and events > 5000 and counters["events"] > 10_000
    if case.startswith("small"):
        assert counters["event_ring_overflow"] > 0 and counters["general_ring_overflow"] > 0
        assert counters["histogram_switch_overflow"] > 0
    else:
        assert counters["event_ring_overflow"] == 0 and counters["general_ring_overflow"] == 0
    live = {(e["key0"], e["key1"]): e for e in cache.entries()}
    ref_live = {e["key"]: e for row in ref.table for e in row if e is not None}
    assert set(live) == set(ref_live)
    for key, e in live.items():
        assert (e["count"], e["last_ts"], e["hops"]) == \
            (ref_live[key]["count"], ref_live[key]["last"], ref_live[key]["hops"])
