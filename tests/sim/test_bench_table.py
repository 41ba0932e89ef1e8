"""``intbed bench sim`` as a table says so when part of the compiled fast
path did not run (a module or a pipeline changed since the last build ran
as Python), so its figures are not mistaken for the built path's."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

import benchmarks.sim
from intbed.cli import cli


def _report(modules: dict[str, str], pipelines: dict[str, bool]) -> dict[str, Any]:
    case = {"simulated_s": 1.0, "wall_s": 0.5, "realtime_factor": 2.0, "packet_hops_per_s": 10}
    return {
        "fabric": case,
        "gpint": {**case, "topology": "gpint-ws n=100", "hosts": 60, "load_pps": 14000.0},
        "fat_tree": {"topology": "fat-tree k=8", "switches": 80, "hosts": 128,
                     "simulated_s": 1.0, "wall_s": 0.4, "wall_s_with_build": 0.9,
                     "peak_rss_mb": 87.0},
        "fast_path": {"enabled": True, "modules": modules, "pipelines": pipelines,
                      "interpreter": "3.11"},
    }


@pytest.mark.parametrize(("modules", "pipelines", "stale"), [
    ({"traffic.receiver": "compiled"}, {"gpint": True}, []),
    ({"traffic.receiver": "python", "traffic.sender": "compiled"}, {"gpint": True},
     ["traffic.receiver"]),
    ({"traffic.receiver": "compiled"}, {"gpint": False, "l3_forward": True}, ["gpint.p4"]),
])
def test_a_part_that_ran_as_python_is_named(monkeypatch: pytest.MonkeyPatch,
                                            modules: dict[str, str],
                                            pipelines: dict[str, bool], stale: list[str]) -> None:
    monkeypatch.setattr(benchmarks.sim, "run_sim_benchmarks",
                        lambda seconds, k: _report(modules, pipelines))
    result = CliRunner().invoke(cli, ["bench", "sim"], terminal_width=400)
    assert result.exit_code == 0, result.output
    warned = "ran as Python, not built" in result.output
    assert warned is bool(stale)
    for name in stale:
        assert name in result.output.split("not built:")[1].split("(")[0]
    assert "2.0x real time" in result.output
