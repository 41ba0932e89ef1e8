"""A run's traffic on a live network: ``traffic.live`` processes in the hosts.

Every sender gets its schedule as a file (the same ``Schedule`` the sim
plays); receivers start first, then senders; once every process has said
``ready`` (frames built, sockets open) they all get one start instant a
little ahead (``lead_s``), so the schedules' time 0 is common to every
host and to the orchestrator. Logs land in ``out_dir``:
``<host>.sent.csv`` / ``<host>.send.json`` per sender,
``<host>.recv.csv`` per receiver, ``<host>.<role>.err`` with each
process's stderr.
"""

from __future__ import annotations

import json
import os
import select
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from common.errors import IntbedError
from common.procs import stop_processes
from orchestration.live.network import HostProcess, LiveNetwork
from traffic.live import SendStats, read_receiver, read_sent_log, write_schedule
from traffic.receiver import Receiver
from traffic.schedules import Schedule
from traffic.sender import SentLog

READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0
DEFAULT_LEAD_S = 0.3


class TrafficProcessError(IntbedError):
    """A sender or receiver that failed to start or to finish."""


@dataclass
class _Role:
    host: str
    role: str  # "send" or "recv"
    argv: list[str]
    proc: HostProcess | None = None
    done: bool = False


class LiveTraffic:
    def __init__(self, net: LiveNetwork, out_dir: str | Path) -> None:
        self.net = net
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.start_ns: int | None = None
        self._roles: list[_Role] = []

    # ------------------------------------------------------------------ setup

    def _path(self, host: str, suffix: str) -> Path:
        return self.out_dir / f"{host}.{suffix}"

    def add_sender(self, host: str, schedule: Schedule, *, loss: float = 0.0,
                   seed: int = 0) -> None:
        """``host`` sends ``schedule``; ``loss`` drops frames before its link."""
        path = self._path(host, "schedule.json")
        write_schedule(path, schedule)
        argv = [sys.executable, "-m", "traffic.live", "send", "--iface",
                self.net.host_iface(host), "--schedule", str(path),
                "--log", str(self._path(host, "sent.csv")),
                "--summary", str(self._path(host, "send.json")),
                "--loss", repr(loss), "--seed", str(seed)]
        self._roles.append(_Role(host, "send", argv))

    def add_receiver(self, host: str, udp_ports: tuple[int, ...] = ()) -> None:
        argv = [sys.executable, "-m", "traffic.live", "recv", "--iface",
                self.net.host_iface(host), "--log", str(self._path(host, "recv.csv")),
                "--name", host]
        for port in udp_ports:
            argv += ["--udp-sink", str(port)]
        self._roles.append(_Role(host, "recv", argv))

    # ------------------------------------------------------------------ running

    def start(self, lead_s: float = DEFAULT_LEAD_S, ready_timeout: float = READY_TIMEOUT_S
              ) -> int:
        """Start every process, wait until all are ready, give them one start
        instant ``lead_s`` ahead; returns it (``CLOCK_MONOTONIC`` ns)."""
        ordered = sorted(self._roles, key=lambda r: r.role != "recv")
        for r in ordered:
            r.proc = self.net.popen(r.host, r.argv, output=self._path(r.host, f"{r.role}.err"))
        deadline = time.monotonic() + ready_timeout
        for r in ordered:
            self._expect(r, "ready", deadline)
        self.start_ns = time.monotonic_ns() + round(lead_s * 1e9)
        for r in ordered:
            self._say(r, f"start {self.start_ns}")
        return self.start_ns

    def _say(self, r: _Role, line: str) -> None:
        assert r.proc is not None
        stdin = r.proc.popen.stdin
        if stdin is None or stdin.closed:
            return
        try:
            stdin.write((line + "\n").encode())
            stdin.flush()
        except (BrokenPipeError, ValueError):
            pass  # it ended: reported when its output is read

    def _expect(self, r: _Role, word: str, deadline: float) -> str:
        """Read ``r``'s stdout until a line starting with ``word``."""
        assert r.proc is not None
        out = r.proc.popen.stdout
        assert out is not None
        fd = out.fileno()
        buf = b""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TrafficProcessError(f"{r.role} on {r.host} did not say '{word}' in time"
                                          + self._err_tail(r))
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if not ready:
                continue
            chunk = os.read(fd, 4096)
            if not chunk:
                r.proc.popen.wait()
                raise TrafficProcessError(f"{r.role} on {r.host} exited with code "
                                          f"{r.proc.popen.returncode}" + self._err_tail(r))
            buf += chunk
            for line in buf.decode(errors="replace").splitlines():
                if line.startswith(word):
                    return line

    def _err_tail(self, r: _Role) -> str:
        path = self._path(r.host, f"{r.role}.err")
        try:
            lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
        except OSError:
            return ""
        return (": " + " | ".join(lines[-3:])) if lines else ""

    def wait_senders(self, timeout: float, abort: threading.Event | None = None) -> bool:
        """Wait for every sender to finish; False if ``abort`` was set first.
        A sender still running after ``timeout`` is an error."""
        deadline = time.monotonic() + timeout
        for r in self._roles:
            if r.role != "send" or r.done:
                continue
            assert r.proc is not None
            while r.proc.popen.poll() is None:
                if abort is not None and abort.is_set():
                    return False
                if time.monotonic() > deadline:
                    raise TrafficProcessError(f"sender on {r.host} still running after "
                                              f"{timeout:.1f} s")
                if abort is not None:
                    abort.wait(0.05)
                else:
                    time.sleep(0.05)
            r.done = True
            if r.proc.popen.returncode != 0:
                raise TrafficProcessError(f"sender on {r.host} exited with code "
                                          f"{r.proc.popen.returncode}" + self._err_tail(r))
        return True

    def stop_senders(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Stop the senders still running (the traffic phase ended early);
        each logs what it sent. Receivers keep receiving."""
        senders = [r for r in self._roles if r.role == "send" and r.proc is not None
                   and not r.done]
        stop_processes([r.proc.popen for r in senders if r.proc is not None], timeout)
        for r in senders:
            if r.proc is not None:
                r.proc.stop()
            r.done = True

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Stop senders still running (they log what they sent) and tell the
        receivers to write their logs; waits for all of them.

        Receivers get ``stop`` on stdin, then every process SIGTERM (which
        ends a receiver the same way); ``timeout`` is one grace period for
        all of them before SIGKILL."""
        started = [(r, r.proc) for r in self._roles if r.proc is not None]
        for r, proc in started:
            if r.role == "recv" and proc.popen.poll() is None:
                self._say(r, "stop")
        stop_processes([proc.popen for _, proc in started], timeout)
        for r, proc in started:
            proc.stop()  # reaped already: this closes its pipes and files
            r.done = True

    # ------------------------------------------------------------------ logs

    def sent_logs(self) -> dict[str, SentLog]:
        return {r.host: read_sent_log(self._path(r.host, "sent.csv"))
                for r in self._roles if r.role == "send"
                and self._path(r.host, "sent.csv").is_file()}

    def send_stats(self) -> dict[str, SendStats]:
        out = {}
        for r in self._roles:
            path = self._path(r.host, "send.json")
            if r.role == "send" and path.is_file():
                out[r.host] = SendStats.from_dict(json.loads(path.read_text()))
        return out

    def received(self) -> dict[str, Receiver]:
        return {r.host: read_receiver(self._path(r.host, "recv.csv"), r.host)
                for r in self._roles if r.role == "recv"
                and self._path(r.host, "recv.csv").is_file()}
