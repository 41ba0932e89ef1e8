"""Spec 7.2.11 and 8.24, externs: constructor and method arguments, type
arguments inferred from them, out arguments, and the core and v1model
extern functions; externs a program declares itself."""

from __future__ import annotations

from pathlib import Path

from tests.typecheck.pairs import Pair, check, parametrize

REG = {"LOCALS": "register<bit<8>>(4) r;"}
CKS = {"TOP": "extern Cks { Cks(); bit<16> get(in bit<8> d, @optional in bool z); }",
       "LOCALS": "Cks() ck;"}
OBJECTS = "7.2.11.2 Extern objects"
FUNCTIONS = "7.2.11.1 Extern functions"
METHODS = "8.24 Operations on extern objects"
DEPARSE = "16.1 Data insertion into packets"

PAIRS = [
    Pair(OBJECTS, "a constructor takes its parameters' types", "LOCALS",
         "register<bit<8>>(4) r;", "register<bit<8>>(true) r;", "cannot use a bool"),
    Pair(OBJECTS, "a constructor has an overload for the arguments", "LOCALS",
         "register<bit<8>>(4) r;", "register<bit<8>>(4, 5, 6) r;",
         "no declaration of 'register constructor'"),
    Pair(OBJECTS, "a constructor call in an expression takes its parameters' types",
         "LOCALS", "table t { key = { m.x: exact; } actions = { NoAction; } "
         "implementation = action_profile(32); }",
         "table t { key = { m.x: exact; } actions = { NoAction; } "
         "implementation = action_profile(true); }", "cannot use a bool",
         shared={"APPLY": "t.apply();"}),
    Pair(METHODS, "a method's out argument is assignable", "APPLY",
         "r.read(m.x, 1);", "r.read(8w1, 1);", "not assignable", shared=REG),
    Pair(METHODS, "a method's argument takes the instance's type", "APPLY",
         "r.write(1, m.x);", "r.write(1, m.y);", "bit<16> to bit<8>", shared=REG),
    Pair(METHODS, "a method exists for the argument count", "APPLY",
         "r.write(1, m.x);", "r.write(1);", "takes these 1 argument(s)", shared=REG),
    Pair(METHODS, "a method's named argument names a parameter", "APPLY",
         "r.write(index = 1, value = m.x);", "r.write(index = 1, val = m.x);",
         "no declaration of 'register.write'", shared=REG),
    Pair(FUNCTIONS, "a type argument is bound once for all arguments", "APPLY",
         "random(m.x, 8w0, 8w255);", "random(m.x, 8w0, 16w255);", "bit<16> to bit<8>"),
    Pair(FUNCTIONS, "an int argument alone gives a type variable no width", "APPLY",
         "hash(m.y, HashAlgorithm.crc16, 16w0, { m.x }, 16w1024);",
         "hash(m.y, HashAlgorithm.crc16, 0, { m.x }, 16w1024);",
         "could not infer a width"),
    Pair(FUNCTIONS, "an enum argument takes its enum", "APPLY",
         "hash(m.y, HashAlgorithm.crc16, 16w0, { m.x }, 16w1024);",
         "hash(m.y, CounterType.packets, 16w0, { m.x }, 16w1024);",
         "cannot use a value of type CounterType as HashAlgorithm"),
    Pair(FUNCTIONS, "an inout argument has the parameter's type", "APPLY",
         "mark_to_drop(sm);", "mark_to_drop(m);", "cannot use a value of type M"),
    Pair(FUNCTIONS, "an extern function is declared", "APPLY",
         "mark_to_drop(sm);", "drop_it(sm);", "'drop_it': declaration not found"),
    Pair(FUNCTIONS, "static_assert fails on a false condition", "TOP",
         "const bool ok = static_assert(8 > 1);", "const bool ok = static_assert(1 > 8);",
         "static assertion failed"),
    Pair(OBJECTS, "a program's own extern leaves out no optional argument", "APPLY",
         "m.y = ck.get(m.x, true);", "m.y = ck.get(m.x);", "leaves out an optional parameter",
         shared=CKS, unsupported=True),
    Pair(OBJECTS, "a register holds bit-strings on BMv2", "LOCALS",
         "register<bit<8>>(4) r;", "register<M2>(4) r;", "a register of M2",
         shared={"TOP": "struct M2 { bit<8> a; }"}, unsupported=True),
    Pair(FUNCTIONS, "a program's own extern function does not take a name BMv2 has",
         "TOP", "extern void my_random(out bit<8> r);", "extern void random(out bit<8> r);",
         "the program's own extern function 'random'", unsupported=True),
    Pair(FUNCTIONS, "a program's own generic extern is not run", "APPLY",
         "m.x = idx2(m.x);", "m.x = idx(m.x);", "the program's own generic extern idx",
         shared={"TOP": "extern bit<8> idx<D>(in D d); extern bit<8> idx2(in bit<8> d);"},
         unsupported=True),
    Pair(OBJECTS, "a program's own extern passes back no headers", "APPLY",
         "hx.fill2(m.x);", "hx.fill(hdr.h);", "a result holding headers", unsupported=True,
         shared={"TOP": "extern Hx { Hx(); void fill(out h_t x); void fill2(out bit<8> x); }",
                 "LOCALS": "Hx() hx;"}),
    Pair(DEPARSE, "emit takes headers, stacks, unions and structs of them", "TOP",
         "control D2(packet_out b, in H h) { apply { b.emit(h.h); } }",
         "control D2(packet_out b, in H h) { apply { b.emit(h.h.a); } }", "emit takes a header"),
    Pair("13.8.1 Fixed-width extraction", "extract takes a header", "TOP",
         "parser P2(packet_in b, out H h) { state start { b.extract(h.h); transition accept; } }",
         "parser P2(packet_in b, out H h) { state start { b.extract(h); transition accept; } }",
         "extract takes a header"),
]


@parametrize(PAIRS)
def test_rule(pair: Pair, tmp_path: Path) -> None:
    check(pair, tmp_path)
