"""The traffic manager on the wall clock: one rate-limited FIFO per egress port.

BMv2's ``QueueingLogicPriRL`` (``bm_sim/queueing.h``) decides a packet's
departure when it is enqueued: ``send = max(now, last_send + 1/rate)``, and
``last_send = send``; a rate of 0 means no limit, a full queue (``capacity``
packets, 64 by default) drops the arrival. The egress side serves a queue's
head once its departure time has come. Queue metadata is filled as the sim
target fills it (``dataplane.targets.sim.network``): ``enq_qdepth`` counts the packets
already queued at arrival, ``deq_qdepth`` those left behind at departure,
``deq_timedelta`` is the time spent queued in microseconds.

Times are integer nanoseconds of ``time.monotonic_ns``; nothing here does
I/O, so the queues are tested without sockets.
"""

from __future__ import annotations

from collections import deque
from typing import Any

NS_PER_S = 1_000_000_000


def rate_to_gap_ns(rate_pps: float | None) -> int:
    """Nanoseconds between departures at ``rate_pps`` (0 or None: no limit)."""
    return round(NS_PER_S / rate_pps) if rate_pps else 0


class EgressQueue:
    """One port's FIFO of ``(job, enq_ns, enq_depth, send_ns)``."""

    __slots__ = ("port", "fifo", "depth", "gap_ns", "last_send", "drops", "enqueued",
                 "max_depth")

    def __init__(self, port: int, depth: int, rate_pps: float | None = None) -> None:
        self.port = port
        self.fifo: deque[tuple[Any, int, int, int]] = deque()
        self.depth = depth
        self.gap_ns = rate_to_gap_ns(rate_pps)
        self.last_send = 0
        self.drops = 0
        self.enqueued = 0
        self.max_depth = 0

    def set_rate(self, rate_pps: float | None) -> None:
        """BMv2 ``set_queue_rate``: departures at most ``rate_pps`` per second."""
        self.gap_ns = rate_to_gap_ns(rate_pps)

    def send_time(self, now_ns: int) -> int:
        """Departure time of a packet arriving now; it becomes ``last_send``."""
        t = self.last_send + self.gap_ns
        if t < now_ns:
            t = now_ns
        self.last_send = t
        return t

    def push(self, job: Any, now_ns: int) -> bool:
        """Queue ``job``; False (and a drop counted) when the queue is full."""
        fifo = self.fifo
        n = len(fifo)
        if n >= self.depth:
            self.drops += 1
            return False
        fifo.append((job, now_ns, n, self.send_time(now_ns)))
        self.enqueued += 1
        if n >= self.max_depth:
            self.max_depth = n + 1
        return True

    def due(self, now_ns: int) -> bool:
        """Whether the head may leave at ``now_ns``."""
        fifo = self.fifo
        return bool(fifo) and fifo[0][3] <= now_ns

    def next_send(self) -> int | None:
        fifo = self.fifo
        return fifo[0][3] if fifo else None


class TrafficManager:
    """Every port's queue, created on first use with the port's settings."""

    __slots__ = ("queues", "busy", "_depth", "_rate")

    def __init__(self, depth_of: Any, rate_of: Any) -> None:
        """``depth_of(port) -> int`` and ``rate_of(port) -> float | None``
        give a new queue its capacity and service rate."""
        self.queues: dict[int, EgressQueue] = {}
        self.busy: set[EgressQueue] = set()  # queues holding packets
        self._depth = depth_of
        self._rate = rate_of

    def queue(self, port: int) -> EgressQueue:
        q = self.queues.get(port)
        if q is None:
            q = self.queues[port] = EgressQueue(port, self._depth(port), self._rate(port))
        return q

    def next_send(self) -> int | None:
        """Earliest departure among queued packets (None: all queues empty)."""
        best = None
        for q in self.busy:
            t = q.fifo[0][3]
            if best is None or t < best:
                best = t
        return best

    def pending(self) -> int:
        return sum(len(q.fifo) for q in self.busy)
