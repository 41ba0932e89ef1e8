"""INT path planners: which switches each probe visits, and in what order.

Every planner takes the switch graph (nodes are switch names, one edge per
adjacent pair, as ``Topology.switch_graph()`` gives it) and returns paths:
lists of switch names in probe order, consecutive switches adjacent. A path
is a walk, so it may visit a switch twice (Euler trails do; GPINT only where
covering or balancing needs it). A path's *length* is the number of switches
it visits, i.e. the INT entries its probe carries back.

- :func:`gpint_paths`: GPINT-k (Simsek et al., section III-A), k balanced
  paths covering every switch; :func:`k_for` is the paper's k for GPINT-2/3/5.
- :func:`euler_paths`: INT-path's Euler trails (Pan et al., INFOCOM 2019),
  every link exactly once.
- :func:`snmp_paths`: SNMP-style polling, one switch per request.
- :func:`path_stats` measures a plan; :func:`plan` picks a planner by name.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import networkx as nx

from common.errors import IntbedError
from common.seeds import stream

__all__ = [
    "PLANNERS",
    "PathStats",
    "PlannerError",
    "euler_paths",
    "gpint_paths",
    "k_for",
    "path_stats",
    "plan",
    "snmp_paths",
]

Node = Hashable
Path = list[Node]

# The paper's GPINT variants: k = floor(c * |V| / 10) for these c (section V-B).
GPINT_VARIANTS = (2, 3, 5)


class PlannerError(IntbedError, ValueError):
    """A plan the graph cannot give (k out of range, a disconnected or empty
    graph), an unknown planner, or a path that is no walk of the graph."""


# --------------------------------------------------------------------- GPINT


def k_for(n: int, c: int) -> int:
    """The paper's number of GPINT paths for ``n`` switches: floor(c * n / 10)
    with c = 2, 3 or 5 for GPINT-2, GPINT-3 and GPINT-5 (section V-B)."""
    if c not in GPINT_VARIANTS:
        raise PlannerError(f"GPINT variant c={c!r} is not one of the paper's "
                           f"{', '.join(map(str, GPINT_VARIANTS))}; use gpint-k for other k")
    return c * n // 10


def gpint_paths(graph: nx.Graph, k: int, seed: int = 0) -> list[Path]:
    """GPINT-k: ``k`` paths that cover every switch with nearly equal lengths.

    Section III-A's two phases, Kernighan-Lin style:

    1. Initial partition. Switches are ordered by degree (highest first, the
       ``seed`` breaks ties). Each of the k paths starts at the first switch of
       that order no path holds yet and grows along edges, at its tail and
       then at its head, to |V|/k switches (the first |V| mod k paths one
       more); the next switch is the free neighbour with the fewest free
       neighbours of its own (Warnsdorff's rule, so growth strands few
       switches). A switch no path could reach is then appended to the path
       end that leaves the shortest path, along a shortest route through
       covered switches (those become overlaps).
    2. Exchange. Passes over the switches in that order; for each switch
       every transfer of Fig. 3 involving it is scored and the best one is
       applied if it improves the objectives. A switch or segment joins a path
       after an end switch adjacent to it, or between two consecutive switches
       adjacent to its two ends. (ii-a) an endpoint of one path moves to
       another; (ii-b) a two-switch segment moves, from a path's end or from
       inside it when its two outer neighbours are adjacent; (ii-c) a switch
       joins another path while staying in its own (an overlap); and the
       inverse of (ii-c) drops an endpoint another visit still covers. When a
       pass improves nothing while the lengths still differ by two or more,
       a compound transfer follows: a relay, i.e. a chain of (ii-a) transfers
       from a longest path to one at least two shorter, each path on the
       chain passing an end switch on, so that only the first shrinks and the
       last grows; failing that, every shortest path takes one more switch at
       an end (a joint (ii-c) transfer). Then the passes resume.

    Objectives, compared lexicographically: (1) uncovered switches, (2) the
    balance, i.e. longest minus shortest length, then the sum of squared
    deviations from the mean length, (3) repeated visits (the sum of the
    lengths minus the switches covered: telemetry collected twice). Since
    balance comes before repeats, short paths take overlaps when that evens
    the lengths out.

    Guarantee: every switch is covered, there are exactly k paths, and the
    longest is at most one switch longer than the shortest (balance <= 1).
    Coverage holds after phase 1 and no transfer uncovers a switch. Phase 2
    ends only when the joint transfer is refused, i.e. when the balance b is
    at most 1: with b >= 2 it is always possible (the graph is connected with
    an edge, so every path end has a neighbour) and it raises only the
    shortest paths, to min + 1 <= max - 1, so b drops by one. Every step
    strictly improves the objectives, which are non-negative integers (k
    times the squared deviations is one), so phase 2 terminates.

    ``seed`` breaks ties between switches of equal degree: the same graph
    and seed give the same paths.

    Raises :class:`PlannerError` if k is not in 1..|V| or the graph is not
    connected.
    """
    g = _switch_graph(graph)
    n = g.number_of_nodes()
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise PlannerError(f"GPINT needs k >= 1 paths, not {k!r}")
    if k > n:
        raise PlannerError(f"k>|V|: {k} paths for {n} switches; choose k <= {n} or a "
                           "larger network")
    rng = stream(seed, "gpint")
    shuffled = list(g)
    rng.shuffle(shuffled)
    order = sorted(shuffled, key=lambda v: -g.degree(v))  # stable: ties keep the shuffle
    rank = {v: i for i, v in enumerate(order)}
    nbrs = {v: sorted(g[v], key=rank.__getitem__) for v in order}
    paths = _initial_paths(nbrs, order, k)
    _cover_rest(nbrs, order, paths)
    _Exchange(nbrs, order, paths).run()
    return paths


def _initial_paths(nbrs: dict[Node, list[Node]], order: list[Node], k: int) -> list[Path]:
    """Phase 1: k paths grown from high-degree seeds to about |V|/k switches."""
    n = len(order)
    free = set(order)
    paths: list[Path] = []
    for i in range(k):
        target = n // k + (1 if i < n % k else 0)
        # k <= n and each earlier path holds at most its target, so a seed is left.
        start = next(v for v in order if v in free)
        free.discard(start)
        path = deque([start])
        while len(path) < target:
            for end in (-1, 0):
                options = [w for w in nbrs[path[end]] if w in free]
                if options:
                    break
            else:
                break
            # Fewest free neighbours first; nbrs is in degree order, min is stable.
            step = min(options, key=lambda w: sum(1 for x in nbrs[w] if x in free))
            free.discard(step)
            if end == -1:
                path.append(step)
            else:
                path.appendleft(step)
        paths.append(list(path))
    return paths


def _cover_rest(nbrs: dict[Node, list[Node]], order: list[Node], paths: list[Path]) -> None:
    """Append every switch phase 1 left out to the path end that stays shortest,
    along a shortest route (its inner switches are already covered)."""
    covered = {v for path in paths for v in path}
    while len(covered) < len(order):
        # Multi-source BFS from the uncovered switches: toward[v] is v's next
        # hop on a shortest route to the nearest one.
        dist = {v: 0 for v in order if v not in covered}
        toward: dict[Node, Node] = {}
        queue = deque(dist)
        while queue:
            v = queue.popleft()
            for w in nbrs[v]:
                if w not in dist:
                    dist[w] = dist[v] + 1
                    toward[w] = v
                    queue.append(w)
        _, index, end = min((len(path) + dist[path[end]], index, end)
                            for index, path in enumerate(paths) for end in _ends(path))
        path = paths[index]
        route = [toward[path[end]]]
        while dist[route[-1]]:
            route.append(toward[route[-1]])
        _push(path, end, route)
        covered.add(route[-1])


def _ends(path: Path) -> tuple[int, ...]:
    """The distinct ends of a path: 0 (head) and -1 (tail)."""
    return (0,) if len(path) == 1 else (0, -1)


def _push(path: Path, end: int, nodes: Sequence[Node]) -> None:
    """Extend ``path`` at ``end`` by ``nodes``, listed from the end outwards."""
    if end == -1:
        path.extend(nodes)
    else:
        path[0:0] = reversed(nodes)


@dataclass(frozen=True, slots=True)
class _Move:
    """One transfer: take ``take`` switches from path ``src`` at ``at`` (an
    end, 0 or -1, or the inner index of the first) and put ``put`` into path
    ``dst`` at ``to``: an end (listed from the end outwards) or, for ``to``
    >= 1, between the switches at ``to - 1`` and ``to``."""

    src: int | None
    at: int
    take: int
    dst: int | None
    to: int
    put: tuple[Node, ...]


class _Exchange:
    """Phase 2: the paths, their lengths, each switch's visits, and the moves."""

    def __init__(self, nbrs: dict[Node, list[Node]], order: list[Node],
                 paths: list[Path]) -> None:
        self.adj = {v: set(ws) for v, ws in nbrs.items()}
        self.nbrs = nbrs
        self.order = order
        self.paths = paths
        self.k = len(paths)
        self.visits = dict.fromkeys(order, 0)
        for path in paths:
            for v in path:
                self.visits[v] += 1
        self.lengths = [len(path) for path in paths]
        # No transfer uncovers a switch, so this stays what phase 1 left (0).
        self.uncovered = sum(1 for count in self.visits.values() if count == 0)

    def key(self, deltas: dict[int, int] | None = None) -> tuple[int, int, int, int]:
        """The objectives after changing path lengths by ``deltas``: uncovered,
        balance, k times the squared deviations (an integer), repeated visits."""
        lengths = self.lengths
        if deltas:
            lengths = lengths.copy()
            for index, delta in deltas.items():
                lengths[index] += delta
        total = sum(lengths)
        spread = self.k * sum(length * length for length in lengths) - total * total
        return (self.uncovered, max(lengths) - min(lengths), spread,
                total - len(self.order) + self.uncovered)

    def run(self) -> None:
        while True:
            improved = False
            for x in self.order:
                current = self.key()
                best = min(((self.key(deltas), i, move)
                            for i, (deltas, move) in enumerate(self._moves(x))),
                           default=None, key=lambda c: (c[0], c[1]))
                if best is not None and best[0] < current:
                    self._apply(best[2])
                    improved = True
            if not improved and not self._relay() and not self._level():
                return

    def _moves(self, x: Node) -> Iterator[tuple[dict[int, int], _Move]]:
        """Every Fig. 3 transfer involving switch ``x``, with its length changes."""
        for t, path in enumerate(self.paths):
            if x not in path:
                continue
            if len(path) >= 2:
                for end in (0, -1):
                    if path[end] != x:
                        continue
                    if self.visits[x] >= 2:  # inverse of (ii-c): drop a repeat
                        yield {t: -1}, _Move(t, end, 1, None, 0, ())
                    for s, to, put in self._slots((x,), exclude=t):  # (ii-a)
                        yield {t: -1, s: 1}, _Move(t, end, 1, s, to, put)
                    if len(path) >= 3:  # (ii-b), the segment at t's end
                        pair = (x, path[1] if end == 0 else path[-2])
                        for s, to, put in self._slots(pair, exclude=t):
                            yield {t: -2, s: 2}, _Move(t, end, 2, s, to, put)
            # (ii-b) inside t: a segment whose outer neighbours can be joined.
            for i in range(1, len(path) - 1):
                if path[i] != x:
                    continue
                for j in (i - 1, i):
                    if 1 <= j <= len(path) - 3 and path[j + 2] in self.adj[path[j - 1]]:
                        for s, to, put in self._slots((path[j], path[j + 1]), exclude=t):
                            yield {t: -2, s: 2}, _Move(t, j, 2, s, to, put)
        for s, to, put in self._slots((x,), exclude=None):  # (ii-c)
            yield {s: 1}, _Move(None, 0, 0, s, to, put)

    def _slots(self, nodes: tuple[Node, ...],
               exclude: int | None) -> Iterator[tuple[int, int, tuple[Node, ...]]]:
        """Where a switch or a two-switch segment fits into another path, as
        (path, position, switches in order): after an end switch adjacent to
        it, or between two consecutive switches adjacent to its two ends."""
        adj = self.adj
        first, last = nodes[0], nodes[-1]
        for s, path in enumerate(self.paths):
            if s == exclude or (adj[first].isdisjoint(path) and adj[last].isdisjoint(path)):
                continue
            for end in _ends(path):
                put = _orient(adj, path[end], nodes)
                if put:
                    yield s, end, put
            for i in range(1, len(path)):
                before, after = path[i - 1], path[i]
                if first in adj[before] and last in adj[after]:
                    yield s, i, nodes
                elif len(nodes) == 2 and last in adj[before] and first in adj[after]:
                    yield s, i, nodes[::-1]

    def _apply(self, move: _Move) -> None:
        if move.src is not None:
            path = self.paths[move.src]
            start = len(path) - move.take if move.at == -1 else move.at
            taken = path[start:start + move.take]
            del path[start:start + move.take]
            self.lengths[move.src] -= move.take
            for v in taken:
                self.visits[v] -= 1
                self.uncovered += self.visits[v] == 0
        if move.dst is not None:
            path = self.paths[move.dst]
            if move.to >= 1:
                path[move.to:move.to] = move.put
            else:
                _push(path, move.to, move.put)
            self.lengths[move.dst] += len(move.put)
            for v in move.put:
                self.uncovered -= self.visits[v] == 0
                self.visits[v] += 1

    def _relay(self) -> bool:
        """A chain of (ii-a) transfers from a longest path to one at least two
        shorter: each path on the chain takes the previous one's endpoint and
        hands an end switch on (the end it did not receive at), so only the
        first loses and the last gains a switch. Breadth-first over the paths
        (each at most once); False when balance <= 1 or there is no chain."""
        longest = max(self.lengths)
        if longest - min(self.lengths) < 2:
            return False
        # path -> (ends it may give from, the transfer that fed it or None)
        came: dict[int, tuple[tuple[int, ...], _Move | None]] = {}
        queue: deque[int] = deque()
        for t, length in enumerate(self.lengths):
            if length == longest:
                came[t] = ((0, -1), None)
                queue.append(t)
        while queue:
            t = queue.popleft()
            for end in came[t][0]:
                x = self.paths[t][end]
                for s, to, put in self._slots((x,), exclude=t):
                    if s in came:
                        continue
                    move = _Move(t, end, 1, s, to, put)
                    if self.lengths[s] <= longest - 2:
                        chain = [move]
                        while (fed := came[chain[-1].src][1]) is not None:
                            chain.append(fed)
                        for step in reversed(chain):
                            self._apply(step)
                        return True
                    gives = (0, -1) if to >= 1 else (-1 - to,)  # the other end
                    came[s] = (gives, move)
                    queue.append(s)
        return False

    def _level(self) -> bool:
        """The joint (ii-c) transfer: with balance >= 2, every shortest path
        takes one more switch (the least visited neighbour of one of its
        ends, preferring switches not on it yet). False when balance <= 1."""
        shortest = min(self.lengths)
        if max(self.lengths) - shortest < 2:
            return False
        for s, path in enumerate(self.paths):
            if self.lengths[s] != shortest:
                continue
            on_path = set(path)
            best: tuple[tuple[bool, int], int, Node] | None = None
            for end in _ends(path):
                for w in self.nbrs[path[end]]:
                    score = (w in on_path, self.visits[w])
                    if best is None or score < best[0]:
                        best = (score, end, w)
            assert best is not None  # connected with an edge: every switch has a neighbour
            self._apply(_Move(None, 0, 0, s, best[1], (best[2],)))
        return True


