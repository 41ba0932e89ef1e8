"""Spec chapter 13, packet parsing: states, transitions, select
expressions, verify, extraction and lookahead, and value sets."""

from __future__ import annotations

from pathlib import Path

from tests.typecheck.pairs import Pair, check, parametrize

STATES = "13.4 Parser states"
TRANSITIONS = "13.5 Transition statements"
SELECT = "13.6 Select expressions"
VALUE_SETS = "13.11 Parser Value Sets"

PAIRS = [
    Pair(STATES, "accept is not declared", "PLOCALS",
         "state other { transition accept; }", "state accept { transition accept; }",
         "'accept' is a built-in state"),
    Pair(STATES, "reject is not declared", "PLOCALS",
         "state other { transition reject; }", "state reject { transition reject; }",
         "'reject' is a built-in state"),
    Pair(STATES, "state names are distinct", "PLOCALS",
         "state other { transition accept; }", "state next { transition accept; }",
         "two states named 'next'", at="NEXT"),
    Pair(TRANSITIONS, "a transition names a state", "TRANS",
         "next;", "nosuch;", "nosuch: no such parser state"),
    Pair(TRANSITIONS, "a select case names a state", "TRANS",
         "select(hdr.h.a) { 1: next; default: accept; }",
         "select(hdr.h.a) { 1: nosuch; default: accept; }", "no such parser state"),
    Pair(TRANSITIONS, "a parser reaches accept or reject (p4c)", "PLOCALS",
         "state loop1 { transition next; }", "state loop1 { transition loop1; }",
         "never reaches the accept or reject state", shared={"TRANS": "loop1;"},
         at="PARSER"),
    Pair(SELECT, "a select key has a width", "TRANS",
         "select(8w1) { 1: next; default: accept; }",
         "select(1) { 1: next; default: accept; }", "a select key of type int"),
    Pair(SELECT, "a label has one value per key", "TRANS",
         "select(hdr.h.a, hdr.h.b) { (1, 2): next; default: accept; }",
         "select(hdr.h.a, hdr.h.b) { 1: next; default: accept; }",
         "1 value(s) for 2 key(s)"),
    Pair(SELECT, "a label has its key's type", "TRANS",
         "select(hdr.h.a) { 8w1: next; default: accept; }",
         "select(hdr.h.a) { true: next; default: accept; }", "cannot use a bool as bit<8>"),
    Pair(SELECT, "a label is compile-time known", "TRANS",
         "select(hdr.h.a) { 8w1: next; default: accept; }",
         "select(hdr.h.a) { hdr.h.b: next; default: accept; }", "compile-time known"),
    Pair(SELECT, "a mask has its key's width", "TRANS",
         "select(hdr.h.a) { 8w1 &&& 8w1: next; default: accept; }",
         "select(hdr.h.a) { 8w1 &&& 16w1: next; default: accept; }", "bit<16> to bit<8>"),
    Pair(SELECT, "a range has its key's width", "TRANS",
         "select(hdr.h.a) { 8w1 .. 8w7: next; default: accept; }",
         "select(hdr.h.a) { 8w1 .. 16w7: next; default: accept; }", "bit<16> to bit<8>"),
    Pair(SELECT, "no call in a label", "TRANS",
         "select(hdr.h.a) { 1: next; default: accept; }",
         "select(hdr.h.a) { hdr.h.isValid(): next; default: accept; }",
         "no function calls allowed"),
    Pair("13.7 verify", "verify's condition is a bool", "PSTMTS",
         "verify(hdr.h.a == 1, error.NoError);", "verify(hdr.h.a, error.NoError);",
         "cannot use a value of type bit<8> as bool"),
    Pair("13.7 verify", "verify's second argument is an error", "PSTMTS",
         "verify(hdr.h.a == 1, error.NoError);", "verify(hdr.h.a == 1, 1);",
         "cannot use a value of type int as error"),
    Pair("13.7 verify", "verify is called in parsers only", "APPLY",
         "m.f = hdr.h.a == 1;", "verify(hdr.h.a == 1, error.NoError);",
         "verify() is called only in a parser"),
    Pair("13.8.1 Fixed-width extraction", "extract writes its argument", "PSTMTS",
         "pkt.extract(hdr.g);", "pkt.extract(h_t);", ""),
    Pair("13.8.3 Lookahead", "lookahead is of a fixed-width type", "PSTMTS",
         "h_t x = pkt.lookahead<h_t>();", "vb_t x = pkt.lookahead<vb_t>();",
         "fixed width", shared={"TOP": "header vb_t { bit<8> l; varbit<32> v; }"}),
    Pair("13.8.3 Lookahead", "lookahead's result has its type argument's type", "PSTMTS",
         "bit<8> x = pkt.lookahead<bit<8>>();", "bit<8> x = pkt.lookahead<bit<16>>();",
         "bit<16> to bit<8>"),
    Pair("14.1.1 Invoking actions", "a parser calls no action", "PSTMTS",
         "hdr.h.a = 1;", "a0();", "cannot be called from a parser",
         shared={"TOP": "action a0() { }"}),
    Pair(VALUE_SETS, "a value set holds bit-strings, enums, structs or tuples", "PLOCALS",
         "value_set<bit<8>>(4) vs;", "value_set<int>(4) vs;", "the elements are"),
    Pair(VALUE_SETS, "a value set's size is compile-time known", "PLOCALS",
         "value_set<bit<8>>(4) vs;", "value_set<bit<8>>(m.x) vs;", "compile-time known"),
    Pair(VALUE_SETS, "a value set's elements have the key's type", "TRANS",
         "select(hdr.h.a) { vs: next; default: accept; }",
         "select(hdr.h.c) { vs: next; default: accept; }", "bit<8> to bit<16>",
         shared={"PLOCALS": "value_set<bit<8>>(4) vs;"}),
    Pair(VALUE_SETS, "a struct value set has a field per key", "TRANS",
         "select(hdr.h.a, hdr.h.b) { vs: next; default: accept; }",
         "select(hdr.h.a, hdr.h.b, hdr.h.c) { vs: next; default: accept; }",
         "does not match the select's 3 key(s)",
         shared={"TOP": "struct S2 { bit<8> a; bit<8> b; }",
                 "PLOCALS": "value_set<S2>(4) vs;"}),
    Pair(VALUE_SETS, "a value set labels a select case", "TRANS",
         "select(hdr.h.a) { vs: next; default: accept; }",
         "select(hdr.h.a) { vz: next; default: accept; }", "'vz': declaration not found",
         shared={"PLOCALS": "value_set<bit<8>>(4) vs;"}),
]


@parametrize(PAIRS)
def test_rule(pair: Pair, tmp_path: Path) -> None:
    check(pair, tmp_path)
