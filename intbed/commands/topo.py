"""``intbed topo``: build a topology by generator name or YAML file, print a
summary, draw it and save it as YAML (logic in ``topologies``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click


def _params(func: Callable[..., Any]) -> Callable[..., Any]:
    """The generator parameters every subcommand accepts."""
    options = [
        click.option("--k", type=int, default=None,
                     help="fat-tree arity (even) / Watts-Strogatz ring neighbours."),
        click.option("--n", type=int, default=None, help="Number of switches."),
        click.option("--p", type=float, default=None, help="Watts-Strogatz rewiring probability."),
        click.option("--seed", type=int, default=None, help="Random seed."),
        click.option("--hosts-per-switch", type=int, default=None,
                     help="Hosts on each switch (watts-strogatz, line)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _build(name: str, params: dict[str, Any]) -> Any:
    from topologies.generators import build_topology

    return build_topology(name, **params)


@click.group()
def topo() -> None:
    """Network topologies: generators and YAML descriptions."""


@topo.command()
@click.argument("name")
@_params
@click.option("--png", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also draw the topology to this file (PNG, or SVG/PDF by suffix).")
def show(name: str, png: Path | None, **params: Any) -> None:
    """Print a summary of topology NAME and optionally draw it.

    \b
    NAME is a generator (intlabel-fabric, fat-tree, watts-strogatz, line, gpint-ws),
    a shipped topology, or a YAML file.
    """
    from rich.console import Console
    from rich.table import Table

    from intbed.outputs import check_figure_file
    from topologies.draw import draw, summarize

    if png is not None:
        check_figure_file(png, "--png")
    topology = _build(name, params)
    summary = summarize(topology)
    table = Table(title=f"topology {topology.name}", show_header=False)
    table.add_column("what", no_wrap=True)
    table.add_column("value", justify="right")
    rows = [
        ("switches", summary.switches),
        ("hosts", summary.hosts),
        ("links", summary.links),
        ("switch ports", summary.switch_ports),
        ("diameter (switch hops)", _or_dash(summary.diameter)),
        ("diameter (host to host links)", _or_dash(summary.host_diameter)),
        ("connected", "yes" if summary.connected else "no"),
    ]
    for label, value in rows:
        table.add_row(label, str(value))
    Console(soft_wrap=True).print(table)
    if png is not None:
        draw(topology, png)
        click.echo(f"drawing written to {png}")


@topo.command()
@click.argument("name")
@_params
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="YAML file to write.")
def save(name: str, output: Path, **params: Any) -> None:
    """Write topology NAME as an editable YAML file."""
    from intbed.outputs import check_output_file

    check_output_file(output, "--output")
    topology = _build(name, params)
    topology.save_yaml(output)
    click.echo(f"{topology.name} written to {output}")


def _or_dash(value: int | None) -> str:
    return "-" if value is None else str(value)
