"""The compiled fast path and the pure-Python path give the same run,
packet for packet: GPINT's program (the largest generated pipeline, with
its 198-deep probe stacks) over a Watts-Strogatz network, traced in two
processes, one with ``INTBED_PURE_PYTHON=1``. The fabric's l3_forward is
held to the committed golden trace on both paths
(``test_golden_trace.py``).

Where the fast path is not built (``intbed accel build``), the comparison
would compare Python with itself: it skips and says so, unless
``INTBED_REQUIRE_ACCEL=1`` (CI sets it) makes that a failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from common.paths import child_env
from fastpath import loader

_CHILD = """
import hashlib, json, zlib
from benchmarks.sim import bench_gpint, fast_path
h = hashlib.sha256()
seen = [0]
def tap(t_ns, switch, port, frame):
    h.update(b"%d %s %d %d;" % (t_ns, switch.encode(), port, zlib.crc32(frame)))
    seen[0] += 1
run = bench_gpint(n=30, load_pps=4000.0, duration_s=0.4, seed=3, tap=tap)
print(json.dumps({"digest": h.hexdigest(), "transmitted": seen[0],
                  "hops": run["packet_hops"], "events": run["events"],
                  "fast_path": fast_path()}))
"""


def _run(**env: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                          env=child_env({"PYTHONHASHSEED": "0", **env}), check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _fully_compiled(fast: dict) -> bool:
    return all(state == "compiled" for state in fast["modules"].values()) and \
        fast["pipelines"]["gpint"]


def test_gpint_runs_the_same_compiled_and_in_pure_python() -> None:
    compiled = _run()
    if not _fully_compiled(compiled["fast_path"]):
        why = (f"the compiled fast path is not (fully) built: {compiled['fast_path']}; "
               "run intbed accel build")
        if os.environ.get("INTBED_REQUIRE_ACCEL"):
            pytest.fail(why)
        pytest.skip(why)
    pure = _run(**{loader.PURE_ENV: "1"})
    assert not pure["fast_path"]["enabled"] and not pure["fast_path"]["pipelines"]["gpint"]
    assert set(pure["fast_path"]["modules"].values()) == {"python"}
    assert compiled["transmitted"] > 3000, compiled
    assert (compiled["digest"], compiled["transmitted"], compiled["hops"], compiled["events"]) \
        == (pure["digest"], pure["transmitted"], pure["hops"], pure["events"])


def test_a_compiled_egress_job_is_left_to_reference_counting() -> None:
    """Compiled, an egress job (one a packet-hop) is not tracked by the
    cyclic collector, so jobs neither pay for tracking nor set off
    collections of the young generation; it still holds what it is given."""
    import gc

    from benchmarks.sim import fast_path
    from dataplane.runtime.switch import EgressJob

    state = fast_path()["modules"].get("dataplane.runtime.switch")
    if state != "compiled":
        why = f"dataplane.runtime.switch runs as {state}: run intbed accel build"
        if os.environ.get("INTBED_REQUIRE_ACCEL"):
            pytest.fail(why)
        pytest.skip(why)
    fields = [0, 1, 2]
    job = EgressJob(3, fields, b"frame", 5, 2)
    assert not gc.is_tracked(job)
    assert (job.port, job.state, job.frame, job.length, job.offset) == (3, fields, b"frame", 5, 2)
    assert job.payload == b"ame"
