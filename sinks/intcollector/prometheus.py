"""The collector's state as a Prometheus exposition endpoint, scraped on
demand: counters (reports by outcome, values, events per metric, queue
drops, points exported), Info table sizes, and the latest value of every
switch-level key (queue occupancy and congestion per switch queue, link
utilization per egress port), whose number is bounded by the network's
size. Per-flow keys are left out: a Prometheus series per flow would grow
with the traffic, which is what INTCollector's event detection avoids.

Read at scrape time under the fast path's lock, so a scrape sees whole
batches.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from sinks.intcollector.metrics import LINK_UTILIZATION, QUEUE_CONGESTION, QUEUE_OCCUPANCY

if TYPE_CHECKING:
    from sinks.intcollector.pipeline import Collector
    from sinks.intcollector.receiver import UdpReceiver

PREFIX = "intcollector"
SWITCH_METRICS = (QUEUE_OCCUPANCY, QUEUE_CONGESTION, LINK_UTILIZATION)


class CollectorMetrics:
    """A prometheus_client collector (``collect``) over one ``Collector``
    and, if given, its ``UdpReceiver``."""

    def __init__(self, collector: Collector, receiver: UdpReceiver | None = None) -> None:
        self.collector = collector
        self.receiver = receiver

    def collect(self) -> Iterator[Any]:
        fast = self.collector.fast
        with fast.lock:
            counters = self.collector.counters
            reports = CounterMetricFamily(f"{PREFIX}_reports", "Reports in, by outcome",
                                          labels=["outcome"])
            reports.add_metric(["accepted"], counters.reports.accepted)
            for reason, count in sorted(counters.reports.rejected.items()):
                reports.add_metric([reason], count)
            events = CounterMetricFamily(f"{PREFIX}_events", "Events detected, by metric",
                                         labels=["metric"])
            keys = GaugeMetricFamily(f"{PREFIX}_keys", "Keys in the Info tables, by metric",
                                     labels=["metric"])
            for name, table in fast.tables.items():
                events.add_metric([name], counters.events.get(name, 0))
                keys.add_metric([name], len(table))
            latest = [self._latest(metric) for metric in SWITCH_METRICS]
            plain = [(f"{PREFIX}_values", "Metric values extracted", counters.values),
                     (f"{PREFIX}_queue_drops", "Values dropped at the full queue",
                      counters.queue_drops),
                     (f"{PREFIX}_exported_points", "Points handed to the store",
                      counters.exported_points),
                     (f"{PREFIX}_store_errors", "Normal path runs that failed",
                      counters.store_errors)]
        yield reports
        yield events
        yield keys
        for name, text, value in plain:
            yield CounterMetricFamily(name, text, value=value)
        yield from latest
        if self.receiver is not None:
            stats = self.receiver.stats
            yield CounterMetricFamily(f"{PREFIX}_datagrams", "Datagrams taken from the socket",
                                      value=stats.datagrams)
            yield CounterMetricFamily(f"{PREFIX}_oversize", "Datagrams longer than a slot",
                                      value=stats.oversize)

    def _latest(self, metric: Any) -> GaugeMetricFamily:
        """Latest value of each key of a switch-level metric (under the lock)."""
        table = self.collector.fast.tables[metric.name]
        space = self.collector.fast.space
        family = GaugeMetricFamily(f"{PREFIX}_{metric.name}", f"Latest {metric.name} per key",
                                   labels=list(metric.ids))
        count = len(table)
        for slot, value in zip(range(count), table.latest[:count].tolist()):
            ids = space.ids(metric, table.index.key(slot))
            family.add_metric([str(i) for i in ids], value)
        return family


class PrometheusEndpoint:
    """``/metrics`` over HTTP on ``host:port`` (0: a free port), in a
    daemon thread; ``close`` stops it."""

    def __init__(self, collector: Collector, port: int, host: str = "0.0.0.0",
                 receiver: UdpReceiver | None = None) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(CollectorMetrics(collector, receiver))  # type: ignore[arg-type]
        self._server, self._thread = start_http_server(port, host, self.registry)
        self.port = int(self._server.server_address[1])

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
