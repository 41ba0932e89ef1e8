"""A live network's teardown steps are bounded: a step that blocks is
reported by name and the steps after it still run (so the switch processes
are killed even when a gRPC channel will not close)."""

from __future__ import annotations

import threading
import time

from orchestration.live.teardown import StepLog, run_step


def test_a_blocked_step_is_left_behind_and_the_next_steps_run() -> None:
    release = threading.Event()
    ran: list[str] = []
    log = StepLog()
    t0 = time.monotonic()
    run_step("close clients", lambda: release.wait(30), 0.3, log)
    run_step("stop switches", lambda: ran.append("switches"), 5.0, log)
    took = time.monotonic() - t0
    release.set()
    assert ran == ["switches"]
    assert 0.3 <= took < 5.0
    assert len(log.errors) == 1 and log.errors[0].startswith("close clients: did not finish")
    assert log.lines[0].startswith("close clients: still running after")
    assert log.lines[1].startswith("stop switches: ")
    assert log.interrupt is None


def test_a_failing_step_is_recorded_and_an_interrupt_is_kept_for_the_end() -> None:
    def fails() -> None:
        raise OSError("device busy")

    def interrupted() -> None:
        raise KeyboardInterrupt

    log = StepLog()
    run_step("stop Mininet", fails, 5.0, log)
    run_step("stop apps", interrupted, 5.0, log)
    run_step("remove leftovers", lambda: None, 5.0, log)
    assert log.errors == ["stop Mininet: device busy"]
    assert isinstance(log.interrupt, KeyboardInterrupt)
    assert [line.split(":")[0] for line in log.lines] == [
        "stop Mininet", "stop apps", "remove leftovers"]
    assert "interrupted" in log.lines[1]
    assert log.text().count("\n") == 3
