"""``intbed gpint``: GPINT's INT path planning (logic in ``controller.gpint``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

# Listed here so --help does not import the planners; tests check it against PLANNERS.
PLANNER_HELP = "gpint-2, gpint-3, gpint-5, gpint-k (with --paths), euler, snmp"


@click.group()
def gpint() -> None:
    """GPINT with SQR: INT path planning."""


@gpint.command("plan")
@click.option("--topo", "topo_name", default="gpint-ws", show_default=True,
              help="Topology: a generator name or a YAML file.")
@click.option("--n", type=int, default=None, help="Number of switches (generators taking n).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the topology (generators taking one) and of the planner.")
@click.option("--planner", default="gpint-3", show_default=True, help=PLANNER_HELP + ".")
@click.option("--paths", "k", type=int, default=None, help="Number of paths for gpint-k.")
@click.option("--png", type=click.Path(path_type=Path), default=None,
              help="Also draw the paths, each in its own colour (PNG, or SVG/PDF by suffix).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead.")
def plan_command(topo_name: str, n: int | None, seed: int, planner: str, k: int | None,
                 png: Path | None, as_json: bool) -> None:
    """Plan INT paths on a topology's switches and print them with their balance."""
    from common.errors import IntbedError
    from controller.gpint.planners import path_stats, plan
    from topologies.generators import GENERATORS, build_topology, generator_params

    params: dict[str, Any] = {"n": n}
    if topo_name in GENERATORS and "seed" in generator_params(topo_name):
        params["seed"] = seed
    topo = build_topology(topo_name, **params)
    if k is not None and planner != "gpint-k":
        raise IntbedError(f"--paths sets k for --planner gpint-k, not for {planner}")
    if k is None and planner == "gpint-k":
        raise IntbedError("--planner gpint-k needs --paths K, the number of paths")
    graph = topo.switch_graph()
    paths = plan(planner, graph, seed, **({} if k is None else {"k": k}))
    stats = path_stats(paths, graph)
    if png is not None:
        from controller.gpint.draw import draw_paths

        try:
            draw_paths(graph, paths, png, title=f"{planner} on {topo.name}")
        except (OSError, ValueError) as exc:  # ValueError: a suffix matplotlib cannot write
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise IntbedError(f"cannot write the drawing {png}: {reason}") from None
    if as_json:
        click.echo(json.dumps({"topology": topo.name, "planner": planner, "seed": seed,
                               "paths": paths, "stats": stats.as_dict()}))
        return
    for number, path in enumerate(paths, 1):
        click.echo(f"path {number} ({len(path)}): {' '.join(map(str, path))}")
    _print_stats(f"{planner} on {topo.name}", stats)
    if png is not None:
        click.echo(f"drawing written to {png}")


def _print_stats(title: str, stats: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_header=False)
    table.add_column("what", no_wrap=True)
    table.add_column("value", justify="right")
    rows = [
        ("paths", stats.paths),
        ("length min / mean / max", f"{stats.shortest} / {stats.mean:.2f} / {stats.longest}"),
        ("balance (max - min)", stats.balance),
        ("switches covered", f"{stats.covered} of {stats.switches}"),
        ("switches on several paths", stats.overlaps),
        ("repeated visits", stats.repeats),
        ("links walked", f"{stats.edges_covered} of {stats.edges}"),
    ]
    for label, value in rows:
        table.add_row(label, str(value))
    Console(soft_wrap=True).print(table)
