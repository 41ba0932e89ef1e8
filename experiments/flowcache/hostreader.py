"""The host reader of section III-D as a server with a service rate, in
time: the NIC writes each packet's events into R_I at the packet's arrival
time, and a reader that handles ``rate`` entries per second empties the
rings between arrivals, so a ring fills, and drops what it cannot hold,
once the reader falls behind. Time is virtual (packet ``i`` arrives at
``i / pps``); the reader's rate is an input, measured from intbed's own
reader by ``service``. Fig. 6 runs it; the bounds it must meet are those of
a fluid queue with a finite buffer (``fluid_loss``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from sinks.flowcache.cache import Events, FlowCache, PacketBatch


def share(fill: np.ndarray, budget: int) -> np.ndarray:
    """How many entries a work-conserving reader with ``budget`` takes from
    rings holding ``fill``: as evenly as it can (water filling), never more
    than a ring holds, and all the budget while any ring is not empty."""
    take = np.zeros(len(fill), np.int64)
    left = int(budget)
    open_ = [r for r in range(len(fill)) if fill[r] > 0]
    while left > 0 and open_:
        each = max(1, left // len(open_))
        for r in list(open_):
            n = min(each, int(fill[r] - take[r]), left)
            take[r] += n
            left -= n
            if take[r] == fill[r]:
                open_.remove(r)
            if not left:
                break
    return take


@dataclass
class Served:
    """One run: events the NIC produced, those the reader took, those the
    rings dropped, the time it lasted (s), and the highest ring fill."""

    produced: int = 0
    read: int = 0
    dropped: int = 0
    seconds: float = 0.0
    peak_fill: int = 0


def serve(cache: FlowCache, batch: PacketBatch, packets: int, pps: float, rate: float,
          tick_s: float, on_read: Callable[[Events], None] | None = None) -> Served:
    """Feed ``packets`` packets (``batch`` over and over) at ``pps`` packets/s
    of virtual time in ticks of ``tick_s``; after each tick the reader takes
    ``rate * tick_s`` entries (credit carried while it is busy, lost while
    the rings are empty: an idle reader cannot bank time). ``on_read`` gets
    what it read; what is left at the end is read too (the run is over,
    the reader catches up), so dropped = what overflowed while it ran."""
    n = len(batch)
    per_tick = max(1, int(round(pps * tick_s)))
    out = Served(seconds=packets / pps)
    credit = 0.0
    head, tail = cache.ering[0], cache.ering[1]
    rings = list(range(len(head)))
    for at in range(0, packets, per_tick):
        index = np.arange(at, min(packets, at + per_tick))
        part = batch.take(index % n)
        cache.process(replace(part, ts=(index * (1e9 / pps)).astype(np.int64)))
        fill = head - tail
        out.peak_fill = max(out.peak_fill, int(fill.max()))
        credit += rate * len(index) / pps
        got = cache.drain_events(rings, share(fill, int(credit)))
        credit = credit - len(got) if int((head - tail).sum()) else 0.0
        _hand(got, out, on_read)
    _hand(cache.drain_events(), out, on_read)
    c = cache.counters
    out.produced, out.dropped = c["events"], c["event_ring_overflow"]  # events counts drops
    return out


def _hand(ev: Events, out: Served, on_read: Callable[[Events], None] | None) -> None:
    out.read += len(ev)
    if on_read is not None and len(ev):
        on_read(ev)


def fluid_loss(event_rate: float, reader_rate: float, capacity: int, events: int) -> float:
    """The loss of a fluid queue fed at ``event_rate`` for ``events``
    arrivals, served at ``reader_rate``, holding ``capacity``: what arrives
    beyond what is served and what the buffer holds at the end, as a share,
    1 - r/e - C/N when the reader is slower, 0 otherwise."""
    served = reader_rate * events / event_rate
    return max(0.0, events - served - capacity) / events
