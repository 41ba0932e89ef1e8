"""Points and the store protocol the collector writes through."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple, Protocol

FieldValue = int | float | str | bool


class Point(NamedTuple):
    """One metric value. ``tags`` are (name, value) pairs sorted by name;
    ``time_ns`` is nanoseconds since the Unix epoch."""

    measurement: str
    tags: tuple[tuple[str, str], ...]
    fields: Mapping[str, FieldValue]
    time_ns: int


class Store(Protocol):
    def write(self, points: Sequence[Point]) -> None:
        """Take points; a store may buffer them until ``flush``."""
        ...

    def flush(self) -> None:
        """Send or commit what is buffered, as far as the store can now."""
        ...

    def close(self) -> None: ...


class MemoryStore:
    """Points in a list, and the number of ``write`` calls."""

    def __init__(self) -> None:
        self.points: list[Point] = []
        self.writes = 0

    def write(self, points: Sequence[Point]) -> None:
        self.points.extend(points)
        self.writes += 1

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

