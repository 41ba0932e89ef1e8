"""The official p4runtime-shell, a client intbed did not write, drives intbed's switch.

p4runtime-shell pins protobuf < 3.21 (and p4runtime 1.4.1), which cannot
live beside intbed's protobuf, so it gets a virtual environment of its own,
made once and reused (``orchestration.p4rt_shell``). The test
starts intbed's P4Runtime gRPC server in this process with no program; a
script in that environment pushes shell_counter.p4 with
SetForwardingPipelineConfig (P4Info text + intbed device config), inserts a
table entry, reads it back, reads a counter the switch filled meanwhile, and
sees a duplicate insert refused with P4Runtime's per-update error.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from dataplane.compiler.p4info import build_p4info, to_text
from dataplane.compiler.pipeline import compile_file
from dataplane.control.grpc_server import P4RuntimeServer, api_version, encode_device_config
from orchestration import p4rt_shell

PROGRAM = Path(__file__).resolve().parent / "shell_counter.p4"
SCRIPT_TIMEOUT_S = 120

SCRIPT = r'''
import json
import sys

import p4runtime_sh.shell as sh

addr, p4info_path, config_path = sys.argv[1:4]
sh.setup(device_id=0, grpc_addr=addr, election_id=(0, 1),
         config=sh.FwdPipeConfig(p4info_path, config_path), verbose=False)
print("API", sh.APIVersion(), flush=True)
print("READY", flush=True)
sys.stdin.readline()

te = sh.TableEntry("ShellIngress.fwd")(action="ShellIngress.to_port")
te.match["hdr.ethernet.dstAddr"] = "00:00:00:00:00:02"
te.action["port"] = "3"
te.insert()

for entry in sh.TableEntry("ShellIngress.fwd").read():
    msg = entry.msg()
    print("ENTRY", json.dumps({
        "match": {str(m.field_id): m.exact.value.hex() for m in msg.match},
        "action": entry.action.action_name,
        "params": {str(p.param_id): p.value.hex() for p in msg.action.action.params},
    }), flush=True)

counter = sh.CounterEntry("ShellIngress.port_pkts")
counter.index = 2
for cell in counter.read():
    print("COUNTER", json.dumps({"index": cell.index, "packets": cell.packet_count,
                                 "bytes": cell.byte_count}), flush=True)

try:
    te.insert()
except Exception as exc:  # p4runtime-shell's P4RuntimeWriteException
    print("DUPLICATE", type(exc).__name__, " ".join(str(exc).split()), flush=True)

sh.teardown()
print("DONE", flush=True)
'''


def _tail(text: str, lines: int = 8) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])


def shell_python() -> Path:
    """The shell's interpreter; a machine where its venv cannot be made skips."""
    try:
        return p4rt_shell.shell_python()
    except p4rt_shell.ShellEnvError as exc:
        pytest.skip(str(exc))


class Script:
    """The shell script as a subprocess, its stdout lines read by a thread."""

    def __init__(self, cmd: list[str]) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=p4rt_shell.clean_env())
        self.lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def until(self, marker: str) -> list[str]:
        """Lines up to the one starting with ``marker``."""
        out = []
        while True:
            try:
                line = self.lines.get(timeout=SCRIPT_TIMEOUT_S)
            except queue.Empty:
                line = None
            if line is None:
                self.proc.kill()
                _, err = self.proc.communicate()
                raise AssertionError(f"the shell script stopped before {marker}: "
                                     f"{self.seen + out} stderr: {_tail(err, 20)}")
            out.append(line)
            if line.startswith(marker):
                self.seen += out
                return out

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


@pytest.fixture
def server() -> Iterator[P4RuntimeServer]:
    srv = P4RuntimeServer("127.0.0.1:0")
    srv.start()
    yield srv
    srv.stop()


def test_p4runtime_shell_inserts_reads_and_counts(server, tmp_path):
    python = shell_python()
    program = compile_file(PROGRAM)
    p4info = build_p4info(program.schema)
    (tmp_path / "p4info.txt").write_text(to_text(p4info))
    (tmp_path / "config.json").write_bytes(
        encode_device_config("shell_counter", PROGRAM.read_text()))
    (tmp_path / "script.py").write_text(SCRIPT)
    script = Script([str(python), str(tmp_path / "script.py"), server.address,
                     str(tmp_path / "p4info.txt"), str(tmp_path / "config.json")])
    try:
        head = script.until("READY")
        # The shell installed the program: three frames arrive on port 2
        # (the table is still empty, so they are dropped, but counted).
        assert server.switch is not None and server.switch.program.name == "shell_counter"
        frame = bytes.fromhex("000000000002" "000000000001" "0800") + b"x" * 50
        with server.lock:
            for _ in range(3):
                assert server.service.process(2, frame) == []
        script.send("go\n")
        rest = script.until("DONE")
        assert script.proc.wait(timeout=SCRIPT_TIMEOUT_S) == 0
    finally:
        script.close()

    assert head[0] == f"API {api_version()}"  # Capabilities, as the shell asks for it
    entries = [json.loads(line.split(" ", 1)[1]) for line in rest if line.startswith("ENTRY")]
    assert entries == [{"match": {"1": "02"}, "action": "ShellIngress.to_port",
                        "params": {"1": "03"}}]
    counters = [json.loads(line.split(" ", 1)[1]) for line in rest if line.startswith("COUNTER")]
    assert counters == [{"index": 2, "packets": 3, "bytes": 3 * len(frame)}]
    (duplicate,) = [line for line in rest if line.startswith("DUPLICATE")]
    assert duplicate.startswith("DUPLICATE P4RuntimeWriteException")
    assert "At index 0: ALREADY_EXISTS" in duplicate
    # The entry the shell wrote forwards in intbed's switch.
    with server.lock:
        assert server.service.process(1, frame) == [(3, frame)]
