"""INT-label's control plane (Song, Pan et al., sections 3.2-3.4 and 5).

- ``report``: telemetry reports from the last hop, parsed to items;
- ``database``: the INT database of Algorithm 4 (newest label time wins);
- ``aging``: the aging store whose expiries drive the feedback loop;
- ``collector``: the report sink that feeds the database;
- ``pro``: Algorithm 3, the per-port shift S written by P4Runtime MODIFY;
- ``config``: the data-plane parameters and their installation on a switch.

Apps get a clock, P4Runtime clients and packet endpoints, never a target:
the same code runs on the ``sim`` target (virtual time, memory stores) and
on live switches (wall clock, Redis stores behind the same interfaces).
"""

from controller.clock import Clock
from controller.intlabel.aging import AgingStore, MemoryAgingStore
from controller.intlabel.collector import Collector, CollectorStats
from controller.intlabel.config import (
    CollectorEndpoint,
    IntLabelConfig,
    IntLabelConfigError,
    SpecificFlow,
    configure_switch,
)
from controller.intlabel.database import IntDatabase, IntRecord, MemoryIntDatabase
from controller.intlabel.pro import ProLoop, ShiftChange
from controller.intlabel.report import IntItem, Report, ReportError, parse_report

__all__ = [
    "AgingStore",
    "Clock",
    "Collector",
    "CollectorEndpoint",
    "CollectorStats",
    "IntDatabase",
    "IntItem",
    "IntLabelConfig",
    "IntLabelConfigError",
    "IntRecord",
    "MemoryAgingStore",
    "MemoryIntDatabase",
    "ProLoop",
    "Report",
    "ReportError",
    "ShiftChange",
    "SpecificFlow",
    "configure_switch",
    "parse_report",
]
