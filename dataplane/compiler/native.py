"""Generated pipelines on the compiled fast path (``fastpath.loader``).

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

from fastpath import loader
from fastpath.build import Job


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


_WORD_READS = {"ulonglong": "get_u64", "Py_ssize_t": "get_ssize"}
_WORD_BOXES = {"ulonglong": "box_u64", "Py_ssize_t": "box_ssize"}
_ZEROS = re.compile(r"Z\d+")


def _slot(node: ast.AST) -> int | None:
    """N when ``node`` is ``s[N]``: a fixed slot of the packet state."""
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
            and node.value.id == "s" and isinstance(node.slice, ast.Constant)
            and type(node.slice.value) is int):
        return node.slice.value
    return None


def _call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Name(name, ast.Load()), list(args), [])


def _s_and(*numbers: int) -> list[ast.expr]:
    return [ast.Name("s", ast.Load()), *(ast.Constant(n) for n in numbers)]


def _word_locals(fn: ast.FunctionDef) -> dict[str, str]:
    """The locals ``fn``'s ``@cython.locals(...)`` declares machine words."""
    out: dict[str, str] = {}
    for dec in fn.decorator_list:
        if (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute)
                and dec.func.attr == "locals" and isinstance(dec.func.value, ast.Name)
                and dec.func.value.id == "cython"):
            for kw in dec.keywords:
                v = kw.value
                if (kw.arg is not None and isinstance(v, ast.Attribute)
                        and isinstance(v.value, ast.Name) and v.value.id == "cython"
                        and v.attr in _WORD_READS):
                    out[kw.arg] = v.attr
    return out


class NativeForms(ast.NodeTransformer):
    """Generated Python made into the forms the compiled build runs, on
    Python's own parse of it (the text itself runs as Python unchanged).

    Every state the engine hands generated code is a copy of its program's
    template, which has every slot the program names (``Switch`` checks the
    egress job's state, the one a caller could make), so reads and stores
    of a fixed slot ``s[N]`` need no bounds check:

    * ``s[N] = value`` (one target, not a tuple) becomes ``SPUT(s, N, value)``;
    * in a function whose ``@cython.locals`` declares ``x`` a machine word,
      ``x = s[N]`` becomes ``x = get_u64(s, N)`` (or ``get_ssize``), and a
      store of ``x``, ``x + C`` or ``x - C`` is boxed by ``box_u64`` (or
      ``box_ssize``): the conversions Cython would make, without its bounds
      check, reference traffic and general paths (``runtime/ints.pxd``);
    * a slot whose truth alone an ``if`` (or ``elif``) takes, the whole
      test or an operand of ``and``, ``or``, ``not`` or a conditional's test
      there, becomes ``STRUE(s, N)``;
    * ``s[lo:hi:k] != Zn``, a stack's validity slots tested at once, becomes
      ``ANYV(s, lo, hi, k)``: the same answer without the slice's list.
    """

    def __init__(self) -> None:
        self._words: list[dict[str, str]] = [{}]

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self._words.append(_word_locals(node))
        self.generic_visit(node)
        self._words.pop()
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        self.generic_visit(node)
        if len(node.targets) != 1:
            return node
        target, value = node.targets[0], node.value
        words = self._words[-1]
        read = _slot(value)
        if isinstance(target, ast.Name) and target.id in words and read is not None:
            node.value = _call(_WORD_READS[words[target.id]], *_s_and(read))
            return node
        slot = _slot(target)
        if slot is None or isinstance(value, ast.Tuple):
            return node
        name = value.left if isinstance(value, ast.BinOp) else value
        if (isinstance(name, ast.Name) and name.id in words
                and (value is name or (isinstance(value, ast.BinOp)
                                       and isinstance(value.op, ast.Add | ast.Sub)
                                       and isinstance(value.right, ast.Constant)
                                       and type(value.right.value) is int
                                       and value.right.value >= 0))):
            value = _call(_WORD_BOXES[words[name.id]], value)
        return ast.copy_location(ast.Expr(_call("SPUT", *_s_and(slot), value)), node)

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        left = node.left
        if (len(node.ops) == 1 and isinstance(node.ops[0], ast.NotEq)
                and isinstance(left, ast.Subscript) and isinstance(left.value, ast.Name)
                and left.value.id == "s" and isinstance(left.slice, ast.Slice)
                and isinstance(node.comparators[0], ast.Name)
                and _ZEROS.fullmatch(node.comparators[0].id)):
            parts = (left.slice.lower, left.slice.upper, left.slice.step)
            if all(isinstance(x, ast.Constant) and type(x.value) is int for x in parts):
                return _call("ANYV", *_s_and(*(x.value for x in parts)))  # type: ignore[union-attr]
        return node

    def visit_If(self, node: ast.If) -> ast.AST:
        self.generic_visit(node)
        node.test = _truths(node.test)
        return node


