"""Running generated cases (``p4gen``): one program as Python and as its
build, the same entries and packets through both, and every difference
in what they emit or in the state they keep (registers, counters, direct
counters) after each packet."""

from __future__ import annotations

import dataclasses
import os
import pickle
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from p4gen import Case, TableEntry

from common.errors import IntbedError
from dataplane.compiler import pipeline
from dataplane.compiler.frontend.parser import parse_file
from dataplane.compiler.pipeline import CompiledProgram, compile_program, native_job
from dataplane.runtime.externs import CounterArray, RegisterArray
from dataplane.runtime.switch import Switch
from dataplane.runtime.tables import Exact, Lpm, RangeMatch, Ternary
from fastpath import loader
from fastpath.build import build_all, compiler

PASSES = 64
"""Ingress passes one packet may take (clones, resubmits, recirculations)
before the run calls it a loop."""


class Runaway(Exception):
    """A packet that keeps coming back to ingress."""


def compile_case(case: Case, workdir: Path) -> CompiledProgram:
    """The case's program compiled from ``workdir/p4gen_SEED.p4``."""
    src = workdir / f"p4gen_{case.seed}.p4"
    src.write_text(case.program)
    return compile_program(parse_file(src), src)


def as_python(compiled: CompiledProgram) -> CompiledProgram:
    """The same program running its generated Python text (whether or not
    a build of it is loaded)."""
    namespace = pipeline._globals()
    exec(compile(compiled.python_source, f"<p4:{compiled.source.name}>", "exec"),  # noqa: S102
         namespace)
    return dataclasses.replace(compiled, make=namespace["make"], native=False)


Built = tuple[CompiledProgram, CompiledProgram] | str


def build_unavailable() -> str | None:
    """Why this process cannot build and load pipelines, or None."""
    if not loader.enabled():
        return f"{loader.PURE_ENV} is set: this process loads no builds"
    try:
        compiler()
    except IntbedError as exc:
        return str(exc)
    return None


def build_cases(cases: Sequence[Case], workdir: Path, workers: int = 2) -> list[Built]:
    """(Python, built) for each case, the builds made together; for a
    program intbed does not compile, the error as text."""
    workdir.mkdir(parents=True, exist_ok=True)
    first: list[CompiledProgram | str] = []
    for case in cases:
        try:
            first.append(compile_case(case, workdir))
        except IntbedError as exc:
            first.append(f"seed {case.seed}: {type(exc).__name__}: {exc}")
    _build([c for c in first if not isinstance(c, str)], workers)
    out: list[Built] = []
    for case, compiled in zip(cases, first):
        if isinstance(compiled, str):
            out.append(compiled)
            continue
        built = compile_case(case, workdir) if not compiled.native else compiled
        out.append((as_python(compiled), built))
    return out


def _build(programs: list[CompiledProgram], workers: int, tries: int = 3) -> None:
    """Build the programs' pipelines; again (the jobs made anew) when the
    project's .pxd files changed meanwhile, an edit in the working tree."""
    for attempt in range(tries):
        try:
            build_all([j for j in map(native_job, programs) if j is not None], workers=workers)
            return
        except IntbedError as exc:
            if ".pxd files changed" not in str(exc) or attempt == tries - 1:
                raise


def match_spec(spec: tuple) -> Any:
    if spec[0] == "exact":
        return Exact(spec[1])
    if spec[0] == "lpm":
        return Lpm(spec[1], spec[2])
    if spec[0] == "range":
        return RangeMatch(spec[1], spec[2])
    return Ternary(spec[1], spec[2])


def configure(sw: Switch, case: Case) -> list[str]:
    """Sessions, multicast groups and entries; what the switch refused, as text."""
    for session, port in case.mirrors.items():
        sw.mirroring_add(session, port)
    for group, nodes in case.multicast.items():
        sw.mc_group_create(group)
        for rid, ports in nodes:
            sw.mc_node_associate(group, sw.mc_node_create(rid, ports))
    refused = []
    for e in case.entries:
        try:
            add_entry(sw, e)
        except Exception as exc:  # noqa: BLE001 (both switches must refuse alike)
            refused.append(f"{e.table} {e.keys}: {type(exc).__name__}: {exc}")
    return refused


