"""``intbed run`` and ``intbed list``: reproduce a paper figure."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from intbed.commands.p4opts import p4c_options
from intbed.commands.targets import collector_profile_option, switch_model_option, target_option
from orchestration.network import Target


@click.command("list")
def list_experiments() -> None:
    """List the experiments (one per paper figure)."""
    from rich.console import Console
    from rich.table import Table

    from experiments.framework import load_all, natural_key

    table = Table("experiment", "what", "parameters (default)")
    for name, exp in sorted(load_all().items(), key=lambda kv: natural_key(kv[0])):
        params = ", ".join(f"{p.name}={p.default!r}" for p in exp.params)
        table.add_row(name, exp.title, params)
    Console().print(table)


@click.command("run")
@click.argument("name")
@click.option("--quick", is_flag=True, help="A reduced run (under a minute) with the same shape.")
@click.option("--seed", type=int, default=0, show_default=True, help="Run seed.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Results directory [default: results/NAME/seedN[-quick]].")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Parallel processes for independent points.")
@click.option("--force", is_flag=True, help="Overwrite results already in the directory.")
@target_option("Where the data plane runs.")
@click.option("--redis", "redis_url", metavar="URL", default=None,
              help="Redis for the live targets' stores [default: a private redis-server "
                   "on a free port].")
@click.option("--set", "settings", multiple=True, metavar="PARAM=VALUE",
              help="Override a parameter (repeatable); 'intbed list' shows them.")
@click.option("--cluster", metavar="ADDRESS", default=None,
              help="Run the points on a Dask cluster: a scheduler address "
                   "(tcp://HOST:8786) or local:N for N worker processes here.")
@click.option("--resume", is_flag=True,
              help="Finish an interrupted run in its directory: points it finished are "
                   "not run again (same experiment, seed and parameters only).")
@click.option("--quiet", "-q", is_flag=True,
              help="No progress on stderr (errors and the results still print).")
@switch_model_option
@collector_profile_option
@p4c_options
def run(name: str, quick: bool, seed: int, out: Path | None, jobs: int, force: bool,
        target: Target, redis_url: str | None, settings: tuple[str, ...],
        cluster: str | None, resume: bool, quiet: bool, switch_model: str | None,
        collector_profile: str | None) -> None:
    """Run experiment NAME and write its results, figure and summary."""
    from experiments.framework import run_experiment

    overrides = parse_settings(settings)
    with _Progress(quiet) as progress:
        path = run_experiment(name, overrides, seed=seed, quick=quick, out=out, jobs=jobs,
                              force=force, target=target, redis=redis_url,
                              progress=progress.update, cluster=cluster, resume=resume,
                              switch_model=switch_model,
                              collector_profile=collector_profile)
    click.echo(f"results: {path}")
    summary = path / "summary.md"
    if summary.exists():
        click.echo(summary.read_text())


def parse_settings(settings: tuple[str, ...]) -> dict[str, Any]:
    """``--set PARAM=VALUE`` items as overrides (values checked later, by
    the experiment's parameters)."""
    from experiments.framework import ExperimentError

    overrides: dict[str, Any] = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep:
            raise ExperimentError(f"--set {item!r}: expected PARAM=VALUE")
        overrides[key.strip()] = value.strip()
    return overrides


class _Progress:
    """Completed/total points with an ETA on stderr; where stderr is not a
    terminal (a batch job's log), one line per tenth of the points or per
    minute instead; nothing at all when quiet."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet

    def __enter__(self) -> _Progress:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = Console(stderr=True)
        self.terminal = console.is_terminal and not self.quiet
        self.progress = Progress("[progress.description]{task.description}", BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(),
                                 TimeRemainingColumn(), console=console, transient=True)
        if self.terminal:
            self.progress.__enter__()
        self.tasks: dict[str, Any] = {}
        self.started: dict[str, tuple[float, int]] = {}
        self.logged: dict[str, tuple[float, int]] = {}
        return self

    def update(self, label: str, done: int, total: int) -> None:
        if self.quiet:
            return
        if self.terminal:
            task = self.tasks.get(label)
            if task is None:
                task = self.tasks[label] = self.progress.add_task(label, total=total)
            self.progress.update(task, completed=done, total=total)
            return
        now = time.monotonic()
        t0, done0 = self.started.setdefault(label, (now, done))
        last_t, last_done = self.logged.get(label, (t0, done0))
        step = max(1, total // 10)
        if done not in (done0, total) and done - last_done < step and now - last_t < 60:
            return
        self.logged[label] = (now, done)
        eta = ""
        if done0 < done < total:
            left = (now - t0) / (done - done0) * (total - done)
            eta = (f", about {left / 60:.0f} min left" if left >= 90
                   else f", about {left:.0f} s left")
        click.echo(f"{label}: {done}/{total} done{eta}", err=True)

    def __exit__(self, *exc: Any) -> None:
        if self.terminal:
            self.progress.__exit__(*exc)
