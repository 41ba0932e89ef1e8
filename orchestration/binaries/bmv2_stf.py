"""Run STF packet tests on real BMv2, and compare BMv2 with intbed's engine.

The procedure is p4c's own STF driver's (``backends/bmv2/bmv2stf.py``), which
needs no root: the program is compiled by ``p4c``, and ``simple_switch``
reads and writes pcap files instead of interfaces::

    simple_switch --log-file switch.log --log-flush --use-files 0 \\
        --thrift-port P --device-id D -i 0@pcap0 -i 1@pcap1 ... PROGRAM.json

``--use-files`` makes port N of ``-i N@NAME`` read ``NAME_in.pcap`` and write
``NAME_out.pcap`` (in the working directory). Inputs of ports that get
``packet`` lines are FIFOs, so packets are fed while the test runs; ports
that are only expected to emit get an empty pcap file. Table entries and
the other control-plane commands go to one ``simple_switch_CLI --thrift-port
P`` through its stdin, translated from STF as bmv2stf translates them
(``add`` -> ``table_add``, ``setdefault`` -> ``table_set_default``,
``mirroring_add`` and ``mc_*`` unchanged). Outputs are judged by
``dataplane.testing.stf.compare_outputs``, the matcher of intbed's own runner.

Differences from bmv2stf, each making a run more deterministic:

* Each CLI command is sent only after the previous one's prompt came back,
  so a command has taken effect before the next packet (bmv2stf sleeps 1 s).
* Before a command that follows packets, at ``wait`` and at the end, the
  runner waits until the switch log and the output files stop growing.
* Packets carry increasing timestamps in STF order; BMv2's file reader
  (``PcapFilesReader``, no real-time replay) sends the earliest first.
* A ternary or range table entry without an STF priority gets priority 1
  (``9999`` on the CLI) instead of none, which the CLI would refuse.
* Decimal ternary values mean the whole value, as in ``dataplane.testing.stf``.
* Table and action names resolve as on intbed's engine (``common.names``:
  the exact name, else the one name ending in ``.NAME``), so an STF file
  names the same objects on both; bmv2stf also takes a plain text suffix.

BMv2's file reader takes a packet from every input that is still open
before it forwards any, so with ``packet`` lines on two or more ports a
command that comes after the first packet may reach the switch before
earlier packets are processed. Such runs carry a note.

``python -m orchestration.binaries.bmv2_stf DIR_OR_STF...`` (``make test-bmv2``)
runs every test on both engines and lists the packets where they differ;
bytes under the ``*`` nibbles of a packet's ``expect`` line (timestamps and
queue depths, which BMv2's real clock decides) do not count.
"""

from __future__ import annotations

import argparse
import codecs
import errno
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from common.errors import IntbedError, Loc, StfError
from common.pcap import LINKTYPE_ETHERNET, file_header, iter_pcap, record_bytes
from common.procs import stop_process
from dataplane.testing.stf import (
    Expect,
    McGroupCreate,
    McNodeAssociate,
    McNodeCreate,
    MirroringAdd,
    Packet,
    SetDefault,
    StfCommand,
    StfKey,
    StfResult,
    TableAdd,
    Wait,
    compare_outputs,
    parse_stf,
    pick_name,
)
from orchestration.binaries.switches import cli_errors, wait_tcp
from p4src import DIR as P4SRC_DIR
from p4src import programs

__all__ = [
    "Bmv2Program",
    "Bmv2Run",
    "Comparison",
    "Disagreement",
    "available",
    "cli_command",
    "compare_case",
    "compare_engines",
    "find_cases",
    "main",
    "program_for",
    "read_pcap_frames",
    "run_bmv2",
    "run_stf_bmv2",
    "switch_command",
]

SWITCH = "simple_switch"
CLI = "simple_switch_CLI"
PCAP_PREFIX = "pcap"  # -i N@pcapN, as bmv2stf names its files
LOG_FILE = "switch.log"
PROMPT = "RuntimeCmd: "
# bmv2stf passes 10000 - PRIO, BMv2's smaller-wins order (STF's larger wins).
PRIORITY_BASE = 10000
DEFAULT_PRIORITY = 1
RUN_TIMEOUT = 60.0
QUIET = 0.3  # s without log or output growth that counts as "settled"
SETTLE_MAX = 5.0
SWITCH_STOP_S = 10.0  # SIGTERM to SIGKILL

