"""Random well-typed v1model programs, with table entries, clone sessions
and packets for them, from a seed (``random.Random(seed)``: the same seed
gives the same case in every process).

A program has 2..4 header types (fields of widths 1..64, byte-aligned), a
parser whose states select on header fields (values, masks, ranges,
tuples, default), an ingress of 1..3 tables (exact, lpm and ternary keys
over header and metadata fields; actions with parameters; hit, miss and
action_run), arithmetic over widths 1..64 (``p4gen_exprs``), registers,
counters (indirect and direct), csum16 checksums verified and updated,
I2E and E2E clones, a resubmit and recirculations bounded by preserved
metadata, ``mark_to_drop``, an egress of its own and a deparser that emits
in a random order. Every field read belongs to a header known valid where
it is read, so what a program computes is defined by P4-16 alone (and so
comparable with BMv2).

``arith_case(seed)`` is a small program of its own: one header of inputs,
one of outputs each computed by a random expression, and the packets'
expected outputs computed by Python (``Expr.eval``).

``python -m p4gen DIR SEED...`` (run from tests/fuzz) writes each case as
``DIR/p4gen_SEED.p4`` and ``.stf``, the expectations taken from intbed's
engine, for ``orchestration.binaries.bmv2_stf``.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

from p4gen_exprs import (
    Const,
    Expr,
    ExprGen,
    Flag,
    Ty,
    Var,
    random_width,
    width_value,
)

SESSIONS = {1: 5, 2: 6, 3: 7}
"""Clone sessions the control plane configures (session -> port); a
program also clones to session 4, which is never configured."""
MULTICAST = {1: [(1, [1, 2]), (2, [3])], 2: [(5, [0, 4])]}
"""Multicast groups the control plane creates: group -> nodes (rid,
ports); a program also sends to group 3, which has none."""
RECIRC_BOUND = 2
BOOL_FIELD = Ty(1, boolean=True)
STACK = -1
"""The parser's next "header" is the stack."""
"""How many times one packet may recirculate (``m.rc`` counts them)."""


@dataclass
class Header:
    name: str
    fields: list[tuple[str, Ty]]
    csum: str | None = None
    """The 16-bit field a csum16 over the others is kept in."""

    @property
    def bits(self) -> int:
        return sum(t.width for _, t in self.fields)


@dataclass
class Stack:
    """A header stack ``hdr.st`` of ``size`` elements; an element's ``bos``
    field is 1 in the last one a packet carries."""

    elem: Header
    size: int


@dataclass
class TableEntry:
    """One entry: ``keys`` maps a key's name to ("exact", v),
    ("lpm", v, prefix_len), ("ternary", v, mask) or ("range", lo, hi);
    ``default``: the table's default action instead (no keys)."""

    table: str
    keys: dict[str, tuple]
    action: str
    args: list[int]
    priority: int | None = None
    default: bool = False


@dataclass
class Case:
    seed: int
    program: str
    entries: list[TableEntry]
    mirrors: dict[int, int]
    packets: list[tuple[int, bytes]]
    used: dict[str, int]
    """Constructs the program uses (construct -> count), for coverage."""
    multicast: dict[int, list[tuple[int, list[int]]]] = field(default_factory=dict)
    expected: list[bytes | None] = field(default_factory=list)
    """``arith_case``: each packet's output as Python computes it."""


@dataclass
class _Table:
    name: str
    keys: list[tuple[Var, str]]
    actions: list[tuple[str, list[Ty]]]
    ternary: bool


