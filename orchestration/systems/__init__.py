"""Each system's run, written once against ``orchestration.network.Network``,
and the one registry of systems.

A system has one id, the name of its pieces in every layer: its control
plane and sinks in ``controller/<id>/``, its run here, its figures in
``experiments/<id>/`` (registered when that package is imported), its
documentation in ``docs/<id>.md``, its tests in ``tests/<id>/``, and,
where it has one, a command group in ``intbed/commands/<id>.py``. The
experiments framework and the command line find a system's figures and
commands from ``SYSTEMS`` (``docs/architecture.md``, "Adding a system").
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from common.errors import IntbedError


@dataclass(frozen=True)
class System:
    """One published system intbed implements."""

    id: str
    title: str
    paper: str
    programs: tuple[str, ...] = ()
    """The ``p4src`` programs its switches run."""
    run: str | None = None
    """``module:function`` of its run against ``Network`` (None: it runs on
    the host alone, fed by recorded or generated reports)."""
    command: str | None = None
    """The name of its command group (``intbed <command>``), made by
    ``intbed.commands.<id>`` (None: it has none)."""

    def run_function(self) -> Callable[..., Any]:
        """The run itself (imported on first use)."""
        if self.run is None:
            raise IntbedError(f"system '{self.id}' has no run on a network")
        module, _, name = self.run.partition(":")
        return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


SYSTEMS: dict[str, System] = {}


def register(system: System) -> System:
    """Add ``system`` (its id must be new)."""
    if system.id in SYSTEMS:
        raise IntbedError(f"system '{system.id}' is registered already")
    SYSTEMS[system.id] = system
    return system


register(System(
    "intlabel", "INT-label: network-wide telemetry by distributed labeling",
    "INT-label: Lightweight In-band Network-Wide Telemetry via Distributed Labeling "
    "(Song, Pan et al.)", ("intlabel", "hula"),
    "orchestration.systems.intlabel.run:run_intlabel"))
register(System(
    "gpint", "GPINT with SQR: INT path planning and recovery",
    "Reliable and Distributed Network Monitoring via In-band Network Telemetry "
    "(Simsek, Ergenc, Onur)", ("gpint",), "orchestration.systems.gpint:run_gpint",
    command="gpint"))
register(System(
    "intcollector", "INTCollector: a high-performance collector for INT reports",
    "INTCollector: A High-performance Collector for In-band Network Telemetry "
    "(Van Tu, Hyun, Kim, Yoo, Hong)", ("int_md",), command="collector"))
register(System(
    "flowcache", "A SmartNIC flow cache as the INT sink",
    "A SmartNIC-Accelerated Monitoring Platform for In-band Network Telemetry "
    "(Feng et al.)", (), command="flowcache"))
register(System(
    "pint", "PINT: probabilistic in-band network telemetry",
    "PINT: Probabilistic In-band Network Telemetry (Ben Basat et al.)", ("pint", "int_md"),
    "orchestration.systems.pint:run_pint"))
