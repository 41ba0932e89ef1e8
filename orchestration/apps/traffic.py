"""Replay traffic definitions (``traffic``) on simulated hosts."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import cython

from dataplane.targets.sim.events import NS_PER_US, Simulator, Target
from dataplane.targets.sim.network import SimHost
from traffic.receiver import Receiver

_NS_PER_US = cython.declare(cython.longlong, NS_PER_US)  # a machine word when compiled


class Playback(Target):
    """A schedule being played: ``sent`` frames so far; ``cancel()`` sends
    no more (the traffic phase ended early). Its event (a target event, so
    the compiled loop calls it in C) sends one frame and schedules the
    next; the schedule is read one event at a time, so a long one costs no
    memory in the event queue."""

    __slots__ = ("sent", "cancelled", "_sim", "_host", "_events")

    def __init__(self, sim: Simulator, host: SimHost, events: Iterator[tuple[int, bytes]]
                 ) -> None:
        self.sent = 0
        self.cancelled = False
        self._sim = sim
        self._host = host
        self._events = events

    def cancel(self) -> None:
        self.cancelled = True

    def fire(self, kind: int, arg: Any) -> None:
        if self.cancelled:
            return
        self._host.send(arg)
        self.sent += 1
        self._next()

    def _next(self) -> None:
        """Schedule the next frame at its time (never before now, as
        ``Simulator.at_ns``)."""
        nxt = next(self._events, None)
        if nxt is None:
            return
        sim = self._sim
        when = nxt[0]
        when *= _NS_PER_US
        if when < sim.now_ns:
            when = sim.now_ns
        sim.push_to(when, self, 0, nxt[1])


def play(sim: Simulator, host: SimHost, events: Iterable[tuple[int, bytes]]) -> Playback:
    """Send each ``(time_us, frame)`` from ``host`` at its time."""
    playback = Playback(sim, host, iter(events))
    playback._next()
    return playback


def record(host: SimHost, receiver: Receiver | None = None) -> Receiver:
    """Record every frame ``host`` receives (arrival time in microseconds)."""
    rx = receiver if receiver is not None else Receiver(host.name)
    host.handlers.append(rx.on_arrival)
    return rx
