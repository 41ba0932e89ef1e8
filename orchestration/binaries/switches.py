"""The switch binaries of the live targets, behind one interface.

``mininet`` runs ``intbed-switch`` and ``bmv2`` runs BMv2's
``simple_switch_grpc``; they differ only in the compile step and the
program file on the command line, since ``intbed-switch`` takes the flags
of ``simple_switch_grpc`` that intbed uses (BMv2's ``options_parse.cpp``
before ``--``, the target's own after it)::

    simple_switch_grpc -i 1@veth1 -i 2@veth2 --device-id 0 --thrift-port 9090 \\
        --pcap DIR --log-file F --log-flush PROGRAM.json \\
        -- --grpc-server-addr 127.0.0.1:50051 --cpu-port 510

Queues differ: BMv2 sets them at run time through ``simple_switch_CLI``
(``set_queue_depth NB_PKTS PORT``, ``set_queue_rate RATE_PPS PORT``, both
integers), ``intbed-switch`` takes ``--queue-depth PORT:N`` and
``--queue-rate PORT:PPS`` at launch. A switch is up when its gRPC server
answers; ``launch`` runs the whole sequence (prepare, start, wait, queues)
and ``SwitchProcess.stop`` ends it.

A switch started with a program file forwards at once, but neither binary
has a P4Info for P4Runtime until a controller sends
SetForwardingPipelineConfig with ``Prepared.p4info`` and
``binary.device_config(prepared)``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from common.errors import IntbedError
from common.procs import stop_process
from orchestration.binaries.p4c import default_cache_dir

__all__ = [
    "BINARIES",
    "Bmv2Switch",
    "IntbedSwitch",
    "Prepared",
    "QueueSettings",
    "SwitchBinary",
    "SwitchProcess",
    "get_binary",
    "launch",
    "wait_tcp",
]

# simple_switch_grpc's defaults (targets/simple_switch_grpc/main.cpp, options_parse.cpp).
DEFAULT_GRPC_ADDR = "127.0.0.1:9559"
DEFAULT_THRIFT_PORT = 9090
# v1model ports are bit<9> and 511 is BMv2's drop port.
MAX_PORT = 510
READY_TIMEOUT = 30.0
STOP_TIMEOUT = 5.0
# simple_switch_CLI prints these at the start of a failed command (runtime_CLI.py's
# handle_bad_input, plus cmd's "*** Unknown syntax").
CLI_ERROR_PREFIXES = ("Error", "Invalid", "***", "Could not connect")

# port -> (depth in packets, rate in packets/s); None keeps the switch's default.
QueueSettings = Mapping[int, tuple[int | None, int | None]]


@dataclass(frozen=True, slots=True)
class Prepared:
    """A program ready for one binary: ``program`` goes on the command line
    (the .p4 source for intbed-switch, p4c's JSON for BMv2); ``p4info`` is the
    P4Info in protobuf text format for the controller."""

    source: Path
    program: Path
    p4info: Path


class SwitchBinary(Protocol):
    """What the live targets need from a switch binary, and what it can do
    beyond BMv2's options (as Mininet's switch classes declare theirs)."""

    name: str
    emulates_loss: bool
    """Drops a port's frames with a given probability (``extra_args``' losses)."""
    seeds_random: bool
    """Seeds the program's ``random()`` extern (``extra_args``' seed)."""

    def extra_args(self, *, seed: int, losses: Mapping[int, float]) -> list[str]:
        """The binary's own arguments for a switch: its random seed and each
        port's loss probability, where it takes them."""

    def available(self) -> str | None:
        """None when the binary can run here, else why not."""

    def prepare(self, program_path: str | Path, *,
                cache_dir: str | Path | None = None) -> Prepared: ...

    def command(self, prepared: Prepared, *, ports: Mapping[int, str], device_id: int = 0,
                grpc_addr: str = DEFAULT_GRPC_ADDR, cpu_port: int | None = None,
                thrift_port: int = DEFAULT_THRIFT_PORT, pcap_dir: str | Path | None = None,
                log_file: str | Path | None = None,
                queue: QueueSettings | None = None) -> list[str]: ...

    def post_start(self, *, thrift_port: int, queue: QueueSettings | None,
                   timeout: float = READY_TIMEOUT) -> None: ...

    def wait_ready(self, grpc_addr: str, timeout: float = READY_TIMEOUT,
                   process: subprocess.Popen | None = None) -> None: ...

    def device_config(self, prepared: Prepared) -> bytes: ...


