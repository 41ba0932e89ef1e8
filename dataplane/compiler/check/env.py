"""What the checker knows about each name: entities, scopes and the side
table of results it leaves on the syntax tree."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from common.errors import P4SemanticError
from dataplane.compiler.frontend import ast, scope
from dataplane.compiler.frontend.types import Type

# Kinds of entity a name may denote.
TYPE = "type"
CONST = "const"
VAR = "var"
ACTION = "action"
FUNCTION = "function"
EXTERN_FUNCTION = "extern function"
TABLE = "table"
INSTANCE = "instance"
STATE = "state"
VALUE_SET = "value set"


@dataclass(eq=False)
class Entity:
    """One declaration as the checker sees it. ``type`` is None where it
    cannot be known before instantiation (a type variable's)."""

    kind: str
    decl: Any
    type: Type | None = None
    value: Any = None  # a constant's value when known
    writable: bool = False  # a variable or an out/inout parameter
    overloads: list[Any] = field(default_factory=list)  # extern functions
    scope: Scope | None = None  # where a callable was declared
    params: list[Type | None] = field(default_factory=list)  # resolved parameter types


@dataclass(eq=False)
class Scope(scope.Scope):
    """A lexical scope that refuses a second declaration of a name."""

    def lookup(self, name: str) -> Entity | None:
        return super().lookup(name)

    def child(self) -> Scope:
        return Scope(self)

    def declare(self, name: str, ent: Entity, node: ast.Node) -> None:
        """Bind ``name`` here; a second declaration in one scope is an
        error except for overloads (extern functions, and functions that
        differ in parameter count, as p4c allows)."""
        old = self.names.get(name)
        if old is not None and not _overloads(old, ent):
            where = getattr(old.decl, "loc", None)
            also = f" (first declared at {where})" if where is not None and where.line else ""
            raise P4SemanticError(f"duplicate declaration of '{name}'{also}", node.loc)
        if old is not None and old.kind == EXTERN_FUNCTION:
            old.overloads.append(ent.decl)
            return
        self.names[name] = ent


def _overloads(old: Entity, new: Entity) -> bool:
    if old.kind == new.kind == EXTERN_FUNCTION:
        return True
    if old.kind == new.kind == FUNCTION:  # actions are never overloaded (p4c)
        return len(old.decl.params) != len(new.decl.params)
    if old.kind == TYPE and new.kind == TYPE:
        # A parser or control may take the name of a prototype (v1model's
        # ``control Ingress<H, M>(...)``), as it declares the same shape.
        return old.decl is new.decl or (
            isinstance(old.decl, ast.ParserTypeDecl | ast.ControlTypeDecl)
            and isinstance(new.decl, ast.ParserDecl | ast.ControlDecl))
    return False


@dataclass
class Facts:
    """The checker's results on the tree, keyed by node identity: the type
    of every expression it could type and the entity every identifier it
    resolved names. The nodes themselves stay alive with the program."""

    types: dict[int, Type] = field(default_factory=dict)
    symbols: dict[int, Entity] = field(default_factory=dict)
    extracts: list[tuple[ast.Node, Type]] = field(default_factory=list)
    """Headers given to ``packet_in.extract``, for the target's rules."""
    assignable: set[int] = field(default_factory=set)
    """Nodes of an l-value the checker found writable (and their parts)."""
    converted: set[int] = field(default_factory=set)
    """Nodes whose value the checker converted to a known type (or cast)."""
    hash_algorithms: list[tuple[ast.Expr, str]] = field(default_factory=list)
    """The algorithm argument of every ``hash`` call, with the member it
    names."""
    applied_tables: set[int] = field(default_factory=set)
    """Table declarations some ``apply()`` call applies."""
    extern_calls: list[tuple[ast.Node, Any, list[Type | None], Type | None, bool]] = field(
        default_factory=list)
    """Every call of an extern function or method: the call, the function or
    method declaration called, its parameter types, its result type and
    whether its signature names type parameters the caller cannot see."""
    optional_left_out: list[tuple[ast.Node, str]] = field(default_factory=list)
    """Calls of a program's own extern methods that leave an optional
    parameter out, with the method's name."""
    meters_read: dict[int, Entity] = field(default_factory=dict)
    """Entities of direct meters some action calls ``read`` on, by id."""

    def type_of(self, node: ast.Node) -> Type | None:
        return self.types.get(id(node))

    def symbol_of(self, node: ast.Node) -> Entity | None:
        return self.symbols.get(id(node))
