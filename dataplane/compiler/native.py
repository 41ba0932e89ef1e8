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


NATIVE_CIMPORTS = "from cython.cimports.cpython.bytearray import PyByteArray_AS_STRING\n"
"""C functions the compiled branches of generated code call (the
deparser's stores into its buffer); Python runs the other branch and never
looks them up."""


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
