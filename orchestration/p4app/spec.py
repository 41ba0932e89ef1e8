"""A p4-utils network as declared (by p4app.json or by a NetworkAPI script),
and the intbed ``Topology`` it becomes.

Both front doors fill one ``NetworkSpec``; ``build_app`` checks it, numbers
the ports (p4-utils' rule: a switch's ports count from 1 in the order its
links were declared), assigns addresses by the chosen strategy
(``orchestration.p4app.addressing``) and resolves the program and command
file of every switch relative to the declaring file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.errors import IntbedError, Loc
from topologies.model import Topology

_DELAY = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(us|ms|s)?\s*$")
_UNIT_US = {"us": 1.0, "ms": 1000.0, "s": 1_000_000.0, None: 1000.0}


class P4AppError(IntbedError):
    """A p4-utils network description intbed cannot build."""


@dataclass
class LinkDecl:
    """One declared link. ``loss`` is a fraction; ``delay_us`` microseconds."""

    a: str
    b: str
    loc: Loc | None = None
    a_port: int | None = None
    b_port: int | None = None
    bandwidth_mbps: float | None = None
    delay_us: float | None = None
    loss: float | None = None
    weight: float | None = None  # p4-utils' routing weight (topology.json), not a target setting
    # Addresses given for one end: node -> {"ip": "a.b.c.d/len", "mac": ...}
    addrs: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass
class NetworkSpec:
    """What a p4app.json or a NetworkAPI script declares. Paths are as written,
    relative to ``base_dir``; ``notes`` are what intbed does not honour, each
    once."""

    source: Path
    base_dir: Path
    switches: dict[str, dict[str, Any]] = field(default_factory=dict)
    hosts: dict[str, dict[str, Any]] = field(default_factory=dict)
    links: list[LinkDecl] = field(default_factory=list)
    default_program: str | None = None
    strategy: str | None = None
    locs: dict[str, Loc] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # p4-utils' exec_scripts / execScript: (command as written, where)
    scripts: list[tuple[str, Loc | None]] = field(default_factory=list)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


@dataclass
class P4App:
    """A buildable network: the Topology, each switch's program and command
    file (absolute), each host's gateway (l3 and mixed) and the notes."""

    topo: Topology
    programs: dict[str, Path]
    cli_inputs: dict[str, Path]
    gateways: dict[str, str]
    strategy: str | None
    notes: list[str]
    source: Path
    # (a, b) as declared -> p4-utils' link weight, for topology.json
    weights: dict[tuple[str, str], float] = field(default_factory=dict)
    # switch -> its CPU port (p4-utils' cpu_port: the port after its last link)
    cpu_ports: dict[str, int] = field(default_factory=dict)
    # the Python scripts exec_scripts names: (script, its arguments)
    scripts: list[tuple[Path, tuple[str, ...]]] = field(default_factory=list)

    @property
    def program(self) -> Path:
        """The one program every switch runs (p4-utils' usual case)."""
        distinct = set(self.programs.values())
        if len(distinct) != 1:
            raise P4AppError("the switches run different programs: "
                             + ", ".join(f"{s}={p.name}" for s, p in self.programs.items()),
                             Loc(str(self.source), 0))
        return distinct.pop()


