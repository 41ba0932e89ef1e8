"""One self-contained P4 file for ``intbed-switch``'s device config.

The intbed P4Runtime server compiles the source text of
SetForwardingPipelineConfig in a directory of its own, where a program's
``#include "..."`` files are not found (only ``<core.p4>`` and
``<v1model.p4>`` are built in). ``flatten`` inlines quoted includes,
recursively and relative to the including file as cpp resolves them, with
``#line`` markers around each, so diagnostics still name the original
files and lines.
"""

from __future__ import annotations

import re
from pathlib import Path

from dataplane.errors import IntbedError, Loc

_QUOTED = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$')


def flatten(path: str | Path, _stack: tuple[Path, ...] = ()) -> str:
    """The text of ``path`` with every quoted include inlined."""
    path = Path(path).resolve()
    if path in _stack:
        raise IntbedError(f"{path.name} includes itself", Loc(str(_stack[-1]), 1))
    out: list[str] = []
    lines = path.read_text().splitlines()
    for number, line in enumerate(lines, 1):
        m = _QUOTED.match(line)
        if m is None:
            out.append(line)
            continue
        target = path.parent / m.group(1)
        if not target.is_file():
            raise IntbedError(f"include file '{m.group(1)}' not found", Loc(str(path), number))
        out.append(f'#line 1 "{target}"')
        out.append(flatten(target, (*_stack, path)))
        out.append(f'#line {number + 1} "{path}"')
    return "\n".join(out) + "\n"