def _orient(adj: dict[Node, set[Node]], a: Node, nodes: tuple[Node, ...]) -> tuple[Node, ...]:
    """``nodes`` (one switch or a segment) ordered to follow end switch ``a``;
    empty if neither of its ends is adjacent to ``a``."""
    if nodes[0] in adj[a]:
        return nodes
    if nodes[-1] in adj[a]:
        return nodes[::-1]
    return ()


# --------------------------------------------------------------------- Euler


def euler_paths(graph: nx.Graph, seed: int = 0) -> list[Path]:
    """INT-path's Euler trails (Pan et al., INFOCOM 2019): the fewest
    edge-disjoint paths that together traverse every link exactly once.

    A connected graph with 2m odd-degree switches needs max(1, m) trails.
    Variant: the odd switches are paired greedily, each (in a seeded order)
    with its nearest unpaired odd switch by hops; a virtual link joins each
    pair, Hierholzer's algorithm (networkx ``eulerian_circuit``) finds an
    Eulerian circuit of the result from a seeded start, and the circuit is
    cut at the virtual links into the m trails. Any pairing gives m trails,
    since virtual links are never travelled and no two are consecutive on the
    circuit (each odd switch has one); the pairing only moves where trails
    end. With no odd switch the circuit itself is the one path (it returns to
    its first switch). A single switch gives one path of itself.
    """
    g = _switch_graph(graph)
    rng = stream(seed, "euler")
    nodes = list(g)
    if g.number_of_edges() == 0:
        return [[nodes[0]]]
    odd = [v for v in nodes if g.degree(v) % 2]
    rng.shuffle(odd)
    multi = nx.MultiGraph(g)
    for a, b in _pair_nearest(g, odd):
        multi.add_edge(a, b, virtual=True)
    start = odd[0] if odd else rng.choice(nodes)
    circuit = list(nx.eulerian_circuit(multi, source=start, keys=True))
    if not odd:
        return [[start, *(v for _, v, _ in circuit)]]
    virtual = [bool(multi.edges[u, v, key].get("virtual")) for u, v, key in circuit]
    first = virtual.index(True)
    # Start just after a virtual link so the circuit ends with one.
    rotated = circuit[first + 1:] + circuit[:first + 1]
    flags = virtual[first + 1:] + virtual[:first + 1]
    paths: list[Path] = []
    current: Path = []
    for (u, v, _), is_virtual in zip(rotated, flags):
        if is_virtual:
            paths.append(current)
            current = []
        else:
            if not current:
                current.append(u)
            current.append(v)
    return paths


