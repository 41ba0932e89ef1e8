"""What ``open_app`` hands each target for the commands P4Runtime does not
carry: on sim, queue commands change the running ports and register writes
reach the engine; on mininet, queue commands are in the Topology before the
switches start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from common.paths import shared_dir
from orchestration.live.options import LiveOptions
from orchestration.network import get_target
from orchestration.p4app.load import load_app
from orchestration.p4app.run import open_app, run_app

HERE = Path(__file__).resolve().parent
L2 = shared_dir() / "third-party" / "p4-learning" / "03-L2_Basic_forwarding"


def write_app(tmp_path: Path, program: Path, commands: str) -> Path:
    (tmp_path / "s1.txt").write_text(commands)
    path = tmp_path / "p4app.json"
    path.write_text(json.dumps({
        "p4_src": str(program),
        "topology": {"assignment_strategy": "l2",
                     "links": [["h1", "s1"], ["h2", "s1"], ["h3", "s1"]],
                     "hosts": {"h1": {}, "h2": {}, "h3": {}},
                     "switches": {"s1": {"cli_input": "s1.txt"}}}}))
    return path


def test_sim_queue_and_register_commands(tmp_path: Path) -> None:
    path = write_app(tmp_path, HERE / "cli_kinds.p4",
                     "set_queue_depth 5 2\nset_queue_rate 250\nregister_write last_len 7 99\n")
    app = load_app(path)
    net = open_app(app, "sim")
    ports = net.switches["s1"].ports  # type: ignore[attr-defined]
    assert [ports[p].depth for p in (1, 2, 3)] == [64, 5, 64]
    assert {ports[p].gap_ns for p in (1, 2, 3)} == {4_000_000}
    assert net.clients["s1"].registers["last_len"].read(7) == 99
    net.stop()


_MININET = get_target("mininet").available()


@pytest.mark.skipif(not L2.is_dir(), reason=f"the p4-learning exercises are not at {L2}")
@pytest.mark.skipif(_MININET is not None, reason=f"mininet: {_MININET}")
def test_mininet_queue_commands_are_set_before_start(clean: None, tmp_path: Path) -> None:
    lines = (L2 / "s1-commands.txt").read_text().splitlines()[:3]
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    path = write_app(app_dir, L2 / "p4src" / "l2_basic_forwarding.p4",
                     "\n".join(lines) + "\nset_queue_rate 5000 2\nset_queue_depth 16\n")
    app = load_app(path)
    result = run_app(app, "mininet", live=LiveOptions(results_dir=tmp_path / "runs"),
                     label="p4app-queues")
    spec = app.topo.switches["s1"]
    assert [spec.port_queue_rate_pps(p) for p in (1, 2, 3)] == [None, 5000.0, None]
    assert [spec.port_queue_depth(p) for p in (1, 2, 3)] == [16, 16, 16]
    assert len(result.pings) == 6 and not result.lost