class _Block:
    """Lines of P4 text with indentation."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 1

    def add(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def open(self, line: str) -> None:
        self.add(line + " {")
        self.depth += 1

    def close(self, tail: str = "") -> None:
        self.depth -= 1
        self.add("}" + tail)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def pack(fields: list[tuple[int, int]]) -> bytes:
    """(width, value) pairs as bytes, most significant bit first."""
    total = value = 0
    for width, v in fields:
        value = value << width | (v & ((1 << width) - 1))
        total += width
    assert total % 8 == 0
    return value.to_bytes(total // 8, "big")


def csum16(fields: list[tuple[int, int]]) -> int:
    """The ones' complement of the ones' complement sum of 16-bit words."""
    data = pack(fields)
    total = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


class Generator:
    """One case from one seed; ``case()`` builds it."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.used: dict[str, int] = {}
        self.headers: list[Header] = []
        self.parsed: list[int] = []
        self.meta: list[tuple[str, Ty]] = []
        self.bools: list[str] = []
        self.stack: Stack | None = None
        self.pools: dict[str, list[int]] = {}
        self.tables: list[_Table] = []
        self.decls: list[str] = []
        self.actions: list[str] = []
        self.entries: list[TableEntry] = []
        self.selects: dict[int, tuple[list[Var], list[tuple[list[tuple], str]]]] = {}
        self._names = 0
        self.gotos: dict[int, int] = {}
        """States that go on to one header whatever they read."""

    def note(self, what: str, n: int = 1) -> None:
        self.used[what] = self.used.get(what, 0) + n

    def fresh(self, prefix: str) -> str:
        self._names += 1
        return f"{prefix}{self._names}"

    # ------------------------------------------------------------------ types

    def make_headers(self) -> None:
        rng = self.rng
        count = rng.randint(2, 4)
        for i in range(count):
            self.headers.append(self._header(f"h{i}", rng.randint(1, 5)))
        if rng.random() < 0.75:
            self.headers.append(self._csum_header(f"h{count}"))
            self.note("checksum")
        if rng.random() < 0.5:
            elem = self._header("s", rng.randint(1, 4))
            elem.fields.insert(0, ("bos", Ty(8)))
            self.stack = Stack(elem, rng.choice([2, 3, 5, 8, 12]))
            self.note("header stack")
        for h in self.headers:
            for _, ty in h.fields:
                self.note("width" + ("<=8" if ty.width <= 8 else "<=32" if ty.width <= 32
                                     else "<=64"))
                if ty.signed:
                    self.note("signed field")
                if ty.boolean:
                    self.note("bool field")

    def _header(self, name: str, nfields: int) -> Header:
        rng = self.rng
        fields = []
        for j in range(nfields):
            kind = rng.random()
            if kind < 0.07:
                fields.append((f"f{j}", BOOL_FIELD))
                continue
            signed = kind < 0.17
            fields.append((f"f{j}", Ty(random_width(rng, 2 if signed else 1), signed)))
        rest = -sum(t.width for _, t in fields) % 8
        if rest:
            fields.append((f"f{nfields}", Ty(rest)))
        return Header(name, fields)

    def _csum_header(self, name: str) -> Header:
        """Fields of 16k bits in all and a 16-bit checksum among them:
        ipv4's layout or a custom one."""
        rng = self.rng
        if rng.random() < 0.5:
            widths = [4, 4, 8, 16, 16, 3, 13, 8, 8, 16, 32, 32]
            fields = [(f"f{j}", Ty(w)) for j, w in enumerate(widths)]
            return Header(name, fields, csum="f9")
        fields, total = [], 0
        for j in range(rng.randint(1, 5)):
            w = random_width(rng)
            fields.append((f"f{j}", Ty(w)))
            total += w
        if -total % 16:
            fields.append((f"f{len(fields)}", Ty(-total % 16)))
        at = rng.randint(0, len(fields))
        fields.insert(at, ("csum", Ty(16)))
        return Header(name, fields, csum="csum")

    def header_vars(self, i: int, bools: bool = False) -> list[Var]:
        """Header ``i``'s fields of bit<W> and int<W> (with ``bools``, all)."""
        h = self.headers[i]
        return [Var(f"hdr.{h.name}.{f}", t) for f, t in h.fields if bools or not t.boolean]

    def header_flags(self, valid: list[int]) -> list[str]:
        """The bool fields of the headers ``valid``."""
        return [v.name for i in valid for v in self.header_vars(i, True) if v.ty.boolean]

    def make_meta(self) -> None:
        rng = self.rng
        for j in range(rng.randint(2, 5)):
            signed = rng.random() < 0.15
            self.meta.append((f"m{j}", Ty(random_width(rng, 2 if signed else 1), signed)))
        self.bools = [f"b{j}" for j in range(rng.choice([0, 1, 1, 2]))]

    def flags(self, valid: list[int]) -> list[Flag]:
        """Booleans code may read: the bool metadata, every header's
        validity and the bool fields of the headers ``valid``."""
        stack = [] if self.stack is None else [
            Flag(f"hdr.st[{k}].isValid()") for k in range(self.stack.size)]
        return [Flag(f"m.{b}") for b in self.bools] + [
            Flag(f"hdr.{h.name}.isValid()") for h in self.headers] + [
            Flag(name) for name in self.header_flags(valid)] + stack

    def exprs(self, names: list[Var], valid: list[int] = []) -> ExprGen:  # noqa: B006
        return ExprGen(self.rng, names, self.used, self.flags(valid))

    def meta_vars(self) -> list[Var]:
        return [Var(f"m.{n}", t) for n, t in self.meta]

    def types_text(self) -> str:
        out = []
        for h in self.headers:
            body = " ".join(f"{t.p4} {f};" for f, t in h.fields)
            out.append(f"header {h.name}_t {{ {body} }}")
        if self.stack is not None:
            body = " ".join(f"{t.p4} {f};" for f, t in self.stack.elem.fields)
            out.append(f"header s_t {{ {body} }}")
        inst = " ".join(f"{h.name}_t {h.name};" for h in self.headers)
        if self.stack is not None:
            inst += f" s_t[{self.stack.size}] st;"
        out.append(f"struct H {{ {inst} }}")
        meta = " ".join([f"{t.p4} {n};" for n, t in self.meta] + [f"bool {b};" for b in self.bools])
        out.append("struct M { " + meta + " @field_list(1) bit<8> rc; @field_list(2) bit<8> rs; "
                   + " ".join(self.decls) + " }")
        return "\n".join(out) + "\n"

    # ----------------------------------------------------------------- values

    def pool(self, v: Var) -> list[int]:
        """Values packets and entries both draw from, so entries hit."""
        got = self.pools.get(v.name)
        if got is None:
            got = [width_value(self.rng, v.ty.width) for _ in range(3)]
            self.pools[v.name] = got
        return got

    def value(self, v: Var) -> int:
        if self.rng.random() < 0.7:
            return self.rng.choice(self.pool(v))
        return width_value(self.rng, v.ty.width)

    # ----------------------------------------------------------------- parser

    def make_parser(self) -> str:
        """``start`` extracts h0; each state selects among later headers."""
        rng = self.rng
        n = len(self.headers)
        # The last header may stay unparsed: egress makes it valid itself.
        parsable = list(range(n)) if self.headers[-1].csum or rng.random() < 0.5 \
            else list(range(n - 1))
        self.parsed = parsable
        states = []
        for i in parsable:
            later = [j for j in parsable if j > i]
            name = "start" if i == 0 else f"parse_{self.headers[i].name}"
            states.append(f"    state {name} {{\n        pkt.extract(hdr.{self.headers[i].name});\n"
                          f"        transition {self._transition(i, later)}\n    }}")
        if self.stack is not None:
            states.append("    state parse_st {\n        pkt.extract(hdr.st.next);\n"
                          "        transition select(hdr.st.last.bos) { 8w1: accept; "
                          "default: parse_st; }\n    }")
        return ("parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {\n"
                + "\n".join(states) + "\n}\n")

    def _transition(self, i: int, later: list[int]) -> str:
        rng = self.rng
        into_stack = i == 0 and self.stack is not None
        if not later and not into_stack:
            return "accept;"
        targets = [f"parse_{self.headers[j].name}" for j in later] + ["accept"]
        if into_stack:
            targets.insert(0, "parse_st")
        if rng.random() < 0.15 and later:
            self.gotos[i] = rng.choice(later)
            return f"parse_{self.headers[self.gotos[i]].name};"
        vars_ = self.header_vars(i)
        if not vars_ and not later:
            return "accept;"
        if not vars_:  # bool fields alone
            self.gotos[i] = later[0]
            return f"parse_{self.headers[later[0]].name};"
        keys = rng.sample(vars_, 2 if len(vars_) > 1 and rng.random() < 0.3 else 1)
        self.note("select tuple" if len(keys) > 1 else "select")
        cases: list[tuple[list[tuple], str]] = []
        for _ in range(rng.randint(1, 3)):
            cases.append(([self._keyset(k) for k in keys], rng.choice(targets)))
        if rng.random() < 0.1:
            cases.append(([self._keyset(k) for k in keys], "reject"))
            self.note("reject")
        default = rng.choice(targets)
        self.selects[i] = (keys, cases + [([("any",)] * len(keys), default)])
        body = " ".join(f"{self._keyset_text(ks, keys)}: {to};" for ks, to in cases)
        sel = ", ".join(k.name for k in keys)
        return f"select({sel}) {{ {body} default: {default}; }}"

    def _keyset(self, k: Var) -> tuple:
        rng = self.rng
        w = k.ty.width
        pick = rng.random()
        if pick < 0.5 or w < 2:
            v = self.value(k)
            return ("value", v)
        if pick < 0.75 and not k.ty.signed:
            self.note("select mask")
            mask = rng.getrandbits(w) | 1 << rng.randrange(w)
            return ("mask", self.value(k) & mask, mask)
        if pick < 0.9 and not k.ty.signed:
            self.note("select range")
            a, b = sorted((self.value(k), self.value(k)))
            return ("range", a, b)
        return ("any",)

    @staticmethod
    def _keyset_text(keysets: list[tuple], keys: list[Var]) -> str:
        parts = []
        for ks, k in zip(keysets, keys):
            consts = [Const(v, k.ty).p4() for v in ks[1:]]
            if ks[0] == "value":
                parts.append(consts[0])
            elif ks[0] == "mask":
                parts.append(f"{consts[0]} &&& {consts[1]}")
            elif ks[0] == "range":
                parts.append(f"{consts[0]} .. {consts[1]}")
            else:
                parts.append("_")
        return parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")"

    # ------------------------------------------------------------- statements

    def scope_vars(self, valid: list[int], egress: bool = False) -> list[Var]:
        out = [v for i in valid for v in self.header_vars(i)] + self.meta_vars()
        std = [("ingress_port", 9), ("instance_type", 32)]
        if egress:
            std += [("egress_port", 9), ("egress_rid", 16)]
        out += [Var(f"sm.{n}", Ty(w)) for n, w in std]
        return out

    def writable(self, valid: list[int]) -> list[Var]:
        return [v for i in valid for v in self.header_vars(i)
                if v.name.rsplit(".", 1)[1] != "csum" or self.rng.random() < 0.3] \
            + self.meta_vars()

    def assign(self, gen: ExprGen, lhs: list[Var], out: _Block) -> None:
        rng = self.rng
        dst = rng.choice(lhs)
        w = dst.ty.width
        if not dst.ty.signed and w > 2 and rng.random() < 0.15:
            lo = rng.randrange(w - 1)
            hi = rng.randint(lo, w - 1)
            self.note("slice assignment")
            out.add(f"{dst.name}[{hi}:{lo}] = {gen.expr(Ty(hi - lo + 1)).p4()};")
            return
        self.note("assignment")
        out.add(f"{dst.name} = {gen.expr(dst.ty).p4()};")

    def statements(self, valid: list[int], out: _Block, count: int, egress: bool = False,
                   params: list[Var] = (), depth: int = 2) -> None:  # type: ignore[assignment]
        """``count`` random statements over the fields of headers ``valid``."""
        rng = self.rng
        gen = self.exprs(self.scope_vars(valid, egress) + list(params), valid)
        lhs = self.writable(valid)
        for _ in range(count):
            pick = rng.random()
            if pick < 0.15 and depth > 0:
                self.note("if")
                out.open(f"if {gen.cond().p4()}")
                self.statements(valid, out, rng.randint(1, 2), egress, params, depth - 1)
                if rng.random() < 0.5:
                    out.close(" else {")
                    out.depth += 1
                    self.statements(valid, out, 1, egress, params, depth - 1)
                out.close()
            elif pick < 0.25 and depth > 0:
                others = [i for i in self.parsed if i not in valid]
                if others:
                    i = rng.choice(others)
                    out.open(f"if (hdr.{self.headers[i].name}.isValid())")
                    self.statements(valid + [i], out, rng.randint(1, 2), egress, params,
                                    depth - 1)
                    out.close()
            elif pick < 0.32:
                self.hash(gen, lhs, out)
            elif pick < 0.38 and (self.bools or self.header_flags(valid)):
                self.note("bool assignment")
                dst = rng.choice([f"m.{b}" for b in self.bools] + self.header_flags(valid))
                out.add(f"{dst} = {gen.cond().p4()};")
            elif pick < 0.46:
                local = self.local(gen, out)
                lhs = lhs + [local]
            else:
                self.assign(gen, lhs, out)

    def local(self, gen: ExprGen, out: _Block) -> Var:
        """A local variable, initialized; later statements of the block
        read and write it."""
        rng = self.rng
        signed = rng.random() < 0.15
        v = Var(self.fresh("l"), Ty(random_width(rng, 2 if signed else 1), signed))
        self.note("local")
        out.add(f"{v.ty.p4} {v.name} = {gen.expr(v.ty).p4()};")
        gen.names.append(v)
        return v

    HASHES = ("crc16", "crc32", "csum16", "identity", "xor16")

    def hash(self, gen: ExprGen, lhs: list[Var], out: _Block) -> None:
        """``hash()`` of a few fields (whole bytes or not) into a field."""
        rng = self.rng
        dst = rng.choice(lhs)
        algo = rng.choice(self.HASHES)
        self.note("hash " + algo)
        data = ", ".join(v.name for v in rng.sample(gen.names, min(len(gen.names),
                                                                     rng.randint(1, 3))))
        bw = rng.choice([16, 32])
        base = Const(rng.choice([0, 0, 1, rng.getrandbits(8)]), Ty(bw))
        most = Const(rng.choice([1 << rng.randint(1, bw - 1), rng.randint(1, (1 << bw) - 1),
                                 (1 << bw) - 1]), Ty(bw))
        out.add(f"hash({dst.name}, HashAlgorithm.{algo}, {base.p4()}, {{ {data} }}, "
                f"{most.p4()});")

    def guarded(self, body: _Block, count: int, egress: bool = False) -> None:
        """``count`` statements over h0's fields, run where h0 is valid."""
        if count:
            body.open("if (hdr.h0.isValid())")
            self.statements([0], body, count, egress)
            body.close()

    # ----------------------------------------------------------------- tables

    def make_table(self, control: _Block, body: _Block, valid: list[int],
                   egress: bool = False) -> None:
        """A table's actions and declaration in ``control``, its apply in
        ``body``, its entries in ``self.entries``."""
        rng = self.rng
        prefix = "E" if egress else "I"
        name = self.fresh("t")
        vars_ = [v for v in self.scope_vars(valid, egress) if v.name != "sm.instance_type"]
        nkeys = rng.randint(1, min(3, len(vars_)))
        keys: list[tuple[Var, str]] = []
        kinds = ["exact", "exact", "ternary", "lpm", "range"]
        for v in rng.sample(vars_, nkeys):
            kind = rng.choice(kinds)
            if kind == "lpm":
                kinds.remove("lpm")  # one lpm key a table
            if kind == "range" and v.ty.signed:
                kind = "ternary"  # a range of int<W> is not one of its bit-strings
            keys.append((v, kind))
            self.note("key " + kind)
            if v.name.startswith("m."):
                self.note("metadata key")
        actions = [self.make_action(control, valid, egress) for _ in range(rng.randint(1, 3))]
        ternary = any(k in ("ternary", "range") for _, k in keys)
        table = _Table(f"{prefix}.{name}", keys, actions, ternary)
        self.tables.append(table)
        self._declare_table(control, name, table)
        self._apply_table(body, name, table, valid, egress)
        self._entries(table)

    def make_action(self, control: _Block, valid: list[int], egress: bool) -> tuple[str, list[Ty]]:
        rng = self.rng
        name = self.fresh("a")
        ptys = [Ty(random_width(rng)) for _ in range(rng.randint(0, 3))]
        params = [Var(f"p{j}", t) for j, t in enumerate(ptys)]
        self.note("action params", len(params))
        control.open(f"action {name}(" + ", ".join(f"{t.p4} p{j}" for j, t in
                                                    enumerate(ptys)) + ")")
        self.statements(valid, control, rng.randint(1, 3), egress, params, depth=1)
        extra = rng.random()
        if extra < 0.2:
            self.note("mark_to_drop")
            control.add("mark_to_drop(sm);")
        elif extra < 0.45 and not egress:
            self.note("forward")
            control.add(f"sm.egress_spec = 9w{rng.randint(0, 3)};")
        elif extra < 0.55 and not egress:
            self.clone(control, "I2E")
        elif extra < 0.62 and not egress:
            self.note("multicast")
            control.add(f"sm.mcast_grp = 16w{rng.choice([1, 1, 2, 3])};")
        control.close()
        return name, ptys

    def clone(self, out: _Block, kind: str) -> None:
        rng = self.rng
        session = rng.choice([1, 2, 3, 3, 4])
        if rng.random() < 0.5:
            self.note(f"clone {kind} preserving")
            out.add(f"clone_preserving_field_list(CloneType.{kind}, 32w{session}, 8w1);")
        else:
            self.note(f"clone {kind}")
            out.add(f"clone(CloneType.{kind}, 32w{session});")

    def _declare_table(self, control: _Block, name: str, table: _Table) -> None:
        rng = self.rng
        counters = rng.random() < 0.35
        if counters:
            self.note("direct counter")
            control.add(f"direct_counter(CounterType.packets_and_bytes) {name}_c;")
        control.open(f"table {name}")
        keys = " ".join(f"{v.name}: {k};" for v, k in table.keys)
        control.add(f"key = {{ {keys} }}")
        control.add("actions = { " + " ".join(a + ";" for a, _ in table.actions)
                    + " NoAction; }")
        action, ptys = rng.choice(table.actions + [("NoAction", [])])
        args = ", ".join(Const(width_value(rng, t.width), t).p4() for t in ptys)
        control.add(f"default_action = {action}({args});")
        if counters:
            control.add(f"counters = {name}_c;")
        control.add("size = 64;")
        control.close()

    def _apply_table(self, body: _Block, name: str, table: _Table, valid: list[int],
                     egress: bool) -> None:
        rng = self.rng
        guard = " && ".join(f"hdr.{self.headers[i].name}.isValid()" for i in valid)
        body.open(f"if ({guard})")
        form = rng.random()
        if form < 0.4:
            self.note("apply")
            body.add(f"{name}.apply();")
        elif form < 0.7:
            self.note("hit/miss")
            body.open(f"if ({name}.apply().{rng.choice(['hit', 'miss'])})")
            self.statements(valid, body, 1, egress, depth=0)
            body.close()
        else:
            self.note("action_run")
            body.open(f"switch ({name}.apply().action_run)")
            first = table.actions[0][0]
            body.open(f"{first}:")
            self.statements(valid, body, 1, egress, depth=0)
            body.close()
            body.open("default:")
            self.statements(valid, body, 1, egress, depth=0)
            body.close()
            body.close()
        if rng.random() < 0.15:
            self.note("direct action call")
            action, ptys = rng.choice(table.actions)
            args = ", ".join(Const(width_value(rng, t.width), t).p4() for t in ptys)
            body.add(f"{action}({args});")
        body.close()

    def _entries(self, table: _Table) -> None:
        rng = self.rng
        seen = set()
        for n in range(rng.randint(0, 6)):
            keys = {}
            for v, kind in table.keys:
                keys[v.name] = self._key(v, kind)
            ident = tuple(sorted(keys.items()))
            if ident in seen:
                continue
            seen.add(ident)
            action, ptys = rng.choice(table.actions)
            args = [width_value(rng, t.width) for t in ptys]
            prio = 100 - n if table.ternary else None
            self.entries.append(TableEntry(table.name, keys, action, args, prio))
        if rng.random() < 0.25:
            self.note("set default")
            action, ptys = rng.choice(table.actions)
            args = [width_value(rng, t.width) for t in ptys]
            self.entries.append(TableEntry(table.name, {}, action, args, default=True))

    def _key(self, v: Var, kind: str) -> tuple:
        rng, w = self.rng, v.ty.width
        value = self.value(v)
        if kind == "exact":
            return ("exact", value)
        if kind == "lpm":
            plen = rng.randint(0, w)
            keep = ((1 << w) - 1) ^ ((1 << (w - plen)) - 1)
            return ("lpm", value & keep, plen)
        if kind == "range":
            spread = rng.choice([0, 1, rng.getrandbits(max(1, w // 2))])
            return ("range", max(0, value - spread), min((1 << w) - 1, value + spread))
        mask = rng.choice([(1 << w) - 1, rng.getrandbits(w), 0])
        return ("ternary", value & mask, mask)

    # --------------------------------------------------------------- controls

    def ingress(self) -> str:
        rng = self.rng
        control, body = _Block(), _Block()
        body.depth = 2
        body.add(f"sm.egress_spec = 9w{rng.randint(0, 3)};")
        self.guarded(body, rng.randint(1, 3))
        for _ in range(rng.randint(1, 3)):
            extra = [i for i in self.parsed[1:] if rng.random() < 0.3]
            self.make_table(control, body, [0] + extra)
        self.guarded(body, rng.randint(0, 3))
        self.stack_code(body)
        self.maybe_exit(body)
        if rng.random() < 0.7:
            self.register(control, body, [0])
        if rng.random() < 0.6:
            self.counter(control, body, [0])
        if any(h.csum for h in self.headers):
            self.note("checksum_error read")
            body.open("if (sm.checksum_error == 1w1)")
            self.statements([], body, 1, depth=0)
            body.close()
        if rng.random() < 0.3:
            self.clone(body, "I2E")
        if rng.random() < 0.25:
            self.note("resubmit")
            # Only a packet as it first came in: a recirculated one keeps
            # m.rc alone (field list 1), so a resubmit of it would forget it.
            cond = self.exprs(self.scope_vars([])).cond().p4()
            body.open(f"if (sm.instance_type == 32w0 && m.rs == 8w0 && {cond})")
            body.add("m.rs = 8w1;")
            body.add("resubmit_preserving_field_list(8w2);")
            body.close()
        self._valid_changes(body)
        return ("control I(inout H hdr, inout M m, inout standard_metadata_t sm) {\n"
                + control.text + "\n    apply {\n" + body.text + "\n    }\n}\n")

    def stack_code(self, body: _Block, egress: bool = False) -> None:
        """Uses of the header stack: fields of valid elements (at constant
        indices or, in a stack of 2**k, at one computed at run time),
        push_front and pop_front, elements made invalid or valid anew."""
        if self.stack is None:
            return
        rng = self.rng
        size = self.stack.size
        for _ in range(rng.randint(1, 3)):
            pick = rng.random()
            elem = f"hdr.st[{rng.randrange(size)}]"
            if pick < 0.2 and size & (size - 1) == 0:
                self.note("stack index at run time")
                gen = self.exprs(self.scope_vars([], egress))
                index = gen.expr(Ty(size.bit_length() - 1), 1)
                elem = f"hdr.st[(bit<32>){index.p4()}]"
            fields = [Var(f"{elem}.{f}", t) for f, t in self.stack.elem.fields]
            if pick < 0.55:
                self.note("stack element")
                numeric = [v for v in fields if not v.ty.boolean]
                gen = self.exprs(self.scope_vars([], egress) + numeric)
                body.open(f"if ({elem}.isValid())")
                for _ in range(rng.randint(1, 2)):
                    self.assign(gen, numeric, body)
                body.close()
            elif pick < 0.67:
                op = rng.choice(["push_front", "pop_front"])
                self.note("stack " + op)
                body.add(f"hdr.st.{op}({rng.randint(1, 2)});")
            elif pick < 0.84:
                self.note("stack setInvalid")
                body.add(f"{elem}.setInvalid();")
            else:
                self.note("stack setValid")
                gen = self.exprs(self.scope_vars([], egress))
                body.open(f"if (!{elem}.isValid())")
                body.add(f"{elem}.setValid();")
                for v in fields:
                    value = gen.cond(1) if v.ty.boolean else gen.expr(v.ty, 2)
                    body.add(f"{v.name} = {value.p4()};")
                body.close()

    def maybe_exit(self, body: _Block, egress: bool = False) -> None:
        """Sometimes ``exit`` under a condition: the rest of the control is skipped."""
        if self.rng.random() < 0.15:
            self.note("exit")
            body.open(f"if {self.exprs(self.scope_vars([], egress)).cond().p4()}")
            body.add("exit;")
            body.close()

    def register(self, control: _Block, body: _Block, valid: list[int]) -> None:
        """Read, change and write one cell at an index computed in range."""
        rng = self.rng
        name = self.fresh("r")
        signed = rng.random() < 0.2
        ty = Ty(random_width(rng, 2 if signed else 1), signed)
        bits = rng.randint(1, 4)
        self.note("signed register" if signed else "register")
        control.add(f"register<{ty.p4}>({1 << bits}) {name};")
        tmp = f"{name}_v"
        self.decls.append(f"{ty.p4} {tmp};")
        gen = self.exprs(self.scope_vars(valid) + [Var(f"m.{tmp}", ty)], valid)
        index = f"((bit<32>){gen.expr(Ty(bits), 2).p4()})"
        guard = " && ".join(f"hdr.{self.headers[i].name}.isValid()" for i in valid)
        body.open(f"if ({guard})")
        body.add(f"{name}.read(m.{tmp}, {index});")
        body.add(f"m.{tmp} = {gen.expr(ty).p4()};")
        body.add(f"{name}.write({index}, m.{tmp});")
        body.close()

    def counter(self, control: _Block, body: _Block, valid: list[int]) -> None:
        rng = self.rng
        name = self.fresh("c")
        bits = rng.randint(1, 3)
        self.note("counter")
        control.add(f"counter({1 << bits}, CounterType.packets_and_bytes) {name};")
        gen = self.exprs(self.scope_vars(valid), valid)
        guard = " && ".join(f"hdr.{self.headers[i].name}.isValid()" for i in valid)
        body.open(f"if ({guard})")
        body.add(f"{name}.count((bit<32>){gen.expr(Ty(bits), 2).p4()});")
        body.close()

    def _valid_changes(self, body: _Block) -> None:
        """A header made invalid (its fields are read no more afterwards)."""
        rng = self.rng
        if rng.random() < 0.3 and len(self.parsed) > 1:
            h = self.headers[rng.choice(self.parsed[1:])]
            if h.csum is None:
                self.note("setInvalid")
                gen = self.exprs(self.meta_vars())
                body.open(f"if {gen.cond().p4()}")
                body.add(f"hdr.{h.name}.setInvalid();")
                body.close()

    def egress(self) -> str:
        rng = self.rng
        control, body = _Block(), _Block()
        body.depth = 2
        self.guarded(body, rng.randint(0, 2), egress=True)
        if rng.random() < 0.5:
            self.make_table(control, body, [0], egress=True)
        if rng.random() < 0.5:
            self.stack_code(body, egress=True)
        self.maybe_exit(body, egress=True)
        if rng.random() < 0.1:
            self.note("truncate")
            body.add(f"truncate(32w{rng.randint(1, 40)});")
        if rng.random() < 0.3:
            body.open("if (sm.instance_type == 32w0)")
            self.clone(body, "E2E")
            body.close()
        unparsed = [i for i in range(len(self.headers)) if i not in self.parsed]
        for i in unparsed:
            self._make_valid(body, i)
        if rng.random() < 0.3:
            self.note("recirculate")
            gen = self.exprs(self.scope_vars([], True))
            # Clones (instance types 1 and 2 here) never recirculate: a
            # plain clone's m.rc is 0 again, and a recirculated packet's
            # instance type in egress is 0, as any unicast packet's.
            body.open(f"if (sm.instance_type == 32w0 && m.rc < 8w{RECIRC_BOUND} && "
                      f"{gen.cond().p4()})")
            body.add("m.rc = m.rc + 8w1;")
            body.add("recirculate_preserving_field_list(8w1);")
            body.close()
        return ("control E(inout H hdr, inout M m, inout standard_metadata_t sm) {\n"
                + control.text + "\n    apply {\n" + body.text + "\n    }\n}\n")

    def _make_valid(self, body: _Block, i: int) -> None:
        """setValid with every field assigned (a new header holds nothing else)."""
        h = self.headers[i]
        gen = self.exprs(self.scope_vars([], True))
        self.note("setValid")
        body.open(f"if (!hdr.{h.name}.isValid())")
        body.add(f"hdr.{h.name}.setValid();")
        for v in self.header_vars(i, bools=True):
            value = gen.cond(1) if v.ty.boolean else gen.expr(v.ty, 2)
            body.add(f"{v.name} = {value.p4()};")
        body.close()

    def checksums(self) -> tuple[str, str]:
        verify, update = [], []
        for h in self.headers:
            if h.csum is None:
                continue
            data = ", ".join(f"hdr.{h.name}.{f}" for f, _ in h.fields if f != h.csum)
            args = (f"hdr.{h.name}.isValid(), {{ {data} }}, hdr.{h.name}.{h.csum}, "
                    "HashAlgorithm.csum16")
            # Over the payload too (a UDP or TCP checksum's way), sometimes.
            tail = "_with_payload" if self.rng.random() < 0.3 else ""
            self.note("checksum" + tail)
            verify.append(f"        verify_checksum{tail}({args});")
            update.append(f"        update_checksum{tail}({args});")
        def control(name: str, lines: list[str]) -> str:
            return (f"control {name}(inout H hdr, inout M m) {{\n    apply {{\n"
                    + "\n".join(lines) + "\n    }\n}\n")
        return control("V", verify), control("C", update)

    def deparser(self) -> str:
        order = list(range(len(self.headers)))
        self.rng.shuffle(order)
        if order != sorted(order):
            self.note("deparser reordered")
        names = [self.headers[i].name for i in order]
        if self.stack is not None:
            names.insert(self.rng.randint(0, len(names)), "st")
        emits = " ".join(f"pkt.emit(hdr.{n});" for n in names)
        return f"control D(packet_out pkt, in H hdr) {{\n    apply {{ {emits} }}\n}}\n"

    # ---------------------------------------------------------------- packets

    def packet(self) -> tuple[int, bytes]:
        """Headers along a random path of the parser, then a payload."""
        rng = self.rng
        data = b""
        i: int | None = 0
        while i is not None:
            if i == STACK:
                data += self.stack_bytes()
                break
            h = self.headers[i]
            values = {f"hdr.{h.name}.{f}": self.value(Var(f"hdr.{h.name}.{f}", t))
                      for f, t in h.fields}
            i = self._next_state(i, values)
            if h.csum is not None and rng.random() < 0.6:
                others = [(t.width, values[f"hdr.{h.name}.{f}"]) for f, t in h.fields
                          if f != h.csum]
                values[f"hdr.{h.name}.{h.csum}"] = csum16(others)
            data += pack([(t.width, values[f"hdr.{h.name}.{f}"]) for f, t in h.fields])
        data += bytes(rng.randrange(256) for _ in range(rng.randint(0, 10)))
        if rng.random() < 0.08:  # cut short (never empty: STF has no empty packet)
            data = data[:rng.randint(1, len(data))]
        return rng.randint(0, 3), data

    def _next_state(self, i: int, values: dict[str, int]) -> int | None:
        """Set the select keys for a randomly chosen case; the next header."""
        sel = self.selects.get(i)
        if sel is None:
            return self.gotos.get(i)
        keys, cases = sel
        keysets, target = self.rng.choice(cases)
        for k, ks in zip(keys, keysets):
            values[k.name] = self._satisfy(k, ks, values[k.name])
        if target in ("accept", "reject"):
            return None
        if target == "parse_st":
            return STACK
        return next(j for j, h in enumerate(self.headers) if target == f"parse_{h.name}")

    def stack_bytes(self) -> bytes:
        """1..size elements, the last with bos 1; sometimes one too many
        (the parser then stops with StackOutOfBounds)."""
        rng = self.rng
        assert self.stack is not None
        count = rng.randint(1, self.stack.size + (rng.random() < 0.15))
        out = b""
        for n in range(count):
            values = [(t.width, int(n == count - 1) if f == "bos" else
                       width_value(rng, t.width)) for f, t in self.stack.elem.fields]
            out += pack(values)
        return out

    def _satisfy(self, k: Var, ks: tuple, current: int) -> int:
        rng = self.rng
        if ks[0] == "value":
            return ks[1]
        if ks[0] == "mask":
            return ks[1] | (rng.getrandbits(k.ty.width) & ~ks[2])
        if ks[0] == "range":
            return rng.randint(ks[1], ks[2])
        return current

    # ------------------------------------------------------------------- case

    def case(self, packets: int = 40) -> Case:
        self.make_headers()
        self.make_meta()
        parser = self.make_parser()
        ingress = self.ingress()
        egress = self.egress()
        verify, compute = self.checksums()
        deparser = self.deparser()
        program = ("#include <core.p4>\n#include <v1model.p4>\n" + self.types_text() + parser
                   + verify + ingress + egress + compute + deparser
                   + "V1Switch(P(), V(), I(), E(), C(), D()) main;\n")
        pkts = [self.packet() for _ in range(packets)]
        return Case(self.seed, program, self.entries, dict(SESSIONS), pkts, self.used,
                    dict(MULTICAST))


def generate(seed: int, packets: int = 40) -> Case:
    """The case of ``seed``: program, entries, sessions and packets."""
    return Generator(seed).case(packets)


# ------------------------------------------------------------------- arithmetic


def arith_case(seed: int, packets: int = 30) -> Case:
    """Inputs in one header, outputs of random expressions in another (some
    then written in part through a slice); the expected output of every
    packet computed by ``Expr.eval``."""
    rng = random.Random(seed)
    used: dict[str, int] = {}
    ins = Generator(seed)._header("in", rng.randint(2, 6))
    inputs = [Var(f"hdr.i.{f}", t) for f, t in ins.fields]
    gen = ExprGen(rng, [v for v in inputs if not v.ty.boolean], used)
    results: list[tuple[str, Ty, Expr]] = []
    slices: list[tuple[int, int, int, Expr]] = []  # result, hi, lo, value
    for j in range(rng.randint(3, 8)):
        signed = rng.random() < 0.2
        ty = Ty(random_width(rng, 2 if signed else 1), signed)
        results.append((f"r{j}", ty, gen.expr(ty, rng.randint(1, 4))))
        if not signed and ty.width > 2 and rng.random() < 0.3:
            lo = rng.randrange(ty.width - 1)
            hi = rng.randint(lo, ty.width - 1)
            slices.append((j, hi, lo, gen.expr(Ty(hi - lo + 1), 2)))
            used["slice assignment"] = used.get("slice assignment", 0) + 1
    pad = -sum(t.width for _, t, _ in results) % 8
    out_fields = [(n, t) for n, t, _ in results] + ([("pad", Ty(pad))] if pad else [])
    lines = [f"        hdr.o.{n} = {e.p4()};" for n, _, e in results]
    lines += [f"        hdr.o.r{j}[{hi}:{lo}] = {e.p4()};" for j, hi, lo, e in slices]
    if pad:
        lines.append(f"        hdr.o.pad = {pad}w0;")
    program = arith_program(ins, out_fields, lines)
    cases, expected = [], []
    for _ in range(packets):
        env = {v.name: width_value(rng, v.ty.width) for v in inputs}
        head = pack([(v.ty.width, env[v.name]) for v in inputs])
        payload = bytes(rng.randrange(256) for _ in range(rng.randint(0, 4)))
        values = [e.eval(env) for _, _, e in results]
        for j, hi, lo, e in slices:
            keep = ((1 << (hi - lo + 1)) - 1) << lo
            values[j] = values[j] & ~keep | (e.eval(env) << lo) & keep
        out = pack([(t.width, v) for (_, t, _), v in zip(results, values)]
                   + ([(pad, 0)] if pad else []))
        cases.append((0, head + payload))
        expected.append(head + out + payload)
    return Case(seed, program, [], {}, cases, used, {}, expected)


def arith_program(ins: Header, out_fields: list[tuple[str, Ty]], lines: list[str]) -> str:
    types = (f"header in_t {{ {' '.join(f'{t.p4} {f};' for f, t in ins.fields)} }}\n"
             f"header out_t {{ {' '.join(f'{t.p4} {f};' for f, t in out_fields)} }}\n"
             "struct H { in_t i; out_t o; }\nstruct M { }\n")
    return ("#include <core.p4>\n#include <v1model.p4>\n" + types
            + "parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {\n"
            "    state start { pkt.extract(hdr.i); transition accept; }\n}\n"
            "control V(inout H hdr, inout M m) { apply { } }\n"
            "control I(inout H hdr, inout M m, inout standard_metadata_t sm) {\n"
            "    apply {\n        sm.egress_spec = 9w1;\n        hdr.o.setValid();\n"
            + "\n".join(lines) + "\n    }\n}\n"
            "control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }\n"
            "control C(inout H hdr, inout M m) { apply { } }\n"
            "control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.o); } }\n"
            "V1Switch(P(), V(), I(), E(), C(), D()) main;\n")


# ------------------------------------------------------------------------ STF


def stf_key(spec: tuple) -> str:
    if spec[0] == "exact":
        return str(spec[1])
    if spec[0] == "lpm":
        return f"{spec[1]}/{spec[2]}"
    if spec[0] == "range":
        return f"{spec[1]}->{spec[2]}"
    return f"{spec[1]}&&&{spec[2]}"


def stf_text(case: Case, outputs: list[list[tuple[int, bytes]]]) -> str:
    """The case as an STF test whose expectations are ``outputs`` (each
    packet's, as intbed's engine emitted them)."""
    lines = [f"# p4gen seed {case.seed}: a generated program; expectations from intbed's engine"]
    lines += [f"mirroring_add {s} {p}" for s, p in case.mirrors.items()]
    handle = 0
    for group, nodes in case.multicast.items():
        lines.append(f"mc_mgrp_create {group}")
        for rid, ports in nodes:
            lines.append(f"mc_node_create {rid} " + " ".join(map(str, ports)))
            lines.append(f"mc_node_associate {group} {handle}")
            handle += 1
    for e in case.entries:
        keys = " ".join(f"{k}:{stf_key(v)}" for k, v in e.keys.items())
        prio = f" {e.priority}" if e.priority is not None else ""
        call = f"{e.action}(" + ", ".join(f"p{j}:{a}" for j, a in enumerate(e.args)) + ")"
        if e.default:
            lines.append(f"setdefault {e.table} {call}")
        else:
            lines.append(f"add {e.table}{prio} {keys} {call}")
    for (port, data), outs in zip(case.packets, outputs):
        lines.append(f"packet {port} {data.hex()}")
        lines += [f"expect {p} {d.hex()} $" for p, d in outs]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """Write ``p4gen_SEED.p4`` and ``.stf`` for each seed into DIR."""
    from p4gen_run import outputs_of

    if len(argv) < 2:
        print("usage: python p4gen.py DIR SEED...", file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for seed in map(int, argv[1:]):
        case = generate(seed)
        p4 = out / f"p4gen_{seed}.p4"
        p4.write_text(case.program)
        (out / f"p4gen_{seed}.stf").write_text(stf_text(case, outputs_of(case, p4)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
