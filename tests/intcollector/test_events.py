"""Event detection (INTCollector section III-D) against a reference model
written here value by value: an event when a key is new or its value is
more than T(m) from the value of its last event."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from sinks.intcollector import events, fastloop
from sinks.intcollector.events import DEFAULT_THRESHOLDS, MetricTable, Thresholds
from sinks.intcollector.metrics import FLOW_HOP_LATENCY, FLOW_PATH, QUEUE_OCCUPANCY


class Model:
    """The rule as the paper states it, one value at a time."""

    def __init__(self) -> None:
        self.reported: dict[int, int] = {}

    def events(self, keys: list[int], values: list[int], threshold: float) -> list[int]:
        out = []
        for i, (key, value) in enumerate(zip(keys, values)):
            last = self.reported.get(key)
            if last is None or abs(value - last) > threshold:
                self.reported[key] = value
                out.append(i)
        return out


def observe(table: MetricTable, keys: list[int] | np.ndarray, values: list[int] | np.ndarray,
            threshold: float) -> list[int]:
    keys = np.asarray(keys, dtype=np.uint64)
    values = np.asarray(values, dtype=np.int64)
    _, found = table.observe(keys, values, np.arange(len(values), dtype=np.int64), threshold)
    return sorted(found.tolist())


def hop_latency_series(size: int, seed: int) -> np.ndarray:
    """A Fig. 9-like hop latency (ns): a slow swing, micro bursts, noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(size)
    series = 120 + 40 * np.sin(t / 90) + rng.normal(0, 6, size)
    for start in rng.choice(size - 10, size // 100, replace=False):
        series[start:start + rng.integers(2, 8)] += rng.integers(60, 150)
    return np.rint(series).astype(np.int64)


@pytest.mark.parametrize("threshold", [40, 20])
def test_fig9_series_events_and_bounds(threshold: int) -> None:
    series = hop_latency_series(2000, seed=9)
    table = MetricTable(FLOW_HOP_LATENCY)
    got = observe(table, [7] * len(series), series, threshold)
    assert got == Model().events([7] * len(series), series.tolist(), threshold)
    # Between events the stored value stays within T of the true one.
    held = np.maximum.accumulate(np.isin(np.arange(len(series)), got) * np.arange(len(series)))
    assert (np.abs(series - series[held]) <= threshold).all()
    assert 10 < len(got) < len(series) // 4


def test_smaller_threshold_more_events() -> None:
    series = hop_latency_series(2000, seed=4)
    counts = [len(observe(MetricTable(FLOW_HOP_LATENCY), [1] * len(series), series, t))
              for t in (40, 20, 5)]
    assert counts[0] < counts[1] < counts[2]


def test_reference_is_the_last_reported_value() -> None:
    # A slow drift: against the previous value nothing changes by more than
    # 25 after the first report; against the last reported one it does.
    drift = list(range(0, 101, 10))
    assert observe(MetricTable(QUEUE_OCCUPANCY), [5] * len(drift), drift, 25) == [0, 3, 6, 9]


def test_hand_written_series() -> None:
    values = [130, 150, 171, 171, 90, 129, 131, 131, 300]
    # 130 new; 171 is 41 from 130; 90 is 81 from 171; 131 is 41 from 90; 300.
    assert observe(MetricTable(FLOW_HOP_LATENCY), [1] * 9, values, 40) == [0, 2, 4, 6, 8]


def test_interleaved_keys_across_batches() -> None:
    rng = np.random.default_rng(11)
    size, keys = 20_000, 50
    key = rng.integers(0, keys, size).astype(np.uint64) * np.uint64(0x1_0000_0001)
    value = np.cumsum(rng.integers(-8, 9, size)) + rng.integers(0, 2, size) * rng.integers(
        -100, 100, size)
    table, model = MetricTable(FLOW_HOP_LATENCY), Model()
    cuts = sorted(rng.choice(size, 30, replace=False).tolist())
    for lo, hi in zip([0, *cuts], [*cuts, size]):
        got = observe(table, key[lo:hi], value[lo:hi], 30)
        assert got == model.events(key[lo:hi].tolist(), value[lo:hi].tolist(), 30)
    assert len(table) == keys


def test_rounds_and_following_give_the_same_events(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    key = rng.integers(0, 4, 3000).astype(np.uint64) ** 2  # about 750 values per key
    value = rng.integers(0, 100, 3000)  # noisy: many events per key per batch
    expected = Model().events(key.tolist(), value.tolist(), 10)
    for rounds, follow_size in ((0, 10**9), (1, 10**9), (3, 10**9), (10**4, 10**9), (16, 1),
                                (2, 700)):
        monkeypatch.setattr(events, "MAX_ROUNDS", rounds)
        monkeypatch.setattr(events, "FOLLOW_SIZE", follow_size)
        assert observe(MetricTable(FLOW_HOP_LATENCY, compiled=False), key, value, 10) == expected


@pytest.mark.parametrize("top", [3, 1 << 16, 1 << 20, 1 << 40])
def test_group_order_is_a_stable_argsort(top: int) -> None:
    slots = np.random.default_rng(top % 97).integers(0, top, 50_000)
    assert (events.group_order(slots) == np.argsort(slots, kind="stable")).all()


def test_new_keys_are_events_whatever_their_value() -> None:
    table = MetricTable(QUEUE_OCCUPANCY)
    assert observe(table, [1, 2, 3, 1, 2], [0, 0, 0, 0, 0], 1000) == [0, 1, 2]
    # A key first seen in a later batch, with a value another key has.
    assert observe(table, [3, 4, 1, 4], [0, 0, 0, 0], 1000) == [1]
    assert len(table) == 4


def test_path_events_on_any_change() -> None:
    table = MetricTable(FLOW_PATH)
    paths = [4, 4, 5, 5, 4, 4, 6]
    assert observe(table, [9] * 7, paths, 1000) == [0, 2, 4, 6]
    assert observe(table, [9, 8], [6, 6], 1000) == [1]


def test_latest_values_and_times_are_kept() -> None:
    table = MetricTable(QUEUE_OCCUPANCY)
    keys = np.array([1, 2, 1, 1], dtype=np.uint64)
    table.observe(keys, np.array([10, 20, 11, 12]), np.array([100, 200, 300, 400]), 50)
    assert list(table.items()) == [(0, 12, 400), (1, 20, 200)]
    assert table.ref[:2].tolist() == [10, 20]  # no change past 50: references stay


def test_detection_off_reports_every_value() -> None:
    table = MetricTable(QUEUE_OCCUPANCY)
    keys = np.array([1, 1, 1], dtype=np.uint64)
    _, found = table.observe(keys, np.array([5, 5, 5]), np.zeros(3, dtype=np.int64), 50,
                             detect=False)
    assert found.tolist() == [0, 1, 2]


def test_threshold_change_applies_to_the_next_batch() -> None:
    series = hop_latency_series(4000, seed=2)
    keys = [3] * len(series)
    thresholds = Thresholds({"flow_hop_latency": 40})
    table, model = MetricTable(FLOW_HOP_LATENCY), Model()
    got, want = [], []
    for lo in range(0, len(series), 500):
        if lo == 2000:  # another thread lowers the threshold mid-run
            setter = threading.Thread(target=thresholds.set, args=("flow_hop_latency", 10))
            setter.start()
            setter.join()
        threshold = thresholds.snapshot()["flow_hop_latency"]
        part = series[lo:lo + 500]
        got += [lo + i for i in observe(table, keys[:len(part)], part, threshold)]
        want += [lo + i for i in model.events(keys[:len(part)], part.tolist(),
                                              40 if lo < 2000 else 10)]
    assert got == want
    before = sum(1 for i in got if i < 2000)
    assert len(got) - before > 2 * before  # the smaller threshold reports more


def test_thresholds_are_checked() -> None:
    thresholds = Thresholds()
    assert thresholds.snapshot() == DEFAULT_THRESHOLDS
    with pytest.raises(KeyError):
        thresholds.set("hop_latency", 5)
    with pytest.raises(ValueError):
        thresholds.set("queue_occupancy", -1)
    with pytest.raises(ValueError):
        thresholds.set("flow_path", 3)
    with pytest.raises(ValueError):
        Thresholds({"flow_latency": float("nan")})



def _state(table: MetricTable) -> dict[int, tuple[int, int, int, bool]]:
    """Per key: reference, latest value, time seen, dirty (slots differ)."""
    count = len(table)
    return {int(k): (int(r), int(v), int(t), bool(d)) for k, r, v, t, d in zip(
        table.index.keys.tolist(), table.ref[:count], table.latest[:count],
        table.seen_ns[:count], table.dirty[:count])}


@pytest.mark.skipif(not fastloop.COMPILED, reason="numba does not import here")
@pytest.mark.parametrize("seed", range(6))
def test_compiled_loop_equals_numpy_rounds_on_random_streams(seed: int) -> None:
    """Random keys (few hot ones, many cold), random walks with bursts,
    random batch cuts and a threshold that changes between batches: the
    compiled loop and the numpy rounds give the same events, references,
    latest values and times; both equal the model."""
    rng = np.random.default_rng(seed)
    size = 20_000
    hot = rng.integers(0, 4, size)
    keys = np.where(rng.random(size) < 0.5, hot, rng.integers(4, 3000, size)).astype(np.uint64)
    keys = keys * np.uint64(0x1_0000_0001) + np.uint64(seed)  # wide packed keys
    values = np.cumsum(rng.integers(-8, 9, size)) + (rng.random(size) < 0.01) * 300
    metric = (FLOW_HOP_LATENCY, FLOW_PATH)[seed % 2]
    compiled, rounds = MetricTable(metric, compiled=True), MetricTable(metric, compiled=False)
    model = Model()
    cuts = np.unique(np.r_[0, rng.integers(1, size, 30), size])
    for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        threshold = 0.0 if metric.categorical else float(rng.choice([0, 5, 20, 60]))
        times = rng.integers(0, 1 << 40, hi - lo)
        k, v = keys[lo:hi], values[lo:hi]
        _, got = compiled.observe(k, v, times, threshold)
        _, want = rounds.observe(k, v, times, threshold)
        assert got.tolist() == sorted(want.tolist())
        assert got.tolist() == model.events(k.tolist(), v.tolist(), threshold)  # T 0: any change
    assert _state(compiled) == _state(rounds)


def test_compiled_rows_take_the_last_column_first() -> None:
    """A (rows, width) batch is taken row by row, each row from its last
    column (the INT source's hop) to its first."""
    table = MetricTable(QUEUE_OCCUPANCY)
    keys = np.array([[1, 2], [1, 2]], dtype=np.uint64)
    values = np.array([[100, 0], [100, 100]], dtype=np.uint32)
    found = table.observe_rows(keys, values, np.array([0, 1]), np.array([10, 20]), 50)
    assert found.positions.tolist() == [0, 1, 2]  # key 2 (first taken), key 1, key 2 moved
    assert found.values.tolist() == [0, 100, 100]
    assert found.reports.tolist() == [0, 0, 1]
    assert [table.index.key(s) for s in found.slots.tolist()] == [2, 1, 2]


@pytest.mark.skipif(not fastloop.COMPILED, reason="numba does not import here")
@pytest.mark.parametrize("chunk", [events.CHUNK_VALUES, 37])
def test_row_cache_gives_the_events_of_plain_lookups(chunk: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows of 4 keys per flow (a path), each flow's keys changing now and
    then and shared between flows: found through the per-flow cache or by
    hashing every key, the events and the table are the same; also when a
    batch is cut into compiled calls of a few values (``chunk``)."""
    rng = np.random.default_rng(11)
    flows, size = 50, 6000
    paths = rng.integers(0, 40, (flows, 4)).astype(np.uint64)
    cached, plain = MetricTable(QUEUE_OCCUPANCY), MetricTable(QUEUE_OCCUPANCY)
    start = 0
    while start < size:
        rows = int(rng.integers(1, 700))
        flow = rng.integers(0, flows, rows)
        for moved in flow[rng.random(rows) < 0.05].tolist():  # path changes: new keys
            paths[moved] = rng.integers(0, 40, 4).astype(np.uint64)
        keys = paths[flow] * np.uint64(1000) + np.arange(4, dtype=np.uint64)
        keys[rng.random(rows) < 0.02, 1] += np.uint64(7)  # and single keys changing
        values = rng.integers(0, 200, (rows, 4)).astype(np.uint32)
        reports = np.arange(rows)
        times = rng.integers(0, 1 << 40, rows)
        monkeypatch.setattr(events, "CHUNK_VALUES", chunk)
        got = cached.observe_rows(keys, values, reports, times, 30.0, True, flow, flows)
        monkeypatch.setattr(events, "CHUNK_VALUES", 1 << 30)
        want = plain.observe_rows(keys, values, reports, times, 30.0, True)
        assert got.positions.tolist() == want.positions.tolist()
        assert got.values.tolist() == want.values.tolist()
        assert got.slots.tolist() == want.slots.tolist()
        start += rows
    assert _state(cached) == _state(plain)
