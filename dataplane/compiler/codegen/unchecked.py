"""Which generated functions may index the packet state without checks.

Compiled, every ``s[N]`` is a call that checks the index against the
list's length and for a negative value before it reads or stores the slot
(some 30 instructions; a GPINT packet-hop makes about 65 stores). Where
``N`` is a literal smaller than the program's slot count, the check can
only fail if the state is shorter than the program's template. The engine
makes every state from the template and never resizes one, and each block
function (what ``make`` returns) refuses a state of another length at its
entry, so inside the generated functions the check is redundant. This
module finds the functions where that proof covers every index:

- every subscript in code the compiled build keeps (the ``else`` branch of
  ``if cython.compiled`` is dropped by Cython) is ``s[N]`` with ``N`` an
  integer literal in range;
- ``s`` is the function's first parameter and is never rebound, and the
  function has no nested function or lambda;
- program-wide, every call of a generated function (by name, or a parser
  state through ``st``) passes ``s`` first, and no generated function
  escapes as a value except a parser state returned to its parser's loop.

Those functions are compiled with ``boundscheck`` and ``wraparound`` off.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable


def _is_compiled_test(test: ast.expr) -> bool:
    return (isinstance(test, ast.Attribute) and test.attr == "compiled"
            and isinstance(test.value, ast.Name) and test.value.id == "cython")


def _kept(node: ast.AST) -> Iterable[ast.AST]:
    """The nodes under ``node`` a compiled build keeps."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, ast.If) and _is_compiled_test(n.test):
            stack.append(n.test)
            stack.extend(n.body)
            continue
        stack.extend(ast.iter_child_nodes(n))


def _fits(node: ast.Subscript, slots: int) -> bool:
    index = node.slice
    return (isinstance(node.value, ast.Name) and node.value.id == "s"
            and isinstance(index, ast.Constant) and type(index.value) is int
            and 0 <= index.value < slots)


def _local_ok(fn: ast.FunctionDef, slots: int) -> bool:
    args = fn.args.args
    if not args or args[0].arg != "s":
        return False
    for n in _kept(fn):
        if n is not fn and isinstance(n, ast.FunctionDef | ast.Lambda | ast.AsyncFunctionDef):
            return False
        if isinstance(n, ast.Subscript) and not _fits(n, slots):
            return False
        if isinstance(n, ast.Name) and n.id == "s" and not isinstance(n.ctx, ast.Load):
            return False
    return True


def _calls_pass_state(fns: list[ast.FunctionDef], names: set[str]) -> bool:
    """Every generated function receives the state it was called with."""
    for fn in fns:
        callees: set[int] = set()
        returned: set[int] = set()
        for n in ast.walk(fn):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and (
                    n.func.id in names or n.func.id == "st"):
                callees.add(id(n.func))
                first = n.args[0] if n.args else None
                if not (isinstance(first, ast.Name) and first.id == "s"):
                    return False
            elif isinstance(n, ast.Return) and isinstance(n.value, ast.Name):
                returned.add(id(n.value))  # a parser state, back to its loop
            elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and all(
                    isinstance(t, ast.Name) and t.id == "st" for t in n.targets):
                returned.add(id(n.value))  # the loop's first state
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load) and (
                    id(n) not in callees and id(n) not in returned):
                return False
    return True


def unchecked_functions(sources: dict[str, str], slots: int) -> set[str]:
    """The names among ``sources`` (function name -> its text) that may be
    compiled without index checks; none if any function breaks the
    program-wide condition."""
    fns: dict[str, ast.FunctionDef] = {}
    for name, text in sources.items():
        tree = ast.parse(textwrap.dedent(text))
        fn = tree.body[0]
        if not isinstance(fn, ast.FunctionDef):
            return set()
        fns[name] = fn
    if not _calls_pass_state(list(fns.values()), set(fns)):
        return set()
    return {name for name, fn in fns.items() if _local_ok(fn, slots)}
