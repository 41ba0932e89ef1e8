"""Expressions: typing, constant folding and Python code for each operator.

Unsigned values are kept in ``[0, 2**W)`` and signed ones in
``[-2**(W-1), 2**(W-1))`` so that comparisons need no conversion; every
operation that can leave the range is masked (P4-16 spec section 8.6/8.7).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dataplane.compiler.codegen.values import (
    ActionRunT,
    ApplyResultT,
    LValue,
    Val,
    const,
    location,
    offset,
    py_tuple,
    slot,
)
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.scope import (
    ActionSym,
    BlockInstSym,
    ConstSym,
    ExternFuncSym,
    FuncSym,
    InstanceSym,
    TableSym,
    TypeSym,
    VarSym,
)
from dataplane.compiler.frontend.types import (
    BitT,
    BoolT,
    DontCareT,
    EnumT,
    ErrorT,
    ExternT,
    HeaderT,
    IntT,
    ListT,
    MatchKindT,
    StackT,
    StringT,
    StructLikeT,
    StructT,
    TupleT,
    Type,
    UnionT,
    VarbitT,
    VoidT,
    field_bits,
    is_compound,
    same_type,
    slots,
    strip,
)

if TYPE_CHECKING:
    from dataplane.compiler.codegen.generator import CodeGen

ARITH = {"+", "-", "*", "/", "%", "|+|", "|-|"}
BITWISE = {"&", "|", "^"}
COMPARE = {"==", "!=", "<", "<=", ">", ">="}
WORD_OPS = {"+", "-", "*"}
WORD_MIN = 30
"""Unsigned ``+ - *`` wider than this many bits (and narrower than 64) are
computed in machine words when compiled (``ExprMixin.word_arith``); masks
up to 30 bits already take Cython's inline path."""


def wrap(value: int, t: Type) -> int:
    t = strip(t)
    if isinstance(t, BitT):
        if t.signed:
            value &= t.mask
            return value - (1 << t.width) if t.width and value >> (t.width - 1) else value
        return value & t.mask
    return value


def wrap_code(code: str, t: BitT) -> str:
    """Python code bringing ``code`` back into the range of ``t``."""
    if t.signed:
        # Parenthesized whole, as every operand's code is: the result is a
        # difference, which a product (h * b) or the negated operand of
        # |-| (sat_add(a, -x - h, ...)) would otherwise split.
        h = 1 << (t.width - 1)
        return f"(((({code}) + {h}) & {t.mask}) - {h})"
    return f"(({code}) & {t.mask})"


def wide_operand(code: str, width: int) -> str:
    """``code`` as the left operand of a shift whose result may reach bit 63
    (``width`` >= 64): an integer object. Built, Cython types a choice of
    small literals such as ``(9 if c else 3)`` (a bool's bit among them) or
    a machine-word local a C integer, and shifting that past bit 63
    overflows (by 64 or more it is undefined). Code that reads slots and
    chooses nothing is made of objects already, and stays as it is."""
    if width < 64 or ("s[" in code and " if " not in code):
        return code
    return f"int({code})"


def unsigned_code(code: str, t: Type) -> str:
    t = strip(t)
    if isinstance(t, BitT) and t.signed:
        return f"(({code}) & {t.mask})"
    if isinstance(t, BoolT):
        return f"(1 if {code} else 0)"
    return code


