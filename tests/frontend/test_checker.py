"""The checking pass on its own: each family of name and type rules
accepts a well-typed program and rejects an ill-typed neighbour at the
line at fault, before any code is generated; every program of p4c's
error corpus that parses is rejected by it."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.errors import IntbedError, P4SyntaxError
from dataplane.compiler.check import check_program
from dataplane.compiler.check.exprs import ActionRunT, ApplyResultT
from dataplane.compiler.codegen.generator import CodeGen
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.direct_calls import instantiate_direct_calls
from dataplane.compiler.frontend.parser import parse_file
from dataplane.compiler.frontend.types import (
    BitT,
    BlockT,
    BoolT,
    IntT,
    ListT,
    strip,
)
from dataplane.compiler.pipeline import compile_program
from tests.frontend import test_rejections as rejections

# The rejection tests' program, with a 16-bit field beside the 8-bit ones.
TEMPLATE = (rejections.TEMPLATE.replace("bit<8> b; }", "bit<8> b; bit<16> c; }")
            .replace("struct M { bit<8> x; }", "struct M { bit<8> x; bit<16> y; }"))
LINE = rejections.LINE
TABLE = ("action set(bit<8> v) { m.x = v; } "
         "table t { key = { hdr.h.a: KIND; } actions = { set; NoAction; } "
         "default_action = NoAction; ENTRIES } ")


def program(select: str = "default: accept;", local: str = "", apply: str = "") -> str:
    return TEMPLATE.replace("SELECT", select).replace("LOCALS", local).replace("APPLY", apply)


def with_function(func: str, **parts: str) -> str:
    """A program with ``func`` declared at top level on line 10 (the lines
    after it move down by one)."""
    return program(**parts).replace("control V(", func + "\ncontrol V(")


def table(kind: str, entries: str = "") -> str:
    return TABLE.replace("KIND", kind).replace("ENTRIES", entries)


def checked(tmp_path: Path, text: str, name: str = "p.p4") -> tuple[ast.Program, object]:
    src = tmp_path / name
    src.write_text(text)
    prog = parse_file(src)
    instantiate_direct_calls(prog)
    return prog, check_program(prog)


# (family, good, bad, where, message)
FAMILIES = [
    ("unknown name",
     program(apply="m.x = hdr.h.a;"), program(apply="m.x = hdr.h.zz;"), "APPLY",
     "Field zz is not a member of h_t"),
    ("declaration before use",
     program(local="bit<8> v = 1; action a() { m.x = v; }"),
     program(local="action a() { m.x = v; } bit<8> v = 1;"), "LOCALS",
     "'v': declaration not found"),
    ("duplicate declaration (a body may shadow a parameter)",
     program(local="bit<8> v; bit<16> w; action a(bit<8> w) { bit<8> v = w; m.x = v; }"),
     program(local="bit<8> v; bit<16> v;"), "LOCALS", "duplicate declaration of 'v'"),
    ("wrong kind of name",
     program(local=table("exact"), apply="t.apply();"),
     program(local=table("exact"), apply="m.x = t;"), "APPLY", "'t' is a table"),
    ("operand widths",
     program(apply="m.x = hdr.h.a + hdr.h.b;"), program(apply="m.x = hdr.h.a + hdr.h.c;"),
     "APPLY", "operands of '+' have different types: bit<8> and bit<16>"),
    ("enums compare only for equality",
     program(apply="if (CloneType.I2E == CloneType.E2E) { m.x = 1; }"),
     program(apply="if (CloneType.I2E < CloneType.E2E) { m.x = 1; }"), "APPLY",
     "'<' is not defined on CloneType"),
    ("bool operands",
     program(apply="if (hdr.h.a == 1 && hdr.h.isValid()) { m.x = 1; }"),
     program(apply="if (hdr.h.a && true) { m.x = 1; }"), "APPLY", "'&&' needs bool operands"),
    ("implicit width change",
     program(apply="m.y = (bit<16>)hdr.h.a;"), program(apply="m.y = hdr.h.a;"), "APPLY",
     "cannot assign a value of type bit<8> to bit<16>"),
    ("cast rules",
     program(apply="bool b = (bool)hdr.h.a[0:0]; m.x = (bit<8>)(bit<1>)b;"),
     program(apply="bool b = (bool)hdr.h.a;"), "APPLY", "cannot cast bit<8> to bool"),
    ("slice bounds",
     program(apply="m.x = hdr.h.c[15:8];"), program(apply="m.x = hdr.h.c[16:9];"), "APPLY",
     "slice [16:9] out of range for bit<16>"),
    ("assignment to an in parameter",
     program(local="action a(in bit<8> v) { m.x = v; }"),
     program(local="action a(in bit<8> v) { v = 1; }"), "LOCALS", "read-only"),
    ("out argument is an l-value",
     program(local="action a(out bit<8> v) { v = 1; }", apply="a(m.x);"),
     program(local="action a(out bit<8> v) { v = 1; }", apply="a(8w1);"), "APPLY",
     "argument for out parameter 'v' is not assignable"),
    ("argument count",
     program(local="action a(bit<8> v, bit<8> w) { m.x = v + w; }", apply="a(1, 2);"),
     program(local="action a(bit<8> v, bit<8> w) { m.x = v + w; }", apply="a(1);"), "APPLY",
     "No argument supplied for w"),
    ("argument name",
     program(local="action a(bit<8> v) { m.x = v; }", apply="a(v = 1);"),
     program(local="action a(bit<8> v) { m.x = v; }", apply="a(q = 1);"), "APPLY",
     "no parameter named 'q'"),
    ("argument type",
     program(local="action a(bit<8> v) { m.x = v; }", apply="a(hdr.h.b);"),
     program(local="action a(bit<8> v) { m.x = v; }", apply="a(hdr.h.c);"), "APPLY",
     "cannot assign a value of type bit<16> to bit<8>"),
    ("extern constructor arguments",
     program(local="counter(32w4, CounterType.packets) c;"),
     program(local="counter(32w4, MeterType.packets) c;"), "LOCALS",
     "cannot use a value of type MeterType as CounterType"),
    ("width of a generic argument",
     program(apply="hash(m.y, HashAlgorithm.crc16, 16w0, {hdr.h.a}, 16w0xffff);"),
     program(apply="hash(m.y, HashAlgorithm.crc16, 16w0, {hdr.h.a}, 0xffff);"), "APPLY",
     "could not infer a width"),
    ("one type per type variable",
     program(apply="random(m.x, 8w0, 255);"), program(apply="random(m.x, 16w0, 16w255);"),
     "APPLY", "cannot assign a value of type bit<16> to bit<8>"),
    ("constant division by zero",
     program(apply="m.x = hdr.h.a / 8w2;"), program(apply="m.x = hdr.h.a / 8w0;"), "APPLY",
     "division by zero"),
    ("return placement",
     with_function("bit<8> f(in bit<8> v) { return v + 1; }", apply="m.x = f(hdr.h.a);"),
     program(local="action a() { return 8w1; }"), "LOCALS", "return with a value"),
    ("return type",
     with_function("bit<8> f(in bit<8> v) { return v + 1; }"),
     with_function("bit<8> f(in bit<8> v) { return true; }"), 10,
     "cannot use a bool as bit<8>"),
    ("a generic function's body, per call",
     with_function("T twice<T>(in T x) { return x + x; }", apply="m.x = twice(hdr.h.a);"),
     with_function("T neg<T>(in T x) { return !x; }", apply="m.x = neg(hdr.h.a);"), 10,
     "'!' needs a bool, not bit<8>"),
    ("exit placement",
     program(local="action a() { exit; }"),
     with_function("bit<8> f(in bit<8> v) { exit; return v; }"), 10,
     "exit is not allowed in a function"),
    ("condition type",
     program(apply="if (hdr.h.a == 0) { m.x = 1; }"),
     program(apply="if (hdr.h.a) { m.x = 1; }"), "APPLY", "a condition must be bool"),
    ("switch labels are the table's actions",
     program(local=table("exact"), apply="switch (t.apply().action_run) { set: { } }"),
     program(local=table("exact") + "action other() { }",
             apply="switch (t.apply().action_run) { other: { } }"), "APPLY",
     "other is not a legal label"),
    ("select label type",
     program(select="8w1: next; default: accept;"),
     program(select="16w1: next; default: accept;"), "SELECT",
     "cannot assign a value of type bit<16> to bit<8>"),
    ("select label is known at compile time",
     program(select="8w1 &&& 8w3: next; default: accept;"),
     program(select="hdr.h.b: next; default: accept;"), "SELECT", "compile-time known"),
    ("entry key count",
     program(local=table("exact", "const entries = { 1: set(2); }")),
     program(local=table("exact", "const entries = { (1, 2): set(2); }")), "LOCALS",
     "this entry has 2 key value(s); table t has 1 key(s)"),
    ("entry action is listed",
     program(local=table("exact", "const entries = { 1: NoAction(); }")),
     program(local="action z() { } " + table("exact", "const entries = { 1: z(); }")),
     "LOCALS", "action 'z' is not in the actions of table t"),
    ("entry action arguments",
     program(local=table("exact", "const entries = { 1: set(2); }")),
     program(local=table("exact", "const entries = { 1: set(); }")), "LOCALS",
     "needs 1 control-plane argument(s), got 0"),
    ("entry action arguments are constants",
     program(local="const bit<8> k = 7; " + table("exact", "const entries = { 1: set(k); }")),
     program(local=table("exact", "const entries = { 1: set(hdr.h.b); }")), "LOCALS",
     "must be a compile-time constant"),
    ("lpm mask is a prefix",
     program(local=table("lpm", "const entries = { 8w1 &&& 8w0xf0: set(2); }")),
     program(local=table("lpm", "const entries = { 8w1 &&& 8w0x0f: set(2); }")), "LOCALS",
     "not a prefix of 8 bits"),
    ("match kind",
     program(local=table("ternary")), program(local=table("fuzzy")), "LOCALS",
     "'fuzzy' is not a match kind"),
    ("control-plane names",
     program(local='@name(".one") action a1() { } @name(".two") action a2() { } '
                   "table u { actions = { a1; a2; } } ", apply="u.apply();"),
     program(local='@name(".one") action a1() { } @name(".one") action a2() { } '
                   "table u { actions = { a1; a2; } } ", apply="u.apply();"), "LOCALS",
     "two actions have the control-plane name 'one'"),
    ("BMv2's one lpm key",
     program(local="table u { key = { hdr.h.a: lpm; hdr.h.b: ternary; } actions = { } } "),
     program(local="table u { key = { hdr.h.a: lpm; hdr.h.b: lpm; } actions = { } } "),
     "LOCALS", "table 'u' with 2 lpm keys"),
    ("transition targets",
     program(select="8w1: next; default: reject;"),
     program(select="8w1: nowhere; default: accept;"), "SELECT",
     "nowhere: no such parser state"),
    ("BMv2's match kinds",
     with_function("match_kind { fancy }", local=table("ternary")),
     with_function("match_kind { fancy }", local=table("fancy")), LINE["LOCALS"] + 1,
     "match kind 'fancy' (BMv2 matches"),
    ("BMv2's hash algorithms, also through a constant",
     program(local="const HashAlgorithm a = HashAlgorithm.crc16;",
             apply="hash(m.y, a, 16w0, {hdr.h.a}, 16w8);"),
     program(local="const HashAlgorithm a = HashAlgorithm.random;",
             apply="hash(m.y, a, 16w0, {hdr.h.a}, 16w8);"), "APPLY",
     "HashAlgorithm.random (BMv2 refuses to load it)"),
    ("constant initialiser",
     program(local="const bit<8> k = 3 + 4;"), program(local="const bit<8> k = hdr.h.a;"),
     "LOCALS", "not a compile-time known value"),
]


@pytest.mark.parametrize(("family", "good", "bad", "where", "message"), FAMILIES,
                         ids=[f[0] for f in FAMILIES])
def test_checker_accepts_and_rejects(tmp_path: Path, family: str, good: str, bad: str,
                                     where: str | int, message: str) -> None:
    checked(tmp_path, good, "good.p4")
    with pytest.raises(IntbedError) as err:
        checked(tmp_path, bad, "bad.p4")
    assert message in err.value.message
    assert err.value.loc is not None and err.value.loc.file.endswith("bad.p4")
    assert err.value.loc.line == (LINE[where] if isinstance(where, str) else where)


def test_types_are_recorded_on_the_tree(tmp_path: Path) -> None:
    """Code generation may read an expression's type instead of deriving it."""
    prog, facts = checked(tmp_path, program(apply="if (hdr.h.a + 1 == 2) { m.y = 3; }"))
    ingress = next(d for d in prog.decls if isinstance(d, ast.ControlDecl) and d.name == "I")
    stmt = ingress.body.stmts[0]
    assert isinstance(stmt, ast.If) and isinstance(stmt.cond, ast.Binary)
    assert facts.type_of(stmt.cond) == BoolT()  # type: ignore[attr-defined]
    assert facts.type_of(stmt.cond.left) == BitT(8)  # type: ignore[attr-defined]
    assert facts.symbol_of(stmt.cond.left.left.expr.expr).decl.name == "hdr"  # type: ignore


