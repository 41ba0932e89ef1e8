"""Spec chapters 6.8, 10, 11 and 17: parameters and their default values,
functions, constants and variables, instantiations, error and match_kind
declarations, and ``main``."""

from __future__ import annotations

from pathlib import Path

from tests.typecheck.pairs import Pair, check, parametrize

ID = "T id<T>(in T x) { return x; } "
V1 = "V1Switch(P(), V(), I(), E(), C(), D()) main;"
PARAMS = "6.8 Calling convention: call by copy in/copy out"
OPTIONAL = "6.8.2 Optional parameters"
FUNCTIONS = "10 Function declarations"
CONSTANTS = "11.1 Constants"
INSTANCES = "11.3 Instantiations"

PAIRS = [
    Pair(PARAMS, "parameter names are distinct", "LOCALS",
         "action a(in bit<8> v, in bit<8> w) { }", "action a(in bit<8> v, in bit<8> v) { }",
         "parameter 'v' of a duplicates"),
    Pair(PARAMS, "a parameter does not take a type parameter's name", "TOP",
         "void f1<T>(in bit<8> v) { }", "void f1<T>(in bit<8> T) { }",
         "parameter 'T' of f1 duplicates"),
    Pair(PARAMS, "a control's constructor parameters differ from its parameters", "TOP",
         "control Sub(inout bit<8> v)(bit<8> k) { apply { v = k; } }",
         "control Sub(inout bit<8> v)(bit<8> v) { apply { } }",
         "parameter 'v' of Sub duplicates"),
    Pair(OPTIONAL, "an out parameter has no default value", "TOP",
         "void f1(in bit<8> v = 1) { }", "void f1(out bit<8> v = 1) { v = 1; }",
         "out parameter 'v' cannot have a default value"),
    Pair(OPTIONAL, "an inout parameter has no default value", "TOP",
         "void f1(in bit<8> v = 1) { }", "void f1(inout bit<8> v = 1) { }",
         "inout parameter 'v' cannot have a default value"),
    Pair(OPTIONAL, "a default value has its parameter's type", "TOP",
         "void f1(in bit<8> v = 1) { }", "void f1(in bit<8> v = true) { }",
         "cannot use a bool as bit<8>"),
    Pair(OPTIONAL, "a default value is compile-time known", "TOP",
         "extern bit<8> g0(); void f1(in bit<8> v = 8w1 + 1) { }",
         "extern bit<8> g0(); void f1(in bit<8> v = g0()) { }",
         "must be a compile-time known value"),
    Pair(PARAMS, "a constructor parameter has no direction", "TOP",
         "control Sub(inout bit<8> v)(bit<8> k) { apply { v = k; } }",
         "control Sub(inout bit<8> v)(in bit<8> k) { apply { v = k; } }",
         "constructor parameter 'k' of Sub cannot have a direction"),
    Pair(FUNCTIONS, "functions overload by parameter count; actions do not (p4c)", "TOP",
         "void f0() { } void f0(in bit<8> v) { }",
         "action f0() { } action f0(bit<8> v) { }", "duplicate declaration of 'f0'"),
    Pair(FUNCTIONS, "a function with a result returns on every path (p4c)", "TOP",
         "bit<8> f1(in bit<8> v) { if (v == 0) { return 1; } return v; }",
         "bit<8> f1(in bit<8> v) { if (v == 0) { return 1; } }",
         "does not return a value on every path", shared={"APPLY": "m.x = f1(m.x);"}),
    Pair(FUNCTIONS, "a function does not call itself", "TOP",
         "void f0() { } void f1() { f0(); }", "void f1() { f1(); }",
         "'f1': declaration not found"),
    Pair(FUNCTIONS, "a function calls no action", "TOP",
         "action a0() { } void f1() { }", "action a0() { } void f1() { a0(); }",
         "action 'a0' cannot be called from a function"),
    Pair(FUNCTIONS, "a function applies no table", "LOCALS",
         "action a0() { } table t0 { actions = { a0; } }",
         "table t0 { actions = { NoAction; } } action a0() { t0.apply(); }",
         "cannot be applied from an action"),
    Pair(FUNCTIONS, "explicit type arguments type the arguments", "TOP",
         ID + "void f2(in bit<16> v) { bit<16> w = id<bit<16>>(v); }",
         ID + "void f2(in bit<16> v) { bit<8> w = id<bit<8>>(v); }", "bit<16> to bit<8>"),
    Pair(FUNCTIONS, "a generic function's type arguments match its type parameters", "TOP",
         ID + "void f2(in bit<16> v) { bit<16> w = id<bit<16>>(v); }",
         ID + "void f2(in bit<16> v) { bit<16> w = id<bit<16>, bool>(v); }",
         "takes 1 type argument(s), got 2"),
    Pair(CONSTANTS, "a constant's value is compile-time known", "LOCALS",
         "const bit<8> k = 3;", "const bit<8> k = m.x;", "not a compile-time known value"),
    Pair(CONSTANTS, "a constant's value has its type", "TOP",
         "const bit<8> k = 3;", "const bit<8> k = true;", "cannot use a bool as bit<8>"),
    Pair(CONSTANTS, "a constant's name is declared once", "TOP",
         "const bit<8> k = 3; const bit<8> j = 4;", "const bit<8> k = 3; const bit<8> k = 4;",
         "duplicate declaration of 'k'"),
    Pair("11.2 Variables", "an initializer has the variable's type", "APPLY",
         "bit<8> v = 8w1;", "bit<8> v = true;", "cannot use a bool as bit<8>"),
    Pair("11.2 Variables", "a variable's type exists", "LOCALS",
         "h_t v;", "nosuch_t v;", "nosuch_t"),
    Pair(INSTANCES, "no instance in an apply block", "APPLY",
         "m.x = 1;", "counter(8, CounterType.packets) c;",
         "an instance is not declared in a control's apply block"),
    Pair(INSTANCES, "no instance in an action", "LOCALS",
         "action a() { m.x = 1; }", "action a() { counter(8, CounterType.packets) c; }",
         "an instance is not declared in an action"),
    Pair(INSTANCES, "a struct is not instantiated", "LOCALS",
         "counter(8, CounterType.packets) c;", "M() c;", "cannot instantiate"),
    Pair(INSTANCES, "a control does not instantiate itself", "LOCALS",
         "V() v0;", "I() self_i;", "cannot instantiate itself"),
    Pair("11.3.2 Restrictions on top-level instantiations", "no control at the top level",
         "MAIN", V1, "C() c0; " + V1, "cannot be instantiated at the top level"),
    Pair("11.3.2 Restrictions on top-level instantiations", "a package only at the top "
         "level", "LOCALS", "V() v0;", "V1Switch(P(), V(), V(), V(), V(), V()) inner;",
         "only at the top level"),
    Pair("17 Architecture description", "main is a package instance", "MAIN",
         V1, "V1Switch(P(), V(), I(), E(), C(), D()) m1; register<bit<8>>(1) main;",
         "'main' must be an instance of a package"),
    Pair("7.1.2 The error type", "error members are distinct", "TOP",
         "error { Oops }", "error { Oops, Oops }", "declares 'Oops' twice"),
    Pair("7.1.2 The error type", "an error member is declared once across declarations",
         "TOP", "error { Oops }", "error { NoError }", "declares 'NoError' twice"),
    Pair("7.1.3 The match kind type", "a match kind is declared once", "TOP",
         "match_kind { fancy }", "match_kind { exact }", "duplicate declaration of 'exact'"),
]


@parametrize(PAIRS)
def test_rule(pair: Pair, tmp_path: Path) -> None:
    check(pair, tmp_path)
