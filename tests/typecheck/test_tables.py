"""Spec 14.2, tables: properties, keys and match kinds, the actions list,
the default action, entries and their priorities, size and the other
properties, and invocation."""

from __future__ import annotations

from pathlib import Path

from tests.typecheck.pairs import Pair, check, parametrize

ACTIONS = ("action set(bit<8> v) { m.x = v; } action put(in bit<8> v) { m.y = (bit<16>)v; } "
           "@name(\"drop1\") action drop() { mark_to_drop(sm); } ")


def table(body: str) -> str:
    """The actions and a table ``t`` with ``body``."""
    return ACTIONS + "table t { " + body + " }"


def keyed(rest: str, keys: str = "m.x: exact;") -> str:
    return table("key = { " + keys + " } actions = { set; drop; NoAction; } " + rest)


U = "table u { actions = { NoAction; } } "
APPLY_T = {"APPLY": "t.apply();"}
PROPS = "14.2.1 Table properties"
KEYS = "14.2.1.1 Keys"
LIST = "14.2.1.2 Actions"
DEFAULT = "14.2.1.3 Default action"
ENTRIES = "14.2.1.4 Entries"
PRIORITIES = "14.2.1.4.1 Entry priorities"
SIZE = "14.2.1.5 Size"
MORE = "14.2.1.6 Additional properties"
INVOKE = "14.2.2 Match-action unit invocation"

