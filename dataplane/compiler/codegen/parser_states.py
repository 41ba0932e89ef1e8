"""Parser states merged into the states that lead to them.

Each parser state is generated as a function returning the next state's
function, driven by a loop; a packet through Ethernet, IPv4 and TCP costs
four Python calls. Where a transition names a state that is not already on
the way to it (no loop), the target's body can stand in place of the
``return`` that names it: a state function returns what its successor
would have returned, so the merged function computes the same. A parser
whose start state then names no state at all is that one function.

Sizes are bounded: a state reached along several paths is copied into
each, so a function stops growing past ``MAX_LINES`` (or ``MAX_DEPTH``
states deep) and the rest stays a ``return`` to the loop.
"""

from __future__ import annotations

import re

MAX_LINES = 400
MAX_DEPTH = 8
BODY_INDENT = " " * 8
"""Indentation of a generated state function's body (inside ``make``)."""

_GOTO = re.compile(r"^(\s*)return (p_\w+)$")


def merge_states(bodies: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each state's body (its lines after the ``def``) with the transitions
    to other states replaced by their bodies where no loop and the size
    allow; keyed like ``bodies`` (state function names)."""
    return {name: _expand(bodies, lines, {name}) for name, lines in bodies.items()}


def named_states(lines: list[str], bodies: dict[str, list[str]]) -> set[str]:
    """The state functions of ``bodies`` that ``lines`` still return."""
    return {m.group(2) for m in map(_GOTO.match, lines) if m and m.group(2) in bodies}


def live_states(merged: dict[str, list[str]], start: str) -> set[str]:
    """The state functions the driving loop can reach from ``start`` once
    merged (the start itself when it names any); the rest are merged into
    their callers everywhere and need not be generated."""
    if not named_states(merged[start], merged):
        return set()
    live: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        if name not in live:
            live.add(name)
            todo += named_states(merged[name], merged)
    return live


def _expand(bodies: dict[str, list[str]], lines: list[str], chain: set[str]) -> list[str]:
    out: list[str] = []
    for k, line in enumerate(lines):
        m = _GOTO.match(line)
        target = m.group(2) if m else None
        if m is None or target not in bodies or target in chain or len(chain) > MAX_DEPTH:
            out.append(line)
            continue
        inner = _expand(bodies, bodies[target], chain | {target})
        if len(out) + len(inner) + len(lines) - k > MAX_LINES:
            out.append(line)
            continue
        indent = m.group(1)
        for body_line in inner:
            if not body_line.startswith(BODY_INDENT):
                raise RuntimeError(f"state {target}: a body line outside its function: "
                                   f"{body_line!r}")
            out.append(indent + body_line[len(BODY_INDENT):])
    return out
