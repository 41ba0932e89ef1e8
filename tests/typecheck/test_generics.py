"""Spec 7.2.12 (type specialization) and 8.26: generic structs, functions,
parsers and controls are checked for each instance, with the instance's
types. A generic struct, header or union compiles, one type per list of
type arguments, as p4c specializes it; code generation has no generic
functions, parsers or controls, so a well-typed use of one stops at a
located ``unsupported construct``. An ill-typed use is a type error where
it goes wrong."""

from __future__ import annotations

from pathlib import Path

from tests.typecheck.pairs import Pair, check, parametrize

PR = {"TOP": "struct Pr<T> { T v; bit<8> k; }"}
INC = {"TOP": "T inc<T>(in T v) { return v + 1; }"}
SPEC = "7.2.12 Type specialization"
VARS = "8.26 Operations on types that are type variables"

PAIRS = [
    Pair(SPEC, "a generic struct's field has the instance's type", "APPLY",
         "Pr<bit<8>> p = { v = 1, k = 2 }; m.x = p.v;",
         "Pr<bit<8>> p = { v = 1, k = 2 }; m.f = p.v;",
         "cannot use a value of type bit<8> as bool", shared=PR),
    Pair(SPEC, "a generic struct's initializer takes the instance's types", "APPLY",
         "Pr<bool> p = { v = true, k = 2 };", "Pr<bool> p = { v = 1, k = 2 };",
         "as bool", shared=PR),
    Pair(SPEC, "a generic struct takes its type arguments", "APPLY",
         "Pr<bit<8>> p = { v = 1, k = 2 };", "Pr<bit<8>, bool> p;",
         "takes 1 type argument(s), got 2", shared=PR),
    Pair(SPEC, "two instances of a generic struct are two types", "APPLY",
         "Pr<bit<8>> p = { v = 1, k = 2 }; Pr<bit<8>> q = p;",
         "Pr<bit<8>> p = { v = 1, k = 2 }; Pr<bool> q = p;",
         "cannot use a value of type Pr<bit<8>> as Pr<bool>", shared=PR),
    Pair(VARS, "a generic function's body is checked for each call", "APPLY",
         "m.x = inc(m.x);", "m.f = inc(m.f);", "as bool", shared=INC, at="TOP",
         good_unsupported=True),
    Pair(VARS, "a generic function's result has the call's type", "APPLY",
         "m.x = inc(m.x);", "m.y = inc(m.x);", "bit<8> to bit<16>", shared=INC,
         good_unsupported=True),
    Pair(VARS, "a type variable's arguments agree", "APPLY",
         "m.x = pick(m.x, 8w1);", "m.x = pick(m.x, 16w1);", "bit<16> to bit<8>",
         shared={"TOP": "T pick<T>(in T a, in T b) { return a; }"}, good_unsupported=True),
]


@parametrize(PAIRS)
def test_rule(pair: Pair, tmp_path: Path) -> None:
    check(pair, tmp_path)
