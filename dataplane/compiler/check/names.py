"""Control-plane names (p4c's ``@name`` rules) and the rule that P4Runtime
names each table and action once across every instance of the pipeline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from common.errors import P4SemanticError
from dataplane.compiler.check.env import ACTION, TYPE
from dataplane.compiler.check.typeref import known
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.types import BlockT

if TYPE_CHECKING:
    from dataplane.compiler.check.checker import Checker


def annotation(annos: list[ast.Annotation], name: str) -> ast.Annotation | None:
    for a in annos:
        if a.name == name:
            return a
    return None


def anno_string(a: ast.Annotation | None) -> str | None:
    if a is None:
        return None
    if a.args and isinstance(a.args[0], ast.StringLit):
        return a.args[0].value
    body = (a.body or "").strip()
    if len(body) >= 2 and body[0] == '"' and body[-1] == '"':
        return body[1:-1]
    return body or None


def control_name(decl: ast.Decl, prefix: str) -> str:
    """The control-plane name p4c gives a declaration: ``@name("x")`` is
    relative to the enclosing instance, ``@name(".x")`` absolute."""
    given = anno_string(annotation(decl.annotations, "name"))
    if given is not None:
        return given[1:] if given.startswith(".") else prefix + given
    return prefix + decl.name


class _Names:
    """Names seen so far for one kind of object; an object is a
    declaration together with the instance it lives in (None for a
    top-level action, which every instance shares)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.seen: dict[str, tuple[Any, Any, ast.Decl]] = {}

    def add(self, name: str, decl: ast.Decl, instance: Any) -> None:
        first = self.seen.setdefault(name, (decl, instance, decl))
        fdecl, finst, _ = first
        if fdecl is decl and finst == instance:
            return
        if fdecl is decl:
            raise P4SemanticError(
                f"{self.kind} '{name}' belongs to a block instantiated more than once, and its "
                "absolute @name gives every instance that one control-plane name; P4Runtime "
                "needs each name once: make the @name relative", decl.loc)
        where = fdecl.loc if fdecl.loc.line else None
        also = f" (also the name of the {self.kind} at {where})" if where else ""
        raise P4SemanticError(
            f"two {self.kind}s have the control-plane name '{name}'{also}; P4Runtime needs "
            "each name once: rename one, or give it another @name", decl.loc)


def check_unique_names(ck: Checker, blocks: list[tuple[ast.Decl, int]]) -> None:
    """Walk the pipeline's instances (``blocks``: each package argument's
    declaration and position) and name every table applied and every
    action those tables list, as the P4Info will."""
    tables, actions = _Names("table"), _Names("action")

    def walk(decl: ast.Decl, qname: str, path: tuple) -> None:
        prefix = qname + "."
        for local in getattr(decl, "locals", []):
            if isinstance(local, ast.TableDecl) and id(local) in ck.facts.applied_tables:
                tables.add(control_name(local, prefix), local, path)
                for ref in local.actions:
                    ent = ck.facts.symbols.get(id(ref.name))
                    if ent is None or ent.kind != ACTION:
                        continue
                    top = ent.scope is ck.res.root
                    actions.add(control_name(ent.decl, "" if top else prefix), ent.decl,
                                None if top else path)
            elif isinstance(local, ast.Instantiation):
                inner = _block_decl(local, ck)
                if inner is not None:
                    walk(inner, control_name(local, prefix), (*path, id(local)))

    for decl, position in blocks:
        walk(decl, control_name(decl, ""), (position,))


def _block_decl(d: ast.Instantiation, ck: Checker) -> ast.Decl | None:
    base = d.type.base if isinstance(d.type, ast.SpecializedType) else d.type
    if not isinstance(base, ast.TypeName):
        return None
    ent = ck.res.root.lookup(base.name)
    t = known(ent.type) if ent is not None and ent.kind == TYPE else None
    decl = t.decl if isinstance(t, BlockT) else None
    return decl if isinstance(decl, ast.ParserDecl | ast.ControlDecl) else None
