"""A contributor edits a hot module of a built checkout and runs the sim
before building again: the edited module's group runs as Python, with a
warning, and the results are the same.

The checkout is copied (its files as the working tree has them) and the
copy uses this checkout's builds (``INTBED_ACCEL_DIR``: a build's key is
its source, not its path), so the copy is "built" until it is edited.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from common.paths import PACKAGE_ROOT, child_env
from fastpath import loader

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
import samebits_outputs  # noqa: E402

EDITED = ("dataplane/targets/sim/events.py", "dataplane/runtime/tables.py")
SIM_GROUP = ("dataplane.runtime.switch", "dataplane.targets.sim.events",
             "dataplane.targets.sim.heap4", "dataplane.targets.sim.network",
             "orchestration.apps.traffic")

_STATE = """
import json
import dataplane.targets.sim.network, orchestration.apps.traffic, traffic.sender
import traffic.receiver, dataplane.runtime.tables, dataplane.runtime.externs
from fastpath import loader
print(json.dumps(loader.loaded()))
"""

_FIG9 = """
import hashlib, json, sys, tempfile
from pathlib import Path
from experiments.framework import run_experiment
from benchmarks.sim import fast_path
with tempfile.TemporaryDirectory() as tmp:
    out = run_experiment("intlabel-fig9", quick=True, out=Path(tmp) / "f9")
    digest = hashlib.sha256((out / "metrics.csv").read_bytes()).hexdigest()
print(json.dumps({"digest": digest, "fast_path": fast_path()}))
"""


def copy_checkout(dest: Path) -> Path:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"],
                           cwd=PACKAGE_ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        src = PACKAGE_ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def run_in(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = child_env({loader.DIR_ENV: str(loader.accel_dir().parent)}, root)
    env.pop(loader.PURE_ENV, None)
    return subprocess.run([sys.executable, *argv], cwd=root, env=env, capture_output=True,
                          text=True, timeout=900, check=False)


@pytest.fixture(scope="module")
def built_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_checkout(tmp_path_factory.mktemp("checkout"))
    state = run_in(root, "-c", _STATE)
    assert state.returncode == 0, state.stderr[-2000:]
    loaded = json.loads(state.stdout.strip().splitlines()[-1])
    if set(loaded.values()) != {"compiled"}:
        why = f"the compiled fast path is not (fully) built here: {loaded}; run intbed accel build"
        if os.environ.get("INTBED_REQUIRE_ACCEL"):
            pytest.fail(why)
        pytest.skip(why)
    assert state.stderr.strip() == "", state.stderr  # built: nothing to say
    return root


def test_an_edited_hot_module_runs_its_group_as_python_with_a_warning(
        built_copy: Path) -> None:
    for rel in EDITED:
        with (built_copy / rel).open("a") as fh:
            fh.write("\n# a contributor's comment\n")
    state = run_in(built_copy, "-c", _STATE)
    assert state.returncode == 0, state.stderr[-2000:]
    loaded = json.loads(state.stdout.strip().splitlines()[-1])
    # A compiled-only sibling (the event heap, the lpm slots) is not even
    # imported when its group runs as Python.
    for name in (*SIM_GROUP, "dataplane.runtime.tables", "dataplane.runtime.lpm_slots"):
        assert loaded.get(name, "python") == "python", (name, loaded)
    assert "dataplane.targets.sim.heap4" not in loaded
    for name in ("traffic.sender", "traffic.packets", "traffic.receiver",
                 "dataplane.runtime.externs"):
        assert loaded[name] == "compiled", (name, loaded)
    warnings = state.stderr.strip().splitlines()
    assert len(warnings) == 2, warnings  # one for each group, not one per module
    events = next(w for w in warnings if "dataplane.targets.sim.events" in w)
    assert events.startswith("warning: dataplane.targets.sim.events has no compiled build")
    assert all(name in events for name in SIM_GROUP) and "intbed accel build" in events
    assert any(w.startswith("warning: dataplane.runtime.tables has no") for w in warnings)

    ping = run_in(built_copy, "-m", "intbed.cli", "sim", "ping", "--topo", "intlabel-fabric")
    assert ping.returncode == 0, ping.stdout[-2000:] + ping.stderr[-2000:]
    assert "dataplane.targets.sim.events has no compiled build" in ping.stderr

    fig9 = run_in(built_copy, "-c", _FIG9)
    assert fig9.returncode == 0, fig9.stderr[-3000:]
    result = json.loads(fig9.stdout.strip().splitlines()[-1])
    assert not any(result["fast_path"]["pipelines"].values())  # tables runs as Python
    assert result["digest"] == samebits_outputs.QUICK_METRICS["intlabel-fig9"]
