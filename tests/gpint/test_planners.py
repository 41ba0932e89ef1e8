"""INT path planners: coverage, balance, Euler's edge cover, determinism and errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass

import networkx as nx
import pytest

from controller.gpint.planners import (
    PLANNERS,
    PlannerError,
    euler_paths,
    gpint_paths,
    k_for,
    path_stats,
    plan,
    snmp_paths,
)

GRAPHS = 200
VARIANTS = (2, 3, 5)


def small_world(n: int, seed: int) -> nx.Graph:
    """The paper's kind of network: connected Watts-Strogatz, 4 neighbours, p = 0.1."""
    graph = nx.connected_watts_strogatz_graph(n, 4, 0.1, tries=1000, seed=seed)
    return nx.relabel_nodes(graph, {i: f"s{i + 1}" for i in graph})


def size(seed: int) -> int:
    """20..100 switches, every size hit (37 is prime to 81)."""
    return 20 + (seed * 37) % 81


@dataclass
class Planned:
    graph: nx.Graph
    gpint: dict[int, list[list[str]]]
    euler: list[list[str]]


@pytest.fixture(scope="module")
def planned() -> list[Planned]:
    out = []
    for seed in range(GRAPHS):
        graph = small_world(size(seed), seed)
        out.append(Planned(graph, {c: gpint_paths(graph, k_for(len(graph), c), seed)
                                   for c in VARIANTS}, euler_paths(graph, seed)))
    return out


def odd_switches(graph: nx.Graph) -> int:
    return sum(1 for v in graph if graph.degree(v) % 2)


def links_walked(paths: list[list[str]]) -> Counter[frozenset[str]]:
    return Counter(frozenset(pair) for path in paths for pair in zip(path, path[1:]))


def test_sizes_span_20_to_100() -> None:
    assert {size(seed) for seed in range(GRAPHS)} == set(range(20, 101))


def test_gpint_covers_every_switch_in_k_balanced_walks(planned: list[Planned]) -> None:
    for case in planned:
        n = len(case.graph)
        for c, paths in case.gpint.items():
            stats = path_stats(paths, case.graph)  # raises unless every path is a walk
            assert stats.paths == k_for(n, c)
            assert stats.covered == stats.switches == n
            # The bound gpint_paths documents: lengths differ by at most one.
            assert stats.balance <= 1, (n, c, stats.lengths)


def test_euler_walks_every_link_exactly_once(planned: list[Planned]) -> None:
    for case in planned:
        graph, paths = case.graph, case.euler
        assert len(paths) == max(1, odd_switches(graph) // 2)
        assert links_walked(paths) == Counter(frozenset(e) for e in graph.edges())
        stats = path_stats(paths, graph)
        assert stats.covered == len(graph)
        assert stats.edges_covered == stats.edges == graph.number_of_edges()


def test_same_seed_same_paths(planned: list[Planned]) -> None:
    for seed, case in enumerate(planned[:20]):
        graph = small_world(size(seed), seed)
        for c, paths in case.gpint.items():
            assert gpint_paths(graph, k_for(len(graph), c), seed) == paths
        assert euler_paths(graph, seed) == case.euler


PLAN_SCRIPT = """
import json, networkx as nx
from controller.gpint.planners import plan
g = nx.relabel_nodes(nx.connected_watts_strogatz_graph(60, 4, 0.1, seed=5),
                     lambda i: f"s{i + 1}")
print(json.dumps({name: plan(name, g, 5) for name in ("gpint-2", "gpint-5", "euler")}))
"""


def test_paths_do_not_depend_on_string_hashing(repo_root: object) -> None:
    """Sets of switch names iterate in hash order, which Python salts per process."""
    outputs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(repo_root)}
        result = subprocess.run([sys.executable, "-c", PLAN_SCRIPT], env=env, check=True,
                                capture_output=True, text=True)
        outputs.append(json.loads(result.stdout))
    assert outputs[0] == outputs[1]


def test_other_seeds_change_ties_not_guarantees() -> None:
    graph = small_world(40, 1)
    plans = [gpint_paths(graph, 8, seed) for seed in range(5)]
    assert len({json.dumps(p) for p in plans}) > 1
    for paths in plans:
        stats = path_stats(paths, graph)
        assert (stats.covered, stats.paths) == (40, 8) and stats.balance <= 1