# --------------------------------------------------------------------------- shared parts


def _check_port(port: object, what: str) -> int:
    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= MAX_PORT:
        raise IntbedError(f"{what}: port {port!r} is not a switch port (0..{MAX_PORT})")
    return port


def _check_queue(queue: QueueSettings | None) -> dict[int, tuple[int | None, int | None]]:
    out: dict[int, tuple[int | None, int | None]] = {}
    for port, (depth, rate) in sorted((queue or {}).items()):
        _check_port(port, "queue settings")
        if depth is not None and (not isinstance(depth, int) or depth < 1):
            raise IntbedError(f"queue settings: port {port}: depth {depth!r} must be an "
                              "integer >= 1 (packets)")
        if rate is not None and (not isinstance(rate, int) or rate < 0):
            raise IntbedError(f"queue settings: port {port}: rate {rate!r} must be an "
                              "integer >= 0 (packets/s)")
        out[port] = (depth, rate)
    return out


def _split_addr(addr: str) -> tuple[str, int]:
    """``host:port`` (``[v6]:port`` too) with a wildcard host turned into loopback."""
    host, sep, port = addr.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise IntbedError(f"gRPC address '{addr}': expected HOST:PORT")
    host = host.strip("[]")
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return host, int(port)


def _dial_target(addr: str) -> str:
    host, port = _split_addr(addr)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _base_args(ports: Mapping[int, str], device_id: int, cpu_port: int | None,
               thrift_port: int, pcap_dir: str | Path | None,
               log_file: str | Path | None) -> list[str]:
    """BMv2's generic options in the order intbed writes them."""
    args: list[str] = []
    for port, iface in sorted(ports.items()):
        _check_port(port, f"-i {port}@{iface}")
        args += ["-i", f"{port}@{iface}"]
    if cpu_port is not None:
        _check_port(cpu_port, "--cpu-port")
        if cpu_port in ports:
            raise IntbedError(f"--cpu-port {cpu_port}: the port is already {ports[cpu_port]}")
    if device_id < 0:
        raise IntbedError(f"--device-id {device_id} must not be negative")
    args += ["--device-id", str(device_id), "--thrift-port", str(thrift_port)]
    if pcap_dir is not None:
        args += ["--pcap", str(pcap_dir)]
    if log_file is not None:
        # --log-flush only means something with --log-file (options_parse.cpp).
        args += ["--log-file", str(log_file), "--log-flush"]
    return args


def _target_args(grpc_addr: str, cpu_port: int | None) -> list[str]:
    _split_addr(grpc_addr)
    args = ["--", "--grpc-server-addr", grpc_addr]
    if cpu_port is not None:
        args += ["--cpu-port", str(cpu_port)]
    return args


def wait_tcp(host: str, port: int, timeout: float, alive: Callable[[], str | None],
             what: str) -> None:
    """Poll until ``host:port`` accepts a TCP connection.

    ``alive()`` returns why the server can no longer come up (its process
    ended), which stops the wait with an IntbedError.
    """
    deadline = time.monotonic() + timeout
    while True:
        dead = alive()
        if dead is not None:
            raise IntbedError(dead)
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            pass
        if time.monotonic() >= deadline:
            raise IntbedError(f"{what} at {host}:{port} did not come up within {timeout:g} s")
        time.sleep(0.05)


class _Binary:
    """Readiness and process checks both binaries share."""

    name = ""
    emulates_loss = False
    register_writes_flag: str | None = None  # the option that turns register writes on
    seeds_random = False

    def extra_args(self, *, seed: int, losses: Mapping[int, float]) -> list[str]:
        if losses and not self.emulates_loss:
            raise IntbedError(f"{self.name} cannot emulate link loss")
        return []

    def _exited(self, process: subprocess.Popen | None) -> Callable[[], str | None]:
        def check() -> str | None:
            if process is None or process.poll() is None:
                return None
            return f"{self.name} exited with status {process.returncode} during startup"
        return check

    def wait_ready(self, grpc_addr: str, timeout: float = READY_TIMEOUT,
                   process: subprocess.Popen | None = None) -> None:
        """Return once the gRPC server at ``grpc_addr`` completes an HTTP/2
        handshake; fail early if ``process`` ends first."""
        import grpc

        target = _dial_target(grpc_addr)
        exited = self._exited(process)
        deadline = time.monotonic() + timeout
        while True:
            dead = exited()
            if dead is not None:
                raise IntbedError(dead)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise IntbedError(f"{self.name}: no gRPC server at {grpc_addr} after "
                                  f"{timeout:g} s")
            with grpc.insecure_channel(target) as channel:
                try:
                    grpc.channel_ready_future(channel).result(timeout=min(0.5, remaining))
                    return
                except grpc.FutureTimeoutError:
                    pass


