"""p4-learning exercises with controllers, run unchanged on the sim: the
exercise folders (``../shared/third-party/p4-learning``) are used in
place and left as they were."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from common.paths import shared_dir
from orchestration.apps.ping import icmp_echo
from orchestration.network import get_target
from orchestration.p4app.controller import ControllerSession
from orchestration.p4app.load import load_app
from orchestration.p4app.reach import ping_all
from orchestration.p4app.run import open_app

EXERCISES = shared_dir() / "third-party" / "p4-learning"
TRACE = EXERCISES / "09-Traceroutable"
REROUTE = EXERCISES / "12-Fast-Reroute"
LEARN = EXERCISES / "04-L2_Learning"
L2 = EXERCISES / "03-L2_Basic_forwarding"
pytestmark = pytest.mark.skipif(not EXERCISES.is_dir(),
                                reason=f"the p4-learning exercises are not at {EXERCISES}")


def intbed(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed command, so the controller's own output is captured too."""
    return subprocess.run([str(Path(sys.executable).parent / "intbed"), *args], cwd=cwd,
                          text=True, capture_output=True, timeout=300)


def wait_for(check: Callable[[], bool], timeout_s: float = 30.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("folder, script", [(TRACE, "routing-controller.py"),
                                            (REROUTE, "controller.py")])
def test_controller_exercise_reaches_every_pair_on_sim(folder: Path, script: str) -> None:
    before = sorted(p.name for p in folder.iterdir())
    done = intbed("p4app", "run", "p4app.json", "--controller", script, "--target", "sim",
                  "--json", cwd=folder)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout[done.stdout.index("{\n"):])
    assert out["pairs"] == len(out["hosts"]) * (len(out["hosts"]) - 1) > 0
    assert out["reached"] == out["pairs"]
    assert out["controller"]["returncode"] == 0
    assert sorted(p.name for p in folder.iterdir()) == before  # topology.json removed


def test_without_the_controller_the_exercise_does_not_route() -> None:
    """The reach above is the controller's doing: its tables start empty."""
    done = intbed("p4app", "run", "p4app.json", "--target", "sim", "--json", cwd=TRACE)
    out = json.loads(done.stdout)
    assert done.returncode == 1 and out["reached"] == 0


def reroute_run(target: str, tell_the_switches: bool, **options: Any
                ) -> dict[tuple[str, str], float | None]:
    """12-Fast-Reroute with s1-s2 failed: through the exercise's CLI
    (interfaces down and the switches' linkState registers set), or behind
    the switches' backs (the link dies, nothing is told). Pings per pair."""
    app = load_app(REROUTE / "p4app.json")
    net = open_app(app, target, for_controller=True, **options)
    try:
        with ControllerSession(net, get_target(target), app, REROUTE) as session:
            proc = session.launch(REROUTE / "controller.py", stdin=subprocess.PIPE)
            assert proc.stdin is not None
            if tell_the_switches:
                proc.stdin.write(b"fail s1 s2\n")
            proc.stdin.write(b"exit\n")
            proc.stdin.close()
            result = session.wait(120)
            assert result.returncode == 0
        if not tell_the_switches:
            net.fail_link("s1", "s2")  # type: ignore[attr-defined]
        assert link_is_down(net, target, app), "the failure is not in effect"
        return {(p.src, p.dst): p.rtt_us for p in ping_all(net, app)}
    finally:
        net.stop()


def link_is_down(net: Any, target: str, app: Any) -> bool:
    """s1's end of s1-s2: its wire drops everything (sim) or it is down (live)."""
    port = next(p for p, peer, _ in app.topo.port_peers("s1") if peer == "s2")
    if not get_target(target).live:
        return net.switches["s1"].ports[port].wire.loss == 1.0
    shown = subprocess.run(["ip", "link", "show", "dev", net.switches["s1"].ports[port]],
                           capture_output=True, text=True, check=False).stdout
    return "state UP" not in shown


def test_fast_reroute_recovers_after_a_link_fails() -> None:
    rerouted = reroute_run("sim", tell_the_switches=True)
    assert all(rtt is not None for rtt in rerouted.values()), rerouted
    blind = reroute_run("sim", tell_the_switches=False)
    # s1's shortest way to h2 is the failed link: unrerouted, h1 loses h2.
    assert blind[("h1", "h2")] is None and blind[("h2", "h1")] is None


@pytest.mark.parametrize("app_file, mode", [
    ("p4app_digest.json", "digest"),
    pytest.param("p4app_cpu.json", "cpu", marks=pytest.mark.skipif(
        os.geteuid() != 0, reason="the sim's CPU port is a veth pair, which needs root")),
])
def test_l2_learning_fills_the_tables(app_file: str, mode: str) -> None:
    """04-L2_Learning's controller on sim: over digests (the nnpy learning
    socket), or over the CPU port (a clone sniffed on s1-cpu-eth1)."""
    app = load_app(LEARN / app_file)
    net = open_app(app, "sim")
    h1, h2 = app.topo.hosts["h1"], app.topo.hosts["h2"]
    observer = net.clients["s1"]
    try:
        with ControllerSession(net, get_target("sim"), app, LEARN) as session:
            session.launch(LEARN / "l2_learning_controller.py", ["s1", mode])

            def read(table: str) -> list[dict]:
                with session.lock:
                    return observer.tables[table].read()
            assert wait_for(lambda: len(read("MyIngress.broadcast")) == 4)
            assert read("MyIngress.dmac") == []
            time.sleep(1.0)  # the controller subscribes (or sniffs) after its set-up
            frame = icmp_echo(h1.mac, h2.mac, h1.ip, h2.ip, 1, 1)
            with session.lock:
                net.send_frame("h1", frame)
            assert wait_for(lambda: len(read("MyIngress.dmac")) == 1, 20)
            (entry,) = read("MyIngress.dmac")
            mac = int(h1.mac.replace(":", ""), 16)
            assert entry["match"] == {"hdr.ethernet.dstAddr": mac}
            assert entry["params"] == {"egress_port": app.topo.host_switch("h1")[1]}
            assert [e["match"] for e in read("MyIngress.smac")] == [
                {"hdr.ethernet.srcAddr": mac}]
            pings = session.ping_all()  # paced: the controller learns as they go
            learned = {e["match"]["hdr.ethernet.dstAddr"]: e["params"]["egress_port"]
                       for e in read("MyIngress.dmac")}
        assert all(p.rtt_us is not None for p in pings)
        assert learned == {int(h.mac.replace(":", ""), 16): app.topo.host_switch(name)[1]
                           for name, h in app.topo.hosts.items()}
    finally:
        net.stop()


