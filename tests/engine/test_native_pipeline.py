"""A generated pipeline built as an extension (``dataplane.compiler.native``)
computes what its Python text computes: the same program compiled both
ways, 400 random packets through each, byte for byte. The program mixes
what generated code does most: extract (read byte by byte when compiled)
and emit with fields across byte boundaries, signed, bool and 64-bit
fields, arithmetic that wraps, a checksum, a hash, a register, three tables
(their hit, miss and action_run, an action of two arguments, a direct
counter, an action profile's members) and a header made valid or
invalid."""

from __future__ import annotations

import ast
import gc
import hashlib
import random
import re
import sys
import zlib
from pathlib import Path

import cython
import pytest
from v1model_text import v1model

from common.errors import IntbedError
from common.paths import PACKAGE_ROOT
from dataplane.compiler import native
from dataplane.compiler.frontend.parser import parse_file
from dataplane.compiler.native import full_source, native_forms
from dataplane.compiler.pipeline import compile_file, compile_program, native_job
from dataplane.runtime.switch import EgressJob, Switch
from fastpath import loader
from fastpath.build import build, compiler
from tests.crc_reference import crc16_arc

PROGRAM = v1model(
    types="""header a_t { bit<3> x; bit<13> y; bit<48> mac; bit<16> sum; bit<8> sel; }
header b_t { bit<32> v; bit<3> z; int<4> s; bool f; bit<64> q; }
struct H { a_t a; b_t b; }
struct M { bit<16> h; bit<128> wide; }
""",
    parser="""parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.a); transition select(hdr.a.sel) {
        1: with_b; default: accept; } }
    state with_b { pkt.extract(hdr.b); transition accept; }
}
""",
    ingress="""control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    register<bit<32>>(8) seen;
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action bump() { hdr.a.y = hdr.a.y + 13w8000; sm.egress_spec = 2; }
    action tag(bit<16> v, bit<8> w) { hdr.a.sum = v; hdr.a.sel = w; }
    action mark(bit<8> v) { hdr.a.sel = hdr.a.sel ^ v; }
    direct_counter(CounterType.packets_and_bytes) t_hits;
    table t { key = { hdr.a.x : exact; } actions = { fwd; bump; } default_action = bump();
              counters = t_hits; }
    table t3 { key = { hdr.a.x : exact; } actions = { mark; NoAction; }
               implementation = action_profile(32w4); default_action = NoAction(); }
    table t2 { key = { hdr.a.y : exact; } actions = { tag; NoAction; }
               default_action = NoAction(); }
    apply {
        if (t.apply().miss) { hdr.a.mac = hdr.a.mac + 48w1; }
        switch (t2.apply().action_run) {
            tag: { sm.egress_spec = sm.egress_spec + 9w1; }
            default: { hdr.a.mac = hdr.a.mac ^ 48w0xff; }
        }
        t3.apply();
        hash(m.h, HashAlgorithm.crc16, 16w0, { hdr.a.mac, hdr.a.y }, 16w65535);
        bit<32> old;
        seen.read(old, (bit<32>)hdr.a.x);
        seen.write((bit<32>)hdr.a.x, old + (bit<32>)m.h);
        if (hdr.b.isValid()) {
            hdr.b.v = hdr.b.v ^ (old + (bit<32>)m.h);
            if (hdr.b.s < 0) { hdr.b.z = hdr.b.z + 3w1; }
            if (hdr.b.f) { hdr.b.q = hdr.b.q + 64w1; }
            // 32- and 48-bit sums, differences and products that wrap (in
            // machine words when built), and one such result widened and
            // shifted past 64 bits.
            hdr.b.v = hdr.b.v - (bit<32>)hdr.a.sel * 32w0x9e3779b9;
            hdr.a.mac = hdr.a.mac * 48w0x5deece66d - (bit<48>)hdr.b.v;
            m.wide = ((bit<128>)(hdr.b.v + 32w1)) << 100;
            hdr.b.q = hdr.b.q ^ m.wide[127:64];
        }
        else if (hdr.a.x == 3w5) { hdr.b.setValid(); hdr.b.v = 32w0xdeadbeef; }
        update_checksum(true, { hdr.a.x, hdr.a.y, hdr.a.mac, hdr.a.sel }, hdr.a.sum,
                        HashAlgorithm.csum16);
    }
}
""",
    deparser="control D(packet_out pkt, in H hdr) {\n"
             "    apply { pkt.emit(hdr.a); pkt.emit(hdr.b); }\n}\n")


def _built_and_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
                      ) -> tuple[Switch, Switch]:
    """A switch running ``text``'s pipeline as Python and one running its
    build (made here, in a directory of the test's own)."""
    if not loader.enabled():
        pytest.skip(f"{loader.PURE_ENV} is set: this process loads no builds")
    try:
        compiler()
    except IntbedError as exc:
        pytest.skip(str(exc))
    monkeypatch.setenv(loader.DIR_ENV, str(tmp_path / "accel"))
    src = tmp_path / "prog.p4"
    src.write_text(text)
    python = compile_program(parse_file(src), src)
    assert not python.native
    job = native_job(python)
    assert job is not None
    build(job)
    assert native_job(python) is None  # built: nothing left to do
    built = compile_program(parse_file(src), src)
    assert built.native and built.python_source == python.python_source
    return Switch(python), Switch(built)


