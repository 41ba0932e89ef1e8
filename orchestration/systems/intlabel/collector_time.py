"""The INT-label collector's own time on targets in virtual time.

On the live target the collector is one Python process beside the emulated
network: report frames queue while it parses, updates the database and the
aging store, and while Pro's changes of S go to the switches over
P4Runtime. Timed per batch there (docs/measurements/intlabel-collector/,
"Per batch"), its busy time goes with the INT items it parses and the
changes of S made meanwhile, not with the frames, and an item costs several
times more while the traffic runs (the collector shares the cores with the
switches and senders) than after it. ``CollectorServer`` charges the same in
virtual time: one server, batches in arrival order, each handed to the
collector when it would have been done with it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from controller.intlabel import ShiftChange
from sinks.intlabel.report import ITEM_BYTES, REPORT_FIXED_BYTES

Frames = list[tuple[bytes, float]]


@dataclass(frozen=True)
class CollectorCost:
    """Seconds the collector spends: per report frame, per INT item while
    the traffic runs (``item_s``) and after it (``item_idle_s``), and per
    change of S."""

    frame_s: float = 0.0
    item_s: float = 0.0
    item_idle_s: float = 0.0
    change_s: float = 0.0

    @property
    def free(self) -> bool:
        return not (self.frame_s or self.item_s or self.item_idle_s or self.change_s)


def report_items(frame: bytes) -> int:
    """INT items in a report frame, from its length (74 + 32 n bytes);
    a frame too short for one counts none (the collector refuses it)."""
    return max(0, (len(frame) - REPORT_FIXED_BYTES) // ITEM_BYTES)


class CollectorServer:
    """``handler`` behind a single server that charges ``cost``.

    ``changes`` gives Pro's changes of S so far (``ProLoop.changes``, in
    order); each keeps the server busy for ``cost.change_s`` from when it was made
    or from when the server is next free. ``traffic_end_s`` (set once the
    traffic's start is known) divides loaded from idle item prices. Frames
    keep their arrival stamps, as a live collector's capture times."""

    def __init__(self, clock: Any, cost: CollectorCost, handler: Callable[[Frames], None],
                 changes: Callable[[], Sequence[ShiftChange]] = tuple) -> None:
        self.clock = clock
        self.cost = cost
        self.handler = handler
        self.changes = changes
        self.traffic_end_s = float("inf")
        self.busy_until = 0.0
        self.busy_s = 0.0
        self._charged = 0
        self._queue: deque[Frames] = deque()
        self._serving = False

    def __call__(self, frames: Frames) -> None:
        self._queue.append(frames)
        if not self._serving:
            self._start()

    def _charge_changes(self) -> None:
        changes = self.changes()
        change_s = self.cost.change_s
        for change in changes[self._charged:]:
            self.busy_until = max(self.busy_until, change.time_s) + change_s
            self.busy_s += change_s
        self._charged = len(changes)

    def _start(self) -> None:
        now = self.clock.now()
        self._charge_changes()
        frames = self._queue.popleft()
        start = max(now, self.busy_until)
        cost = self.cost
        item_s = cost.item_s if start < self.traffic_end_s else cost.item_idle_s
        service = cost.frame_s * len(frames)
        if item_s:
            service += item_s * sum(report_items(f) for f, _ in frames)
        self.busy_until = start + service
        self.busy_s += service
        self._serving = True
        self.clock.call_later(self.busy_until - now, self._finish, frames)

    def _finish(self, frames: Frames) -> None:
        self.handler(frames)
        self._serving = False
        self._charge_changes()
        if self._queue:
            self._start()
