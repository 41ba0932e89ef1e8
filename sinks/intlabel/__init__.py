"""INT-label's host side (Song, Pan et al., sections 3.3 and 5): what the
collector receives and keeps.

- ``report``: telemetry reports from the last hop, parsed to items;
- ``database``: the INT database of Algorithm 4 (newest label time wins);
- ``aging``: the aging store whose expiries drive the feedback loop;
- ``collector``: the report sink that feeds the database;
- ``stores``/``redis_store``: the stores a run is handed (memory or Redis).
"""

from sinks.intlabel.aging import AgingStore, LateExpiries, MemoryAgingStore
from sinks.intlabel.collector import Collector, CollectorStats
from sinks.intlabel.database import IntDatabase, IntRecord, MemoryIntDatabase
from sinks.intlabel.report import IntItem, Report, ReportError, parse_report

__all__ = [
    "AgingStore",
    "Collector",
    "CollectorStats",
    "IntDatabase",
    "IntItem",
    "IntRecord",
    "LateExpiries",
    "MemoryAgingStore",
    "MemoryIntDatabase",
    "Report",
    "ReportError",
    "parse_report",
]
