"""intbed's one exception hierarchy, importable from every package.

Every error a user can cause derives from ``IntbedError`` and carries a
source location where it has one, so the CLI prints one
``file:line:col: error: message`` line and exits 1 instead of a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Loc:
    """A position in a source file (1-based line and column; line 0 is the
    file as a whole, as for a file that cannot be read)."""

    file: str
    line: int
    col: int = 0

    def __str__(self) -> str:
        if not self.line:
            return self.file
        if self.col:
            return f"{self.file}:{self.line}:{self.col}"
        return f"{self.file}:{self.line}"


class IntbedError(Exception):
    """Base of every error intbed reports to a user as one located line."""

    def __init__(self, message: str, loc: Loc | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc

    def __str__(self) -> str:
        if self.loc is None:
            return f"error: {self.message}"
        return f"{self.loc}: error: {self.message}"

    def line(self) -> str:
        """The one line the command line prints for this error."""
        return str(self)


class P4SyntaxError(IntbedError):
    """The program text does not parse."""


class P4SemanticError(IntbedError):
    """Unknown names, type or width mismatches and similar front-end errors."""


class P4UnsupportedError(IntbedError):
    """A valid P4-16 construct the engine does not implement."""


class StfError(IntbedError):
    """A malformed line in an STF packet test."""


class RuntimeConfigError(IntbedError):
    """A control-plane request that names something unknown or is ill-formed."""


class InvalidValueError(IntbedError, ValueError):
    """A value outside what it may be: one line for the CLI, and a
    ``ValueError`` for library callers who catch that."""
