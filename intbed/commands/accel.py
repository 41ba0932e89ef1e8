"""``intbed accel``: build and inspect the compiled fast path
(``fastpath.loader``): the sim's hot modules and the pipelines of P4 programs
as C extensions."""

from __future__ import annotations

import time
from pathlib import Path

import click

from intbed.commands.p4opts import p4c_options


def _pipeline_jobs(programs: tuple[Path, ...]) -> list[tuple[str, object]]:
    from dataplane.compiler.pipeline import compile_file, native_job
    from p4src import programs as shipped

    out = []
    for path in programs or tuple(shipped()):
        compiled = compile_file(path)
        if compiled.runnable:
            out.append((path.name, native_job(compiled)))
    return out


TRAINING = ("bench", "sim", "--seconds", "1", "--k", "4", "--json")
"""The profile-guided build's workload: every hot module and the
benchmarks' two programs, in about ten seconds instrumented."""


def _trained(pipelines: list[tuple[str, object]]) -> set[str]:
    """The names of the extensions the training workload runs: every hot
    module, and of ``pipelines`` ((program file name, job) pairs, as
    ``_pipeline_jobs`` gives them) those of the benchmarks' programs."""
    from benchmarks.sim import PROGRAMS
    from fastpath.loader import MODULES

    return set(MODULES) | {job.name for program, job in pipelines  # type: ignore[attr-defined]
                           if Path(program).stem in PROGRAMS}


def _train(accel_base: Path) -> None:
    """Run the training workload on the artifacts under ``accel_base``."""
    import subprocess
    import sys

    from common.paths import child_env
    from fastpath.loader import DIR_ENV, PURE_ENV

    env = child_env({DIR_ENV: str(accel_base), "PYTHONHASHSEED": "0"})
    for name in (PURE_ENV, "INTBED_REQUIRE_ACCEL"):  # the workload runs compiled, as it can
        env.pop(name, None)
    proc = subprocess.run([sys.executable, "-m", "intbed.cli", *TRAINING], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, timeout=900, check=False)
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        raise RuntimeError(f"exit {proc.returncode}: {tail}")


@click.group()
def accel() -> None:
    """The compiled fast path: hot modules and pipelines built by Cython.

    Each build is keyed by the exact source it came from; an edited module
    or program runs as Python until built again, and so do the modules
    compiled against its declarations. INTBED_PURE_PYTHON=1 runs
    everything as Python.
    """
    from fastpath import loader

    loader.quiet()  # the warnings say to run this command


@accel.command()
@click.argument("programs", nargs=-1, type=click.Path(exists=True, dir_okay=False,
                                                      path_type=Path))
@click.option("--jobs", "-j", type=click.IntRange(1), default=None,
              help="Parallel compilers (default: one per core).")
@click.option("--pgo/--no-pgo", default=True, show_default=True,
              help="Profile-guided: build the hot modules and the benchmarks' pipelines "
                   "once instrumented, run `intbed bench sim` briefly on them, and build "
                   "them again laid out for the paths it took (about twice the time; "
                   "same results).")
@p4c_options
def build(programs: tuple[Path, ...], jobs: int | None, pgo: bool) -> None:
    """Build the hot modules and the pipelines of PROGRAMS (default: the
    programs intbed ships); what is built already is skipped."""
    from fastpath.build import build_all, module_jobs
    from fastpath.loader import accel_dir

    pipelines = [(name, job) for name, job in _pipeline_jobs(programs) if job is not None]
    todo = module_jobs()
    todo += [job for _, job in pipelines]  # type: ignore[misc]
    if not todo:
        click.echo(f"compiled fast path: everything built already ({accel_dir()})")
        return
    click.echo(f"building {len(todo)} extension(s) into {accel_dir()} ...")
    start = time.monotonic()
    count = [0]

    def done(job: object) -> None:
        count[0] += 1
        click.echo(f"  [{count[0]}/{len(todo)}] {job.label or job.name}"  # type: ignore[attr-defined]
                   f"  ({time.monotonic() - start:.0f} s)")

    if pgo:
        from fastpath.pgo import build_profiled

        trained = _trained(pipelines)
        n = build_profiled(todo, _train, workers=jobs, done=done,
                           instrument=lambda job: job.name in trained,
                           note=lambda line: click.echo(f"  note: {line}", err=True),
                           stage=lambda line: click.echo(
                               f"  {line}  ({time.monotonic() - start:.0f} s)"))
        click.echo(f"  {n} of {len(todo)} built with a profile of `intbed "
                   f"{' '.join(TRAINING)}`")
    else:
        build_all(todo, workers=jobs, done=done)
    click.echo(f"compiled fast path built in {time.monotonic() - start:.0f} s")


@accel.command()
@click.argument("programs", nargs=-1, type=click.Path(exists=True, dir_okay=False,
                                                      path_type=Path))
@p4c_options
def status(programs: tuple[Path, ...]) -> None:
    """Which hot modules and pipelines have a build of their current source."""
    from fastpath.build import module_jobs
    from fastpath.loader import MODULES, accel_dir, enabled

    missing = {job.name for job in module_jobs()}
    click.echo(f"artifacts: {accel_dir()}")
    if not enabled():
        click.echo("INTBED_PURE_PYTHON is set: this process runs everything as Python")
    for name in MODULES:
        click.echo(f"  {name:34} {'not built' if name in missing else 'built'}")
    for name, job in _pipeline_jobs(programs):
        click.echo(f"  pipeline {name:25} {'not built' if job is not None else 'built'}")


@accel.command()
def clean() -> None:
    """Delete this interpreter's builds (the next intbed accel build makes
    them again)."""
    import shutil

    from fastpath.loader import accel_dir

    where = accel_dir()
    if where.exists():
        shutil.rmtree(where)
        click.echo(f"removed {where}")
    else:
        click.echo(f"nothing to remove ({where} does not exist)")