def test_a_built_pipeline_matches_its_python_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    switches = list(_built_and_python(tmp_path, monkeypatch, PROGRAM))
    # The wide unsigned arithmetic above takes the machine-word form.
    assert len(re.findall(r"= \(_wd\d+ [-+*] ", switches[0].program.python_source)) >= 4
    for sw in switches:
        for x, action, args in ((1, "I.fwd", [3]), (5, "I.fwd", [4]), (2, "I.bump", [])):
            sw.table_add("I.t", {"hdr.a.x": x}, action, args)
        # A two-argument action (its arguments land in two slots in a row)
        # for an eighth of the 8,192 values of hdr.a.y.
        for y in range(0, 8192, 8):
            sw.table_add("I.t2", {"hdr.a.y": y}, "I.tag", [y * 7 % 65536, y % 251])
        for x in (1, 4, 6):  # each a member of the action profile
            sw.table_add("I.t3", {"hdr.a.x": x}, "I.mark", [x * 37])
    rng = random.Random(7)
    outputs = 0
    for i in range(400):
        size = rng.choice([9, 12, 13, 16, 24, 30])  # short ones are rejected by the parser
        frame = bytes(rng.randrange(256) for _ in range(size))
        if rng.random() < 0.5 and size >= 11:  # hdr.a.sel = 1: parse hdr.b
            frame = frame[:10] + b"\x01" + frame[11:]
        port = rng.randrange(4)
        # Every other packet reaches the built parser as a bytearray, which
        # the engine turns into the bytes that parser reads.
        a = switches[0].process(port, frame)
        b = switches[1].process(port, bytearray(frame) if i % 2 else frame)
        assert a == b, frame.hex()
        outputs += bool(a)
    assert outputs > 200
    # The direct counter of every entry of t counted alike in both.
    counts = [sorted((e.args, e.packets, e.bytes) for e in sw.table("I.t").entries)
              for sw in switches]
    assert counts[0] == counts[1] and sum(c[1] for c in counts[0]) > 50


