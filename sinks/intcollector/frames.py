"""Report frames from a network's collector host into a ``Collector``.

``Network.attach_collector(handler)`` hands the collector host's frames
(Ethernet, with their arrival times in seconds) to a handler; on the sim
target those times are virtual. ``FrameFeeder`` is that handler: it takes
the UDP payload of every frame to the report port, as ``replay`` does for
a capture, and feeds them to the collector with their arrival times. Run
the collector on the network's own clock (``Collector(store, net.clock)``:
the simulator is a ``Clock``), so its event flushes and periodic pushes
happen in the network's time. Other frames are skipped and counted by
reason (``replay.NOT_UDP``, ``OTHER_PORT``, ...).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from common.pcap import LINKTYPE_ETHERNET
from sinks.intcollector.pipeline import Collector
from sinks.intcollector.receiver import DEFAULT_PORT
from sinks.intcollector.replay import udp_payload


def report_payloads(frames: Sequence[tuple[bytes, float]], port: int,
                    skipped: Counter[str]) -> tuple[list[bytes], list[float]]:
    """The UDP payloads to ``port`` among Ethernet ``frames``, with their
    arrival times; other frames counted in ``skipped`` by reason."""
    payloads: list[bytes] = []
    times: list[float] = []
    for frame, at in frames:
        found = udp_payload(frame, LINKTYPE_ETHERNET, port)
        if isinstance(found, str):
            skipped[found] += 1
            continue
        payloads.append(bytes(found))
        times.append(at)
    return payloads, times


class FrameFeeder:
    """A ``FrameHandler`` feeding report payloads to ``collector``; the
    frames of one call are fed as one batch."""

    def __init__(self, collector: Collector, port: int = DEFAULT_PORT) -> None:
        self.collector = collector
        self.port = port
        self.frames = 0
        self.reports = 0
        self.skipped: Counter[str] = Counter()

    def __call__(self, frames: Sequence[tuple[bytes, float]]) -> None:
        self.frames += len(frames)
        payloads, times = report_payloads(frames, self.port, self.skipped)
        if payloads:
            self.reports += len(payloads)
            self.collector.feed(payloads, times)
