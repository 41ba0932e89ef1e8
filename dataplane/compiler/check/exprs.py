"""Expression rules: every expression gets a type (or None where a type
variable hides it) and every operator its operand rules (spec 8)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from common.errors import P4SemanticError, P4UnsupportedError
from dataplane.compiler.check import convert
from dataplane.compiler.check.env import (
    CONST,
    INSTANCE,
    TYPE,
    VALUE_SET,
    VAR,
    Entity,
)
from dataplane.compiler.check.typeref import known
from dataplane.compiler.frontend import ast
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
    NewT,
    StackT,
    StringT,
    StructLikeT,
    StructT,
    TupleT,
    Type,
    UnionT,
    VoidT,
    same_type,
    strip,
)

if TYPE_CHECKING:
    from dataplane.compiler.check.checker import Checker


@dataclass(eq=False)
class ApplyResultT(Type):
    """What ``t.apply()`` gives: ``hit``, ``miss`` and ``action_run``."""

    table: ast.TableDecl

    def __str__(self) -> str:
        return f"{self.table.name}.apply() result"


@dataclass(eq=False)
class ActionRunT(Type):
    """``t.apply().action_run``: a switch over it is labelled by actions."""

    table: ast.TableDecl

    def __str__(self) -> str:
        return f"action_run of {self.table.name}"


ARITH = {"+", "-", "*", "/", "%", "|+|", "|-|", "&", "|", "^"}
ORDER = {"<", "<=", ">", ">="}
HEADER_METHODS = {"isValid": BoolT(), "setValid": VoidT(), "setInvalid": VoidT()}
STACK_READ_ONLY = {"size", "lastIndex", "nextIndex"}
SIZE_METHODS = {"minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes"}


def err(node: ast.Node, msg: str) -> P4SemanticError:
    return P4SemanticError(msg, node.loc)


class ExprRules:
    """Expression typing for ``Checker``."""

    def expr(self: Checker, e: ast.Expr, want: Type | None = None) -> Type | None:
        """Type ``e`` (``want`` is the type the context expects, which gives
        ``{#}`` and list initialisers their type) and record it."""
        fn = getattr(self, "e_" + type(e).__name__, None)
        if fn is None:
            return None
        t = fn(e, want)
        if t is not None:
            self.facts.types[id(e)] = t
        return t

    def e_IntLit(self: Checker, e: ast.IntLit, want: Type | None) -> Type:  # noqa: N802
        if e.width is None:
            return IntT()
        width_ok(e.width, e.signed, e)
        return BitT(e.width, e.signed)

    def e_BoolLit(self: Checker, e: ast.BoolLit, want: Type | None) -> Type:  # noqa: N802
        return BoolT()

    def e_StringLit(self: Checker, e: ast.StringLit, want: Type | None) -> Type:  # noqa: N802
        return StringT()

    def e_DontCare(self: Checker, e: ast.DontCare, want: Type | None) -> Type:  # noqa: N802
        return DontCareT()

    def e_InvalidHeader(self: Checker, e: ast.InvalidHeader,  # noqa: N802
                        want: Type | None) -> Type | None:
        w = known(want)
        if w is not None and not isinstance(w, HeaderT | UnionT):
            raise err(e, f"'{{#}}' is the invalid header, not a value of type {want}")
        return want

    def lookup(self: Checker, e: ast.Name) -> Entity:
        ent = (self.res.root if e.absolute else self.scope).lookup(e.name)
        if ent is None:
            raise err(e, f"'{e.name}': declaration not found")
        self.facts.symbols[id(e)] = ent
        return ent

    def e_Name(self: Checker, e: ast.Name, want: Type | None) -> Type | None:  # noqa: N802
        if e.name == "error" and not e.absolute and self.scope.lookup("error") is None:
            return self.res.error
        ent = self.lookup(e)
        if ent.kind in (VAR, CONST, VALUE_SET, INSTANCE):
            return ent.type
        if ent.kind == TYPE:
            raise err(e, f"'{e.name}' is a type, not a value")
        raise err(e, f"'{e.name}' is a {ent.kind}; it cannot be used as a value")

    def type_named(self: Checker, e: ast.Expr) -> Type | None:
        """The type ``e`` names when it is a type name (``Enum`` in
        ``Enum.X``, ``error``), else None."""
        if isinstance(e, ast.Name):
            if e.name == "error":
                return self.res.error
            ent = (self.res.root if e.absolute else self.scope).lookup(e.name)
            if ent is not None and ent.kind == TYPE:
                self.facts.symbols[id(e)] = ent
                return ent.type or DontCareT()
        if isinstance(e, ast.TypeMember):
            return None
        return None

    def e_Member(self: Checker, e: ast.Member, want: Type | None) -> Type | None:  # noqa: N802
        named = self.type_named(e.expr)
        if named is not None:
            return self.type_member(strip(named), e)
        base = self.expr(e.expr)
        b = known(base)
        if b is None:
            return None
        if isinstance(b, StructLikeT):
            ft = b.field_type(e.name)
            if ft is None:
                raise err(e, f"Field {e.name} is not a member of {b.name}")
            return ft
        if isinstance(b, StackT):
            if e.name in ("next", "last", "lastIndex") and self.ctx.kind != "parser":
                raise err(e, f"'{e.name}' of a header stack is used only in a parser")
            if e.name in ("next", "last"):
                return b.elem
            if e.name in ("size", "lastIndex", "nextIndex"):
                return BitT(32)
            raise err(e, f"header stack has no member '{e.name}'")
        if isinstance(b, ApplyResultT):
            if e.name in ("hit", "miss"):
                return BoolT()
            if e.name == "action_run":
                return ActionRunT(b.table)
            raise err(e, f"table apply result has no member '{e.name}'")
        if isinstance(b, ExternT):
            return None  # a method, typed at its call
        raise err(e, f"a value of type {base} has no member '{e.name}'")

    def type_member(self: Checker, t: Type, e: ast.Member) -> Type | None:
        if isinstance(t, ErrorT):
            if e.name not in t.members:
                raise err(e, f"error.{e.name}: declaration not found")
            return t
        if isinstance(t, EnumT):
            if e.name not in t.members:
                raise err(e, f"enum {t.name} has no member '{e.name}'")
            return t
        return None

    def e_Index(self: Checker, e: ast.Index, want: Type | None) -> Type | None:  # noqa: N802
        base = self.expr(e.expr)
        it = known(self.expr(e.index))
        if it is not None and not isinstance(it, BitT | IntT) and not (
                isinstance(it, EnumT) and it.underlying is not None):
            raise err(e.index, f"an index must be an integer, not {it}")
        b = known(base)
        if b is None:
            return None
        i = self.res.const_value(e.index, self.scope)
        if isinstance(b, StackT):
            if isinstance(i, int) and not isinstance(i, bool) and not 0 <= i < b.size:
                raise err(e, f"index {i} out of bounds for a stack of size {b.size}")
            return b.elem
        if isinstance(b, TupleT | ListT):
            if not isinstance(i, int) or not 0 <= i < len(b.elems):
                raise err(e, f"a tuple is indexed by a constant below {len(b.elems)}")
            if isinstance(b, ListT):
                raise P4UnsupportedError("unsupported construct: indexing a list expression "
                                         "(well typed; give it a tuple type)", e.loc)
            return b.elems[i]
        raise err(e, f"cannot index a value of type {base}")

    def e_Slice(self: Checker, e: ast.Slice, want: Type | None) -> Type | None:  # noqa: N802
        base = known(self.expr(e.expr))
        self.serial_operand(e, "[:]", base)
        width = _plus_slice_width(e)
        for bound in (e.hi, e.lo) if width is None else (width, e.lo):
            bt = known(self.expr(bound))
            if bt is None:
                continue
            self.serial_operand(e, "[:]", bt)
            if not isinstance(bt, BitT | IntT):
                raise err(bound, f"a slice bound is an integer, not {bt}")
            if width is not None and bound is e.lo:
                continue  # the base of ``+:`` may be a run-time value
            if not self.is_constant(bound):
                what = "width" if width is not None else "bound"
                raise err(bound, f"a slice {what} must be a compile-time known value")
        hi = self.res.const_value(e.hi, self.scope)
        lo = self.res.const_value(e.lo, self.scope)
        if base is None or not isinstance(hi, int) or not isinstance(lo, int):
            return None
        if isinstance(base, IntT):
            return BitT(hi - lo + 1) if hi >= lo >= 0 else None
        if not isinstance(base, BitT):
            raise err(e, f"cannot slice a value of type {base}")
        if hi >= base.width:
            raise err(e, f"slice [{hi}:{lo}] out of range for {base}: bit index {hi} is "
                         f"greater than its width {base.width}")
        if not 0 <= lo <= hi:
            raise err(e, f"slice [{hi}:{lo}] out of range for {base}")
        return BitT(hi - lo + 1)

    def e_Unary(self: Checker, e: ast.Unary, want: Type | None) -> Type | None:  # noqa: N802
        t = self.expr(e.expr, want)
        k = known(t)
        if k is None:
            return t
        if isinstance(k, EnumT) and k.underlying is not None and e.op != "!":
            self.serial_operand(e, e.op, t)
        if e.op == "!":
            if not isinstance(k, BoolT):
                raise err(e, f"'!' needs a bool, not {t}")
        elif not isinstance(k, BitT | IntT):
            raise err(e, f"'{e.op}' needs an integer, not {t}")
        return t

    def e_Binary(self: Checker, e: ast.Binary, want: Type | None) -> Type | None:  # noqa: N802
        op = e.op
        if op in ("&&", "||"):
            for side in (e.left, e.right):
                k = known(self.expr(side))
                if k is not None and not isinstance(k, BoolT):
                    raise err(side, f"'{op}' needs bool operands, not {k}")
            return BoolT()
        if op in ("<<", ">>"):
            return self.shift(e, want)
        a = self.expr(e.left, want if op in ARITH else None)
        b = self.expr(e.right, a if op in ARITH or op in ("==", "!=") else None)
        ka, kb = known(a), known(b)
        if op not in ("==", "!=") or not (isinstance(ka, EnumT) and ka is kb):
            ka, kb = serial_value(ka), serial_value(kb)  # spec 8.3: to the underlying type
            if op == "++" or (ka is not known(a) and kb is not known(b) and
                              known(a) is not known(b)):
                self.serial_operand(e, op, a, b)
        if op == "++":
            if isinstance(ka, StringT) and isinstance(kb, StringT):
                raise P4UnsupportedError("unsupported construct: concatenating strings (a "
                                         "string ++ a string is well typed, spec 8.6)", e.loc)
            for k, t in ((ka, a), (kb, b)):
                if k is not None and not isinstance(k, BitT):
                    raise err(e, f"'++' needs sized bit-strings, not {t}")
            if isinstance(ka, BitT) and isinstance(kb, BitT):
                return BitT(ka.width + kb.width, ka.signed)
            return None
        if ka is None or kb is None:
            return BoolT() if op in ORDER or op in ("==", "!=") else (a if kb is not None or
                                                                       ka is not None else None)
        t = self.unify(ka, kb, e, op)
        if ka is not known(a) and kb is not known(b):
            t = ka  # both serializable enums: their (agreeing) underlying type
        if op in ("==", "!="):
            return BoolT()
        k = known(t)  # an enum takes part only in == and != (spec 8.3)
        if op in ORDER:
            if not isinstance(k, BitT | IntT):
                raise err(e, f"'{op}' is not defined on {t}")
            return BoolT()
        if not isinstance(k, BitT | IntT):
            raise err(e, f"'{op}' is not defined on {t}")
        if op in ("/", "%"):
            if isinstance(k, BitT) and k.signed:
                raise err(e, f"'{op}' is only defined on unsigned values")
            if self.res.const_value(e.right, self.scope) == 0:
                raise err(e.right, "division by zero")
            for side in (e.left, e.right):
                v = self.res.const_value(side, self.scope)
                if isinstance(v, int) and not isinstance(v, bool) and v < 0:
                    raise err(e, f"'{op}' is not defined on negative numbers ({v})")
        return t

    def serial_operand(self: Checker, e: ast.Expr, op: str, *types: Type | None) -> None:
        """A serializable enum stands for its value in any expression (spec
        8.3); code generation takes it so in arithmetic and comparisons
        only, so elsewhere it is a located unsupported construct."""
        if any(isinstance(known(t), EnumT) and known(t).underlying is not None  # type: ignore
               for t in types):
            raise P4UnsupportedError(f"unsupported construct: a serializable enum as an operand "
                                     f"of '{op}' (cast it to its underlying type)", e.loc)

    def unify(self: Checker, a: Type, b: Type, node: ast.Node, op: str) -> Type:
        """The common type of two operands (an ``int`` takes the other's)."""
        if isinstance(a, IntT) and not isinstance(b, IntT):
            self.converts(a, b, node)
            return b
        if isinstance(b, IntT) and not isinstance(a, IntT):
            self.converts(b, a, node)
            return a
        if isinstance(a, BitT) and isinstance(b, BitT):
            if a != b:
                raise err(node, f"operands of '{op}' have different types: {a} and {b}")
            return a
        for x, y in ((a, b), (b, a)):
            if isinstance(x, EnumT) and isinstance(y, BitT) and x.underlying is not None:
                if x.underlying != y:
                    raise err(node, f"operands of '{op}' have different types: {x} (over "
                                    f"{x.underlying}) and {y}")
                return y
        if op in ("==", "!=") and isinstance(a, ListT) and isinstance(b, ListT) and any(
                isinstance(known(t), IntT) for t in [*a.elems, *b.elems]):
            raise P4UnsupportedError("unsupported construct: comparing two list expressions "
                                     "of integers without a width (give them one)", node.loc)
        for x, y in ((a, b), (b, a)):
            if isinstance(x, ListT) and isinstance(y, TupleT | StructLikeT):
                self.converts(x, y, node)  # the list takes the other side's type
                return y
        if isinstance(a, ListT | StructLikeT) and isinstance(b, ListT | StructLikeT):
            return a  # compared member by member; codegen checks the shapes
        if not same_type(a, b):
            raise err(node, f"operands of '{op}' have different types: {a} and {b}")
        return a

    def need(self: Checker, problem: str | None, node: ast.Node) -> None:
        if problem is not None:
            raise err(node, problem)

    def converts(self: Checker, src: Type | None, dst: Type | None, node: ast.Node) -> None:
        """``node``'s value (of ``src``) stands where ``dst`` is wanted; once
        both are known the conversion is checked, and noted as such."""
        self.need(convert.implicit(src, dst), node)
        if known(src) is not None and known(dst) is not None:
            self.facts.converted.add(id(node))

    def shift(self: Checker, e: ast.Binary, want: Type | None) -> Type | None:
        a = self.expr(e.left, want)
        b = self.expr(e.right)
        kb = known(b)
        if kb is not None:
            if isinstance(b, NewT):
                raise err(e.right, f"a shift amount must be a bit<W> or a compile-time known "
                                   f"non-negative integer, not {b} (a new type: cast it)")
            if isinstance(kb, EnumT) and kb.underlying is not None:
                kb = kb.underlying  # a serializable enum shifts by its value (p4c)
            if isinstance(kb, BitT) and kb.signed and not self.is_constant(e.right):
                raise err(e.right, "shift amount must be unsigned")
            if not isinstance(kb, BitT | IntT):
                raise err(e.right, f"a shift amount must be an unsigned bit<W> or a "
                                   f"non-negative integer, not {b}")
            amount = self.res.const_value(e.right, self.scope)
            if isinstance(amount, int) and amount < 0:
                raise err(e.right, "negative shift amount")
        ka = serial_value(known(a))
        self.serial_operand(e, e.op, a, b)
        if ka is not None and not isinstance(ka, BitT | IntT):
            raise err(e, f"cannot shift a value of type {a}")
        if isinstance(ka, IntT) and kb is not None and not self.is_constant(e.right):
            raise err(e, "shifting an int (of no width) by a run-time amount: give the left "
                         "operand a width (e.g. 8w1) or make the amount constant")
        if isinstance(ka, IntT) and want is not None and isinstance(known(want), BitT):
            return want
        return a

    def e_Mux(self: Checker, e: ast.Mux, want: Type | None) -> Type | None:  # noqa: N802
        c = known(self.expr(e.cond))
        if c is not None and not isinstance(c, BoolT):
            raise err(e.cond, f"condition must be bool, not {c}")
        a = self.expr(e.then, want)
        b = self.expr(e.other, want if a is None else a)
        ka, kb = known(a), known(b)
        if ka is None or kb is None:
            return a or b
        return self.unify(ka, kb, e, "?:")

    def e_Cast(self: Checker, e: ast.Cast, want: Type | None) -> Type | None:  # noqa: N802
        t = self.res.resolve(e.type, self.scope)
        src = self.expr(e.expr, t)
        constant = self.res.const_value(e.expr, self.scope) is not None
        if known(src) is not None and isinstance(known(src), IntT) and not constant:
            constant = self.is_constant(e.expr)
        self.need(convert.explicit(src, t, constant), e)
        self.need(convert.new_type_cast(src, t), e)
        if isinstance(known(t), BoolT) and isinstance(known(src), IntT):
            v = self.res.const_value(e.expr, self.scope)
            if isinstance(v, int) and v not in (0, 1):
                raise err(e, f"only 0 and 1 cast to bool, not {v}")
        if isinstance(known(t), IntT) and not isinstance(known(src), IntT | None) and \
                not self.is_constant(e.expr):
            raise P4UnsupportedError("unsupported construct: a cast of a run-time value to "
                                     "int (an int value exists only at compile time)", e.loc)
        if known(src) is not None and known(t) is not None:
            self.facts.converted.add(id(e))
        return t

    def e_ListExpr(self: Checker, e: ast.ListExpr, want: Type | None) -> Type | None:  # noqa: N802
        w = known(want)
        wanted: list[Type | None] = [None] * len(e.elems)
        if isinstance(w, TupleT) and len(w.elems) == len(e.elems):
            wanted = list(w.elems)
        elif isinstance(w, StructLikeT) and len(w.fields) == len(e.elems):
            wanted = [ft for _, ft in w.fields]
        elif isinstance(w, StackT) and w.size == len(e.elems):
            wanted = [w.elem] * w.size
        elems = [self.expr(x, wt) for x, wt in zip(e.elems, wanted)]
        if any(x is None for x in elems):
            return None
        return ListT(elems)  # type: ignore[arg-type]

    def e_StructExpr(self: Checker, e: ast.StructExpr,  # noqa: N802
                     want: Type | None) -> Type | None:
        declared = self.res.resolve(e.type, self.scope) if e.type is not None else None
        w = known(declared or want)
        fields: list[tuple[str, Type]] = []
        for name, x in e.fields:
            ft = w.field_type(name) if isinstance(w, StructLikeT) else None
            t = self.expr(x, ft)
            if t is None:
                return declared
            fields.append((name, t))
        anon = StructT("anonymous", fields)
        if declared is not None:
            self.converts(anon, declared, e)
            return declared
        return anon

    def is_constant(self: Checker, e: ast.Expr) -> bool:
        """Whether ``e`` is known at compile time (spec 18.1)."""
        if isinstance(e, ast.IntLit | ast.BoolLit | ast.StringLit | ast.Default | ast.DontCare
                      | ast.InvalidHeader):
            return True
        if isinstance(e, ast.Name):
            ent = self.facts.symbols.get(id(e)) or self.scope.lookup(e.name)
            return ent is not None and ent.kind == CONST
        if isinstance(e, ast.Member):  # an enum or error member, or a constant's field
            return self.type_named(e.expr) is not None or (
                isinstance(known(self.facts.types.get(id(e.expr))), StructLikeT)
                and self.is_constant(e.expr))
        if isinstance(e, ast.Unary | ast.Cast):
            return self.is_constant(e.expr)
        if isinstance(e, ast.Binary):
            return self.is_constant(e.left) and self.is_constant(e.right)
        if isinstance(e, ast.Mux):
            return all(self.is_constant(x) for x in (e.cond, e.then, e.other))
        if isinstance(e, ast.Slice):
            return self.is_constant(e.expr)
        if isinstance(e, ast.Index):  # an element of a constant tuple or list
            return self.is_constant(e.expr) and self.is_constant(e.index)
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Member) and not e.args:
            return e.func.name in SIZE_METHODS  # sizes are known at compile time (spec 9)
        if isinstance(e, ast.ListExpr):
            return all(self.is_constant(x) for x in e.elems)
        if isinstance(e, ast.StructExpr):
            return all(self.is_constant(x) for _, x in e.fields)
        if isinstance(e, ast.Mask):
            return self.is_constant(e.value) and self.is_constant(e.mask)
        if isinstance(e, ast.Range):
            return self.is_constant(e.lo) and self.is_constant(e.hi)
        return False

    # ------------------------------------------------------------ l-values

    def lvalue(self: Checker, e: ast.Expr, what: str) -> None:
        """Reject ``e`` as the target of an assignment or an out/inout
        argument unless it names writable storage."""
        root = e
        path = [e]
        while isinstance(root, ast.Member | ast.Index | ast.Slice):
            if isinstance(root, ast.Member) and self.type_named(root.expr) is not None:
                raise err(e, f"{what} is not assignable (it is a constant)")
            if isinstance(root, ast.Member) and not isinstance(
                    known(self.facts.types.get(id(root.expr))), StructLikeT | StackT | None):
                raise err(e, f"{what} is not assignable (.{root.name} is read-only)")
            if isinstance(root, ast.Member) and root.name in STACK_READ_ONLY and isinstance(
                    known(self.facts.types.get(id(root.expr))), StackT):
                raise err(e, f"{what} is not assignable (a stack's {root.name} is read-only)")
            root = root.expr
            path.append(root)
        if isinstance(root, ast.Name):
            ent = self.facts.symbols.get(id(root)) or self.scope.lookup(root.name)
            if ent is None or ent.kind != VAR:
                kind = ent.kind if ent is not None else "unknown name"
                raise err(e, f"{what} is not assignable ('{root.name}' is a {kind})")
            if not ent.writable:
                raise err(e, f"{what} is not assignable: '{root.name}' is read-only "
                             "(a parameter with direction in, or none)")
            self.facts.assignable.update(id(x) for x in path)
            return
        if isinstance(root, ast.Call) and isinstance(e, ast.Member | ast.Index):
            raise err(e, f"{what} is not assignable (it is the result of a call)")
        if not isinstance(root, ast.DontCare):
            raise err(e, f"{what} is not assignable")

    # --------------------------------------------------------------- calls

    def e_Call(self: Checker, e: ast.Call, want: Type | None) -> Type | None:  # noqa: N802
        from dataplane.compiler.check.calls import call_type

        return call_type(self, e, want)


def serial_value(t: Type | None) -> Type | None:
    """A serializable enum's underlying type (it converts to it implicitly
    in expressions, spec 8.3); any other type itself."""
    if isinstance(t, EnumT) and t.underlying is not None:
        return t.underlying
    return t


def _plus_slice_width(e: ast.Slice) -> ast.Expr | None:
    """The width of ``x[base +: width]`` (which arrives as ``x[base + width
    - 1 : base]``; its base may be a run-time value), or None for a plain
    slice, whose bounds are both compile-time known (spec 8.7)."""
    hi = e.hi
    if isinstance(hi, ast.Binary) and hi.op == "-" and isinstance(hi.left, ast.Binary) \
            and hi.left.op == "+" and hi.left.left is e.lo:
        return hi.left.right
    return None


MAX_WIDTH = 2048
"""The widest bit-string p4c compiles."""


def width_ok(w: int, signed: bool, node: ast.Node) -> None:
    """A bit<W> width is 0 or more, an int<W> width 1 or more (spec 7.1.6),
    and at most p4c's limit."""
    if w < 0 or (w == 0 and signed):
        raise err(node, f"invalid width {w} for {'int' if signed else 'bit'}<W>")
    if w > MAX_WIDTH:
        raise err(node, f"width {w} is beyond the widest bit-string ({MAX_WIDTH} bits)")


def header_method(t: Type, name: str) -> Type | None:
    if isinstance(t, HeaderT | UnionT) and name in HEADER_METHODS:
        if isinstance(t, UnionT) and name != "isValid":
            return None
        return HEADER_METHODS[name]
    return None