def test_the_stores_over_item_pointers_keep_no_reference(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The built pipeline's SPUT and STRUE and the compiled engine's _put
    take and give back references themselves: thousands of packets leave
    the number of live objects where a few hundred left it (one reference
    kept a packet-hop would keep thousands of payloads, ports or
    timestamps alive)."""
    # A program of its own: a process keeps the pipelines it has loaded,
    # and the helper wants one that has no build yet.
    _, sw = _built_and_python(tmp_path, monkeypatch, PROGRAM.replace("13w8000", "13w7000"))
    sw.table_add("I.t", {"hdr.a.x": 1}, "I.fwd", [3])
    rng = random.Random(3)
    frames = [bytes(rng.randrange(256) for _ in range(30)) for _ in range(64)]
    frames = [f[:10] + bytes([i % 2]) + f[11:] for i, f in enumerate(frames)]

    def run(n: int) -> int:
        for i in range(n):
            sw.process(i % 4, frames[i % len(frames)])
        gc.collect()
        return sys.getallocatedblocks()

    before = run(500)
    assert run(5000) - before < 500


def _gpint_text() -> str:
    program = compile_program(parse_file(Path("p4src/gpint.p4")), Path("p4src/gpint.p4"))
    return program.python_source


def _fixed_slot(node: ast.AST) -> bool:
    """``s[<int>]``."""
    return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
            and node.value.id == "s" and isinstance(node.slice, ast.Constant)
            and type(node.slice.value) is int)


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name) and n.func.id == name]


def _same(code: str) -> bool:
    """``native_forms`` leaves ``code`` as Python parses it."""
    return ast.dump(ast.parse(native_forms(code))) == ast.dump(ast.parse(code))


def test_a_built_pipelines_key_names_the_entry_layout_it_cimports() -> None:
    """A built pipeline declares its hit entry a ``tables.Entry`` (cimported):
    its source, and so its key, names a digest of tables.pxd and tables.py
    (``loader.dependency_source``), so a changed layout, or a tables.py that
    runs as Python because it was edited, gets a build of its own rather
    than loading this one."""
    deps = loader.dependency_source(["dataplane.runtime.tables", "dataplane.runtime.ints"])
    runtime = PACKAGE_ROOT / "dataplane" / "runtime"
    for part in ("tables.pxd", "tables.py", "ints.pxd"):
        assert (runtime / part).read_bytes() in deps
    text = full_source("def make(X):\n    return {}\n", {"cython": cython})
    assert hashlib.sha256(deps).hexdigest()[:24] in text
    assert "from cython.cimports.dataplane.runtime.tables import Entry" in text
    assert "import Entry as Entry" not in text
    assert native.DEPENDS == ("dataplane.runtime.tables",)


def test_native_forms_store_through_sput_exactly_the_stores_into_fixed_slots() -> None:
    """``s[N] = value`` becomes SPUT and every other statement stays: as
    many SPUT calls as Python's parse of gpint.p4's text finds assignments
    of one value to ``s[<int>]``, each with its slot and value."""
    text = _gpint_text()
    stores = [n for n in ast.walk(ast.parse(text))
              if isinstance(n, ast.Assign) and len(n.targets) == 1
              and _fixed_slot(n.targets[0]) and not isinstance(n.value, ast.Tuple)]
    out = ast.parse(native_forms(text))
    puts = _calls(out, "SPUT")
    assert len(puts) == len(stores) > 100
    assert sorted(p.args[1].value for p in puts) == sorted(  # type: ignore[attr-defined]
        n.targets[0].slice.value for n in stores)  # type: ignore[attr-defined]
    assert not any(isinstance(n, ast.Assign) and _fixed_slot(n.targets[0])
                   and not isinstance(n.value, ast.Tuple) for n in ast.walk(out))
    for kept in ("s[3] = s[4] = 0", "s[3] = 1, 2", "s[k] = 1", "s[1:3] = t", "s[3] += 1",
                 "t[3] = 1", "_a, s[3] = f(b)", "s[-1] = 2"):
        assert _same(kept), kept
    assert native_forms("s[3] = (1 +\n  x)").strip() == "SPUT(s, 3, 1 + x)"


def test_native_forms_test_one_fixed_slot_by_strue() -> None:
    """``if s[N]:`` and ``elif s[N]:`` become STRUE: as many as the ``if``
    statements whose whole test is ``s[<int>]``; a ``while`` or a
    conditional expression outside a test stays."""
    text = _gpint_text()
    tests = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.If) and _fixed_slot(n.test)]
    out = ast.parse(native_forms(text))
    whole = [n for n in ast.walk(out) if isinstance(n, ast.If) and isinstance(n.test, ast.Call)
             and isinstance(n.test.func, ast.Name) and n.test.func.id == "STRUE"]
    assert len(whole) == len(tests) > 10
    assert native_forms("if s[3]:\n    x = 1\nelif s[4]:\n    x = 2\n") == (
        "if STRUE(s, 3):\n    x = 1\nelif STRUE(s, 4):\n    x = 2\n")
    for kept in ("if s[k]:\n    pass", "if t[3]:\n    pass", "while s[3]:\n    pass",
                 "x = s[3] if s[4] else 0"):
        assert _same(kept), kept


def test_native_forms_test_a_stacks_validity_by_anyv() -> None:
    """``s[lo:hi:k] != Zn`` (a stack's validity slots tested at once)
    becomes ``ANYV(s, lo, hi, k)``: as many as Python's parse finds such
    comparisons in gpint.p4's text, each with its bounds, and other slices
    and comparisons stay."""
    text = _gpint_text()
    found = [n for n in ast.walk(ast.parse(text))
             if isinstance(n, ast.Compare) and isinstance(n.ops[0], ast.NotEq)
             and isinstance(n.left, ast.Subscript) and isinstance(n.left.value, ast.Name)
             and n.left.value.id == "s" and isinstance(n.left.slice, ast.Slice)
             and isinstance(n.comparators[0], ast.Name) and n.comparators[0].id.startswith("Z")]
    assert len(found) >= 3
    out = native_forms(text)
    anyv = _calls(ast.parse(out), "ANYV")
    assert len(anyv) == len(found) and "] != Z" not in out
    assert sorted(tuple(a.value for a in c.args[1:]) for c in anyv) == sorted(  # type: ignore[attr-defined]
        tuple(getattr(n.left.slice, part).value for part in ("lower", "upper", "step"))
        for n in found)
    for kept in ("x = cs[1:9:2] != Z4", "x = s[1:9:2] == Z4", "x = s[1:9] != Z4",
                 "x = s[k:9:2] != Z4", "x = s[1:9:2] != t"):
        assert _same(kept), kept


_WORDS = {"ulonglong": "get_u64", "Py_ssize_t": "get_ssize"}


def _word_types(fn: ast.FunctionDef) -> dict[str, str]:
    """The locals ``fn``'s ``@cython.locals`` declares machine words."""
    out = {}
    for dec in fn.decorator_list:
        if isinstance(dec, ast.Call) and ast.unparse(dec.func) == "cython.locals":
            for kw in dec.keywords:
                kind = ast.unparse(kw.value).removeprefix("cython.")
                if kw.arg is not None and kind in _WORDS:
                    out[kw.arg] = kind
    return out


def test_native_forms_read_and_box_machine_words() -> None:
    """Reads of a fixed slot into a local its function declares a machine
    word become get_u64 or get_ssize, and stores of such a local (alone or
    plus or minus a constant) are boxed by box_u64 or box_ssize: as many of
    each as Python's parse of gpint.p4's text finds, with the function's own
    type, and nothing else."""
    text = _gpint_text()
    reads: list[tuple[str, str, int]] = []
    stores: list[tuple[int, str, str]] = []
    for fn in ast.walk(ast.parse(text)):
        if not isinstance(fn, ast.FunctionDef):
            continue
        types = _word_types(fn)
        for n in ast.walk(fn):
            if not (isinstance(n, ast.Assign) and len(n.targets) == 1):
                continue
            target, value = n.targets[0], n.value
            if isinstance(target, ast.Name) and target.id in types and _fixed_slot(value):
                reads.append((target.id, types[target.id], value.slice.value))
            name = value.left if isinstance(value, ast.BinOp) else value
            if (_fixed_slot(target) and isinstance(name, ast.Name) and name.id in types
                    and (value is name or (isinstance(value.op, ast.Add | ast.Sub)
                                           and isinstance(value.right, ast.Constant)))):
                stores.append((target.slice.value, types[name.id], ast.unparse(value)))
    new = native_forms(text)
    assert len(reads) > 40 and len(stores) > 10
    for name, kind, slot in reads:
        assert f"{name} = {_WORDS[kind]}(s, {slot})" in new
    box = {"ulonglong": "box_u64", "Py_ssize_t": "box_ssize"}
    for slot, kind, value in stores:
        assert f"SPUT(s, {slot}, {box[kind]}({value}))" in new
    def count(tree: ast.AST, *names: str) -> int:
        return sum(len(_calls(tree, name)) for name in names)

    tree, was = ast.parse(new), ast.parse(text)
    assert count(tree, "get_u64", "get_ssize") - count(was, "get_u64", "get_ssize") == len(reads)
    assert count(tree, "box_u64", "box_ssize") - count(was, "box_u64", "box_ssize") == len(stores)
    code = ("@cython.locals(_a=cython.ulonglong, _o=object, s=list)\n"
            "def f(s):\n    _o = s[3]\n    _a = s[k]\n    _a = t[3]\n    _a = s[3] + 1\n"
            "    s[4] = _o\n    s[4] = _a * 2\n    s[4] = _a + k\n    _a = s[5]\n"
            "    s[6] = _a - 2\n\ndef g(s):\n    _a = s[3]\n")
    assert native_forms(code) == (
        "@cython.locals(_a=cython.ulonglong, _o=object, s=list)\n"
        "def f(s):\n    _o = s[3]\n    _a = s[k]\n    _a = t[3]\n    _a = s[3] + 1\n"
        "    SPUT(s, 4, _o)\n    SPUT(s, 4, _a * 2)\n    SPUT(s, 4, _a + k)\n"
        "    _a = get_u64(s, 5)\n    SPUT(s, 6, box_u64(_a - 2))\n\ndef g(s):\n    _a = s[3]\n")


@pytest.mark.parametrize(("line", "want"), [
    ("if s[3] and s[4] == 1:", "if STRUE(s, 3) and s[4] == 1:"),
    ("if s[19] == 1 and (not s[74]):", "if s[19] == 1 and (not STRUE(s, 74)):"),
    ("if x or s[7]:", "if x or STRUE(s, 7):"),
    ("if s[1] and (s[2] or not s[3]):", "if STRUE(s, 1) and (STRUE(s, 2) or not STRUE(s, 3)):"),
    ("if (a if s[2] else s[5]):", "if (a if STRUE(s, 2) else STRUE(s, 5)):"),
    ("if f(s[3] and x):", "if f(s[3] and x):"),
    ("if s[3] + 1 and x:", "if s[3] + 1 and x:"),
    ("if s[k] and x:", "if s[k] and x:"),
    ("if t[3] and x:", "if t[3] and x:"),
    ("if x == (s[3] or s[4]):", "if x == (s[3] or s[4]):"),
    ("x = s[3] and s[4]", "x = s[3] and s[4]"),
])
def test_native_forms_take_the_truth_of_slots_only_where_a_test_does(
        line: str, want: str) -> None:
    """A slot becomes STRUE only where an ``if`` takes its truth alone;
    and the rewritten test has the original's truth for slots holding 0, 1,
    False, True and other integers, with STRUE as its truth."""
    body = "\n    pass" if line.endswith(":") else ""
    got = native_forms(line + body)
    assert ast.dump(ast.parse(got)) == ast.dump(ast.parse(want + body))
    if want == line or not line.startswith("if"):
        return
    old = line.split(" ", 1)[1][:-1]
    new = want.split(" ", 1)[1][:-1]
    rng = random.Random(3)
    for _ in range(200):
        s = [rng.choice([0, 1, False, True, 2, 7, 300]) for _ in range(80)]
        env = {"s": s, "x": rng.random() < 0.5, "a": rng.choice([0, 3]),
               "STRUE": lambda s, i: int(bool(s[i]))}
        assert bool(eval(old, env)) == bool(eval(new, env))  # noqa: S307 (the test's own text)


def test_native_forms_keep_the_generated_programs_meaning() -> None:
    """Every shipped program's text in its native forms is Python that
    parses, defines the same functions and names no helper it lacks."""
    from p4src import program_path, programs

    helpers = {"SPUT", "STRUE", "ANYV", "get_u64", "get_ssize", "box_u64", "box_ssize"}
    for path in programs():
        compiled = compile_file(program_path(path.stem))
        if not compiled.runnable:
            continue
        text = compiled.python_source
        before, after = ast.parse(text), ast.parse(native_forms(text))
        names = [n.name for n in ast.walk(before) if isinstance(n, ast.FunctionDef)]
        assert names == [n.name for n in ast.walk(after) if isinstance(n, ast.FunctionDef)]
        used = {n.func.id for n in ast.walk(after) if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Name)} - {n.func.id for n in ast.walk(before)
                                                     if isinstance(n, ast.Call)
                                                     and isinstance(n.func, ast.Name)}
        assert used <= helpers, (path.name, used - helpers)


WORDS = v1model(
    types="""header h_t { bit<64> q; bit<32> v; bit<16> x; bit<8> idx; bit<8> flag; }
struct H { h_t h; }
struct M { bool seen; }
""",
    parser="parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {\n"
           "    state start { pkt.extract(hdr.h); transition accept; }\n}\n",
    ingress="""control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    register<bit<64>>(8) r;
    apply {
        bit<64> old;
        r.read(old, (bit<32>)(hdr.h.idx & 8w7));
        r.write((bit<32>)(hdr.h.idx & 8w7), hdr.h.q);
        m.seen = hdr.h.flag == 8w1;
        if (m.seen && hdr.h.isValid()) { hdr.h.q = hdr.h.q + old; }
        else { hdr.h.q = hdr.h.q ^ 64w0xFFFF0000FFFF; }
        hdr.h.v = hdr.h.v + 32w1;
        update_checksum(true, { hdr.h.q, hdr.h.v }, hdr.h.x, HashAlgorithm.csum16);
        sm.egress_spec = 1;
    }
}
""",
    deparser="control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }\n")

# Values at the edges of CPython's 30-bit digits, of its shared small
# integers and of a machine word.
_EDGES = [0, 1, 255, 256, 257, 2**30 - 1, 2**30, 2**32 - 1, 2**60 - 1, 2**60, 2**63,
          2**64 - 1]


def test_fields_read_and_boxed_as_machine_words_match_the_python_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Built, a state's fields are read through get_u64 and get_ssize and
    stored through box_u64 and box_ssize, and a slot's truth in a test
    through STRUE: values at every digit count CPython gives a 64-bit
    integer, a register's index and a flag on and off emit what the Python
    text emits, and small values are CPython's shared objects."""
    python, built = _built_and_python(tmp_path, monkeypatch, WORDS)
    source = full_source(built.program.python_source, {})
    for helper in ("get_u64(s, ", "get_ssize(s, ", "box_u64(", "box_ssize(", "STRUE(s, "):
        assert helper in source
    rng = random.Random(11)
    cases = [(q, v, idx, flag) for q in _EDGES for v in (0, 2**32 - 1)
             for idx, flag in ((3, 1), (3, 0))]
    cases += [(rng.randrange(2**64), rng.randrange(2**32), rng.randrange(256),
               rng.choice([0, 1, 2])) for _ in range(300)]
    for q, v, idx, flag in cases:
        frame = (q.to_bytes(8, "big") + v.to_bytes(4, "big") + bytes(2) + bytes([idx, flag])
                 + bytes(rng.randrange(256) for _ in range(rng.randrange(3))))
        a, b = python.process(0, frame), built.process(0, frame)
        assert a == b, frame.hex()
    for sw in (python, built):
        assert sw.externs[0].values == python.externs[0].values
    # Parse a frame and hold its state: the built parser's small fields are
    # the interpreter's own small integers.
    state = built.program.layout.template.copy()
    frame = (256).to_bytes(8, "big") + (7).to_bytes(4, "big") + bytes([0, 200, 5, 1])
    state[0] = 0
    built._parser(state, frame)
    small = 200  # the interpreter's shared object
    assert frame[-2] in state and any(x is small for x in state)


SELECTS = v1model(
    types="""header a_t { bit<64> w; bit<16> t; bit<48> m; }
header b_t { bit<8> x; }
struct H { a_t a; b_t b1; b_t b2; b_t b3; b_t b4; }
struct M { }
""",
    parser="""parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) pvs;
    state start { pkt.extract(hdr.a); transition select(hdr.a.w, hdr.a.t) {
        (64w0xFFFFFFFFFFFFFFFF, _): s1;
        (64w0x8000000000000000 &&& 64w0x8000000000000000, 16w0x0800): s2;
        (_, 16w100 .. 16w200): s3;
        (_, pvs): s4;
        default: wide; } }
    state wide { transition select(hdr.a.m) { 48w0xFFFFFFFFFFFF: s1; 48w0x80000000: s2;
                                               default: accept; } }
    state s1 { pkt.extract(hdr.b1); transition accept; }
    state s2 { pkt.extract(hdr.b2); transition accept; }
    state s3 { pkt.extract(hdr.b3); transition accept; }
    state s4 { pkt.extract(hdr.b4); transition accept; }
}
""",
    ingress="control I(inout H hdr, inout M m, inout standard_metadata_t sm) {\n"
            "    apply { sm.egress_spec = 1;\n"
            "        if (hdr.b1.isValid()) { hdr.b1.x = 1; }\n"
            "        if (hdr.b2.isValid()) { hdr.b2.x = 2; }\n"
            "        if (hdr.b3.isValid()) { hdr.b3.x = 3; }\n"
            "        if (hdr.b4.isValid()) { hdr.b4.x = 4; } }\n}\n",
    deparser="control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.a); pkt.emit(hdr.b1);"
             " pkt.emit(hdr.b2); pkt.emit(hdr.b3); pkt.emit(hdr.b4); } }\n")


def test_select_keys_in_machine_words_match_the_python_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Built, a select's keys of up to 64 bits are machine words: exact
    values past 2**63, a mask, a range, a value set and a 48-bit key take
    the state the Python text takes."""
    python, built = _built_and_python(tmp_path, monkeypatch, SELECTS)
    assert re.search(r"_k\d+=cython\.ulonglong", python.program.python_source)
    for sw in (python, built):
        sw.value_sets[0].members.add(0x1234)
    rng = random.Random(13)
    ws = [2**64 - 1, 2**63, 2**63 + 5, 2**63 - 1, 0, 7]
    ts = [0x0800, 100, 150, 200, 201, 0x1234, 99]
    ms = [2**48 - 1, 0x80000000, 0x7FFFFFFF, 0]
    taken = set()
    for w in ws:
        for t in ts:
            for m in ms:
                frame = (w.to_bytes(8, "big") + t.to_bytes(2, "big") + m.to_bytes(6, "big")
                         + bytes([rng.randrange(5, 256)]))
                a, b = python.process(0, frame), built.process(0, frame)
                assert a == b, frame.hex()
                taken.add(min(a[0][1][-1], 5))  # the state's header marks its last byte
    assert taken == {1, 2, 3, 4, 5}


ROUTES = v1model(
    types="""header h_t { bit<32> dst; bit<64> wide; bit<8> mark; }
struct H { h_t h; }
struct M { }
""",
    parser="parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {\n"
           "    state start { pkt.extract(hdr.h); transition accept; }\n}\n",
    ingress="""control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action put(bit<8> v) { hdr.h.mark = hdr.h.mark + v; sm.egress_spec = 1; }
    table by_dst { key = { hdr.h.dst : lpm; } actions = { put; NoAction; }
                   default_action = NoAction(); }
    table by_wide { key = { hdr.h.wide : lpm; } actions = { put; NoAction; }
                    default_action = put(8w100); }
    apply { by_dst.apply(); by_wide.apply(); }
}
""",
    deparser="control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }\n")


def test_one_field_lpm_lookups_read_in_c_match_the_python_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Built, a one-field lpm table's apply reads the answer its slots hold
    in C and calls the table's lookup on a miss (a 64-bit key has no slots):
    hits, misses and answers cached before a route came or went take the
    action the Python text takes."""
    from dataplane.runtime.tables import Lpm

    python, built = _built_and_python(tmp_path, monkeypatch, ROUTES)
    assert "lpm1_lookup(LK" in full_source(built.program.python_source, {})
    # The tables' own module compiled, the 32-bit table has slots to read.
    slots = len(built.table("I.by_dst")._lpm_slot_found)
    assert (slots > 0) == (loader.loaded().get("dataplane.runtime.tables") == "compiled")
    assert not built.table("I.by_wide")._lpm_slot_found
    rng = random.Random(17)
    routes = [(0x0A000000, 8, 1), (0x0A010000, 16, 2), (0x0A010200, 24, 3), (0, 0, 4)]
    dsts = [0x0A010203, 0x0A010303, 0x0A020304, 0x0B000001, 0x0A010200, 0xFFFFFFFF]
    wides = [2**64 - 1, 2**63, 5]
    entries = {}
    for sw in (python, built):
        for value, plen, v in routes[:3]:
            entries[sw, value, plen] = sw.table_add("I.by_dst", {"hdr.h.dst": Lpm(value, plen)},
                                                    "I.put", [v])
        sw.table_add("I.by_wide", {"hdr.h.wide": Lpm(2**63, 1)}, "I.put", [50])

    def compare(rounds: int) -> set[int]:
        outs = set()
        for _ in range(rounds):
            dst = rng.choice(dsts) if rng.random() < 0.8 else rng.randrange(2**32)
            frame = dst.to_bytes(4, "big") + rng.choice(wides).to_bytes(8, "big") + bytes(1)
            a, b = python.process(0, frame), built.process(0, frame)
            assert a == b, frame.hex()
            outs.add(a[0][1][-1] % 50)  # by_dst's part of the mark (by_wide adds 50 or 100)
        return outs

    assert {0, 1, 2, 3}.issubset(compare(300))  # every route hit and a miss, cached too
    for sw in (python, built):  # a route goes, another comes: cached answers are dropped
        sw.table("I.by_dst").delete(entries[sw, 0x0A010000, 16])
        sw.table_add("I.by_dst", {"hdr.h.dst": Lpm(0, 0)}, "I.put", [4])
    outs = compare(300)
    assert 2 not in outs and 0 not in outs and {1, 3, 4}.issubset(outs)

