"""The options p4c users type: ``-D NAME[=VALUE]``, ``-I DIR``, ``--p4v 16``,
``--arch v1model``, shared by every command that compiles a program."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

_F = TypeVar("_F", bound=Callable[..., Any])


def p4c_options(fn: _F) -> _F:
    """Add the options to a click command; the command body then runs under
    ``compile_options`` so every program it compiles (in this process and
    in forked workers) is preprocessed with them."""

    @click.option("-D", "defines", multiple=True, metavar="NAME[=VALUE]",
                  help="Define a preprocessor macro for the P4 program, as p4c -D (repeatable).")
    @click.option("-I", "include_dirs", multiple=True,
                  type=click.Path(exists=True, file_okay=False, path_type=Path),
                  help="Look for #include files in DIR, as p4c -I (repeatable).")
    @click.option("--p4v", type=click.Choice(["16"]), default="16", show_default=True,
                  help="P4 language version (p4c's option; only P4-16).")
    @click.option("--arch", type=click.Choice(["v1model"]), default="v1model",
                  show_default=True, help="Architecture (p4c's option; only v1model).")
    @functools.wraps(fn)
    def wrapper(*args: Any, defines: tuple[str, ...], include_dirs: tuple[Path, ...],
                p4v: str, arch: str, **kwargs: Any) -> Any:
        from dataplane.compiler.options import compile_options, parse_define

        with compile_options(dict(parse_define(d) for d in defines), include_dirs):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
