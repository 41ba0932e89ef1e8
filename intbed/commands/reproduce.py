"""``intbed reproduce``: experiments at paper scale and the results book
(``experiments.reproduce``, ``experiments.book``)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("reproduce")
@click.argument("names", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Every experiment of 'intbed list'.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Parallel processes for each experiment's independent points.")
@click.option("--cluster", metavar="ADDRESS", default=None,
              help="Run the points on a Dask cluster: tcp://HOST:8786, or local:N.")
@click.option("--resume", is_flag=True,
              help="Keep runs that finished with the code as it is now (others run again); "
                   "finish interrupted ones from their journal.")
@click.option("--force", is_flag=True, help="Run again where a finished run is in place.")
@click.option("--book-only", is_flag=True,
              help="Run nothing: write the book from the runs already in results/.")
@click.option("--results", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the runs are [default: results/].")
@click.option("--book", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The book to write [default: docs/results.md, figures in docs/results/].")
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
def reproduce(names: tuple[str, ...], every: bool, jobs: int, cluster: str | None,
              resume: bool, force: bool, book_only: bool, results: Path | None,
              book: Path | None, quiet: bool) -> None:
    """Run experiments NAMES (or --all) at their paper defaults, the full
    sweep with every repetition, into results/NAME/seed0, then write the
    results book (docs/results.md): per headline the paper's value, ours
    with its 95 % interval, a verdict and the evidence for a difference.
    Runs already in place are refused unless --resume (keep them) or
    --force (run again)."""
    from experiments import book as results_book
    from experiments.framework import RESULTS_DIR
    from experiments.reproduce import reproduce as run_all
    from experiments.reproduce import selected
    from intbed.commands.run import _Progress

    where = results or RESULTS_DIR
    if resume and force:
        raise click.UsageError("--resume keeps finished runs and --force reruns them: give one")
    if not book_only:
        wanted = selected(names, every)
        with _Progress(quiet) as progress:
            run_all(wanted, jobs=jobs, cluster=cluster, resume=resume, force=force,
                    results=where, progress=progress.update,
                    announce=(lambda line: None) if quiet else
                    (lambda line: click.echo(line, err=True)))
    elif names or every:
        raise click.UsageError("--book-only runs nothing: give no experiment names")
    target = book or results_book.BOOK
    figures = results_book.FIGURES if book is None else target.parent / target.stem
    entries = results_book.write(where, target, figures)
    ran = sum(e.run for e in entries)
    click.echo(f"book: {target} ({ran} of {len(entries)} experiments with a paper-scale run)")