# Input files as bmv2stf writes them: Ethernet, snaplen 65535.
PCAP_SNAPLEN = 65535


# --------------------------------------------------------------------------- pcap files


def pcap_header() -> bytes:
    return file_header(LINKTYPE_ETHERNET, PCAP_SNAPLEN)


def pcap_record(data: bytes, seq: int) -> bytes:
    """One record stamped ``seq`` microseconds: the order BMv2's reader keeps."""
    return record_bytes(data, seq * 1000)


def read_pcap_frames(path: str | Path) -> list[bytes]:
    """The frames of a pcap file BMv2 wrote (link type 0); a file cut short
    ends the list, as a switch stopped mid-write leaves it."""
    return [frame for _, frame in iter_pcap(path, truncated_ok=True)]


# --------------------------------------------------------------------------- p4c's JSON


@dataclass(frozen=True, slots=True)
class Bmv2Key:
    name: str
    match_type: str
    width: int | None


@dataclass(frozen=True, slots=True)
class Bmv2Action:
    name: str
    params: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class Bmv2Table:
    name: str
    match_type: str
    keys: tuple[Bmv2Key, ...]
    actions: tuple[Bmv2Action, ...]


@dataclass(slots=True)
class Bmv2Program:
    """The tables and actions of a BMv2 JSON, named as simple_switch_CLI names them."""

    tables: list[Bmv2Table]

    @classmethod
    def load(cls, path: str | Path) -> Bmv2Program:
        try:
            doc = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise IntbedError(f"{path}: cannot read BMv2 JSON: {exc}") from None
        return cls.from_json(doc)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Bmv2Program:
        actions = {a["id"]: Bmv2Action(a["name"], tuple(
            (p["name"], p["bitwidth"]) for p in a.get("runtime_data", ())))
            for a in doc.get("actions", ())}
        headers = {h["name"]: h["header_type"] for h in doc.get("headers", ())}
        types = {t["name"]: {f[0]: f[1] for f in t.get("fields", ())}
                 for t in doc.get("header_types", ())}
        tables = []
        for pipeline in doc.get("pipelines", ()):
            for t in pipeline.get("tables", ()):
                keys = tuple(_key(k, headers, types) for k in t.get("key", ()))
                acts = tuple(actions[i] for i in t.get("action_ids", ()) if i in actions)
                tables.append(Bmv2Table(t["name"], t.get("match_type", "exact"), keys, acts))
        return cls(tables)


def _key(k: Mapping[str, Any], headers: Mapping[str, str],
         types: Mapping[str, Mapping[str, int]]) -> Bmv2Key:
    """A key's name (the P4 expression p4c records, else the target) and width,
    found as runtime_CLI.py finds it."""
    target = k.get("target")
    name = k.get("name") or (".".join(target) if isinstance(target, list) else str(target))
    kind = k["match_type"]
    width: int | None
    if kind == "valid" or (isinstance(target, list) and target[1:2] == ["$valid$"]):
        width = 1
    elif isinstance(target, list) and len(target) == 2:
        width = types.get(headers.get(target[0], ""), {}).get(target[1])
    else:
        width = None
    return Bmv2Key(name, kind, width)


# --------------------------------------------------------------------------- STF -> CLI


def _table(program: Bmv2Program, name: str, loc: Loc) -> Bmv2Table:
    full = pick_name(name, [t.name for t in program.tables], "table", loc)
    return next(t for t in program.tables if t.name == full)


def _action(table: Bmv2Table, name: str, args: Sequence[tuple[str, int]],
            loc: Loc) -> tuple[Bmv2Action, list[str]]:
    full = pick_name(name, [a.name for a in table.actions], "action", loc,
                     f"in table {table.name}")
    action = next(a for a in table.actions if a.name == full)
    given = dict(args)
    unknown = [a for a in given if a not in {p for p, _ in action.params}]
    if unknown:
        raise StfError(f"action {full} has no parameter '{unknown[0]}'", loc)
    missing = [p for p, _ in action.params if p not in given]
    if missing:
        raise StfError(f"action {full} needs parameter(s) {', '.join(missing)}", loc)
    return action, [f"0x{given[p] & ((1 << w) - 1):x}" for p, w in action.params]


