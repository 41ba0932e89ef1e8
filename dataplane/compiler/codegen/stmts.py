"""Statements and parser transitions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataplane.compiler.codegen.values import ActionRunT, Evaluated, LValue, Val, py_tuple, slot
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.scope import ConstSym, StateSym, ValueSetSym, VarSym
from dataplane.compiler.frontend.types import (
    BitT,
    BoolT,
    EnumT,
    ErrorT,
    IntT,
    StackT,
    TupleT,
    strip,
)

if TYPE_CHECKING:
    from dataplane.compiler.codegen.generator import CodeGen


class StmtMixin:
    """Statement compilation for CodeGen."""

    def stmts(self: CodeGen, body: list[ast.Stmt]) -> None:
        for st in body:
            self.stmt(st)

    def stmt(self: CodeGen, st: ast.Stmt) -> None:
        method = getattr(self, "st_" + type(st).__name__, None)
        if method is None:
            raise self.unsupported(st, f"statement {type(st).__name__}")
        method(st)

    def st_Empty(self: CodeGen, st: ast.Empty) -> None:  # noqa: N802
        return

    def st_Block(self: CodeGen, st: ast.Block) -> None:  # noqa: N802
        with self.nested_scope():
            self.stmts(st.stmts)

    def st_Assign(self: CodeGen, st: ast.Assign) -> None:  # noqa: N802
        lv = self.lval(st.lhs)
        if st.op is not None:
            # The target is evaluated once (``a[f()] += 1`` calls f once).
            cur = Evaluated(self.read_lvalue(lv), loc=st.lhs.loc)
            rhs: ast.Expr = ast.Binary(st.op, cur, st.rhs, loc=st.loc)
            self.assign(lv, rhs, st)
        else:
            self.assign(lv, st.rhs, st)

    def st_CallStmt(self: CodeGen, st: ast.CallStmt) -> None:  # noqa: N802
        self.ev(st.call)

    def st_If(self: CodeGen, st: ast.If) -> None:  # noqa: N802
        c = self.ev(st.cond, BoolT())
        if not isinstance(strip(c.type), BoolT):
            raise self.err(st.cond, f"condition must be bool, not {c.type}")
        with self.w.block(f"if {c.code}"):
            self.stmt_scoped(st.then)
        if st.other is not None:
            with self.w.block("else"):
                self.stmt_scoped(st.other)

    def stmt_scoped(self: CodeGen, st: ast.Stmt) -> None:
        with self.nested_scope():
            self.stmt(st)

    def st_Exit(self: CodeGen, st: ast.Exit) -> None:  # noqa: N802
        self.w("raise ExitPipeline")

    def st_Return(self: CodeGen, st: ast.Return) -> None:  # noqa: N802
        if st.value is None:
            self.w("return")
            return
        rt = self.ctx.return_type
        if rt is None:
            raise self.internal(st, "'return' with a value outside a function")
        v = self.coerce(self.ev(st.value, rt), rt, st.value)
        if v.parts is not None:
            self.w(f"return {py_tuple(v.parts)}")
        else:
            self.w(f"return {v.code}")

    def st_VarDecl(self: CodeGen, st: ast.VarDecl) -> None:  # noqa: N802
        t = self.resolve_type(st.type)
        sym = VarSym(t, self.alloc(t))
        if st.init is not None:
            v = self.coerce(self.ev(st.init, t), t, st.init)
            self.scope.names[st.name] = sym
            self.store(LValue(t, sym.base), v)
        else:
            self.scope.names[st.name] = sym
            self.invalidate_headers(t, sym.base)

    def st_ConstDecl(self: CodeGen, st: ast.ConstDecl) -> None:  # noqa: N802
        self.declare_local(st, self.scope, "")

    def st_Typedef(self: CodeGen, st: ast.Typedef) -> None:  # noqa: N802
        self.declare_local(st, self.scope, "")

    def st_Switch(self: CodeGen, st: ast.Switch) -> None:  # noqa: N802
        # The checker has refused a switch inside an action and a second
        # 'default' label.
        v = self.ev(st.expr)
        tmp = self.fresh("sw")
        self.w(f"{tmp} = {v.code}")
        groups: list[tuple[list[str], ast.Block | None]] = []
        pending: list[str] = []
        default_body: ast.Block | None = None
        has_default = False
        for case in st.cases:
            if isinstance(case.label, ast.Default):
                has_default = True
                if pending:
                    groups.append((pending, case.body))
                    pending = []
                default_body = case.body
                continue
            pending.append(self.switch_label(v.type, case.label))
            if case.body is not None:
                groups.append((pending, case.body))
                pending = []
        first = True
        for labels, body in groups:
            cond = " or ".join(f"{tmp} == {lab}" for lab in labels)
            with self.w.block(("if " if first else "elif ") + cond):
                if body is not None:
                    self.stmt_scoped(body)
            first = False
        if has_default and default_body is not None:
            if first:
                self.stmt_scoped(default_body)
            else:
                with self.w.block("else"):
                    self.stmt_scoped(default_body)

    def switch_label(self: CodeGen, t, label: ast.Expr) -> str:
        if isinstance(t, ActionRunT):
            name = label.name if isinstance(label, ast.Name) else None
            for ref, sym in self.table_actions(t.table):
                if ref.name.name == name or sym.decl.name == name:  # type: ignore[attr-defined]
                    return str(self.action_id(sym))
            raise self.internal(label, f"switch label '{name}' that is no action of table "
                                       f"{t.table.decl.name}")
        lv = self.ev(label, t)
        lv = self.coerce(lv, t, label)
        if not lv.is_const:
            raise self.err(label, "switch label must be a constant")
        return lv.code

    def st_For(self: CodeGen, st: ast.For) -> None:  # noqa: N802
        with self.nested_scope():
            for s0 in st.init:
                self.stmt(s0)
            cond = "True"
            with self.w.block("while True"):
                if st.cond is not None:
                    c = self.ev(st.cond, BoolT())
                    cond = c.code
                    with self.w.block(f"if not {cond}"):
                        self.w("break")
                self.ctx.loops.append(st.update)
                try:
                    self.stmt_scoped(st.body)
                finally:
                    self.ctx.loops.pop()
                for s1 in st.update:
                    self.stmt(s1)

    def st_ForIn(self: CodeGen, st: ast.ForIn) -> None:  # noqa: N802
        with self.nested_scope():
            coll = st.collection
            if isinstance(coll, ast.Range):
                lo = self.ev(coll.lo)
                hi = self.ev(coll.hi)
                t = self.resolve_type(st.type) if st.type is not None else (
                    lo.type if not isinstance(strip(lo.type), IntT) else hi.type)
                lo = self.coerce(lo, t, coll.lo)
                hi = self.coerce(hi, t, coll.hi)
                var = VarSym(t, self.alloc(t))
                self.scope.names[st.name] = var
                it = self.fresh("it")
                with self.w.block(f"for {it} in range({lo.code}, {hi.code} + 1)"):
                    self.w(f"{slot(var.base)} = {it}")
                    self.ctx.loops.append([])
                    try:
                        self.stmt_scoped(st.body)
                    finally:
                        self.ctx.loops.pop()
                return
            cv = self.ev(coll)
            ct = strip(cv.type)
            if not isinstance(ct, StackT) or cv.base is None:
                raise self.unsupported(st, "for-in over something other than a range or stack")
            t = ct.elem
            var = VarSym(t, self.alloc(t))
            self.scope.names[st.name] = var
            from dataplane.compiler.frontend.types import slots

            es = slots(t)
            it = self.fresh("it")
            with self.w.block(f"for {it} in range({ct.size})"):
                src = f"{cv.base} + 1 + {it} * {es}"
                self.w(f"s[{var.base}:{var.base + es}] = s[{src}:{src} + {es}]")
                self.ctx.loops.append([])
                try:
                    self.stmt_scoped(st.body)
                finally:
                    self.ctx.loops.pop()

    def st_Break(self: CodeGen, st: ast.Break) -> None:  # noqa: N802
        if not self.ctx.loops:
            raise self.internal(st, "'break' outside a loop")
        self.w("break")

    def st_Continue(self: CodeGen, st: ast.Continue) -> None:  # noqa: N802
        if not self.ctx.loops:
            raise self.internal(st, "'continue' outside a loop")
        for s1 in self.ctx.loops[-1]:
            self.stmt(s1)
        self.w("continue")

    # ---------------------------------------------------------- transitions

    def transition(self: CodeGen, tr: ast.Transition | None, st: ast.ParserState) -> None:
        if tr is None:
            self.w("raise ParserReject(None)")
            return
        if not tr.select_exprs:
            self.w(self.goto(tr.cases[0].state, tr))
            return
        keys = [self.ev(e) for e in tr.select_exprs]
        tmps = []
        for k in keys:
            t = self.fresh("k")
            kt = strip(k.type)
            if k.parts is None and isinstance(kt, BitT) and not kt.signed and 0 < kt.width <= 64:
                # A machine word on the compiled fast path: each case's test
                # is then a C comparison, not one of integer objects.
                self.w.ctypes[t] = "cython.ulonglong"
            self.w(f"{t} = {k.code if k.parts is None else '(' + ', '.join(k.parts) + ',)'}")
            tmps.append(t)
        nomatch = self.layout.error_codes.get("NoMatch", 2)
        for case in tr.cases:
            elems = case.keyset.elems
            if len(elems) == 1 and isinstance(elems[0], ast.ListExpr) and len(keys) > 1:
                elems = elems[0].elems
            if len(elems) == 1 and isinstance(elems[0], ast.Default | ast.DontCare):
                self.w(self.goto(case.state, case))
                return
            if len(elems) == 1 and len(keys) > 1:
                vs = self.struct_value_set(elems[0], len(keys))
                if vs is not None:
                    with self.w.block(f"if V{vs.index}.matches(({', '.join(tmps)},))"):
                        self.w(self.goto(case.state, case))
                    continue
            if len(elems) != len(keys):
                raise self.internal(case, f"a select case of {len(elems)} values for "
                                          f"{len(keys)} keys")
            conds = []
            for e, k, tmp in zip(elems, keys, tmps):
                c = self.keyset_cond(e, k.type, tmp)
                if c is not None:
                    conds.append(c)
            cond = " and ".join(conds) if conds else "True"
            with self.w.block(f"if {cond}"):
                self.w(self.goto(case.state, case))
        self.w(f"raise ParserReject({nomatch})")

    def struct_value_set(self: CodeGen, e: ast.Expr, nkeys: int) -> ValueSetSym | None:
        """A value set of a struct type standing for all ``nkeys`` select
        keys at once (one key per field, nested structs flattened)."""
        if not isinstance(e, ast.Name):
            return None
        sym = self.scope.lookup(e.name)
        if not isinstance(sym, ValueSetSym):
            return None
        fields = self.value_sets[sym.index][1]
        if len(fields) != nkeys:
            raise self.err(e, f"value set '{e.name}' has {len(fields)} fields but the select "
                              f"has {nkeys} keys")
        return sym

    def keyset_cond(self: CodeGen, e: ast.Expr, t, tmp: str) -> str | None:
        if isinstance(e, ast.Default | ast.DontCare):
            return None
        if isinstance(e, ast.Name):
            sym = self.scope.lookup(e.name)
            if isinstance(sym, ValueSetSym):
                return f"V{sym.index}.matches({tmp})"
        st = strip(t)
        if isinstance(e, ast.Mask):
            v = self.known(self.coerce(self.ev(e.value, t), t, e.value), e.value)
            m = self.known(self.coerce(self.ev(e.mask, t), t, e.mask), e.mask)
            return f"({tmp} & {m.code}) == ({v.code} & {m.code})"
        if isinstance(e, ast.Range):
            lo = self.known(self.coerce(self.ev(e.lo, t), t, e.lo), e.lo)
            hi = self.known(self.coerce(self.ev(e.hi, t), t, e.hi), e.hi)
            return f"{lo.code} <= {tmp} <= {hi.code}"
        if isinstance(st, TupleT):
            raise self.unsupported(e, "tuple-typed select key")
        v = self.ev(e, t)
        if not isinstance(strip(v.type), BitT | BoolT | EnumT | ErrorT) or isinstance(
                strip(v.type), IntT):
            v = self.coerce(v, t, e)
        v = self.known(self.coerce(v, t, e), e)
        return f"{tmp} == {v.code}"

    def known(self: CodeGen, v: Val, e: ast.Expr) -> Val:
        """A select label must be known at compile time (P4-16 12.6):
        anything else, a field or a call, is an error, not a run-time test."""
        if not v.is_const:
            raise self.err(e, "a select label must be a compile-time known value (a constant, "
                              "a mask or range of constants, or a value set)")
        return v

    def goto(self: CodeGen, name: str, node: ast.Node) -> str:
        if name == "accept":
            return "return None"
        if name == "reject":
            return "raise ParserReject(None)"
        sym = self.scope.lookup(name)
        if not isinstance(sym, StateSym):
            raise self.internal(node, f"a transition to an unknown state '{name}'")
        return f"return {sym.func}"


__all__ = ["StmtMixin", "ConstSym"]