# --------------------------------------------------------------------------- intbed-switch


class IntbedSwitch(_Binary):
    """``intbed-switch``: intbed's engine as a process; runs the .p4 source."""

    name = "intbed-switch"
    emulates_loss = True
    register_writes_flag = "--register-writes"
    seeds_random = True

    def __init__(self, executable: Sequence[str] | None = None) -> None:
        self._executable = list(executable) if executable is not None else None

    def extra_args(self, *, seed: int, losses: Mapping[int, float]) -> list[str]:
        """``--seed`` and a ``--loss PORT:P`` per lossy port (no netem here:
        the switch drops the frames itself)."""
        args = ["--seed", str(seed)]
        for port, loss in sorted(losses.items()):
            args += ["--loss", f"{port}:{loss!r}"]
        return args

    @property
    def executable(self) -> list[str]:
        """The console script when installed, else the module through this Python."""
        if self._executable is not None:
            return list(self._executable)
        if shutil.which("intbed-switch"):
            return ["intbed-switch"]
        return [sys.executable, "-m", "dataplane.targets.softswitch.main"]

    def available(self) -> str | None:
        exe = self.executable[0]
        if shutil.which(exe) is None and not Path(exe).is_file():
            return f"{exe} not found on PATH"
        return None

    def prepare(self, program_path: str | Path, *,
                cache_dir: str | Path | None = None) -> Prepared:
        """Compile with intbed's front end (errors are located) and store the
        P4Info text under ``cache_dir`` (default ``~/.cache/intbed/p4info``)."""
        from dataplane.compiler.p4info import build_p4info, to_text
        from dataplane.compiler.pipeline import compile_file

        source = Path(program_path)
        text = to_text(build_p4info(compile_file(source).schema))
        base = (Path(cache_dir) if cache_dir is not None
                else default_cache_dir().parent / "p4info")
        entry = base / hashlib.sha256(text.encode()).hexdigest()[:32]
        p4info = entry / f"{source.stem}.p4info.txtpb"
        if not p4info.is_file():
            entry.mkdir(parents=True, exist_ok=True)
            _write_atomic(p4info, text.encode())
        return Prepared(source=source, program=source, p4info=p4info)

    def command(self, prepared: Prepared, *, ports: Mapping[int, str], device_id: int = 0,
                grpc_addr: str = DEFAULT_GRPC_ADDR, cpu_port: int | None = None,
                thrift_port: int = DEFAULT_THRIFT_PORT, pcap_dir: str | Path | None = None,
                log_file: str | Path | None = None,
                queue: QueueSettings | None = None) -> list[str]:
        """simple_switch_grpc's argv with the .p4 in place of the JSON; queue
        settings become ``--queue-depth``/``--queue-rate`` after the target options."""
        argv = [*self.executable,
                *_base_args(ports, device_id, cpu_port, thrift_port, pcap_dir, log_file),
                str(prepared.program), *_target_args(grpc_addr, cpu_port)]
        for port, (depth, rate) in _check_queue(queue).items():
            if depth is not None:
                argv += ["--queue-depth", f"{port}:{depth}"]
            if rate is not None:
                argv += ["--queue-rate", f"{port}:{rate}"]
        return argv

    def post_start(self, *, thrift_port: int, queue: QueueSettings | None,
                   timeout: float = READY_TIMEOUT) -> None:
        """Nothing: intbed-switch took its queue settings on the command line."""

    def device_config(self, prepared: Prepared) -> bytes:
        """The intbed-p4 JSON document the intbed P4Runtime server loads: the
        program as one text, its quoted includes inlined; under a command's
        ``-D``/``-I`` the text cpp makes of it with them, so the switch
        compiles exactly what the command did."""
        from dataplane.compiler.frontend.preprocess import flatten_includes, preprocess
        from dataplane.compiler.options import current
        from dataplane.control.grpc_server import encode_device_config

        opts = current()
        text = preprocess(prepared.source, opts.include_dirs, opts.defines) if opts else (
            flatten_includes(prepared.source))
        return encode_device_config(prepared.source.stem, text)