def _find_key(table: Bmv2Table, name: str, loc: Loc) -> int:
    """Index of the key field ``name`` names, by bmv2stf's spellings."""
    names = [k.name for k in table.keys]
    name = re.sub(r"\$(\d+)", r"[\1]", name)  # bmv2stf writes h$0 for h[0]
    spellings = [name, name + "$", name + ".$valid$"]
    if name.endswith(".valid"):
        spellings.append(name[:-len("valid")] + "$valid$")
    for spelling in spellings:
        if spelling in names:
            return names.index(spelling)
    hits = [i for i, n in enumerate(names)
            if n.endswith("." + name) or n.endswith("." + name + "$")
            or (name == "valid" and n.endswith("$valid$"))]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise StfError(f"key name '{name}' of table {table.name} is ambiguous", loc)
    raise StfError(f"table {table.name} has no key field '{name}' (keys: "
                   f"{', '.join(names) or 'none'})", loc)


def _key_text(key: Bmv2Key, stf: StfKey | None, loc: Loc) -> str:
    """One match field as simple_switch_CLI reads it (runtime_CLI.parse_match_key)."""
    width = key.width
    full = (1 << width) - 1 if width is not None else -1
    kind, where = key.match_type, f"key {key.name} ({key.match_type})"
    if stf is None:  # bmv2stf's "don't care" values for fields the STF line leaves out
        return {"ternary": "0&&&0", "lpm": "0/0",
                "range": f"0->0x{max(full, 0):x}"}.get(kind, "0")
    if stf.mask is not None and kind != "ternary":
        raise StfError(f"{where}: 'V&&&MASK' is for ternary keys", loc)
    if stf.prefix_len is not None and kind != "lpm":
        raise StfError(f"{where}: 'V/LEN' is for lpm keys", loc)
    if stf.has_wildcards and kind not in ("ternary", "lpm"):
        raise StfError(f"{where}: '*' digits are for ternary and lpm keys", loc)
    value = stf.value
    if kind == "ternary":
        mask = stf.mask if stf.mask is not None else (
            stf.care_mask if stf.care_mask is not None else full)
        return f"0x{value & mask & full:x}&&&0x{mask & full:x}"
    if kind == "lpm":
        if stf.prefix_len is not None:
            plen = stf.prefix_len
        elif width is None:
            raise StfError(f"{where}: the field's width is not in the BMv2 JSON; "
                           "write V/LEN", loc)
        else:
            plen = min(width, stf.care_bits) if stf.care_bits is not None else width
        if width is not None:
            value &= full & ~(full >> plen)
        return f"0x{value:x}/{plen}"
    if kind == "range":
        return f"0x{value:x}->0x{value:x}"
    if kind == "valid":
        return str(int(bool(value)))
    return f"0x{value:x}"


def cli_command(program: Bmv2Program, cmd: StfCommand) -> str | None:
    """The simple_switch_CLI line for a control-plane STF command (None for
    ``packet``, ``expect`` and ``wait``); a name BMv2 does not know raises StfError."""
    if isinstance(cmd, TableAdd):
        table = _table(program, cmd.table, cmd.loc)
        given: dict[int, StfKey] = {}
        for k in cmd.keys:
            index = _find_key(table, k.name, cmd.loc)
            if index in given:
                raise StfError(f"key field {table.keys[index].name} is given twice", cmd.loc)
            given[index] = k
        keys = [_key_text(key, given.get(i), cmd.loc) for i, key in enumerate(table.keys)]
        action, args = _action(table, cmd.action, cmd.args, cmd.loc)
        line = " ".join(["table_add", table.name, action.name, *keys, "=>", *args])
        if table.match_type in ("ternary", "range"):
            prio = cmd.priority if cmd.priority is not None else DEFAULT_PRIORITY
            line += f" {PRIORITY_BASE - prio}"
        return line
    if isinstance(cmd, SetDefault):
        table = _table(program, cmd.table, cmd.loc)
        action, args = _action(table, cmd.action, cmd.args, cmd.loc)
        return " ".join(["table_set_default", table.name, action.name, *args])
    if isinstance(cmd, MirroringAdd):
        return f"mirroring_add {cmd.session} {cmd.port}"
    if isinstance(cmd, McGroupCreate):
        return f"mc_mgrp_create {cmd.group}"
    if isinstance(cmd, McNodeCreate):
        return " ".join(["mc_node_create", str(cmd.rid), *map(str, cmd.ports)])
    if isinstance(cmd, McNodeAssociate):
        return f"mc_node_associate {cmd.group} {cmd.node}"
    return None


