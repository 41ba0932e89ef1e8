"""Command files as simple_switch_CLI reads them: one command per line,
words split on blanks; blank lines and comments (``#`` or ``//`` first)
carry nothing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from common.errors import IntbedError, Loc
from common.textfile import read_text


class CommandFileError(IntbedError):
    """A command that cannot be applied: located at its line, naming the command."""


@dataclass(frozen=True, slots=True)
class Command:
    """One command line: its name, its words after the name, and where it is."""

    name: str
    args: tuple[str, ...]
    loc: Loc
    text: str

    def fail(self, reason: str) -> CommandFileError:
        return CommandFileError(f"{self.name}: {reason} (in '{self.text}')", self.loc)


def parse_commands(text: str, file: str) -> list[Command]:
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", "//")):
            continue
        words = line.split()
        out.append(Command(words[0], tuple(words[1:]), Loc(file, number), line))
    return out


def read_command_file(path: str | Path) -> list[Command]:
    return parse_commands(read_text(path, "command file", CommandFileError), str(path))