def add_entry(sw: Switch, e: TableEntry) -> None:
    if e.default:
        sw.table_set_default(e.table, e.action, e.args)
        return
    sw.table_add(e.table, {k: match_spec(v) for k, v in e.keys.items()}, e.action,
                 e.args, e.priority)


def bounded(sw: Switch) -> Callable[[], None]:
    """Make ``sw`` raise Runaway past PASSES ingress passes; the returned
    function starts the count for the next packet."""
    inner = sw.ingress
    passes = [0]

    def ingress(*args: Any, **kwargs: Any) -> Any:
        passes[0] += 1
        if passes[0] > PASSES:
            raise Runaway(f"more than {PASSES} ingress passes")
        return inner(*args, **kwargs)

    sw.ingress = ingress

    def reset() -> None:
        passes[0] = 0
    return reset


def state(sw: Switch) -> tuple:
    """Registers, counters and every entry's direct counter."""
    regs = tuple(tuple(x.values) for x in sw.externs if isinstance(x, RegisterArray))
    counters = tuple((tuple(x.packets), tuple(x.bytes)) for x in sw.externs
                     if isinstance(x, CounterArray))
    direct = tuple(tuple((e.packets, e.bytes) for e in t.entries) for t in sw.tables)
    return regs, counters, direct


def outcome(sw: Switch, reset: Callable[[], None], port: int, data: bytes) -> Any:
    """What one packet makes: the packets out, or the exception raised."""
    reset()
    try:
        return sw.process(port, data)
    except Exception as exc:  # noqa: BLE001 (compared, and reported as a failure)
        return f"{type(exc).__name__}: {exc}"


@dataclasses.dataclass
class Report:
    seed: int
    packets: int = 0
    emitted: int = 0
    problems: list[str] = dataclasses.field(default_factory=list)
    registers: bool = False
    """Whether some register cell ended non-zero (the state compared is not empty)."""
    counted: bool = False
    """Whether some counter, direct or not, counted a packet."""


@dataclasses.dataclass
class Trace:
    """What one switch did with a case: the entries it refused, and for
    each packet its outputs (or the exception, as text) and the state after."""

    refused: list[str]
    steps: list[tuple[Any, tuple]]


def trace(case: Case, compiled: CompiledProgram, bytearrays: bool = False) -> Trace:
    """``case`` on a fresh switch running ``compiled`` (every other packet
    as a bytearray when ``bytearrays``, which the engine turns into bytes)."""
    sw = Switch(compiled)
    refused = configure(sw, case)
    reset = bounded(sw)
    steps = []
    for i, (port, data) in enumerate(case.packets):
        frame = bytearray(data) if bytearrays and i % 2 else data
        steps.append((outcome(sw, reset, port, frame), state(sw)))
    return Trace(refused, steps)


def compare(case: Case, a: Trace, b: Trace, names: tuple[str, str] = ("python", "built")
            ) -> Report:
    """The first few packets where ``a`` and ``b`` differ in outputs or
    state, and any exception (a generated program must never raise)."""
    report = Report(case.seed, len(case.packets))
    if a.refused != b.refused:
        report.problems.append(f"entries refused differently: {a.refused} / {b.refused}")
    if a.refused:
        report.problems.append(f"entries refused: {a.refused[:3]}")
    x_name, y_name = names
    for i, ((port, data), (x, sx), (y, sy)) in enumerate(zip(case.packets, a.steps, b.steps)):
        where = f"packet {i} ({port}, {data.hex()})"
        if isinstance(x, str) or isinstance(y, str):
            report.problems.append(f"{where}: {x_name} {x!r}, {y_name} {y!r}")
        elif x != y:
            report.problems.append(f"{where}: {x_name} {x}, {y_name} {y}")
        elif sx != sy:
            report.problems.append(f"{where}: state differs: {x_name} {sx}, {y_name} {sy}")
        else:
            report.emitted += len(x)
        if len(report.problems) >= 3:
            break
    if a.steps:
        regs, counters, direct = a.steps[-1][1]
        report.registers = any(any(r) for r in regs)
        report.counted = any(any(p) for p, _ in counters) or any(any(p for p, _ in t)
                                                                   for t in direct)
    return report


