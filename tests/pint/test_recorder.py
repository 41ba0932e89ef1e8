"""The recording module end to end: three queries share 16-bit digests by
the plan; every flow's path, the path maxima and the per-hop sketches come
back; bad input is counted, explained and confined to itself."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import InvalidValueError
from sinks.pint.dynamic import encode_samples
from sinks.pint.engine import Aggregation, Query, plan_queries
from sinks.pint.pathtrace import PathCoding, trace_paths
from sinks.pint.peeling import PathDecode
from sinks.pint.recorder import FlowProblem, Recorder
from sinks.pint.simulate import flow_packet_ids
from sinks.pint.values import ValueCodec, max_aggregate

SEED = 21
QUERIES = [
    Query("path", "switch_id", Aggregation.STATIC_PER_FLOW, 8, 1.0),
    Query("util", "utilisation", Aggregation.PER_PACKET, 8, 0.5),
    Query("lat", "latency", Aggregation.DYNAMIC_PER_FLOW, 8, 0.5, space_budget=100),
]
CODEC = ValueCodec(8, 1.0, 1e6)


def network(flows: int, packets: int, seed: int):
    rng = np.random.default_rng(seed)
    hops = rng.integers(1, 60, size=flows)
    hops[:2] = (36, 59)
    paths = rng.integers(0, 2**32, size=(flows, 59), dtype=np.uint64)
    pids = flow_packet_ids(rng, flows, packets).ravel()
    flow_of = np.repeat(np.arange(flows), packets)
    hop_of = hops[flow_of]
    values = rng.uniform(1.0, 1e5, size=(59, pids.shape[0]))
    return rng, hops, paths, pids, flow_of, hop_of, values


def sink_digests(recorder: Recorder, coding, pids, flow_of, hop_of, paths, values):
    """Each query's switches write their field; the plan places them."""
    plan = recorder.plan
    fields = {
        "path": trace_paths(coding, recorder.hashes("path"), pids, paths, flow_of, hop_of)[0],
        "util": max_aggregate_field(recorder, pids, values, hop_of),
        "lat": encode_samples(pids, values, CODEC, recorder.hashes("lat"), hop_of),
    }
    set_ids = plan.set_ids(recorder.selector.packet_word(pids, "query"))
    return plan.compose(set_ids, fields)


def max_aggregate_field(recorder: Recorder, pids, values, hop_of):
    return max_aggregate(pids, values, CODEC, recorder.hashes("util"), hop_of)[0]


@pytest.fixture(scope="module")
def recorded():
    plan = plan_queries(QUERIES, 16)
    coding = PathCoding(8, 32, 0.5, 0.07)
    recorder = Recorder(plan, SEED, {"path": coding}, {"util": CODEC, "lat": CODEC})
    _, hops, paths, pids, flow_of, hop_of, values = network(24, 6000, 1)
    digests = sink_digests(recorder, coding, pids, flow_of, hop_of, paths, values)
    for lo in range(0, pids.shape[0], 50000):
        part = slice(lo, lo + 50000)
        recorder.ingest(flow_of[part], pids[part], hop_of[part], digests[part])
    return recorder, hops, paths, pids, flow_of, hop_of, values


def test_every_flow_path_decodes(recorded) -> None:
    recorder, hops, paths, *_ = recorded
    results = recorder.paths("path")
    assert sorted(results) == list(range(len(hops)))
    for flow, result in results.items():
        assert isinstance(result, PathDecode)
        assert result.complete
        assert result.path == tuple(int(s) for s in paths[flow, :hops[flow]])
    assert not recorder.problems


def test_maxima_and_sketches(recorded) -> None:
    recorder, hops, _, pids, flow_of, hop_of, values = recorded
    ((flows, got_pids, decoded),) = [
        tuple(np.concatenate(part) for part in zip(*recorder.maxima["util"]))]
    share = got_pids.shape[0] / pids.shape[0]
    assert share == pytest.approx(0.5, abs=0.01)
    index = {int(p): j for j, p in enumerate(pids)}
    rows = np.array([index[int(p)] for p in got_pids])
    assert np.array_equal(flows, flow_of[rows])
    live = np.arange(59)[:, None] < hop_of[rows][None, :]
    truth = np.where(live, values[:, rows], 0).max(axis=0)
    factor = 1 + CODEC.eps
    assert np.all(decoded <= truth * factor * (1 + 1e-12))
    assert np.all(decoded >= truth / factor * (1 - 1e-12))
    sketches = recorder.sketches["lat"]
    assert sketches.k == 100
    keys = set(sketches.sketches)
    assert all(1 <= h <= hops[f] for f, h in keys)
    total = sum(sketches.count(f, h) for f, h in keys)
    assert total == pytest.approx(0.5 * pids.shape[0], rel=0.02)


def test_bad_input_is_counted_and_confined() -> None:
    plan = plan_queries(QUERIES, 16)
    coding = PathCoding.reservoir(8)
    recorder = Recorder(plan, SEED, {"path": coding}, {"util": CODEC, "lat": CODEC})
    _, hops, paths, pids, flow_of, hop_of, values = network(6, 4000, 2)
    hop_of = hop_of.copy()
    bad_flow = 3
    rows = np.flatnonzero(flow_of == bad_flow)
    hop_of[rows[::2]] = hops[bad_flow] % 59 + 1
    digests = sink_digests(recorder, coding, pids, flow_of, hop_of, paths, values)
    recorder.ingest(flow_of, pids, hop_of, digests)
    recorder.record("old-query", flow_of[:10], pids[:10], hop_of[:10], digests[:10])
    assert recorder.problems["unknown-query"] == 10
    assert any("'old-query'" in e and "lat, path, util" in e for e in recorder.explanations)
    results = recorder.paths("path")
    recorder.paths("path")
    assert recorder.problems["bad-flow"] == 1
    problem = results[bad_flow]
    assert isinstance(problem, FlowProblem)
    assert "hop counts" in problem.reason and f"flow {bad_flow}" in problem.reason
    for flow, result in results.items():
        if flow != bad_flow:
            assert result.complete
            assert result.path == tuple(int(s) for s in paths[flow, :hops[flow]])


def test_missing_codings_and_wrong_queries_are_one_line_errors() -> None:
    plan = plan_queries(QUERIES, 16)
    with pytest.raises(InvalidValueError, match="'path' .static-per-flow. needs a path coding"):
        Recorder(plan, SEED, {}, {"util": CODEC, "lat": CODEC})
    with pytest.raises(InvalidValueError, match="'lat' .dynamic-per-flow. needs a value codec"):
        Recorder(plan, SEED, {"path": PathCoding.reservoir(8)}, {"util": CODEC})
    recorder = Recorder(plan, SEED, {"path": PathCoding.reservoir(8)},
                        {"util": CODEC, "lat": CODEC})
    with pytest.raises(InvalidValueError, match="'util' is not a path-tracing query"):
        recorder.paths("util")
