"""Syntax tree of a P4-16 program, as the grammar produces it.

Nodes are plain dataclasses; names are not resolved and types are not
checked here (that is ``typecheck``'s job). Every node has ``loc`` for
diagnostics. Annotations are kept as ``Annotation`` records because some of
them (``@name``, ``@hidden``, ``@priority``, ``@controller_header``) change
what the program means to the control plane.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field

from common.errors import Loc

NOLOC = Loc("<builtin>", 0, 0)


@dataclass(slots=True)
class Annotation:
    """``@name(body)``; ``body`` is the raw text between the parentheses
    (string literals keep their quotes), or None for ``@name`` alone."""

    name: str
    body: str | None = None
    # Parsed expression arguments, when the body is an expression list.
    args: list[Expr] = field(default_factory=list)
    loc: Loc = NOLOC


@dataclass(slots=True)
class Node:
    loc: Loc = field(default=NOLOC, kw_only=True)


# ---------------------------------------------------------------- types


@dataclass(slots=True)
class TypeRef(Node):
    """Base class of type expressions."""


@dataclass(slots=True)
class TypeName(TypeRef):
    """A named type: typedef, header, struct, enum, extern, parser, ...
    ``error`` and ``match_kind`` also arrive as TypeName."""

    name: str
    absolute: bool = False  # written with a leading dot: ``.name``


@dataclass(slots=True)
class BitType(TypeRef):
    """``bit<W>``, ``int<W>`` or plain ``bit`` (width 1). The width is an
    expression because it may name a constant."""

    width: Expr
    signed: bool = False


@dataclass(slots=True)
class VarbitType(TypeRef):
    width: Expr


@dataclass(slots=True)
class IntType(TypeRef):
    """The arbitrary-precision ``int``."""


@dataclass(slots=True)
class BoolType(TypeRef):
    pass


@dataclass(slots=True)
class StringType(TypeRef):
    pass


@dataclass(slots=True)
class VoidType(TypeRef):
    pass


@dataclass(slots=True)
class DontCareType(TypeRef):
    """``_`` in a type position."""


@dataclass(slots=True)
class StackType(TypeRef):
    """``T[size]``: a header stack (or array of structs)."""

    elem: TypeRef
    size: Expr


@dataclass(slots=True)
class SpecializedType(TypeRef):
    """``base<args>``, e.g. ``register<bit<32>>`` or ``tuple``'s cousins."""

    base: TypeName
    args: list[TypeRef]


@dataclass(slots=True)
class TupleType(TypeRef):
    elems: list[TypeRef]


# ---------------------------------------------------------- expressions


@dataclass(slots=True)
class Expr(Node):
    """Base class of expressions."""


@dataclass(slots=True)
class IntLit(Expr):
    """An integer literal. ``width`` is None for an unsized literal
    (``5``, ``0xff``); ``16w5`` gives width 16, ``8s-3`` signed width 8."""

    value: int
    width: int | None = None
    signed: bool = False


@dataclass(slots=True)
class BoolLit(Expr):
    value: bool


@dataclass(slots=True)
class StringLit(Expr):
    value: str


@dataclass(slots=True)
class Name(Expr):
    """An identifier; ``absolute`` for ``.name`` (top-level scope)."""

    name: str
    absolute: bool = False


@dataclass(slots=True)
class Member(Expr):
    """``expr.name``. ``error.X``, ``Enum.X``, ``hdr.f``, ``t.apply`` all
    arrive as Member."""

    expr: Expr
    name: str


@dataclass(slots=True)
class TypeMember(Expr):
    """``Type.name`` where the left side is syntactically a type that is
    not a plain identifier (rare: e.g. a specialized type). Plain
    ``Name.member`` is a Member."""

    type: TypeRef
    name: str


@dataclass(slots=True)
class Index(Expr):
    """``expr[index]``."""

    expr: Expr
    index: Expr


@dataclass(slots=True)
class Slice(Expr):
    """``expr[hi:lo]``."""

    expr: Expr
    hi: Expr
    lo: Expr


@dataclass(slots=True)
class Unary(Expr):
    """``op`` is one of ``-``, ``+``, ``~``, ``!``."""

    op: str
    expr: Expr


@dataclass(slots=True)
class Binary(Expr):
    """``op`` is one of ``* / % + - |+| |-| << >> <= >= < > != == & ^ |
    ++ && ||`` (``++`` is concatenation)."""

    op: str
    left: Expr
    right: Expr


@dataclass(slots=True)
class Mux(Expr):
    """``cond ? then : other``."""

    cond: Expr
    then: Expr
    other: Expr


@dataclass(slots=True)
class Cast(Expr):
    """``(type) expr``."""

    type: TypeRef
    expr: Expr


