"""Live networks running on this machine, found from another process.

Every switch of a live network is a process whose command line says all a
client needs: ``--device-id N``, ``--grpc-server-addr HOST:PORT`` and
``--log-file RUN_DIR/switches/NAME.log`` (``LiveNetwork`` writes each
switch's log there). Reading the process table rather than a file the
network writes means a network that died leaves nothing stale behind:
what is listed is what answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from common.errors import IntbedError

PROC = Path("/proc")


class NoRunningSwitchError(IntbedError):
    """No running live network, or none with the switch asked for."""


@dataclass(frozen=True)
class RunningSwitch:
    name: str
    device_id: int
    grpc_addr: str
    run_dir: Path
    pid: int
    started: int  # clock ticks after boot (/proc/PID/stat field 22): orders networks


def parse_switch_argv(argv: list[str]) -> tuple[str, int, str, Path] | None:
    """``(name, device_id, grpc_addr, run_dir)`` of a live network's switch
    command line, or None for any other process."""
    values: dict[str, str] = {}
    for flag, value in zip(argv, argv[1:]):
        if flag in ("--device-id", "--grpc-server-addr", "--log-file"):
            values[flag] = value
    if len(values) < 3:
        return None
    log = Path(values["--log-file"])
    if log.parent.name != "switches" or log.suffix != ".log":
        return None
    try:
        device_id = int(values["--device-id"])
    except ValueError:
        return None
    return log.stem, device_id, values["--grpc-server-addr"], log.parent.parent


def running_switches(proc: Path = PROC) -> list[RunningSwitch]:
    """Every switch process of a live network on this machine."""
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:  # ended meanwhile, or not ours to read
            continue
        parsed = parse_switch_argv([a.decode(errors="replace") for a in raw.split(b"\0")])
        if parsed is None:
            continue
        # Fields after the parenthesised command name; starttime is field 22.
        started = int(stat.rsplit(")", 1)[1].split()[19])
        name, device_id, addr, run_dir = parsed
        found.append(RunningSwitch(name, device_id, addr, run_dir.resolve(), int(entry.name),
                                   started))
    return found


def find_switch(name: str, run_dir: str | Path | None = None,
                switches: list[RunningSwitch] | None = None) -> RunningSwitch:
    """Switch ``name`` of the network in ``run_dir``, or of the newest running
    network when ``run_dir`` is None."""
    every = running_switches() if switches is None else switches
    if not every:
        raise NoRunningSwitchError(
            "no live network is running on this machine: start one (e.g. intbed run "
            "EXPERIMENT --target mininet), or open a sim switch with --sim TOPOLOGY")
    networks: dict[Path, list[RunningSwitch]] = {}
    for sw in every:
        networks.setdefault(sw.run_dir, []).append(sw)
    if run_dir is not None:
        wanted = Path(run_dir).resolve()
        if wanted not in networks:
            known = ", ".join(str(d) for d in sorted(networks))
            raise NoRunningSwitchError(
                f"--run {run_dir}: no live network is running from this directory "
                f"(running: {known})")
    else:
        wanted = max(networks, key=lambda d: max(s.started for s in networks[d]))
    members = {sw.name: sw for sw in networks[wanted]}
    if name not in members:
        raise NoRunningSwitchError(
            f"no switch named '{name}' in the live network running from {wanted} "
            f"(its switches: {', '.join(sorted(members))})")
    return members[name]