STACK = v1model(
    types="""header e_t { bit<8> n; bit<16> tag; }
header b_t { bit<8> more; bit<8> v; }
struct H { e_t e; b_t[6] bs; }
struct M { }
""",
    parser="""parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.e); transition select(hdr.e.n) { 0: accept; default: b; } }
    state b { pkt.extract(hdr.bs.next);
              transition select(hdr.bs.last.more) { 0: accept; default: b; } }
}
""",
    ingress="control I(inout H hdr, inout M m, inout standard_metadata_t sm) {\n"
            "    apply { sm.egress_spec = 1;\n"
            "            if (hdr.e.tag == 7) { hdr.bs[4].setValid(); hdr.bs[4].v = 9; }\n"
            "            if (hdr.e.tag == 8) { hdr.bs[0].setInvalid(); } }\n}\n",
    deparser="control D(packet_out pkt, in H hdr) {\n"
             "    apply { pkt.emit(hdr.e); pkt.emit(hdr.bs); }\n}\n")


def test_a_stacks_validity_tested_at_once_matches_the_python_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Built, the deparser tests a six-entry stack's validity slots with
    ANYV: a stack empty, parsed to any depth, given an entry past its end
    or losing its first emits what the Python text emits."""
    python, built = _built_and_python(tmp_path, monkeypatch, STACK)
    assert "] != Z6" in python.program.python_source
    rng = random.Random(9)
    emitted = set()
    for _ in range(300):
        depth = rng.randrange(7)
        tag = rng.choice([0, 7, 8, 300])
        frame = bytes([min(depth, 1)]) + tag.to_bytes(2, "big")
        for i in range(depth):
            frame += bytes([int(i < depth - 1), rng.randrange(256)])
        frame += bytes(rng.randrange(256) for _ in range(rng.randrange(4)))
        a, b = python.process(0, frame), built.process(0, frame)
        assert a == b, frame.hex()
        emitted.add(len(a[0][1]) if a else -1)
    assert len(emitted) >= 6


SMALL = v1model(
    types="""header a_t { bit<4> x; bit<4> y; bit<8> kind; bit<32> v; }
