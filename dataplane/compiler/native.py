"""Generated pipelines on the compiled fast path (``common.accel``).

A pipeline's generated Python is built into an extension under the hash of
its full text, so the same program compiled with the same options finds
its build and anything else (another program, a changed code generator)
runs the text itself. The names the generated code uses come in by
imports at the top, the same objects ``pipeline._globals`` hands ``exec``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

from common import accel
from common.accel_build import Job


def header(names: Mapping[str, Any]) -> str:
    """Import lines that bind ``names`` (name -> object) at module level."""
    lines = []
    for name, obj in names.items():
        if name.startswith("__"):
            continue
        if isinstance(obj, ModuleType):
            lines.append(f"import {obj.__name__}" if obj.__name__ == name
                         else f"import {obj.__name__} as {name}")
            continue
        lines.append(f"from {obj.__module__} import {obj.__qualname__} as {name}")
    return "\n".join(lines) + "\n"


NATIVE_CIMPORTS = """\
from cython.cimports.cpython.bytearray import PyByteArray_AS_STRING
from cython.cimports.cpython.object import PyObject
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
"""
"""C functions the compiled branches of generated code call: the
deparser's stores into its buffer, and ``SPUT(s, i, v)``, the parser's
store of ``v`` into state slot ``i`` with no bounds check (the parser's
entry checks the state's length once), which the C compiler inlines where
Cython's item assignment is a call with type and bounds checks (about 30
instructions a store). Python runs the other branch and never looks them
up."""


def full_source(text: str, names: Mapping[str, Any]) -> str:
    return header(names) + NATIVE_CIMPORTS + text


def load(text: str, names: Mapping[str, Any]) -> dict[str, Any] | None:
    """The built pipeline's namespace, or None to run the text instead."""
    module = accel.load_pipeline(full_source(text, names))
    return None if module is None else module.__dict__


def job(text: str, names: Mapping[str, Any], label: str = "") -> Job | None:
    """What to build for this pipeline; None when it is built already."""
    source = full_source(text, names)
    out = accel.pipeline_path(source)
    return None if out.is_file() else Job(accel.pipeline_key(source), source, out, label)
