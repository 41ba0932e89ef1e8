"""orchestration.binaries.switches: exact command lines of both switch binaries, and
the start-up and teardown sequence against the fake p4c / BMv2 of fakebin/."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from common.errors import IntbedError
from dataplane.compiler.p4info import build_p4info, to_text
from dataplane.compiler.pipeline import compile_file
from orchestration.binaries.switches import (
    BINARIES,
    Bmv2Switch,
    IntbedSwitch,
    Prepared,
    cli_errors,
    get_binary,
    launch,
)

HERE = Path(__file__).resolve().parent
FWD = HERE / "fwd.p4"
PREPARED = Prepared(source=Path("/p/fwd.p4"), program=Path("/c/fwd.json"),
                    p4info=Path("/c/fwd.p4info.txtpb"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_registry() -> None:
    assert sorted(BINARIES) == ["bmv2", "intbed"]
    assert isinstance(get_binary("bmv2"), Bmv2Switch)
    assert isinstance(get_binary("intbed"), IntbedSwitch)
    with pytest.raises(IntbedError) as err:
        get_binary("tofino")
    assert str(err.value) == "error: unknown switch binary 'tofino' (choices: bmv2, intbed)"


def test_bmv2_command_line() -> None:
    argv = Bmv2Switch().command(PREPARED, ports={2: "veth2", 1: "veth1"}, device_id=0,
                                grpc_addr="127.0.0.1:50051", cpu_port=510, thrift_port=9090,
                                pcap_dir="/tmp/pcaps", log_file="/tmp/s1.log",
                                queue={1: (64, 1000)})
    assert argv == ["simple_switch_grpc", "-i", "1@veth1", "-i", "2@veth2",
                    "--device-id", "0", "--thrift-port", "9090", "--pcap", "/tmp/pcaps",
                    "--log-file", "/tmp/s1.log", "--log-flush", "/c/fwd.json",
                    "--", "--grpc-server-addr", "127.0.0.1:50051", "--cpu-port", "510"]
    bare = Bmv2Switch().command(PREPARED, ports={}, grpc_addr="0.0.0.0:9559")
    assert bare == ["simple_switch_grpc", "--device-id", "0", "--thrift-port", "9090",
                    "/c/fwd.json", "--", "--grpc-server-addr", "0.0.0.0:9559"]


def test_intbed_command_line_carries_the_queues() -> None:
    prepared = Prepared(source=Path("/p/fwd.p4"), program=Path("/p/fwd.p4"),
                        p4info=Path("/c/fwd.p4info.txtpb"))
    argv = IntbedSwitch(executable=["intbed-switch"]).command(
        prepared, ports={1: "s1-eth1", 2: "s1-eth2"}, device_id=3, grpc_addr="127.0.0.1:50053",
        cpu_port=255, thrift_port=9093, pcap_dir="/tmp/p",
        queue={2: (16, None), 1: (64, 1000)})
    assert argv == ["intbed-switch", "-i", "1@s1-eth1", "-i", "2@s1-eth2",
                    "--device-id", "3", "--thrift-port", "9093", "--pcap", "/tmp/p",
                    "/p/fwd.p4", "--", "--grpc-server-addr", "127.0.0.1:50053",
                    "--cpu-port", "255", "--queue-depth", "1:64", "--queue-rate", "1:1000",
                    "--queue-depth", "2:16"]


def test_bmv2_queue_commands() -> None:
    lines = Bmv2Switch().queue_commands({3: (None, 500), 1: (64, 1000), 2: (8, None)})
    assert lines == ["set_queue_depth 64 1", "set_queue_rate 1000 1", "set_queue_depth 8 2",
                     "set_queue_rate 500 3"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"ports": {511: "veth"}}, "-i 511@veth: port 511 is not a switch port (0..510)"),
    ({"ports": {1: "veth1"}, "cpu_port": 1}, "--cpu-port 1: the port is already veth1"),
    ({"ports": {}, "grpc_addr": "nowhere"}, "gRPC address 'nowhere': expected HOST:PORT"),
    ({"ports": {}, "queue": {1: (0, None)}},
     "queue settings: port 1: depth 0 must be an integer >= 1 (packets)"),
    ({"ports": {}, "queue": {1: (4, 2.5)}},
     "queue settings: port 1: rate 2.5 must be an integer >= 0 (packets/s)"),
])
def test_bad_settings_are_refused(kwargs: dict, message: str) -> None:
    for binary in (Bmv2Switch(), IntbedSwitch(executable=["intbed-switch"])):
        with pytest.raises(IntbedError) as err:
            binary.command(PREPARED, **kwargs)
        assert err.value.message == message


def test_cli_errors() -> None:
    out = ("Obtaining JSON from switch...\nDone\nRuntimeCmd: Error: Invalid table name (x)\n"
           "RuntimeCmd: Invalid match key: Error while parsing 0x1ff - too large\n"
           "RuntimeCmd: Entry has been added with handle 0\nRuntimeCmd: ")
    assert cli_errors(out) == ["Error: Invalid table name (x)",
                               "Invalid match key: Error while parsing 0x1ff - too large"]


def test_available_names_the_missing_binary(no_tools) -> None:
    assert Bmv2Switch().available() == (
        "simple_switch_grpc not found on PATH (build BMv2 with --with-pi to use the bmv2 "
        "target)")
    assert IntbedSwitch(executable=["intbed-switch"]).available() == (
        "intbed-switch not found on PATH")


def test_available_with_the_tools(fake_tools) -> None:
    assert Bmv2Switch().available() is None
    fake_tools.remove("simple_switch_CLI")
    assert Bmv2Switch().available().startswith("simple_switch_CLI not found on PATH")


def test_intbed_prepare_writes_our_p4info(tmp_path: Path) -> None:
    binary = IntbedSwitch(executable=["intbed-switch"])
    prepared = binary.prepare(FWD, cache_dir=tmp_path)
    assert prepared.source == FWD and prepared.program == FWD
    assert prepared.p4info.read_text() == to_text(build_p4info(compile_file(FWD).schema))
    assert prepared.p4info.parent.parent == tmp_path
    doc = json.loads(binary.device_config(prepared))
    assert doc == {"format": "intbed-p4", "name": "fwd", "source": FWD.read_text()}


def test_bmv2_launch_sequence_and_teardown(fake_tools, tmp_path: Path) -> None:
    grpc_port, thrift_port = free_port(), free_port()
    binary = get_binary("bmv2")
    with launch(binary, FWD, ports={1: "veth1", 2: "veth2"}, device_id=7,
                grpc_addr=f"127.0.0.1:{grpc_port}", cpu_port=510, thrift_port=thrift_port,
                log_file=tmp_path / "s1.log", queue={2: (16, 500), 1: (None, 1000)},
                cache_dir=tmp_path / "cache") as proc:
        json_path = proc.prepared.program
        assert json_path.parent.parent == tmp_path / "cache"
        assert binary.device_config(proc.prepared) == (HERE / "fwd.json").read_bytes()
        assert proc.returncode is None
        pid = proc.pid
    assert proc.returncode == -15
    assert gone(pid)
    with socket.socket() as s:  # the gRPC port is free again
        s.bind(("127.0.0.1", grpc_port))

    steps = [(e["prog"], e["event"]) for e in fake_tools.events() if e["event"] != "version"]
    assert steps == [
        ("p4c", "compile"),
        ("simple_switch_grpc", "start"), ("simple_switch_grpc", "ready"),
        ("simple_switch_CLI", "start"),
        ("simple_switch_CLI", "line"), ("simple_switch_grpc", "thrift"),
        ("simple_switch_CLI", "line"), ("simple_switch_grpc", "thrift"),
        ("simple_switch_CLI", "line"), ("simple_switch_grpc", "thrift"),
        ("simple_switch_grpc", "sigterm"),
    ]
    start = fake_tools.events("simple_switch_grpc")[0]
    assert start["argv"] == [
        "-i", "1@veth1", "-i", "2@veth2", "--device-id", "7", "--thrift-port", str(thrift_port),
        "--log-file", str(tmp_path / "s1.log"), "--log-flush", str(json_path),
        "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}", "--cpu-port", "510"]
    assert start["pid"] == pid
    cli = fake_tools.events("simple_switch_CLI")
    assert cli[0]["argv"] == ["--thrift-port", str(thrift_port)]
    assert [e["line"] for e in cli[1:]] == [
        "set_queue_rate 1000 1", "set_queue_depth 16 2", "set_queue_rate 500 2"]


def test_launch_without_queues_runs_no_cli(fake_tools, tmp_path: Path) -> None:
    grpc_port = free_port()
    with launch(Bmv2Switch(), FWD, ports={1: "veth1"}, grpc_addr=f"0.0.0.0:{grpc_port}",
                thrift_port=free_port(), cache_dir=tmp_path):
        pass
    assert [e["prog"] for e in fake_tools.events() if e["prog"] != "p4c"] == [
        "simple_switch_grpc"] * 3  # start, ready, sigterm


def test_intbed_launch_puts_queues_on_the_command_line(fake_tools, tmp_path: Path) -> None:
    fake_tools.add("intbed-switch", "simple_switch_grpc", prog="intbed-switch")
    grpc_port = free_port()
    binary = IntbedSwitch(executable=["intbed-switch"])
    with launch(binary, FWD, ports={1: "veth1"}, grpc_addr=f"127.0.0.1:{grpc_port}",
                thrift_port=free_port(), queue={1: (8, 100)}, cache_dir=tmp_path) as proc:
        assert proc.argv[-4:] == ["--queue-depth", "1:8", "--queue-rate", "1:100"]
    assert [e["event"] for e in fake_tools.events()] == ["start", "ready", "sigterm"]
    assert fake_tools.events()[0]["prog"] == "intbed-switch"
    assert fake_tools.events()[0]["argv"][-4:] == proc.argv[-4:]


def test_switch_that_dies_at_startup(fake_tools, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_SWITCH_EXIT", "3")
    with pytest.raises(IntbedError) as err:
        launch(Bmv2Switch(), FWD, ports={}, grpc_addr=f"127.0.0.1:{free_port()}",
               cache_dir=tmp_path, ready_timeout=20)
    assert err.value.message == (
        "simple_switch_grpc exited with status 3 during startup\nfake switch: cannot start")


def test_refused_queue_setting_stops_the_switch(fake_tools, tmp_path: Path,
                                                monkeypatch) -> None:
    monkeypatch.setenv("FAKE_THRIFT_ERROR", "set_queue_rate")
    with pytest.raises(IntbedError) as err:
        leaked = launch(Bmv2Switch(), FWD, ports={}, grpc_addr=f"127.0.0.1:{free_port()}",
                        thrift_port=free_port(), queue={4: (10, 20)}, cache_dir=tmp_path)
        leaked.stop()  # only reached if launch wrongly succeeds
    assert err.value.message == "simple_switch_CLI: Error: fake refusal of set_queue_rate"
    events = fake_tools.events("simple_switch_grpc")
    assert [e["event"] for e in events][-1] == "sigterm"
    assert gone(events[0]["pid"])


def test_wait_ready_times_out_without_a_server() -> None:
    with pytest.raises(IntbedError) as err:
        Bmv2Switch().wait_ready(f"127.0.0.1:{free_port()}", timeout=0.3)
    assert err.value.message.startswith("simple_switch_grpc: no gRPC server at 127.0.0.1:")


def test_intbed_switch_accepts_the_command_line() -> None:
    """The argv IntbedSwitch writes is one intbed-switch's own parser reads back."""
    from dataplane.targets.softswitch.cli import parse_args

    prepared = Prepared(source=FWD, program=FWD, p4info=Path("/c/fwd.p4info.txtpb"))
    argv = IntbedSwitch(executable=["intbed-switch"]).command(
        prepared, ports={1: "veth1", 2: "veth2"}, device_id=2, grpc_addr="127.0.0.1:50052",
        cpu_port=255, log_file="/tmp/s2.log", queue={1: (16, 1000), 2: (None, 50)})
    opts = parse_args(argv[1:])
    assert (opts.program, opts.interfaces, opts.device_id, opts.grpc_addr, opts.cpu_port) == (
        FWD, {1: "veth1", 2: "veth2"}, 2, "127.0.0.1:50052", 255)
    assert (opts.port_queue_depth, opts.port_queue_rate) == ({1: 16}, {1: 1000.0, 2: 50.0})
    assert opts.log_file == Path("/tmp/s2.log")
