"""Replay traffic definitions (``traffic``) on simulated hosts."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from dataplane.targets.sim.events import NS_PER_US, Simulator
from dataplane.targets.sim.network import SimHost
from traffic.receiver import Receiver


class Playback:
    """A schedule being played: ``sent`` frames so far; ``cancel()`` sends
    no more (the traffic phase ended early)."""

    __slots__ = ("sent", "cancelled")

    def __init__(self) -> None:
        self.sent = 0
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


def play(sim: Simulator, host: SimHost, events: Iterable[tuple[int, bytes]]) -> Playback:
    """Send each ``(time_us, frame)`` from ``host`` at its time. Events are
    scheduled one at a time, so a long schedule costs no memory in the
    event queue."""
    it: Iterator[tuple[int, bytes]] = iter(events)
    playback = Playback()

    def step(frame: bytes) -> None:
        if playback.cancelled:
            return
        host.send(frame)
        playback.sent += 1
        nxt = next(it, None)
        if nxt is not None:
            sim.at_ns(nxt[0] * NS_PER_US, step, nxt[1])

    first = next(it, None)
    if first is not None:
        sim.at_ns(first[0] * NS_PER_US, step, first[1])
    return playback


def record(host: SimHost, receiver: Receiver | None = None) -> Receiver:
    """Record every frame ``host`` receives (arrival time in microseconds)."""
    rx = receiver if receiver is not None else Receiver(host.name)
    receive = rx.receive  # bound once: a call per packet, not a lookup and a call
    host.handlers.append(lambda h, frame, now_ns: receive(frame, now_ns // NS_PER_US))
    return rx
