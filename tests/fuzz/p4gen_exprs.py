"""Typed P4 expressions over fixed widths 1..64, each able to say its P4
text and to compute its own value: the generator writes well-typed code
from them, and a test checks what the engine computed against the value
Python computes with explicit masking (the semantics of P4-16's
arithmetic on ``bit<W>`` and ``int<W>``)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MAX_WIDTH = 64


@dataclass(frozen=True)
class Ty:
    """``bit<W>`` or (``signed``) ``int<W>``."""

    width: int
    signed: bool = False
    boolean: bool = False
    """``bool`` (a header's bool field: one bit in the packet)."""

    @property
    def p4(self) -> str:
        if self.boolean:
            return "bool"
        return f"{'int' if self.signed else 'bit'}<{self.width}>"

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1


BOOL = Ty(0)
"""The type of a comparison (no width)."""


def to_signed(v: int, width: int) -> int:
    return v - (1 << width) if v >> (width - 1) & 1 else v


class Expr:
    """A typed P4 expression; values are unsigned representations."""

    ty: Ty

    def p4(self) -> str:
        raise NotImplementedError

    def eval(self, env: Mapping[str, int]) -> int:
        raise NotImplementedError


class OfOperand(Expr):
    """An expression of its operand ``a``'s type."""

    a: Expr

    @property
    def ty(self) -> Ty:  # type: ignore[override]
        return self.a.ty


@dataclass(frozen=True)
class Var(Expr):
    name: str
    ty: Ty

    def p4(self) -> str:
        return self.name

    def eval(self, env: Mapping[str, int]) -> int:
        return env[self.name] & self.ty.mask


@dataclass(frozen=True)
class Const(Expr):
    value: int
    ty: Ty

    def p4(self) -> str:
        if self.ty.signed:  # written as a cast: a negative literal needs care
            return f"(int<{self.ty.width}>){self.ty.width}w{self.value}"
        return f"{self.ty.width}w{self.value}"

    def eval(self, env: Mapping[str, int]) -> int:
        return self.value


@dataclass(frozen=True)
class Binary(OfOperand):
    """``(a op b)``, of the left operand's type."""

    op: str
    a: Expr
    b: Expr

    def p4(self) -> str:
        return f"({self.a.p4()} {self.op} {self.b.p4()})"


class Bin(Binary):
    """``+ - * & | ^`` over two operands of one type."""

    def eval(self, env: Mapping[str, int]) -> int:
        x, y = self.a.eval(env), self.b.eval(env)
        out = {"+": x + y, "-": x - y, "*": x * y, "&": x & y, "|": x | y, "^": x ^ y}[self.op]
        return out & self.ty.mask


class Sat(Binary):
    """``|+|`` and ``|-|``: saturating at the type's bounds."""

    def eval(self, env: Mapping[str, int]) -> int:
        w, signed = self.ty.width, self.ty.signed
        x, y = self.a.eval(env), self.b.eval(env)
        if signed:
            x, y = to_signed(x, w), to_signed(y, w)
            lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
        else:
            lo, hi = 0, self.ty.mask
        r = x + y if self.op == "|+|" else x - y
        return max(lo, min(hi, r)) & self.ty.mask


class Shift(Binary):
    """``<<`` and ``>>`` by an unsigned amount ``b`` of any width
    (arithmetic right shift for ``int<W>``)."""

    def eval(self, env: Mapping[str, int]) -> int:
        x, n, w = self.a.eval(env), self.b.eval(env), self.ty.width
        if self.op == "<<":
            return (x << n) & self.ty.mask if n < w else 0
        if self.ty.signed:
            return (to_signed(x, w) >> min(n, w)) & self.ty.mask
        return x >> n if n < w else 0


class Cmp(Binary):
    """A comparison: a boolean (1 or 0) whatever its operands' type."""

    @property
    def ty(self) -> Ty:  # type: ignore[override]
        return BOOL

    def eval(self, env: Mapping[str, int]) -> int:
        x, y = self.a.eval(env), self.b.eval(env)
        if self.a.ty.signed:
            x, y = to_signed(x, self.a.ty.width), to_signed(y, self.a.ty.width)
        return int({"==": x == y, "!=": x != y, "<": x < y, "<=": x <= y,
                    ">": x > y, ">=": x >= y}[self.op])


@dataclass(frozen=True)
class Unary(OfOperand):
    op: str
    a: Expr

    def p4(self) -> str:
        return f"({self.op}{self.a.p4()})"

    def eval(self, env: Mapping[str, int]) -> int:
        x = self.a.eval(env)
        return (~x if self.op == "~" else -x) & self.ty.mask


@dataclass(frozen=True)
class Slice(Expr):
    a: Expr
    hi: int
    lo: int

    @property
    def ty(self) -> Ty:  # type: ignore[override]
        return Ty(self.hi - self.lo + 1)

    def p4(self) -> str:
        return f"{_atom(self.a)}[{self.hi}:{self.lo}]"

    def eval(self, env: Mapping[str, int]) -> int:
        return (self.a.eval(env) >> self.lo) & self.ty.mask


@dataclass(frozen=True)
class Concat(Expr):
    a: Expr
    b: Expr

    @property
    def ty(self) -> Ty:  # type: ignore[override]
        return Ty(self.a.ty.width + self.b.ty.width)

    def p4(self) -> str:
        return f"({self.a.p4()} ++ {self.b.p4()})"

    def eval(self, env: Mapping[str, int]) -> int:
        return self.a.eval(env) << self.b.ty.width | self.b.eval(env)


@dataclass(frozen=True)
class Cast(Expr):
    """One of P4's casts: ``bit<W>``/``int<W>`` to another width of the
    same signedness, or between ``bit<W>`` and ``int<W>``."""

    ty: Ty
    a: Expr

    def p4(self) -> str:
        return f"(({self.ty.p4}){_atom(self.a)})"

    def eval(self, env: Mapping[str, int]) -> int:
        x, src = self.a.eval(env), self.a.ty
        if src.signed and self.ty.signed:
            x = to_signed(x, src.width)
        return x & self.ty.mask


@dataclass(frozen=True)
class Mux(OfOperand):
    """``c ? a : b``."""

    c: Expr
    a: Expr
    b: Expr

    def p4(self) -> str:
        return f"({self.c.p4()} ? {self.a.p4()} : {self.b.p4()})"

    def eval(self, env: Mapping[str, int]) -> int:
        return self.a.eval(env) if self.c.eval(env) else self.b.eval(env)


@dataclass(frozen=True)
class Flag(Expr):
    """A boolean read as it is: a bool field or ``h.isValid()``."""

    name: str
    ty: Ty = BOOL

    def p4(self) -> str:
        return f"({self.name})"  # as a comparison is: an if's whole condition

    def eval(self, env: Mapping[str, int]) -> int:
        return int(bool(env[self.name]))


@dataclass(frozen=True)
class Logic(Expr):
    """``&&`` and ``||`` (short-circuit: the same value either way here)."""

    op: str
    a: Expr
    b: Expr
    ty: Ty = BOOL

    def p4(self) -> str:
        return f"({self.a.p4()} {self.op} {self.b.p4()})"

    def eval(self, env: Mapping[str, int]) -> int:
        x, y = self.a.eval(env), self.b.eval(env)
        return int(x and y) if self.op == "&&" else int(x or y)


@dataclass(frozen=True)
class Not(Expr):
    a: Expr
    ty: Ty = BOOL

    def p4(self) -> str:
        return f"(!{self.a.p4()})"

    def eval(self, env: Mapping[str, int]) -> int:
        return int(not self.a.eval(env))


@dataclass(frozen=True)
class Bit(Expr):
    """``(bit<1>)c`` of a boolean."""

    c: Expr
    ty: Ty = Ty(1)

    def p4(self) -> str:
        return f"((bit<1>){self.c.p4()})"

    def eval(self, env: Mapping[str, int]) -> int:
        return int(bool(self.c.eval(env)))


def constant(e: Expr) -> bool:
    """Whether ``e`` has a value at compile time: it reads no variable, or
    only in the branch a constant condition leaves out."""
    if isinstance(e, Var | Flag):
        return False
    if isinstance(e, Mux) and constant(e.c):
        return constant(e.a if e.c.eval({}) else e.b)
    return all(constant(x) for x in vars(e).values() if isinstance(x, Expr))


def _atom(e: Expr) -> str:
    """``e`` as an operand of a postfix slice or a cast: parenthesized
    unless a name or already in parentheses."""
    text = e.p4()
    return text if isinstance(e, Var) or text.startswith("(") else f"({text})"


def convert(e: Expr, ty: Ty) -> Expr:
    """``e`` as type ``ty`` through P4's legal casts."""
    src = e.ty
    if src == ty:
        return e
    if src.signed == ty.signed:
        return Cast(ty, e)
    if src.signed:  # int<W> -> bit<W> -> bit<W2>
        return convert(Cast(Ty(src.width), e), ty)
    same = e if src.width == ty.width else Cast(Ty(ty.width), e)
    return Cast(ty, same)


def width_value(rng: random.Random, width: int) -> int:
    """A value of ``width`` bits, often at an edge (0, 1, all ones, the top bit)."""
    mask = (1 << width) - 1
    pick = rng.random()
    if pick < 0.1:
        return 0
    if pick < 0.2:
        return mask
    if pick < 0.3:
        return 1 << (width - 1)
    if pick < 0.35:
        return 1 & mask
    return rng.getrandbits(width)


def random_width(rng: random.Random, lo: int = 1) -> int:
    """A width in lo..64, the machine-word edges often."""
    if rng.random() < 0.35:
        return max(lo, rng.choice([1, 7, 8, 16, 31, 32, 33, 48, 63, 64]))
    return rng.randint(lo, MAX_WIDTH)


class ExprGen:
    """Random expressions of a wanted type over a set of variables."""

    def __init__(self, rng: random.Random, names: list[Var], used: dict[str, int],
                 flags: Sequence[Flag] = ()) -> None:
        self.rng = rng
        self.names = names
        self.used = used  # construct -> count, for the coverage test
        self.flags = list(flags)

    def note(self, what: str) -> None:
        self.used[what] = self.used.get(what, 0) + 1

    def leaf(self, ty: Ty) -> Expr:
        rng = self.rng
        if ty == Ty(1) and rng.random() < 0.3:
            self.note("bool as bit")
            return Bit(self.cond(1))
        same = [v for v in self.names if v.ty == ty]
        if same and rng.random() < 0.6:
            return rng.choice(same)
        if self.names and rng.random() < 0.7:
            v = rng.choice(self.names)
            if v.ty != ty:
                self.note("cast")
            return convert(v, ty)
        return self.const(ty)

    def const(self, ty: Ty) -> Const:
        return Const(width_value(self.rng, ty.width), ty)

    def expr(self, ty: Ty, depth: int = 3) -> Expr:
        rng = self.rng
        if depth <= 0 or rng.random() < 0.2:
            return self.leaf(ty)
        kind = rng.choice(["bin", "bin", "bin", "shift", "unary", "slice", "concat", "cast",
                           "mux", "sat"])
        return getattr(self, "_" + kind)(ty, depth - 1)

    def _bin(self, ty: Ty, depth: int) -> Expr:
        op = self.rng.choice(["+", "-", "*", "&", "|", "^"])
        self.note("op" + op)
        return Bin(op, self.expr(ty, depth), self.expr(ty, depth))

    def _sat(self, ty: Ty, depth: int) -> Expr:
        op = self.rng.choice(["|+|", "|-|"])
        self.note("saturating")
        return Sat(op, self.expr(ty, depth), self.expr(ty, depth))

    def _shift(self, ty: Ty, depth: int) -> Expr:
        rng = self.rng
        op = rng.choice(["<<", ">>"])
        self.note("op" + op)
        if rng.random() < 0.5:
            amount: Expr = Const(rng.randint(0, ty.width + 2) if ty.width < 62 else
                                 rng.randint(0, 63), Ty(8))
        else:
            # A constant amount such as (7w3 - 7w5) folds to 126, wrapped
            # to its width, as does a constant stack index.
            amount = self.expr(Ty(rng.choice([3, 5, 7, 8, 16])), depth)
        return Shift(op, self.expr(ty, depth), amount)

    def _unary(self, ty: Ty, depth: int) -> Expr:
        op = self.rng.choice(["~", "-"])
        self.note("unary" + op)
        return Unary(op, self.expr(ty, depth))

    def _slice(self, ty: Ty, depth: int) -> Expr:
        if ty.signed or ty.width >= MAX_WIDTH:
            return self._bin(ty, depth)
        rng = self.rng
        src_w = rng.randint(ty.width, MAX_WIDTH)
        lo = rng.randint(0, src_w - ty.width)
        self.note("slice")
        return Slice(self.expr(Ty(src_w), depth), lo + ty.width - 1, lo)

    def _concat(self, ty: Ty, depth: int) -> Expr:
        if ty.signed or ty.width < 2:
            return self._bin(ty, depth)
        left = self.rng.randint(1, ty.width - 1)
        self.note("concat")
        return Concat(self.expr(Ty(left), depth), self.expr(Ty(ty.width - left), depth))

    def _cast(self, ty: Ty, depth: int) -> Expr:
        rng = self.rng
        signed = rng.random() < 0.25 and ty.width > 1
        src = Ty(random_width(rng, 2 if signed else 1), signed)
        self.note("cast")
        return convert(self.expr(src, depth), ty)

    def _mux(self, ty: Ty, depth: int) -> Expr:
        self.note("mux")
        return Mux(self.cond(depth), self.expr(ty, depth), self.expr(ty, depth))

    def cond(self, depth: int = 2) -> Expr:
        """A boolean: mostly a comparison of two expressions of one random
        type, else a flag, or conditions joined by ``&&``, ``||``, ``!``."""
        rng = self.rng
        pick = rng.random()
        if pick < 0.12 and self.flags:
            self.note("bool read")
            return rng.choice(self.flags)
        if pick < 0.24 and depth > 0:
            op = rng.choice(["&&", "||"])
            self.note("op" + op)
            return Logic(op, self.cond(depth - 1), self.cond(depth - 1))
        if pick < 0.3 and depth > 0:
            self.note("op!")
            return Not(self.cond(depth - 1))
        return self.compare(depth)

    def compare(self, depth: int) -> Cmp:
        rng = self.rng
        ty = rng.choice([v.ty for v in self.names]) if self.names and rng.random() < 0.7 \
            else Ty(random_width(rng))
        op = rng.choice(["==", "!=", "<", "<=", ">", ">="])
        self.note("compare")
        if ty.signed:
            self.note("signed compare")
        return Cmp(op, self.expr(ty, depth - 1), self.expr(ty, depth - 1))
