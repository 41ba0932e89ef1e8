"""The INT database (paper section 3.4, Algorithm 4).

One entry per (switch ID, egress port): the newest label's data. An item
replaces the entry only if its label time is later than the recorded time
RT, because labels of one port can reach the controller out of order over
paths of different delay. Label times are the switch's 48-bit microsecond
clock; at 1 µs they wrap after 8.9 years, so plain comparison is kept.

Every arrival is also logged with its arrival time (controller clock) and
whether it was accepted, so metrics can count the ports updated in a window.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from sinks.intlabel.report import IntItem

Key = tuple[int, int]  # (switch ID, egress port)
UpdateListener = Callable[[Key, "IntRecord"], None]


@dataclass(slots=True)
class IntRecord:
    """The newest state of one port: label time (RT), hop latency (µs), queue
    depths (packets), the ingress port of the labeled packet, and when the
    controller received it (seconds, controller clock)."""

    label_time: int
    hop_latency: int
    enq_qdepth: int
    deq_qdepth: int
    ingress_port: int
    arrival_s: float


class IntDatabase(Protocol):
    """What the collector and the Pro loop need of an INT database."""

    def update(self, item: IntItem, arrival_s: float) -> bool:
        """Algorithm 4, lines 11-17: True if ``item`` became the port's entry."""
        ...

    def update_many(self, batch: list[tuple[IntItem, float]]) -> list[bool]:
        """``update`` for each (item, arrival) in order."""
        ...

    def get(self, key: Key) -> IntRecord | None: ...

    def keys(self) -> list[Key]: ...

    def on_update(self, listener: UpdateListener) -> None:
        """Call ``listener(key, record)`` after every accepted update."""
        ...


class MemoryIntDatabase:
    """The INT database in a dict, with the arrival log kept as flat lists:
    ``log_times[i]``, ``log_keys[i]``, ``log_accepted[i]`` per arrived item."""

    __slots__ = ("_data", "_listeners", "keep_log", "log_times", "log_keys", "log_accepted",
                 "arrived", "accepted")

    def __init__(self, *, keep_log: bool = True) -> None:
        self._data: dict[Key, IntRecord] = {}
        self._listeners: list[UpdateListener] = []
        self.keep_log = keep_log
        self.log_times: list[float] = []
        self.log_keys: list[Key] = []
        self.log_accepted: list[bool] = []
        self.arrived = 0
        self.accepted = 0

    def update(self, item: IntItem, arrival_s: float) -> bool:
        key = (item.switch_id, item.egress_port)
        rec = self._data.get(key)
        ok = rec is None or item.label_time > rec.label_time
        self.arrived += 1
        if self.keep_log:
            self.log_times.append(arrival_s)
            self.log_keys.append(key)
            self.log_accepted.append(ok)
        if not ok:
            return False
        self.accepted += 1
        rec = IntRecord(item.label_time, item.hop_latency, item.enq_qdepth, item.deq_qdepth,
                        item.ingress_port, arrival_s)
        self._data[key] = rec
        for listener in self._listeners:
            listener(key, rec)
        return True

    def update_many(self, batch: list[tuple[IntItem, float]]) -> list[bool]:
        return [self.update(item, arrival_s) for item, arrival_s in batch]

    def get(self, key: Key) -> IntRecord | None:
        return self._data.get(key)

    def keys(self) -> list[Key]:
        return list(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def on_update(self, listener: UpdateListener) -> None:
        self._listeners.append(listener)

    def arrivals(self) -> Iterator[tuple[float, Key, bool]]:
        """``(arrival_s, key, accepted)`` per logged item, in arrival order."""
        return zip(self.log_times, self.log_keys, self.log_accepted)
