"""Topology generators, deterministic for given parameters and seed.

Addressing shared by all generators: the j-th host (1-based) of the t-th
switch that has hosts gets IP 10.(t>>8).(t&255).j/24, so hosts of one access
switch share a /24; host number i (1-based, in order of creation) gets MAC
00:00:00:00:(i>>8):(i&255), as Mininet numbers h1, h2, ... Switch device ids
are 0..N-1 in order of creation. Switch ports toward hosts come first.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common.errors import Loc
from topologies.model import Topology, TopologyError

# Hosts per access switch are bounded by the last octet (1..254).
MAX_HOSTS_PER_SWITCH = 254
# Host numbers fill the two low MAC bytes.
MAX_HOSTS = 0xFFFF
YAML_DIR = Path(__file__).resolve().parent


class _Addresses:
    """Hands out host IPs and MACs by the scheme in the module docstring."""

    def __init__(self) -> None:
        self.hosts = 0
        self.subnets = 0

    def attach(self, topo: Topology, switch: str, count: int, first_port: int = 1) -> None:
        """Add ``count`` hosts on ``switch`` ports first_port, first_port+1, ..."""
        if count == 0:
            return
        if not 1 <= count <= MAX_HOSTS_PER_SWITCH:
            raise TopologyError(f"hosts per switch must be in 0..{MAX_HOSTS_PER_SWITCH}, "
                                f"not {count}")
        self.subnets += 1
        t = self.subnets
        for j in range(1, count + 1):
            self.hosts += 1
            i = self.hosts
            if i > MAX_HOSTS:
                raise TopologyError(f"more than {MAX_HOSTS} hosts")
            name = f"h{i}"
            topo.add_host(name, f"00:00:00:00:{i >> 8:02x}:{i & 0xFF:02x}",
                          f"10.{t >> 8}.{t & 0xFF}.{j}")
            topo.add_link(name, switch, b_port=first_port + j - 1)


def _check(name: str, value: Any, low: int, *, even: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise TopologyError(f"{name} must be an integer >= {low}, not {value!r}")
    if even and value % 2:
        raise TopologyError(f"{name} must be even, not {value}")
    return value


def fat_tree(k: int = 4, *, pods: int | None = None, name: str | None = None) -> Topology:
    """A k-ary fat-tree (Al-Fares et al., SIGCOMM 2008): (k/2)^2 spines, k pods of
    k/2 leaves (aggregation) and k/2 ToRs (edge), k/2 hosts per ToR: k^3/4 hosts.

    ``pods`` keeps only the first pods (each spine then has one port per pod).
    Ports: a ToR's hosts on 1..k/2 and leaves on k/2+1..k; a leaf's ToRs on
    1..k/2 and spines on k/2+1..k; spine port p leads to pod p. Leaf j of every
    pod connects to spines j*k/2+1 .. (j+1)*k/2, so a ToR reaches another pod
    over k/2 equal-cost uplinks.
    """
    _check("k", k, 2, even=True)
    half = k // 2
    pods = k if pods is None else _check("pods", pods, 1)
    if pods > k:
        raise TopologyError(f"a k={k} fat-tree has {k} pods, not {pods}")
    topo = Topology(name or f"fat-tree-k{k}")
    spines = [f"spine{i + 1}" for i in range(half * half)]
    leaves = [[f"leaf{p * half + j + 1}" for j in range(half)] for p in range(pods)]
    tors = [[f"tor{p * half + e + 1}" for e in range(half)] for p in range(pods)]
    for switch in spines + sum(leaves, []) + sum(tors, []):
        topo.add_switch(switch)
    addresses = _Addresses()
    for pod in tors:
        for tor in pod:
            addresses.attach(topo, tor, half)
    for p in range(pods):
        for e, tor in enumerate(tors[p]):
            for j, leaf in enumerate(leaves[p]):
                topo.add_link(tor, leaf, half + j + 1, e + 1)
    for p in range(pods):
        for j, leaf in enumerate(leaves[p]):
            for c in range(half):
                topo.add_link(leaf, spines[j * half + c], half + c + 1, p + 1)
    return topo


def intlabel_fabric() -> Topology:
    """INT-label's evaluation network: two pods of a k=4 fat-tree, i.e. 4
    spines, 4 leaves, 4 ToRs and 8 servers, 40 switch ports in all."""
    return fat_tree(4, pods=2, name="intlabel-fabric")


def _small_world(n: int, k: int, p: float, seed: int) -> list[tuple[int, int]]:
    """The edges (u < v, sorted) of networkx's connected_watts_strogatz_graph:
    ring of k nearest neighbours, each edge rewired with probability p,
    retried until connected."""
    import networkx as nx

    _check("n", n, 2)
    _check("k", k, 2)
    if k >= n:
        raise TopologyError(f"k must be smaller than n ({n}), not {k}")
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 <= p <= 1.0:
        raise TopologyError(f"p must be a probability in [0, 1], not {p!r}")
    _check("seed", seed, 0)
    try:
        graph = nx.connected_watts_strogatz_graph(n, k, p, tries=1000, seed=seed)
    except nx.NetworkXError as exc:
        raise TopologyError(f"watts-strogatz n={n} k={k} p={p} seed={seed}: {exc}") from None
    return sorted(tuple(sorted(edge)) for edge in graph.edges())


def watts_strogatz(n: int = 20, k: int = 4, p: float = 0.1, seed: int = 0,
                   hosts_per_switch: int = 1) -> Topology:
    """A connected Watts-Strogatz small world of ``n`` switches (networkx's
    connected_watts_strogatz_graph: ring of k nearest neighbours, each edge
    rewired with probability p, retried until connected), hosts on every switch."""
    edges = _small_world(n, k, p, seed)
    _check("hosts_per_switch", hosts_per_switch, 0)
    topo = Topology(f"watts-strogatz-n{n}-k{k}-p{p:g}-s{seed}")
    names = [f"s{i + 1}" for i in range(n)]
    for switch in names:
        topo.add_switch(switch)
    addresses = _Addresses()
    for switch in names:
        addresses.attach(topo, switch, hosts_per_switch)
    for u, v in edges:
        topo.add_link(names[u], names[v])
    return topo


def gpint_ws(n: int = 20, k: int = 4, p: float = 0.1, seed: int = 0, hosts: int = 60,
             link_loss: float = 0.0, queue_depth: int = 1000) -> Topology:
    """GPINT's evaluation network (Simsek et al., section V-A): the connected
    Watts-Strogatz small world of :func:`watts_strogatz` with ``hosts`` hosts
    in all (60 in the paper), ``queue_depth`` packets per egress queue (1000 in
    the paper) and Bernoulli loss ``link_loss`` (the paper's link degradation,
    5-20%) on switch-to-switch links only.

    Hosts are dealt round-robin: switch i (0-based) gets hosts // n hosts, one
    more when i < hosts % n, numbered and addressed by the module's scheme.

    The GPINT monitor is not part of the topology: it is the collector host
    that every target already wires to port ``COLLECTOR_PORT`` (500) of every
    switch when a run attaches it (``Network.attach_collector``). That wiring
    is lossless and off the data links, which is what the paper asks of the
    orchestrator-to-switch links (excluded from link degradation), and it
    keeps the probes' monitor port the same on every switch.
    """
    edges = _small_world(n, k, p, seed)
    _check("hosts", hosts, 0)
    _check("queue_depth", queue_depth, 1)
    if (isinstance(link_loss, bool) or not isinstance(link_loss, int | float)
            or not 0.0 <= link_loss <= 1.0):
        raise TopologyError(f"link_loss must be a probability in [0, 1], not {link_loss!r}")
    topo = Topology(f"gpint-ws-n{n}-k{k}-p{p:g}-s{seed}")
    names = [f"s{i + 1}" for i in range(n)]
    for switch in names:
        topo.add_switch(switch, queue_depth=queue_depth)
    addresses = _Addresses()
    for i, switch in enumerate(names):
        addresses.attach(topo, switch, hosts // n + (1 if i < hosts % n else 0))
    for u, v in edges:
        topo.add_link(names[u], names[v], loss=float(link_loss))
    return topo


def line(n: int = 3, hosts_per_switch: int = 1) -> Topology:
    """``n`` switches in a row, s1 - s2 - ... - sn, each with its own hosts
    (one by default), so every switch is some flow's first, transit and last
    hop. A switch's hosts sit on ports 1.., then its left and right neighbour."""
    _check("n", n, 1)
    _check("hosts_per_switch", hosts_per_switch, 0)
    topo = Topology(f"line-{n}")
    names = [f"s{i + 1}" for i in range(n)]
    for switch in names:
        topo.add_switch(switch)
    addresses = _Addresses()
    for switch in names:
        addresses.attach(topo, switch, hosts_per_switch)
    for left, right in zip(names, names[1:]):
        topo.add_link(left, right)
    return topo