def _pair_nearest(g: nx.Graph, odd: list[Node]) -> list[tuple[Node, Node]]:
    """Pair each odd switch, in the given order, with its nearest unpaired one."""
    unpaired = set(odd)
    pairs = []
    for v in odd:
        if v not in unpaired:
            continue
        unpaired.discard(v)
        for _, w in nx.bfs_edges(g, v):
            if w in unpaired:
                unpaired.discard(w)
                pairs.append((v, w))
                break
    return pairs


# ---------------------------------------------------------------------- SNMP


def snmp_paths(graph: nx.Graph) -> list[Path]:
    """SNMP-style polling: the monitor, linked to every switch, asks each one
    directly, so each switch is a path of its own (graph order)."""
    if graph.number_of_nodes() == 0:
        raise PlannerError("the switch graph is empty: nothing to monitor")
    return [[v] for v in graph]


# ---------------------------------------------------------------- statistics


@dataclass(frozen=True, slots=True)
class PathStats:
    """How a plan covers the network and how balanced it is (lengths in
    switches visited per probe)."""

    paths: int
    lengths: tuple[int, ...]
    shortest: int
    longest: int
    mean: float
    balance: int  # longest - shortest
    overlaps: int  # switches on more than one path
    repeats: int  # visits beyond each switch's first: telemetry collected twice
    covered: int  # switches on some path
    switches: int
    edges_covered: int  # links some path traverses
    edges: int

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["lengths"] = list(self.lengths)
        return out


