"""Topology summary figures and drawings (networkx + matplotlib).

Tree-like networks (every switch link joins adjacent tiers, counting tiers up
from the hosts: ToR 1, leaf 2, spine 3) are drawn in rows, hosts at the
bottom; anything else gets a seeded spring layout, so drawings repeat.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from topologies.model import Topology

SPRING_SEED = 0


@dataclass(frozen=True, slots=True)
class Summary:
    switches: int
    hosts: int
    links: int
    switch_ports: int
    diameter: int | None  # switch-to-switch hops; None when not connected
    host_diameter: int | None  # links on the longest host-to-host shortest path
    connected: bool


def summarize(topo: Topology) -> Summary:
    import networkx as nx

    graph = nx.Graph(topo.to_networkx())
    connected = graph.number_of_nodes() > 0 and nx.is_connected(graph)
    switches = topo.switch_graph()
    diameter = (nx.diameter(switches) if switches.number_of_nodes()
                and nx.is_connected(switches) else None)
    host_diameter = None
    if connected and len(topo.hosts) > 1:
        host_diameter = max(
            dist for host in topo.hosts
            for other, dist in nx.single_source_shortest_path_length(graph, host).items()
            if other in topo.hosts)
    return Summary(len(topo.switches), len(topo.hosts), len(topo.links),
                   topo.total_switch_ports(), diameter, host_diameter, connected)


def tiers(topo: Topology) -> dict[str, int] | None:
    """Tier of every node (hosts 0, then hop distance from the nearest host),
    or None when some switch link does not join adjacent tiers."""
    tier: dict[str, int] = {host: 0 for host in topo.hosts}
    frontier = list(topo.hosts)
    while frontier:
        following = []
        for node in frontier:
            for peer in topo.neighbors(node):
                if peer not in tier:
                    tier[peer] = tier[node] + 1
                    following.append(peer)
        frontier = following
    if len(tier) != len(topo.switches) + len(topo.hosts) or not topo.hosts:
        return None
    for link in topo.links:
        if abs(tier[link.a] - tier[link.b]) != 1:
            return None
    return tier


def layout(topo: Topology) -> dict[str, tuple[float, float]]:
    """Node positions: rows by tier when the network is tree-like, else spring."""
    tier = tiers(topo)
    if tier is None:
        import networkx as nx

        pos = nx.spring_layout(nx.Graph(topo.to_networkx()), seed=SPRING_SEED)
        return {node: (float(x), float(y)) for node, (x, y) in pos.items()}
    rows: dict[int, list[str]] = {}
    for node in list(topo.switches) + list(topo.hosts):
        rows.setdefault(tier[node], []).append(node)
    widest = max(len(row) for row in rows.values())
    out = {}
    for level, row in rows.items():
        step = widest / len(row)
        for i, node in enumerate(row):
            out[node] = ((i + 0.5) * step, float(level))
    return out


def draw(topo: Topology, path: str | Path) -> None:
    """Write a drawing of ``topo`` to ``path`` (format from the suffix)."""
    import networkx as nx
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    graph = nx.Graph(topo.to_networkx())
    pos = layout(topo)
    size = max(6.0, min(24.0, 0.35 * max(len(topo.switches), len(topo.hosts)) + 4))
    fig = Figure(figsize=(size, size * 0.6))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.set_title(f"{topo.name}: {len(topo.switches)} switches, {len(topo.hosts)} hosts, "
                 f"{len(topo.links)} links")
    small = len(graph) <= 60
    nx.draw_networkx_edges(graph, pos, ax=ax, edge_color="#999999")
    nx.draw_networkx_nodes(graph, pos, nodelist=list(topo.switches), ax=ax, node_shape="s",
                           node_color="#4c72b0", node_size=500 if small else 120)
    nx.draw_networkx_nodes(graph, pos, nodelist=list(topo.hosts), ax=ax, node_shape="o",
                           node_color="#dd8452", node_size=300 if small else 60)
    if small:
        nx.draw_networkx_labels(graph, pos, ax=ax, font_size=7, font_color="black")
    fig.tight_layout()
    fig.savefig(str(path), dpi=120)
