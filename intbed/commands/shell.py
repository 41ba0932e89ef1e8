"""``intbed shell SWITCH``: the official p4runtime-shell on one switch.

On a live network (mininet, bmv2) the shell dials the switch's own
P4Runtime server, found from its process (``orchestration.live.running``).
On a sim switch intbed builds the network in this process and serves the
switch's in-process P4Runtime service over gRPC (``ServiceBridge``) while
the shell is open; virtual time does not move meanwhile unless ``--pace``
asks for it, since nothing else runs the simulator.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import click

from common.errors import IntbedError
from intbed.commands.p4opts import p4c_options
from intbed.commands.targets import switch_model_option
from intbed.commands.topo import _params as topology_options

# The networks' own controllers announce election id (0, 1) (P4RuntimeClient).
# On a sim switch the shell takes the primary role from them with a higher
# id (nothing else writes while it is open); on a live network, whose run may
# still be writing, it is a backup that reads unless asked for more.
SIM_ELECTION_ID = (1, 0)
LIVE_ELECTION_ID = (0, 0)
# How often --pace moves the simulator forward (wall-clock seconds).
PACE_STEP_S = 0.02


def _election_id(text: str | None, default: tuple[int, int]) -> tuple[int, int]:
    if text is None:
        return default
    parts = text.split(",")
    try:
        high, low = (int(p) for p in parts)
    except ValueError:
        raise IntbedError(f"--election-id {text!r}: expected HIGH,LOW (two integers, "
                          "e.g. 1,0)") from None
    if not (0 <= high < 2**64 and 0 <= low < 2**64):
        raise IntbedError(f"--election-id {text!r}: each half is a 64-bit unsigned integer")
    return high, low


@click.command()
@click.argument("switch")
@click.option("--run", "run_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None,
              help="The run directory of the live network (default: the newest one running).")
@click.option("--sim", "sim_topo", default=None, metavar="TOPOLOGY",
              help="Open a switch of a sim network of this topology (a generator name or "
                   "a YAML file) instead of a live one.")
@topology_options
@click.option("--program", default="l3_forward", show_default=True,
              help="With --sim: the P4 program every switch runs (name in p4src/ or a .p4 path).")
@click.option("--net-seed", type=int, default=0, show_default=True,
              help="With --sim: the run seed.")
@click.option("--pace", type=click.FloatRange(min=0), default=0.0, show_default=True,
              metavar="RATIO",
              help="With --sim: virtual seconds to advance per wall-clock second while the "
                   "shell is open (0: time stands still).")
@click.option("--election-id", "election", default=None, metavar="HIGH,LOW",
              help="The shell's election id (default: 1,0 on a sim switch, the primary; "
                   "0,0 on a live one, a backup that may read only).")
@switch_model_option
@p4c_options
def shell(switch: str, run_dir: Path | None, sim_topo: str | None, program: str,
          net_seed: int, pace: float, election: str | None, switch_model: str | None,
          **params: Any) -> None:
    """p4runtime-shell attached to SWITCH.

    Without --sim, SWITCH belongs to a live network running on this machine
    (the newest one, or the one from --run). With --sim the network is built
    here with routes installed, and the shell reaches the switch's in-process
    P4Runtime service through a gRPC bridge; virtual time stands still while
    the shell is open, or moves at --pace. The shell runs in its own virtual
    environment (.venv-p4rt-shell, made on first use) and exits with its
    status.
    """
    from orchestration.p4rt_shell import clean_env, shell_argv

    if sim_topo is None:
        given = [f"--{k.replace('_', '-')}" for k, v in params.items() if v is not None]
        given += [flag for flag, used in (("--net-seed", net_seed), ("--pace", pace)) if used]
        if given or program != "l3_forward":
            raise IntbedError(f"{(given or ['--program'])[0]} applies to a sim switch only: "
                              "add --sim TOPOLOGY")
        from orchestration.live.running import find_switch

        found = find_switch(switch, run_dir)
        python = _shell_python()
        click.echo(f"p4runtime-shell on live switch {found.name} (device {found.device_id}, "
                   f"{found.grpc_addr}) of {found.run_dir}", err=True)
        code = _interactive(shell_argv(python, found.grpc_addr, found.device_id,
                                       _election_id(election, LIVE_ELECTION_ID)), clean_env())
        raise click.exceptions.Exit(code)

    if run_dir is not None:
        raise IntbedError("--run names a live network; --sim builds a sim one: give one of them")
    from dataplane.control.service_bridge import ServiceBridge
    from orchestration.sim import build
    from topologies.generators import build_topology

    topo = build_topology(sim_topo, **params)
    if switch not in topo.switches:
        raise IntbedError(f"no switch named '{switch}' in topology {topo.name} "
                          f"(its switches: {', '.join(sorted(topo.switches))})")
    eid = _election_id(election, SIM_ELECTION_ID)
    python = _shell_python()
    net = build(topo, program, seed=net_seed, switch_model=switch_model)
    service = net.services[switch]
    with ServiceBridge(service) as bridge:
        clock = (f"virtual time moves at {pace:g} s per second" if pace else
                 f"virtual time stays at {net.sim.now_ns / 1e9:g} s")
        click.echo(f"p4runtime-shell on sim switch {switch} (device {service.device_id}) of "
                   f"{topo.name} running {Path(program).stem}, bridged at {bridge.address}; "
                   f"{clock}", err=True)
        stop = threading.Event()
        pacer = threading.Thread(target=_pace, args=(net, bridge.lock, pace, stop),
                                 name="sim-pace", daemon=True)
        if pace:
            pacer.start()
        try:
            code = _interactive(shell_argv(python, bridge.address, service.device_id, eid),
                                clean_env())
        finally:
            stop.set()
            if pacer.is_alive():
                pacer.join()
    click.echo(f"virtual time at exit: {net.sim.now_ns / 1e9:g} s", err=True)
    net.stop()
    raise click.exceptions.Exit(code)


def _pace(net: Any, lock: Any, pace: float, stop: threading.Event) -> None:
    """Keep virtual time at ``pace`` times the wall-clock time since the
    start. Each step holds the bridge's lock, so a P4Runtime call never sees
    the switch in the middle of one."""
    start_ns, start_wall = net.sim.now_ns, time.monotonic()
    while not stop.wait(PACE_STEP_S):
        target = start_ns + round((time.monotonic() - start_wall) * pace * 1e9)
        with lock:
            net.sim.run(target)


def _shell_python() -> Path:
    from orchestration.p4rt_shell import SHELL_REQUIREMENT, VENV, is_ready, shell_python

    if not is_ready():
        click.echo(f"making p4runtime-shell's environment in {VENV} (pip install "
                   f"{SHELL_REQUIREMENT}; first use only)", err=True)
    return shell_python()


def _interactive(argv: list[str], env: dict[str, str]) -> int:
    """Run the shell in the foreground. Ctrl-C belongs to it (IPython cancels
    the line), so this process catches SIGINT and does nothing with it; a
    caught signal, unlike an ignored one, is reset for the child at exec."""
    previous = signal.signal(signal.SIGINT, lambda signum, frame: None)
    try:
        return subprocess.call(argv, env=env)
    finally:
        signal.signal(signal.SIGINT, previous)