struct H { a_t a; }
struct M { }
""",
    parser="""parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.a); transition accept; }
}
""",
    ingress="control I(inout H hdr, inout M m, inout standard_metadata_t sm) {\n"
            "    apply { sm.egress_spec = 1; }\n}\n",
    deparser="control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.a); } }\n")


def test_an_egress_job_whose_state_is_not_the_programs_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Built, the pipeline stores into its state's slots unchecked: the one
    state a caller can hand it, an egress job's, must have the template's
    length, built or not, and is refused before anything runs."""
    for sw in _built_and_python(tmp_path, monkeypatch, SMALL):
        assert sw.process(0, bytes(range(6, 18))) == [(1, bytes(range(6, 18)))]
        n = len(sw._template)
        for size in (0, n - 1, n + 1):
            with pytest.raises(ValueError, match=f"has {size} slots; .* has {n}"):
                sw.egress(EgressJob(1, [0] * size, b"", 0))


SUBPARSER = v1model(
    types="""header a_t { bit<8> kind; bit<16> x; }
header b_t { int<4> s; bit<4> t; bit<32> y; }
struct H { a_t a; b_t b; }
struct M { }
""",
    parser="""parser Sub(packet_in pkt, inout H hdr) {
    state start { pkt.extract(hdr.b); transition accept; }
}
parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    Sub() sub;
    state start { pkt.extract(hdr.a); transition select(hdr.a.kind) {
        7: more; default: accept; } }
    state more { sub.apply(pkt, hdr); transition accept; }
}
""",
    ingress="""control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.b.isValid() && hdr.b.s < 0) { hdr.a.x = hdr.a.x + (bit<16>)hdr.b.t; }
    }
}
""",
    deparser="control D(packet_out pkt, in H hdr) {\n"
             "    apply { pkt.emit(hdr.a); pkt.emit(hdr.b); }\n}\n")