GENERATORS: dict[str, Callable[..., Topology]] = {
    "intlabel-fabric": intlabel_fabric,
    "fat-tree": fat_tree,
    "watts-strogatz": watts_strogatz,
    "line": line,
    "gpint-ws": gpint_ws,
}


def generator_params(name: str) -> dict[str, Any]:
    """Parameter names of a generator with their defaults (name="..." excluded)."""
    generator = _generator(name)
    return {p.name: p.default for p in inspect.signature(generator).parameters.values()
            if p.name != "name"}


def build_topology(name: str | Path, **params: Any) -> Topology:
    """A generator by registry name, or a topology YAML file: a path, or the
    name of one of the YAML files shipped in ``topologies/``. Parameters set to
    None are left at the generator's default."""
    params = {key: value for key, value in params.items() if value is not None}
    if str(name) in GENERATORS:
        known = generator_params(str(name))
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise TopologyError(
                f"topology '{name}' takes no parameter {', '.join(unknown)} "
                f"(it takes: {', '.join(known) or 'none'})")
        return GENERATORS[str(name)](**params)
    path = Path(name)
    if not path.is_file() and path.suffix == "" and (YAML_DIR / f"{name}.yaml").is_file():
        path = YAML_DIR / f"{name}.yaml"
    if path.is_file():
        if params:
            raise TopologyError(f"a topology file takes no parameters "
                                f"(got {', '.join(sorted(params))})")
        return Topology.load_yaml(path)
    if path.suffix.lower() in (".yaml", ".yml", ".json") or len(path.parts) > 1:
        raise TopologyError("no such file: a topology file must exist "
                            f"(or name a generator: {', '.join(choices())})", Loc(str(path), 0))
    raise TopologyError(f"unknown topology '{name}': choose one of {', '.join(choices())}, "
                        "or give a YAML file")


def choices() -> list[str]:
    """Generator names, then the names of the shipped YAML files."""
    shipped = sorted(p.stem for p in YAML_DIR.glob("*.yaml") if p.stem not in GENERATORS)
    return list(GENERATORS) + shipped


def _generator(name: str) -> Callable[..., Topology]:
    try:
        return GENERATORS[name]
    except KeyError:
        raise TopologyError(f"unknown generator '{name}': choose one of "
                            f"{', '.join(GENERATORS)}") from None