# --------------------------------------------------------------------------- BMv2


class Bmv2Switch(_Binary):
    """BMv2's ``simple_switch_grpc`` on p4c's JSON; queues via ``simple_switch_CLI``."""

    name = "simple_switch_grpc"

    def __init__(self, switch: str = "simple_switch_grpc", cli: str = "simple_switch_CLI",
                 p4c: str = "p4c") -> None:
        self.switch, self.cli, self.p4c = switch, cli, p4c
        self.name = switch

    def available(self) -> str | None:
        for exe, why in ((self.switch, "build BMv2 with --with-pi"), (self.cli, "build BMv2"),
                         (self.p4c, "install p4c")):
            if shutil.which(exe) is None:
                return f"{exe} not found on PATH ({why} to use the bmv2 target)"
        return None

    def prepare(self, program_path: str | Path, *,
                cache_dir: str | Path | None = None) -> Prepared:
        """p4c's JSON and P4Info (``orchestration.binaries.p4c``, cached by content)."""
        from orchestration.binaries.p4c import compile_bmv2

        source = Path(program_path)
        json_path, p4info = compile_bmv2(source, cache_dir, p4c=self.p4c)
        return Prepared(source=source, program=json_path, p4info=p4info)

    def command(self, prepared: Prepared, *, ports: Mapping[int, str], device_id: int = 0,
                grpc_addr: str = DEFAULT_GRPC_ADDR, cpu_port: int | None = None,
                thrift_port: int = DEFAULT_THRIFT_PORT, pcap_dir: str | Path | None = None,
                log_file: str | Path | None = None,
                queue: QueueSettings | None = None) -> list[str]:
        """The simple_switch_grpc argv; ``queue`` is checked here, applied by post_start."""
        _check_queue(queue)
        return [self.switch,
                *_base_args(ports, device_id, cpu_port, thrift_port, pcap_dir, log_file),
                str(prepared.program), *_target_args(grpc_addr, cpu_port)]

    def queue_commands(self, queue: QueueSettings | None) -> list[str]:
        """simple_switch_CLI lines for ``queue``, port by port, depth before rate."""
        lines = []
        for port, (depth, rate) in _check_queue(queue).items():
            if depth is not None:
                lines.append(f"set_queue_depth {depth} {port}")
            if rate is not None:
                lines.append(f"set_queue_rate {rate} {port}")
        return lines

    def post_start(self, *, thrift_port: int, queue: QueueSettings | None,
                   timeout: float = READY_TIMEOUT) -> None:
        """Apply the queue settings through ``simple_switch_CLI --thrift-port N``."""
        lines = self.queue_commands(queue)
        if not lines:
            return
        wait_tcp("127.0.0.1", thrift_port, timeout, lambda: None,
                 f"{self.switch}'s Thrift server")
        run_cli(self.cli, thrift_port, lines, timeout)

    def device_config(self, prepared: Prepared) -> bytes:
        """BMv2's device config is p4c's JSON itself."""
        return prepared.program.read_bytes()


def run_cli(cli: str, thrift_port: int, lines: Sequence[str], timeout: float) -> str:
    """Feed ``lines`` to ``simple_switch_CLI``; its output, or IntbedError with
    the first line it printed about a failed command."""
    cmd = [cli, "--thrift-port", str(thrift_port)]
    try:
        proc = subprocess.run(cmd, input="".join(ln + "\n" for ln in lines),
                              capture_output=True, text=True, timeout=timeout, check=False,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    except OSError as exc:
        raise IntbedError(f"cannot run {cli}: {exc.strerror}") from None
    except subprocess.TimeoutExpired:
        raise IntbedError(f"{cli} did not finish within {timeout:g} s") from None
    bad = cli_errors(proc.stdout)
    if bad:
        raise IntbedError(f"{cli}: {bad[0]}")
    if proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or [f"status {proc.returncode}"])[-1]
        raise IntbedError(f"{cli} failed: {detail}")
    return proc.stdout


