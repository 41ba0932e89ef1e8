"""The flow cache as a network's INT monitor node.

The paper puts the flow cache behind the INT sink's P4 stage, which parses
INT and hands the per-hop values over. In an intbed network that stage is
the sink of ``p4src/int_md.p4``: it strips INT, restores the packet and
sends a Telemetry Report carrying the INT stack to the collector host.
``MonitorFeeder`` is the handler for ``Network.attach_collector`` that
hands those reports to a ``FlowCache``, on the sim target (virtual arrival
times) and on the live targets (the collector host's kernel times) alike;
``RingReaders`` then drain the cache's rings to Redis as for any input.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sinks.flowcache.cache import FlowCache
from sinks.flowcache.ingest import SINK_SIGNAL, IngestStats, reports_to_batch
from sinks.intcollector.frames import report_payloads
from sinks.intcollector.receiver import DEFAULT_PORT
from sinks.intcollector.reports import IntSignal


class MonitorFeeder:
    """A ``FrameHandler``: the reports among a call's frames, as one batch,
    into ``cache``; other frames are counted by reason in ``skipped``."""

    def __init__(self, cache: FlowCache, port: int = DEFAULT_PORT,
                 signal: IntSignal = SINK_SIGNAL) -> None:
        self.cache = cache
        self.port = port
        self.signal = signal
        self.stats = IngestStats()
        self.frames = 0
        self.last_ns = 0

    def __call__(self, frames: Sequence[tuple[bytes, float]]) -> None:
        self.frames += len(frames)
        reports, seconds = report_payloads(frames, self.port, self.stats.skipped)
        if reports:
            times = np.round(np.asarray(seconds) * 1e9).astype(np.int64)
            batch = reports_to_batch(reports, times, self.cache.config.max_hops, self.signal,
                                     self.stats)
            self.cache.process(batch)
            self.last_ns = max(self.last_ns, int(times[-1]))
