"""The ``intbed`` command line: a click group whose subcommands live in
``intbed.commands``, one module per group."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from common.errors import IntbedError
from intbed.commands.accel import accel
from intbed.commands.bench import bench
from intbed.commands.calibrate import calibrate
from intbed.commands.crosscheck import crosscheck
from intbed.commands.p4 import p4
from intbed.commands.p4app import p4app, p4app_bench, topo_import
from intbed.commands.reproduce import reproduce
from intbed.commands.run import list_experiments, run
from intbed.commands.shell import shell
from intbed.commands.sim import sim
from intbed.commands.topo import topo

# Shell convention for a process ended by SIGINT: 128 + 2.
EXIT_INTERRUPTED = 130
# sysexits.h EX_SOFTWARE: intbed itself failed, not the input it was given.
EXIT_INTERNAL = 70
# click's own outcomes (usage errors exit 2, --help and Exit carry their status).
_CLICK_OUTCOMES = (click.exceptions.ClickException, click.exceptions.Exit,
                   click.exceptions.Abort)


class IntbedGroup(click.Group):
    """The one error path of every command: a user error (IntbedError, an
    unreadable or missing file) is one located line and exit 1, Ctrl-C a quiet
    exit 130, and anything else a bug: one ``internal error`` line and exit 70,
    the traceback only under ``--debug``.

    Besides the commands added to it, it has each registered system's
    command group (``orchestration.systems.SYSTEMS``), from
    ``intbed.commands.<system id>``, imported when asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_system_commands()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None:
            return found
        system = _system_commands().get(cmd_name)
        if system is None:
            return None
        from importlib import import_module

        command: click.Command = getattr(import_module(f"intbed.commands.{system}"), cmd_name)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _CLICK_OUTCOMES:
            raise
        except KeyboardInterrupt:
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
        except BrokenPipeError:
            # The reader went away (`intbed ... | head`): nothing to say to it.
            _silence_stdout()
            raise click.exceptions.Exit(1) from None
        except Exception as exc:
            line = user_error_line(exc)
            if line is not None:
                click.echo(one_line(line), err=True)
                raise click.exceptions.Exit(1) from None
            if ctx.params.get("debug"):
                raise
            click.echo(one_line(f"internal error: {type(exc).__name__}: {exc}"
                                " (rerun with --debug for the traceback)"), err=True)
            raise click.exceptions.Exit(EXIT_INTERNAL) from None


def _system_commands() -> dict[str, str]:
    """Command name -> the id of the system whose module makes it."""
    from orchestration.systems import SYSTEMS

    return {s.command: s.id for s in SYSTEMS.values() if s.command is not None}


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush into the
    closed pipe does not print a second error."""
    import os
    import sys

    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # not a real file (a test runner's buffer)
        pass
    finally:
        os.close(devnull)


def one_line(text: str) -> str:
    """``text`` with line breaks and other control characters escaped (``\\n``,
    ``\\x1e``): a message that quotes what a user typed stays one line."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def user_error_line(exc: BaseException) -> str | None:
    """The ``location: error: message`` line for an error the input or the
    machine caused, or None for a bug."""
    if isinstance(exc, IntbedError):
        return exc.line()
    if isinstance(exc, UnicodeDecodeError):
        return (f"error: input is not UTF-8 text: byte 0x{exc.object[exc.start]:02x} "
                f"at offset {exc.start} ({exc.reason})")
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{exc.filename}: " if exc.filename is not None else ""
        return f"{where}error: {exc.strerror}"
    return None


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from intbed.version import version_lines

    click.echo("\n".join(version_lines()))
    ctx.exit()


@click.group(cls=IntbedGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True,
              help="On an internal error, show the traceback instead of one line.")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=_print_version,
              help="Print the version, the commit of a checkout, Python and the external "
                   "tools found, then exit.")
def cli(debug: bool) -> None:
    """intbed: in-band network telemetry testbed.

    Exit status: 0 success, 1 a user error (one located line on stderr) or a
    failed check, 2 a command-line usage error, 70 an internal error, 130
    interrupted.
    """


cli.add_command(p4)
cli.add_command(bench)
cli.add_command(accel)
cli.add_command(topo)
cli.add_command(sim)
cli.add_command(run)
cli.add_command(list_experiments)
cli.add_command(p4app)
cli.add_command(shell)
cli.add_command(calibrate)
cli.add_command(crosscheck)
cli.add_command(reproduce)
topo.add_command(topo_import)
bench.add_command(p4app_bench)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (``intbed``)."""
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="intbed")
    except KeyboardInterrupt:  # raised before a command runs, e.g. while importing
        raise SystemExit(EXIT_INTERRUPTED) from None


if __name__ == "__main__":
    main()
