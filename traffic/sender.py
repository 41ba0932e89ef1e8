"""Turn a schedule into frames and keep a log of what was sent.

The log is what a ``Receiver`` compares against for loss and latency: one
row per packet with its scheduled send time, flow 5-tuple, sequence number
and frame size.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

import cython
import numpy as np

from traffic.errors import TrafficError
from traffic.packets import FlowKey, FlowSpec, PacketFactory
from traffic.schedules import Schedule

SENT_COLUMNS = ("time_us", "size", "src_ip", "dst_ip", "proto", "sport", "dport", "seq")


class SentLog:
    """Packets handed to the network, as flat columns in send order."""

    __slots__ = ("times_us", "keys", "seqs", "sizes")

    def __init__(self) -> None:
        self.times_us: list[int] = []
        self.keys: list[FlowKey] = []
        self.seqs: list[int] = []
        self.sizes: list[int] = []

    def record(self, time_us: int, key: FlowKey, seq: int, size: int) -> None:
        self.times_us.append(time_us)
        self.keys.append(key)
        self.seqs.append(seq)
        self.sizes.append(size)

    def __len__(self) -> int:
        return len(self.times_us)

    def send_times(self) -> dict[tuple[FlowKey, int], int]:
        """Send time of each (flow, seq); a packet sent twice keeps its first."""
        out: dict[tuple[FlowKey, int], int] = {}
        for key, seq, t in zip(self.keys, self.seqs, self.times_us):
            out.setdefault((key, seq), t)
        return out

    def to_destination(self, dst_ip: str) -> SentLog:
        """The packets addressed to ``dst_ip`` (what one host should receive)."""
        out = SentLog()
        for t, key, seq, size in zip(self.times_us, self.keys, self.seqs, self.sizes):
            if key.dst_ip == dst_ip:
                out.record(t, key, seq, size)
        return out

    @classmethod
    def merged(cls, logs: Iterable[SentLog]) -> SentLog:
        """One log of several senders, in time order (ties: argument order)."""
        rows = [row for log in logs for row in zip(log.times_us, log.keys, log.seqs, log.sizes)]
        rows.sort(key=lambda r: r[0])
        out = cls()
        for row in rows:
            out.record(*row)
        return out

    def write_csv(self, out: TextIO) -> None:
        w = csv.writer(out, lineterminator="\n")
        w.writerow(SENT_COLUMNS)
        for t, k, seq, size in zip(self.times_us, self.keys, self.seqs, self.sizes):
            w.writerow((t, size, k.src_ip, k.dst_ip, k.proto, k.sport, k.dport, seq))

    def to_csv(self, path: str | Path) -> None:
        with open(path, "w", newline="") as f:
            self.write_csv(f)

    def log_bytes(self) -> bytes:
        """The CSV as bytes: equal for runs that sent the same packets."""
        buf = io.StringIO()
        self.write_csv(buf)
        return buf.getvalue().encode()


class Sender:
    """Frames of a schedule, built lazily as it is iterated.

    Each event's ``dest`` is the ``FlowSpec`` of its flow; a schedule whose
    destinations are not flows (one built with ``dest=None``) uses ``flow``
    for all of them. A frame is sized to its event's ``size``. Iterating
    appends each packet to ``log`` with its scheduled send time.
    """

    __slots__ = ("schedule", "flow", "log")

    def __init__(
        self, schedule: Schedule, flow: FlowSpec | None = None, log: SentLog | None = None
    ) -> None:
        self.schedule = schedule
        self.flow = flow
        self.log = SentLog() if log is None else log

    def _factory(self, index: int, size: int) -> PacketFactory:
        dest = self.schedule.dests[index]
        flow = dest if isinstance(dest, FlowSpec) else self.flow
        if flow is None:
            raise TrafficError(f"destination {dest!r} is not a flow and no flow was given")
        if flow.frame_size != size:
            flow = flow.with_frame_size(size)
        return PacketFactory(flow)

    # Compiled: the factories a typed list read by a machine-word index,
    # the log's record and a factory's packet C calls.
    @cython.locals(by_code=list, code=cython.Py_ssize_t, log=SentLog, factory=PacketFactory)
    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        """``(time_us, frame)`` per event, in time order."""
        s = self.schedule
        # Each (destination, size) pair of the schedule gets a dense code,
        # so an event finds its frame factory by one list read instead of
        # hashing and comparing a tuple in a dictionary; a factory is made
        # when its pair is first sent.
        keys, codes, span = _pair_codes(s.dest_index, s.sizes)
        by_code: list[PacketFactory | None] = [None] * len(keys)
        log = self.log
        for t, code, seq, size in zip(
            s.times_us.tolist(), codes.tolist(), s.seqs.tolist(), s.sizes.tolist()
        ):
            factory = by_code[code]
            if factory is None:
                factory = by_code[code] = self._factory(int(keys[code]) // span, size)
            log.record(t, factory.key, seq, size)
            yield t, factory.packet(seq)


def _pair_codes(dest_index: np.ndarray, sizes: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, int]:
    """The distinct (destination index, size) pairs of a schedule as keys
    ``index * span + size``, each event's position among them, and
    ``span``."""
    if not len(dest_index):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 1
    span = int(sizes.max()) + 1
    keys, codes = np.unique(dest_index * span + sizes, return_inverse=True)
    return keys, codes.reshape(-1), span
