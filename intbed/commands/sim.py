"""``intbed sim``: quick checks of a network on the sim target."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from intbed.commands.p4opts import p4c_options
from intbed.commands.targets import switch_model_option
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
@click.option("--no-control-plane", "bare", is_flag=True,
              help="Do not run the setup of a program intbed knows (intlabel's "
                   "switch configuration); the switches get routes only.")
@switch_model_option
@p4c_options
def ping(topo_name: str, program: str, net_seed: int, as_json: bool, show_all: bool,
         bare: bool, switch_model: str | None, **params: Any) -> None:
    """All-pairs ping: reachability and round-trip times against the links'
    delays.

    Programs whose switches need a control plane beyond routes (intlabel) get
    it, as their experiments set it up; for any other program, frames that
    reach a host altered earn a warning that it needs one. With the ideal
    switch model a round trip takes exactly its links' time; with a
    measured one it takes longer by the switches' time, never less.
    """
    from orchestration.apps.ping import PAYLOAD, all_pairs, expected_rtt_us
    from orchestration.sim import build
    from topologies.generators import build_topology

    topo = build_topology(topo_name, **params)
    net = build(topo, program, seed=net_seed, switch_model=switch_model)
    exact = net.switch_model.ideal
    setup = None if bare else CONTROL_PLANES.get(Path(program).stem)
    if setup is not None:
        setup(net)
    altered = _count_altered(net)
    results = all_pairs(net)
    size = 14 + 20 + 8 + len(PAYLOAD)
    rows = []
    for r in results:
        exp = expected_rtt_us(topo, r.src, r.dst, size)
        rows.append({"src": r.src, "dst": r.dst, "rtt_us": r.rtt_us, "expected_us": exp})
    lost = [r for r in rows if r["rtt_us"] is None]
    off = [r for r in rows if r["rtt_us"] is not None and (
        abs(r["rtt_us"] - r["expected_us"]) > 1 if exact else r["rtt_us"] < r["expected_us"] - 1)]
    rtts = [r["rtt_us"] for r in rows if r["rtt_us"] is not None]
    summary = {
        "topology": topo.name, "hosts": len(topo.hosts), "pairs": len(rows),
        "reachable": len(rows) - len(lost), "lost": len(lost),
        "rtt_us_min": min(rtts) if rtts else None,
        "rtt_us_median": statistics.median(rtts) if rtts else None,
        "rtt_us_max": max(rtts) if rtts else None,
        "not_matching_link_delays": len(off),
        "switch_model": net.switch_model.name,
    }
    if not exact and rtts:
        summary["switch_time_us_median"] = statistics.median(
            r["rtt_us"] - r["expected_us"] for r in rows if r["rtt_us"] is not None)
    summary["altered_frames"] = altered[0]
    if as_json:
        click.echo(json.dumps({"summary": summary, "pairs": rows}))
    else:
        _print(summary, rows if show_all else lost + off)
    if lost and altered[0]:
        name = Path(program).stem
        fix = ("drop --no-control-plane" if name in CONTROL_PLANES else
               "'intbed sim ping' does not know it; the program's experiments "
               "('intbed list') set it up")
        click.echo(f"warning: {altered[0]} frame(s) reached hosts altered (not an ICMP echo "
                   f"as sent): {name} needs its control plane ({fix})", err=True)
    if off and setup is not None:
        # Telemetry headers ride inside the fabric, so a frame is longer on some
        # links than the bare echo the expected times are computed for.
        click.echo(f"note: {len(off)} pair(s) take longer than the bare frame's link delays: "
                   f"{Path(program).stem} adds telemetry headers along their paths", err=True)
        off = []
    if lost or off:
        raise SystemExit(1)


def _intlabel_setup(net: Any) -> None:
    """INT-label's per-switch configuration as its experiments install it
    (default parameters, reports to the collector port)."""
    from controller.intlabel import CollectorEndpoint, configure_switch
    from controller.intlabel.config import IntLabelConfig
    from orchestration.network import COLLECTOR_IP, COLLECTOR_MAC, COLLECTOR_PORT

    cfg = IntLabelConfig()
    endpoint = CollectorEndpoint(COLLECTOR_MAC, COLLECTOR_IP, COLLECTOR_PORT)
    for name in net.topo.switches:
        configure_switch(net.clients[name], net.topo, name, cfg, endpoint)


# Control-plane setup of the programs in p4src/ that need more than routes to
# pass plain traffic, by program name.
CONTROL_PLANES: dict[str, Callable[[Any], None]] = {"intlabel": _intlabel_setup}


def _count_altered(net: Any) -> list[int]:
    """A counter (one-element list, filled while the network runs) of frames
    that reach a host as something other than the plain IPv4 ICMP echo that
    was sent: a program that adds headers its control plane would strip."""
    from orchestration.apps.ping import parse_echo

    count = [0]

    def on_frames(frames: list[tuple[bytes, float]]) -> None:
        count[0] += sum(1 for packet, _ in frames if parse_echo(packet) is None)

    for host in net.topo.hosts:
        net.listen(host, on_frames)
    return count


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