def differential(case: Case, python: CompiledProgram, built: CompiledProgram) -> Report:
    """Every packet through the Python text and through the build."""
    return compare(case, trace(case, python), trace(case, built, bytearrays=True))


def reference(case: Case, compiled: CompiledProgram) -> list[str]:
    """``arith_case``: each packet's output against the one Python computed."""
    sw = Switch(compiled)
    reset = bounded(sw)
    problems = []
    for i, ((port, data), want) in enumerate(zip(case.packets, case.expected)):
        got = outcome(sw, reset, port, data)
        if got != [(1, want)]:
            problems.append(f"packet {i} {data.hex()}: got {got}, want {want.hex()}")
    return problems


def outputs_of(case: Case, p4: Path) -> list[list[tuple[int, bytes]]]:
    """Each packet's outputs on intbed's engine (Python), for an STF file."""
    sw = Switch(as_python(compile_program(parse_file(p4), p4)))
    configure(sw, case)
    reset = bounded(sw)
    out = []
    for port, data in case.packets:
        reset()
        out.append(sw.process(port, data))
    return out


def pure_traces(seeds: Sequence[int], packets: int, workdir: Path) -> dict[int, Trace]:
    """The traces of ``generate(seed, packets)`` in a process of their own
    with the whole fast path off (INTBED_PURE_PYTHON=1): the engine's
    modules run as Python too, where this process runs their builds."""
    env = dict(os.environ, **{loader.PURE_ENV: "1"})
    here = Path(__file__).resolve().parent
    env["PYTHONPATH"] = os.pathsep.join([str(here), str(here.parents[1]),
                                         env.get("PYTHONPATH", "")])
    argv = [sys.executable, str(here / "p4gen_run.py"), str(workdir), str(packets),
            *map(str, seeds)]
    proc = subprocess.run(argv, env=env, capture_output=True, check=False, timeout=600)
    if proc.returncode != 0:
        raise AssertionError(f"the pure-Python run failed: {proc.stderr.decode()[-2000:]}")
    plain = pickle.loads(proc.stdout)  # noqa: S301 (this test's own child)
    return {seed: Trace(*t) for seed, t in plain.items()}


def _trace_main(argv: list[str]) -> int:
    """WORKDIR PACKETS SEED...: the seeds' traces, pickled to stdout."""
    from p4gen import generate

    workdir, packets, seeds = Path(argv[0]), int(argv[1]), [int(s) for s in argv[2:]]
    workdir.mkdir(parents=True, exist_ok=True)
    out = {seed: dataclasses.astuple(trace(case, compile_case(case, workdir)))
           for seed in seeds for case in [generate(seed, packets)]}
    sys.stdout.buffer.write(pickle.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(_trace_main(sys.argv[1:]))


def fresh_states(case: Case, compiled: CompiledProgram) -> list[str]:
    """Each packet on one long-running switch and on a new one given the
    same register contents: the same outputs. The engine keeps finished
    states for later packets (reset to the template, long header stacks
    only where a mark says they were touched); what one packet leaves in
    them must never reach the next."""
    a = Switch(compiled)
    configure(a, case)
    reset_a = bounded(a)
    problems = []
    for i, (port, data) in enumerate(case.packets):
        b = Switch(compiled)
        configure(b, case)
        for xa, xb in zip(a.externs, b.externs):
            if isinstance(xa, RegisterArray):
                xb.values[:] = xa.values
        y = outcome(b, bounded(b), port, data)
        x = outcome(a, reset_a, port, data)
        if x != y:
            problems.append(f"packet {i} ({port}, {data.hex()}): after {i} packets {x}, "
                            f"on a new switch {y}")
            if len(problems) >= 3:
                break
    return problems