PAIRS = [
    Pair(PROPS, "a table has an actions property", "LOCALS",
         table("key = { m.x: exact; } actions = { NoAction; }"),
         table("key = { m.x: exact; }"), "has no 'actions' property", shared=APPLY_T),
    Pair(PROPS, "a property is given once", "LOCALS",
         table("key = { m.x: exact; } actions = { NoAction; }"),
         table("key = { m.x: exact; } key = { m.y: exact; } actions = { NoAction; }"),
         "property 'key' is given twice", shared=APPLY_T),
    Pair(PROPS, "default_action follows the actions list (p4c)", "LOCALS",
         table("actions = { NoAction; } default_action = NoAction;"),
         table("default_action = NoAction; actions = { NoAction; }"),
         "default_action comes before the actions list", shared=APPLY_T),
    Pair(KEYS, "a match kind is declared", "LOCALS",
         keyed("", "m.x: ternary;"), keyed("", "m.x: fancy;"), "'fancy'", shared=APPLY_T),
    Pair(KEYS, "a match kind is a match_kind", "LOCALS",
         keyed("", "m.x: exact;"), keyed("", "m.x: NoAction;"), "is not a match kind",
         shared=APPLY_T),
    Pair(KEYS, "a complex key has a @name (p4c)", "LOCALS",
         keyed("", "m.x + m.x: exact @name(\"twice\"); hdr.h.a & 0x0f: ternary; "
                   "hdr.h.isValid(): exact; m.x & m.x: ternary;"),
         keyed("", "m.x + m.x: exact;"), "needs a @name annotation", shared=APPLY_T),
    Pair(KEYS, "a key is a scalar", "LOCALS",
         keyed("", "hdr.h.a: exact;"), keyed("", "hdr.h: exact;"),
         "a key is a bit-string, bool, enum or error", shared=APPLY_T),
    Pair(KEYS, "a key does not name its table", "LOCALS",
         keyed("", "m.x: exact;"), keyed("", "t.apply().hit: exact;"),
         "cannot refer to itself", shared=APPLY_T),
    Pair(LIST, "the actions list names actions", "LOCALS",
         table("actions = { set; }"), table("actions = { m; }"), "not an action",
         shared=APPLY_T),
    Pair(LIST, "an action is listed once", "LOCALS",
         table("actions = { set; drop; }"), table("actions = { set; set; }"),
         "listed twice", shared=APPLY_T),
    Pair(LIST, "the list binds no control-plane parameter", "LOCALS",
         table("actions = { set; }"), table("actions = { set(1); }"),
         "takes 0 argument(s) here", shared=APPLY_T),
    Pair(LIST, "a directional argument has its parameter's type", "LOCALS",
         table("actions = { put(m.x); }"), table("actions = { put(m.y); }"),
         "bit<16> to bit<8>", shared=APPLY_T),
    Pair(LIST, "an action argument applies no table", "LOCALS",
         U + table("actions = { put(m.x); }"),
         U + table("actions = { put(u.apply().hit ? 8w1 : 8w2); }"),
         "a table is applied in an action argument",
         shared={"APPLY": "t.apply(); u.apply();"}),
    Pair(LIST, "a control-plane parameter is a bit-string, bool or serializable enum",
         "LOCALS", table("actions = { set; }"),
         table("actions = { set2; }").replace("table t", "action set2(h_t v) { } table t"),
         "set by the control plane", shared=APPLY_T),
    Pair(DEFAULT, "the default action is in the actions list", "LOCALS",
         keyed("default_action = set(1);"), keyed("default_action = put(m.x);"),
         "not in the actions of table t", shared=APPLY_T),
    Pair(DEFAULT, "the default action gives its control-plane arguments", "LOCALS",
         keyed("default_action = set(1);"), keyed("default_action = set;"),
         "needs 1 control-plane argument(s), got 0", shared=APPLY_T),
    Pair(DEFAULT, "a control-plane argument is compile-time known", "LOCALS",
         keyed("default_action = set(1);"), keyed("default_action = set(m.x);"),
         "must be a compile-time constant", shared=APPLY_T),
    Pair(DEFAULT, "the argument has its parameter's type", "LOCALS",
         keyed("default_action = set(1);"), keyed("default_action = set(true);"),
         "cannot use a bool as bit<8>", shared=APPLY_T),
    Pair(DEFAULT, "a @tableonly action is not the default", "LOCALS",
         table("key = { m.x: exact; } actions = { @tableonly set; drop; } "
               "default_action = drop;"),
         table("key = { m.x: exact; } actions = { @tableonly set; drop; } "
               "default_action = set(1);"), "@tableonly", shared=APPLY_T),
    Pair(ENTRIES, "an entry has one value per key", "LOCALS",
         keyed("const entries = { 1: set(2); }"), keyed("const entries = { (1, 2): set(2); }"),
         "2 key value(s)", shared=APPLY_T),
    Pair(ENTRIES, "an entry's action is in the actions list", "LOCALS",
         keyed("const entries = { 1: set(2); }"), keyed("const entries = { 1: put(2); }"),
         "is not in the actions of table t", shared=APPLY_T),
    Pair(ENTRIES, "an entry's action gives every argument", "LOCALS",
         keyed("const entries = { 1: set(2); }"), keyed("const entries = { 1: set(); }"),
         "control-plane argument", shared=APPLY_T),
    Pair(ENTRIES, "an entry's key has the key's type", "LOCALS",
         keyed("const entries = { 8w1: set(2); }"),
         keyed("const entries = { 16w1: set(2); }"), "bit<16> to bit<8>", shared=APPLY_T),
    Pair(ENTRIES, "an entry's key is compile-time known", "LOCALS",
         keyed("const entries = { 1: set(2); }"), keyed("const entries = { m.x: set(2); }"),
         "compile-time known", shared=APPLY_T),
    Pair(ENTRIES, "a range is a key for range and ternary matches", "LOCALS",
         keyed("const entries = { 1 .. 3: set(2); }", "m.x: range;"),
         keyed("const entries = { 1 .. 3: set(2); }", "m.x: lpm;"),
         "a range (..) is not a key for match kind lpm", shared=APPLY_T),
    Pair(ENTRIES, "an exact key's entry gives a value", "LOCALS",
         keyed("const entries = { 1: set(2); }"), keyed("const entries = { _: set(2); }"),
         "an exact key matches one value", shared=APPLY_T),
    Pair(ENTRIES, "a @defaultonly action is not in an entry", "LOCALS",
         table("key = { m.x: exact; } actions = { set; @defaultonly drop; } "
               "const entries = { 1: set(2); }"),
         table("key = { m.x: exact; } actions = { set; @defaultonly drop; } "
               "const entries = { 1: drop(); }"), "@defaultonly", shared=APPLY_T),
    Pair(PRIORITIES, "const entries have no priorities", "LOCALS",
         keyed("entries = { priority = 3: 1 &&& 1: set(2); }", "m.x: ternary;"),
         keyed("const entries = { priority = 3: 1 &&& 1: set(2); }", "m.x: ternary;"),
         "'const entries' cannot have priorities", shared=APPLY_T),
    Pair(PRIORITIES, "exact and lpm keys take no priorities", "LOCALS",
         keyed("entries = { priority = 3: 1 &&& 1: set(2); }", "m.x: ternary;"),
         keyed("entries = { priority = 3: 1: set(2); }", "m.x: exact;"),
         "do not need priorities", shared=APPLY_T),
    Pair(SIZE, "size is compile-time known", "LOCALS",
         keyed("size = 16;"), keyed("size = m.x;"), "must be a compile-time constant",
         shared=APPLY_T),
    Pair(SIZE, "size is a non-negative integer", "LOCALS",
         keyed("size = 16;"), keyed("size = -1;"), "non-negative integer", shared=APPLY_T),
    Pair(SIZE, "size is an integer", "LOCALS",
         keyed("size = 16;"), keyed("size = true;"), "non-negative integer", shared=APPLY_T),
    Pair(MORE, "priority_delta is a non-negative integer", "LOCALS",
         keyed("priority_delta = 2;", "m.x: ternary;"),
         keyed("priority_delta = -2;", "m.x: ternary;"), "non-negative integer",
         shared=APPLY_T),
    Pair(MORE, "largest_priority_wins is a bool", "LOCALS",
         keyed("largest_priority_wins = false;", "m.x: ternary;"),
         keyed("largest_priority_wins = 1;", "m.x: ternary;"), "is a bool", shared=APPLY_T),
    Pair(MORE, "counters name an extern instance", "LOCALS",
         "direct_counter(CounterType.packets) dc; " + keyed("counters = dc;"),
         "direct_counter(CounterType.packets) dc; " + keyed("counters = set;"),
         "not an extern instance", shared=APPLY_T),
    Pair(INVOKE, "a table has apply only", "APPLY",
         "t.apply();", "t.lookup();", "a table has no method 'lookup'",
         shared={"LOCALS": keyed("")}),
    Pair(INVOKE, "apply's result has hit, miss and action_run", "APPLY",
         "m.f = t.apply().hit;", "m.f = t.apply().found;", "has no member 'found'",
         shared={"LOCALS": keyed("")}),
    Pair(INVOKE, "apply takes no argument", "APPLY",
         "t.apply();", "t.apply(m.x);", "too many arguments", shared={"LOCALS": keyed("")}),
    Pair(INVOKE, "an action does not apply a table", "LOCALS",
         keyed("") + " action b() { m.x = 1; }", keyed("") + " action b() { t.apply(); }",
         "cannot be applied from an action", shared=APPLY_T),
]


@parametrize(PAIRS)
def test_rule(pair: Pair, tmp_path: Path) -> None:
    check(pair, tmp_path)
