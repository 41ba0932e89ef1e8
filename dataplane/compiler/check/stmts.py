"""Statement rules: assignments, conditions, ``return``/``exit``
placement, ``switch`` labels and parser transitions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from common.errors import P4UnsupportedError
from dataplane.compiler.check.env import VALUE_SET
from dataplane.compiler.check.exprs import ActionRunT, err
from dataplane.compiler.check.typeref import known
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.types import (
    BitT,
    BoolT,
    EnumT,
    ErrorT,
    IntT,
    ListT,
    StructT,
    TupleT,
    Type,
    VoidT,
)

if TYPE_CHECKING:
    from dataplane.compiler.check.checker import Checker


@dataclass
class Context:
    """Where the statements being checked stand."""

    kind: str  # "action", "function", "control", "parser", "top"
    return_type: Type | None = None
    loops: int = 0
    states: dict[str, ast.ParserState] = field(default_factory=dict)


class StmtRules:
    """Statement checks for ``Checker``."""

    def stmts(self: Checker, body: list[ast.Stmt]) -> None:
        for s in body:
            self.stmt(s)

    def stmt(self: Checker, s: ast.Stmt) -> None:
        fn = getattr(self, "s_" + type(s).__name__, None)
        if fn is not None:
            fn(s)

    def s_Block(self: Checker, s: ast.Block) -> None:  # noqa: N802
        with self.nested():
            self.stmts(s.stmts)

    def s_VarDecl(self: Checker, s: ast.VarDecl) -> None:  # noqa: N802
        self.declare_var(s, self.scope)

    def s_ConstDecl(self: Checker, s: ast.ConstDecl) -> None:  # noqa: N802
        self.declare_const(s, self.scope)

    def s_Instantiation(self: Checker, s: ast.Instantiation) -> None:  # noqa: N802
        where = {"control": "a control's apply block", "parser": "a parser state",
                 "action": "an action", "function": "a function"}.get(self.ctx.kind, "here")
        raise err(s, f"an instance is not declared in {where}: declare '{s.name}' among the "
                     "block's local declarations")

    def s_Assign(self: Checker, s: ast.Assign) -> None:  # noqa: N802
        lt = self.expr(s.lhs)
        self.lvalue(s.lhs, "the left side")
        if s.op is None:
            rt = self.expr(s.rhs, lt)
            self.converts(rt, lt, s.rhs)
        else:
            self.expr(ast.Binary(s.op, s.lhs, s.rhs, loc=s.loc), lt)

    def s_CallStmt(self: Checker, s: ast.CallStmt) -> None:  # noqa: N802
        self.expr(s.call)

    def s_If(self: Checker, s: ast.If) -> None:  # noqa: N802
        self.condition(s.cond)
        with self.nested():
            self.stmt(s.then)
        if s.other is not None:
            with self.nested():
                self.stmt(s.other)

    def condition(self: Checker, e: ast.Expr) -> None:
        t = known(self.expr(e))
        if t is not None and not isinstance(t, BoolT):
            raise err(e, f"a condition must be bool, not {t}")

    def s_Exit(self: Checker, s: ast.Exit) -> None:  # noqa: N802
        if self.ctx.kind in ("parser", "function"):
            raise err(s, f"exit is not allowed in a {self.ctx.kind}")

    def s_Return(self: Checker, s: ast.Return) -> None:  # noqa: N802
        if self.ctx.kind == "parser":
            raise err(s, "return is not allowed in a parser")
        want = self.ctx.return_type if self.ctx.kind == "function" else VoidT()
        void = isinstance(known(want), VoidT)
        if s.value is None:
            if self.ctx.kind == "function" and not void and known(want) is not None:
                raise err(s, f"return needs a value of type {want}")
            return
        if void:
            raise err(s, "return with a value outside a function that returns one")
        t = self.expr(s.value, want)
        self.converts(t, want, s.value)

    def s_Break(self: Checker, s: ast.Stmt) -> None:  # noqa: N802
        if not self.ctx.loops:
            raise err(s, f"{type(s).__name__.lower()} outside a loop")

    s_Continue = s_Break

    def s_For(self: Checker, s: ast.For) -> None:  # noqa: N802
        with self.nested():
            self.stmts(s.init)
            if s.cond is not None:
                self.condition(s.cond)
            self.stmts(s.update)
            self.ctx.loops += 1
            try:
                self.stmt(s.body)
            finally:
                self.ctx.loops -= 1

    def s_ForIn(self: Checker, s: ast.ForIn) -> None:  # noqa: N802
        from dataplane.compiler.check.env import VAR, Entity

        ct = self.expr(s.collection)
        with self.nested():
            t = self.res.resolve(s.type, self.scope) if s.type is not None else None
            elem = getattr(known(ct), "elem", None)
            if t is not None and elem is not None:
                self.converts(elem, t, s)  # each element is assigned to the loop variable
            t = t if t is not None else elem
            self.scope.declare(s.name, Entity(VAR, s, t, writable=True), s)
            self.ctx.loops += 1
            try:
                self.stmt(s.body)
            finally:
                self.ctx.loops -= 1

    def s_Switch(self: Checker, s: ast.Switch) -> None:  # noqa: N802
        if self.ctx.kind == "action":
            raise P4UnsupportedError(
                "unsupported construct: switch statement inside an action (BMv2 "
                "runs an action as straight-line primitives: move the switch to the apply "
                "block)", s.loc)
        t = self.expr(s.expr)
        k = known(t)
        if k is not None and not isinstance(k, ActionRunT | BitT | EnumT | ErrorT | IntT):
            raise err(s.expr, f"cannot switch on a value of type {t}")
        default: ast.SwitchCase | None = None
        seen: dict[object, ast.SwitchCase] = {}
        for case in s.cases:
            if isinstance(case.label, ast.Default):
                if default is not None:
                    raise err(case, f"switch has more than one 'default' label (the first is "
                                    f"on line {default.loc.line})")
                default = case
            elif isinstance(k, ActionRunT):
                key = self.action_label(case.label, k)
                if key in seen:
                    raise err(case, f"'{key}' labels two cases of this switch")
                seen[key] = case
            else:
                lt = self.expr(case.label, t)
                if not self.is_constant(case.label):
                    raise err(case.label, "a switch label must be a compile-time known value")
                self.converts(lt, t, case.label)
                key = self.res.const_value(case.label, self.scope)
                if key is None and isinstance(case.label, ast.Name | ast.Member):
                    key = _text(case.label)
                if key is not None and key in seen:
                    raise err(case, f"{_text(case.label)} labels two cases of this switch")
                seen[key] = case
            if default is not None and case is not default:
                raise err(case, "the 'default' label must be the last one")
            if case.body is not None:
                self.s_Block(case.body)

    def action_label(self: Checker, label: ast.Expr, run: ActionRunT) -> str:
        names = {_ref_name(a.name) for a in run.table.actions}
        name = _ref_name(label)
        if name is None or name not in names:
            known_names = ", ".join(sorted(n for n in names if n))
            raise err(label, f"{_text(label)} is not a legal label: not an action of table "
                             f"{run.table.name} (it has {known_names})")
        return name

    # ---------------------------------------------------------- transitions

    def transition(self: Checker, tr: ast.Transition | None) -> None:
        if tr is None:
            return
        keys = [self.expr(x) for x in tr.select_exprs]
        for x, kt in zip(tr.select_exprs, keys):
            if isinstance(known(kt), IntT):
                raise err(x, "a select key of type int has no width: give it one (e.g. 8w1) "
                             "or cast it")
        for case in tr.cases:
            if case.state not in ("accept", "reject") and case.state not in self.ctx.states:
                raise err(case, f"{case.state}: no such parser state")
            if tr.select_exprs:
                self.select_case(case.keyset, keys, len(tr.select_exprs))

    def select_case(self: Checker, ks: ast.Keyset, keys: list[Type | None], n: int) -> None:
        elems = ks.elems
        if len(elems) == 1 and isinstance(elems[0], ast.ListExpr) and (
                n > 1 or len(elems[0].elems) == 1):
            elems = elems[0].elems
        if len(elems) == 1 and isinstance(elems[0], ast.Default | ast.DontCare):
            return
        if len(elems) == 1 and isinstance(elems[0], ast.Name):
            ent = self.scope.lookup(elems[0].name)
            if ent is not None and ent.kind == VALUE_SET:
                self.value_set_label(elems[0], ent.type, keys)
                return
        if len(elems) != n:
            raise err(ks, f"a select label has {len(elems)} value(s) for {n} key(s)")
        for x, kt in zip(elems, keys):
            self.keyset_elem(x, kt, "a select label")

    def value_set_label(self: Checker, label: ast.Name, vt: Type | None,
                        keys: list[Type | None]) -> None:
        """A value set labels one key with its element type, or every key
        at once with a struct of their types (spec 13.11, as p4c types it)."""
        self.expr(label)
        k = known(vt)
        if k is None:
            return
        if isinstance(k, TupleT) and len(keys) > 1:
            raise P4UnsupportedError("unsupported construct: a value set of a tuple matched "
                                     "against several keys (use a struct)", label.loc)
        leaves = _leaves(k)  # a struct's fields, nested ones flattened, stand for the keys
        if len(leaves) != len(keys):
            raise err(label, f"value set {label.name} of {vt} does not match the select's "
                             f"{len(keys)} key(s)")
        for lt, kt in zip(leaves, keys):
            self.converts(lt, kt, label)

    def keyset_elem(self: Checker, x: ast.Expr, kt: Type | None, what: str) -> None:
        """One value, mask, range or value set matched against a key."""
        if isinstance(x, ast.Default | ast.DontCare):
            return
        parts = [x.value, x.mask] if isinstance(x, ast.Mask) else (
            [x.lo, x.hi] if isinstance(x, ast.Range) else [x])
        for p in parts:
            pt = self.expr(p, kt)
            if isinstance(known(pt), IntT | BitT) and isinstance(known(kt), EnumT):
                kt = known(kt).underlying or kt  # an integer in a keyset of an enum (p4c)
            self.known_label(p, what)
            if isinstance(p, ast.Name) and self.scope.lookup(p.name) is not None and \
                    self.scope.lookup(p.name).kind == VALUE_SET:  # type: ignore[union-attr]
                self.converts(self.scope.lookup(p.name).type, kt, p)  # type: ignore[union-attr]
                continue
            if isinstance(known(pt), ListT) and isinstance(known(kt), TupleT | ListT):
                continue
            self.converts(pt, kt, p)

    def known_label(self: Checker, e: ast.Expr, what: str) -> None:
        if isinstance(e, ast.Call):
            raise err(e, f"{_text(e.func)}(): no function calls allowed in {what}")
        if isinstance(e, ast.Name):
            ent = self.scope.lookup(e.name)
            if ent is not None and ent.kind == VALUE_SET:
                return
        if not self.is_constant(e):
            raise err(e, f"{what} must be a compile-time known value (a constant, a mask or "
                         "range of constants, or a value set)")


def _leaves(t: Type) -> list[Type | None]:
    if isinstance(t, StructT):
        out: list[Type | None] = []
        for _, ft in t.fields:
            k = known(ft)
            out += _leaves(k) if k is not None else [None]
        return out
    return [t]


def always_returns(s: ast.Stmt | None) -> bool:
    """Whether every path through ``s`` ends in a return (or exit)."""
    if isinstance(s, ast.Return | ast.Exit):
        return True
    if isinstance(s, ast.Block):
        return any(always_returns(x) for x in s.stmts)
    if isinstance(s, ast.If):
        return s.other is not None and always_returns(s.then) and always_returns(s.other)
    if isinstance(s, ast.Switch):
        has_default = any(isinstance(c.label, ast.Default) for c in s.cases)
        return has_default and all(c.body is None or always_returns(c.body) for c in s.cases)
    return False


def _ref_name(e: ast.Expr) -> str | None:
    if isinstance(e, ast.Name):
        return e.name
    return None


def _text(e: ast.Expr) -> str:
    if isinstance(e, ast.Name):
        return ("." if e.absolute else "") + e.name
    if isinstance(e, ast.Member):
        return f"{_text(e.expr)}.{e.name}"
    return type(e).__name__