@dataclass(slots=True)
class Arg(Node):
    """One call argument; ``value`` is a DontCare for ``_``; ``name`` is set
    for named arguments (``f(x = 1)``)."""

    value: Expr
    name: str | None = None


@dataclass(slots=True)
class Call(Expr):
    """``func<type_args>(args)``; ``func`` is a Name or Member. A
    constructor call ``Type(args)`` in an expression also arrives here."""

    func: Expr
    args: list[Arg]
    type_args: list[TypeRef] = field(default_factory=list)


@dataclass(slots=True)
class ListExpr(Expr):
    """``{a, b, c}``: a tuple/list/struct initializer by position."""

    elems: list[Expr]


@dataclass(slots=True)
class StructExpr(Expr):
    """``{f1 = a, f2 = b}``: a struct/header initializer by name. The
    grammar leaves ``type`` None; a cast around it gives the type."""

    fields: list[tuple[str, Expr]]
    type: TypeRef | None = None


@dataclass(slots=True)
class DontCare(Expr):
    """``_`` as an expression (out argument to discard, select keyset)."""


@dataclass(slots=True)
class InvalidHeader(Expr):
    """``{#}``: the invalid header/union value."""


@dataclass(slots=True)
class Default(Expr):
    """``default`` as a keyset or switch label."""


@dataclass(slots=True)
class Mask(Expr):
    """``value &&& mask`` keyset."""

    value: Expr
    mask: Expr


@dataclass(slots=True)
class Range(Expr):
    """``lo .. hi`` keyset."""

    lo: Expr
    hi: Expr


# ------------------------------------------------------------ statements


@dataclass(slots=True)
class Stmt(Node):
    """Base class of statements."""


@dataclass(slots=True)
class Assign(Stmt):
    """``lhs = rhs``, or ``lhs op= rhs`` with ``op`` the binary operator
    (``+``, ``-``, ``*``, ``/``, ``%``, ``<<``, ``>>``, ``&``, ``|``, ``^``,
    ``|+|``, ``|-|``); op is None for plain assignment."""

    lhs: Expr
    rhs: Expr
    op: str | None = None


@dataclass(slots=True)
class CallStmt(Stmt):
    call: Call


@dataclass(slots=True)
class If(Stmt):
    cond: Expr
    then: Stmt
    other: Stmt | None = None


@dataclass(slots=True)
class Block(Stmt):
    stmts: list[Stmt]
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(slots=True)
class Exit(Stmt):
    pass


@dataclass(slots=True)
class Return(Stmt):
    value: Expr | None = None


@dataclass(slots=True)
class Break(Stmt):
    pass


@dataclass(slots=True)
class Continue(Stmt):
    pass


@dataclass(slots=True)
class Empty(Stmt):
    pass


@dataclass(slots=True)
class SwitchCase(Node):
    """One ``label: body`` or ``label:`` (fall-through, body None) arm.
    A label is an Expr (a Name for an action name, or a Default)."""

    label: Expr
    body: Block | None


@dataclass(slots=True)
class Switch(Stmt):
    expr: Expr
    cases: list[SwitchCase]


@dataclass(slots=True)
class For(Stmt):
    """C-style ``for (init; cond; update) body``; init/update are lists of
    statements (declarations or assignments/calls)."""

    init: list[Stmt]
    cond: Expr | None
    update: list[Stmt]
    body: Stmt


@dataclass(slots=True)
class ForIn(Stmt):
    """``for (T x in collection) body``; ``type`` is None for ``for (x in
    ...)``."""

    type: TypeRef | None
    name: str
    collection: Expr
    body: Stmt


# ---------------------------------------------------------- declarations


@dataclass(slots=True)
class Decl(Stmt):
    """Base class of declarations (some may stand as statements)."""

    name: str
    annotations: list[Annotation] = field(default_factory=list, kw_only=True)


@dataclass(slots=True)
class Param(Node):
    """A parameter; ``direction`` is ``''`` (directionless), ``in``,
    ``out`` or ``inout``."""

    direction: str
    type: TypeRef
    name: str
    default: Expr | None = None
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(slots=True)
class VarDecl(Decl):
    """``T name [= init];`` (local variable, parser/control local too)."""

    type: TypeRef
    init: Expr | None = None


@dataclass(slots=True)
class ConstDecl(Decl):
    type: TypeRef
    value: Expr


@dataclass(slots=True)
class Typedef(Decl):
    """``typedef T name;`` or, with ``newtype``, ``type T name;``."""

    type: TypeRef
    newtype: bool = False


@dataclass(slots=True)
class StructField(Node):
    type: TypeRef
    name: str
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(slots=True)
class HeaderDecl(Decl):
    fields: list[StructField]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True)
class HeaderUnionDecl(Decl):
    fields: list[StructField]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True)
class StructDecl(Decl):
    fields: list[StructField]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True)