def test_a_controller_that_raises_shows_its_traceback(tmp_path: Path) -> None:
    script = tmp_path / "bad.py"
    script.write_text("from p4utils.utils.helper import load_topo\n"
                      "topo = load_topo('topology.json')\n"
                      "print('switches', sorted(topo.get_p4switches()))\n"
                      "raise RuntimeError('the user code fails here')\n")
    done = intbed("p4app", "run", str(L2 / "p4app.json"), "--controller", str(script),
                  "--target", "sim", cwd=tmp_path)
    assert done.returncode == 1
    assert "switches ['s1']" in done.stdout
    assert "Traceback" in done.stderr and "RuntimeError: the user code fails here" in done.stderr
    assert "controller bad.py: exited with status 1" in done.stderr
    assert "12/12 pairs reachable" in done.stdout  # the run went on to its pings
    assert not (tmp_path / "topology.json").exists()


def test_p4app_up_serves_a_controller_started_by_hand(tmp_path: Path) -> None:
    """``p4app up`` prints the environment; a script started with it reaches
    the switches through both APIs (one switch, two API objects, as p4-learning's
    P4Runtime controllers open them); SIGTERM tears the network down and
    removes topology.json."""
    script = tmp_path / "probe.py"
    script.write_text(
        "from p4utils.utils.helper import load_topo\n"
        "from p4utils.utils.sswitch_thrift_API import SimpleSwitchThriftAPI\n"
        "topo = load_topo('topology.json')\n"
        "api = SimpleSwitchThriftAPI(topo.get_thrift_port('s1'))\n"
        "print('handle', api.table_add('ipv4_lpm', 'drop', ['10.9.0.0/16']))\n"
        "print('entries', api.table_num_entries('ipv4_lpm'))\n"
        "from p4utils.utils.sswitch_p4runtime_API import SimpleSwitchP4RuntimeAPI\n"
        "rt = SimpleSwitchP4RuntimeAPI(topo.get_p4switch_id('s1'), topo.get_grpc_port('s1'),\n"
        "                              p4rt_path=topo.get_p4rtswitches()['s1']['p4rt_path'])\n"
        "rt.table_add('ipv4_lpm', 'drop', ['10.8.0.0/16'])\n"
        "print('s1', sorted(e['match']['hdr.ipv4.dstAddr']\n"
        "                   for e in rt.client.tables['MyIngress.ipv4_lpm'].read()))\n")
    up = subprocess.Popen([str(Path(sys.executable).parent / "intbed"), "p4app", "up",
                           str(TRACE / "p4app.json"), "--topology-dir", str(tmp_path)],
                          stdout=subprocess.PIPE, text=True)
    try:
        assert up.stdout is not None
        lines = [up.stdout.readline() for _ in range(5)]
        env = dict(os.environ)
        for line in lines:
            for word in line.split():
                if word.startswith(("PYTHONPATH=", "INTBED_P4UTILS_CONNECT=")):
                    key, _, value = word.partition("=")
                    env[key] = value
        assert "INTBED_P4UTILS_CONNECT" in env, lines
        done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, text=True,
                              capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "handle 0" in done.stdout and "entries 1" in done.stdout
        # Both APIs on s1 share the script's one session with it.
        assert f"s1 [({0x0A080000}, 16), ({0x0A090000}, 16)]" in done.stdout, done.stdout
    finally:
        up.terminate()
        up.wait(timeout=30)
    assert not (tmp_path / "topology.json").exists()


def test_exec_scripts_names_the_controller(tmp_path: Path) -> None:
    """p4-utils starts the p4app.json's exec_scripts with the network; so
    does ``p4app run`` when no --controller is given."""
    (tmp_path / "probe.py").write_text(
        "import sys\n"
        "from p4utils.utils.helper import load_topo\n"
        "print('probe', sys.argv[1:], sorted(load_topo('topology.json').get_p4switches()))\n")
    app = json.loads((TRACE / "p4app.json").read_text())
    app["p4_src"] = str(TRACE / app["p4_src"])
    app["exec_scripts"] = [{"cmd": "sudo python probe.py --flag 3", "reboot_run": True}]
    (tmp_path / "p4app.json").write_text(json.dumps(app))
    done = intbed("p4app", "run", "p4app.json", "--no-ping", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "probe ['--flag', '3'] ['s1', 's2', 's3', 's4', 's5', 's6']" in done.stdout
    app["exec_scripts"] = [{"cmd": "bash start.sh"}]
    (tmp_path / "p4app.json").write_text(json.dumps(app))
    done = intbed("p4app", "run", "p4app.json", cwd=tmp_path)
    assert done.returncode == 1
    assert "exec_scripts: 'bash start.sh': intbed runs scripts given as" in done.stderr