CORPUS = (Path(__file__).resolve().parents[2] / ".." / "shared" / "p4-frontend").resolve()


def _error_programs() -> list[Path]:
    return sorted(p for d in ("p4_16_errors", "p4_16_bmv_errors")
                  for p in (CORPUS / d).glob("*.p4"))


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"p4c's error corpus is not at {CORPUS}")
@pytest.mark.parametrize("path", _error_programs(), ids=lambda p: p.name)
def test_error_corpus_is_rejected_before_code_generation(path: Path) -> None:
    try:
        prog = parse_file(path)
    except P4SyntaxError as e:
        assert e.loc is not None and e.loc.line > 0
        return
    instantiate_direct_calls(prog)
    with pytest.raises(IntbedError) as err:
        check_program(prog)
    assert err.value.loc is not None and err.value.loc.line > 0
    assert Path(err.value.loc.file).name == path.name


P4SRC = sorted((Path(__file__).parents[2] / "p4src").glob("*.p4"))


def _type_name(t: object) -> str:
    """Types compared by what they print as: the two stages build their
    own enum and table-result objects, equal by name."""
    return str(strip(t))  # type: ignore[arg-type]


@pytest.mark.parametrize("path", P4SRC, ids=lambda p: p.name)
def test_checked_types_are_the_types_code_generation_finds(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every value code generation evaluates that the checker typed has
    the same type there (an unsized int may take a width from context)."""
    seen: list[tuple[str, str, str]] = []
    evaluate = CodeGen.ev

    def ev(self: CodeGen, e: ast.Expr, want: object = None) -> object:
        v = evaluate(self, e, want)  # type: ignore[arg-type]
        checked = self.facts.type_of(e)
        t = strip(checked) if checked is not None else None
        if t is not None and not isinstance(t, IntT | ApplyResultT | ActionRunT | ListT |
                                            BlockT) and str(t) != "anonymous":
            seen.append((_type_name(checked), _type_name(v.type), str(e.loc)))
        return v

    monkeypatch.setattr(CodeGen, "ev", ev)
    prog = parse_file(path)
    compile_program(prog, path)
    assert len(seen) > 50
    assert [s for s in seen if s[0] != s[1]] == []


def test_a_broken_guarantee_is_an_internal_error_naming_the_construct(tmp_path: Path) -> None:
    """Code generation assumes what the checker established; a program that
    reaches it ill-typed anyway (here: the tree changed after checking) is
    reported as a compiler bug, not as the program's fault."""
    prog, facts = checked(tmp_path, program(apply="m.x = (bit<8>)(bit<1>)(!(hdr.h.a == 1));"))
    ingress = next(d for d in prog.decls if isinstance(d, ast.ControlDecl) and d.name == "I")
    assign = ingress.body.stmts[0]
    assert isinstance(assign, ast.Assign)
    negation = assign.rhs.expr.expr  # type: ignore[attr-defined]
    assert isinstance(negation, ast.Unary) and isinstance(negation.expr, ast.Binary)
    negation.expr = negation.expr.left  # '!' on hdr.h.a, a bit<8> the checker typed
    with pytest.raises(RuntimeError, match=r"'!' needs a bool, not bit<8>, which the checking "
                                           r"pass should have refused"):
        CodeGen(prog, facts).generate()  # type: ignore[arg-type]


def test_a_conversion_the_checker_allowed_is_assumed(tmp_path: Path) -> None:
    """The same for an assignment the checker converted: given a wider
    target after checking, code generation calls its refusal a bug."""
    prog, facts = checked(tmp_path, program(apply="m.x = hdr.h.a;"))
    ingress = next(d for d in prog.decls if isinstance(d, ast.ControlDecl) and d.name == "I")
    assign = ingress.body.stmts[0]
    assert isinstance(assign, ast.Assign) and isinstance(assign.lhs, ast.Member)
    assign.lhs = ast.Member(assign.lhs.expr, "y", loc=assign.lhs.loc)  # m.y is a bit<16>
    with pytest.raises(RuntimeError, match=r"cannot assign a value of type bit<8> to bit<16>"):
        CodeGen(prog, facts).generate()  # type: ignore[arg-type]


def test_an_assignment_target_the_checker_allowed_is_assumed(tmp_path: Path) -> None:
    """And for a target the checker found writable, renamed after checking
    to an action."""
    prog, facts = checked(tmp_path, program(local="action b() { }", apply="bit<8> z = 0; z = 1;"))
    ingress = next(d for d in prog.decls if isinstance(d, ast.ControlDecl) and d.name == "I")
    assign = ingress.body.stmts[1]
    assert isinstance(assign, ast.Assign) and isinstance(assign.lhs, ast.Name)
    assign.lhs.name = "b"
    with pytest.raises(RuntimeError, match=r"cannot assign to 'b', which the checking pass"):
        CodeGen(prog, facts).generate()  # type: ignore[arg-type]
