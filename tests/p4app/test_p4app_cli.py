"""``intbed p4app run`` and ``intbed topo import`` end to end: exit status,
JSON output, a bad command file as one located line, the YAML round trip,
and the L2 exercise on the mininet target where it can run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from common.paths import shared_dir
from intbed.cli import cli
from orchestration.live.options import LiveOptions
from orchestration.network import get_target
from orchestration.p4app.load import load_app
from orchestration.p4app.run import run_app
from topologies.model import Topology

EXERCISES = shared_dir() / "third-party" / "p4-learning"
L2 = EXERCISES / "03-L2_Basic_forwarding"
ECMP = EXERCISES / "05-ECMP"

pytestmark = pytest.mark.skipif(not EXERCISES.is_dir(),
                                reason=f"the p4-learning exercises are not at {EXERCISES}")


def test_run_prints_json_and_exits_0_when_every_pair_pings() -> None:
    result = CliRunner().invoke(cli, ["p4app", "run", str(L2 / "p4app.json"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["reached"], report["pairs"], report["commands"]) == (12, 12, {"s1": 4})
    assert report["hosts"]["h3"] == {"ip": "10.0.0.3/16", "mac": "00:00:0a:00:00:03"}


def test_lost_pings_exit_1(tmp_path: Path) -> None:
    """The L2 network with a command file that forgets h4: h4 is unreachable."""
    commands = tmp_path / "s1.txt"
    commands.write_text("".join(line + "\n" for line in
                                (L2 / "s1-commands.txt").read_text().splitlines()[:3]))
    app = tmp_path / "p4app.json"
    app.write_text(json.dumps({
        "p4_src": str(L2 / "p4src" / "l2_basic_forwarding.p4"),
        "topology": {"assignment_strategy": "l2",
                     "links": [["h1", "s1"], ["h2", "s1"], ["h3", "s1"], ["h4", "s1"]],
                     "hosts": {f"h{i}": {} for i in range(1, 5)},
                     "switches": {"s1": {"cli_input": "s1.txt"}}}}))
    result = CliRunner().invoke(cli, ["p4app", "run", str(app)])
    assert result.exit_code == 1
    assert "6/12 pairs reachable" in result.stdout  # h4 neither sends nor receives


def test_a_bad_command_file_is_one_located_line(tmp_path: Path) -> None:
    (tmp_path / "cmds.txt").write_text("table_add dmac forward 00:00:0a:00:00:01 => 1\n"
                                       "table_add dmac forward 00:00:0a:00:00:02 => 1024\n")
    app = tmp_path / "p4app.json"
    app.write_text(json.dumps({
        "p4_src": str(L2 / "p4src" / "l2_basic_forwarding.p4"),
        "topology": {"assignment_strategy": "l2", "links": [["h1", "s1"], ["h2", "s1"]],
                     "hosts": {"h1": {}, "h2": {}},
                     "switches": {"s1": {"cli_input": "cmds.txt"}}}}))
    result = CliRunner().invoke(cli, ["p4app", "run", str(app)])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert lines == [f"{tmp_path / 'cmds.txt'}:2: error: table_add: parameter egress_port of "
                     "MyIngress.forward '1024' is too wide: 11 bits for a 9-bit field (in "
                     "'table_add dmac forward 00:00:0a:00:00:02 => 1024')"]


@pytest.mark.parametrize("file", [ECMP / "p4app.json", ECMP / "network.py"])
def test_topo_import_writes_yaml_that_loads_back(tmp_path: Path, file: Path) -> None:
    out = tmp_path / "ecmp.yaml"
    result = CliRunner().invoke(cli, ["topo", "import", str(file), "-o", str(out)])
    assert result.exit_code == 0, result.output
    topo = Topology.load_yaml(out)
    assert {h.name: (h.ip, h.prefix_len) for h in topo.hosts.values()} == {
        "h1": ("10.0.1.1", 24), "h2": ("10.0.6.2", 24)}
    assert topo.port_peers("s1")[1:] == [(2, "s2", 1), (3, "s3", 1), (4, "s4", 1),
                                         (5, "s5", 1)]
    assert {s.program for s in topo.switches.values()} == {
        str((ECMP / "p4src" / "ecmp.p4").resolve())}


_MININET = get_target("mininet").available()


@pytest.mark.skipif(_MININET is not None, reason=f"mininet: {_MININET}")
def test_l2_exercise_on_mininet(clean: None, tmp_path: Path) -> None:
    result = run_app(load_app(L2 / "network.py"), "mininet",
                     live=LiveOptions(results_dir=tmp_path), label="p4app-l2")
    assert len(result.pings) == 12 and not result.lost


def test_pcap_dir_shows_one_ecmp_path_per_direction(tmp_path: Path) -> None:
    """The ECMP README's check by tcpdump: ping traffic crosses one of s1's
    four ECMP ports (and one of s6's the other way)."""
    from common.pcap import read_pcap

    result = CliRunner().invoke(cli, ["p4app", "run", str(ECMP / "p4app.json"),
                                      "--pcap-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for switch in ("s1", "s6"):
        used = [p for p in range(2, 6) if (tmp_path / f"{switch}-eth{p}_out.pcap").exists()]
        assert len(used) == 1, (switch, used)
        frames = read_pcap(tmp_path / f"{switch}-eth{used[0]}_out.pcap")
        # From s1 toward h2: h1's request and h1's reply to h2's request; both
        # have the same addresses and protocol, so the same hash and path.
        assert len(frames) == 2