class EnumDecl(Decl):
    """``enum name {A, B}`` or ``enum bit<8> name {A = 1, B = 2}``:
    ``underlying`` is the serializable type or None; ``values`` parallels
    ``members`` (None entries for plain enums)."""

    members: list[str]
    underlying: TypeRef | None = None
    values: list[Expr | None] = field(default_factory=list)


@dataclass(slots=True)
class ErrorDecl(Decl):
    """``error { A, B }`` (name is ``error``); several declarations merge."""

    members: list[str]


@dataclass(slots=True)
class MatchKindDecl(Decl):
    """``match_kind { exact, ... }`` (name is ``match_kind``)."""

    members: list[str]


@dataclass(slots=True)
class MethodDecl(Decl):
    """A method or constructor prototype inside an extern. A constructor
    has ``return_type`` None and the extern's name."""

    return_type: TypeRef | None
    params: list[Param]
    type_params: list[str] = field(default_factory=list)
    abstract: bool = False


@dataclass(slots=True)
class ExternDecl(Decl):
    """``extern Name<T> { methods }``."""

    methods: list[MethodDecl]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ExternFunctionDecl(Decl):
    """``extern R name<T>(params);``."""

    return_type: TypeRef
    params: list[Param]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True)
class FunctionDecl(Decl):
    """``R name<T>(params) { body }``."""

    return_type: TypeRef
    params: list[Param]
    body: Block
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ActionDecl(Decl):
    params: list[Param]
    body: Block


@dataclass(slots=True)
class ParserTypeDecl(Decl):
    """``parser Name<T>(params);``: a parser prototype."""

    params: list[Param]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ControlTypeDecl(Decl):
    params: list[Param]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True)
class PackageTypeDecl(Decl):
    params: list[Param]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Instantiation(Decl):
    """``Type(args) name;`` e.g. ``register<bit<32>>(16) r;`` or the
    top-level ``V1Switch(p(), ...) main;``."""

    type: TypeRef
    args: list[Arg]


@dataclass(slots=True)
class ValueSetDecl(Decl):
    """``value_set<T>(size) name;``."""

    type: TypeRef
    size: Expr


@dataclass(slots=True)
class Keyset(Node):
    """Helper for select cases and table entries: one or more keyset
    expressions (a ListExpr-like tuple). Elements are Expr, Mask, Range,
    Default or DontCare."""

    elems: list[Expr]


@dataclass(slots=True)
class SelectCase(Node):
    keyset: Keyset
    state: str


@dataclass(slots=True)
class Transition(Node):
    """``transition state;`` (``select_exprs`` empty, one case with a Default
    keyset) or ``transition select(exprs) { cases }``."""

    select_exprs: list[Expr]
    cases: list[SelectCase]


@dataclass(slots=True)
class ParserState(Decl):
    stmts: list[Stmt]
    transition: Transition | None  # None: implicit ``transition reject``


@dataclass(slots=True)
class ParserDecl(Decl):
    params: list[Param]
    ctor_params: list[Param]
    locals: list[Decl]
    states: list[ParserState]
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True)
class KeyElement(Node):
    expr: Expr
    match_kind: str
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(slots=True)
class ActionRef(Node):
    """An action named in ``actions``, ``default_action`` or an entry,
    with its (possibly empty) argument list."""

    name: Expr  # a Name (possibly absolute) or Member
    args: list[Arg] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(slots=True)
class TableEntry(Node):
    keyset: Keyset
    action: ActionRef
    priority: Expr | None = None
    annotations: list[Annotation] = field(default_factory=list)
    const: bool = False


@dataclass(slots=True)
class TableProperty(Node):
    """A table property other than key/actions/default_action/entries
    (``size``, ``implementation``, ``counters``, ``meters``,
    ``support_timeout``, ...)."""

    name: str
    value: Expr
    const: bool = False
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(slots=True)
class TableDecl(Decl):
    keys: list[KeyElement]
    actions: list[ActionRef]
    default_action: ActionRef | None = None
    default_action_const: bool = False
    entries: list[TableEntry] | None = None
    entries_const: bool = False
    properties: list[TableProperty] = field(default_factory=list)


@dataclass(slots=True)
class ControlDecl(Decl):
    params: list[Param]
    ctor_params: list[Param]
    locals: list[Decl]
    body: Block
    type_params: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Program(Node):
    decls: list[Decl]


def walk(node: object) -> Iterator[Node]:
    """Every syntax node under ``node`` (a node or a list of them), parents
    first, in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, list):
            stack.extend(reversed(n))
            continue
        if not isinstance(n, Node):
            continue
        yield n
        for f in dataclasses.fields(n):
            if f.name == "loc":
                continue
            v = getattr(n, f.name)
            if isinstance(v, Node | list):
                stack.append(v)
