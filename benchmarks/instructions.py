"""Instructions per packet-hop of a sim case, counted by callgrind.

Wall-clock rates on a shared machine swing by a third from one run to the
next, more than most speed-ups are worth. The number of instructions the
CPU executes for the simulation is not: with a fixed hash seed two runs
differ by a few parts in a hundred thousand (0.3 simulated seconds of the
fabric: 14,188,271 and 14,189,538; what is left varies inside the process
itself, such as object addresses and the hash collisions they make), so
two versions are compared by it: this
one and ``against``, another checkout of intbed (an older release, say),
each run in a fresh process under ``valgrind --tool=callgrind`` with
instrumentation switched on only around the simulated run (not start-up or
compilation).

The switches are callgrind's client requests (``CALLGRIND_START_INSTRUMENTATION``
and ``..._STOP_...``), made by the process itself through a tiny library
gcc builds from ``<valgrind/callgrind.h>``: they take effect at the
instruction that makes them. (``callgrind_control -i on``, sent from
outside, took effect whenever callgrind next polled for commands, and on a
loaded machine two counts of one checkout differed by 0.9%.)

The garbage collector runs in bursts whose timing depends on everything
allocated before (compiling the program included): one full collection
more or less inside a short run moved a GPINT count by 8%. The worker
therefore collects once just before counting starts, so each version's
run begins from the same collector state.

The worker patches the benchmark module's clock: ``bench_fabric`` and
``bench_gpint`` read ``time.perf_counter()`` exactly twice, right before and
after the run, in every release that has them, so the same worker measures
old and new code alike.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from common.errors import IntbedError
from common.paths import PACKAGE_ROOT, child_env
from fastpath.loader import PURE_ENV, accel_dir

CASES = ("fabric", "gpint")
DEFAULT_SECONDS = {"fabric": 2.0, "gpint": 0.2}
"""Simulated seconds: enough packets for a stable per-hop figure (callgrind
runs some 50 times slower than the CPU)."""

_WORKER = """
import ctypes, gc, json, sys, time
import benchmarks.sim as bench

_switch = ctypes.CDLL(sys.argv[3])
_on, _off = _switch.intbed_instrument_on, _switch.intbed_instrument_off

class _Toggle:
    calls = 0

    @staticmethod
    def perf_counter():
        _Toggle.calls += 1
        if _Toggle.calls == 1:
            gc.collect()  # every version starts the run from the same collector state
            now = time.perf_counter()
            _on()
            return now
        _off()
        return time.perf_counter()

bench.time = _Toggle
case, seconds = sys.argv[1], float(sys.argv[2])
if case == "fabric":
    report = bench.bench_fabric(seconds)
else:
    report = bench.bench_gpint(duration_s=seconds)
print("INTBED-HOPS", json.dumps({"packet_hops": report["packet_hops"],
                                 "events": report["events"]}))
"""

_SWITCH_SOURCE = """#include <valgrind/callgrind.h>
void intbed_instrument_on(void) { CALLGRIND_START_INSTRUMENTATION; }
void intbed_instrument_off(void) { CALLGRIND_STOP_INSTRUMENTATION; }
"""
CALLGRIND_HEADER = Path("/usr/include/valgrind/callgrind.h")


def instrument_switch() -> Path:
    """The library whose two functions switch callgrind's instrumentation
    on and off from inside the counted process (built once, by gcc)."""
    digest = hashlib.sha256(_SWITCH_SOURCE.encode()).hexdigest()[:16]
    lib = accel_dir() / f"callgrind-switch-{digest}.so"
    if lib.is_file():
        return lib
    lib.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=lib.parent) as tmp:
        src, out = Path(tmp) / "switch.c", Path(tmp) / "switch.so"
        src.write_text(_SWITCH_SOURCE)
        proc = subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(out), str(src)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise IntbedError(f"gcc could not build callgrind's switch: {proc.stderr.strip()}")
        os.replace(out, lib)
    return lib


_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def valgrind_missing() -> str | None:
    """Why instructions cannot be counted here, or None."""
    for tool in ("valgrind", "gcc"):
        if shutil.which(tool) is None:
            return (f"counting instructions needs {tool} (Debian: apt-get install valgrind "
                    "gcc); wall-clock figures need nothing: intbed bench sim")
    if not CALLGRIND_HEADER.is_file():
        return (f"counting instructions needs {CALLGRIND_HEADER} (Debian: apt-get install "
                "valgrind); wall-clock figures need nothing: intbed bench sim")
    return None


def check_checkout(path: Path) -> Path:
    """``path`` if it is an intbed checkout whose sim benchmark can be run."""
    if not (path / "benchmarks" / "sim.py").is_file():
        raise IntbedError(f"{path}: not an intbed checkout (no benchmarks/sim.py); give the "
                          "top directory of another clone, e.g. one made with "
                          "git worktree add /tmp/old COMMIT")
    return path.resolve()


def count(case: str, seconds: float, checkout: Path | None = None,
          pure: bool = False) -> dict[str, Any]:
    """Instructions of one simulated run of ``case``, in a fresh process
    (``pure``: with the compiled fast path off)."""
    if case not in CASES:
        raise IntbedError(f"unknown case {case!r}; one of {', '.join(CASES)}")
    problem = valgrind_missing()
    if problem is not None:
        raise IntbedError(problem)
    root = checkout if checkout is not None else PACKAGE_ROOT
    env = child_env({"PYTHONHASHSEED": "0", **({PURE_ENV: "1"} if pure else {})}, root)
    argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
            "--callgrind-out-file=/dev/null", sys.executable, "-c", _WORKER, case, str(seconds),
            str(instrument_switch())]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=root, check=False)
    hops_line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("INTBED-HOPS ")), None)
    found = _COLLECTED.search(proc.stderr)
    if proc.returncode != 0 or hops_line is None or found is None:
        tail = " | ".join(ln for ln in proc.stderr.strip().splitlines()[-4:])
        raise IntbedError(f"the {case} case under callgrind failed (exit {proc.returncode}) "
                          f"in {root}: {tail}")
    hops = json.loads(hops_line.split(" ", 1)[1])
    instructions = int(found.group(1))
    return {"case": case, "checkout": str(root), "simulated_s": seconds,
            "packet_hops": hops["packet_hops"], "events": hops["events"],
            "instructions": instructions,
            "instructions_per_hop": round(instructions / max(1, hops["packet_hops"]))}


def compare(cases: list[str], seconds: float | None,
            against: Path | None, against_pure: bool = False) -> dict[str, Any]:
    """Each case in this checkout and, with ``against``, in that one too
    (``against_pure``: in this one with the compiled fast path off), with
    the ratio of instructions per packet-hop (above 1: this one does less
    work per hop)."""
    out: dict[str, Any] = {}
    for case in cases:
        secs = seconds if seconds is not None else DEFAULT_SECONDS[case]
        row: dict[str, Any] = {"this": count(case, secs)}
        if against is not None or against_pure:
            row["against"] = count(case, secs, against, pure=against_pure)
            row["speedup"] = round(row["against"]["instructions_per_hop"]
                                   / row["this"]["instructions_per_hop"], 3)
        out[case] = row
    return out
