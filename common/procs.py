"""Ending child processes: SIGTERM, a grace period, then SIGKILL.

Switches, Redis servers and host senders all end on SIGTERM after writing
what they hold (pcaps, counters, logs), so they get ``timeout`` seconds for
it; only a process that has not exited by then is killed. Either way the
process is reaped, so no zombie outlives the call.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["STOP_TIMEOUT_S", "stop_process", "stop_processes"]

STOP_TIMEOUT_S = 5.0


def stop_process(popen: subprocess.Popen[Any], timeout: float = STOP_TIMEOUT_S, *,
                 sig: int | None = signal.SIGTERM) -> int:
    """End ``popen`` and reap it; its exit status (``-sig`` after a signal,
    -9 after SIGKILL). A process that has already exited is only reaped.
    ``sig`` None: it was asked to end some other way (a line on its stdin),
    so it only gets the wait."""
    return stop_processes([popen], timeout, sig=sig)[0]


def stop_processes(popens: Sequence[subprocess.Popen[Any]], timeout: float = STOP_TIMEOUT_S,
                   *, sig: int | None = signal.SIGTERM) -> list[int]:
    """``stop_process`` for several processes at once: every one is signalled
    first and the grace period is one ``timeout`` for all of them."""
    if sig is not None:
        for p in popens:
            p.send_signal(sig)  # a no-op for a process that has exited
    deadline = time.monotonic() + timeout
    for p in popens:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return [p.returncode for p in popens]