def test_a_parser_that_calls_a_subparser_builds_and_matches_its_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sub-parser reads the packet from a lambda in the calling state,
    which Cython cannot give a typed local (the build failed when the
    packet was declared bytes there)."""
    python, built = _built_and_python(tmp_path, monkeypatch, SUBPARSER)
    rng = random.Random(11)
    parsed_b = 0
    for _ in range(300):
        frame = bytes([7 if rng.random() < 0.7 else rng.randrange(256)]) + bytes(
            rng.randrange(256) for _ in range(rng.choice([2, 4, 8, 12])))
        a, b = python.process(0, frame), built.process(0, frame)
        assert a == b, frame.hex()
        parsed_b += frame[0] == 7 and len(frame) >= 8
    assert parsed_b > 100


BOXED = v1model(
    types="""header h_t { bit<48> mac; bit<16> t; bit<32> ip; bit<8> small; bit<9> odd;
                 bit<7> pad; bit<64> q; }
struct H { h_t h; }
struct d_t { bit<48> mac; bit<16> t; bit<32> ip; bit<8> small; bit<9> odd; bit<64> q; }
struct M { }
""",
    parser="parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {\n"
           "    state start { pkt.extract(hdr.h); transition accept; }\n}\n",
    ingress="control I(inout H hdr, inout M m, inout standard_metadata_t sm) {\n"
            "    apply { digest<d_t>(1, {hdr.h.mac, hdr.h.t, hdr.h.ip, hdr.h.small, hdr.h.odd,\n"
            "                            hdr.h.q});\n"
            "            hdr.h.ip = hdr.h.ip + 1; sm.egress_spec = 1; }\n}\n",
    deparser="control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }\n")

# The built module's cache of parsed integers (BOXU in native.py): 2,048
# slots chosen by the value's Fibonacci hash. The test's own model of it
# finds values that share a slot.
_SLOTS_BITS = 11


def _box_slot(v: int) -> int:
    return ((v * 0x9E3779B97F4A7C15) & (2**64 - 1)) >> (64 - _SLOTS_BITS)


def _boxed_frame(mac: int, t: int, ip: int, small: int, odd: int, q: int) -> bytes:
    return (mac.to_bytes(6, "big") + t.to_bytes(2, "big") + ip.to_bytes(4, "big")
            + bytes([small]) + (odd << 7).to_bytes(2, "big") + q.to_bytes(8, "big"))


def test_parsed_integers_come_from_the_cache_with_their_own_values(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compiled, a parsed field wider than a byte is boxed through a cache
    of integer objects: a value seen again is the object made the first
    time, and values that share a slot of the cache (found with the test's
    model of its hash), the edges of CPython's small integers and the
    widest 64-bit value keep their own values, as the Python text gives
    them."""
    python, built = _built_and_python(tmp_path, monkeypatch, BOXED)
    rng = random.Random(5)
    first_of: dict[int, int] = {}
    clash: tuple[int, int] | None = None
    while clash is None:  # two 48-bit values in one slot of the cache
        v = rng.randrange(2**40, 2**48)
        clash = (first_of[_box_slot(v)], v) if _box_slot(v) in first_of else None
        first_of.setdefault(_box_slot(v), v)
    a, b = clash
    frames = [_boxed_frame(m, t, ip, small, odd, q) for m, t, ip, small, odd, q in (
        (a, 255, 0xC0A80001, 7, 256, 2**64 - 1),
        (b, 256, 0xC0A80001, 255, 257, 2**63),
        (a, 257, 0xC0A80002, 0, 511, 2**64 - 1),
        (b, 0xFFFF, 0xC0A80001, 1, 0, 12345678901234567),
        (a, 0x0800, 0xFFFFFFFF, 200, 300, 2**64 - 1),
        (a, 0x0800, 0xFFFFFFFF, 200, 300, 2**64 - 1),
    )]
    for frame in frames:
        assert python.process(0, frame) == built.process(0, frame), frame.hex()
    want = [d.values for d in python.digests]
    got = [d.values for d in built.digests]
    assert got == want and len(got) == len(frames)
    assert [v[0] for v in got] == [a, b, a, b, a, a]
    # The last two packets are alike and nothing came between them: every
    # wide field of the second is the first's object, where the Python text
    # makes new ones.
    assert all(x is y for x, y in zip(got[-1], got[-2], strict=True))
    assert not all(x is y for x, y in zip(want[-1], want[-2], strict=True))


