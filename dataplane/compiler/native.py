"""Generated pipelines on the compiled fast path (``common.accel``).

A pipeline's generated Python is built into an extension under the hash of
its full text, so the same program compiled with the same options finds
its build and anything else (another program, a changed code generator)
runs the text itself. The names the generated code uses come in by
imports at the top, the same objects ``pipeline._globals`` hands ``exec``.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from common import accel
from common.accel_build import Job
from common.paths import PACKAGE_ROOT


def header(names: Mapping[str, Any]) -> str:
    """Import lines that bind ``names`` (name -> object) at module level."""
    lines = []
    for name, obj in names.items():
        if name.startswith("__") or name in _PROJECT_CIMPORTS[1]:
            continue
        if isinstance(obj, ModuleType):
            lines.append(f"import {obj.__name__}" if obj.__name__ == name
                         else f"import {obj.__name__} as {name}")
            continue
        lines.append(f"from {obj.__module__} import {obj.__qualname__} as {name}")
    return "\n".join(lines) + "\n"


NATIVE_CIMPORTS = """\
from cython.cimports.dataplane.runtime.tables import Entry, lpm1_lookup
from cython.cimports.dataplane.runtime.ints import box_ssize, box_u64, get_ssize, get_u64
from cython.cimports.cpython.bytearray import PyByteArray_AS_STRING
from cython.cimports.cpython.object import Py_EQ, PyObject, PyObject_IsTrue
from cython.cimports.cpython.object import PyObject_RichCompareBool
from cython.cimports.cpython.ref import Py_INCREF, Py_XDECREF
from cython.cimports.cpython.sequence import PySequence_Fast_ITEMS

_OBJ_P = cython.typedef(cython.pointer[PyObject])
_ITEMS_P = cython.typedef(cython.pointer[_OBJ_P])


@cython.cfunc
@cython.inline
@cython.exceptval(check=False)
@cython.returns(cython.void)
@cython.locals(s=list, i=cython.Py_ssize_t, items=_ITEMS_P, old=_OBJ_P)
def SPUT(s, i, v):
    items = PySequence_Fast_ITEMS(s)
    old = items[i]
    Py_INCREF(v)
    items[i] = cython.cast(_OBJ_P, v)
    Py_XDECREF(old)


# The integers 0 and 1 that validity slots and flags hold (CPython keeps
# one object of each), compared by address before asking their type.
_INT0 = cython.declare(object, 0)
_INT1 = cython.declare(object, 1)


@cython.cfunc
@cython.inline
@cython.exceptval(-1)
@cython.returns(cython.int)
@cython.locals(s=list, i=cython.Py_ssize_t, o=_OBJ_P)
def STRUE(s, i):
    o = PySequence_Fast_ITEMS(s)[i]
    if o == cython.cast(_OBJ_P, _INT0):
        return 0
    if o == cython.cast(_OBJ_P, _INT1):
        return 1
    if o == cython.cast(_OBJ_P, True):
        return 1
    if o == cython.cast(_OBJ_P, False):
        return 0
    return PyObject_IsTrue(cython.cast(object, o))


@cython.cfunc
@cython.inline
@cython.exceptval(-1)
@cython.returns(cython.int)
@cython.locals(s=list, lo=cython.Py_ssize_t, hi=cython.Py_ssize_t, k=cython.Py_ssize_t,
               items=_ITEMS_P, o=_OBJ_P, r=cython.int)
def ANYV(s, lo, hi, k):
    items = PySequence_Fast_ITEMS(s)
    while lo < hi:
        o = items[lo]
        if o != cython.cast(_OBJ_P, _INT0):
            if o == cython.cast(_OBJ_P, _INT1):
                return 1
            r = PyObject_RichCompareBool(cython.cast(object, o), _INT0, Py_EQ)
            if r != 1:
                return -1 if r < 0 else 1
        lo += k
    return 0


# A direct-mapped cache of the integer objects the parser makes: 2,048
# values and the objects that hold them (each with a reference of the
# cache's), indexed by the value's Fibonacci hash.
_BOX_V = cython.declare(cython.ulonglong[2048])
_BOX_O = cython.declare(_OBJ_P[2048])
_BOX_MUL = cython.declare(cython.ulonglong, 11400714819323198485)


@cython.cfunc
@cython.inline
@cython.locals(v=cython.ulonglong, h=cython.Py_ssize_t, o=_OBJ_P)
def BOXU(v):
    if v < 257:
        return box_u64(v)
    h = cython.cast(cython.Py_ssize_t, (v * _BOX_MUL) >> 53)
    o = _BOX_O[h]
    if o != cython.NULL and _BOX_V[h] == v:
        return cython.cast(object, o)
    n = cython.declare(object, v)
    Py_INCREF(n)
    _BOX_O[h] = cython.cast(_OBJ_P, n)
    _BOX_V[h] = v
    Py_XDECREF(o)
    return n