def path_stats(paths: Sequence[Sequence[Node]], graph: nx.Graph) -> PathStats:
    """Measure ``paths`` on ``graph``; raises :class:`PlannerError` on an empty
    plan or path, an unknown switch or consecutive switches with no link."""
    if not paths:
        raise PlannerError("a plan needs at least one path")
    on_paths: dict[Node, int] = {}
    visits = 0
    links: set[frozenset[Node]] = set()
    for number, path in enumerate(paths, 1):
        if not path:
            raise PlannerError(f"path {number} is empty")
        for v in path:
            if v not in graph:
                raise PlannerError(f"path {number}: unknown switch {v!r}")
        for u, v in zip(path, path[1:]):
            if not graph.has_edge(u, v) or u == v:
                raise PlannerError(f"path {number}: no link between {u!r} and {v!r}")
            links.add(frozenset((u, v)))
        for v in set(path):
            on_paths[v] = on_paths.get(v, 0) + 1
        visits += len(path)
    lengths = tuple(len(path) for path in paths)
    return PathStats(
        paths=len(paths), lengths=lengths, shortest=min(lengths), longest=max(lengths),
        mean=visits / len(paths), balance=max(lengths) - min(lengths),
        overlaps=sum(1 for count in on_paths.values() if count > 1),
        repeats=visits - len(on_paths), covered=len(on_paths),
        switches=graph.number_of_nodes(), edges_covered=len(links),
        edges=nx.Graph(graph).number_of_edges())


