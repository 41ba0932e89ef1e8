"""The compiled fast path's key table against a dict: slots in order of
first appearance across batches, through growth and rehashing, with the
all-ones key (the table's empty mark, an address pair 255.255.255.255 both
ways) kept apart; the extraction's row sums, path hashes and row checks;
and a collector in a process where numba does not import (the numpy
fallback) against the compiled one."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from benchmarks.collector import generate
from common.clock import VirtualClock
from common.paths import child_env
from sinks.intcollector import fastloop
from sinks.intcollector.fastloop import EMPTY, HashIndex
from sinks.intcollector.pipeline import Collector
from sinks.intcollector.stores import MemoryStore

pytestmark = pytest.mark.skipif(not fastloop.COMPILED, reason="numba does not import here")


def test_hash_index_numbers_keys_by_first_appearance_like_a_dict() -> None:
    rng = np.random.default_rng(1)
    index, model = HashIndex(capacity=4), {}
    for size in (1, 7, 300, 5000, 40_000, 3):
        keys = rng.integers(0, 1 << 63, size, dtype=np.uint64)
        keys[rng.random(size) < 0.3] = np.uint64(7)  # repeats within a batch
        keys[::97] = EMPTY
        if size > 100:
            keys[:50] = index.keys[:50] if index.count >= 50 else keys[:50]  # known ones
        want = [model.setdefault(int(k), len(model)) for k in keys.tolist()]
        assert index.lookup(keys).tolist() == want
        assert index.count == len(model)
    assert index.keys.tolist() == list(model)
    assert index.key(model[int(EMPTY)]) == int(EMPTY)


def test_row_helpers() -> None:
    rng = np.random.default_rng(2)
    rows = rng.integers(0, 1 << 32, (500, 6), dtype=np.uint64).astype(np.uint32)
    sums = np.empty(len(rows), dtype=np.int64)
    fastloop.row_sums(rows, sums)
    assert sums.tolist() == [sum(int(v) for v in row) for row in rows]
    hashes = np.empty(len(rows), dtype=np.uint64)
    fastloop.row_hashes(rows[:, ::-1], hashes)  # a strided view, as paths are read
    assert len(set(hashes.tolist())) == len(rows) and EMPTY not in hashes
    slots = rng.integers(0, len(rows), 200)
    assert fastloop.rows_equal(rows, slots, rows[slots])
    other = rows[slots].copy()
    other[150, 5] ^= 1
    assert not fastloop.rows_equal(rows, slots, other)


FALLBACK_RUN = """
import json, sys
sys.modules["numba"] = None  # numba fails to import
from sinks.intcollector import fastloop
from sinks.intcollector.pipeline import Collector
from sinks.intcollector.stores import MemoryStore
from common.clock import VirtualClock
from benchmarks.collector import generate
assert not fastloop.COMPILED
rows, _ = generate(3000)
collector = Collector(MemoryStore(), VirtualClock())
for start in range(0, 3000, 700):
    collector.feed_rows(rows[start:start + 700], start * 1e-3)
collector.step()
print(json.dumps({"events": collector.counters.events, "values": collector.counters.values,
                  "points": sorted(map(repr, collector.store.points))}))
"""


def test_without_numba_the_collector_gives_the_same_points() -> None:
    """numba made unimportable in a child process: the numpy fallback
    exports the same points as the compiled loops here."""
    rows, _ = generate(3000)
    collector = Collector(MemoryStore(), VirtualClock())
    for start in range(0, 3000, 700):
        collector.feed_rows(rows[start:start + 700], start * 1e-3)
    collector.step()
    done = subprocess.run([sys.executable, "-c", FALLBACK_RUN], capture_output=True, text=True,
                          env=child_env(), timeout=120, check=True)
    fallback = json.loads(done.stdout)
    assert fallback["events"] == dict(collector.counters.events)
    assert fallback["values"] == collector.counters.values
    assert fallback["points"] == sorted(map(repr, collector.store.points))
    assert len(fallback["points"]) == sum(collector.counters.events.values()) > 0