def parse_delay_us(value: Any, where: str, loc: Loc | None) -> float:
    """Mininet's delay: a string with a unit (``"5ms"``, ``"100us"``) or a
    number of milliseconds (NetworkAPI's ``setDelay``)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value) * 1000.0
    m = _DELAY.match(value) if isinstance(value, str) else None
    if m is None:
        raise P4AppError(f"{where}: delay must be like \"5ms\", \"100us\" or a number of "
                         f"milliseconds, not {value!r}", loc)
    return float(m.group(1)) * _UNIT_US[m.group(2)]


def parse_number(value: Any, where: str, loc: Loc | None, high: float | None = None) -> float:
    ok = (isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
          and (high is None or value <= high))
    if not ok:
        bound = f" in [0, {high:g}]" if high is not None else " >= 0"
        raise P4AppError(f"{where} must be a number{bound}, not {value!r}", loc)
    return float(value)


def build_app(spec: NetworkSpec) -> P4App:
    from orchestration.p4app.addressing import assign

    source = str(spec.source)
    if not spec.switches:
        raise P4AppError("the network has no switches", Loc(source, 0))
    generic = spec.source.stem in ("p4app", "network")
    topo = Topology(spec.base_dir.name if generic else spec.source.stem)
    for name in spec.switches:
        topo.add_switch(name, loc=spec.locs.get(f"switch:{name}"))
    addresses, gateways = assign(spec)
    for name in spec.hosts:
        ip, prefix, mac = addresses[name]
        topo.add_host(name, mac, ip, prefix, loc=spec.locs.get(f"host:{name}"))
    for link in spec.links:
        for node in (link.a, link.b):
            if node not in spec.switches and node not in spec.hosts:
                raise P4AppError(f"link {link.a}-{link.b}: '{node}' is not a switch or a "
                                 "host declared in this network", link.loc or Loc(source, 0))
        params: dict[str, Any] = {}
        if link.bandwidth_mbps is not None:
            params["bandwidth_mbps"] = link.bandwidth_mbps
        if link.delay_us is not None:
            params["delay_us"] = link.delay_us
        if link.loss is not None:
            params["loss"] = link.loss
        topo.add_link(link.a, link.b, link.a_port, link.b_port, loc=link.loc, **params)
    for name in spec.hosts:
        if not topo.links_of(name):
            raise P4AppError(f"host '{name}' has no link", spec.locs.get(f"host:{name}"))
    programs, cli_inputs = {}, {}
    for name, opts in spec.switches.items():
        loc = spec.locs.get(f"switch:{name}") or Loc(source, 0)
        program = opts.get("p4_src") or spec.default_program
        if program is None:
            raise P4AppError(f"switch '{name}' has no P4 program (give p4_src)", loc)
        programs[name] = _existing(spec.base_dir, program, f"switch '{name}': P4 program", loc)
        if opts.get("cli_input"):
            cli_inputs[name] = _existing(spec.base_dir, opts["cli_input"],
                                         f"switch '{name}': cli_input", loc)
    weights = {(link.a, link.b): link.weight for link in spec.links if link.weight is not None}
    cpu_ports = {name: max(topo.switches[name].ports, default=0) + 1
                 for name, opts in spec.switches.items() if opts.get("cpu_port") is True}
    scripts = [_script(spec, cmd, loc) for cmd, loc in spec.scripts]
    return P4App(topo, programs, cli_inputs, gateways, spec.strategy, list(spec.notes),
                 spec.source, weights, cpu_ports, scripts)


_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")


def _script(spec: NetworkSpec, cmd: str, loc: Loc | None) -> tuple[Path, tuple[str, ...]]:
    """``python SCRIPT ARGS...`` as a script and its arguments (p4-utils runs
    the command in the folder it was started from: the description's)."""
    import shlex

    words = shlex.split(cmd) if isinstance(cmd, str) else []
    while words[:1] == ["sudo"]:  # the run has what rights it has
        words = words[1:]
    if len(words) < 2 or not _PYTHON.match(Path(words[0]).name) or not words[1].endswith(".py"):
        raise P4AppError(f"exec_scripts: {cmd!r}: intbed runs scripts given as "
                         "'python SCRIPT.py ARGS...'", loc or Loc(str(spec.source), 0))
    return (_existing(spec.base_dir, words[1], "exec_scripts: script",
                      loc or Loc(str(spec.source), 0)), tuple(words[2:]))


def _existing(base: Path, path: Any, what: str, loc: Loc) -> Path:
    if not isinstance(path, str) or not path:
        raise P4AppError(f"{what} must be a path, not {path!r}", loc)
    full = (base / path).resolve()
    if not full.is_file():
        raise P4AppError(f"{what} {path!r}: no such file (looked for {full})", loc)
    return full
