"""The report sink (paper section 3.4, Algorithm 4, ResultCollection).

Each report's items go into the INT database one by one; a report that
does not parse is counted under its reason, never raised, so one bad
frame cannot stop collection.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from common.clock import Clock
from sinks.intlabel.database import IntDatabase
from sinks.intlabel.report import (
    REPORT_UDP_PORT,
    IntItem,
    Report,
    ReportError,
    parse_report,
)

# The data plane's stack holds 8 items (intlabel_headers.p4 INT_MAX_ITEMS).
HISTOGRAM_SIZE = 9


@dataclass
class CollectorStats:
    """Counts since the start. ``items_per_report[i]`` counts reports with i
    items; ``malformed`` counts frames by the reason they were refused."""

    reports: int = 0
    report_bytes: int = 0
    items: int = 0
    accepted_items: int = 0
    stale_items: int = 0
    specific_reports: int = 0
    items_per_report: list[int] = field(default_factory=lambda: [0] * HISTOGRAM_SIZE)
    malformed: Counter[str] = field(default_factory=Counter)

    @property
    def malformed_total(self) -> int:
        return sum(self.malformed.values())


class Collector:
    """Feeds reports into ``db``; arrival times come from ``clock``.

    ``max_hop`` overrides the MAX_hop reports carry for Algorithm 4's rule
    (the controller configured it; by default the sink's value is trusted).
    """

    __slots__ = ("db", "clock", "udp_port", "max_hop", "stats", "keep_reports", "reports")

    def __init__(self, db: IntDatabase, clock: Clock, *, udp_port: int = REPORT_UDP_PORT,
                 max_hop: int | None = None, keep_reports: bool = False) -> None:
        self.db = db
        self.clock = clock
        self.udp_port = udp_port
        self.max_hop = max_hop
        self.stats = CollectorStats()
        self.keep_reports = keep_reports
        self.reports: list[tuple[float, Report]] = []

    def feed(self, frame: bytes, arrival_s: float | None = None) -> Report | None:
        """Process one frame; returns its report, or None if it was refused."""
        now = self.clock.now() if arrival_s is None else arrival_s
        report = self._parse(frame, now)
        if report is None:
            return None
        update = self.db.update
        accepted = sum(1 for item in report.items if update(item, now))
        self._settle(len(report.items), accepted)
        return report

    def feed_batch(self, frames: list[tuple[bytes, float]]) -> list[Report]:
        """``feed`` for several (frame, arrival) pairs, with the items'
        database updates in one batch (``db.update_many``: one pipeline to
        Redis instead of a round trip per item). The reports that parsed,
        in order."""
        reports: list[Report] = []
        batch: list[tuple[IntItem, float]] = []
        for frame, arrival_s in frames:
            report = self._parse(frame, arrival_s)
            if report is not None:
                reports.append(report)
                batch.extend((item, arrival_s) for item in report.items)
        accepted = sum(self.db.update_many(batch)) if batch else 0
        self._settle(len(batch), accepted)
        return reports

    def _parse(self, frame: bytes, now: float) -> Report | None:
        st = self.stats
        try:
            report = parse_report(frame, self.udp_port, self.max_hop)
        except ReportError as exc:
            st.malformed[exc.kind] += 1
            return None
        n = len(report.items)
        st.reports += 1
        st.report_bytes += len(frame)
        st.items += n
        if n >= len(st.items_per_report):
            st.items_per_report.extend([0] * (n + 1 - len(st.items_per_report)))
        st.items_per_report[n] += 1
        if report.specific:
            st.specific_reports += 1
        if self.keep_reports:
            self.reports.append((now, report))
        return report

    def _settle(self, items: int, accepted: int) -> None:
        self.stats.accepted_items += accepted
        self.stats.stale_items += items - accepted

    def host_handler(self, host: Any, frame: bytes, now_ns: int) -> None:
        """A packet endpoint's receive callback ``(host, frame, time_ns)``."""
        self.feed(frame, now_ns / 1e9)

