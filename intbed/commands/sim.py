"""``intbed sim``: quick checks of a network on the sim target."""

from __future__ import annotations

import json
import statistics
from typing import Any

import click

from intbed.commands.topo import _params as topology_options


@click.group()
def sim() -> None:
    """Run networks on the sim target (virtual time)."""


@sim.command()
@click.option("--topo", "topo_name", default="intlabel-fabric", show_default=True,
              help="Topology: a generator name or a YAML file.")
@topology_options
@click.option("--program", default="l3_forward", show_default=True,
              help="P4 program every switch runs (name in p4src/ or a .p4 path).")
@click.option("--net-seed", type=int, default=0, show_default=True,
              help="Run seed (losses, P4 random()).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--all", "show_all", is_flag=True, help="List every pair, not only a summary.")
def ping(topo_name: str, program: str, net_seed: int, as_json: bool, show_all: bool,
         **params: Any) -> None:
    """All-pairs ping: reachability and round-trip times against the links'
    delays."""
    from orchestration.apps.ping import PAYLOAD, all_pairs, expected_rtt_us
    from orchestration.sim import build
    from topologies.generators import build_topology

    topo = build_topology(topo_name, **params)
    net = build(topo, program, seed=net_seed)
    results = all_pairs(net)
    size = 14 + 20 + 8 + len(PAYLOAD)
    rows = []
    for r in results:
        exp = expected_rtt_us(topo, r.src, r.dst, size)
        rows.append({"src": r.src, "dst": r.dst, "rtt_us": r.rtt_us, "expected_us": exp})
    lost = [r for r in rows if r["rtt_us"] is None]
    off = [r for r in rows if r["rtt_us"] is not None and abs(r["rtt_us"] - r["expected_us"]) > 1]
    rtts = [r["rtt_us"] for r in rows if r["rtt_us"] is not None]
    summary = {
        "topology": topo.name, "hosts": len(topo.hosts), "pairs": len(rows),
        "reachable": len(rows) - len(lost), "lost": len(lost),
        "rtt_us_min": min(rtts) if rtts else None,
        "rtt_us_median": statistics.median(rtts) if rtts else None,
        "rtt_us_max": max(rtts) if rtts else None,
        "not_matching_link_delays": len(off),
    }
    if as_json:
        click.echo(json.dumps({"summary": summary, "pairs": rows}))
    else:
        _print(summary, rows if show_all else lost + off)
    if lost or off:
        raise SystemExit(1)


def _print(summary: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(
        f"{summary['topology']}: {summary['reachable']}/{summary['pairs']} pairs reachable, "
        f"RTT min/median/max {summary['rtt_us_min']:.1f}/{summary['rtt_us_median']:.1f}/"
        f"{summary['rtt_us_max']:.1f} us; {summary['not_matching_link_delays']} pair(s) off "
        "the links' delays" if summary["reachable"] else "no pair reachable")
    if rows:
        table = Table("src", "dst", "RTT (us)", "expected (us)")
        for r in rows:
            rtt = "lost" if r["rtt_us"] is None else f"{r['rtt_us']:.1f}"
            table.add_row(r["src"], r["dst"], rtt, f"{r['expected_us']:.1f}")
        console.print(table)
