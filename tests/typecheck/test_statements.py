"""Spec chapter 12, statements (and 6.7 l-values, 6.10 visibility):
assignment targets, return and exit, conditions, switch labels and loops."""

from __future__ import annotations

from pathlib import Path

from tests.typecheck.pairs import Pair, check, parametrize

TABLE = {"LOCALS": "action a1() { } action a2() { } action a3() { } "
                   "table t { key = { m.x: exact; } actions = { a1; a2; } }"}
E2 = {"TOP": "enum bit<8> E2 { A = 1, B = 2 }"}
ASSIGN = "12.1 Assignment statement"
SWITCH = "12.7 Switch statement"
SWITCH_RUN = "12.7.1 Switch statement with action_run expression"
SWITCH_INT = "12.7.2 Switch statement with integer or enumerated type expression"

PAIRS = [
    Pair(ASSIGN, "an in parameter is read-only", "LOCALS",
         "action a(in bit<8> v) { m.x = v; }", "action a(in bit<8> v) { v = 1; }",
         "read-only"),
    Pair(ASSIGN, "a directionless action parameter is read-only", "LOCALS",
         "action a(bit<8> v) { m.x = v; }", "action a(bit<8> v) { v = 1; }", "read-only"),
    Pair(ASSIGN, "a constant is not assigned", "APPLY",
         "m.x = k;", "k = 2;", "not assignable", shared={"LOCALS": "const bit<8> k = 1;"}),
    Pair(ASSIGN, "an enum member is not assigned", "APPLY",
         "E2 v = E2.A;", "E2.A = E2.B;", "not assignable", shared=E2),
    Pair(ASSIGN, "a table is not assigned", "APPLY",
         "t.apply();", "t = 1;", "it cannot be used as a value", shared=TABLE),
    Pair(ASSIGN, "the value has the target's type", "APPLY",
         "m.x = hdr.h.a;", "m.x = hdr.h.c;", "bit<16> to bit<8>"),
    Pair(ASSIGN, "a header is assigned a header of its type", "APPLY",
         "hdr.h = hdr.s[0];", "hdr.h = hdr.g;", "cannot use a value of type g_t as h_t"),
    Pair(ASSIGN, "a compound assignment takes one width", "APPLY",
         "m.x += 1;", "m.x += m.y;", "different types"),
    Pair("12.4 Return statement", "an action returns no value", "LOCALS",
         "action a() { return; }", "action a() { return 1; }", "return with a value"),
    Pair("12.4 Return statement", "a function returns a value of its type", "TOP",
         "bit<8> f1(in bit<8> v) { return v; }", "bit<8> f1(in bit<8> v) { return true; }",
         "cannot use a bool as bit<8>"),
    Pair("12.4 Return statement", "a function with a type returns a value", "TOP",
         "bit<8> f1(in bit<8> v) { return v; }", "bit<8> f1(in bit<8> v) { return; }",
         "return needs a value"),
    Pair("12.4 Return statement", "a parser does not return", "PSTMTS",
         "hdr.h.a = 1;", "return;", "syntax error at 'return'"),
    Pair("12.4 Return statement", "the apply block returns no value", "APPLY",
         "return;", "return 1;", "return with a value"),
    Pair("12.5 Exit statement", "a parser does not exit", "PSTMTS",
         "hdr.h.a = 1;", "exit;", "syntax error at 'exit'"),
    Pair("12.5 Exit statement", "a function does not exit", "TOP",
         "void f1() { return; }", "void f1() { exit; }", "exit is not allowed in a function"),
    Pair("12.6 Conditional statement", "a condition is a bool", "APPLY",
         "if (m.x == 1) { }", "if (m.x) { }", "a condition must be bool"),
    Pair(SWITCH, "one default label", "APPLY",
         "switch (m.x) { 1: { } default: { } }",
         "switch (m.x) { default: { } default: { } }", "more than one 'default'"),
    Pair(SWITCH, "the default label comes last", "APPLY",
         "switch (m.x) { 1: { } default: { } }", "switch (m.x) { default: { } 1: { } }",
         "must be the last one"),
    Pair(SWITCH, "a switch is on action_run, an integer or an enum", "APPLY",
         "switch (m.x) { 1: { } }", "switch (m.f) { default: { } }",
         "cannot switch on a value of type bool"),
    Pair(SWITCH_RUN, "a label is an action of the table", "APPLY",
         "switch (t.apply().action_run) { a1: { } }",
         "switch (t.apply().action_run) { a3: { } }", "not an action of table t",
         shared=TABLE),
    Pair(SWITCH_RUN, "an action labels one case", "APPLY",
         "switch (t.apply().action_run) { a1: { } a2: { } }",
         "switch (t.apply().action_run) { a1: { } a1: { } }", "labels two cases",
         shared=TABLE),
    Pair(SWITCH_INT, "labels are compile-time known", "APPLY",
         "switch (m.x) { 1: { } }", "switch (m.x) { m.x: { } }", "compile-time known"),
    Pair(SWITCH_INT, "a value labels one case", "APPLY",
         "switch (m.x) { 1: { } 2: { } }", "switch (m.x) { 1: { } 1: { } }",
         "labels two cases"),
    Pair(SWITCH_INT, "an enum member labels one case", "APPLY",
         "switch (E2.A) { E2.A: { } E2.B: { } }", "switch (E2.A) { E2.A: { } E2.A: { } }",
         "labels two cases", shared=E2),
    Pair(SWITCH_INT, "a label has the expression's type", "APPLY",
         "switch (m.x) { 8w1: { } }", "switch (m.x) { 16w1: { } }", "bit<16> to bit<8>"),
    Pair(SWITCH_INT, "a serializable enum is labelled by its members", "APPLY",
         "E2 v = E2.A; switch (v) { E2.A: { } }", "E2 v = E2.A; switch (v) { 1: { } }",
         "cannot use a value of type int as E2", shared=E2),
    Pair("12.8 For statement", "break is inside a loop", "APPLY",
         "for (bit<8> i = 0; i < 4; i = i + 1) { break; }", "break;", "outside a loop"),
    Pair("12.8 For statement", "continue is inside a loop", "APPLY",
         "for (bit<8> i = 0; i < 4; i = i + 1) { continue; }", "continue;",
         "outside a loop"),
    Pair("12.8 For statement", "a loop's condition is a bool", "APPLY",
         "for (bit<8> i = 0; i < 4; i = i + 1) { }",
         "for (bit<8> i = 0; i; i = i + 1) { }", "a condition must be bool"),
    Pair("12.8 For statement", "a for-in variable takes the elements' type", "APPLY",
         "for (h_t x in hdr.s) { m.x = x.a; }", "for (bit<8> x in hdr.s) { m.x = x; }",
         "cannot use a value of type h_t as bit<8>"),
    Pair("12.3 Block statement", "a block's names end with it", "APPLY",
         "{ bit<8> v = 1; m.x = v; }", "{ bit<8> v = 1; } m.x = v;",
         "'v': declaration not found"),
    Pair("6.10 Visibility", "a name is used after its declaration", "APPLY",
         "bit<8> v = 1; m.x = v;", "m.x = v; bit<8> v = 1;", "'v': declaration not found"),
    Pair("6.10 Visibility", "one declaration of a name per scope", "APPLY",
         "bit<8> v = 1; m.x = v;", "bit<8> v = 1; bit<8> v = 2;", "duplicate declaration"),
    Pair("6.10 Visibility", "an inner block may shadow an outer name (p4c warns)", "APPLY",
         "bit<8> v = 1; { bit<8> v = 2; m.x = v; }", "bit<8> v = 1; { bit<8> w = 2; "
         "bit<8> w = 3; }", "duplicate declaration of 'w'"),
    Pair("6.10 Visibility", "a local may shadow a top-level constant", "LOCALS",
         "bit<8> K = 2;", "bit<8> K = 2; bit<8> K = 3;", "duplicate declaration of 'K'",
         shared={"TOP": "const bit<8> K = 1;", "APPLY": "m.x = K;"}),
    Pair("6.7 L-values", "a call's result is not assigned to", "APPLY",
         "m.f = hdr.h.isValid();", "hdr.s[0] = t.apply();", "cannot use", shared=TABLE),
]


@parametrize(PAIRS)
def test_rule(pair: Pair, tmp_path: Path) -> None:
    check(pair, tmp_path)