def _checksum_program(fields: str, types: str) -> str:
    return v1model(
        types=types + "struct M { }\n",
        parser="parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {\n"
               "    state start { pkt.extract(hdr.a); transition accept; }\n}\n",
        ingress="control I(inout H hdr, inout M m, inout standard_metadata_t sm) {\n"
                f"    apply {{ update_checksum(true, {{ {fields} }}, hdr.a.sum,\n"
                "                             HashAlgorithm.csum16); }\n}\n",
        deparser="control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.a); } }\n")


@pytest.mark.parametrize(("fields", "typed"), [
    ("hdr.a.x, hdr.a.y", True),            # a sum below 2**49
    ("hdr.a.y, hdr.a.x, hdr.a.w", False),  # 2**64 - 1 plus more: past a machine word
])
def test_inline_checksum_sums_in_a_machine_word_only_when_it_cannot_overflow(
        tmp_path: Path, fields: str, typed: bool) -> None:
    src = tmp_path / "ck.p4"
    src.write_text(_checksum_program(
        fields, "header a_t { bit<16> x; bit<48> y; bit<64> w; bit<16> sum; }\n"
                "struct H { a_t a; }\n"))
    program = compile_program(parse_file(src), src)
    # The checksum's sum is the generator's one ``_v`` temporary.
    declared = re.search(r"@cython\.locals\([^)]*\b_v\d+=cython\.ulonglong", program.python_source)
    assert (declared is not None) is typed
    sw = Switch(program)
    frame = bytes(range(200, 218)) + bytes(2)
    out = sw.process(0, frame)
    # The Internet checksum of the fields as they sit in the list, written
    # independently: 16-bit big-endian words, zero-padded, ones' complement.
    x, y, w = frame[0:2], frame[2:8], frame[8:16]
    parts = {"hdr.a.x": x, "hdr.a.y": y, "hdr.a.w": w}
    data = b"".join(parts[f.strip()] for f in fields.split(","))
    total = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    assert out == [(0, frame[:16] + (0xFFFF - total).to_bytes(2, "big") + frame[18:])]