"""
"""C functions the compiled branches of generated code call: the
deparser's stores into its buffer; ``SPUT(s, i, v)``, a store of ``v``
into state slot ``i`` with no bounds check (``unchecked_stores`` says why
that is safe), which the C compiler inlines where Cython's item assignment
is a call with type and bounds checks (about 30 instructions a store); and
``STRUE(s, i)``, the truth of slot ``i`` read the same way, with no new
reference, and for the integers 0 and 1 without a call to
``PyObject_IsTrue`` (a validity test: about a dozen a packet-hop in a
deparser); ``ANYV(s, lo, hi, k)``, whether any of the slots ``lo``,
``lo + k``, ... below ``hi`` holds something other than 0: a stack's
validity slots tested at once, as ``s[lo:hi:k] != Zn`` tests them in
Python (``unchecked_guards``) without the slice's list; and ``BOXU(v)``,
the integer object of a parsed field's value, taken from a cache when an
equal value was boxed before. An EtherType, an address or a port recurs
packet after packet; made anew each time, it cost an allocation in the
parser and a deallocation in the state reset, about a hundred
instructions, where a hit costs a multiply, a load and a comparison. The
cache changes which object holds a value, never the value. Python never
sees them."""


_STORE = re.compile(r"^(\s*)s\[(\d+)\] = (.+)$")


def unchecked_stores(text: str) -> str:
    """``text`` with each statement that stores into a fixed slot of the
    packet state (``s[N] = value`` on one line) made ``SPUT(s, N, value)``.
    Safe because every state the engine hands generated code is a copy of
    its program's template, which has every slot the program names
    (``Switch`` checks the egress job's state, the one a caller could
    make)."""
    out = []
    for line in text.splitlines():
        m = _STORE.match(line)
        if m is not None and _one_store(line.strip()):
            line = f"{m.group(1)}SPUT(s, {m.group(2)}, {m.group(3)})"
        out.append(line)
    return "\n".join(out) + "\n"


def _one_store(line: str) -> bool:
    """True when ``line``, which ``_STORE`` found to begin with ``s[N] =``,
    is one whole statement storing one value (not a chained assignment, a
    tuple, or the first line of a longer statement)."""
    try:
        body = ast.parse(line).body
    except SyntaxError:
        return False
    return (len(body) == 1 and isinstance(body[0], ast.Assign) and len(body[0].targets) == 1
            and not isinstance(body[0].value, ast.Tuple))


_TEST = re.compile(r"^(\s*)(if|elif) s\[(\d+)\]:$")


def unchecked_tests(text: str) -> str:
    """``text`` with each ``if s[N]:`` (or ``elif``) that tests one fixed
    slot of the packet state made ``if STRUE(s, N):``, safe for the reason
    ``unchecked_stores`` gives."""
    return "\n".join(_TEST.sub(r"\1\2 STRUE(s, \3):", line)
                     for line in text.splitlines()) + "\n"


_GUARD = re.compile(r"\bs\[(\d+):(\d+):(\d+)\] != Z\d+\b")


def unchecked_guards(text: str) -> str:
    """``text`` with each test of a stack's validity slots at once,
    ``s[lo:hi:k] != Zn`` (``_any_valid_guard`` in the code generator), made
    ``ANYV(s, lo, hi, k)``: the same answer without making the slice, a
    list of n items, and comparing it with the list of n zeros (some 400
    instructions for a four-entry stack, tested on every packet that has
    one in its headers), safe for the reason ``unchecked_stores`` gives."""
    return _GUARD.sub(r"ANYV(s, \1, \2, \3)", text)


_LOCALS = re.compile(r"(\w+)=cython\.(ulonglong|Py_ssize_t)\b")
_READ = re.compile(r"^(\s*)(\w+) = s\[(\d+)\]$")
_PUT = re.compile(r"^(\s*)SPUT\(s, (\d+), (\w+)((?: [+-] \d+)?)\)$")
_GET = {"ulonglong": "get_u64", "Py_ssize_t": "get_ssize"}
_BOX = {"ulonglong": "box_u64", "Py_ssize_t": "box_ssize"}


def typed_items(text: str) -> str:
    """``text`` with the reads of a fixed slot into a local the function
    declares a machine word (``x = s[N]``) made ``x = get_u64(s, N)`` (or
    ``get_ssize``), and the stores of such a local, alone or plus or minus
    a constant (``SPUT(s, N, x + 4)``), boxed through ``box_u64`` (or
    ``box_ssize``): the conversions Cython would make, without its bounds
    check, reference traffic and general paths (``dataplane/runtime/
    ints.pxd``), safe for the reason ``unchecked_stores`` gives. Run after
    ``unchecked_stores``. Each function's types are those of the
    ``@cython.locals`` line before its ``def``."""
    out = []
    pending: dict[str, str] = {}
    types: dict[str, str] = {}
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("@cython.locals("):
            pending = dict(_LOCALS.findall(stripped))
        elif stripped.startswith("def "):
            types, pending = pending, {}
        elif (m := _READ.match(line)) and m.group(2) in types:
            line = f"{m.group(1)}{m.group(2)} = {_GET[types[m.group(2)]]}(s, {m.group(3)})"
        elif (m := _PUT.match(line)) and m.group(3) in types:
            box = _BOX[types[m.group(3)]]
            line = f"{m.group(1)}SPUT(s, {m.group(2)}, {box}({m.group(3)}{m.group(4)}))"
        out.append(line)
    return "\n".join(out) + "\n"


_TRUTH_LINE = re.compile(r"^(\s*)(if|elif) (.+):$")


def unchecked_truths(text: str) -> str:
    """``text`` with each fixed slot of the packet state whose truth alone
    an ``if`` or ``elif`` test takes (an operand of ``and``, ``or`` or
    ``not`` there: ``if s[1910] and ANYV(...)``) made ``STRUE(s, N)``, safe
    for the reason ``unchecked_stores`` gives. Cython tests an object's
    truth through ``PyObject_IsTrue``; STRUE answers for 0, 1, True and
    False by address. Run after ``unchecked_tests``, which takes the
    tests of one slot alone."""
    out = []
    for line in text.splitlines():
        m = _TRUTH_LINE.match(line)
        if m is not None and "s[" in m.group(3):
            line = m.group(1) + m.group(2) + " " + _truths(m.group(3)) + ":"
        out.append(line)
    return "\n".join(out) + "\n"


def _truths(test: str) -> str:
    """``test`` with the slots found in truth position made STRUE."""
    try:
        tree = ast.parse(test, mode="eval")
    except SyntaxError:
        return test
    spans: list[tuple[int, int, int]] = []

    def visit(node: ast.expr, truth: bool) -> None:
        if (truth and isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                and node.value.id == "s" and isinstance(node.slice, ast.Constant)
                and type(node.slice.value) is int):
            spans.append((node.col_offset, node.end_col_offset or 0, node.slice.value))
            return
        if isinstance(node, ast.BoolOp):
            for v in node.values:
                visit(v, truth)
            return
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            visit(node.operand, True)
            return
        if isinstance(node, ast.IfExp):
            visit(node.test, True)
            visit(node.body, truth)
            visit(node.orelse, truth)
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                visit(child, False)

    visit(tree.body, True)
    if not test.isascii():  # offsets are in UTF-8 bytes; generated tests are ASCII
        return test
    for lo, hi, slot in sorted(spans, reverse=True):
        test = f"{test[:lo]}STRUE(s, {slot}){test[hi:]}"
    return test


# Generated functions call each other with their arguments in place: a
# function of one argument then takes it as METH_O, with no check for
# keywords on every call.
_DIRECTIVES = "# cython: always_allow_keywords=False\n"


# NATIVE_CIMPORTS' lines that take names from the project's own .pxd files
# (CPython's are fixed by the interpreter, which the build key names).
_FROM_PROJECT = re.compile(r"^from cython\.cimports\.((?:dataplane|traffic|common)\.[\w.]+)"
                           r" import (.+)$", re.MULTILINE)


def _project_cimports() -> tuple[list[Path], frozenset[str]]:
    """The project .pxd files NATIVE_CIMPORTS cimports from, and the names
    it takes from them (the module header must not import those too)."""
    found = _FROM_PROJECT.findall(NATIVE_CIMPORTS)
    return ([PACKAGE_ROOT.joinpath(*mod.split(".")).with_suffix(".pxd") for mod, _ in found],
            frozenset(n.strip() for _, names in found for n in names.split(",")))


_PROJECT_CIMPORTS = _project_cimports()


@functools.cache
def _layouts() -> str:
    """Comment lines naming the extension types' layouts the built module
    was compiled against (each project .pxd it cimports, by digest): a build
    keyed by its source is then rebuilt, not loaded against a changed
    layout."""
    return "".join(f"# {pxd.name} {hashlib.sha256(pxd.read_bytes()).hexdigest()[:16]}\n"
                   for pxd in _PROJECT_CIMPORTS[0])


def full_source(text: str, names: Mapping[str, Any]) -> str:
    return (_DIRECTIVES + _layouts() + header(names) + NATIVE_CIMPORTS
            + unchecked_truths(unchecked_guards(unchecked_tests(
                typed_items(unchecked_stores(text))))))


def load(text: str, names: Mapping[str, Any]) -> dict[str, Any] | None:
    """The built pipeline's namespace, or None to run the text instead."""
    module = accel.load_pipeline(full_source(text, names))
    return None if module is None else module.__dict__


def job(text: str, names: Mapping[str, Any], label: str = "") -> Job | None:
    """What to build for this pipeline; None when it is built already."""
    source = full_source(text, names)
    out = accel.pipeline_path(source)
    return None if out.is_file() else Job(accel.pipeline_key(source), source, out, label)
