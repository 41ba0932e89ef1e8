"""``intbed p4``: compile P4-16 programs and run their STF packet tests.

The compiler and engine are imported inside the commands so that
``intbed --help`` and unrelated commands start without loading them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import click

from common.errors import IntbedError
from intbed.commands.p4opts import p4c_options

_T = TypeVar("_T")
_R = TypeVar("_R")
_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.group()
def p4() -> None:
    """Compile P4-16 programs and run STF packet tests on intbed's engine."""


@p4.command()
@click.argument("file", type=_FILE)
@p4c_options
def check(file: Path) -> None:
    """Compile FILE and report its size, or the first error."""
    from dataplane.compiler.pipeline import compile_file

    program = compile_file(file)
    schema = program.schema
    note = "" if program.runnable else " (no 'main' package instance: checked, nothing to run)"
    click.echo(f"ok: {len(schema.tables)} tables, {len(schema.actions)} actions{note}")


@p4.command()
@click.argument("file", type=_FILE)
@p4c_options
def info(file: Path) -> None:
    """Print FILE's P4Info in protobuf text format, as p4c writes it."""
    from dataplane.compiler.p4info import build_p4info, to_text
    from dataplane.compiler.pipeline import compile_file

    click.echo(to_text(build_p4info(compile_file(file).schema)), nl=False)


def _stf_on_intbed(file: Path, test: Path) -> Any:
    from dataplane.compiler.pipeline import compile_file
    from dataplane.testing.stf import run_stf

    return run_stf(compile_file(file), test)


def _stf_on_bmv2(file: Path, test: Path) -> Any:
    from dataplane.testing.stf import parse_stf, require_packets
    from orchestration.binaries.bmv2_stf import available, run_stf_bmv2

    packets_in = require_packets(parse_stf(test), str(test))
    reason = available()
    if reason is not None:
        raise IntbedError(reason)
    result = run_stf_bmv2(file, test)
    result.packets_in = packets_in
    return result


STF_ENGINES: dict[str, Callable[[Path, Path], Any]] = {
    "intbed": _stf_on_intbed, "bmv2": _stf_on_bmv2}
"""Where ``intbed p4 stf --target`` runs a test: intbed's engine, or BMv2."""


@p4.command()
@click.argument("file", type=_FILE)
@click.argument("test", type=_FILE)
@click.option("--target", type=click.Choice(list(STF_ENGINES)), default="intbed",
              show_default=True,
              help="intbed's engine, or BMv2 (p4c, then simple_switch driven through "
                   "simple_switch_CLI).")
@p4c_options
def stf(file: Path, test: Path, target: str) -> None:
    """Run the STF packet test TEST on FILE; exit 1 with a diff if it fails.

    A pass prints 'PASS NAME: N packets in, M expected out, K unexpected'
    (K: packets sent to ports the test never names). As in p4c's runner, a
    test without a packet line, with an odd number of expected hex digits (a
    cut file) or with a port past v1model's 9 bits is an error.
    """
    result = STF_ENGINES[target](file, test)
    if not result.passed:
        click.echo(result.diff)
        raise click.exceptions.Exit(1)
    click.echo(f"PASS {file.stem}: {result.counts}")


@p4.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes.")
@p4c_options
def conformance(directory: Path, jobs: int) -> None:
    """Run every NAME.p4 that has NAME.stf beside it in DIRECTORY.

    Prints one PASS line (with its packet counts) or FAIL line (with the
    first reason) per program and 'N passed, M failed'; exits 1 if any failed.
    """
    from dataplane.testing.stf import find_conformance_cases, run_conformance_case

    cases = find_conformance_cases(directory)
    if not cases:
        raise IntbedError(f"no NAME.p4 with a NAME.stf beside it in {directory}")
    passed = failed = 0
    with ProcessPoolExecutor(jobs) if jobs > 1 else _Serial() as pool:
        for name, ok, reason in pool.map(run_conformance_case, cases):
            if ok:
                passed += 1
                click.echo(f"PASS {name}: {reason}")
            else:
                failed += 1
                click.echo(f"FAIL {name}: {reason}")
    click.echo(f"{passed} passed, {failed} failed")
    if failed:
        raise click.exceptions.Exit(1)


@p4.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes.")
@click.option("--verbose", "-v", is_flag=True, help="A line for every program, not only "
              "the ones that fail or are unsupported.")
def corpus(directory: Path, jobs: int, verbose: bool) -> None:
    """Compile a corpus laid out as p4c's test data: DIRECTORY/p4_16_samples
    must compile, DIRECTORY/p4_16_errors and p4_16_bmv_errors must be
    rejected with a located error, and nothing may crash.

    Ends with 'N passed, M failed' (a documented unsupported construct
    counts as failed); exits 1 if any failed.
    """
    from dataplane.testing.corpus import find_cases, run_corpus

    if not find_cases(directory):
        raise IntbedError(f"no p4_16_samples/, p4_16_errors/ or p4_16_bmv_errors/ programs "
                          f"in {directory}")

    def show(o: object) -> None:
        if verbose or not o.passed:  # type: ignore[attr-defined]
            tag = "PASS" if o.passed else o.status.upper()  # type: ignore[attr-defined]
            click.echo(f"{tag} {o.case.name}: {o.message}")  # type: ignore[attr-defined]

    report = run_corpus(directory, jobs=jobs, progress=show)
    accepted = sum(o.case.expect == "accept" for o in report.outcomes)
    click.echo(f"accepted by p4c: {report.count('compiled', 'accept')}/{accepted} compiled, "
               f"{report.count('unsupported', 'accept')} unsupported; rejected by p4c: "
               f"{report.count('rejected', 'reject') + report.count('unsupported', 'reject')}"
               f"/{len(report.outcomes) - accepted} rejected; "
               f"{report.count('crashed')} crashed; {report.wall_s:.1f} s")
    click.echo(f"{report.passed} passed, {report.failed} failed")
    if report.failed:
        raise click.exceptions.Exit(1)


class _Serial:
    """In-process stand-in for a pool when one job is asked for."""

    def __enter__(self) -> _Serial:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    @staticmethod
    def map(fn: Callable[[_T], _R], items: Iterable[_T]) -> Iterator[_R]:
        return map(fn, items)
