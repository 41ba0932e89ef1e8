"""``intbed shell``: the official p4runtime-shell on a sim switch (through the
gRPC bridge to its in-process service) and on a live Mininet switch (found
from its process), driven through its interactive prompt with lines on
stdin. What the shell reads is checked against what intbed's own P4Runtime
client reads from the same switch.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from intbed.cli import cli
from orchestration import p4rt_shell
from orchestration.binaries.switches import Bmv2Switch, Prepared
from orchestration.live.network import LiveNetwork, live_available
from orchestration.live.running import (
    NoRunningSwitchError,
    RunningSwitch,
    find_switch,
    parse_switch_argv,
    running_switches,
)
from orchestration.sim import build
from p4src import program_path
from topologies.generators import build_topology

TABLE = "MyIngress.ipv4_lpm"
SHELL_TIMEOUT_S = 90
# One line of IPython input: the table's entries as JSON, tagged so the test
# finds them among the prompts.
READ = ("import json; print('ENTRIES ' + json.dumps(sorted([[e.msg().match[0].lpm.value.hex(), "
        "e.msg().match[0].lpm.prefix_len, e.action.action_name, sorted([[p.param_id, "
        f"p.value.hex()] for p in e.msg().action.action.params])] for e in TableEntry('{TABLE}')"
        ".read()])))\n")
INSERT = (f"te = TableEntry('{TABLE}')(action='MyIngress.ipv4_forward'); "
          "te.match['hdr.ipv4.dstAddr'] = '10.9.9.0/24'; "
          "te.action['dstAddr'] = '00:00:00:00:09:09'; te.action['port'] = '2'; te.insert()\n")


@pytest.fixture(scope="module")
def shell_env() -> None:
    try:
        p4rt_shell.shell_python()
    except p4rt_shell.ShellEnvError as exc:
        pytest.skip(str(exc))


def run_shell(args: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "intbed.cli", "shell", *args], input=stdin,
                          capture_output=True, text=True, timeout=SHELL_TIMEOUT_S)


def entries_seen(out: str) -> list[list[Any]]:
    """Every ENTRIES line the shell printed, as [[value, prefix, action, params]]."""
    return [json.loads(line.split("ENTRIES ", 1)[1]) for line in out.splitlines()
            if "ENTRIES " in line]


def expected(client: Any, p4info: Any) -> list[list[Any]]:
    """The table as intbed's own client reads it, in the shell's terms:
    canonical (shortest) big-endian hex, parameter ids from the P4Info."""
    ids = {(a.preamble.name, p.name): p.id for a in p4info.actions for p in a.params}
    rows = []
    for e in client.tables[TABLE].read():
        value, prefix = e["match"]["hdr.ipv4.dstAddr"]
        params = sorted([ids[(e["action"], name)], canonical(v)] for name, v in e["params"].items())
        rows.append([canonical(value), prefix, e["action"], params])
    return sorted(rows)


def canonical(value: int) -> str:
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big").hex()


def test_sim_switch_read_and_written_through_the_bridge(shell_env: None) -> None:
    topo = build_topology("line", n=3)
    net = build(topo, "l3_forward")  # the same network the command builds
    want = expected(net.clients["s2"], net.services["s2"].p4info)
    assert len(want) == 3  # a route to each host

    done = run_shell(["s2", "--sim", "line", "--n", "3"], READ + INSERT + READ)
    assert done.returncode == 0, done.stderr
    assert "virtual time stays at 0 s" in done.stderr
    assert "virtual time at exit: 0 s" in done.stderr  # nothing ran the simulator
    before, after = entries_seen(done.stdout)
    assert before == want
    # The shell is the primary (election id 1,0 above the network's 0,1): its
    # insert lands and reads back with the values it wrote.
    assert "not the primary" not in done.stdout
    assert after == sorted(want + [["0a090900", 24, "MyIngress.ipv4_forward",
                                    [[1, "0909"], [2, "02"]]]])


def test_sim_shell_with_a_lower_election_id_reads_but_cannot_write(shell_env: None) -> None:
    done = run_shell(["s1", "--sim", "line", "--n", "2", "--election-id", "0,0"],
                     INSERT + READ)
    assert done.returncode == 0, done.stderr
    assert "You are not the primary client" in done.stdout
    assert "PERMISSION_DENIED" in done.stdout
    (rows,) = entries_seen(done.stdout)
    assert len(rows) == 2 and "0a090900" not in {r[0] for r in rows}


def test_pace_moves_virtual_time_with_the_wall_clock_while_the_shell_is_open(
        shell_env: None) -> None:
    began = time.monotonic()
    done = run_shell(["s1", "--sim", "line", "--n", "2", "--pace", "2"],
                     "import time; time.sleep(1.0)\n")
    elapsed = time.monotonic() - began
    assert done.returncode == 0, done.stderr
    assert "virtual time moves at 2 s per second" in done.stderr
    (at_exit,) = re.findall(r"virtual time at exit: ([0-9.]+) s", done.stderr)
    # The shell slept 1 s of wall-clock time with the pacer running; the
    # pacer ran no longer than the whole command.
    assert 2 * 1.0 <= float(at_exit) <= 2 * elapsed


@pytest.mark.parametrize(("args", "message"), [
    (["s9", "--sim", "line", "--n", "2"],
     "error: no switch named 's9' in topology line-2 (its switches: s1, s2)"),
    (["s1", "--sim", "line", "--election-id", "1"],
     "error: --election-id '1': expected HIGH,LOW (two integers, e.g. 1,0)"),
    (["s1", "--program", "intlabel"],
     "error: --program applies to a sim switch only: add --sim TOPOLOGY"),
    (["s1", "--pace", "1"], "error: --pace applies to a sim switch only: add --sim TOPOLOGY"),
    (["s1", "--sim", "line", "--run", "/tmp"],
     "error: --run names a live network; --sim builds a sim one: give one of them"),
])
def test_bad_input_is_one_line(args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["shell", *args])
    assert result.exit_code == 1
    assert result.output.strip() == message


def test_no_running_network_and_unknown_names_are_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["shell", "s1", "--run", str(tmp_path)])
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: ")
    assert ("no live network is running on this machine" in line
            or f"--run {tmp_path}: no live network is running from this directory" in line)


def test_the_newest_running_network_is_chosen_unless_run_names_one(tmp_path: Path) -> None:
    old, new = tmp_path / "001-run", tmp_path / "002-run"
    switches = [RunningSwitch("s1", 0, "127.0.0.1:5001", old, 101, 1000),
                RunningSwitch("s2", 1, "127.0.0.1:5002", old, 102, 1001),
                RunningSwitch("s1", 0, "127.0.0.1:6001", new, 201, 2000)]
    assert find_switch("s1", switches=switches).grpc_addr == "127.0.0.1:6001"
    assert find_switch("s2", old, switches).grpc_addr == "127.0.0.1:5002"
    with pytest.raises(NoRunningSwitchError, match=r"no switch named 's2' in the live network "
                       r"running from .*002-run \(its switches: s1\)"):
        find_switch("s2", switches=switches)
    with pytest.raises(NoRunningSwitchError, match="no live network is running on this machine"):
        find_switch("s1", switches=[])


def test_a_switch_command_line_says_where_it_serves(tmp_path: Path) -> None:
    """The argv the bmv2 target launches (Bmv2Switch.command) is read back."""
    log = tmp_path / "003-x" / "switches" / "leaf1.log"
    prepared = Prepared(tmp_path / "p.p4", tmp_path / "p.json", tmp_path / "p4info.txt")
    argv = Bmv2Switch().command(prepared, ports={1: "leaf1-eth1"}, device_id=7,
                                grpc_addr="127.0.0.1:50123", cpu_port=510, log_file=log,
                                pcap_dir=tmp_path / "pcap")
    assert parse_switch_argv(argv) == ("leaf1", 7, "127.0.0.1:50123", tmp_path / "003-x")
    no_grpc = Bmv2Switch().command(prepared, ports={1: "leaf1-eth1"}, log_file=log)[:-2]
    assert parse_switch_argv(no_grpc) is None  # no P4Runtime address: not one of ours
    elsewhere = Bmv2Switch().command(prepared, ports={1: "x"}, log_file="/var/log/s1.log")
    assert parse_switch_argv(elsewhere) is None  # a log outside a run directory


# --------------------------------------------------------------------------- live network

_SKIP = live_available("mininet")


@pytest.mark.skipif(_SKIP is not None, reason=f"mininet target: {_SKIP}")
def test_live_switch_found_by_name_and_read_as_a_backup(shell_env: None,
                                                        tmp_path: Path) -> None:
    topo = build_topology("line", n=1, hosts_per_switch=2)
    with LiveNetwork(topo, program_path("l3_forward"), run_dir=tmp_path) as net:
        net.install_routes()
        client = net.clients["s1"]
        want = expected(client, client.p4info)
        assert len(want) == 2

        # The switch process is found by its command line, with its address.
        found = find_switch("s1", tmp_path, running_switches())
        assert (found.grpc_addr, found.device_id) == (net.switches["s1"].grpc_addr,
                                                      topo.switches["s1"].device_id)
        assert found.pid == net.switches["s1"].process.popen.pid

        done = run_shell(["s1", "--run", str(tmp_path)], READ + INSERT)
        assert done.returncode == 0, done.stderr
        assert f"p4runtime-shell on live switch s1 (device {found.device_id}" in done.stderr
        (rows,) = entries_seen(done.stdout)
        assert rows == want
        # Election id 0,0: a backup beside the network's own controller (0,1),
        # which stays primary; the shell's write is refused and nothing changed.
        assert "You are not the primary client" in done.stdout
        assert "PERMISSION_DENIED" in done.stdout
        assert expected(client, client.p4info) == want

        unknown = CliRunner().invoke(cli, ["shell", "s7", "--run", str(tmp_path)])
        assert unknown.exit_code == 1
        assert unknown.output.strip() == (
            f"error: no switch named 's7' in the live network running from "
            f"{tmp_path.resolve()} (its switches: s1)")