# ------------------------------------------------------------------ registry


def _gpint_variant(c: int) -> Callable[..., list[Path]]:
    def planner(graph: nx.Graph, seed: int) -> list[Path]:
        n = graph.number_of_nodes()
        k = k_for(n, c)
        if k < 1:
            raise PlannerError(f"gpint-{c} plans floor({c}*|V|/10) = {k} paths for {n} "
                               f"switches: it needs at least {-(-10 // c)} switches")
        return gpint_paths(graph, k, seed)

    planner.__doc__ = f"GPINT-{c}: k = floor({c}|V|/10) paths."
    return planner


def _gpint_k(graph: nx.Graph, seed: int, k: int | None = None) -> list[Path]:
    """GPINT with a chosen k."""
    if k is None:
        raise PlannerError("planner gpint-k needs the number of paths k")
    return gpint_paths(graph, k, seed)


def _euler(graph: nx.Graph, seed: int) -> list[Path]:
    """Euler INT-path trails."""
    return euler_paths(graph, seed)


def _snmp(graph: nx.Graph, seed: int) -> list[Path]:
    """One switch per path."""
    return snmp_paths(graph)


PLANNERS: dict[str, Callable[..., list[Path]]] = {
    **{f"gpint-{c}": _gpint_variant(c) for c in GPINT_VARIANTS},
    "gpint-k": _gpint_k,
    "euler": _euler,
    "snmp": _snmp,
}
_PARAMS: dict[str, frozenset[str]] = {"gpint-k": frozenset({"k"})}