# --------------------------------------------------------------------------- processes


def switch_command(json_path: str | Path, ports: Sequence[int], thrift_port: int,
                   device_id: int, switch: str = SWITCH) -> list[str]:
    """simple_switch's argv for a file-driven run (bmv2stf's flags)."""
    argv = [switch, "--log-file", LOG_FILE, "--log-flush", "--use-files", "0",
            "--thrift-port", str(thrift_port), "--device-id", str(device_id)]
    for port in sorted(ports):
        argv += ["-i", f"{port}@{PCAP_PREFIX}{port}"]
    return [*argv, str(json_path)]


class _FifoWriter(threading.Thread):
    """Feeds one input FIFO. Opening waits for simple_switch to open its end
    (non-blocking opens fail with ENXIO until then), so the order in which
    BMv2 opens its inputs does not matter; writes happen in this thread, so a
    full pipe never blocks the test."""

    def __init__(self, path: Path, stop: threading.Event) -> None:
        super().__init__(daemon=True, name=f"fifo-{path.name}")
        self.path, self.stop_event = path, stop
        self.items: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.error: str | None = None

    def run(self) -> None:
        fd = -1
        while not self.stop_event.is_set():
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError as exc:
                if exc.errno != errno.ENXIO:
                    self.error = f"cannot open {self.path.name}: {exc.strerror}"
                    return
                time.sleep(0.01)
        if fd < 0:
            return
        os.set_blocking(fd, True)
        try:
            with os.fdopen(fd, "wb", buffering=0) as out:
                out.write(pcap_header())
                while (item := self.items.get()) is not None:
                    out.write(item)
        except BrokenPipeError:
            pass  # the switch ended first; its exit status tells why


