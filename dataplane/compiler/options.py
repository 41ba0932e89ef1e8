"""p4c's preprocessor options (``-D NAME[=VALUE]``, ``-I DIR``) for every
compile a command does, without threading them through each layer.

A command sets them once for its extent (``with compile_options(...)``);
``compile_file`` and the live targets' device configs read them, so a
program configured by defines compiles the same on sim, on
``intbed-switch`` (which receives the preprocessed text) and for p4c.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from common.errors import InvalidValueError


@dataclass(frozen=True)
class CompileOptions:
    defines: Mapping[str, str] = field(default_factory=dict)
    include_dirs: tuple[Path, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.defines or self.include_dirs)

    def cpp_args(self) -> list[str]:
        """As p4c passes them on to cpp."""
        return [*(f"-D{k}={v}" for k, v in self.defines.items()),
                *(f"-I{d}" for d in self.include_dirs)]


_NONE = CompileOptions()
_CURRENT: contextvars.ContextVar[CompileOptions | None] = contextvars.ContextVar(
    "intbed_compile_options", default=None)


def current() -> CompileOptions:
    return _CURRENT.get() or _NONE


@contextmanager
def compile_options(defines: Mapping[str, str] | None = None,
                    include_dirs: Sequence[Path] = ()) -> Iterator[CompileOptions]:
    opts = CompileOptions(dict(defines or {}), tuple(Path(d) for d in include_dirs))
    token = _CURRENT.set(opts)
    try:
        yield opts
    finally:
        _CURRENT.reset(token)


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def parse_define(text: str) -> tuple[str, str]:
    """``NAME`` (defined as 1, as cpp does) or ``NAME=VALUE``."""
    name, eq, value = text.partition("=")
    if not _NAME.match(name):
        raise InvalidValueError(f"-D {text}: '{name}' is not a macro name (letters, digits "
                                "and _, not starting with a digit)")
    return name, value if eq else "1"
