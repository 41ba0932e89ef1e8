"""Type expressions and compile-time constants, as the checker reads them.

Both answer None for what cannot be known before a generic declaration is
specialised (a type variable, a constructor parameter's value): the
checker then leaves the rules that need it to the instance.
"""

from __future__ import annotations

from common.errors import P4SemanticError, P4UnsupportedError
from dataplane.compiler.check.env import CONST, TYPE, Scope
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.types import (
    BitT,
    BlockT,
    BoolT,
    DontCareT,
    EnumT,
    ErrorT,
    ExternT,
    IntT,
    MatchKindT,
    StackT,
    StringT,
    StructLikeT,
    TupleT,
    Type,
    TypeVarT,
    VarbitT,
    VoidT,
    strip,
)


def known(t: Type | None) -> Type | None:
    """``t`` without typedef wrappers, or None when it is (or holds) a type
    variable."""
    if t is None:
        return None
    s = strip(t)
    if isinstance(s, TypeVarT):
        return None
    if isinstance(s, TupleT) and any(known(e) is None for e in s.elems):
        return None
    if isinstance(s, StackT) and known(s.elem) is None:
        return None
    return s


class TypeResolver:
    """Resolves type references against a scope; ``error`` is the one
    program-wide error type."""

    def __init__(self, error: ErrorT) -> None:
        self.error = error
        self.root: Scope = Scope()
        self.generics: dict[int, list[str]] = {}
        """The type parameters of each generic struct, header or union."""

    def instance(self, base: StructLikeT, args: list[Type], ref: ast.TypeRef) -> StructLikeT:
        """``S<T1, ...>``: the generic struct with its parameters bound, a
        type of its own (spec 7.2.6 and 7.2.12: checked per instance)."""
        params = self.generics[id(base)]
        if len(params) != len(args):
            raise P4SemanticError(f"{base.name} takes {len(params)} type argument(s), got "
                                  f"{len(args)}", ref.loc)
        return _instantiate(base, params, args)

    def resolve(self, ref: ast.TypeRef, scope: Scope) -> Type | None:
        if isinstance(ref, ast.BitType):
            w = self.width(ref.width, scope, ref)
            if w is None:
                return None
            if w < 0 or (w == 0 and ref.signed) or w > 2048:
                raise P4SemanticError(f"invalid width {w}" + (" (beyond 2048 bits)" if w > 0
                                                              else ""), ref.loc)
            return BitT(w, ref.signed)
        if isinstance(ref, ast.TypeName):
            return self._named(ref, scope)
        if isinstance(ref, ast.StackType):
            elem = self.resolve(ref.elem, scope)
            size = self.const_value(ref.size, scope)
            if elem is None or not isinstance(size, int):
                return None
            return StackT(elem, size)
        if isinstance(ref, ast.TupleType):
            elems = [self.resolve(e, scope) for e in ref.elems]
            return TupleT([e if e is not None else TypeVarT("?") for e in elems])
        if isinstance(ref, ast.SpecializedType):
            if ref.base.name == "list" and scope.lookup("list") is None:
                raise P4UnsupportedError("unsupported construct: the list<T> type", ref.loc)
            base = self.resolve(ref.base, scope)
            args = [self.resolve(a, scope) or TypeVarT("?") for a in ref.args]
            if isinstance(base, ExternT):
                return ExternT(base.name, base.decl, args)
            if ref.base.name == "tuple":
                return TupleT(args)
            if isinstance(base, StructLikeT) and id(base) in self.generics:
                return self.instance(base, args, ref)
            return base
        if isinstance(ref, ast.VarbitType):
            w = self.width(ref.width, scope, ref)
            if w is not None and not 0 <= w <= 2048:
                raise P4SemanticError(f"invalid varbit width {w}", ref.loc)
            return VarbitT(w) if w is not None else None
        simple = {ast.BoolType: BoolT, ast.IntType: IntT, ast.StringType: StringT,
                  ast.VoidType: VoidT, ast.DontCareType: DontCareT}
        cls = simple.get(type(ref))
        if cls is None:
            raise P4UnsupportedError(f"unsupported construct: type {type(ref).__name__}",
                                     ref.loc)
        return cls()

    def width(self, e: ast.Expr, scope: Scope, ref: ast.TypeRef) -> int | None:
        """A type's width: a compile-time known integer (spec 7.1.6), or None
        while it depends on a constructor parameter not yet bound."""
        w = self.const_value(e, scope)
        if w is None:
            names = [n for n in ast.walk(e) if isinstance(n, ast.Name)]
            bound = [(scope.lookup(n.name)) for n in names]
            if names and all(b is not None and b.kind == CONST for b in bound):
                return None
            raise P4SemanticError("a width must be a compile-time known value", ref.loc)
        if not isinstance(w, int) or isinstance(w, bool):
            raise P4SemanticError(f"invalid width {w}", ref.loc)
        return w

    def _named(self, ref: ast.TypeName, scope: Scope) -> Type | None:
        if ref.name == "error":
            return self.error
        if ref.name == "match_kind":
            return MatchKindT()
        ent = (self.root if ref.absolute else scope).lookup(ref.name)
        if ent is None:
            raise P4SemanticError(f"unknown type '{ref.name}'", ref.loc)
        if ent.kind != TYPE:
            raise P4SemanticError(f"'{ref.name}' is a {ent.kind}, not a type", ref.loc)
        return ent.type

    def const_value(self, e: ast.Expr, scope: Scope) -> object:
        """The value of a compile-time constant expression, or None when it
        is not one (or not one yet: a constructor parameter). A value of
        type ``bit<W>``/``int<W>`` wraps to its width as it is folded
        (spec 8.9.1: ``3w3 - 3w4`` is ``3w7``)."""
        return self._const(e, scope)[0]

    def _const(self, e: ast.Expr, scope: Scope) -> tuple[object, BitT | None]:
        """The value and, where it has one, its fixed-width type."""
        if isinstance(e, ast.IntLit):
            t = BitT(e.width, e.signed) if e.width else None
            return (_wrap(e.value, t) if t is not None else e.value), t
        if isinstance(e, ast.BoolLit):
            return e.value, None
        if isinstance(e, ast.Name):
            ent = (self.root if e.absolute else scope).lookup(e.name)
            if ent is None or ent.kind != CONST:
                return None, None
            t = strip(ent.type) if ent.type is not None else None
            return ent.value, t if isinstance(t, BitT) else None
        if isinstance(e, ast.Member) and isinstance(e.expr, ast.Name):
            ent = scope.lookup(e.expr.name)
            t = strip(ent.type) if ent is not None and ent.kind == TYPE and ent.type else None
            if isinstance(t, EnumT) and e.name in t.values:
                return t.values[e.name], None
            return None, None
        if isinstance(e, ast.Unary):
            v, t = self._const(e.expr, scope)
            if isinstance(v, bool):
                return ((not v) if e.op == "!" else None), None
            if isinstance(v, int):
                r = {"-": -v, "+": v, "~": ~v}.get(e.op)
                return (_wrap(r, t) if r is not None and t is not None else r), t
            return None, None
        if isinstance(e, ast.Cast):
            v, _ = self._const(e.expr, scope)
            t = self.resolve(e.type, scope)
            bt = strip(t) if t else None
            if isinstance(v, int) and not isinstance(v, bool) and isinstance(bt, BitT):
                return _wrap(v, bt), bt
            return v, None
        if isinstance(e, ast.Mux):
            c, _ = self._const(e.cond, scope)
            if isinstance(c, bool):
                return self._const(e.then if c else e.other, scope)
            return None, None
        if isinstance(e, ast.Binary):
            a, ta = self._const(e.left, scope)
            b, tb = self._const(e.right, scope)
            if not isinstance(a, int) or not isinstance(b, int):
                return None, None
            r = _fold(e.op, a, b)
            if isinstance(r, bool) or r is None or e.op in ("&&", "||"):
                return r, None
            t = ta if e.op in ("<<", ">>") else (ta or tb)
            if e.op in ("|+|", "|-|"):
                return r, t
            return (_wrap(r, t) if t is not None and isinstance(r, int) else r), t
        return None, None


