"""The query engine: plans honour every query's frequency and bits, tile
the hash space, and over-budget query sets are refused with the reason."""

from __future__ import annotations

import json

import numpy as np
import pytest

from common.errors import InvalidValueError
from sinks.pint.engine import Aggregation, Query, plan_queries

PP, ST, DY = Aggregation.PER_PACKET, Aggregation.STATIC_PER_FLOW, Aggregation.DYNAMIC_PER_FLOW


def covered(plan, name: str) -> float:
    """Fraction of the 32-bit q-word space whose range runs query ``name``."""
    ids = {s.set_id for s in plan.sets if any(p.query == name for p in s.placements)}
    return sum(r.hi - r.lo + 1 for r in plan.ranges if r.set_id in ids) / 2**32


def check_plan(plan, queries) -> None:
    previous = -1
    for r in plan.ranges:
        assert r.lo == previous + 1 or r.lo > previous
        assert r.hi >= r.lo
        previous = r.hi
    for qset in plan.sets:
        used = np.zeros(plan.budget, dtype=int)
        for p in qset.placements:
            assert p.offset >= 0 and p.offset + p.width <= plan.budget
            assert p.width == plan.queries[p.query].bits
            used[p.offset:p.offset + p.width] += 1
        assert used.max() <= 1
    for q in queries:
        assert covered(plan, q.name) == pytest.approx(q.frequency, abs=1e-9)
        assert plan.query_fraction(q.name) == pytest.approx(q.frequency, abs=1e-9)


def test_figure_3_style_plan() -> None:
    queries = [
        Query("Q1", "switch_id", ST, 8, 0.3),
        Query("Q2", "latency", DY, 16, 0.4),
        Query("Q3", "switch_id", ST, 16, 0.3),
        Query("Q4", "queue", PP, 8, 0.3),
    ]
    plan = plan_queries(queries, 16)
    check_plan(plan, queries)
    sets = {frozenset(p.query for p in s.placements): s.probability for s in plan.sets}
    assert sets == pytest.approx({frozenset({"Q2"}): 0.4, frozenset({"Q3"}): 0.3,
                                  frozenset({"Q1", "Q4"}): 0.3})
    assert plan.idle_probability == pytest.approx(0.0, abs=1e-9)
    words = np.arange(0, 2**32, 4099, dtype=np.uint64)
    ids = plan.set_ids(words)
    for s in plan.sets:
        assert np.mean(ids == s.set_id) == pytest.approx(s.probability, abs=1e-3)


@pytest.mark.parametrize("budget", [8, 16, 32])
def test_random_query_sets_that_fit_are_planned_exactly(budget: int) -> None:
    rng = np.random.default_rng(budget)
    planned = 0
    for _ in range(200):
        n = int(rng.integers(1, 6))
        widths = rng.choice([w for w in (4, 8, 16, 32) if w <= budget], size=n)
        freqs = np.round(rng.uniform(0.05, 1.0, size=n), 3)
        queries = [Query(f"q{i}", "v", PP, int(w), float(f))
                   for i, (w, f) in enumerate(zip(widths, freqs))]
        try:
            plan = plan_queries(queries, budget)
        except InvalidValueError as err:
            assert "budget" in str(err)
            continue
        planned += 1
        check_plan(plan, queries)
    assert planned > 50


def test_plan_is_plain_data_and_fields_round_trip() -> None:
    queries = [Query("path", "switch_id", ST, 8), Query("lat", "latency", DY, 8, 0.5)]
    plan = plan_queries(queries, 16)
    data = json.loads(json.dumps(plan.to_dict()))
    assert data["budget"] == 16
    assert {q["query"] for s in data["sets"] for q in s["queries"]} == {"path", "lat"}
    rng = np.random.default_rng(0)
    set_ids = rng.integers(1, len(plan.sets) + 1, size=1000)
    fields = {q.name: rng.integers(0, 256, size=1000) for q in queries}
    digests = plan.compose(set_ids, fields)
    for qset in plan.sets:
        sel = set_ids == qset.set_id
        for p in qset.placements:
            assert np.array_equal(p.extract(digests[sel]), fields[p.query][sel])


def test_over_budget_mass_is_refused_with_the_sum() -> None:
    queries = [Query("path", "switch_id", ST, 16, 0.6), Query("lat", "latency", DY, 16, 0.5)]
    with pytest.raises(InvalidValueError) as err:
        plan_queries(queries, 16)
    text = str(err.value)
    assert "17.6 digest bits" in text and "path 16x0.6" in text and "16 bits" in text


def test_fragmented_budget_is_refused_with_the_query_that_does_not_fit() -> None:
    queries = [Query("wide", "v", PP, 12, 1.0), Query("narrow", "v", PP, 8, 0.5)]
    with pytest.raises(InvalidValueError) as err:
        plan_queries(queries, 16)
    assert "'narrow' (8 bits on 0.5" in str(err.value)
    assert "wide" in str(err.value)


@pytest.mark.parametrize(
    ("queries", "budget", "words"),
    [
        ([Query("a", "v", PP, 8)], 12, "must be one of"),
        ([Query("a", "v", PP, 17)], 16, "between 1 and the global budget 16"),
        ([Query("a", "v", PP, 8, 0.0)], 16, "frequency 0.0"),
        ([Query("a", "v", PP, 8), Query("a", "v", PP, 8)], 16, "unique"),
        ([], 16, "at least one query"),
    ],
)
def test_bad_queries_are_one_line_errors(queries, budget, words) -> None:
    with pytest.raises(InvalidValueError) as err:
        plan_queries(queries, budget)
    assert words in str(err.value)
    assert "\n" not in str(err.value)
