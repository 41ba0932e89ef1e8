"""``intbed run`` and ``intbed list``: reproduce a paper figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from orchestration.network import TARGETS


@click.command("list")
def list_experiments() -> None:
    """List the experiments (one per paper figure)."""
    from rich.console import Console
    from rich.table import Table

    from experiments.framework import load_all

    table = Table("experiment", "what", "parameters (default)")
    for name, exp in sorted(load_all().items(), key=lambda kv: _order(kv[0])):
        params = ", ".join(f"{p.name}={p.default!r}" for p in exp.params)
        table.add_row(name, exp.title, params)
    Console().print(table)


def _order(name: str) -> tuple[str, int]:
    head, _, tail = name.rpartition("-fig")
    return (head, int(tail) if tail.isdigit() else 0)


@click.command("run")
@click.argument("name")
@click.option("--quick", is_flag=True, help="A reduced run (under a minute) with the same shape.")
@click.option("--seed", type=int, default=0, show_default=True, help="Run seed.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Results directory [default: results/NAME/seedN[-quick]].")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Parallel processes for independent points.")
@click.option("--force", is_flag=True, help="Overwrite results already in the directory.")
@click.option("--target", type=click.Choice(list(TARGETS)), default="sim",
              show_default=True, help="Where the data plane runs.")
@click.option("--redis", "redis_url", metavar="URL", default=None,
              help="Redis for the live targets' stores [default: a private redis-server "
                   "on a free port].")
@click.option("--set", "settings", multiple=True, metavar="PARAM=VALUE",
              help="Override a parameter (repeatable); 'intbed list' shows them.")
def run(name: str, quick: bool, seed: int, out: Path | None, jobs: int, force: bool,
        target: str, redis_url: str | None, settings: tuple[str, ...]) -> None:
    """Run experiment NAME and write its results, figure and summary."""
    from experiments.framework import ExperimentError, run_experiment

    overrides: dict[str, Any] = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep:
            raise ExperimentError(f"--set {item!r}: expected PARAM=VALUE")
        overrides[key.strip()] = value.strip()
    with _Progress() as progress:
        path = run_experiment(name, overrides, seed=seed, quick=quick, out=out, jobs=jobs,
                              force=force, target=target, redis=redis_url,
                              progress=progress.update)
    click.echo(f"results: {path}")
    summary = path / "summary.md"
    if summary.exists():
        click.echo(summary.read_text())


class _Progress:
    """A progress bar on stderr for long runs (quiet when not a terminal)."""

    def __enter__(self) -> _Progress:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        self.progress = Progress("[progress.description]{task.description}", BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(),
                                 console=Console(stderr=True), transient=True)
        self.progress.__enter__()
        self.tasks: dict[str, Any] = {}
        return self

    def update(self, label: str, done: int, total: int) -> None:
        task = self.tasks.get(label)
        if task is None:
            task = self.tasks[label] = self.progress.add_task(label, total=total)
        self.progress.update(task, completed=done, total=total)

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)
