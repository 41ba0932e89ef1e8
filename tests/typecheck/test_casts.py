"""Spec 8.12, casts: which explicit casts exist (as p4c's table has
them), which conversions happen implicitly, and the arithmetic that no
conversion rescues."""

from __future__ import annotations

from pathlib import Path

from tests.typecheck.pairs import Pair, check, parametrize

ENUMS = {"TOP": "enum E1 { A, B } enum bit<8> E2 { A = 1, B = 2 }"}
EXPLICIT = "8.12.1 Explicit casts"
IMPLICIT = "8.12.2 Implicit casts"
ILLEGAL = "8.12.3 Illegal arithmetic expressions"

PAIRS = [
    Pair(EXPLICIT, "only a bit<1> casts to bool", "APPLY",
         "m.f = (bool)hdr.h.a[0:0];", "m.f = (bool)hdr.h.a;", "cannot cast bit<8> to bool"),
    Pair(EXPLICIT, "a signed value does not cast to bool", "APPLY",
         "m.f = (bool)hdr.h.a[1:1];", "m.f = (bool)(int<1>)hdr.h.a[1:1];",
         "cannot cast int<1> to bool"),
    Pair(EXPLICIT, "width and signedness change one at a time", "APPLY",
         "m.i = (int<8>)hdr.h.a;", "m.i = (int<8>)hdr.h.c;",
         "width and signedness both change"),
    Pair(EXPLICIT, "only 0 and 1 cast to bool", "APPLY",
         "m.f = (bool)1;", "m.f = (bool)2;", "only 0 and 1 cast to bool"),
    Pair(EXPLICIT, "a bool casts to no signed type", "APPLY",
         "hdr.h.a[0:0] = (bit<1>)m.f;", "m.i = (int<8>)m.f;", "cannot cast bool to int<8>"),
    Pair(EXPLICIT, "a bool casts to bit<1> only (p4c)", "APPLY",
         "m.x = (bit<8>)(bit<1>)m.f;", "m.x = (bit<8>)m.f;",
         "a bool casts only to bit<1>"),
    Pair(EXPLICIT, "an enum without a type casts to nothing", "APPLY",
         "m.f = E1.A == E1.B;", "m.x = (bit<8>)E1.A;", "cannot cast E1 to bit<8>",
         shared=ENUMS),
    Pair(EXPLICIT, "a serializable enum casts to its own type", "APPLY",
         "m.x = (bit<8>)E2.A;", "m.y = (bit<16>)E2.A;", "underlying type is bit<8>",
         shared=ENUMS),
    Pair(EXPLICIT, "a bit-string casts to an enum over its type", "APPLY",
         "E2 v = (E2)m.x;", "E2 v = (E2)m.y;", "underlying type is bit<8>", shared=ENUMS),
    Pair(EXPLICIT, "an error casts to nothing", "APPLY",
         "m.f = m.e == error.NoError;", "m.x = (bit<8>)m.e;", "cannot cast error to bit<8>"),
    Pair(EXPLICIT, "a header does not cast to a bit-string", "APPLY",
         "m.z = hdr.g.w;", "m.z = (bit<32>)hdr.g;", "cannot cast g_t to bit<32>"),
    Pair(EXPLICIT, "a cast to a struct takes its fields", "APPLY",
         "hdr.h = (h_t){ a = 1, b = 2, c = 3 };", "hdr.h = (h_t){ a = 1, b = 2 };",
         "field 'c' of h_t is not initialised"),
    Pair(EXPLICIT, "a run-time value cast to int is not run", "APPLY",
         "m.x = (bit<8>)((int)8w3 + 1);", "m.x = (bit<8>)((int)m.x + 1);",
         "cast of a run-time value to int", unsupported=True),
    Pair(IMPLICIT, "an int converts to a bit-string", "APPLY",
         "m.y = 5;", "m.y = m.x;", "cannot assign a value of type bit<8> to bit<16>"),
    Pair(IMPLICIT, "bit<W> and int<W> do not convert", "APPLY",
         "m.i = (int<8>)m.x;", "m.i = m.x;", "width or signedness differs"),
    Pair(IMPLICIT, "bool and bit<1> do not convert", "APPLY",
         "m.f = hdr.h.a[0:0] == 1;", "m.f = hdr.h.a[0:0];", "as bool"),
    Pair(IMPLICIT, "an int does not convert to a serializable enum", "APPLY",
         "E2 v = (E2)8w1;", "E2 v = 1;", "cannot use a value of type int as E2",
         shared=ENUMS),
    Pair(IMPLICIT, "a serializable enum converts to its own type", "APPLY",
         "m.x = E2.A;", "m.y = E2.A;", "cannot use a value of type E2 as bit<16>",
         shared=ENUMS),
    Pair(IMPLICIT, "an enum value belongs to its enum", "APPLY",
         "E2 v = E2.A;", "E2 v = E1.A;", "cannot use a value of type E1 as E2", shared=ENUMS),
    Pair(IMPLICIT, "an error is no bit-string", "APPLY",
         "m.e = error.NoError;", "m.x = error.NoError;", "cannot use a value of type error"),
    Pair(ILLEGAL, "operands of different widths", "APPLY",
         "m.x = 8w1 + 8w1;", "m.x = 8w1 + 16w1;", "different types: bit<8> and bit<16>"),
    Pair(ILLEGAL, "signed and unsigned operands", "APPLY",
         "m.i = m.i + 1;", "m.i = m.i + m.x;", "different types"),
    Pair(ILLEGAL, "an enum over another width in arithmetic", "APPLY",
         "m.x = 8w11 + E2.A;", "m.y = 16w11 * E2.A;", "different types", shared=ENUMS),
]


@parametrize(PAIRS)
def test_rule(pair: Pair, tmp_path: Path) -> None:
    check(pair, tmp_path)
