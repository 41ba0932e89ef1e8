"""Implicit conversions and explicit casts between P4 types (spec 8.12).

Each rule answers None when the conversion is allowed and otherwise the
message that says why not; an unknown type (None) converts to anything,
since a generic declaration is only checked for real once specialised.
"""

from __future__ import annotations

from dataplane.compiler.check.typeref import known
from dataplane.compiler.frontend.types import (
    BitT,
    BlockT,
    BoolT,
    DontCareT,
    EnumT,
    ErrorT,
    ExternT,
    HeaderT,
    IntT,
    ListT,
    MatchKindT,
    NewT,
    StackT,
    StringT,
    StructLikeT,
    TupleT,
    Type,
    TypeVarT,
    VarbitT,
    VoidT,
    same_type,
    strip,
)


def implicit(src: Type | None, dst: Type | None) -> str | None:
    """Why a value of ``src`` cannot stand where ``dst`` is wanted."""
    var = _type_variable_clash(src, dst)
    if var is not None:
        return var
    s, d = known(src), known(dst)
    if s is None or d is None or isinstance(s, DontCareT):
        return None
    bad = f"cannot use a value of type {src} as {dst}"
    if _new_type_clash(src, dst, s):
        return f"{bad}: a type declared with 'type' is distinct from its base (cast it)"
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
        if s is d:
            return None
        return f"{bad} (an enum takes only its own members: cast an integer to it)" \
            if isinstance(s, IntT | BitT) else bad
    if isinstance(d, BoolT):
        return None if isinstance(s, BoolT) else f"cannot use a value of type {src} as bool"
    if isinstance(d, VarbitT):
        return None if isinstance(s, VarbitT) else bad
    if isinstance(d, ErrorT | MatchKindT | StringT):
        return None if type(s) is type(d) else bad
    if isinstance(d, IntT | ExternT | DontCareT | VoidT | BlockT):
        return None  # a block fits a parser or control type by its shape, checked elsewhere
    return None if same_type(s, d) else bad


def _type_variable_clash(src: Type | None, dst: Type | None) -> str | None:
    """In a generic body a type variable stands for any type, so only a
    value of that same variable converts to it, and it converts to
    nothing else (spec 8.26)."""
    a, b = _variable(src), _variable(dst)
    if a is None and b is None:
        return None
    if a is not None and b is not None:
        return None if a.name == b.name else f"cannot use a value of type {a} as {b}"
    other = known(dst if a is not None else src)
    if other is None or isinstance(other, DontCareT | VoidT | ExternT | BlockT):
        return None
    return f"cannot use a value of type {src} as {dst}: a type variable stands for any type"


def _variable(t: Type | None) -> TypeVarT | None:
    s = strip(t) if t is not None else None
    return s if isinstance(s, TypeVarT) and s.name != "?" else None


def _new_type_clash(src: Type | None, dst: Type | None, s: Type) -> bool:
    """Whether a new type (``type bit<8> T``) meets a different type: it
    converts to and from its base only by a cast (spec 7.6); an ``int``
    literal still gives it a value, as p4c lets it."""
    a, b = _outer_new(src), _outer_new(dst)
    if a is None and b is None:
        return False
    if a is not None and b is not None:
        return a.name != b.name
    return not isinstance(s, IntT)


def _outer_new(t: Type | None) -> NewT | None:
    return t if isinstance(t, NewT) else None


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
    """Why ``(dst) value`` is not a legal cast (spec 8.12.1, as p4c reads
    it). ``constant`` says whether the value is known at compile time; p4c
    casts any ``int`` (its values are), so it is kept for the message only."""
    s, d = known(src), known(dst)
    if s is None or d is None:
        return None
    if isinstance(d, StructLikeT | TupleT) or isinstance(s, ListT):
        return implicit(src, dst)
    if same_type(s, d) and not isinstance(s, EnumT | ErrorT):
        return None
    if isinstance(s, EnumT | ErrorT) and s is d:
        return None
    why = _cast_problem(s, d)
    return None if why is None else f"cannot cast {src} to {dst}{why}"


def _cast_problem(s: Type, d: Type) -> str | None:
    """'' or a reason when ``s`` cannot be cast to ``d``; None when it can."""
    if isinstance(s, BitT):
        if isinstance(d, BitT):
            if s.width == d.width or s.signed == d.signed:
                return None
            return (": width and signedness both change (cast in two steps, e.g. "
                    f"({d})({BitT(d.width, s.signed)})x)")
        if isinstance(d, BoolT):
            return None if s.width == 1 and not s.signed else ": only a bit<1> casts to bool"
        if isinstance(d, EnumT) and d.underlying is not None:
            return None if d.underlying == s else f": {d}'s underlying type is {d.underlying}"
        return None if isinstance(d, IntT) else ""
    if isinstance(s, BoolT):  # the spec and p4c: to bit<1> only
        if isinstance(d, BitT) and not d.signed and d.width == 1:
            return None
        return (": a bool casts only to bit<1> (then widen it: (bit<W>)(bit<1>)b)"
                if isinstance(d, BitT) else "")
    if isinstance(s, IntT):
        if isinstance(d, EnumT) and d.underlying is not None:
            return None  # through the enum's type, as p4c substitutes it
        return None if isinstance(d, BitT | BoolT | IntT) else ""
    if isinstance(s, EnumT) and s.underlying is not None:
        if isinstance(d, BitT):
            return None if s.underlying == d else f": {s}'s underlying type is {s.underlying}"
        if isinstance(d, EnumT) and d.underlying is not None and d.underlying == s.underlying:
            return None
    return ""


def new_type_cast(src: Type | None, dst: Type | None) -> str | None:
    """A new type casts to and from exactly its base type (spec 7.6); an
    ``int`` constant casts into it, as p4c allows."""
    if known(src) is None or known(dst) is None:
        return None
    if not isinstance(src, NewT) and not isinstance(dst, NewT):
        return None
    if _same(src, dst) or _wraps(dst, src) or _wraps(src, dst):
        return None
    if isinstance(dst, NewT) and isinstance(known(src), IntT):
        return None
    new = dst if isinstance(dst, NewT) else src
    return f"cannot cast {src} to {dst}: {new} converts to and from {new.base} only"


def _same(a: Type, b: Type) -> bool:
    if isinstance(a, NewT) or isinstance(b, NewT):
        return isinstance(a, NewT) and isinstance(b, NewT) and a.name == b.name
    return same_type(a, b)


def _wraps(outer: Type, inner: Type) -> bool:
    return isinstance(outer, NewT) and _same(outer.base, inner)


def _first(msgs: object) -> str | None:
    for m in msgs:  # type: ignore[attr-defined]
        if m is not None:
            return m
    return None
