"""Random packets fed to the compiled flow cache and to the reference
model side by side, and their outputs in one comparable form."""

from __future__ import annotations

import numpy as np

from sinks.flowcache.cache import Events, Evictions, FlowCache, make_batch
from sinks.flowcache.config import FlowCacheConfig
from tests.flowcache.reference_model import METRIC_NAMES, RefCache, RefSettings

COLUMNS = ("switch", *METRIC_NAMES)


def settings_of(cfg: FlowCacheConfig) -> RefSettings:
    thresholds = {(cls, metric): value for cls, per in cfg.thresholds.items()
                  for metric, value in per.items() if value is not None}
    return RefSettings(cfg.rows, cfg.buckets, cfg.max_hops, cfg.rings, cfg.ring_entries,
                       cfg.aging_period_ns, cfg.aging_interval_ns, thresholds,
                       None if cfg.events is None else frozenset(cfg.events),
                       {m: list(e) for m, e in cfg.edges.items()}, cfg.max_switches)


class RandomTraffic:
    """Flows with mostly stable paths and instruction sets, and every so
    often a changed path, hop count or instruction set, small values with
    rare spikes, and time gaps long enough to age flows out."""

    def __init__(self, seed: int, flows: int, max_hops: int, switch_pool: int = 40) -> None:
        self.rng = rng = np.random.default_rng(seed)
        self.max_hops = max_hops
        self.key0 = rng.integers(0, 1 << 63, flows, dtype=np.uint64)
        self.key1 = (np.uint64(17) << np.uint64(32)) | rng.integers(0, 1 << 32, flows,
                                                                      dtype=np.uint64)
        pool = np.concatenate([rng.integers(1, 1000, switch_pool - 4),
                               rng.integers(1 << 16, 1 << 32, 4)])  # some beyond the direct table
        self.pool = pool.astype(np.uint32)
        self.paths = rng.choice(self.pool, (flows, max_hops))
        self.hops = rng.integers(0, max_hops + 1, flows)
        self.present = rng.choice([15, 15, 15, 1, 3, 14, 7], flows)
        weights = 1.0 / np.arange(1, flows + 1)
        self.weights = weights / weights.sum()
        self.now = 0

    def batch(self, n: int):  # -> PacketBatch
        rng = self.rng
        flow = rng.choice(len(self.key0), n, p=self.weights)
        hops = self.hops[flow].copy()
        odd = rng.random(n) < 0.05
        hops[odd] = rng.integers(0, self.max_hops + 1, int(odd.sum()))
        present = self.present[flow].copy()
        odd = rng.random(n) < 0.03
        present[odd] = rng.integers(0, 16, int(odd.sum()))
        values = rng.integers(0, 120, (n, self.max_hops, 4)).astype(np.uint32)
        spikes = rng.random((n, self.max_hops, 4)) < 0.02
        values[spikes] = rng.integers(0, 5000, int(spikes.sum()))
        values[:, :, 0] = self.paths[flow]
        moved = rng.random(n) < 0.04
        values[moved, rng.integers(0, self.max_hops, int(moved.sum())), 0] = \
            rng.choice(self.pool, int(moved.sum()))
        gaps = rng.integers(0, 50, n)
        gaps[rng.random(n) < 0.001] = 20_000
        ts = self.now + np.cumsum(gaps)
        self.now = int(ts[-1])
        return make_batch(self.key0[flow], self.key1[flow], ts, hops, present, values)


def feed_reference(ref: RefCache, batch) -> None:  # batch: PacketBatch
    for i in range(len(batch)):
        carried = {COLUMNS[m] for m in range(4) if (int(batch.present[i]) >> m) & 1}
        hops = [{COLUMNS[m]: int(batch.values[i, h, m]) for m in range(4)}
                for h in range(int(batch.hops[i]))]
        ref.packet((int(batch.key0[i]), int(batch.key1[i])), int(batch.ts[i]), hops, carried)


def _cells(latest: np.ndarray, sums: np.ndarray, samples: np.ndarray) -> tuple[dict, dict, dict]:
    seen = np.argwhere(samples > 0)
    cells = [(int(h), COLUMNS[int(m)]) for h, m in seen]
    return ({c: int(latest[h, m]) for c, (h, m) in zip(cells, seen)},
            {c: int(sums[h, m]) for c, (h, m) in zip(cells, seen)},
            {c: int(samples[h, m]) for c, (h, m) in zip(cells, seen)})


def eviction_tuples(ev: Evictions) -> list[tuple]:
    out = []
    for i in range(len(ev)):
        latest, sums, n = _cells(ev.latest[i], ev.sums[i], ev.samples[i])
        out.append((int(ev.ring[i]), (int(ev.key0[i]), int(ev.key1[i])), int(ev.count[i]),
                    int(ev.last_ts[i]), int(ev.hops[i]), int(ev.reason[i]), int(ev.time[i]),
                    latest, sums, n))
    return out


def event_tuples(ev: Events) -> list[tuple]:
    return list(zip(ev.ring.tolist(), ev.key0.tolist(), ev.key1.tolist(), ev.switch.tolist(),
                    ev.hop.tolist(), ev.value.tolist(), ev.bitmap.tolist(), ev.ts.tolist()))


def histogram_dict(cache: FlowCache) -> dict[int, list[list[int]]]:
    nbins = [len(cache.config.edges[m]) for m in METRIC_NAMES]
    return {k: [v[i, :nbins[i]].tolist() for i in range(3)]
            for k, v in cache.histograms().items()}
