"""common.procs: SIGTERM, a grace period, SIGKILL; always reaped."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from common.procs import stop_process, stop_processes

IGNORES_TERM = ("import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "print('ready', flush=True); time.sleep(60)")
CLEAN_EXIT = ("import signal, sys, time\n"
              "signal.signal(signal.SIGTERM, lambda *a: sys.exit(3))\n"
              "print('ready', flush=True)\n"
              "time.sleep(60)\n")


def _start(code: str) -> subprocess.Popen[str]:
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    return p


def test_sigterm_ends_a_process_that_obeys() -> None:
    p = subprocess.Popen(["sleep", "60"])
    assert stop_process(p, 5) == -signal.SIGTERM
    assert p.returncode == -signal.SIGTERM


def test_a_handler_gets_to_exit_its_own_way() -> None:
    p = _start(CLEAN_EXIT)
    assert stop_process(p, 5) == 3


def test_sigkill_after_the_grace_period() -> None:
    p = _start(IGNORES_TERM)
    t0 = time.monotonic()
    assert stop_process(p, 0.3) == -signal.SIGKILL
    assert 0.25 < time.monotonic() - t0 < 5


def test_an_exited_process_is_only_reaped() -> None:
    p = subprocess.Popen([sys.executable, "-c", "raise SystemExit(7)"])
    while p.poll() is None:
        time.sleep(0.01)
    assert stop_process(p, 5) == 7
    assert stop_process(p, 5) == 7  # twice is harmless


def test_asked_another_way_only_waits() -> None:
    """sig None: EOF on stdin ends ``cat``; no signal is sent."""
    p = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert p.stdin is not None
    p.stdin.close()
    assert stop_process(p, 5, sig=None) == 0
    stuck = _start(IGNORES_TERM)
    assert stop_process(stuck, 0.2, sig=None) == -signal.SIGKILL


def test_one_grace_period_for_all() -> None:
    stuck = [_start(IGNORES_TERM) for _ in range(3)]
    t0 = time.monotonic()
    assert stop_processes(stuck, 0.4) == [-signal.SIGKILL] * 3
    assert time.monotonic() - t0 < 1.2  # not 3 x 0.4 s
    assert stop_processes([subprocess.Popen(["sleep", "60"]), _start(CLEAN_EXIT)], 5) == [
        -signal.SIGTERM, 3]
