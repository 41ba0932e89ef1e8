"""Long header stacks behind a mark, and packet states reused between packets.

A program with a long stack gets a mark slot that its generated code sets
before any store into the stack; the deparser skips an unmarked stack and
the engine resets a finished state for the next packet without touching
unmarked stacks (``codegen.stackmarks``, ``Switch`` ``recycle``). Two
failure modes are checked: a store the mark misses (the deparser would
drop a header the program made valid; the expected bytes are worked out
here), and one packet's stack leaking into the next through a reused state
(every packet's output must equal a fresh switch's).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from v1model_text import v1model

from dataplane.compiler.codegen.stackmarks import MIN_SLOTS, long_stacks, mark_stack_writes
from dataplane.compiler.frontend.types import BitT, HeaderT, StackT, StructT, slots
from dataplane.compiler.pipeline import CompiledProgram, compile_file
from dataplane.runtime.switch import Switch

PROGRAM = v1model(
    types="""header h_t { bit<8> a; bit<8> b; bit<16> c; }
header e_t { bit<8> v; bit<8> bos; }
struct H { h_t h; e_t[16] st; }
struct M { bit<8> x; }
""",
    parser="""parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a) { 1: parse_e; default: accept; }
    }
    state parse_e {
        pkt.extract(hdr.st.next);
        transition select(hdr.st.last.bos) { 0: parse_e; default: accept; }
    }
}
""",
    ingress="""control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        if (hdr.st[0].isValid()) { hdr.h.c = hdr.h.c + 1; }
        if (hdr.h.b == 2) { clone(CloneType.I2E, 5); }
        if (hdr.h.b == 3) {
            hdr.st[hdr.h.c[3:0]].setValid();
            hdr.st[hdr.h.c[3:0]].v = 0x77;
            hdr.st[hdr.h.c[3:0]].bos = 1;
        }
        if (hdr.h.b == 4) { hdr.st[2].setValid(); hdr.st[2].v = 0x42; hdr.st[2].bos = 0; }
        sm.egress_spec = 1;
    }
}
""",
    deparser="""control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.st); } }
""")


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> CompiledProgram:
    src = Path(tmp_path_factory.mktemp("marks")) / "stack.p4"
    src.write_text(PROGRAM)
    return compile_file(src)


def switch(program: CompiledProgram) -> Switch:
    sw = Switch(program)
    sw.mirroring_add(5, 3)
    return sw


def packets(n: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        a = rng.choice((0, 1))
        head = bytes([a, rng.randrange(6)]) + rng.randrange(1 << 16).to_bytes(2, "big")
        stack = b""
        if a:
            k = rng.randrange(1, 6)
            stack = b"".join(bytes([rng.randrange(256), int(i == k - 1)]) for i in range(k))
        out.append(head + stack + bytes(rng.randrange(256) for _ in range(rng.randrange(4))))
    return out


def test_program_has_a_marked_stack(program: CompiledProgram) -> None:
    lay = program.layout
    assert lay.stack_mark >= 0 and len(lay.stack_spans) == 1
    lo, hi = lay.stack_spans[0]
    assert hi - lo == 1 + 16 * 3
    assert f"s[{lay.stack_mark}] and s[" in program.python_source
    # right after the headers, so a clone's copy of them takes the mark along
    assert lay.stack_mark == lay.headers + (1 + 3) + (1 + 16 * 3)


def test_reused_states_leak_nothing(program: CompiledProgram) -> None:
    """Each packet through one long-lived switch (states reused) gives the
    bytes a fresh switch with fresh states gives it."""
    sw = switch(program)
    pool = program.layout.free_states  # shared by the switches of a program
    pkts = packets(400, seed=7)
    for p in pkts:
        reused = sw.process(0, p)
        kept = pool[:]
        pool.clear()
        assert reused == switch(program).process(0, p), p.hex()
        pool[:] = kept
    assert sw._free is pool and pool  # states were reused, not just allocated


def test_switches_of_one_program_share_their_finished_states(
        program: CompiledProgram) -> None:
    """A state one switch finished is the next packet's on another."""
    a, b = switch(program), switch(program)
    pool = program.layout.free_states
    pool.clear()
    a.process(0, packets(1, seed=1)[0])
    assert len(pool) == 1
    state = pool[0]
    b.process(0, packets(1, seed=2)[0])
    assert pool == [state] and pool[0] is state


def test_control_stores_reach_the_deparser(program: CompiledProgram) -> None:
    """``st[2].setValid()`` in the ingress control on a packet without a
    stack: the mark must be set or the deparser would skip the stack."""
    sw = switch(program)
    for p in packets(50, seed=3) + [bytes([0, 4, 0, 9]) + b"xy"] * 3:
        out = sw.process(0, p)
        if p[0] == 0 and p[1] == 4:
            assert out == [(1, p[:4] + bytes([0x42, 0]) + p[4:])]
        if p[0] == 0 and p[1] == 3:  # a run-time index: st[c & 15]
            i = p[3] & 15
            assert out == [(1, p[:4] + bytes([0x77, 1]) + p[4:])], i


def test_clone_keeps_the_mark(program: CompiledProgram) -> None:
    """An ingress clone is the original packet parsed again: its stack
    (marked by that parse) must come out whole."""
    sw = switch(program)
    for p in packets(200, seed=11):
        out = dict(sw.process(0, p))
        if p[1] == 2:
            assert out[3] == p


def test_marks_placed_before_stores_into_long_stacks() -> None:
    src = "\n".join([
        "def f(s, i):",
        "    s[3] = 1",  # outside
        "    s[12] = 2",  # inside
        "    if s[4]:",
        "        s[i] = 3",  # run-time index
        "        x = s[15]",  # a read
        "    s[0:10] = t",  # slice ending before the stack
        "    s[8:12] = t",  # overlapping
        "    s[20], s[2] = u",  # a target inside
        "    s[19] += 1",
        "    if s[10:50:4] != Z10:",
        "        pass",
        "",
    ])
    out = mark_stack_writes(src, [(10, 20)], 99).split("\n")
    marked = [out[k + 1].strip() for k, line in enumerate(out) if line.strip() == "s[99] = 1"]
    assert marked == ["s[12] = 2", "s[i] = 3", "s[8:12] = t", "s[19] += 1"]
    assert "    if s[10:50:4] != Z10:" in out  # a read: the code generator guards it
    assert mark_stack_writes(src, [], 99) == src


def test_long_stacks_found_in_nested_structs() -> None:
    e = HeaderT("e", [("v", BitT(8)), ("w", BitT(8))])
    inner = StructT("inner", [("x", BitT(8)), ("st", StackT(e, 16)), ("small", StackT(e, 2))])
    outer = StructT("outer", [("h", HeaderT("h", [("a", BitT(8))])), ("in", inner)])
    spans = long_stacks(outer, 100)
    assert spans == [(100 + 2 + 1, 100 + 2 + 1 + slots(StackT(e, 16)))]
    assert slots(StackT(e, 2)) < MIN_SLOTS
