"""Symbols and lexical scopes of a P4 program."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.types import Type


@dataclass(eq=False)
class TypeSym:
    type: Type


@dataclass(eq=False)
class GenericTypeSym:
    """A struct, header or union with type parameters: a type of its own
    for each list of type arguments (``instances``, by their text)."""

    decl: ast.HeaderDecl | ast.StructDecl | ast.HeaderUnionDecl
    scope: Scope
    instances: dict[str, Type] = field(default_factory=dict)


@dataclass(eq=False)
class ConstSym:
    type: Type
    value: Any


@dataclass(eq=False)
class VarSym:
    """A run-time location: ``base`` is the slot index (int) or, for
    parameters of a nested instance, a Python expression string."""

    type: Type
    base: int
    readonly: bool = False


@dataclass(eq=False)
class ActionSym:
    decl: ast.ActionDecl
    qname: str
    scope: Scope
    index: int = -1  # global action id, set when the action is generated
    prefix: str = ""


@dataclass(eq=False)
class FuncSym:
    decl: ast.FunctionDecl
    scope: Scope


@dataclass(eq=False)
class ExternFuncSym:
    overloads: list[ast.ExternFunctionDecl]


@dataclass(eq=False)
class TableSym:
    decl: ast.TableDecl
    qname: str
    scope: Scope
    index: int = -1
    func: str = ""


@dataclass(eq=False)
class InstanceSym:
    """An extern object instance (register, counter, ...)."""

    type: Type
    qname: str
    decl: ast.Instantiation
    index: int = -1
    scope: Scope | None = None


@dataclass(eq=False)
class BlockInstSym:
    """An instance of a parser or control declaration."""

    decl: ast.ParserDecl | ast.ControlDecl
    qname: str
    ctor_args: list[ast.Arg]
    scope: Scope  # scope of the instantiation site
    func: str = ""  # generated apply function


@dataclass(eq=False)
class StateSym:
    decl: ast.ParserState
    func: str


@dataclass(eq=False)
class ValueSetSym:
    decl: ast.ValueSetDecl
    qname: str
    type: Type
    index: int = -1


@dataclass(eq=False)
class Scope:
    parent: Scope | None = None
    names: dict[str, Any] = field(default_factory=dict)

    def lookup(self, name: str) -> Any:
        scope: Scope | None = self
        while scope is not None:
            sym = scope.names.get(name)
            if sym is not None:
                return sym
            scope = scope.parent
        return None

    def root(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def child(self) -> Scope:
        return Scope(self)
