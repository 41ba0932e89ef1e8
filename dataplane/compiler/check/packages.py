"""Package instantiation: each argument is a parser or control whose
parameters match the parser or control type the package declares, with
the package's type variables bound once for all of its arguments (spec
7.2.13, 7.2.14 and 17; V1Switch's six blocks share their H and M)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from common.errors import IntbedError
from dataplane.compiler.check.env import INSTANCE, TYPE, Scope
from dataplane.compiler.check.exprs import err
from dataplane.compiler.check.typeref import known
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.types import BlockT, DontCareT, Type, same_type

if TYPE_CHECKING:
    from dataplane.compiler.check.checker import Checker


def check_package(ck: Checker, d: ast.Instantiation, t: BlockT) -> None:
    pkg = t.decl
    if not isinstance(pkg, ast.PackageTypeDecl):
        return
    bound: dict[str, Type] = {}
    if isinstance(d.type, ast.SpecializedType):
        for name, ref in zip(pkg.type_params, d.type.args):
            rt = ck.res.resolve(ref, ck.scope)
            if known(rt) is not None:
                bound[name] = rt  # type: ignore[assignment]
    for param, arg in _in_order(d, pkg):
        proto = _prototype(ck, param.type)
        block = _argument_block(ck, arg.value)
        if proto is None or block is None:
            continue
        _conforms(ck, pkg, param, proto, block, arg, bound)


def _in_order(d: ast.Instantiation,
              pkg: ast.PackageTypeDecl) -> list[tuple[ast.Param, ast.Arg]]:
    """Each argument with its parameter (a parameter with a default value
    may have none)."""
    if not any(a.name for a in d.args):
        return list(zip(pkg.params, d.args))
    by_name = {a.name: a for a in d.args}
    names = {p.name for p in pkg.params}
    if None in by_name or len(by_name) != len(d.args) or not set(by_name) <= names:
        return []  # the names are wrong: the target's rule says how
    return [(p, by_name[p.name]) for p in pkg.params if p.name in by_name]


def _prototype(ck: Checker, ref: ast.TypeRef) -> tuple[ast.Decl, list[ast.TypeRef]] | None:
    """The parser or control type a package parameter names, with the type
    arguments it gives that type."""
    base = ref.base if isinstance(ref, ast.SpecializedType) else ref
    if not isinstance(base, ast.TypeName):
        return None
    ent = ck.res.root.lookup(base.name)
    decl = ent.decl if ent is not None and ent.kind == TYPE else None
    if not isinstance(decl, ast.ParserTypeDecl | ast.ControlTypeDecl):
        return None
    return decl, list(ref.args) if isinstance(ref, ast.SpecializedType) else []


def _argument_block(ck: Checker, e: ast.Expr) -> ast.ParserDecl | ast.ControlDecl | None:
    """The (non-generic) parser or control declaration an argument
    instantiates: ``P()`` or the name of an instance."""
    name = e.func if isinstance(e, ast.Call) else e
    if not isinstance(name, ast.Name):
        return None
    ent = ck.scope.lookup(name.name)
    if ent is None:
        return None
    t = known(ent.type) if ent.kind in (TYPE, INSTANCE) else None
    decl = t.decl if isinstance(t, BlockT) else None
    if not isinstance(decl, ast.ParserDecl | ast.ControlDecl) or decl.type_params:
        return None
    return decl


def _conforms(ck: Checker, pkg: ast.PackageTypeDecl, param: ast.Param,
              proto: tuple[ast.Decl, list[ast.TypeRef]], block: ast.Decl, arg: ast.Arg,
              bound: dict[str, Type]) -> None:
    decl, targs = proto
    want = "parser" if isinstance(decl, ast.ParserTypeDecl) else "control"
    got = "parser" if isinstance(block, ast.ParserDecl) else "control"
    where = f"{pkg.name}'s parameter '{param.name}'"
    if want != got:
        raise err(arg, f"{where} is a {want}; {block.name} is a {got}")
    if len(block.params) != len(decl.params):
        return  # the count is the target's rule, with its own message
    # The prototype's type variables stand for the package's type arguments.
    alias = {v: r for v, r in zip(getattr(decl, "type_params", []), targs)}
    for pp, bp in zip(decl.params, block.params):
        if pp.direction != bp.direction:
            raise err(arg, f"{where}: parameter '{bp.name}' of {block.name} is "
                           f"'{bp.direction or 'directionless'}', the {want} type's "
                           f"'{pp.name}' is '{pp.direction or 'directionless'}'")
        have = ck.res.resolve(bp.type, ck.res.root)
        _match(ck, pp.type, alias, pkg, have, bound, arg, f"{where}: parameter '{bp.name}' "
               f"of {block.name}")


def _match(ck: Checker, ref: ast.TypeRef, alias: dict[str, ast.TypeRef],
           pkg: ast.PackageTypeDecl, have: Type | None, bound: dict[str, Type],
           arg: ast.Arg, what: str) -> None:
    """``have`` against the prototype's parameter type ``ref``: a package
    type variable takes its first type, and must keep it."""
    if isinstance(ref, ast.TypeName) and ref.name in alias:
        ref = alias[ref.name]
    if known(have) is None:
        return
    if isinstance(ref, ast.TypeName) and ref.name in pkg.type_params:
        first = bound.setdefault(ref.name, have)  # type: ignore[arg-type]
        if not same_type(first, have):  # type: ignore[arg-type]
            raise err(arg, f"{what} has type {have}, but {pkg.name}'s {ref.name} is "
                           f"already {first}")
        return
    scope: Scope = ck.res.root
    try:
        wanted = ck.res.resolve(ref, scope)
    except IntbedError:  # a type only the prototype's own scope knows
        return
    if isinstance(known(wanted), DontCareT):
        return
    if known(wanted) is not None and not same_type(wanted, have):  # type: ignore[arg-type]
        raise err(arg, f"{what} has type {have}; the {pkg.name} package wants {wanted}")
