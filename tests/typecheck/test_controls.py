"""Spec chapters 14.1, 14.4 and 15: actions, invoking controls, and
constructor parameters; generic controls and parsers are checked for
each instance."""

from __future__ import annotations

from pathlib import Path

from tests.typecheck.pairs import Pair, check, parametrize

SUB = {"TOP": "control Sub(inout bit<8> v) { apply { v = v + 1; } }",
       "LOCALS": "Sub() sub;"}
SUBK = {"TOP": "control Sub(inout bit<8> v)(bit<8> k) { apply { v = k; } }"}
GEN = "control G<T>(inout T v) { apply { v = v + 1; } }"
GENP = "parser GP<T>(packet_in b, out T v) { state start { b.extract(v); transition accept; } }"
ACTIONS = "14.1 Actions"
INVOKE_ACTION = "14.1.1 Invoking actions"
INVOKE = "14.4 Invoking controls"
PARAMS = "15 Parameterization"

PAIRS = [
    Pair(ACTIONS, "an action parameter has a width", "LOCALS",
         "action a(bit<8> v) { }", "action a(int v) { }", "cannot have type int"),
    Pair(ACTIONS, "an int parameter is directionless", "TOP",
         "extern void f1(int v);", "extern void f1(in int v);",
         "of type int is directionless"),
    Pair(ACTIONS, "an action parameter's type exists", "LOCALS",
         "action a(in bit<8> v) { }", "action a(in nosuch_t v) { }", "nosuch_t"),
    Pair(INVOKE_ACTION, "an action takes no type arguments", "APPLY",
         "a();", "a<bit<8>>();", "takes no type arguments",
         shared={"LOCALS": "action a() { }"}),
    Pair(INVOKE_ACTION, "a direct call gives every argument", "APPLY",
         "a(1);", "a();", "No argument supplied for v",
         shared={"LOCALS": "action a(bit<8> v) { m.x = v; }"}),
    Pair(INVOKE_ACTION, "an action is declared before it is called", "LOCALS",
         "action a() { } action b() { a(); }", "action b() { a(); } action a() { }",
         "'a': declaration not found"),
    Pair(INVOKE, "apply gives every parameter an argument", "APPLY",
         "sub.apply(m.x);", "sub.apply();", "No argument supplied for v", shared=SUB),
    Pair(INVOKE, "an inout argument is assignable", "APPLY",
         "sub.apply(m.x);", "sub.apply(8w1);", "is not assignable", shared=SUB),
    Pair(INVOKE, "an argument has its parameter's type", "APPLY",
         "sub.apply(m.x);", "sub.apply(m.y);", "bit<16> to bit<8>", shared=SUB),
    Pair(INVOKE, "an action applies no control", "LOCALS",
         "Sub() sub; action a() { m.x = 1; }", "Sub() sub; action a() { sub.apply(m.x); }",
         "cannot be applied from an action",
         shared={"TOP": SUB["TOP"], "APPLY": "a();"}),
    Pair(INVOKE, "a control holds no parser instance", "LOCALS",
         "V() v0;", "P() p0;", "parser P cannot be instantiated in a control"),
    Pair(INVOKE, "a control has apply only", "APPLY",
         "sub.apply(m.x);", "sub.run(m.x);", "has no method 'run'", shared=SUB),
    Pair(PARAMS, "a constructor argument has its parameter's type", "LOCALS",
         "Sub(8w1) sub;", "Sub(true) sub;", "cannot use a bool as bit<8>", shared=SUBK),
    Pair(PARAMS, "a constructor argument is compile-time known", "LOCALS",
         "Sub(8w1) sub;", "Sub(m.x) sub;", "must be a compile-time known value", shared=SUBK),
    Pair(PARAMS, "a constructor gets every argument", "LOCALS",
         "Sub(8w1) sub;", "Sub() sub;", "No argument supplied for k", shared=SUBK),
    Pair(PARAMS, "a constructor takes no more arguments than it has parameters", "LOCALS",
         "Sub(8w1) sub;", "Sub(8w1, 8w2) sub;", "too many arguments", shared=SUBK),
    Pair(PARAMS, "a generic control is checked for its instance", "LOCALS",
         "G<bit<8>>() g;", "G<bool>() g;", "as bool",
         shared={"TOP": GEN, "APPLY": "g.apply(m.x);"}, at="TOP", good_unsupported=True),
    Pair(PARAMS, "an instance's arguments take the instance's types", "APPLY",
         "g.apply(m.x);", "g.apply(m.y);", "bit<16> to bit<8>",
         shared={"TOP": GEN, "LOCALS": "G<bit<8>>() g;"}, good_unsupported=True),
    Pair(PARAMS, "a generic control takes its type arguments", "LOCALS",
         "G<bit<8>>() g;", "G<bit<8>, bool>() g;", "takes 1 type argument(s), got 2",
         shared={"TOP": GEN, "APPLY": "g.apply(m.x);"}, good_unsupported=True),
    Pair(PARAMS, "a generic parser is checked for its instance", "PLOCALS",
         "GP<h_t>() gp;", "GP<bit<8>>() gp;", "extract",
         shared={"TOP": GENP}, at="TOP", good_unsupported=True),
]


@parametrize(PAIRS)
def test_rule(pair: Pair, tmp_path: Path) -> None:
    check(pair, tmp_path)
