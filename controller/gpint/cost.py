"""The monitor's own processing time per request, for targets in virtual
time.

The paper's SNMP "does not scale well" because its orchestrator handles
every request itself, at most 12 at a time (section V-B2). On a live
target intbed's monitor pays its real processing time; in the sim it
would pay none, so a ``MonitorCost`` gives it the time its code takes:
building and sending a probe (``send_s``) and parsing and handling what
comes back (``receive_s``), both by the number of switches the probe
covers, piecewise linear between measured path lengths. The monitor is a
single server: a request waits while the monitor is busy with another.

``MEASURED`` is intbed's monitor timed in process on the development
machine (``python -m experiments.gpint.monitor_cost``; the measurement
and its machine: docs/measurements/gpint-monitor/). Receiving grows
faster than linearly with the path: each reading is matched to its path
position by switch id.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass


@dataclass(frozen=True)
class MonitorCost:
    """Seconds per request at ``hops`` switches (increasing, at least one
    point); beyond the last point the last segment's slope continues."""

    hops: tuple[int, ...]
    send_us: tuple[float, ...]
    receive_us: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.hops or not (len(self.hops) == len(self.send_us) == len(self.receive_us)):
            raise ValueError("a monitor cost needs one send and one receive time per path "
                             "length")
        if any(b <= a for a, b in zip(self.hops, self.hops[1:])):
            raise ValueError("the path lengths of a monitor cost must increase")
        if min(self.send_us + self.receive_us) < 0:
            raise ValueError("a monitor cost is not negative")

    @classmethod
    def flat(cls, request_us: float) -> MonitorCost:
        """``request_us`` per request whatever its path, half on each side."""
        if request_us < 0:
            raise ValueError(f"a monitor cost is not negative, not {request_us}")
        return cls((1,), (request_us / 2,), (request_us / 2,))

    def send_s(self, hops: int) -> float:
        return _interp(self.hops, self.send_us, hops) * 1e-6

    def receive_s(self, hops: int) -> float:
        return _interp(self.hops, self.receive_us, hops) * 1e-6

    def request_s(self, hops: int = 1) -> float:
        """Send and receive of one request covering ``hops`` switches."""
        return self.send_s(hops) + self.receive_s(hops)


def _interp(xs: tuple[int, ...], ys: tuple[float, ...], x: int) -> float:
    if len(xs) == 1:
        return ys[0]
    i = min(max(bisect.bisect_right(xs, x), 1), len(xs) - 1)
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    return max(0.0, y0 + (y1 - y0) * (x - x0) / (x1 - x0))


# docs/measurements/gpint-monitor/monitor_cost.yaml (25 rounds, medians).
MEASURED = MonitorCost(
    hops=(1, 2, 5, 10, 20, 50, 100, 128),
    send_us=(8.93, 10.4, 11.6, 14.61, 20.08, 38.6, 73.24, 82.13),
    receive_us=(9.11, 10.8, 17.21, 28.41, 41.16, 126.39, 365.75, 543.72),
)
