"""Replay traffic definitions (``traffic``) on simulated hosts."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from dataplane.targets.sim.events import NS_PER_US, Simulator
from dataplane.targets.sim.network import SimHost
from traffic.receiver import Receiver


def play(sim: Simulator, host: SimHost, events: Iterable[tuple[int, bytes]]) -> None:
    """Send each ``(time_us, frame)`` from ``host`` at its time. Events are
    scheduled one at a time, so a long schedule costs no memory in the
    event queue."""
    it: Iterator[tuple[int, bytes]] = iter(events)

    def step(frame: bytes) -> None:
        host.send(frame)
        nxt = next(it, None)
        if nxt is not None:
            sim.at_ns(nxt[0] * NS_PER_US, step, nxt[1])

    first = next(it, None)
    if first is not None:
        sim.at_ns(first[0] * NS_PER_US, step, first[1])


def record(host: SimHost, receiver: Receiver | None = None) -> Receiver:
    """Record every frame ``host`` receives (arrival time in microseconds)."""
    rx = receiver if receiver is not None else Receiver(host.name)
    host.handlers.append(lambda h, frame, now_ns: rx.receive(frame, now_ns // NS_PER_US))
    return rx
