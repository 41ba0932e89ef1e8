"""Resolved P4 types and their flat storage layout.

The engine keeps all per-packet state of a program in one Python list of
integers (the *slot list*). ``slots(t)`` says how many list cells a value of
type ``t`` occupies: a header is its validity bit followed by its fields, a
varbit is (value, length in bits), a stack is its ``nextIndex`` followed by
its elements, structs and unions are their members in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property


class Type:
    """Base class of resolved types."""

    def __str__(self) -> str:  # pragma: no cover - overridden
        return type(self).__name__


@dataclass(frozen=True, eq=True)
class BitT(Type):
    width: int
    signed: bool = False

    def __str__(self) -> str:
        return f"{'int' if self.signed else 'bit'}<{self.width}>"

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1


@dataclass(frozen=True, eq=True)
class IntT(Type):
    """Arbitrary-precision integer (unsized literals and constants)."""

    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True, eq=True)
class BoolT(Type):
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True, eq=True)
class VarbitT(Type):
    width: int

    def __str__(self) -> str:
        return f"varbit<{self.width}>"


@dataclass(frozen=True, eq=True)
class StringT(Type):
    def __str__(self) -> str:
        return "string"


@dataclass(frozen=True, eq=True)
class VoidT(Type):
    def __str__(self) -> str:
        return "void"


@dataclass(frozen=True, eq=True)
class DontCareT(Type):
    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True, eq=True)
class MatchKindT(Type):
    def __str__(self) -> str:
        return "match_kind"


@dataclass(eq=False)
class ErrorT(Type):
    """The single ``error`` type; member codes follow declaration order,
    as p4c numbers them for BMv2."""

    members: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return "error"


@dataclass(eq=False)
class EnumT(Type):
    name: str
    members: list[str]
    underlying: BitT | None = None
    values: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.name


@dataclass(eq=False)
class NewT(Type):
    """``type T name``: a distinct type over a base type (P4Runtime
    translation aside, it behaves like its base)."""

    name: str
    base: Type

    def __str__(self) -> str:
        return self.name


@dataclass(eq=False)
class StructLikeT(Type):
    name: str
    fields: list[tuple[str, Type]]
    annotations: dict[str, list] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.name

    def field_type(self, name: str) -> Type | None:
        for fname, ftype in self.fields:
            if fname == name:
                return ftype
        return None

    @cached_property
    def offsets(self) -> dict[str, int]:
        """Slot offset of each field inside the value."""
        off = 1 if isinstance(self, HeaderT) else 0
        result = {}
        for fname, ftype in self.fields:
            result[fname] = off
            off += slots(ftype)
        return result


class StructT(StructLikeT):
    pass


class HeaderT(StructLikeT):
    @cached_property
    def bit_width(self) -> int:
        """Fixed width in bits, counting a varbit at its maximum."""
        total = 0
        for _, ftype in self.fields:
            total += field_bits(ftype)
        return total

    @cached_property
    def has_varbit(self) -> bool:
        return any(isinstance(t, VarbitT) for _, t in self.fields)


class UnionT(StructLikeT):
    pass


@dataclass(eq=False)
class StackT(Type):
    elem: Type
    size: int

    def __str__(self) -> str:
        return f"{self.elem}[{self.size}]"


@dataclass(eq=False)
class TupleT(Type):
    elems: list[Type]

    def __str__(self) -> str:
        return "tuple<" + ", ".join(map(str, self.elems)) + ">"


@dataclass(eq=False)
class ListT(Type):
    """The type of a ``{...}`` list expression before it meets a target."""

    elems: list[Type]

    def __str__(self) -> str:
        return "list<" + ", ".join(map(str, self.elems)) + ">"


@dataclass(eq=False)
class ExternT(Type):
    name: str
    decl: object
    args: list[Type] = field(default_factory=list)

    def __str__(self) -> str:
        if self.args:
            return f"{self.name}<{', '.join(map(str, self.args))}>"
        return self.name


@dataclass(eq=False)
class BlockT(Type):
    """A parser, control or package declaration or prototype."""

    kind: str  # "parser", "control", "package"
    name: str
    decl: object

    def __str__(self) -> str:
        return self.name


@dataclass(eq=False)
class TypeVarT(Type):
    name: str

    def __str__(self) -> str:
        return self.name


def strip(t: Type) -> Type:
    """Look through ``type`` definitions (newtype)."""
    while isinstance(t, NewT):
        t = t.base
    return t


def field_bits(t: Type) -> int:
    t = strip(t)
    if isinstance(t, BitT):
        return t.width
    if isinstance(t, BoolT):
        return 1
    if isinstance(t, VarbitT):
        return t.width
    if isinstance(t, EnumT) and t.underlying is not None:
        return t.underlying.width
    if isinstance(t, HeaderT):
        return t.bit_width
    if isinstance(t, StructT):
        return sum(field_bits(ft) for _, ft in t.fields)
    if isinstance(t, StackT):
        return t.size * field_bits(t.elem)
    if isinstance(t, TupleT | ListT):  # a digest of ``{a, b}``: its fields in a row
        return sum(field_bits(e) for e in t.elems)
    if isinstance(t, ErrorT):
        return 32
    raise TypeError(f"type {t} has no fixed width")


def slots(t: Type) -> int:
    """Number of slot-list cells a value of ``t`` occupies."""
    t = strip(t)
    if isinstance(t, VarbitT):
        return 2
    if isinstance(t, HeaderT):
        return 1 + sum(slots(ft) for _, ft in t.fields)
    if isinstance(t, StructLikeT):
        return sum(slots(ft) for _, ft in t.fields)
    if isinstance(t, StackT):
        return 1 + t.size * slots(t.elem)
    if isinstance(t, TupleT | ListT):
        return sum(slots(e) for e in t.elems)
    return 1


def is_compound(t: Type) -> bool:
    return isinstance(strip(t), StructLikeT | StackT | TupleT | ListT | VarbitT)


def scalar_leaves(t: Type) -> list[Type]:
    """The type of every slot of ``t`` in layout order (validity bits and
    stack indices are ``bit<32>``/``bool``)."""
    t = strip(t)
    if isinstance(t, VarbitT):
        return [t, BitT(32)]
    if isinstance(t, HeaderT):
        out: list[Type] = [BoolT()]
        for _, ft in t.fields:
            out += scalar_leaves(ft)
        return out
    if isinstance(t, StructLikeT):
        out = []
        for _, ft in t.fields:
            out += scalar_leaves(ft)
        return out
    if isinstance(t, StackT):
        out = [BitT(32)]
        for _ in range(t.size):
            out += scalar_leaves(t.elem)
        return out
    if isinstance(t, TupleT | ListT):
        out = []
        for e in t.elems:
            out += scalar_leaves(e)
        return out
    return [t]


def same_type(a: Type, b: Type) -> bool:
    a, b = strip(a), strip(b)
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, BitT | VarbitT | BoolT | IntT | StringT | VoidT | MatchKindT | ErrorT):
        return a == b or isinstance(a, ErrorT)
    if isinstance(a, StackT):
        return a.size == b.size and same_type(a.elem, b.elem)  # type: ignore[attr-defined]
    if isinstance(a, TupleT | ListT):
        return len(a.elems) == len(b.elems) and all(  # type: ignore[attr-defined]
            same_type(x, y) for x, y in zip(a.elems, b.elems)  # type: ignore[attr-defined]
        )
    if isinstance(a, StructLikeT):
        return a.name == b.name  # type: ignore[attr-defined]
    return False