def cli_errors(output: str) -> list[str]:
    """The lines of simple_switch_CLI output that report a failed command."""
    found = []
    for line in output.splitlines():
        text = re.sub(r"^(?:RuntimeCmd: )+", "", line).strip()  # empty outputs stack prompts
        if text.startswith(CLI_ERROR_PREFIXES):
            found.append(text)
    return found


# --------------------------------------------------------------------------- registry


BINARIES: dict[str, Callable[[], SwitchBinary]] = {
    "intbed": IntbedSwitch,
    "bmv2": Bmv2Switch,
}


def get_binary(name: str) -> SwitchBinary:
    """The switch binary registered as ``name``."""
    factory = BINARIES.get(name)
    if factory is None:
        raise IntbedError(f"unknown switch binary '{name}' (choices: "
                          f"{', '.join(sorted(BINARIES))})")
    return factory()


# --------------------------------------------------------------------------- processes


class SwitchProcess:
    """A switch binary started by ``launch``; ``stop`` (or leaving a ``with``
    block) ends it: SIGTERM, then SIGKILL after ``STOP_TIMEOUT``."""

    def __init__(self, binary: SwitchBinary, prepared: Prepared, argv: list[str],
                 popen: subprocess.Popen, console: IO[bytes]) -> None:
        self.binary = binary
        self.prepared = prepared
        self.argv = argv
        self.popen = popen
        self._console = console

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    def console_tail(self, lines: int = 20) -> str:
        """The last lines the process wrote to stdout/stderr."""
        try:
            self._console.flush()
            self._console.seek(0)
            text = self._console.read().decode(errors="replace")
        except (OSError, ValueError):
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """End the process and reap it; its exit status (-15 after SIGTERM)."""
        status = stop_process(self.popen, timeout)
        if not self._console.closed:
            self._console.close()
        return status

    def __enter__(self) -> SwitchProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def launch(binary: SwitchBinary, program: str | Path | Prepared, *, ports: Mapping[int, str],
           device_id: int = 0, grpc_addr: str = DEFAULT_GRPC_ADDR, cpu_port: int | None = None,
           thrift_port: int = DEFAULT_THRIFT_PORT, pcap_dir: str | Path | None = None,
           log_file: str | Path | None = None, queue: QueueSettings | None = None,
           cache_dir: str | Path | None = None, prefix: Sequence[str] = (),
           ready_timeout: float = READY_TIMEOUT, console: str | Path | None = None,
           cwd: str | Path | None = None, extra_args: Sequence[str] = ()) -> SwitchProcess:
    """Prepare (compile), start, wait for the gRPC server, apply the queues.

    ``prefix`` goes before the command (e.g. a namespace runner) and
    ``extra_args`` after it (a binary's own flags, e.g. intbed-switch's
    ``--loss PORT:P``); stdout and
    stderr go to ``console`` (default: an anonymous file, shown in errors).
    If any step fails, the process is stopped before the error is raised.
    """
    prepared = program if isinstance(program, Prepared) else binary.prepare(
        program, cache_dir=cache_dir)
    argv = binary.command(prepared, ports=ports, device_id=device_id, grpc_addr=grpc_addr,
                          cpu_port=cpu_port, thrift_port=thrift_port, pcap_dir=pcap_dir,
                          log_file=log_file, queue=queue)
    argv = [*argv, *extra_args]
    # The SwitchProcess owns the file and closes it in stop().
    if console is not None:
        out: IO[bytes] = open(console, "w+b")  # noqa: SIM115
    else:
        out = tempfile.TemporaryFile()  # noqa: SIM115
    try:
        popen = subprocess.Popen([*prefix, *argv], stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=subprocess.STDOUT, cwd=cwd)
    except OSError as exc:
        out.close()
        raise IntbedError(f"cannot start {argv[0]}: {exc.strerror}") from None
    proc = SwitchProcess(binary, prepared, argv, popen, out)
    try:
        binary.wait_ready(grpc_addr, ready_timeout, popen)
        binary.post_start(thrift_port=thrift_port, queue=queue, timeout=ready_timeout)
    except IntbedError as exc:
        tail = proc.console_tail()
        proc.stop()
        message = exc.message + (f"\n{tail}" if tail else "")
        raise IntbedError(message, exc.loc) from exc
    except BaseException:
        proc.stop()
        raise
    return proc


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