@pytest.mark.parametrize("graph", [
    nx.star_graph(12),  # leaves force walks back through the hub
    nx.path_graph(17),
    nx.cycle_graph(11),
    nx.complete_graph(9),
    nx.grid_2d_graph(5, 6),
    nx.barbell_graph(6, 3),
    nx.lollipop_graph(5, 8),
    nx.random_labeled_tree(40, seed=3),
    nx.barabasi_albert_graph(60, 1, seed=2),
], ids=["star", "path", "cycle", "complete", "grid", "barbell", "lollipop", "tree", "ba"])
def test_balance_bound_on_any_connected_graph(graph: nx.Graph) -> None:
    n = len(graph)
    for k in sorted({1, 2, 3, n // 4, n // 2, n - 1, n} - {0}):
        paths = gpint_paths(graph, k, seed=0)
        stats = path_stats(paths, graph)
        assert (stats.paths, stats.covered) == (k, n)
        assert stats.balance <= 1, (k, stats.lengths)


def test_k_equal_to_the_switches_and_k_one() -> None:
    graph = small_world(20, 0)
    assert sorted(v for (v,) in gpint_paths(graph, 20)) == sorted(graph)
    (walk,) = gpint_paths(graph, 1)
    assert set(walk) == set(graph)
    assert gpint_paths(nx.relabel_nodes(nx.empty_graph(1), {0: "s1"}), 1) == [["s1"]]


def test_k_for_is_the_papers_formula() -> None:
    assert [k_for(20, c) for c in VARIANTS] == [4, 6, 10]
    assert [k_for(100, c) for c in VARIANTS] == [20, 30, 50]
    assert [k_for(57, c) for c in VARIANTS] == [11, 17, 28]  # floor
    with pytest.raises(PlannerError, match="not one of the paper's 2, 3, 5"):
        k_for(20, 4)


def test_euler_small_cases() -> None:
    cycle = nx.cycle_graph(["a", "b", "c", "d"])
    (closed,) = euler_paths(cycle)
    assert len(closed) == 5 and closed[0] == closed[-1]
    assert euler_paths(nx.path_graph(["a", "b", "c"])) in ([["a", "b", "c"]], [["c", "b", "a"]])
    star = nx.star_graph(4)  # 4 odd leaves, even hub: two trails leaf-hub-leaf
    paths = euler_paths(star)
    assert sorted(len(p) for p in paths) == [3, 3] and all(p[1] == 0 for p in paths)
    assert euler_paths(nx.empty_graph(1)) == [[0]]


def test_snmp_one_switch_per_path() -> None:
    graph = small_world(30, 2)
    paths = snmp_paths(graph)
    assert paths == [[v] for v in graph]
    stats = path_stats(paths, graph)
    assert (stats.paths, stats.covered, stats.balance, stats.repeats, stats.edges_covered) == (
        30, 30, 0, 0, 0)


def test_path_stats_counts() -> None:
    graph = nx.path_graph(["a", "b", "c", "d"])
    graph.add_edge("b", "d")
    stats = path_stats([["a", "b", "c"], ["c", "d", "b"]], graph)
    assert stats.as_dict() == {
        "paths": 2, "lengths": [3, 3], "shortest": 3, "longest": 3, "mean": 3.0,
        "balance": 0, "overlaps": 2, "repeats": 2, "covered": 4, "switches": 4,
        "edges_covered": 4, "edges": 4}
    stats = path_stats([["a", "b", "a"], ["d"]], graph)
    assert (stats.overlaps, stats.repeats, stats.covered, stats.balance) == (0, 1, 3, 2)


@pytest.mark.parametrize(("paths", "message"), [
    ([], "a plan needs at least one path"),
    ([["a"], []], "path 2 is empty"),
    ([["a", "x"]], "path 1: unknown switch 'x'"),
    ([["a", "c"]], "path 1: no link between 'a' and 'c'"),
])
def test_path_stats_refuses_what_is_no_walk(paths: list[list[str]], message: str) -> None:
    with pytest.raises(PlannerError, match=message):
        path_stats(paths, nx.path_graph(["a", "b", "c"]))


def test_registry_matches_the_functions() -> None:
    graph = small_world(50, 4)
    assert list(PLANNERS) == ["gpint-2", "gpint-3", "gpint-5", "gpint-k", "euler", "snmp"]
    for c in VARIANTS:
        assert plan(f"gpint-{c}", graph, 4) == gpint_paths(graph, k_for(50, c), 4)
    assert plan("gpint-k", graph, 4, k=7) == gpint_paths(graph, 7, 4)
    assert plan("euler", graph, 4) == euler_paths(graph, 4)
    assert plan("snmp", graph, 4) == snmp_paths(graph)
    # Parallel links of a topology's MultiGraph count once.
    multi = nx.MultiGraph(graph)
    multi.add_edges_from(list(graph.edges()))
    assert plan("euler", multi, 4) == euler_paths(graph, 4)


def two_islands() -> nx.Graph:
    return nx.union(nx.path_graph(["a", "b"]), nx.cycle_graph(["c", "d", "e"]))


@pytest.mark.parametrize(("call", "message"), [
    (lambda: gpint_paths(small_world(20, 0), 21), r"^error: k>\|V\|: 21 paths for 20 switches"),
    (lambda: gpint_paths(small_world(20, 0), 0), "GPINT needs k >= 1 paths, not 0"),
    (lambda: gpint_paths(small_world(20, 0), True), "GPINT needs k >= 1 paths"),
    (lambda: gpint_paths(two_islands(), 2), "not connected: 2 components"),
    (lambda: euler_paths(two_islands()), "not connected: 2 components"),
    (lambda: plan("snmp", two_islands()), "not connected: 2 components"),
    (lambda: gpint_paths(nx.Graph(), 1), "the switch graph is empty"),
    (lambda: euler_paths(nx.DiGraph([("a", "b")])), "must be undirected"),
    (lambda: plan("ospf", small_world(20, 0)),
     "unknown planner 'ospf': choose one of gpint-2, gpint-3, gpint-5, gpint-k, euler, snmp$"),
    (lambda: plan("gpint-k", small_world(20, 0)), "gpint-k needs the number of paths k"),
    (lambda: plan("gpint-k", small_world(20, 0), k=30), r"k>\|V\|: 30 paths"),
    (lambda: plan("euler", small_world(20, 0), k=3),
     r"planner 'euler' takes no parameter k \(it takes: none\)"),
    (lambda: plan("gpint-2", nx.path_graph(4)),
     r"floor\(2\*\|V\|/10\) = 0 paths for 4 switches: it needs at least 5 switches"),
])
def test_errors_say_what_to_change(call: object, message: str) -> None:
    with pytest.raises(PlannerError, match=message):
        call()  # type: ignore[operator]
