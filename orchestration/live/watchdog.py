"""Notice a switch process that ends while a run still needs it.

A thread polls every watched process; the first one found ended becomes
``failure`` (name, pid, exit status, the last lines of its log) and sets
``failed``, which a run waits on beside its own timers. Orderly shutdown
calls ``stop()`` first, so switches stopped on purpose are not failures.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from common.errors import IntbedError

POLL_S = 0.1
TAIL_LINES = 5


class Watched(Protocol):
    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...


@dataclass(frozen=True)
class SwitchFailure:
    switch: str
    pid: int
    returncode: int
    tail: str

    def message(self) -> str:
        text = f"switch {self.switch} (pid {self.pid}) exited with code {self.returncode}"
        return f"{text}: {self.tail}" if self.tail else text

    def error(self) -> IntbedError:
        return IntbedError(self.message())


def log_tail(paths: list[Path], lines: int = TAIL_LINES) -> str:
    """The last ``lines`` non-empty lines of the first file that has any."""
    for path in paths:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        got = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if got:
            return " | ".join(got[-lines:])
    return ""


class SwitchWatchdog:
    """Watches ``processes`` (by switch name); ``logs(name)`` gives the files
    to quote when one ends."""

    def __init__(self, processes: Mapping[str, Watched],
                 logs: Callable[[str], list[Path]] = lambda name: [],
                 on_failure: Callable[[SwitchFailure], None] | None = None,
                 poll_s: float = POLL_S) -> None:
        self.processes = dict(processes)
        self.logs = logs
        self.on_failure = on_failure
        self.poll_s = poll_s
        self.failed = threading.Event()
        self.failure: SwitchFailure | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="intbed-switch-watchdog",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (before switches are stopped on purpose)."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            # Bounded: a poll blocked in its failure callback must not hold up teardown.
            self._thread.join(timeout=10 * self.poll_s + 1.0)

    def check(self) -> None:
        """Raise the failure, if there was one."""
        if self.failure is not None:
            raise self.failure.error()

    def poll(self) -> SwitchFailure | None:
        """One pass over the processes (the thread's body)."""
        if self.failure is not None:
            return self.failure
        for name, proc in self.processes.items():
            code = proc.returncode
            if code is not None:
                self.failure = SwitchFailure(name, proc.pid, code, log_tail(self.logs(name)))
                self.failed.set()
                if self.on_failure is not None:
                    self.on_failure(self.failure)
                return self.failure
        return None

    def _run(self) -> None:
        while not self._stop.wait(self.poll_s):
            if self.poll() is not None:
                return
