"""The ``intbed`` command line: a click group whose subcommands live in
``intbed.commands``, one module per group."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from common.errors import IntbedError
from intbed.commands.bench import bench
from intbed.commands.collector import collector
from intbed.commands.gpint import gpint
from intbed.commands.p4 import p4
from intbed.commands.run import list_experiments, run
from intbed.commands.sim import sim
from intbed.commands.topo import topo

# Shell convention for a process ended by SIGINT: 128 + 2.
EXIT_INTERRUPTED = 130


class IntbedGroup(click.Group):
    """Turns a user error into its one located line on stderr and exit 1, and
    Ctrl-C into a quiet exit 130, so no command ever shows a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except IntbedError as exc:
            click.echo(exc.line(), err=True)
            raise click.exceptions.Exit(1) from None
        except KeyboardInterrupt:
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None


@click.group(cls=IntbedGroup, context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """intbed: in-band network telemetry testbed."""


cli.add_command(p4)
cli.add_command(bench)
cli.add_command(topo)
cli.add_command(sim)
cli.add_command(run)
cli.add_command(list_experiments)
cli.add_command(gpint)
cli.add_command(collector)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (``intbed``)."""
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="intbed")
    except KeyboardInterrupt:  # raised before a command runs, e.g. while importing
        raise SystemExit(EXIT_INTERRUPTED) from None


if __name__ == "__main__":
    main()
