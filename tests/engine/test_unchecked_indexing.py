"""Generated functions compiled without index checks
(``codegen.unchecked``): only those whose every kept subscript is a literal
slot of the state, only when every call hands the state on, and a block
refuses a state of another length before any of them runs."""

from __future__ import annotations

import pytest

from dataplane.compiler.codegen.unchecked import unchecked_functions
from dataplane.compiler.pipeline import compile_file
from dataplane.runtime.switch import Switch
from p4src import program_path

SAFE = """    def a_set(s):
        s[3] = 1
        if s[4]:
            s[5] = s[3] + 1
"""


def test_literal_slots_in_range_are_unchecked() -> None:
    assert unchecked_functions({"a_set": SAFE}, slots=6) == {"a_set"}
    # One slot too few: s[5] is out of range.
    assert unchecked_functions({"a_set": SAFE}, slots=5) == set()


@pytest.mark.parametrize("body", [
    "s[i] = 1",                     # an index known at run time
    "s[-1] = 1",                    # negative
    "RV0[3] = 1",                   # another list
    "s = list(s)\n        s[1] = 0",  # the state rebound
    "f = lambda s: s[1]",           # a nested function
])
def test_anything_else_keeps_its_checks(body: str) -> None:
    text = f"    def a_x(s):\n        {body}\n"
    assert unchecked_functions({"a_x": text}, slots=8) == set()


def test_the_pure_branch_is_not_considered() -> None:
    text = ("    def t_x(s):\n"
            "        if cython.compiled:\n"
            "            s[1] = 2\n"
            "        else:\n"
            "            s[1:3] = args\n")
    assert unchecked_functions({"t_x": text}, slots=4) == {"t_x"}


def test_a_call_with_another_list_disables_all() -> None:
    caller = "    def c_x(s):\n        a_set(s)\n        a_set([0] * 6)\n"
    assert unchecked_functions({"a_set": SAFE, "c_x": caller}, slots=6) == set()
    escapes = "    def c_y(s):\n        keep(a_set)\n"
    assert unchecked_functions({"a_set": SAFE, "c_y": escapes}, slots=6) == set()
    fine = "    def c_z(s):\n        a_set(s)\n"
    assert unchecked_functions({"a_set": SAFE, "c_z": fine}, slots=6) == {"a_set", "c_z"}


def test_parser_states_returned_to_their_loop_are_fine() -> None:
    start = "    def p_0_start(s, b):\n        s[1] = 1\n        return p_0_next\n"
    nxt = "    def p_0_next(s, b):\n        s[2] = 1\n        return None\n"
    loop = ("    def p_0(s, b):\n        st = p_0_start\n"
            "        while st is not None:\n            st = st(s, b)\n")
    got = unchecked_functions({"p_0_start": start, "p_0_next": nxt, "p_0": loop}, slots=3)
    assert got == {"p_0_start", "p_0_next", "p_0"}


def test_gpint_marks_its_leaf_actions_and_guards_its_blocks() -> None:
    compiled = compile_file(program_path("gpint"))
    text = compiled.python_source
    assert text.count("@cython.boundscheck(False)") >= 5
    slots_n = len(compiled.layout.template)
    assert text.count(f"if len(s) != {slots_n}:") == 6  # parser, four controls, deparser


def test_a_block_refuses_a_state_of_another_length() -> None:
    sw = Switch(compile_file(program_path("l3_forward")))
    short = sw._template[:-1]
    with pytest.raises(IndexError, match="packet state of"):
        sw._ingress(short)
    # The engine's own states pass.
    sw.process(1, bytes(64))
