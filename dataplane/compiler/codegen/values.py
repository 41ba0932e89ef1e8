"""Compile-time descriptions of values and locations in generated code."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.types import Type, slots, strip


@dataclass(eq=False)
class ApplyResultT(Type):
    """The result of ``table.apply()``: fields hit/miss/action_run."""

    table: Any
    hit: str
    action: str


@dataclass(eq=False)
class ActionRunT(Type):
    table: Any


def slot(base: int | str, k: int = 0) -> str:
    """Python code reading slot ``base + k``."""
    if isinstance(base, int):
        return f"s[{base + k}]"
    return f"s[{base}]" if k == 0 else f"s[{base} + {k}]"


def py_tuple(parts: list[str]) -> str:
    """Python source of a tuple of ``parts``; a value of no slots (an empty
    struct or header list) is ``()``, which ``(,)`` is not."""
    return f"({', '.join(parts)},)" if parts else "()"


def offset(base: int | str, k: int) -> int | str:
    if isinstance(base, int):
        return base + k
    return base if k == 0 else f"{base} + {k}"


@dataclass(slots=True)
class Val:
    """A typed value: ``code`` for a scalar, ``parts`` (one code per slot)
    for a compound value; ``const`` for compile-time constants; ``base`` when
    the value is read straight from storage."""

    type: Type
    code: str = ""
    parts: list[str] | None = None
    const: Any = None
    base: int | str | None = None

    @property
    def is_const(self) -> bool:
        return self.const is not None


def location(t: Type, base: int | str) -> Val:
    if slots(t) == 1 and not _is_multi(t):
        return Val(t, code=slot(base), base=base)
    return Val(t, parts=[slot(base, k) for k in range(slots(t))], base=base)


def _is_multi(t: Type) -> bool:
    from dataplane.compiler.frontend.types import is_compound

    return is_compound(strip(t))


def const(t: Type, value: Any) -> Val:
    return Val(t, code=repr(value), const=value)


@dataclass(slots=True)
class LValue:
    """An assignable location; ``slice`` is (hi, lo) for ``x[hi:lo] = ...``."""

    type: Type
    base: int | str
    slice: tuple[int, int] | None = None
    base_type: Type | None = None


@dataclass(eq=False)
class Evaluated(ast.Expr):
    """An already compiled operand standing in an expression tree."""

    val: Val = None  # type: ignore[assignment]
