"""The controller exercises on the mininet target (intbed-switch processes
over veths, the controller speaking gRPC to them): every pair reached, the
switches' register writes taken, nothing left behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestration.network import get_target
from tests.p4utils.test_exercises import EXERCISES, REROUTE, TRACE, intbed

_MININET = get_target("mininet").available()
pytestmark = [
    pytest.mark.skipif(not EXERCISES.is_dir(),
                       reason=f"the p4-learning exercises are not at {EXERCISES}"),
    pytest.mark.skipif(_MININET is not None, reason=f"mininet: {_MININET}"),
]


@pytest.mark.parametrize("folder, script", [(TRACE, "routing-controller.py"),
                                            (REROUTE, "controller.py")])
def test_controller_exercise_reaches_every_pair_on_mininet(clean: None, folder: Path,
                                                           script: str) -> None:
    done = intbed("p4app", "run", "p4app.json", "--controller", script, "--target", "mininet",
                  "--json", cwd=folder)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout[done.stdout.index("{\n"):])
    assert out["reached"] == out["pairs"] > 0
    assert out["controller"]["returncode"] == 0
    assert not any("register writes" in line for line in out["limitations"])
    if folder == REROUTE:
        # The exercise's CLI read every link's state with 'ip link' and wrote
        # each switch's linkState register: refused writes would print here.
        assert "set port" in done.stdout and "Invalid operation" not in done.stdout
