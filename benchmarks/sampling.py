"""Where a sim case's wall-clock time goes, by native function, sampled by perf.

cProfile sees Python functions only, and on the compiled fast path few
are left; callgrind counts instructions, not time. At the GPINT scale the
two differ most: a hundred switches' dictionaries, tables and states do
not stay in the processor's caches, so a hop's instructions there take
about twice the time they take in the fabric. ``perf record`` sampling
the ``cpu-clock`` software event (which works in virtual machines that
offer no hardware counters) sees time, cache misses included, in every
native function: the generated pipeline's, the engine's, and CPython's
own (dictionary lookups, attribute reads, allocation). Sampling is
switched on only around the simulated run, through perf's control FIFO,
so start-up and compilation are not in the figures.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.sim import CASES, PIPELINE_PART, module_part
from common.errors import IntbedError
from common.paths import PACKAGE_ROOT

_WORKER = """
import json, sys, time
import benchmarks.sim as bench

ctl = sys.argv[3]

class _Toggle:
    calls = 0

    @staticmethod
    def perf_counter():
        _Toggle.calls += 1
        with open(ctl, "w") as f:
            f.write("enable\\n" if _Toggle.calls == 1 else "disable\\n")
        return time.perf_counter()

bench.time = _Toggle
report = bench.CASES[sys.argv[1]](duration_s=float(sys.argv[2]))
print("INTBED-RUN", json.dumps(report))
"""

_CYTHON_PREFIX = re.compile(r"^__pyx_(?:pf|pw|f|gb|tp_[a-z]+)_")
_MODULE_SUFFIX = re.compile(r"-[0-9a-f]{24}\.cpython-.*\.so$|\.cpython-.*\.so$")

_DICT = ("_Py_dict_lookup", "dict_get", "dict_subscript", "PyDict_GetItem", "lookdict",
         "unicodekeys_lookup", "dictkeys_", "insertdict", "PyDict_SetItem")
_ATTR = ("PyMember_GetOne", "_PyObject_GenericGetAttrWithDict", "PyObject_GetAttr",
         "_PyObject_GetMethod", "_PyType_Lookup", "PyObject_VectorcallMethod", "method_vectorcall",
         "PyObject_GenericGetAttr", "slot_tp_getattr")
_ALLOC = ("_PyObject_Malloc", "_PyObject_Free", "dealloc", "_PyLong_New", "PyLong_From",
          "_Py_NewReference", "PyTuple_New", "tuple_alloc", "PyBytes_FromStringAndSize",
          "_PyBytes_FromSize", "PyObject_GC_UnTrack", "PyObject_Malloc", "PyObject_Free",
          "list_resize", "_Py_Dealloc", "PyList_New", "PyObject_GC_Del", "_PyObject_GC_New")


def _cpython(symbol: str) -> str:
    if symbol.startswith(_DICT):
        return "CPython: dictionary lookups"
    if symbol.startswith(_ATTR):
        return "CPython: attribute and method lookups"
    if any(s in symbol for s in _ALLOC):
        return "CPython: allocating and freeing objects"
    return "CPython: other (integers, lists, calls, ...)"


@functools.cache
def perf_missing() -> str | None:
    """Why time cannot be sampled here, or None (perf is tried once on
    ``true``: a kernel may forbid sampling, or a perf may not match it)."""
    if shutil.which("perf") is None:
        return ("sampling needs perf (Debian: apt-get install linux-perf); "
                "instruction counts need valgrind: intbed bench sim --instructions")
    try:
        proc = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", os.devnull,
                               "--", "true"], capture_output=True, text=True, timeout=30,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"perf record does not run here: {exc}"
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-2:])
        return (f"perf record does not run here (exit {proc.returncode}: {tail}); "
                "as root, or with kernel.perf_event_paranoid at 2 or less, it can")
    return None


def part_of(dso: str, symbol: str) -> str:
    """The sim's part (``benchmarks.sim.MODULE_PARTS``, as ``--profile``
    groups it) of the extension a sample landed in; in libpython, what
    CPython was doing."""
    module = _MODULE_SUFFIX.sub("", dso)
    if module.startswith("p4gen_"):
        return PIPELINE_PART
    part = module_part(module)
    if part is not None:
        return part
    if dso.startswith("libpython"):
        return _cpython(symbol)
    if dso.startswith(("libc", "ld-linux", "[kernel", "[vdso")):
        return "C library and kernel"
    return "other"


def short_symbol(dso: str, symbol: str) -> str:
    """A native function's name as a reader finds it: ``module: name`` with
    Cython's prefix and mangled module name taken off (what is left keeps
    Cython's length digits: ``6Switch_16_bind_data_plane_3ingress`` is the
    ``ingress`` closure of ``Switch._bind_data_plane``)."""
    module = _MODULE_SUFFIX.sub("", dso)
    name = symbol
    found = _CYTHON_PREFIX.match(symbol)
    if found:
        name = symbol[found.end():]
        mangled = "".join(f"{len(p)}{p}_" for p in module.split("."))
        if name.startswith(mangled):
            name = name[len(mangled):]
    if module.startswith("p4gen_"):
        module = "pipeline"
    if not module or module.startswith(("libpython", "libc", "[")):
        return name
    return f"{module}: {name}"


def parse_report(text: str) -> list[tuple[int, str, str]]:
    """(samples, shared object, symbol) rows of ``perf report -F
    overhead,sample,dso,sym -t '\\t'``."""
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cells = [c.strip() for c in line.split("\t")]
        if len(cells) < 4 or not cells[1].isdigit():
            continue
        symbol = cells[3]
        if symbol.startswith("[") and "] " in symbol:
            symbol = symbol.split("] ", 1)[1]
        rows.append((int(cells[1]), cells[2], symbol.strip()))
    return rows


def summarize(rows: list[tuple[int, str, str]], top: int) -> dict[str, Any]:
    """Shares of the samples by part and the ``top`` functions."""
    total = sum(n for n, _, _ in rows)
    if total == 0:
        raise IntbedError("perf recorded no samples of the run (was it too short? "
                          "raise --seconds)")
    parts: dict[str, int] = {}
    for n, dso, symbol in rows:
        key = part_of(dso, symbol)
        parts[key] = parts.get(key, 0) + n
    ordered = dict(sorted(parts.items(), key=lambda kv: -kv[1]))
    functions = sorted(rows, key=lambda r: -r[0])[:top]
    return {
        "samples": total,
        "parts_pct": {k: round(100 * v / total, 2) for k, v in ordered.items()},
        "top": [{"pct": round(100 * n / total, 2), "function": short_symbol(dso, sym),
                 "object": _MODULE_SUFFIX.sub("", dso), "symbol": sym}
                for n, dso, sym in functions],
    }


def sample(case: str, seconds: float, frequency: int = 1000, top: int = 30) -> dict[str, Any]:
    """Sample one simulated run of ``case`` in a fresh process."""
    if case not in CASES:
        raise IntbedError(f"unknown case {case!r}; one of {', '.join(CASES)}")
    problem = perf_missing()
    if problem is not None:
        raise IntbedError(problem)
    with tempfile.TemporaryDirectory(prefix="intbed-sample-") as tmp:
        ctl = Path(tmp) / "ctl"
        data = Path(tmp) / "perf.data"
        os.mkfifo(ctl)
        env = dict(os.environ, PYTHONPATH=str(PACKAGE_ROOT))
        argv = ["perf", "record", "-q", "-D", "-1", f"--control=fifo:{ctl}", "-e", "cpu-clock",
                "-F", str(frequency), "-o", str(data), "--", sys.executable, "-c", _WORKER,
                case, str(seconds), str(ctl)]
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=PACKAGE_ROOT,
                              check=False)
        run_line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("INTBED-RUN ")),
                        None)
        if proc.returncode != 0 or run_line is None or not data.is_file():
            tail = " | ".join(proc.stderr.strip().splitlines()[-4:])
            raise IntbedError(f"the {case} case under perf record failed (exit "
                              f"{proc.returncode}): {tail or 'no output'}")
        report = subprocess.run(
            ["perf", "report", "-i", str(data), "--no-children", "-F", "overhead,sample,dso,sym",
             "-g", "none", "--stdio", "-t", "\t"],
            capture_output=True, text=True, check=False)
        if report.returncode != 0:
            raise IntbedError(f"perf report failed: {report.stderr.strip()[-300:]}")
    out = summarize(parse_report(report.stdout), top)
    run = json.loads(run_line.split(" ", 1)[1])
    out.update({"case": case, "frequency_hz": frequency, "run": run})
    return out
