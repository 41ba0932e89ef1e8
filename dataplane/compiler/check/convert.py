"""Implicit conversions and explicit casts between P4 types (spec 8.11).

Each rule answers None when the conversion is allowed and otherwise the
message that says why not; an unknown type (None) converts to anything,
since a generic declaration is only checked for real once specialised.
"""

from __future__ import annotations

from dataplane.compiler.check.typeref import known
from dataplane.compiler.frontend.types import (
    BitT,
    BoolT,
    DontCareT,
    EnumT,
    ErrorT,
    ExternT,
    HeaderT,
    IntT,
    ListT,
    MatchKindT,
    StackT,
    StringT,
    StructLikeT,
    TupleT,
    Type,
    VarbitT,
    VoidT,
    same_type,
)


def implicit(src: Type | None, dst: Type | None) -> str | None:
    """Why a value of ``src`` cannot stand where ``dst`` is wanted."""
    s, d = known(src), known(dst)
    if s is None or d is None or isinstance(s, DontCareT):
        return None
    bad = f"cannot use a value of type {src} as {dst}"
    if isinstance(d, StructLikeT | TupleT | StackT):
        if isinstance(s, ListT):
            return _list_into(s.elems, d, dst)
        if isinstance(s, StructLikeT) and s.name == "anonymous" and isinstance(d, StructLikeT):
            names = {n for n, _ in d.fields}
            extra = [n for n, _ in s.fields if n not in names]
            if extra:
                return f"{d.name} has no field '{extra[0]}'"
            given = {n for n, _ in s.fields}
            missing = [n for n, _ in d.fields if n not in given]
            if missing:
                return f"field '{missing[0]}' of {d.name} is not initialised"
            return _first(implicit(st, d.field_type(n)) for n, st in s.fields)
        return None if same_type(s, d) else bad
    if isinstance(s, ListT | StructLikeT | TupleT | StackT):
        return bad
    if isinstance(d, BitT):
        if isinstance(s, IntT):
            return None
        if isinstance(s, BitT):
            return None if s == d else (f"cannot assign a value of type {s} to {d}: width or "
                                        "signedness differs (add a cast)")
        if isinstance(s, EnumT) and s.underlying is not None:
            return None if s.underlying == d else bad
        return f"cannot use a bool as {dst} (cast it)" if isinstance(s, BoolT) else bad
    if isinstance(d, EnumT):
        if s is d or (isinstance(s, IntT) and d.underlying is not None):
            return None
        return bad
    if isinstance(d, BoolT):
        return None if isinstance(s, BoolT) else f"cannot use a value of type {src} as bool"
    if isinstance(d, VarbitT):
        return None if isinstance(s, VarbitT) else bad
    if isinstance(d, ErrorT | MatchKindT | StringT):
        return None if type(s) is type(d) else bad
    if isinstance(d, IntT | ExternT | DontCareT | VoidT):
        return None
    return None if same_type(s, d) else bad


def _list_into(elems: list[Type], d: Type, dst: Type | None) -> str | None:
    if isinstance(d, StackT):
        wanted = [d.elem] * d.size
    elif isinstance(d, TupleT):
        wanted = list(d.elems)
    elif isinstance(d, StructLikeT):
        wanted = [ft for _, ft in d.fields]
    else:  # pragma: no cover - callers pass aggregates only
        return None
    if len(elems) != len(wanted):
        what = "values" if not isinstance(d, HeaderT) else "field values"
        return f"{dst} needs {len(wanted)} {what}, got {len(elems)}"
    return _first(implicit(s, w) for s, w in zip(elems, wanted))


def explicit(src: Type | None, dst: Type | None, constant: bool) -> str | None:
    """Why ``(dst) value`` is not a legal cast; ``constant`` says whether
    the value is known at compile time (an ``int`` must be)."""
    s, d = known(src), known(dst)
    if s is None or d is None:
        return None
    if isinstance(d, StructLikeT | TupleT) or isinstance(s, ListT):
        return implicit(src, dst)
    if isinstance(d, EnumT):
        d = d.underlying or d
    if isinstance(s, EnumT):
        s = s.underlying or s
    if isinstance(d, BoolT):
        if isinstance(s, BoolT | IntT) or (isinstance(s, BitT) and s.width == 1):
            return None
        return f"cannot cast {src} to bool"
    if isinstance(d, BitT):
        if isinstance(s, BoolT | BitT | ErrorT):
            return None
        if isinstance(s, IntT):
            return None if constant else "arbitrary-precision value must be constant"
    if isinstance(d, IntT) and constant:
        return None
    if same_type(s, d):
        return None
    return f"cannot cast {src} to {dst}"


def _first(msgs: object) -> str | None:
    for m in msgs:  # type: ignore[attr-defined]
        if m is not None:
            return m
    return None