class _Cli:
    """One simple_switch_CLI, driven a command at a time: a command is done
    when the CLI prints its next prompt (``cmd.Cmd`` prompts on a pipe too)."""

    def __init__(self, exe: str, thrift_port: int, cwd: Path, timeout: float) -> None:
        self.exe, self.timeout = exe, timeout
        try:
            self.proc = subprocess.Popen(
                [exe, "--thrift-port", str(thrift_port)], cwd=cwd, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        except OSError as exc:
            raise IntbedError(f"cannot start {exe}: {exc.strerror}") from None
        self._chunks: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._buf = ""
        threading.Thread(target=self._read, daemon=True, name="cli-out").start()
        try:
            self._until_prompt()  # "Obtaining JSON from switch... Done", the intro
        except BaseException:
            self.proc.kill()
            self.proc.wait()
            raise

    def _read(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        while data := os.read(fd, 65536):
            self._chunks.put(decoder.decode(data))
        self._chunks.put(None)

    def _until_prompt(self) -> str:
        deadline = time.monotonic() + self.timeout
        while PROMPT not in self._buf:
            try:
                chunk = self._chunks.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise IntbedError(f"{self.exe} did not answer within {self.timeout:g} s"
                                  ) from None
            if chunk is None:
                tail = self._buf.strip().splitlines()[-1:] or ["no output"]
                self._chunks.put(None)
                raise IntbedError(f"{self.exe} ended early: {tail[0]}")
            self._buf += chunk
        out, _, self._buf = self._buf.partition(PROMPT)
        return out

    def run(self, line: str) -> str:
        """Send one command; what the CLI printed for it."""
        try:
            self.proc.stdin.write((line + "\n").encode())  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
        except BrokenPipeError:
            raise IntbedError(f"{self.exe} ended early") from None
        return self._until_prompt()

    def close(self) -> None:
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
        except BrokenPipeError:
            pass
        stop_process(self.proc, self.timeout, sig=None)  # EOF on stdin ends the CLI


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def available(switch: str = SWITCH, cli: str = CLI, p4c: str = "p4c") -> str | None:
    """None when p4c and BMv2 are on PATH, else why the BMv2 runner cannot run."""
    for exe, what in ((switch, "BMv2"), (cli, "BMv2"), (p4c, "p4c")):
        if shutil.which(exe) is None:
            return f"{exe} not found on PATH (build {what} to run this)"
    return None


# --------------------------------------------------------------------------- one run


@dataclass(slots=True)
class Bmv2Run:
    """What BMv2 emitted for one STF test, and what the test expected."""

    outputs: dict[int, list[bytes]]
    expects: list[Expect]
    packet_ports: list[int]
    notes: list[str] = field(default_factory=list)

    def result(self) -> StfResult:
        return compare_outputs(self.expects, self.outputs, self.packet_ports)


class _Runner:
    def __init__(self, commands: list[StfCommand], json_path: Path, workdir: Path, *,
                 switch: str, cli: str, timeout: float, quiet: float,
                 settle_max: float) -> None:
        self.commands, self.json_path, self.workdir = commands, json_path, workdir
        self.switch_exe, self.cli_exe = switch, cli
        self.timeout, self.quiet, self.settle_max = timeout, quiet, settle_max
        program = Bmv2Program.load(json_path)
        # Every name is checked before anything starts.
        self.lines = [cli_command(program, c) for c in commands]
        self.packet_ports = sorted({c.port for c in commands if isinstance(c, Packet)})
        self.ports = sorted(set(self.packet_ports)
                            | {c.port for c in commands if isinstance(c, Expect)})
        self.stop = threading.Event()
        self.writers: dict[int, _FifoWriter] = {}
        self.proc: subprocess.Popen | None = None
        self.console: IO[bytes] | None = None
        self.cli: _Cli | None = None
        # File sizes before the first packet not yet settled (see _settle).
        self.before: tuple[int, ...] | None = None

    def run(self) -> Bmv2Run:
        thrift_port = _free_port()
        device_id = thrift_port  # unique while the port is ours; names BMv2's IPC socket
        ipc = Path(f"/tmp/bmv2-{device_id}-notifications.ipc")
        try:
            self._start(thrift_port, device_id)
            run = self._drive()
            self._finish()
        finally:
            status = self._teardown()
            ipc.unlink(missing_ok=True)
        # SIGTERM (-15) is how every run ends (bmv2stf accepts 0 and -15 too).
        if status not in (None, 0, -15):
            raise IntbedError(f"{self.switch_exe} died with status {status}"
                              + self._console_tail())
        for port in self.ports:
            out = self.workdir / f"{PCAP_PREFIX}{port}_out.pcap"
            run.outputs[port] = read_pcap_frames(out) if out.exists() else []
        return run

    def _start(self, thrift_port: int, device_id: int) -> None:
        for port in self.ports:
            path = self.workdir / f"{PCAP_PREFIX}{port}_in.pcap"
            if port in self.packet_ports:
                os.mkfifo(path)
                self.writers[port] = _FifoWriter(path, self.stop)
            else:
                path.write_bytes(pcap_header())
        argv = switch_command(self.json_path, self.ports, thrift_port, device_id,
                              self.switch_exe)
        self.console = open(self.workdir / "switch.out", "w+b")  # noqa: SIM115
        try:
            self.proc = subprocess.Popen(argv, cwd=self.workdir, stdin=subprocess.DEVNULL,
                                         stdout=self.console, stderr=subprocess.STDOUT)
        except OSError as exc:
            raise IntbedError(f"cannot start {self.switch_exe}: {exc.strerror}") from None
        for writer in self.writers.values():
            writer.start()
        wait_tcp("127.0.0.1", thrift_port, self.timeout, self._died,
                 f"{self.switch_exe}'s Thrift server")
        self.cli = _Cli(self.cli_exe, thrift_port, self.workdir, self.timeout)

    def _drive(self) -> Bmv2Run:
        run = Bmv2Run({}, [], list(self.packet_ports))
        seq, interleaved = 0, False
        for cmd, line in zip(self.commands, self.lines):
            if isinstance(cmd, Packet):
                seq += 1
                if self.before is None:
                    self.before = self._activity()
                self.writers[cmd.port].items.put(pcap_record(cmd.data, seq))
            elif isinstance(cmd, Expect):
                run.expects.append(cmd)
            elif isinstance(cmd, Wait):
                self._settle()
            elif line is not None:
                if self.before is not None:
                    self._settle()
                    interleaved = True
                assert self.cli is not None
                bad = cli_errors(self.cli.run(line))
                if bad:
                    raise StfError(f"{self.cli_exe} refused '{line}': {bad[0]}", cmd.loc)
        if interleaved and len(self.packet_ports) > 1:
            run.notes.append("control-plane commands follow packets on several input "
                             "ports: BMv2's file reader may apply them early")
        return run

    def _finish(self) -> None:
        assert self.cli is not None
        self.cli.close()
        for writer in self.writers.values():
            writer.items.put(None)
        self._settle()
        failed = [w.error for w in self.writers.values() if w.error]
        if failed:
            raise IntbedError(failed[0])

    def _died(self) -> str | None:
        if self.proc is None or self.proc.poll() is None:
            return None
        return (f"{self.switch_exe} exited with status {self.proc.returncode}"
                + self._console_tail())

    def _console_tail(self) -> str:
        path = self.workdir / "switch.out"
        lines = path.read_text(errors="replace").strip().splitlines() if path.exists() else []
        return (":\n" + "\n".join(lines[-10:])) if lines else ""

    def _activity(self) -> tuple[int, ...]:
        files = sorted(self.workdir.glob(LOG_FILE + "*"))
        files += [self.workdir / f"{PCAP_PREFIX}{p}_out.pcap" for p in self.ports]
        return tuple(f.stat().st_size if f.exists() else -1 for f in files)

    def _settle(self) -> None:
        """Return once the switch log and the outputs have not grown for ``quiet`` s.

        After packets were sent, the quiet time counts only once the files
        differ from their sizes before the first of them (BMv2 logs every
        packet), so a slow switch is not mistaken for an idle one.
        ``settle_max`` bounds the wait either way.
        """
        start = last_change = time.monotonic()
        seen = self._activity()
        moved = self.before is None or seen != self.before
        self.before = None
        while True:
            time.sleep(0.02)
            dead = self._died()
            if dead is not None:
                raise IntbedError(dead)
            now, current = time.monotonic(), self._activity()
            if current != seen:
                seen, last_change, moved = current, now, True
            if (moved and now - last_change >= self.quiet) or now - start >= self.settle_max:
                return

    def _teardown(self) -> int | None:
        """Stop everything this run started; the switch's exit status."""
        self.stop.set()
        if self.cli is not None and self.cli.proc.poll() is None:
            self.cli.proc.kill()
            self.cli.proc.wait()
        status = None
        if self.proc is not None:
            status = stop_process(self.proc, SWITCH_STOP_S)
        for writer in self.writers.values():
            writer.items.put(None)
            writer.join(5)
        if self.console is not None:
            self.console.close()
        return status


def run_bmv2(p4_path: str | Path, stf_path: str | Path, *, cache_dir: str | Path | None = None,
             workdir: str | Path | None = None, switch: str = SWITCH, cli: str = CLI,
             p4c: str = "p4c", timeout: float = RUN_TIMEOUT, quiet: float = QUIET,
             settle_max: float = SETTLE_MAX) -> Bmv2Run:
    """Compile ``p4_path`` with p4c, run ``stf_path`` on simple_switch, collect outputs.

    ``workdir`` keeps the run's files (pcaps, ``switch.log``, ``switch.out``);
    by default a temporary directory is used and removed.
    """
    from orchestration.binaries.p4c import compile_bmv2

    commands = parse_stf(stf_path)
    json_path, _ = compile_bmv2(p4_path, cache_dir, p4c=p4c)
    if workdir is not None:
        work = Path(workdir)
        work.mkdir(parents=True, exist_ok=True)
        return _Runner(commands, json_path, work, switch=switch, cli=cli, timeout=timeout,
                       quiet=quiet, settle_max=settle_max).run()
    with tempfile.TemporaryDirectory(prefix="intbed-bmv2-") as tmp:
        return _Runner(commands, json_path, Path(tmp), switch=switch, cli=cli,
                       timeout=timeout, quiet=quiet, settle_max=settle_max).run()


def run_stf_bmv2(p4_path: str | Path, stf_path: str | Path, **options: Any) -> StfResult:
    """Run an STF test on BMv2 and judge it as ``dataplane.testing.stf.run_stf`` does."""
    return run_bmv2(p4_path, stf_path, **options).result()


# --------------------------------------------------------------------------- both engines


@dataclass(frozen=True, slots=True)
class Disagreement:
    """One packet the engines emit differently (``None``: no packet), or, with
    ``port`` None, a test one engine could not run."""

    test: str
    port: int | None
    index: int
    intbed: bytes | None
    bmv2: bytes | None
    note: str = ""

    def __str__(self) -> str:
        if self.port is None:
            return f"{self.test}: {self.note}"

        def show(data: bytes | None) -> str:
            return data.hex().upper() if data is not None else "(nothing)"

        return (f"{self.test}: port {self.port} packet #{self.index}: "
                f"intbed {show(self.intbed)} / bmv2 {show(self.bmv2)}")


@dataclass(slots=True)
class Comparison:
    """Both engines on one test: their verdicts (None when one could not run)."""

    test: str
    disagreements: list[Disagreement]
    intbed: StfResult | None
    bmv2: StfResult | None
    notes: list[str] = field(default_factory=list)


def compare_case(p4_path: str | Path, stf_path: str | Path, **options: Any) -> Comparison:
    """Run ``stf_path`` on intbed's engine and on BMv2 and compare, port by port,
    every packet of the ports BMv2 observes (those of packet and expect lines)."""
    from dataplane.compiler.pipeline import compile_file
    from dataplane.testing.stf import run_stf

    name = Path(stf_path).name
    commands = parse_stf(stf_path)
    ports = sorted({c.port for c in commands if isinstance(c, Packet | Expect)})
    ours: StfResult | None = None
    theirs: Bmv2Run | None = None
    failures: list[Disagreement] = []
    try:
        ours = run_stf(compile_file(p4_path), stf_path)
    except IntbedError as exc:
        failures.append(Disagreement(name, None, 0, None, None, f"intbed: {exc}"))
    try:
        theirs = run_bmv2(p4_path, stf_path, **options)
    except IntbedError as exc:
        failures.append(Disagreement(name, None, 0, None, None, f"bmv2: {exc}"))
    bmv2_result = theirs.result() if theirs is not None else None
    notes = list(theirs.notes) if theirs is not None else []
    if ours is None or theirs is None:
        return Comparison(name, failures, ours, bmv2_result, notes)
    wanted: dict[int, list[Expect]] = {}
    for cmd in commands:
        if isinstance(cmd, Expect):
            wanted.setdefault(cmd.port, []).append(cmd)
    diffs = []
    for port in ports:
        a, b = ours.outputs.get(port, []), theirs.outputs.get(port, [])
        expects = wanted.get(port, [])
        for i in range(max(len(a), len(b))):
            x = a[i] if i < len(a) else None
            y = b[i] if i < len(b) else None
            nibbles = expects[i].nibbles if i < len(expects) else None
            if not _same_packet(x, y, nibbles):
                diffs.append(Disagreement(name, port, i, x, y))
    return Comparison(name, diffs, ours, bmv2_result, notes)


def _same_packet(x: bytes | None, y: bytes | None, nibbles: str | None) -> bool:
    """Equal bytes, except under the ``*`` nibbles of the packet's expect line:
    a test marks there what a real clock and queues decide (timestamps, queue
    depths), which an engine whose clock reads 0 cannot reproduce."""
    if x is None or y is None or len(x) != len(y) or x == y:
        return x == y
    if not nibbles or "*" not in nibbles:
        return False
    hx, hy = x.hex().upper(), y.hex().upper()
    return all(a == b or (i < len(nibbles) and nibbles[i] == "*")
               for i, (a, b) in enumerate(zip(hx, hy, strict=True)))


def compare_engines(p4_path: str | Path, stf_path: str | Path,
                    **options: Any) -> list[Disagreement]:
    """The packets on which intbed's engine and BMv2 differ for one STF test."""
    return compare_case(p4_path, stf_path, **options).disagreements


# --------------------------------------------------------------------------- command line


def program_for(stf: Path) -> Path:
    """NAME.p4 beside NAME.stf, else p4src/NAME.p4, else the p4src program whose
    name is the longest prefix of NAME (``intlabel_pro.stf`` -> ``intlabel.p4``)."""
    local = stf.with_suffix(".p4")
    if local.is_file():
        return local
    candidates = [p for p in programs() if stf.stem.startswith(p.stem)]
    if not candidates:
        raise IntbedError(f"no program for {stf.name} (looked for {local.name} beside it "
                          f"and in {P4SRC_DIR})")
    return max(candidates, key=lambda p: len(p.stem))


def find_cases(paths: Sequence[str | Path]) -> list[tuple[Path, Path]]:
    """(program, test) for every .stf named or found in a named directory."""
    cases = []
    for item in map(Path, paths):
        stfs = sorted(item.glob("*.stf")) if item.is_dir() else [item]
        for stf in stfs:
            if not stf.is_file():
                raise IntbedError(f"no such STF file or directory: {stf}")
            cases.append((program_for(stf), stf))
    return cases


def bmv2_skip_reason(stf: Path) -> str | None:
    """The reason given by a ``# bmv2: skip REASON`` line at the top of an
    STF file: a test whose expectations need intbed's clock at 0."""
    for line in stf.read_text().splitlines():
        if not line.startswith("#"):
            break
        marked = _SKIP_MARK.fullmatch(line)
        if marked is not None:
            return marked.group(1).strip() or "marked intbed-only"
    return None


_SKIP_MARK = re.compile(r"#\s*bmv2\s*:\s*skip\b(.*)")


def main(argv: Sequence[str] | None = None) -> int:
    """Compare both engines on every test; 1 if any packet differs."""
    parser = argparse.ArgumentParser(
        prog="python -m orchestration.binaries.bmv2_stf",
        description="Run STF tests on intbed's engine and on BMv2; list differing packets.")
    parser.add_argument("paths", nargs="+", help="STF files or directories of them")
    parser.add_argument("--cache-dir", default=None, help="p4c output cache")
    parser.add_argument("--keep", default=None, metavar="DIR",
                        help="keep each run's files in DIR/NAME")
    args = parser.parse_args(argv)
    reason = available()
    if reason is not None:
        print(f"skipped: {reason}")
        return 0
    try:
        cases = find_cases(args.paths)
    except IntbedError as exc:
        print(exc, file=sys.stderr)
        return 2
    differ = 0
    skipped = 0
    for p4_path, stf in cases:
        why = bmv2_skip_reason(stf)
        if why is not None:
            skipped += 1
            print(f"SKIP {stf.name}: {why}")
            continue
        workdir = Path(args.keep) / stf.stem if args.keep else None
        try:
            cmp = compare_case(p4_path, stf, cache_dir=args.cache_dir, workdir=workdir)
        except IntbedError as exc:
            differ += 1
            print(f"ERROR {stf.name}: {exc}")
            continue
        verdicts = ", ".join(f"{who} {_verdict(r)}" for who, r in
                             (("intbed", cmp.intbed), ("bmv2", cmp.bmv2)))
        if cmp.disagreements:
            differ += 1
            print(f"DIFFER {stf.name} ({verdicts}): {len(cmp.disagreements)} packet(s)")
            for d in cmp.disagreements:
                print(f"  {d}")
        else:
            print(f"AGREE {stf.name} ({verdicts})")
        for note in cmp.notes:
            print(f"  note: {note}")
    print(f"{len(cases) - differ - skipped} agree, {differ} differ, {skipped} intbed-only")
    return 1 if differ else 0


def _verdict(result: StfResult | None) -> str:
    if result is None:
        return "ERROR"
    return "PASS" if result.passed else f"FAIL ({result.reason})"


if __name__ == "__main__":
    sys.exit(main())