def plan(name: str, graph: nx.Graph, seed: int = 0, **params: Any) -> list[Path]:
    """The paths of planner ``name`` (one of :data:`PLANNERS`) on ``graph``;
    ``params`` are the planner's own (``k`` for gpint-k)."""
    planner = PLANNERS.get(name)
    if planner is None:
        raise PlannerError(f"unknown planner '{name}': choose one of {', '.join(PLANNERS)}")
    unknown = sorted(set(params) - _PARAMS.get(name, frozenset()))
    if unknown:
        takes = ", ".join(sorted(_PARAMS.get(name, ()))) or "none"
        raise PlannerError(f"planner '{name}' takes no parameter {', '.join(unknown)} "
                           f"(it takes: {takes})")
    g = _switch_graph(graph)
    return planner(g, seed, **params)


# ---------------------------------------------------------------- the graph


def _switch_graph(graph: nx.Graph) -> nx.Graph:
    """``graph`` as a simple undirected graph, checked to be one connected network."""
    if graph.is_directed():
        raise PlannerError("the switch graph must be undirected (links are full duplex)")
    if graph.number_of_nodes() == 0:
        raise PlannerError("the switch graph is empty: nothing to monitor")
    g = nx.Graph(graph) if graph.is_multigraph() or nx.number_of_selfloops(graph) else graph
    if g is not graph:
        g.remove_edges_from(list(nx.selfloop_edges(g)))
    components = nx.number_connected_components(g)
    if components > 1:
        raise PlannerError(f"the switch graph is not connected: {components} components; "
                           "every switch must be reachable for probes to visit it")
    return g

