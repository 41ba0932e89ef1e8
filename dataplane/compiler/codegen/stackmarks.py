"""A mark in each packet's state for "a long header stack may be touched".

Long header stacks make every packet pay for them: gpint.p4's probe stacks
are 1,855 of its 2,000 slots, copied from the template at ingress, freed
after egress and scanned by the deparser for valid elements, although
plain packets never touch them. This pass runs over the generated source
and, before every statement that may store into a long stack (a constant
slot inside one, a slice overlapping one, or an index only known at run
time), sets a hidden mark slot. A state whose mark is clear therefore holds
exactly the template in its long stacks: the deparser skips them on one
slot's test (the code generator puts the mark in front of a long stack's
any-valid scan), and the engine resets a finished state for the next packet
without touching them (``dataplane.runtime.switch``). The code generator
allocates the mark right after the first long stack's variable, the
headers as a rule, so copying the headers copies the mark too.

The pass is conservative (a mark set where nothing was stored costs time,
never correctness) and relies on one property of the generated code: the
state is the parameter ``s`` of generated functions only, never stored
under another name nor handed to runtime helpers.
"""

from __future__ import annotations

import ast

from dataplane.compiler.frontend.types import (
    HeaderT,
    StackT,
    StructLikeT,
    TupleT,
    Type,
    slots,
    strip,
)

MIN_SLOTS = 32
"""Stacks at least this long are worth a mark; shorter ones are copied as
any header (a mark per statement would cost more than it saves)."""

_COMPOUND = (ast.If, ast.For, ast.While, ast.Try, ast.With, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.ClassDef, ast.Match)


def long_stacks(t: Type, base: int) -> list[tuple[int, int]]:
    """Slot ranges [lo, hi) of the long stacks inside a value of type ``t``
    stored at ``base``."""
    t = strip(t)
    if isinstance(t, StackT):
        n = slots(t)
        return [(base, base + n)] if n >= MIN_SLOTS else []
    out: list[tuple[int, int]] = []
    if isinstance(t, StructLikeT):
        k = base + (1 if isinstance(t, HeaderT) else 0)
        for _, ft in t.fields:
            out += long_stacks(ft, k)
            k += slots(ft)
    elif isinstance(t, TupleT):
        k = base
        for et in t.elems:
            out += long_stacks(et, k)
            k += slots(et)
    return out


def _touches(index: ast.expr, spans: list[tuple[int, int]]) -> bool:
    if isinstance(index, ast.Constant) and isinstance(index.value, int):
        return any(lo <= index.value < hi for lo, hi in spans)
    if isinstance(index, ast.Slice):
        lo_n, hi_n = index.lower, index.upper
        if (isinstance(lo_n, ast.Constant) and isinstance(hi_n, ast.Constant)
                and isinstance(lo_n.value, int) and isinstance(hi_n.value, int)):
            return any(lo_n.value < hi and lo < hi_n.value for lo, hi in spans)
    return True  # known only at run time


def _stores_into(stmt: ast.stmt, spans: list[tuple[int, int]]) -> bool:
    for node in ast.walk(stmt):
        if (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del)
                and isinstance(node.value, ast.Name) and node.value.id == "s"
                and _touches(node.slice, spans)):
            return True
    return False


def mark_stack_writes(source: str, spans: list[tuple[int, int]], mark: int) -> str:
    """``source`` with ``s[mark] = 1`` before each statement that may store
    into ``spans``."""
    if not spans:
        return source
    lines = source.split("\n")
    marks: list[tuple[int, int]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt) and not isinstance(node, _COMPOUND) \
                and _stores_into(node, spans):
            if lines[node.lineno - 1][:node.col_offset].strip():
                raise RuntimeError(f"generated line {node.lineno} holds more than one "
                                   "statement: no place for a stack mark")
            marks.append((node.lineno - 1, node.col_offset))
    for row, col in sorted(set(marks), reverse=True):
        lines.insert(row, " " * col + f"s[{mark}] = 1")
    return "\n".join(lines)