HASHES = v1model(
    types="""header a_t { bit<8> sel; bit<16> x; bit<32> y; bit<48> z; bit<64> w; bit<16> mx;
                  bit<32> base; }
header b_t { bit<32> v; bit<8> u; }
header r_t { bit<16> h16; bit<32> h32; bit<64> h64; bit<16> c16; bit<32> c32; }
struct H { a_t a; b_t b; r_t r; }
struct M { }
""",
    parser="""parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.a); transition select(hdr.a.sel) { 1: with_b; default: accept; } }
    state with_b { pkt.extract(hdr.b); transition accept; }
}
""",
    ingress="""control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        hdr.r.setValid();
        hash(hdr.r.h16, HashAlgorithm.crc16, 16w0, { hdr.a.x, hdr.a.y, hdr.b.v, hdr.b.u },
             hdr.a.mx);
        hash(hdr.r.h32, HashAlgorithm.crc32, hdr.a.base, { hdr.a.z, hdr.a.w, hdr.b.v },
             33w0x100000000);
        hash(hdr.r.h64, HashAlgorithm.crc32, 64w0xFFFFFFFFFFFFFF00, { hdr.a.y, hdr.b.u },
             64w100000);
        hash(hdr.r.c16, HashAlgorithm.crc16_custom, 16w7, { hdr.a.w, hdr.a.x }, 32w65536);
        hash(hdr.r.c32, HashAlgorithm.crc32_custom, 32w0, { hdr.b.u, hdr.a.z }, hdr.a.y);
        sm.egress_spec = 1;
    }
}
""",
    deparser="control D(packet_out pkt, in H hdr) {\n"
             "    apply { pkt.emit(hdr.a); pkt.emit(hdr.b); pkt.emit(hdr.r); }\n}\n")


def test_inline_crc_hashes_match_python_and_a_reference(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compiled, a CRC hash over whole-byte fields runs in machine words in
    place (no packed bytes); its Python text calls hash_bytes. Both must
    give BMv2's ``base + crc % max`` (uint64) of the fields' bytes, an
    invalid header's left out: checked against zlib's CRC-32 and a CRC-16
    written here, with max 0 (the result is base), a base near 2**64 (the
    sum wraps) and outputs narrower than the sum."""
    python, built = _built_and_python(tmp_path, monkeypatch, HASHES)
    assert python.program.python_source.count("if cython.compiled") >= 5
    rng = random.Random(3)
    for i in range(300):
        has_b = rng.random() < 0.5
        a = bytearray(rng.randrange(256) for _ in range(27))
        a[0] = 1 if has_b else rng.choice((0, 2, 9))
        if i % 7 == 0:
            a[21:23] = bytes(2)  # hdr.a.mx = 0
        b = bytes(rng.randrange(256) for _ in range(5)) if has_b else b""
        frame = bytes(a) + b
        out = python.process(0, frame)
        assert built.process(0, frame) == out, frame.hex()
        [(port, data)] = out
        assert port == 1
        x, y, z, w = a[1:3], a[3:7], a[7:13], a[13:21]
        mx, base = int.from_bytes(a[21:23], "big"), int.from_bytes(a[23:27], "big")
        v, u = b[0:4], b[4:5]
        r = data[len(frame):]

        def want(crc: int, base: int, mx: int, width: int) -> int:
            return ((crc % (mx or 1) + base) % (1 << 64)) & ((1 << width) - 1)

        assert int.from_bytes(r[0:2], "big") == want(crc16_arc(x + y + v + u), 0, mx, 16)
        assert int.from_bytes(r[2:6], "big") == want(zlib.crc32(z + w + v), base, 1 << 32, 32)
        assert int.from_bytes(r[6:14], "big") == want(zlib.crc32(y + u), 2**64 - 256, 100000, 64)
        assert int.from_bytes(r[14:16], "big") == want(crc16_arc(w + x), 7, 65536, 16)
        assert int.from_bytes(r[16:20], "big") == want(zlib.crc32(u + z), 0,
                                                       int.from_bytes(y, "big"), 32)
