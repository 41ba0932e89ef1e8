"""The P4-16 parser: cpp, grammar, AST shapes, locations and syntax errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from common.errors import Loc, P4SyntaxError, P4UnsupportedError
from common.paths import PACKAGE_ROOT, shared_dir
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.parser import parse_file, parse_text
from dataplane.compiler.frontend.preprocess import builtin_include_dir, preprocess

SAMPLES = shared_dir() / "p4-conformance" / "samples"
SAMPLE_FILES = sorted(SAMPLES.glob("*.p4")) if SAMPLES.is_dir() else []


def parse(src: str, name: str = "t.p4") -> ast.Program:
    return parse_text(src, name)


def decl(src: str, kind: type, name: str | None = None) -> ast.Decl:
    """The first declaration of class ``kind`` (and ``name``) in ``src``."""
    for d in parse(src).decls:
        if isinstance(d, kind) and (name is None or d.name == name):
            return d
    raise AssertionError(f"no {kind.__name__} {name or ''} in program")


def sx(n: object) -> str:
    """A compact s-expression of an expression tree, for exact comparisons."""
    match n:
        case ast.IntLit(value=v, width=None):
            return str(v)
        case ast.IntLit(value=v, width=w, signed=s):
            return f"{w}{'s' if s else 'w'}{v}"
        case ast.BoolLit(value=v):
            return "true" if v else "false"
        case ast.StringLit(value=v):
            return f'"{v}"'
        case ast.Name(name=nm, absolute=a):
            return ("." if a else "") + nm
        case ast.Member(expr=e, name=nm):
            return f"{sx(e)}.{nm}"
        case ast.TypeMember(type=t, name=nm):
            return f"{sx(t)}.{nm}"
        case ast.Index(expr=e, index=i):
            return f"{sx(e)}[{sx(i)}]"
        case ast.Slice(expr=e, hi=h, lo=lo):
            return f"{sx(e)}[{sx(h)}:{sx(lo)}]"
        case ast.Unary(op=op, expr=e):
            return f"({op} {sx(e)})"
        case ast.Binary(op=op, left=a, right=b):
            return f"({op} {sx(a)} {sx(b)})"
        case ast.Mux(cond=c, then=t, other=o):
            return f"(? {sx(c)} {sx(t)} {sx(o)})"
        case ast.Cast(type=t, expr=e):
            return f"(cast {sx(t)} {sx(e)})"
        case ast.Call(func=f, args=args, type_args=targs):
            targ = f"<{', '.join(sx(t) for t in targs)}>" if targs else ""
            return f"{sx(f)}{targ}({', '.join(sx(a) for a in args)})"
        case ast.Arg(value=v, name=None):
            return sx(v)
        case ast.Arg(value=v, name=nm):
            return f"{nm}={sx(v)}"
        case ast.ListExpr(elems=es):
            return "{" + ", ".join(sx(e) for e in es) + "}"
        case ast.StructExpr(fields=fs):
            return "{" + ", ".join(f"{k}={sx(v)}" for k, v in fs) + "}"
        case ast.DontCare():
            return "_"
        case ast.Default():
            return "default"
        case ast.InvalidHeader():
            return "{#}"
        case ast.Mask(value=v, mask=m):
            return f"({sx(v)} &&& {sx(m)})"
        case ast.Range(lo=lo, hi=hi):
            return f"({sx(lo)} .. {sx(hi)})"
        case ast.Keyset(elems=es):
            return "(" + ", ".join(sx(e) for e in es) + ")"
        case ast.BitType(width=w, signed=s):
            return f"{'int' if s else 'bit'}<{sx(w)}>"
        case ast.VarbitType(width=w):
            return f"varbit<{sx(w)}>"
        case ast.IntType():
            return "int"
        case ast.BoolType():
            return "bool"
        case ast.StringType():
            return "string"
        case ast.VoidType():
            return "void"
        case ast.DontCareType():
            return "_"
        case ast.TypeName(name=nm, absolute=a):
            return ("." if a else "") + nm
        case ast.SpecializedType(base=b, args=args):
            return f"{sx(b)}<{', '.join(sx(a) for a in args)}>"
        case ast.TupleType(elems=es):
            return f"tuple<{', '.join(sx(e) for e in es)}>"
        case ast.StackType(elem=e, size=s):
            return f"{sx(e)}[{sx(s)}]"
    raise AssertionError(f"no s-expression for {n!r}")


def expr(text: str, prelude: str = "") -> ast.Expr:
    """Parse ``text`` as the initializer of a constant."""
    prog = parse(prelude + f"const bit<8> __e = {text};")
    return prog.decls[-1].value


def stmts(body: str, prelude: str = "") -> list[ast.Stmt]:
    """Parse statements as the body of an action."""
    prog = parse(prelude + "action a() {" + body + "}")
    return prog.decls[-1].body.stmts


# ------------------------------------------------------------ conformance


@pytest.mark.skipif(not SAMPLE_FILES, reason="../shared/p4-conformance/samples is not present")
@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_every_conformance_sample_parses(path: Path) -> None:
    program = parse_file(path, include_dirs=[SAMPLES])
    if "#include <v1model.p4>" in path.read_text():
        # A whole program: v1model's package and the sample's `main` are there.
        names = {d.name for d in program.decls}
        assert "V1Switch" in names
        main = program.decls[-1]
        assert isinstance(main, ast.Instantiation) and main.name == "main"
        assert Path(main.loc.file).parent == path.parent


# ------------------------------------------------------------ preprocess


def test_preprocess_uses_defines_include_dirs_and_keeps_markers(tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "w.p4").write_text("const bit<8> W = WIDTH;\n")
    main = tmp_path / "m.p4"
    main.write_text('#include <w.p4>\n#include "local.p4"\n')
    (tmp_path / "local.p4").write_text("// comment kept\nconst bit<8> L = 1;\n")
    text = preprocess(main, [inc], {"WIDTH": "7"})
    assert "const bit<8> W = 7;" in text
    assert "// comment kept" in text  # -C, as p4c runs cpp
    assert f'# 1 "{inc}/w.p4"' in text
    prog = parse_file(main, [inc], {"WIDTH": "7"})
    w, local = prog.decls
    assert (w.name, w.value.value, w.loc) == ("W", 7, Loc(f"{inc}/w.p4", 1, 14))
    assert local.loc == Loc(f"{tmp_path}/local.p4", 2, 14)


def test_builtin_include_dir_holds_core_and_v1model() -> None:
    assert builtin_include_dir() == PACKAGE_ROOT / (
        "dataplane/compiler/frontend/p4include"
    )
    assert (builtin_include_dir() / "core.p4").is_file()
    assert (builtin_include_dir() / "v1model.p4").is_file()


def test_missing_include_is_a_located_syntax_error(tmp_path: Path) -> None:
    main = tmp_path / "m.p4"
    main.write_text('\n#include "nothere.p4"\n')
    with pytest.raises(P4SyntaxError) as info:
        preprocess(main)
    assert info.value.loc == Loc(str(main), 2, 10)
    assert "nothere.p4" in info.value.message


def test_cpp_error_directive_is_located(tmp_path: Path) -> None:
    main = tmp_path / "m.p4"
    main.write_text("\n\n#error stop here\n")
    with pytest.raises(P4SyntaxError) as info:
        parse_file(main)
    assert str(info.value) == f"{main}:3:2: error: #error stop here"


def test_missing_source_file() -> None:
    with pytest.raises(P4SyntaxError, match="cannot open P4 source file"):
        preprocess(Path("/nonexistent/x.p4"))


# ------------------------------------------------------------- locations


def test_locations_follow_line_markers() -> None:
    src = (
        '# 1 "main.p4"\n'
        "\n"
        '# 1 "lib.p4" 1\n'
        "typedef bit<8> T;\n"
        '# 3 "main.p4" 2\n'
        "   const T c = 1;\n"
        '#line 40 "other.p4"\n'
        "header h { T f; }\n"
    )
    t, c, h = parse(src, "ignored.p4").decls
    assert t.loc == Loc("lib.p4", 1, 16)
    assert t.type.loc == Loc("lib.p4", 1, 9)
    assert c.loc == Loc("main.p4", 3, 12)
    assert c.type.loc == Loc("main.p4", 3, 10)
    assert c.value.loc == Loc("main.p4", 3, 16)
    assert h.loc == Loc("other.p4", 40, 8)
    assert h.fields[0].loc == Loc("other.p4", 40, 14)


def test_location_is_tracked_across_comments_and_multiline_tokens() -> None:
    lines = [
        "/* a",
        "   b */ const bit<8> a = 1;",
        '@name("x",',
        '  "y") // trailing',
        "const bit<8> b = 2;",
    ]
    src = "\n".join(lines) + "\n"
    a, b = parse(src, "c.p4").decls
    assert a.loc == Loc("c.p4", 2, 22)
    assert b.loc == Loc("c.p4", 5, 14)
    ann = b.annotations[0]
    assert ann.loc == Loc("c.p4", 3, 1)
    assert [(x.value, x.loc) for x in ann.args] == [
        ("x", Loc("c.p4", 3, 7)),
        ("y", Loc("c.p4", 4, 3)),
    ]


def test_columns_are_those_of_the_original_file_despite_cpp(tmp_path: Path) -> None:
    # cpp squeezes runs of blanks between tokens; columns must not move.
    main = tmp_path / "m.p4"
    main.write_text("typedef   bit<8>      T;\nconst  T   c =    1;\n")
    assert "typedef bit<8> T;" in preprocess(main)
    t, c = parse_file(main).decls
    assert t.loc == Loc(str(main), 1, 23)
    assert t.type.loc == Loc(str(main), 1, 11)
    assert (c.loc, c.value.loc) == (Loc(str(main), 2, 12), Loc(str(main), 2, 19))


# ------------------------------------------------------------ expressions

PRECEDENCE = [
    ("a + b * c", "(+ a (* b c))"),
    ("a * b + c", "(+ (* a b) c)"),
    ("a - b - c", "(- (- a b) c)"),
    ("a ++ b + c", "(+ (++ a b) c)"),  # ++ is at the level of + (spec "Expressions")
    ("a + b ++ c", "(++ (+ a b) c)"),
    ("a |+| b |-| c * d", "(|-| (|+| a b) (* c d))"),
    ("a << 2 + 1", "(<< a (+ 2 1))"),
    ("a >> 1 >> 2", "(>> (>> a 1) 2)"),
    ("a & b << 1", "(& a (<< b 1))"),
    ("a | b ^ c & d", "(| a (^ b (& c d)))"),
    ("a < b | c", "(< a (| b c))"),  # bitwise binds tighter than relations
    ("a == b < c", "(== a (< b c))"),
    ("a != b && c == d", "(&& (!= a b) (== c d))"),
    ("a || b && c", "(|| a (&& b c))"),
    ("a ? b : c ? d : e", "(? a b (? c d e))"),
    ("a || b ? c : d", "(? (|| a b) c d)"),
    ("-a * b", "(* (- a) b)"),
    ("!a && ~b == c", "(&& (! a) (== (~ b) c))"),
    ("- -a", "(- (- a))"),
    ("+a.b[1]", "(+ a.b[1])"),
    ("(bit<8>) a + b", "(+ (cast bit<8> a) b)"),
    ("(bit<8>) (a + b)", "(cast bit<8> (+ a b))"),
    ("(a + b) * c", "(* (+ a b) c)"),
    ("a[7:4] ++ b[3:0]", "(++ a[7:4] b[3:0])"),
    ("a > b", "(> a b)"),
    ("a >= b && a <= c", "(&& (>= a b) (<= a c))"),
    ("x.y.z[0].w", "x.y.z[0].w"),
]


@pytest.mark.parametrize(("text", "tree"), PRECEDENCE)
def test_expression_precedence(text: str, tree: str) -> None:
    assert sx(expr(text)) == tree


# Binary operators by precedence level, loosest first (spec "Expressions", p4c's parser).
LEVELS = [["||"], ["&&"], ["==", "!="], ["<", ">", "<=", ">="], ["|"], ["^"], ["&"],
          ["<<", ">>"], ["+", "-", "|+|", "|-|", "++"], ["*", "/", "%"]]  # fmt: skip
PREC = {op: level + 2 for level, ops in enumerate(LEVELS) for op in ops}  # ?: is 1
UNARY = 2 + len(LEVELS)


def _render(node: ast.Expr, need: int = 0) -> str:
    """P4 text for ``node`` with only the parentheses precedence requires."""
    if isinstance(node, ast.Binary):
        p = PREC[node.op]
        text = f"{_render(node.left, p)} {node.op} {_render(node.right, p + 1)}"
    elif isinstance(node, ast.Unary):
        p = UNARY
        text = f"{node.op} {_render(node.expr, UNARY)}"
    elif isinstance(node, ast.Mux):
        p = 1
        cond, then, other = (_render(node.cond, 2), _render(node.then), _render(node.other, 1))
        text = f"{cond} ? {then} : {other}"
    else:
        return sx(node)
    return f"({text})" if p < need else text


_leaves = st.one_of(
    st.sampled_from("abcde").map(ast.Name),
    st.integers(0, 99).map(ast.IntLit),
)
_exprs = st.recursive(
    _leaves,
    lambda kids: st.one_of(
        st.builds(ast.Binary, st.sampled_from(sorted(PREC)), kids, kids),
        st.builds(ast.Unary, st.sampled_from(["-", "~", "!"]), kids),
        st.builds(ast.Mux, kids, kids, kids),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_exprs)
def test_precedence_round_trip(tree: ast.Expr) -> None:
    # Printing with minimal parentheses and parsing back gives the same tree.
    assert sx(expr(_render(tree))) == sx(tree)


LITERALS = [
    ("5", (5, None, False)),
    ("16w5", (5, 16, False)),
    ("8s3", (3, 8, True)),
    ("0x1F", (31, None, False)),
    ("0X1f", (31, None, False)),
    ("0b1010", (10, None, False)),
    ("0o17", (15, None, False)),
    ("0d099", (99, None, False)),
    ("1_000_000", (1000000, None, False)),
    ("32w0xdead_beef", (0xDEADBEEF, 32, False)),
    ("4s0b11", (3, 4, True)),
    ("8w0o7", (7, 8, False)),
    ("2w0d3", (3, 2, False)),
    ("0w0", (0, 0, False)),  # zero-width is the type checker's business
]


@pytest.mark.parametrize(("text", "value"), LITERALS)
def test_integer_literals(text: str, value: tuple) -> None:
    lit = expr(text)
    assert isinstance(lit, ast.IntLit)
    assert (lit.value, lit.width, lit.signed) == value


def test_negative_signed_literal_is_a_unary_minus() -> None:
    e = expr("-8s3")
    assert isinstance(e, ast.Unary) and e.op == "-"
    assert (e.expr.value, e.expr.width, e.expr.signed) == (3, 8, True)


def test_other_literals_and_primaries() -> None:
    assert sx(expr('"a \\" b"')) == '"a \\" b"'
    assert sx(expr("true && false")) == "(&& true false)"
    assert sx(expr("{#}")) == "{#}"
    assert sx(expr("{a, 1, {b}}")) == "{a, 1, {b}}"
    assert sx(expr("{}")) == "{}"
    assert sx(expr("{f = 1, g = a + 1,}")) == "{f=1, g=(+ a 1)}"
    assert sx(expr("error.NoMatch")) == "error.NoMatch"
    assert sx(expr(".x + y")) == "(+ .x y)"


def test_calls_type_args_named_and_dontcare_arguments() -> None:
    prelude = (
        "extern void f<T>(in T x);\n"
        "extern E { E(); bit<8> get<T>(in T x); }\n"
        "enum Color { Red, Green }\n"
        "typedef bit<8> B;\n"
    )
    assert sx(expr("f<bit<8>>(a)", prelude)) == "f<bit<8>>(a)"
    assert sx(expr("f<tuple<bit<8>, B>>(a)", prelude)) == "f<tuple<bit<8>, B>>(a)"
    assert sx(expr("f(x = 1, y = _)", prelude)) == "f(x=1, y=_)"
    assert sx(expr("f(_, a)", prelude)) == "f(_, a)"
    assert sx(expr("e.get<bit<4>>(a) + 1", prelude)) == "(+ e.get<bit<4>>(a) 1)"
    assert sx(expr("Color.Red", prelude)) == "Color.Red"
    assert sx(expr("(B) a", prelude)) == "(cast B a)"
    assert sx(expr("(B) a < b", prelude)) == "(< (cast B a) b)"
    # A `<` after a name that is not generic stays a comparison...
    assert sx(expr("a < b && c > d", prelude)) == "(&& (< a b) (> c d))"
    assert sx(expr("a < Color.Red", prelude)) == "(< a Color.Red)"
    assert sx(expr("a < error.NoMatch", prelude)) == "(< a error.NoMatch)"
    # ...unless a type follows, as p4c decides after the `<`.
    assert sx(expr("e.other<bit<4>, B>(a)", prelude)) == "e.other<bit<4>, B>(a)"


def test_shift_right_and_closing_type_arguments() -> None:
    prelude = "extern R<T> { R(bit<32> n); }\n"
    prog = parse(prelude + "control c() { R<bit<8>>(4) r; R<bit<(8 >> 1)>>(2) s; apply {} }")
    r, s = prog.decls[-1].locals
    assert sx(r.type) == "R<bit<8>>"
    assert sx(s.type) == "R<bit<(>> 8 1)>>"
    assert sx(expr("a >> 2 > b")) == "(> (>> a 2) b)"
    assert sx(expr("a >>b")) == "(>> a b)"


def test_constructor_call_expressions() -> None:
    prelude = "extern R<T> { R(bit<32> n); }\ncontrol p(); package Pkg(p a);\n"
    prog = parse(prelude + "Pkg(p()) main;\nconst bit<8> x = R<bit<8>>(3);")
    main, x = prog.decls[-2:]
    assert isinstance(main, ast.Instantiation)
    assert sx(main.type) == "Pkg" and [sx(a) for a in main.args] == ["p()"]
    assert sx(x.value) == "R<bit<8>>(3)"


# ------------------------------------------------------------- statements


def test_assignments_and_compound_assignments() -> None:
    ops = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "|+|", "|-|"]
    body = "x = 1;" + "".join(f"x {op}= 2;" for op in ops)
    got = stmts(body)
    assert [s.op for s in got] == [None, *ops]
    assert all(isinstance(s, ast.Assign) and sx(s.lhs) == "x" for s in got)
    assert sx(stmts("h.f[3:0] = 4w1;")[0].lhs) == "h.f[3:0]"


def test_simple_statements_and_declarations_in_blocks() -> None:
    body = (
        "f(); g<bit<8>>(a); ; { bit<8> v = 1; const bit<4> k = 2; }"
        "if (a) exit; else return; return 5;"
    )
    prelude = "extern void g<T>(in T x);\n"
    call, gcall, empty, block, if_, ret = stmts(body, prelude)
    assert isinstance(call, ast.CallStmt) and sx(call.call) == "f()"
    assert sx(gcall.call) == "g<bit<8>>(a)"
    assert isinstance(empty, ast.Empty) and empty.loc == Loc("t.p4", 2, 32)
    v, k = block.stmts
    assert (type(v), v.name, sx(v.type), sx(v.init)) == (ast.VarDecl, "v", "bit<8>", "1")
    assert (type(k), k.name, sx(k.value)) == (ast.ConstDecl, "k", "2")
    assert isinstance(if_.then, ast.Exit) and isinstance(if_.other, ast.Return)
    assert if_.other.value is None and sx(ret.value) == "5"


def test_dangling_else_binds_to_the_nearest_if() -> None:
    (outer,) = stmts("if (a) if (b) x = 1; else x = 2;")
    assert outer.other is None
    assert isinstance(outer.then, ast.If) and outer.then.other is not None


def test_switch_with_fall_through_labels() -> None:
    src = (
        "control c() { table t { actions = { a; b; } } apply {\n"
        "switch (t.apply().action_run) { a: b: { x = 1; } default: { } } } }"
    )
    (sw,) = decl(src, ast.ControlDecl).body.stmts
    assert isinstance(sw, ast.Switch)
    assert sx(sw.expr) == "t.apply().action_run"
    assert [(sx(c.label), c.body is None) for c in sw.cases] == [
        ("a", True),
        ("b", False),
        ("default", False),
    ]
    assert len(sw.cases[1].body.stmts) == 1


def test_for_loops() -> None:
    c_style, typed_in, untyped_in, infinite = stmts(
        "for (bit<8> i = 0, j = 1; i < 4; i = i + 1, j = j << 1) { if (i == 2) { break; } }"
        "for (bit<8> k in 1 .. 5) { continue; }"
        "for (k in coll) ;"
        "for (;;) {}"
    )
    assert isinstance(c_style, ast.For)
    assert [type(s) for s in c_style.init] == [ast.VarDecl, ast.Assign]
    assert sx(c_style.cond) == "(< i 4)"
    assert [sx(s.rhs) for s in c_style.update] == ["(+ i 1)", "(<< j 1)"]
    assert isinstance(c_style.body.stmts[0].then.stmts[0], ast.Break)
    assert isinstance(typed_in, ast.ForIn)
    assert (sx(typed_in.type), typed_in.name) == ("bit<8>", "k")
    assert sx(typed_in.collection) == "(1 .. 5)"
    assert isinstance(typed_in.body.stmts[0], ast.Continue)
    assert (untyped_in.type, untyped_in.name, sx(untyped_in.collection)) == (None, "k", "coll")
    assert (infinite.init, infinite.cond, infinite.update) == ([], None, [])


# ----------------------------------------------------------- declarations


def test_type_declarations() -> None:
    src = (
        "typedef bit<8> T;\n"
        "type bit<32> U;\n"
        "header h<X> { X a; varbit<32> v; T[2] s; }\n"
        "header_union u { h<T> x; }\n"
        "struct s { int<8> i; int j; bool b; error e; string n; tuple<T, bool> t; }\n"
        "enum Color { Red, Green, }\n"
        "enum bit<8> Op { Add = 1, Sub = 8w2 }\n"
        "error { Boom, Bang }\n"
        "match_kind { fuzzy }\n"
    )
    t, u, h, un, s, color, op, err, mk = parse(src).decls
    assert (t.name, sx(t.type), t.newtype) == ("T", "bit<8>", False)
    assert (u.name, u.newtype) == ("U", True)
    assert (h.name, h.type_params) == ("h", ["X"])
    assert [(f.name, sx(f.type)) for f in h.fields] == [
        ("a", "X"),
        ("v", "varbit<32>"),
        ("s", "T[2]"),
    ]
    assert isinstance(un, ast.HeaderUnionDecl) and sx(un.fields[0].type) == "h<T>"
    assert [sx(f.type) for f in s.fields] == [
        "int<8>", "int", "bool", "error", "string", "tuple<T, bool>"
    ]  # fmt: skip
    assert (color.members, color.underlying, color.values) == (["Red", "Green"], None, [None, None])
    assert (op.members, sx(op.underlying), [sx(v) for v in op.values]) == (
        ["Add", "Sub"],
        "bit<8>",
        ["1", "8w2"],
    )
    assert (err.name, err.members) == ("error", ["Boom", "Bang"])
    assert (mk.name, mk.members) == ("match_kind", ["fuzzy"])


def test_typedef_of_a_struct_declaration() -> None:
    st, td = parse("typedef struct P { bit<8> x; } Pt;\nconst Pt p = { x = 1 };").decls[:2]
    assert isinstance(st, ast.StructDecl) and st.name == "P"
    assert (td.name, sx(td.type)) == ("Pt", "P")


def test_extern_declarations() -> None:
    src = (
        "extern Reg<T, I> {\n"
        "    Reg(bit<32> size);\n"
        "    Reg(bit<32> size, T init);\n"
        "    @noSideEffects void read(out T result, in I index);\n"
        "    R peek<R>(in I index);\n"
        "    abstract T update(in T old);\n"
        "}\n"
        "@pure extern void hash<O, D>(out O result, in D data);\n"
        "extern bool check(bool c, string m);\n"
        "extern Fwd;\n"
    )
    reg, hsh, chk = parse(src).decls
    assert (reg.name, reg.type_params) == ("Reg", ["T", "I"])
    ctor1, ctor2, read, peek, upd = reg.methods
    assert (ctor1.name, ctor1.return_type, [p.name for p in ctor2.params]) == (
        "Reg",
        None,
        ["size", "init"],
    )
    assert read.annotations[0].name == "noSideEffects"
    assert [(p.direction, sx(p.type), p.name) for p in read.params] == [
        ("out", "T", "result"),
        ("in", "I", "index"),
    ]
    assert (sx(peek.return_type), peek.type_params) == ("R", ["R"])
    assert upd.abstract and not read.abstract
    assert isinstance(hsh, ast.ExternFunctionDecl)
    assert (hsh.name, hsh.type_params, sx(hsh.return_type)) == ("hash", ["O", "D"], "void")
    assert hsh.annotations[0].name == "pure"
    assert [p.direction for p in chk.params] == ["", ""]


def test_parser_declaration() -> None:
    src = (
        "extern packet_in { void extract<T>(out T hdr); T lookahead<T>(); }\n"
        "header h_t { bit<8> t; }\n"
        "struct H { h_t h; }\n"
        "parser P<M>(packet_in pkt, out H hdr, inout M m)(bit<8> limit) {\n"
        "    value_set<bit<8>>(4) pvs;\n"
        "    bit<8> tmp;\n"
        "    state start {\n"
        "        pkt.extract(hdr.h);\n"
        "        tmp = pkt.lookahead<bit<8>>();\n"
        "        transition select(hdr.h.t, tmp) {\n"
        "            (0x01, _): next;\n"
        "            (0x10 &&& 0xf0, 1 .. 5): accept;\n"
        "            (pvs, default): accept;\n"
        "            default: reject;\n"
        "        }\n"
        "    }\n"
        '    @name("next") state next { transition accept; }\n'
        "    state none { }\n"
        "}\n"
        "parser Q(packet_in pkt);\n"
    )
    p = decl(src, ast.ParserDecl)
    assert (p.name, p.type_params) == ("P", ["M"])
    assert [x.name for x in p.params] == ["pkt", "hdr", "m"]
    assert [x.name for x in p.ctor_params] == ["limit"]
    pvs, tmp = p.locals
    assert isinstance(pvs, ast.ValueSetDecl) and (sx(pvs.type), sx(pvs.size)) == ("bit<8>", "4")
    assert isinstance(tmp, ast.VarDecl)
    start, nxt, none = p.states
    extract, look = start.stmts
    assert sx(extract.call) == "pkt.extract(hdr.h)"
    assert sx(look.rhs) == "pkt.lookahead<bit<8>>()"
    tr = start.transition
    assert [sx(e) for e in tr.select_exprs] == ["hdr.h.t", "tmp"]
    assert [(sx(c.keyset), c.state) for c in tr.cases] == [
        ("(1, _)", "next"),
        ("((16 &&& 240), (1 .. 5))", "accept"),
        ("(pvs, default)", "accept"),
        ("(default)", "reject"),
    ]
    assert nxt.annotations[0].body == '"next"'
    assert nxt.transition.select_exprs == []
    assert [(sx(c.keyset), c.state) for c in nxt.transition.cases] == [("(default)", "accept")]
    assert none.transition is None and none.stmts == []
    q = decl(src, ast.ParserTypeDecl)
    assert (q.name, [x.name for x in q.params]) == ("Q", ["pkt"])


def test_control_with_actions_tables_and_instances() -> None:
    src = (
        "extern counter { counter(bit<32> n, bit<8> kind); void count(in bit<32> i); }\n"
        "extern register<T> { register(bit<32> n); }\n"
        "action NoAction() {}\n"
        "control C(inout bit<8> x)(bool flag) {\n"
        "    counter(32w16, 1) cnt;\n"
        "    register<bit<32>>(16) r;\n"
        "    bit<8> scratch = 3;\n"
        "    const bit<8> K = 1;\n"
        '    @name("C.set") action set(bit<8> v, in bit<8> w) { x = v; }\n'
        "    table t {\n"
        '        key = { x : exact @name("x"); x[3:0] : ternary; }\n'
        "        actions = { set; @defaultonly NoAction; .NoAction; set(7, w = 8); }\n"
        "        const default_action = set(1, 2);\n"
        "        size = 1024;\n"
        "        @hidden const largest_priority_wins = false;\n"
        "        implementation = counter(32w1, 2);\n"
        "        counters = cnt;\n"
        "        const entries = {\n"
        "            (1, 0x10 &&& 0xf0) : set(1, 2);\n"
        "            priority = 10: (2, _) : set(3, 4) @priority(3);\n"
        "            const (default, _) : NoAction();\n"
        "        }\n"
        "    }\n"
        "    apply { if (t.apply().hit) { cnt.count(0); } }\n"
        "}\n"
    )
    c = decl(src, ast.ControlDecl)
    assert [p.name for p in c.ctor_params] == ["flag"]
    cnt, reg, scratch, k, act, tbl = c.locals
    assert (cnt.name, sx(cnt.type), [sx(a) for a in cnt.args]) == ("cnt", "counter", ["32w16", "1"])
    assert (reg.name, sx(reg.type), [sx(a) for a in reg.args]) == (
        "r",
        "register<bit<32>>",
        ["16"],
    )
    assert isinstance(scratch, ast.VarDecl) and isinstance(k, ast.ConstDecl)
    assert (act.name, act.annotations[0].args[0].value) == ("set", "C.set")
    assert [(p.direction, p.name) for p in act.params] == [("", "v"), ("in", "w")]
    assert [(sx(e.expr), e.match_kind) for e in tbl.keys] == [("x", "exact"), ("x[3:0]", "ternary")]
    assert tbl.keys[0].annotations[0].body == '"x"'
    assert [(sx(a.name), [x.name for x in a.annotations]) for a in tbl.actions] == [
        ("set", []),
        ("NoAction", ["defaultonly"]),
        (".NoAction", []),
        ("set", []),
    ]
    assert [sx(a) for a in tbl.actions[3].args] == ["7", "w=8"]
    assert tbl.default_action_const
    assert (sx(tbl.default_action.name), [sx(a) for a in tbl.default_action.args]) == (
        "set",
        ["1", "2"],
    )
    assert [(p.name, p.const, sx(p.value)) for p in tbl.properties] == [
        ("size", False, "1024"),
        ("largest_priority_wins", True, "false"),
        ("implementation", False, "counter(32w1, 2)"),
        ("counters", False, "cnt"),
    ]
    assert tbl.properties[1].annotations[0].name == "hidden"
    assert tbl.entries_const
    e1, e2, e3 = tbl.entries
    assert (sx(e1.keyset), sx(e1.action.name), [sx(a) for a in e1.action.args]) == (
        "(1, (16 &&& 240))",
        "set",
        ["1", "2"],
    )
    assert e1.priority is None and not e1.const
    assert (sx(e2.priority), sx(e2.keyset)) == ("10", "(2, _)")
    assert [(a.name, a.body, sx(a.args[0])) for a in e2.annotations] == [("priority", "3", "3")]
    assert e3.const and sx(e3.keyset) == "(default, _)"
    (if_,) = c.body.stmts
    assert sx(if_.cond) == "t.apply().hit"


def test_top_level_instantiation_with_nested_constructor_calls() -> None:
    src = (
        "parser P(); control I(); control E();\n"
        "package Sw(P p, I i, E e);\n"
        "parser MyP() { state start { transition accept; } }\n"
        "control MyI() { apply {} } control MyE() { apply {} }\n"
        "Sw(MyP(), MyI(), MyE()) main;\n"
    )
    main = parse(src).decls[-1]
    assert isinstance(main, ast.Instantiation)
    assert (main.name, sx(main.type)) == ("main", "Sw")
    assert [sx(a) for a in main.args] == ["MyP()", "MyI()", "MyE()"]
    pkg = decl(src, ast.PackageTypeDecl)
    assert [sx(p.type) for p in pkg.params] == ["P", "I", "E"]


def test_functions() -> None:
    src = (
        "bit<8> max(in bit<8> a, in bit<8> b) { return a > b ? a : b; }\n"
        "T id<T>(in T x) { return x; }\n"
        "const bit<8> m = max(1, 2);\n"
    )
    mx, ident, m = parse(src).decls
    assert isinstance(mx, ast.FunctionDecl) and sx(mx.return_type) == "bit<8>"
    assert sx(mx.body.stmts[0].value) == "(? (> a b) a b)"
    assert (ident.type_params, sx(ident.return_type), sx(ident.params[0].type)) == (
        ["T"],
        "T",
        "T",
    )
    assert sx(m.value) == "max(1, 2)"


def test_annotations_keep_raw_bodies() -> None:
    src = (
        '@name(".a.b") @hidden @pragma  my_pragma 1 "two" three\n'
        '@structured[k = 1, j = "x"] @expr(1 + 2, x) @nested((a, (b)))\n'
        '@tc_type("macaddr")\n'
        "const bit<8> x = 1;\n"
    )
    (x,) = parse(src).decls
    got = [(a.name, a.body, [sx(v) for v in a.args]) for a in x.annotations]
    assert got == [
        ("name", '".a.b"', ['".a.b"']),
        ("hidden", None, []),
        ("my_pragma", '1 "two" three', []),
        ("structured", 'k = 1, j = "x"', []),
        ("expr", "1 + 2, x", ["(+ 1 2)", "x"]),
        ("nested", "(a, (b))", []),
        ("tc_type", '"macaddr"', ['"macaddr"']),
    ]


def test_annotations_on_parameters_fields_blocks_and_params() -> None:
    src = (
        "header h { @field_list(1) bit<8> a; }\n"
        "control c(@optional in bit<8> p) { apply @atomic { } }\n"
    )
    h, c = parse(src).decls
    assert h.fields[0].annotations[0].name == "field_list"
    assert c.params[0].annotations[0].name == "optional"
    assert c.body.annotations[0].name == "atomic"


# ---------------------------------------------------- type names vs values


def test_type_parameters_are_scoped_to_their_declaration() -> None:
    src = (
        "control Ctl<H>(inout H hdr);\n"
        "const bit<8> H = 3;\n"  # H is a plain name again after Ctl's `;`
        "const bit<8> y = H + 1;\n"
    )
    _, h, y = parse(src).decls
    assert h.name == "H" and sx(y.value) == "(+ H 1)"


def test_parameters_shadow_type_names() -> None:
    src = "typedef bit<8> T;\ncontrol c(inout bit<8> T) { apply { T = 1; } }\n"
    (assign,) = decl(src, ast.ControlDecl).body.stmts
    assert isinstance(assign, ast.Assign) and sx(assign.lhs) == "T"


def test_instantiation_versus_call_statement() -> None:
    src = (
        "extern X { X(bit<8> a); void go(); }\n"
        "extern void y(bit<8> a);\n"
        "control c() { apply { X(1) inst; y(1); inst.go(); } }\n"
    )
    inst, call, go = decl(src, ast.ControlDecl).body.stmts
    assert isinstance(inst, ast.Instantiation) and (inst.name, sx(inst.type)) == ("inst", "X")
    assert isinstance(call, ast.CallStmt) and sx(call.call) == "y(1)"
    assert sx(go.call) == "inst.go()"


# ----------------------------------------------------------- syntax errors

ERRORS = [
    ("control c() { apply { x = 1 } }", "e.p4:1:29: error: syntax error at '}': expected ';'"),
    (
        "control c() { bit<8> x apply { } }",
        "e.p4:1:24: error: syntax error at 'apply': expected ';' or '=' or '['",
    ),
    ("header h { bit<8> a }", "e.p4:1:21: error: syntax error at '}': expected ';' or '['"),
    ("const bit<8> x = ;", "e.p4:1:18: error: syntax error at ';': expected an expression"),
    ("control c() {\n  apply { }", "e.p4:2:11: error: syntax error at end of input: expected '}'"),
    ("struct s { bit<8> $x; }", "e.p4:1:19: error: unexpected character '$'"),
    ("const bit<8> a = 1;\n/* open", "e.p4:2:1: error: unterminated comment"),
    ('const string s = "abc', "e.p4:1:18: error: unterminated string literal"),
    ('@name("x" const bit<8> a = 1;', "e.p4:1:1: error: unterminated annotation @name"),
    (
        "parser p() { state s { return; } }",
        "e.p4:1:24: error: syntax error at 'return'",
    ),
]


@pytest.mark.parametrize(("src", "message"), ERRORS)
def test_syntax_error_messages(src: str, message: str) -> None:
    with pytest.raises(P4SyntaxError) as info:
        parse(src, "e.p4")
    assert str(info.value) == message


def test_syntax_error_names_a_type_name() -> None:
    with pytest.raises(P4SyntaxError) as info:
        parse("typedef bit<8> T;\ncontrol c() { apply { T = 1; } }", "e.p4")
    assert str(info.value).startswith("e.p4:2:25: error: syntax error at '='")


def test_syntax_error_location_follows_markers() -> None:
    src = '# 1 "main.p4"\n# 1 "inc.p4" 1\n\n  const bit<8> = 1;\n'
    with pytest.raises(P4SyntaxError) as info:
        parse(src)
    assert info.value.loc == Loc("inc.p4", 2, 16)
    assert info.value.message == "syntax error at '='"


def test_syntax_error_in_a_file(tmp_path: Path) -> None:
    main = tmp_path / "bad.p4"
    main.write_text("#include <core.p4>\n\ncontrol c() { apply { exit } }\n")
    with pytest.raises(P4SyntaxError) as info:
        parse_file(main)
    assert str(info.value) == f"{main}:3:28: error: syntax error at '}}': expected ';'"


UNSUPPORTED = [
    ("const bit<8> x = this;", 1, 18, "'this'"),
    ("const bit<8> x = f(1, ...);", 1, 23, "'...'"),
    ("const bit<8> x = {a = 1, ...};", 1, 26, "'...'"),
    ("extern E { E(); abstract void f(); }\nE() e = { void f() {} };", 2, 9, "initializer"),
]


@pytest.mark.parametrize(("src", "line", "col", "fragment"), UNSUPPORTED)
def test_constructs_without_an_ast_node_are_reported(
    src: str, line: int, col: int, fragment: str
) -> None:
    with pytest.raises(P4UnsupportedError) as info:
        parse(src, "u.p4")
    assert info.value.loc == Loc("u.p4", line, col)
    assert fragment in info.value.message
