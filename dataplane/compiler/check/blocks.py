"""Parser and control instances: constructor arguments, the types an
instance binds a generic block's type parameters to, and the check of a
generic block's body once per such binding (spec 15 and 7.2.12)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataplane.compiler.check.env import TYPE, Entity, Facts, Scope
from dataplane.compiler.check.exprs import err
from dataplane.compiler.check.typeref import known
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.types import BlockT, Type, TypeVarT

if TYPE_CHECKING:
    from dataplane.compiler.check.checker import Checker


class BlockRules:
    """Instances of parsers and controls, for ``Checker``."""

    bound: dict[str, Type]
    """Type variables bound while a generic block is checked for one
    instance."""

    def block_instance(self: Checker, d: ast.Instantiation, k: BlockT) -> dict[str, Type]:
        """Check ``d``'s constructor arguments and, for a generic block,
        its body with the type arguments; returns those bindings."""
        decl = k.decl
        params = list(getattr(decl, "type_params", []))
        given = d.type.args if isinstance(d.type, ast.SpecializedType) else []
        if given and len(given) != len(params):
            raise err(d, f"{k.name} takes {len(params)} type argument(s), got {len(given)}")
        bindings: dict[str, Type] = {}
        for name, ref in zip(params, given):
            t = self.res.resolve(ref, self.scope)
            if known(t) is not None:
                bindings[name] = t  # type: ignore[assignment]
        if isinstance(decl, ast.ParserDecl | ast.ControlDecl):
            scope = self.bound_scope(params, bindings)
            ptypes = [self.res.resolve(p.type, scope) for p in decl.ctor_params]
            from dataplane.compiler.check.calls import bind_arguments

            call = ast.Call(ast.Name(k.name, loc=d.loc), d.args, loc=d.loc)
            bind_arguments(self, decl.ctor_params, call, ptypes, f"{k.name} constructor")
            if params and len(bindings) == len(params):
                self.specialize_block(decl, bindings)
        return bindings

    def bound_scope(self: Checker, params: list[str], bindings: dict[str, Type]) -> Scope:
        """The root scope with a block's type parameters bound (or left
        as variables)."""
        scope = self.res.root.child()
        for name in params:
            scope.names[name] = Entity(TYPE, None, bindings.get(name, TypeVarT(name)))
        return scope

    def specialize_block(self: Checker, decl: ast.ParserDecl | ast.ControlDecl,
                         bindings: dict[str, Type]) -> None:
        """Check ``decl`` again with its type variables bound: what is
        found belongs to this instance only, so it is kept from ``Facts``."""
        key = (id(decl), tuple(str(bindings[n]) for n in decl.type_params))
        if key in self.specialized:
            return
        self.specialized.add(key)
        saved = self.facts, self.scope, self.ctx, self.block, self.bound
        self.facts, self.bound = Facts(), bindings
        try:
            self.declare(decl, self.res.root.child())
        finally:
            self.facts, self.scope, self.ctx, self.block, self.bound = saved

    def apply_types(self: Checker, instance: ast.Expr, decl: ast.Decl) -> list[Type | None]:
        """The parameter types of ``instance.apply``: the block's own, with
        the instance's type arguments."""
        ent = self.facts.symbols.get(id(instance))
        params = list(getattr(decl, "type_params", []))
        bindings = ent.value if ent is not None and isinstance(ent.value, dict) else {}
        scope = self.bound_scope(params, bindings)
        return [self.res.resolve(p.type, scope) for p in getattr(decl, "params", [])]
