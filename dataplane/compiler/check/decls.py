"""Declaration rules: the shape of signatures (names, directions, default
values, parameter types), enums, new types and extern declarations, and
what ``main`` must be (spec 6.8, 7.2, 7.6, 7.2.11, 10, 11, 17)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataplane.compiler.check.env import INSTANCE, TYPE, Scope
from dataplane.compiler.check.exprs import err
from dataplane.compiler.check.typeref import known
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.types import (
    BitT,
    BlockT,
    BoolT,
    ExternT,
    IntT,
    NewT,
    StringT,
    Type,
)

if TYPE_CHECKING:
    from dataplane.compiler.check.checker import Checker

SIGNED = (ast.FunctionDecl, ast.ExternFunctionDecl, ast.MethodDecl, ast.ActionDecl,
          ast.ParserTypeDecl, ast.ControlTypeDecl, ast.PackageTypeDecl, ast.ParserDecl,
          ast.ControlDecl)


class DeclRules:
    """Declaration checks for ``Checker``."""

    def signature(self: Checker, d: ast.Decl, scope: Scope) -> None:
        """One name per type parameter and parameter of ``d`` (spec 6.8),
        each parameter's type known and fit for its direction."""
        params = list(getattr(d, "params", [])) + list(getattr(d, "ctor_params", []))
        seen: dict[str, ast.Node] = {}
        for name in getattr(d, "type_params", []):
            if name in seen:
                raise err(d, f"type parameter '{name}' of {d.name} is declared twice")
            seen[name] = d
        self.constructor_params(d, getattr(d, "ctor_params", []))
        for p in params:
            if p.name in seen:
                raise err(p, f"parameter '{p.name}' of {d.name} duplicates an earlier "
                             "parameter or type parameter")
            seen[p.name] = p
            self.parameter(d, p, self.generic(scope, getattr(d, "type_params", [])))

    def constructor_params(self: Checker, d: ast.Decl, params: list[ast.Param]) -> None:
        """Constructor parameters are directionless (spec 15)."""
        for p in params:
            if p.direction:
                raise err(p, f"constructor parameter '{p.name}' of {d.name} cannot have a "
                             "direction")

    def parameter(self: Checker, d: ast.Decl, p: ast.Param, scope: Scope) -> None:
        t = self.res.resolve(p.type, scope)
        k = known(t)
        if p.default is not None and p.direction in ("out", "inout"):
            raise err(p, f"{p.direction} parameter '{p.name}' cannot have a default value")
        if p.direction and isinstance(k, IntT):
            raise err(p, f"parameter '{p.name}' of type int is directionless")
        if isinstance(k, BlockT) and isinstance(k.decl, ast.ParserDecl | ast.ControlDecl):
            raise err(p, f"parameter '{p.name}' cannot have type {k.kind} {k.name} (a "
                         f"declaration, not a {k.kind} type)")
        if p.default is not None and not self.is_constant(p.default) and \
                not self.constructed(p.default):
            self.expr(p.default, t)
            raise err(p.default, f"the default value of '{p.name}' must be a compile-time "
                                 "known value")
        if p.direction and isinstance(k, ExternT | StringT):
            raise err(p, f"parameter '{p.name}' of type {t} cannot have a direction")
        if isinstance(d, ast.ActionDecl) and isinstance(k, IntT):
            raise err(p, f"action parameter '{p.name}' cannot have type int (give it a width)")
        if p.default is not None and k is not None:
            self.converts(self.expr(p.default, t), t, p.default)

    def constructed(self: Checker, e: ast.Expr) -> bool:
        """Whether ``e`` is a constructor call ``T(...)``: an instance, known
        at compile time (spec 18.1)."""
        if not isinstance(e, ast.Call) or not isinstance(e.func, ast.Name):
            return False
        ent = self.scope.lookup(e.func.name)
        return ent is not None and ent.kind == TYPE

    def compile_time_arguments(self: Checker, d: ast.Instantiation) -> None:
        """Constructor arguments are compile-time known: constants, other
        instances or constructor calls (spec 15, 18.1)."""
        for a in d.args:
            v = a.value
            if self.is_constant(v) or self.constructed(v) or self.instance_name(v):
                continue
            raise err(v, f"a constructor argument of {d.name} must be a compile-time known "
                         "value")

    def instance_name(self: Checker, e: ast.Expr) -> bool:
        if not isinstance(e, ast.Name):
            return False
        ent = self.scope.lookup(e.name)
        return ent is not None and ent.kind == INSTANCE

    def enum_underlying(self: Checker, d: ast.EnumDecl, t: Type | None) -> BitT | None:
        """A serializable enum's type is a bit<W> or int<W> (spec 7.2.1)."""
        if d.underlying is None:
            return None
        if isinstance(t, NewT) or not isinstance(known(t), BitT):
            raise err(d, f"enum {d.name}: its underlying type must be bit<W> or int<W>, "
                         f"not {t}")
        return known(t)  # type: ignore[return-value]

    def distinct_members(self: Checker, d: ast.Decl, members: list[str], what: str) -> None:
        seen: set[str] = set()
        for m in members:
            if m in seen:
                raise err(d, f"{what} declares '{m}' twice")
            seen.add(m)

    def new_type_base(self: Checker, d: ast.Typedef, base: Type | None) -> None:
        """``type`` applies to bit<W>, int<W>, bool and new types (spec 7.6,
        as p4c reads it)."""
        if isinstance(base, NewT) or base is None:
            return
        if not isinstance(known(base), BitT | BoolT):
            raise err(d, f"'type' declares a new type over bit<W>, int<W>, bool or another "
                         f"new type, not {base}")

    def extern_methods(self: Checker, d: ast.ExternDecl, scope: Scope) -> None:
        """Constructors have no return type; two methods (or constructors)
        of one name differ in their parameter count or names (spec
        7.2.11.2)."""
        seen: dict[tuple[str, tuple[str, ...], bool], ast.MethodDecl] = {}
        inner = self.generic(scope, d.type_params)
        for m in d.methods:
            if m.name == d.name and m.return_type is not None:
                raise err(m, f"constructor {d.name} cannot have a return type")
            if m.return_type is None:
                self.constructor_params(m, m.params)
            key = (m.name, tuple(p.name for p in m.params), m.return_type is None)
            if key in seen:  # overloads differ in parameter count or names, as in p4c
                raise err(m, f"{d.name} declares '{m.name}' with {len(m.params)} "
                             "parameter(s) of the same names twice")
            seen[key] = m
            self.signature(m, inner)

    def main_is_a_package(self: Checker) -> None:
        """``main`` names a package instance (spec 17)."""
        ent = self.res.root.names.get("main")
        if ent is None or ent.kind not in (INSTANCE, TYPE):
            return  # a function may take the name (p4c)
        t = known(ent.type)
        if ent.kind != INSTANCE or not (isinstance(t, BlockT) and t.kind == "package"):
            raise err(ent.decl, "'main' must be an instance of a package")
