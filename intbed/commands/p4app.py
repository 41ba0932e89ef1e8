"""``intbed p4app``: p4-utils artifacts run unchanged (p4app.json networks,
NetworkAPI scripts, simple_switch_CLI command files); ``topo_import`` is
``intbed topo import`` (logic in ``orchestration.p4app``)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from intbed.commands.targets import switch_model_option, target_option
from orchestration.network import Target


def _echo_notes(notes: list[str]) -> None:
    for note in notes:
        click.echo(note, err=True)


@click.group()
def p4app() -> None:
    """Run p4-utils networks: p4app.json files and network.py scripts."""


@p4app.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@target_option("Where the network runs.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Run seed (link losses, P4 random()).")
@click.option("--no-ping", is_flag=True, help="Apply the command files only.")
@click.option("--pcap-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep what every switch port sends as pcaps (BMv2's names, "
                   "<switch>-eth<port>_out.pcap) under this folder.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--controller", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              default=None,
              help="A p4-utils controller script to run, unchanged, once the network is up "
                   "(in its own folder, beside the topology.json written there).")
@click.option("--controller-arg", "controller_args", multiple=True, metavar="ARG",
              help="An argument for the controller script (repeat for more).")
@click.option("--settle", type=click.FloatRange(min=0), default=None,
              help="Seconds to wait for the controller before pinging (default: until it "
                   "ends); one still running is pinged through and then stopped.")
@switch_model_option
def run(path: Path, target: Target, seed: int, no_ping: bool, pcap_dir: Path | None,
        as_json: bool, controller: Path | None, controller_args: tuple[str, ...],
        settle: float | None, switch_model: str | None) -> None:
    """Build the network PATH declares (a p4app.json or a NetworkAPI
    network.py), apply each switch's command file once its pipeline is up,
    run the --controller script if given (else the exec_scripts one, if any),
    then ping every pair of hosts.

    Exit status 1 when a pair does not reach the other or the controller fails.
    """
    from orchestration.p4app.load import load_app
    from orchestration.p4app.run import ControllerSpec, run_app

    target.check_available()
    app = load_app(path)
    _echo_notes(app.notes)
    options: dict[str, object] = {}
    if target.models_timing:
        options["switch_model"] = switch_model
    elif switch_model is not None:
        raise click.BadParameter(f"{target}'s switches take the time they take; the model "
                                 "applies to the sim", param_hint="--switch-model")
    if pcap_dir is not None and not target.live:
        options["pcap_dir"] = pcap_dir
    elif pcap_dir is not None:
        from orchestration.live.options import LiveOptions

        options.update(live=LiveOptions(results_dir=pcap_dir, keep_pcaps=True), label="p4app")
    spec = None
    if controller is not None:
        spec = ControllerSpec(controller, controller_args, settle)
    elif app.scripts:  # p4-utils' exec_scripts: the controller the description names
        script, args = app.scripts[0]
        spec = ControllerSpec(script, controller_args or args, settle)
        for other, _ in app.scripts[1:]:
            click.echo(f"note: exec_scripts: only the first script runs; {other.name} does "
                       "not", err=True)
    elif controller_args or settle is not None:
        raise click.BadParameter("give --controller too", param_hint="--controller-arg/--settle")
    result = run_app(app, target, seed=seed, ping=not no_ping, controller=spec, **options)
    ctl = result.controller
    reached = len(result.pings) - len(result.lost)
    if as_json:
        click.echo(json.dumps({
            "network": app.topo.name, "target": target.name, "strategy": app.strategy,
            "hosts": {h.name: {"ip": f"{h.ip}/{h.prefix_len}", "mac": h.mac}
                      for h in app.topo.hosts.values()},
            "commands": result.commands,
            "pings": [{"src": p.src, "dst": p.dst, "rtt_us": p.rtt_us} for p in result.pings],
            "reached": reached, "pairs": len(result.pings),
            "limitations": result.limitations, "notes": app.notes,
            "controller": None if ctl is None else {
                "script": str(ctl.script), "returncode": ctl.returncode,
                "elapsed_s": round(ctl.elapsed_s, 3)}}, indent=2))
    else:
        click.echo(f"{app.topo!r} on {target}, assignment {app.strategy or 'manual'}")
        for host in app.topo.hosts.values():
            switch, port = app.topo.host_switch(host.name)
            click.echo(f"  {host.name}  {host.ip}/{host.prefix_len}  {host.mac}  "
                       f"({switch} port {port})")
        for switch, count in result.commands.items():
            click.echo(f"  {switch}: {count} commands from {app.cli_inputs[switch].name}")
        for p in result.pings:
            rtt = "lost" if p.rtt_us is None else f"{p.rtt_us:.3f} us"
            click.echo(f"  ping {p.src} -> {p.dst}: {rtt}")
        if result.pings:
            click.echo(f"{reached}/{len(result.pings)} pairs reachable")
        for limitation in result.limitations:
            click.echo(f"limitation: {limitation}", err=True)
    if ctl is not None:
        state = (f"still running after {ctl.elapsed_s:.1f} s, stopped after the pings"
                 if ctl.returncode is None else f"exited with status {ctl.returncode}")
        click.echo(f"controller {ctl.script.name}: {state}", err=True)
    if result.lost or (ctl is not None and ctl.failed):
        raise click.exceptions.Exit(1)


@p4app.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@target_option("Where the network runs.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Run seed (link losses, P4 random()).")
@click.option("--topology-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where topology.json goes (default: the folder of PATH, as p4-utils).")
def up(path: Path, target: Target, seed: int, topology_dir: Path | None) -> None:
    """Bring the network PATH declares up and keep it up (Ctrl-C tears it
    down), printing how to start a p4-utils controller against it by hand."""
    import signal
    import sys
    import threading

    from orchestration.p4app.controller import ControllerSession
    from orchestration.p4app.load import load_app
    from orchestration.p4app.run import open_app

    target.check_available()
    app = load_app(path)
    _echo_notes(app.notes)
    net = open_app(app, target, seed=seed, for_controller=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        folder = topology_dir or path.resolve().parent
        with ControllerSession(net, target, app, folder) as session:
            env = session.env()
            click.echo(f"{app.topo!r} is up on {target}; topology in {session.topology_file}")
            click.echo("start a controller from that folder with:")
            click.echo(f"  PYTHONPATH={env['PYTHONPATH']} \\")
            click.echo(f"  INTBED_P4UTILS_CONNECT={session.connect_file} {sys.executable} "
                       "CONTROLLER.py")
            click.echo("Ctrl-C to tear the network down")
            try:
                done.wait()
            except KeyboardInterrupt:
                pass
    finally:
        net.stop()


@click.command("p4app")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@click.option("--lines", type=click.IntRange(min=1, max=1024), default=1000, show_default=True,
              help="table_add lines written (the ECMP exercise's ipv4_lpm holds 1,024).")
def p4app_bench(as_json: bool, lines: int) -> None:
    """Command-file lines/s on sim, and the phases of p4app run on the
    p4-learning exercises (``intbed bench p4app``)."""
    from benchmarks.p4app import run_p4app_benchmarks

    report = run_p4app_benchmarks(lines)
    if as_json or "error" in report:
        click.echo(json.dumps(report, sort_keys=True))
        return
    c = report["commands"]
    click.echo(f"command file on sim: {c['table_add_per_s']:,.0f} table_add/s, "
               f"{c['table_delete_per_s']:,.0f} table_delete/s ({c['lines']} lines)")
    for r in report["exercises"]:
        click.echo(f"{r['exercise']}/{r['file']}: load {r['load_s']:.3f} s, compile "
                   f"{r['compile_s']:.3f} s, start and commands {r['open_and_commands_s']:.3f} s, "
                   f"ping {r['ping_s']:.3f} s ({r['reached']}/{r['pairs']} pairs)")


@click.command("import")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="YAML file to write (default: print it).")
def topo_import(path: Path, output: Path | None) -> None:
    """Convert a p4-utils network (p4app.json or NetworkAPI network.py) to
    intbed's topology YAML (addresses as its assignment strategy gives them;
    command files are not part of the YAML)."""
    from orchestration.p4app.load import load_app
    from topologies.yamlio import dump_yaml

    app = load_app(path)
    _echo_notes(app.notes)
    for name, program in app.programs.items():
        app.topo.switches[name].program = str(program)
    text = dump_yaml(app.topo)
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text)
        click.echo(f"{app.topo.name} written to {output}")
