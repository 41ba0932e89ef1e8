"""Teardown steps that cannot hold the rest of a teardown hostage.

A live network stops in steps (apps, host processes, P4Runtime clients,
switches, Mininet, leftovers). A step that blocks, a gRPC channel that
does not close or a thread that does not join, must not keep the later
steps from killing the switch processes, or an interrupted run leaves them
running. Each step runs in a daemon thread and is waited for at most its
deadline; a step past it is reported by name and the teardown goes on. A
Ctrl-C while a step runs is remembered and raised by the caller once every
step has had its turn.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class StepLog:
    """What each step did: seconds taken, or why it did not finish."""

    lines: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    interrupt: BaseException | None = None

    def text(self) -> str:
        return "".join(f"{line}\n" for line in self.lines)


def run_step(name: str, step: Callable[[], object], deadline_s: float, log: StepLog) -> None:
    """Run ``step`` for at most ``deadline_s`` seconds of waiting."""
    outcome: list[BaseException | None] = []

    def body() -> None:
        try:
            step()
        except BaseException as exc:  # reported by the waiting thread
            outcome.append(exc)
        else:
            outcome.append(None)

    start = time.monotonic()
    worker = threading.Thread(target=body, name=f"teardown-{name}", daemon=True)
    try:
        worker.start()
    except RuntimeError:  # no new threads at interpreter shutdown (atexit)
        body()
    end = start + deadline_s
    while worker.is_alive() and not outcome:
        left = end - time.monotonic()
        if left <= 0:
            break
        try:
            worker.join(left)
        except BaseException as exc:  # a second Ctrl-C: finish the teardown first
            log.interrupt = log.interrupt or exc
    took = time.monotonic() - start
    if not outcome:
        log.lines.append(f"{name}: still running after {deadline_s:.0f} s, left behind")
        log.errors.append(f"{name}: did not finish within {deadline_s:.0f} s")
        return
    exc = outcome[0]
    if exc is None:
        log.lines.append(f"{name}: {took:.3f} s")
    elif isinstance(exc, Exception):
        log.lines.append(f"{name}: failed after {took:.3f} s: {exc}")
        log.errors.append(f"{name}: {exc}")
    else:
        log.lines.append(f"{name}: interrupted after {took:.3f} s")
        log.interrupt = log.interrupt or exc
