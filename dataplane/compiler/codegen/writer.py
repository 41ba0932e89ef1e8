"""Line buffer for generated Python source."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class Writer:
    """Collects indented lines of one generated function."""

    __slots__ = ("lines", "depth", "ctypes")

    def __init__(self, depth: int = 0) -> None:
        self.lines: list[str] = []
        self.depth = depth
        # Locals the compiled fast path may hold as C values (name -> a
        # type such as ``cython.ulonglong``), declared on the function by a
        # decorator that Python ignores, written before the function when
        # the source is assembled. Lines copied into another function lose
        # the declaration unless it is copied too (parser states are), and
        # stay Python objects: slower, not wrong.
        self.ctypes: dict[str, str] = {}

    def __call__(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    @contextmanager
    def block(self, header: str) -> Iterator[None]:
        """``header:`` followed by an indented body (``pass`` if empty)."""
        self(header + ":")
        self.depth += 1
        mark = len(self.lines)
        try:
            yield
        finally:
            if len(self.lines) == mark:
                self("pass")
            self.depth -= 1

    def insert(self, index: int, text: str) -> None:
        """Insert a line at ``index`` at the current depth (used to hoist an
        operand before statements a later operand needed)."""
        self.lines.insert(index, "    " * self.depth + text)

    def text(self) -> str:
        return "\n".join(self.lines)