def _truths(test: ast.expr) -> ast.expr:
    """``test`` with the slots in truth position made ``STRUE``."""
    slot = _slot(test)
    if slot is not None:
        return _call("STRUE", *_s_and(slot))
    if isinstance(test, ast.BoolOp):
        test.values = [_truths(v) for v in test.values]
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test.operand = _truths(test.operand)
    elif isinstance(test, ast.IfExp):
        test.test, test.body, test.orelse = (_truths(test.test), _truths(test.body),
                                             _truths(test.orelse))
    return test


def native_forms(text: str) -> str:
    """The generated ``text`` in the forms the compiled build runs (``NativeForms``)."""
    return ast.unparse(NativeForms().visit(ast.parse(text))) + "\n"


# Generated functions call each other with their arguments in place: a
# function of one argument then takes it as METH_O, with no check for
# keywords on every call.
_DIRECTIVES = "# cython: always_allow_keywords=False\n"


# NATIVE_CIMPORTS' lines that take names from the project's own .pxd files
# (CPython's are fixed by the interpreter, which the build key names).
_FROM_PROJECT = re.compile(r"^from cython\.cimports\.((?:dataplane|traffic|common)\.[\w.]+)"
                           r" import (.+)$", re.MULTILINE)


def _project_cimports() -> tuple[tuple[str, ...], frozenset[str]]:
    """The project modules NATIVE_CIMPORTS cimports from, and the names it
    takes from them (the module header must not import those too)."""
    found = _FROM_PROJECT.findall(NATIVE_CIMPORTS)
    return (tuple(dict.fromkeys(mod for mod, _ in found)),
            frozenset(n.strip() for _, names in found for n in names.split(",")))


_PROJECT_CIMPORTS = _project_cimports()

DEPENDS = tuple(m for m in _PROJECT_CIMPORTS[0] if m in loader.MODULES)
"""The hot modules whose objects a built pipeline reads in C (a table's
slots): it loads only when they run compiled (``loader.load_pipeline``)."""


@functools.cache
def _layouts() -> str:
    """A comment line naming what the built module was compiled against:
    the project .pxd files it cimports and the modules behind them, by
    digest (``loader.dependency_source``). A build keyed by its source is
    then rebuilt, not loaded against a changed layout or beside a module
    that runs as Python because it was edited."""
    digest = hashlib.sha256(loader.dependency_source(list(_PROJECT_CIMPORTS[0]))).hexdigest()
    return f"# compiled against {', '.join(_PROJECT_CIMPORTS[0])}: {digest[:24]}\n"


@functools.cache
def _forms() -> str:
    """A comment line naming this module's code by digest: what turns a
    pipeline's text into the built source is part of the build's key."""
    return f"# native forms {hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:24]}\n"


def _key_source(text: str, names: Mapping[str, Any]) -> str:
    """What a pipeline's build is keyed by: the text as generated, with all
    that goes around it and the forms' code, so a load needs no transform."""
    return _DIRECTIVES + _layouts() + _forms() + header(names) + NATIVE_CIMPORTS + text


def full_source(text: str, names: Mapping[str, Any]) -> str:
    """The source a pipeline's extension is built from."""
    return (_DIRECTIVES + _layouts() + _forms() + header(names) + NATIVE_CIMPORTS
            + native_forms(text))


def load(text: str, names: Mapping[str, Any]) -> dict[str, Any] | None:
    """The built pipeline's namespace, or None to run the text instead."""
    module = loader.load_pipeline(_key_source(text, names), DEPENDS)
    return None if module is None else module.__dict__


def job(text: str, names: Mapping[str, Any], label: str = "") -> Job | None:
    """What to build for this pipeline; None when it is built already."""
    key = _key_source(text, names)
    out = loader.pipeline_path(key)
    if out.is_file():
        return None
    return Job(loader.pipeline_key(key), full_source(text, names), out, label)