class ExprMixin:
    """Expression compilation for CodeGen (see codegen.py)."""

    # -------------------------------------------------------------- entry

    def ev(self: CodeGen, e: ast.Expr, want: Type | None = None) -> Val:
        method = getattr(self, "ev_" + type(e).__name__, None)
        if method is None:
            raise self.unsupported(e, f"expression {type(e).__name__}")
        return method(e, want)

    def ev_IntLit(self: CodeGen, e: ast.IntLit, want: Type | None) -> Val:  # noqa: N802
        if e.width is not None:
            t = BitT(e.width, e.signed)
            return const(t, wrap(e.value, t))
        return const(IntT(), e.value)

    def ev_BoolLit(self: CodeGen, e: ast.BoolLit, want: Type | None) -> Val:  # noqa: N802
        return const(BoolT(), e.value)

    def ev_StringLit(self: CodeGen, e: ast.StringLit, want: Type | None) -> Val:  # noqa: N802
        return const(StringT(), e.value)

    def ev_DontCare(self: CodeGen, e: ast.DontCare, want: Type | None) -> Val:  # noqa: N802
        return Val(DontCareT(), code="None")

    def ev_Evaluated(self: CodeGen, e: Any, want: Type | None) -> Val:  # noqa: N802
        return e.val

    def ev_Name(self: CodeGen, e: ast.Name, want: Type | None) -> Val:  # noqa: N802
        sym = (self.root if e.absolute else self.scope).lookup(e.name)
        if sym is None:
            raise self.err(e, f"unknown name '{e.name}'")
        if isinstance(sym, VarSym):
            if sym.base < 0:
                return Val(sym.type, code="b")
            return location(sym.type, sym.base)
        if isinstance(sym, ConstSym):
            if isinstance(sym.value, list):
                return Val(sym.type, parts=[repr(v) for v in sym.value])
            if isinstance(strip(sym.type), MatchKindT):
                return Val(MatchKindT(), code=repr(sym.value), const=sym.value)
            return const(sym.type, sym.value)
        if isinstance(sym, InstanceSym | BlockInstSym):
            from dataplane.compiler.codegen.generator import _InstanceVal

            v = _InstanceVal(VoidT())
            v.sym = sym
            return v
        if isinstance(sym, TypeSym):
            raise self.err(e, f"'{e.name}' is a type, not a value")
        raise self.err(e, f"'{e.name}' cannot be used as a value")

    # ------------------------------------------------------------- members

    def ev_Member(self: CodeGen, e: ast.Member, want: Type | None) -> Val:  # noqa: N802
        if isinstance(e.expr, ast.Name):
            sym = (self.root if e.expr.absolute else self.scope).lookup(e.expr.name)
            if isinstance(sym, TypeSym):
                return self.type_member(sym.type, e)
        if isinstance(e.expr, ast.Call) and isinstance(e.expr.func, ast.Member) \
                and e.expr.func.name == "apply":
            v = self.ev(e.expr)
            if isinstance(v.type, ApplyResultT):
                if e.name == "hit":
                    return Val(BoolT(), code=v.type.hit)
                if e.name == "miss":
                    return Val(BoolT(), code=f"(not {v.type.hit})")
                if e.name == "action_run":
                    return Val(ActionRunT(v.type.table), code=v.type.action)
                raise self.err(e, f"table apply result has no member '{e.name}'")
        base = self.ev(e.expr)
        return self.member_of(base, e.name, e)

    def type_member(self: CodeGen, t: Type, e: ast.Member) -> Val:
        t0 = strip(t)
        if isinstance(t0, ErrorT):
            if e.name not in t0.members:
                raise self.type_rule(e, f"unknown error '{e.name}'")
            return const(t0, t0.members.index(e.name))
        if isinstance(t0, EnumT):
            if e.name not in t0.values:
                raise self.type_rule(e, f"enum {t0.name} has no member '{e.name}'")
            return const(t, t0.values[e.name])
        raise self.err(e, f"type {t} has no member '{e.name}'")

    def member_of(self: CodeGen, base: Val, name: str, node: ast.Member) -> Val:
        t = strip(base.type)
        if isinstance(t, StructLikeT):
            ft = t.field_type(name)
            if ft is None:
                raise self.type_rule(node, f"{t.name} has no field '{name}'", node.expr)
            off = t.offsets[name]
            n = slots(ft)
            if base.base is not None:
                return location(ft, offset(base.base, off))
            assert base.parts is not None
            parts = base.parts[off:off + n]
            if is_compound(ft):
                return Val(ft, parts=parts)
            return Val(ft, code=parts[0])
        if isinstance(t, StackT):
            if base.base is None:
                raise self.unsupported(node, "member of a stack value that is not stored")
            if name == "size":
                return const(BitT(32), t.size)
            if name == "lastIndex":
                return Val(BitT(32), code=f"(({slot(base.base)} - 1) & 4294967295)")
            if name == "nextIndex":
                return Val(BitT(32), code=slot(base.base))
            if name in ("next", "last"):
                es = slots(t.elem)
                idx = self.fresh("i")
                if name == "next":
                    self.w(f"{idx} = {slot(base.base)}")
                else:
                    self.w(f"{idx} = {slot(base.base)} - 1")
                err = self.layout.error_codes.get("StackOutOfBounds", 3)
                with self.w.block(f"if {idx} < 0 or {idx} >= {t.size}"):
                    if self.ctx.kind == "parser":
                        self.w(f"raise ParserReject({err})")
                    else:
                        self.w(f"{idx} = {t.size - 1 if name == 'next' else 0}")
                b = self.fresh("b")
                self.w(f"{b} = {offset(base.base, 1)} + {idx} * {es}")
                v = location(t.elem, b)
                v.base = b
                return v
            raise self.type_rule(node, f"header stack has no member '{name}'", node.expr)
        raise self.type_rule(node, f"a value of type {base.type} has no member '{name}'",
                             node.expr)

    def ev_Index(self: CodeGen, e: ast.Index, want: Type | None) -> Val:  # noqa: N802
        base = self.ev(e.expr)
        t = strip(base.type)
        if isinstance(t, TupleT):
            i = self.const_int(e.index)
            off = sum(slots(x) for x in t.elems[:i])
            et = t.elems[i]
            if base.base is not None:
                return location(et, offset(base.base, off))
            parts = base.parts[off:off + slots(et)]  # type: ignore[index]
            return Val(et, parts=parts) if is_compound(et) else Val(et, code=parts[0])
        if not isinstance(t, StackT):
            raise self.type_rule(e, f"cannot index a value of type {base.type}", e.expr)
        if base.base is None:
            # A stack that is a value only (a function's result): give it
            # slots of its own, then index those.
            home = self.alloc(base.type)
            self.w(f"s[{home}:{home + slots(t)}] = {py_tuple(self.flat(base))}")
            base = location(base.type, home)
        es = slots(t.elem)
        iv = self.ev(e.index)
        if iv.is_const:
            i = int(iv.const)
            if not 0 <= i < t.size:
                raise self.err(e, f"index {i} out of bounds for a stack of size {t.size}")
            return location(t.elem, offset(base.base, 1 + i * es))
        idx = self.fresh("i")
        self.w(f"{idx} = {iv.code}")
        with self.w.block(f"if {idx} >= {t.size}"):
            self.w(f"{idx} = {t.size - 1}")
        b = self.fresh("b")
        self.w(f"{b} = {offset(base.base, 1)} + {idx} * {es}")
        return location(t.elem, b)

    def ev_Slice(self: CodeGen, e: ast.Slice, want: Type | None) -> Val:  # noqa: N802
        v = self.ev(e.expr)
        hi, lo = self.const_int(e.hi), self.const_int(e.lo)
        t = strip(v.type)
        if isinstance(t, IntT) and v.is_const:
            return const(BitT(hi - lo + 1), (v.const >> lo) & ((1 << (hi - lo + 1)) - 1))
        if not isinstance(t, BitT):
            raise self.type_rule(e, f"cannot slice a value of type {v.type}")
        if not (0 <= lo <= hi < t.width):
            raise self.type_rule(e, f"slice [{hi}:{lo}] out of range for {t}")
        rt = BitT(hi - lo + 1)
        if v.is_const:
            return const(rt, (v.const >> lo) & rt.mask)
        if lo == 0 and hi == t.width - 1 and not t.signed:
            return Val(rt, code=v.code)
        if lo == 0:
            return Val(rt, code=f"({v.code} & {rt.mask})")
        return Val(rt, code=f"(({v.code} >> {lo}) & {rt.mask})")

    # ----------------------------------------------------------- operators

    def ev_Unary(self: CodeGen, e: ast.Unary, want: Type | None) -> Val:  # noqa: N802
        v = self.ev(e.expr, want)
        t = strip(v.type)
        if e.op == "!":
            if not isinstance(t, BoolT):
                raise self.type_rule(e, f"'!' needs a bool, not {v.type}", e.expr)
            if v.is_const:
                return const(BoolT(), not v.const)
            return Val(BoolT(), code=f"(not {v.code})")
        if e.op == "+":
            return v
        if isinstance(t, IntT):
            if not v.is_const:
                raise self.err(e, "arbitrary-precision integer must be constant")
            return const(IntT(), -v.const if e.op == "-" else ~v.const)
        if not isinstance(t, BitT):
            raise self.type_rule(e, f"'{e.op}' needs an integer, not {v.type}", e.expr)
        if v.is_const:
            return const(v.type, wrap(-v.const if e.op == "-" else ~v.const, t))
        if e.op == "-":
            return Val(v.type, code=wrap_code(f"-{v.code}", t))
        if t.signed:
            return Val(v.type, code=f"(~{v.code})")
        return Val(v.type, code=f"({v.code} ^ {t.mask})")

    def unify(self: CodeGen, a: Val, b: Val, node: ast.Node, op: str) -> tuple[Val, Val, Type]:
        ta, tb = strip(a.type), strip(b.type)
        if isinstance(ta, IntT) and not isinstance(tb, IntT):
            a = self.coerce(a, b.type, node)
            return a, b, b.type
        if isinstance(tb, IntT) and not isinstance(ta, IntT):
            b = self.coerce(b, a.type, node)
            return a, b, a.type
        if isinstance(ta, BitT) and isinstance(tb, BitT):
            if ta != tb:
                raise self.err(node, f"operands of '{op}' have different types: {ta} and {tb}")
            return a, b, a.type
        if isinstance(ta, EnumT) and isinstance(tb, BitT) and ta.underlying is not None:
            return a, b, b.type
        if isinstance(tb, EnumT) and isinstance(ta, BitT) and tb.underlying is not None:
            return a, b, a.type
        if not same_type(ta, tb) and not (isinstance(ta, IntT) and isinstance(tb, IntT)):
            raise self.err(node, f"operands of '{op}' have different types: {ta} and {tb}")
        return a, b, a.type

    def seq2(self: CodeGen, left: ast.Expr, right: ast.Expr, lwant: Type | None = None,
             rwant: Type | None = None) -> tuple[Val, Val]:
        """Evaluate two operands left to right; if the right one needs
        statements, the left one is saved in a temporary first."""
        a = self.ev(left, lwant)
        mark = len(self.w.lines)
        b = self.ev(right, rwant if rwant is not None else (a.type if not isinstance(
            strip(a.type), IntT) else None))
        if len(self.w.lines) > mark and not a.is_const and a.parts is None:
            tmp = self.fresh()
            self.w.insert(mark, f"{tmp} = {a.code}")
            a = Val(a.type, code=tmp)
        return a, b

    def ev_Binary(self: CodeGen, e: ast.Binary, want: Type | None) -> Val:  # noqa: N802
        op = e.op
        if op in ("&&", "||"):
            return self.short_circuit(e)
        if op in ("<<", ">>"):
            return self.shift(e, want)
        if op == "++":
            return self.concat(e)
        a, b = self.seq2(e.left, e.right, want if op not in COMPARE else None)
        if op in ("==", "!=") and (a.parts is not None or b.parts is not None
                                   or is_compound(a.type) or is_compound(b.type)):
            return self.compound_equal(a, b, op, e)
        a, b, t = self.unify(a, b, e, op)
        st = strip(t)
        if a.is_const and b.is_const:
            return self.fold(op, a.const, b.const, t, e)
        if op in COMPARE:
            if isinstance(st, BoolT | ErrorT | EnumT | MatchKindT) and op not in ("==", "!="):
                raise self.type_rule(e, f"'{op}' is not defined on {t}", e.left, e.right)
            return Val(BoolT(), code=f"({a.code} {op} {b.code})")
        if isinstance(st, IntT):
            raise self.err(e, "arbitrary-precision operands must be constant")
        if not isinstance(st, BitT):
            raise self.type_rule(e, f"'{op}' is not defined on {t}", e.left, e.right)
        ac, bc = a.code, b.code
        if op in BITWISE:
            return Val(t, code=f"({ac} {op} {bc})")
        if op in WORD_OPS and not st.signed and WORD_MIN < st.width < 64:
            return self.word_arith(a, b, op, t)
        if op == "+":
            return Val(t, code=wrap_code(f"{ac} + {bc}", st))
        if op == "-":
            return Val(t, code=wrap_code(f"{ac} - {bc}", st))
        if op == "*":
            return Val(t, code=wrap_code(f"{ac} * {bc}", st))
        if op in ("/", "%"):
            if st.signed:
                raise self.type_rule(e, f"'{op}' is only defined on unsigned values", e.left,
                                     e.right)
            pyop = "//" if op == "/" else "%"
            return Val(t, code=f"({ac} {pyop} {bc} if {bc} else 0)")
        if op in ("|+|", "|-|"):
            lo, hi = (-(1 << (st.width - 1)), (1 << (st.width - 1)) - 1) if st.signed else (
                0, st.mask)
            sign = "+" if op == "|+|" else "-"
            return Val(t, code=f"sat_add({ac}, {sign}{bc}, {lo}, {hi})")
        raise self.unsupported(e, f"operator {op}")

    def word_arith(self: CodeGen, a: Val, b: Val, op: str, t: Type) -> Val:
        """``a op b`` masked to unsigned ``t`` (31 to 63 bits) through
        temporaries that the compiled fast path declares machine words: C
        arithmetic and one new integer object, where the Python expression
        masks through CPython's general ``&`` (Cython's own fast path stops
        at constants of 30 bits: a 32-bit register counter's ``+ 1`` cost
        some 190 instructions). Exact: both operands are in ``[0, 2**W)``,
        and a sum, difference or product wrapped at 64 bits and then masked
        is the same value modulo ``2**W``. The result is a Python object
        (declared so): a C word must not leak into wider expressions that
        shift or concatenate it."""
        # Constants of 31 bits or more, the mask among them, go into
        # machine words too (``word_local``).
        codes = [str(v.const) if v.is_const and v.const < 1 << WORD_MIN
                 else self.word_local(v.code) for v in (a, b)]
        mask = self.word_local(str(strip(t).mask))
        x = self.fresh("x")
        self.w.ctypes[x] = "object"
        self.w(f"{x} = ({codes[0]} {op} {codes[1]}) & {mask}")
        return Val(t, code=x)

    def fold(self: CodeGen, op: str, x: Any, y: Any, t: Type, node: ast.Node) -> Val:
        st = strip(t)
        if op in COMPARE:
            r = {"==": x == y, "!=": x != y, "<": x < y, "<=": x <= y, ">": x > y,
                 ">=": x >= y}[op]
            return const(BoolT(), r)
        if op == "+":
            r = x + y
        elif op == "-":
            r = x - y
        elif op == "*":
            r = x * y
        elif op in ("/", "%"):
            if y == 0:
                raise self.err(node, "division by zero")
            if x < 0 or y < 0:
                raise self.err(node, f"'{op}' on negative values")
            r = x // y if op == "/" else x % y
        elif op == "&":
            r = x & y
        elif op == "|":
            r = x | y
        elif op == "^":
            r = x ^ y
        elif op in ("|+|", "|-|"):
            r = x + y if op == "|+|" else x - y
            if isinstance(st, BitT):
                lo, hi = (-(1 << (st.width - 1)), (1 << (st.width - 1)) - 1) if st.signed else (
                    0, st.mask)
                r = max(lo, min(hi, r))
        else:
            raise self.unsupported(node, f"constant operator {op}")
        return const(t, wrap(r, t))

    def short_circuit(self: CodeGen, e: ast.Binary) -> Val:
        a = self.ev(e.left, BoolT())
        saved = self.w.lines
        self.w.lines = []
        self.w.depth += 1
        try:
            b = self.ev(e.right, BoolT())
            sub = self.w.lines
        finally:
            self.w.lines = saved
            self.w.depth -= 1
        for v, side in ((a, e.left), (b, e.right)):
            if not isinstance(strip(v.type), BoolT):
                raise self.type_rule(side, f"'{e.op}' needs bool operands, not {v.type}")
        pyop = "and" if e.op == "&&" else "or"
        if not sub:
            if a.is_const and b.is_const:
                return const(BoolT(), (a.const and b.const) if pyop == "and" else (
                    a.const or b.const))
            return Val(BoolT(), code=f"({a.code} {pyop} {b.code})")
        tmp = self.fresh()
        self.w(f"{tmp} = {a.code}")
        self.w(f"if {'' if pyop == 'and' else 'not '}{tmp}:")
        self.w.lines.extend(sub)
        self.w(f"    {tmp} = {b.code}")
        return Val(BoolT(), code=tmp)

    def ev_Mux(self: CodeGen, e: ast.Mux, want: Type | None) -> Val:  # noqa: N802
        c = self.ev(e.cond, BoolT())
        if not isinstance(strip(c.type), BoolT):
            raise self.type_rule(e.cond, f"condition must be bool, not {c.type}")
        branches = []
        for side in (e.then, e.other):
            saved = self.w.lines
            self.w.lines = []
            self.w.depth += 1
            try:
                v = self.ev(side, want)
                branches.append((v, self.w.lines))
            finally:
                self.w.lines = saved
                self.w.depth -= 1
        (a, la), (b, lb) = branches
        if isinstance(strip(a.type), IntT) and not isinstance(strip(b.type), IntT):
            a = self.coerce(a, b.type, e.then)
        elif isinstance(strip(b.type), IntT) and not isinstance(strip(a.type), IntT):
            b = self.coerce(b, a.type, e.other)
        elif want is not None and isinstance(strip(a.type), IntT):
            a, b = self.coerce(a, want, e.then), self.coerce(b, want, e.other)
        t = a.type
        if c.is_const and not la and not lb:
            return a if c.const else b
        if is_compound(t):
            a = self.coerce(a, t, e.then)
            b = self.coerce(b, t, e.other)
            tmp = self.fresh()
            with self.w.block(f"if {c.code}"):
                self.w.lines.extend(la)
                self.w(f"{tmp} = {py_tuple(a.parts or [])}")
            with self.w.block("else"):
                self.w.lines.extend(lb)
                self.w(f"{tmp} = {py_tuple(b.parts or [])}")
            return Val(t, parts=[f"{tmp}[{k}]" for k in range(slots(t))])
        if not la and not lb:
            return Val(t, code=f"({a.code} if {c.code} else {b.code})")
        tmp = self.fresh()
        with self.w.block(f"if {c.code}"):
            self.w.lines.extend(la)
            self.w(f"{tmp} = {a.code}")
        with self.w.block("else"):
            self.w.lines.extend(lb)
            self.w(f"{tmp} = {b.code}")
        return Val(t, code=tmp)

    def shift(self: CodeGen, e: ast.Binary, want: Type | None) -> Val:
        a = self.ev(e.left, want)
        mark = len(self.w.lines)
        b = self.ev(e.right)
        if len(self.w.lines) > mark and not a.is_const:
            tmp = self.fresh()
            self.w.insert(mark, f"{tmp} = {a.code}")
            a = Val(a.type, code=tmp)
        ta, tb = strip(a.type), strip(b.type)
        if isinstance(tb, BitT) and tb.signed:
            raise self.type_rule(e.right, "shift amount must be unsigned")
        if not isinstance(tb, BitT | IntT):
            raise self.type_rule(e.right, f"a shift amount must be an unsigned bit<W> or a "
                                    f"non-negative integer, not {b.type}")
        if isinstance(ta, IntT):
            if a.is_const and b.is_const:
                return const(IntT(), a.const << b.const if e.op == "<<" else a.const >> b.const)
            if want is not None and isinstance(strip(want), BitT):
                a = self.coerce(a, want, e.left)
                ta = strip(a.type)
            else:
                raise self.err(e, "the width of the shifted value cannot be inferred")
        if not isinstance(ta, BitT):
            raise self.type_rule(e, f"cannot shift a value of type {a.type}", e.left)
        if a.is_const and b.is_const:
            if b.const < 0:
                raise self.err(e.right, "negative shift amount")
            r = a.const << b.const if e.op == "<<" else a.const >> b.const
            return const(a.type, wrap(r, ta))
        if e.op == ">>":
            return Val(a.type, code=f"({a.code} >> {b.code})")
        if b.is_const:
            if b.const >= ta.width:
                return const(a.type, 0)
            return Val(a.type, code=wrap_code(f"{wide_operand(a.code, ta.width)} << {b.code}",
                                              ta))
        if ta.signed:
            return Val(a.type, code=f"to_signed(shl({a.code}, {b.code}, {ta.mask}, {ta.width}),"
                                    f" {ta.width})")
        return Val(a.type, code=f"shl({a.code}, {b.code}, {ta.mask}, {ta.width})")

    def concat(self: CodeGen, e: ast.Binary) -> Val:
        a, b = self.seq2(e.left, e.right)
        ta, tb = strip(a.type), strip(b.type)
        if isinstance(ta, BoolT) or isinstance(tb, BoolT):
            raise self.type_rule(e, "'++' needs bit-strings", e.left, e.right)
        if not isinstance(ta, BitT) or not isinstance(tb, BitT):
            raise self.type_rule(e, f"'++' needs sized operands, not {a.type} and {b.type}",
                                 e.left, e.right)
        t = BitT(ta.width + tb.width, ta.signed)
        if a.is_const and b.is_const:
            return const(t, wrap(((a.const & ta.mask) << tb.width) | (b.const & tb.mask), t))
        left = wide_operand(unsigned_code(a.code, ta), t.width)
        code = f"(({left} << {tb.width}) | {unsigned_code(b.code, tb)})"
        return Val(t, code=wrap_code(code, t) if t.signed else code)

    def compound_equal(self: CodeGen, a: Val, b: Val, op: str, node: ast.Node) -> Val:
        t = a.type if a.parts is not None and not isinstance(a.type, ListT) else b.type
        a = self.coerce(a, t, node)
        b = self.coerce(b, t, node)
        pa, pb = self.compare_parts(t, a.parts or [], b.parts or [])
        code = f"({py_tuple(pa)} == {py_tuple(pb)})"
        return Val(BoolT(), code=code if op == "==" else f"(not {code})")

    def compare_parts(self: CodeGen, t: Type, pa: list[str], pb: list[str]) -> tuple[list[str],
                                                                                    list[str]]:
        """Parts that take part in ``==``: an invalid header equals another
        invalid header whatever its fields hold (spec 8.17)."""
        t = strip(t)
        if isinstance(t, HeaderT):
            fa = [f"({p} if {pa[0]} else 0)" for p in pa[1:]]
            fb = [f"({p} if {pb[0]} else 0)" for p in pb[1:]]
            return [f"bool({pa[0]})", *fa], [f"bool({pb[0]})", *fb]
        if isinstance(t, StructLikeT | StackT | TupleT):
            outa: list[str] = []
            outb: list[str] = []
            k = 0
            if isinstance(t, StackT):
                children = [t.elem] * t.size
                k = 1
            elif isinstance(t, TupleT):
                children = list(t.elems)
            else:
                children = [ft for _, ft in t.fields]
            for ct in children:
                n = slots(ct)
                xa, xb = self.compare_parts(ct, pa[k:k + n], pb[k:k + n])
                outa += xa
                outb += xb
                k += n
            return outa, outb
        return pa, pb

    # ---------------------------------------------------------------- casts

    def ev_Cast(self: CodeGen, e: ast.Cast, want: Type | None) -> Val:  # noqa: N802
        t = self.resolve_type(e.type)
        v = self.ev(e.expr, t)
        return self.cast(v, t, e)

    def cast(self: CodeGen, v: Val, t: Type, node: ast.Node) -> Val:
        src, dst = strip(v.type), strip(t)
        if isinstance(dst, StructLikeT | TupleT) or isinstance(src, ListT):
            return self.coerce(v, t, node)
        if isinstance(dst, EnumT):
            dst = dst.underlying or dst
        if isinstance(src, EnumT):
            src = src.underlying or src
        if isinstance(dst, BoolT):
            if isinstance(src, BoolT):
                return Val(t, code=v.code, const=v.const)
            if isinstance(src, BitT | IntT) and (isinstance(src, IntT) or src.width == 1):
                if v.is_const:
                    return const(t, bool(v.const))
                return Val(t, code=f"({v.code} != 0)")
            raise self.conversion_rule(node, f"cannot cast {v.type} to bool")
        if isinstance(dst, BitT):
            if isinstance(src, BoolT):
                if v.is_const:
                    return const(t, int(bool(v.const)))
                return Val(t, code=f"(1 if {v.code} else 0)")
            if isinstance(src, IntT):
                if not v.is_const:
                    raise self.err(node, "arbitrary-precision value must be constant")
                return const(t, wrap(v.const, dst))
            if isinstance(src, BitT):
                if v.is_const:
                    return const(t, wrap(v.const, dst))
                if src == dst:
                    return Val(t, code=v.code, base=v.base)
                if not src.signed and not dst.signed and dst.width >= src.width:
                    return Val(t, code=v.code)
                if src.signed and not dst.signed:
                    return Val(t, code=f"({v.code} & {dst.mask})")
                if not src.signed and dst.signed and dst.width > src.width:
                    return Val(t, code=v.code)
                if src.signed and dst.signed and dst.width >= src.width:
                    return Val(t, code=v.code)
                return Val(t, code=wrap_code(v.code, dst))
            if isinstance(src, ErrorT):
                return Val(t, code=v.code)
        if isinstance(dst, IntT) and v.is_const:
            return const(t, v.const)
        if same_type(src, dst):
            return Val(t, code=v.code, parts=v.parts, const=v.const, base=v.base)
        raise self.conversion_rule(node, f"cannot cast {v.type} to {t}")

    # ---------------------------------------------------------- aggregates

    def ev_ListExpr(self: CodeGen, e: ast.ListExpr, want: Type | None) -> Val:  # noqa: N802
        wt = strip(want) if want is not None else None
        if isinstance(wt, StructLikeT | TupleT | StackT):
            return self.coerce_list(e, want, e)  # type: ignore[arg-type]
        vals = [self.ev(x) for x in e.elems]
        parts: list[str] = []
        for v in vals:
            parts += self.flat(v)
        return Val(ListT([v.type for v in vals]), parts=parts)

    def ev_StructExpr(self: CodeGen, e: ast.StructExpr, want: Type | None) -> Val:  # noqa: N802
        t = self.resolve_type(e.type) if e.type is not None else want
        if t is None or not isinstance(strip(t), StructLikeT):
            names = [n for n, _ in e.fields]
            vals = [self.ev(x) for _, x in e.fields]
            st = StructT("anonymous", [(n, v.type) for n, v in zip(names, vals)])
            parts: list[str] = []
            for v in vals:
                parts += self.flat(v)
            return Val(st, parts=parts)
        return self.coerce_list(e, t, e)

    def ev_InvalidHeader(self: CodeGen, e: ast.InvalidHeader, want: Type | None) -> Val:  # noqa: N802
        if want is None or not isinstance(strip(want), HeaderT | UnionT):
            raise self.err(e, "'{#}' needs a header or header union type from context")
        return Val(want, parts=["0"] * slots(want))

    def flat(self: CodeGen, v: Val) -> list[str]:
        if v.parts is not None:
            return list(v.parts)
        return [v.code]

    def coerce_list(self: CodeGen, e: ast.ListExpr | ast.StructExpr, t: Type,
                    node: ast.Node) -> Val:
        st = strip(t)
        if isinstance(e, ast.StructExpr):
            if not isinstance(st, StructLikeT):
                raise self.err(node, f"cannot initialise {t} by field names")
            given = dict(e.fields)
            missing = [n for n, _ in st.fields if n not in given]
            extra = [n for n in given if st.field_type(n) is None]
            if extra:
                raise self.err(node, f"{st.name} has no field '{extra[0]}'")
            if missing:
                raise self.err(node, f"field '{missing[0]}' of {st.name} is not initialised")
            elems = [given[n] for n, _ in st.fields]
        else:
            elems = list(e.elems)
        if isinstance(st, StructLikeT):
            ftypes = [ft for _, ft in st.fields]
        elif isinstance(st, TupleT):
            ftypes = list(st.elems)
        elif isinstance(st, StackT):
            ftypes = [st.elem] * st.size
        else:
            raise self.err(node, f"cannot initialise {t} from a list")
        if len(elems) != len(ftypes):
            raise self.err(node, f"{t} needs {len(ftypes)} values, got {len(elems)}")
        parts: list[str] = ["1"] if isinstance(st, HeaderT) else (["0"] if isinstance(
            st, StackT) else [])
        consts = True
        for x, ft in zip(elems, ftypes):
            mark = len(self.w.lines)
            v = self.coerce(self.ev(x, ft), ft, x)
            flat = self.flat(v)
            if len(self.w.lines) > mark:
                # Later statements could change earlier parts: freeze them.
                for k, p in enumerate(parts):
                    if not _simple(p):
                        tmp = self.fresh()
                        self.w.insert(mark, f"{tmp} = {p}")
                        parts[k] = tmp
            consts = consts and v.is_const
            parts += flat
        return Val(t, parts=parts)

    # ------------------------------------------------------------ coercion

    def coerce(self: CodeGen, v: Val, t: Type, node: ast.Node) -> Val:
        """Convert ``v`` to type ``t`` where P4 converts implicitly."""
        src, dst = strip(v.type), strip(t)
        if isinstance(dst, StructLikeT | TupleT | StackT):
            if isinstance(src, ListT):
                if isinstance(dst, HeaderT):
                    if len(src.elems) != len(dst.fields):
                        raise self.err(node, f"{t} needs {len(dst.fields)} values")
                    return self._retype_list(v, dst, node, header=True)
                return self._retype_list(v, dst, node)
            if isinstance(src, StructLikeT) and src.name == "anonymous" and isinstance(
                    dst, StructLikeT):
                return self._retype_list(Val(ListT([ft for _, ft in src.fields]), parts=v.parts),
                                         dst, node, header=isinstance(dst, HeaderT))
            if not same_type(src, dst):
                raise self.conversion_rule(node, f"cannot use a value of type {v.type} as {t}")
            return v
        if isinstance(src, ListT | StructLikeT | TupleT | StackT):
            raise self.conversion_rule(node, f"cannot use a value of type {v.type} as {t}")
        if isinstance(dst, BitT):
            if isinstance(src, IntT):
                if not v.is_const:
                    raise self.err(node, "arbitrary-precision value must be constant")
                return const(t, wrap(v.const, dst))
            if isinstance(src, BitT):
                if src != dst:
                    raise self.conversion_rule(node, f"cannot assign a value of type {src} to "
                                                     f"{dst}: width or signedness differs (add "
                                                     "a cast)")
                return v
            if isinstance(src, EnumT) and src.underlying is not None:
                if src.underlying != dst:
                    raise self.conversion_rule(node, f"cannot use {v.type} as {t}")
                return Val(t, code=v.code, const=v.const)
            if isinstance(src, BoolT):
                raise self.conversion_rule(node, f"cannot use a bool as {t} (cast it)")
            raise self.conversion_rule(node, f"cannot use a value of type {v.type} as {t}")
        if isinstance(dst, EnumT):
            if isinstance(src, EnumT) and src is dst:
                return v
            if isinstance(src, IntT) and dst.underlying is not None and v.is_const:
                return const(t, wrap(v.const, dst.underlying))
            raise self.conversion_rule(node, f"cannot use a value of type {v.type} as {t}")
        if isinstance(dst, BoolT):
            if not isinstance(src, BoolT):
                raise self.conversion_rule(node, f"cannot use a value of type {v.type} as bool")
            return v
        if isinstance(dst, IntT):
            return v
        if isinstance(dst, VarbitT):
            if not isinstance(src, VarbitT):
                raise self.conversion_rule(node, f"cannot use a value of type {v.type} as {t}")
            return v
        if isinstance(dst, ErrorT | MatchKindT | StringT):
            if type(src) is not type(dst):
                raise self.conversion_rule(node, f"cannot use a value of type {v.type} as {t}")
            return v
        if isinstance(dst, ExternT | DontCareT | VoidT):
            return v
        if same_type(src, dst):
            return v
        raise self.conversion_rule(node, f"cannot use a value of type {v.type} as {t}")

    def _retype_list(self: CodeGen, v: Val, dst: Type, node: ast.Node,
                     header: bool = False) -> Val:
        """A list value (its parts are the flat elements) re-read as ``dst``:
        each element converted to its field type."""
        assert isinstance(v.type, ListT)
        st = strip(dst)
        if isinstance(st, StructLikeT):
            ftypes = [ft for _, ft in st.fields]
        elif isinstance(st, TupleT):
            ftypes = list(st.elems)
        else:
            ftypes = [st.elem] * st.size  # type: ignore[union-attr]
        if len(ftypes) != len(v.type.elems):
            raise self.err(node, f"{dst} needs {len(ftypes)} values, got {len(v.type.elems)}")
        parts = ["1"] if header else []
        k = 0
        for et, ft in zip(v.type.elems, ftypes):
            n = slots(et)
            chunk = (v.parts or [])[k:k + n]
            k += n
            ev = Val(et, parts=chunk) if is_compound(et) else Val(
                et, code=chunk[0], const=_literal(chunk[0]))
            parts += self.flat(self.coerce(ev, ft, node))
        return Val(dst, parts=parts)

    # -------------------------------------------------------------- lvalues

    def lval(self: CodeGen, e: ast.Expr) -> LValue:
        if isinstance(e, ast.Slice):
            inner = self.lval(e.expr)
            t = strip(inner.type)
            if not isinstance(t, BitT):
                raise self.type_rule(e, f"cannot slice a value of type {inner.type}")
            hi, lo = self.const_int(e.hi), self.const_int(e.lo)
            if not (0 <= lo <= hi < t.width):
                raise self.type_rule(e, f"slice [{hi}:{lo}] out of range for {t}")
            if inner.slice is not None:
                ohi, olo = inner.slice
                return LValue(BitT(hi - lo + 1), inner.base, (olo + hi, olo + lo),
                              inner.base_type)
            return LValue(BitT(hi - lo + 1), inner.base, (hi, lo), inner.type)
        if isinstance(e, ast.Name):
            sym = self.scope.lookup(e.name)
            if isinstance(sym, VarSym):
                if sym.readonly:
                    raise self.lvalue_rule(e, f"'{e.name}' is read-only")
                return LValue(sym.type, sym.base)
            if sym is None:
                raise self.lvalue_rule(e, f"unknown name '{e.name}'")
            raise self.lvalue_rule(e, f"cannot assign to '{e.name}'")
        if isinstance(e, ast.Member | ast.Index):
            v = self.ev(e)
            if v.base is None:
                raise self.lvalue_rule(e, "expression is not assignable")
            return LValue(v.type, v.base)
        raise self.lvalue_rule(e, "expression is not assignable")

    def store(self: CodeGen, lv: LValue, v: Val) -> None:
        if lv.slice is not None:
            hi, lo = lv.slice
            bt = strip(lv.base_type)  # type: ignore[arg-type]
            assert isinstance(bt, BitT)
            fmask = ((1 << (hi - lo + 1)) - 1) << lo
            target = slot(lv.base)
            keep = bt.mask & ~fmask
            new = f"(({target} & {keep}) | ((({v.code}) << {lo}) & {fmask}))"
            if bt.signed:
                new = wrap_code(f"({target} & {keep}) | ((({v.code}) << {lo}) & {fmask})", bt)
            self.w(f"{target} = {new}")
            return
        n = slots(lv.type)
        if v.parts is None and not is_compound(lv.type):
            self.w(f"{slot(lv.base)} = {v.code}")
            return
        parts = self.flat(v)
        if len(parts) != n:
            raise AssertionError(f"layout mismatch storing {v.type} into {lv.type}")
        if v.base is not None and isinstance(v.base, int) and isinstance(lv.base, int):
            self.w(f"s[{lv.base}:{lv.base + n}] = s[{v.base}:{v.base + n}]")
            return
        end = lv.base + n if isinstance(lv.base, int) else f"{lv.base} + {n}"
        self.w(f"s[{lv.base}:{end}] = {py_tuple(parts)}")

    def assign(self: CodeGen, lv: LValue, rhs: ast.Expr, node: ast.Node) -> None:
        v = self.coerce(self.ev(rhs, lv.type), lv.type, rhs)
        self.store(lv, v)

    def invalidate_headers(self: CodeGen, t: Type, base: int | str) -> None:
        """Mark every header inside a freshly declared variable invalid."""
        t = strip(t)
        if isinstance(t, HeaderT):
            self.w(f"{slot(base)} = 0")
        elif isinstance(t, StructLikeT):
            for fname, ft in t.fields:
                self.invalidate_headers(ft, offset(base, t.offsets[fname]))
        elif isinstance(t, StackT):
            self.w(f"{slot(base)} = 0")
            es = slots(t.elem)
            for i in range(t.size):
                self.invalidate_headers(t.elem, offset(base, 1 + i * es))

    # ----------------------------------------------------------------- calls

    def ev_Call(self: CodeGen, e: ast.Call, want: Type | None) -> Val:  # noqa: N802
        f = e.func
        if isinstance(f, ast.Member):
            target = f.expr
            sym = None
            if isinstance(target, ast.Name):
                sym = (self.root if target.absolute else self.scope).lookup(target.name)
            if isinstance(sym, TableSym) and f.name == "apply":
                return self.apply_table(sym, e)
            if isinstance(sym, BlockInstSym) and f.name == "apply":
                return self.apply_block(sym, e)
            if isinstance(sym, InstanceSym):
                return self.extern_method(sym, f.name, e, want)
            if isinstance(sym, TypeSym):
                return self.static_method(sym.type, f.name, e)
            if isinstance(sym, VarSym) and isinstance(strip(sym.type), ExternT) and sym.base < 0:
                return self.packet_method(strip(sym.type), f.name, e, want)  # type: ignore[arg-type]
            obj = self.ev(target)
            from dataplane.compiler.codegen.generator import _InstanceVal

            if isinstance(obj, _InstanceVal):
                if isinstance(obj.sym, InstanceSym):
                    return self.extern_method(obj.sym, f.name, e, want)
                if f.name == "apply":
                    return self.apply_block(obj.sym, e)
            return self.value_method(obj, f.name, e)
        if isinstance(f, ast.Name):
            sym = (self.root if f.absolute else self.scope).lookup(f.name)
            if isinstance(sym, ActionSym):
                return self.call_action(sym, e.args, e)
            if isinstance(sym, FuncSym):
                return self.call_function(sym, e)
            if isinstance(sym, ExternFuncSym):
                return self.extern_function(f.name, sym, e, want)
            if sym is None:
                raise self.err(f, f"unknown function '{f.name}'")
            raise self.err(f, f"'{f.name}' cannot be called")
        raise self.unsupported(e, "call of a computed expression")

    def static_method(self: CodeGen, t: Type, name: str, e: ast.Call) -> Val:
        if name in ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes"):
            bits = self.size_bits(t, name.startswith("min"), e)
            return const(IntT(), bits if name.endswith("Bits") else (bits + 7) // 8)
        raise self.err(e, f"type {t} has no method '{name}'")

    def size_bits(self: CodeGen, t: Type, minimum: bool, node: ast.Node) -> int:
        t = strip(t)
        if isinstance(t, VarbitT):
            return 0 if minimum else t.width
        if isinstance(t, StructLikeT):
            return sum(self.size_bits(ft, minimum, node) for _, ft in t.fields)
        if isinstance(t, StackT):
            return t.size * self.size_bits(t.elem, minimum, node)
        return field_bits(t)

    def value_method(self: CodeGen, obj: Val, name: str, e: ast.Call) -> Val:
        t = strip(obj.type)
        if name in ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes"):
            return self.static_method(obj.type, name, e)
        if isinstance(t, HeaderT):
            if obj.base is None:
                if name == "isValid":
                    return Val(BoolT(), code=f"bool({obj.parts[0]})")  # type: ignore[index]
                raise self.err(e, f"cannot call {name}() on a temporary header")
            if name == "isValid":
                return Val(BoolT(), code=slot(obj.base))
            if name in ("setValid", "setInvalid"):
                self.w(f"{slot(obj.base)} = {1 if name == 'setValid' else 0}")
                if name == "setValid":
                    self.invalidate_union_siblings(e.func.expr)  # type: ignore[attr-defined]
                return Val(VoidT())
            raise self.err(e, f"header has no method '{name}'")
        if isinstance(t, UnionT):
            if name != "isValid":
                raise self.err(e, f"header union has no method '{name}'")
            valids = [obj.parts[t.offsets[f]] for f, _ in t.fields]  # type: ignore[index]
            return Val(BoolT(), code="(" + " or ".join(f"bool({v})" for v in valids) + ")")
        if isinstance(t, StackT):
            if name in ("push_front", "pop_front"):
                n = self.const_int(e.args[0].value)
                self.stack_shift(obj, t, n if name == "push_front" else -n)
                return Val(VoidT())
            raise self.err(e, f"header stack has no method '{name}'")
        raise self.err(e, f"a value of type {obj.type} has no method '{name}'")

    def invalidate_union_siblings(self: CodeGen, member: ast.Expr) -> None:
        """``u.h.setValid()`` makes the other members of union ``u`` invalid."""
        if not isinstance(member, ast.Member):
            return
        checked = self.checked_type(member.expr)
        if checked is not None and not isinstance(checked, UnionT):
            return
        try:
            parent = self.ev(member.expr)
        except Exception:  # noqa: BLE001 - only a best-effort refinement
            return
        pt = strip(parent.type)
        if isinstance(pt, UnionT) and parent.base is not None:
            for fname, _ in pt.fields:
                if fname != member.name:
                    self.w(f"{slot(parent.base, pt.offsets[fname])} = 0")

    def stack_shift(self: CodeGen, obj: Val, t: StackT, n: int) -> None:
        """push_front(n) for n > 0, pop_front(-n) for n < 0 (spec 8.18)."""
        assert obj.base is not None
        es = slots(t.elem)
        first = offset(obj.base, 1)
        size = t.size
        k = abs(n)
        if k == 0:
            return
        if isinstance(first, int):
            end = first + size * es
            if n > 0:
                if k < size:
                    self.w(f"s[{first + k * es}:{end}] = s[{first}:{end - k * es}]")
                for i in range(min(k, size)):
                    self.w(f"s[{first + i * es}] = 0")
                self.w(f"{slot(obj.base)} = min({slot(obj.base)} + {k}, {size})")
            else:
                if k < size:
                    self.w(f"s[{first}:{end - k * es}] = s[{first + k * es}:{end}]")
                for i in range(max(size - k, 0), size):
                    self.w(f"s[{first + i * es}] = 0")
                self.w(f"{slot(obj.base)} = max({slot(obj.base)} - {k}, 0)")
            return
        raise self.unsupported(None, "push/pop on a dynamically indexed stack")


def _literal(code: str) -> int | bool | None:
    """The value of a literal part, or None when it is not a literal."""
    if code in ("True", "False"):
        return code == "True"
    if code.lstrip("-").isdigit():
        return int(code)
    return None


def _simple(code: str) -> bool:
    """True for parts no later statement can change (literals, temps)."""
    return _literal(code) is not None or code.isidentifier()
