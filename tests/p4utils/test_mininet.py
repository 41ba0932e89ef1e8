"""The controller exercises on the mininet target (intbed-switch processes
over veths, the controller speaking gRPC to them): every pair reached, the
switches' register writes taken, nothing left behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestration.network import get_target
from tests.p4utils.test_exercises import (
    EXERCISES,
    LEARN,
    REROUTE,
    TRACE,
    intbed,
    reroute_run,
)

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


@pytest.mark.parametrize("app_file, mode", [("p4app_digest.json", "digest"),
                                            ("p4app_cpu.json", "cpu")])
def test_l2_learning_controller_learns_every_host_on_mininet(clean: None, tmp_path: Path,
                                                             app_file: str, mode: str) -> None:
    """04-L2_Learning: over digests (the nnpy learning socket) or over the
    CPU port (clones sniffed on s1-cpu-eth1 with Scapy), the controller
    fills dmac with every host's MAC and port once the hosts have pinged."""
    from orchestration.live.options import LiveOptions
    from orchestration.p4app.controller import ControllerSession
    from orchestration.p4app.load import load_app
    from orchestration.p4app.reach import ping_all
    from orchestration.p4app.run import open_app

    app = load_app(LEARN / app_file)
    assert (mode == "cpu") == ("s1" in app.cpu_ports)
    net = open_app(app, "mininet", for_controller=True,
                   live=LiveOptions(results_dir=tmp_path / "runs"), label="p4utils-l2")
    try:
        with ControllerSession(net, get_target("mininet"), app, LEARN) as session:
            session.launch(LEARN / "l2_learning_controller.py", ["s1", mode])
            assert session.wait(3.0).returncode is None  # its loop runs on
            pings = ping_all(net, app)
            learned = {e["match"]["hdr.ethernet.dstAddr"]: e["params"]["egress_port"]
                       for e in net.clients["s1"].tables["MyIngress.dmac"].read()}
    finally:
        net.stop()
    assert all(p.rtt_us is not None for p in pings)
    want = {int(h.mac.replace(":", ""), 16): app.topo.host_switch(name)[1]
            for name, h in app.topo.hosts.items()}
    assert learned == want


def test_fast_reroute_recovers_after_a_link_fails_on_mininet(clean: None, tmp_path: Path
                                                             ) -> None:
    """The exercise's CLI takes s1-s2's interfaces down with ip (and sudo)
    and sets the linkState registers; h1 and h2 still reach each other,
    which they do not when the link dies without the switches being told."""
    from orchestration.live.options import LiveOptions

    def live(label: str) -> dict[str, object]:
        return {"live": LiveOptions(results_dir=tmp_path / label), "label": label}
    rerouted = reroute_run("mininet", True, **live("told"))
    assert all(rtt is not None for rtt in rerouted.values()), rerouted
    blind = reroute_run("mininet", False, **live("blind"))
    assert blind[("h1", "h2")] is None and blind[("h2", "h1")] is None