def _wrap(v: int, t: BitT) -> int:
    """``v`` as a value of ``t``: modulo 2**W, two's complement if signed."""
    v &= t.mask
    if t.signed and v >> (t.width - 1):
        v -= 1 << t.width
    return v


def _instantiate(base: StructLikeT, params: list[str], args: list[Type]) -> StructLikeT:
    """``base<args>``, named by its arguments; it remembers where it came
    from, so an instance inside a generic one is instantiated again."""
    bound = dict(zip(params, args))
    name = f"{base.name}<{', '.join(map(str, args))}>"
    inst = type(base)(name, [(n, substitute(ft, bound)) for n, ft in base.fields])
    inst.origin = (base, params, args)  # type: ignore[attr-defined]
    return inst


def substitute(t: Type, bound: dict[str, Type]) -> Type:
    """``t`` with its type variables replaced by their bindings."""
    if isinstance(t, TypeVarT):
        return bound.get(t.name, t)
    origin = getattr(t, "origin", None)
    if origin is not None and _has_var(t):
        base, params, args = origin
        return _instantiate(base, params, [substitute(a, bound) for a in args])
    if isinstance(t, StackT):
        return StackT(substitute(t.elem, bound), t.size)
    if isinstance(t, TupleT):
        return TupleT([substitute(e, bound) for e in t.elems])
    if isinstance(t, StructLikeT) and _has_var(t):
        return type(t)(t.name, [(n, substitute(ft, bound)) for n, ft in t.fields])
    return t


def _has_var(t: Type) -> bool:
    if isinstance(t, TypeVarT):
        return True
    if isinstance(t, StackT):
        return _has_var(t.elem)
    if isinstance(t, TupleT):
        return any(_has_var(e) for e in t.elems)
    if isinstance(t, StructLikeT):
        return any(_has_var(ft) for _, ft in t.fields)
    return False


def _fold(op: str, a: int, b: int) -> object:
    ops = {
        "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
        "/": lambda: a // b if b > 0 and a >= 0 else None,
        "%": lambda: a % b if b > 0 and a >= 0 else None,
        "<<": lambda: a << b if 0 <= b < 4096 else None, ">>": lambda: a >> b if b >= 0 else None,
        "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b,
        "==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b,
        "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b,
    }
    f = ops.get(op)
    return f() if f is not None else None


__all__ = ["TypeResolver", "known", "BlockT", "ExternT", "TYPE"]
