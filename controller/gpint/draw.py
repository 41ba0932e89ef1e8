"""Drawings of INT path plans: the switch graph with each path in its own colour.

Matplotlib through its Agg canvas (no pyplot, so no global figure state and
no display needed); a seeded spring layout, so drawings repeat.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from pathlib import Path

import networkx as nx

# Up to this many paths get a legend and tab20's distinct colours; more share a hue circle.
DISTINCT_COLOURS = 20
LAYOUT_SEED = 0


def draw_paths(graph: nx.Graph, paths: Sequence[Sequence[Hashable]], file: str | Path,
               title: str = "") -> None:
    """Write ``graph`` with ``paths`` drawn over it to exactly ``file`` (format
    from the suffix, PNG without one). A switch takes the colour of the first
    path visiting it; switches on more than one path get a thick black rim.
    Raises OSError if ``file`` cannot be written, ValueError for a format
    matplotlib cannot write."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    k = len(paths)
    if k <= DISTINCT_COLOURS:
        colours = [matplotlib.colormaps["tab20"](i) for i in range(k)]
    else:
        colours = [matplotlib.colormaps["hsv"](i / k) for i in range(k)]
    pos = nx.spring_layout(graph, seed=LAYOUT_SEED)
    first: dict[Hashable, int] = {}
    on_paths: dict[Hashable, int] = {}
    for i, path in enumerate(paths):
        for v in dict.fromkeys(path):
            first.setdefault(v, i)
            on_paths[v] = on_paths.get(v, 0) + 1
    size = max(6.0, min(20.0, 0.12 * len(graph) + 5))
    fig = Figure(figsize=(size, size * 0.75))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_axis_off()
    lengths = [len(path) for path in paths]
    ax.set_title(f"{title + ': ' if title else ''}{k} paths, {len(graph)} switches, "
                 f"lengths {min(lengths)}-{max(lengths)}")
    nx.draw_networkx_edges(graph, pos, ax=ax, edge_color="#cccccc", width=0.8)
    for i, path in enumerate(paths):
        edges = list(zip(path, path[1:]))
        if edges:
            nx.draw_networkx_edges(graph, pos, edgelist=edges, ax=ax, edge_color=[colours[i]],
                                   width=2.5)
    nodes = list(graph)
    small = len(nodes) <= 60
    nx.draw_networkx_nodes(
        graph, pos, nodelist=nodes, ax=ax, node_size=260 if small else 90,
        node_color=[colours[first[v]] if v in first else "#ffffff" for v in nodes],
        edgecolors=["black" if on_paths.get(v, 0) > 1 else "#555555" for v in nodes],
        linewidths=[2.5 if on_paths.get(v, 0) > 1 else 0.5 for v in nodes])
    if small:
        nx.draw_networkx_labels(graph, pos, ax=ax, font_size=6)
    if k <= DISTINCT_COLOURS:
        ax.legend(handles=[Line2D([], [], color=colours[i], lw=2.5,
                                  label=f"path {i + 1} ({lengths[i]})") for i in range(k)],
                  loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    fig.tight_layout()
    # An explicit format: without one, matplotlib would add ".png" to a bare name.
    fig.savefig(str(file), format=Path(file).suffix.lstrip(".").lower() or "png", dpi=110)
