"""Telemetry reports from a pcap file through the collector, as fast as the
collector goes, in the capture's own time.

The frames are Ethernet (802.1Q/802.1ad tags skipped), Linux cooked
captures (``tcpdump -i any``) or raw IPv4; a report is the payload of an
unfragmented IPv4/UDP datagram to the report port. Everything else is
skipped and counted by reason.

Time is the capture's: the collector runs on a ``common.clock.VirtualClock`` whose zero is
the first record's timestamp (also the points' ``time_origin_ns``), so
points carry the capture times, and the event flushes and periodic pushes
fire at the capture times they would have fired at live. A batch is cut
where a timer falls due, so a push sees exactly the reports captured before
it, whatever the batch size.
"""

from __future__ import annotations

import struct
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from common.clock import VirtualClock
from common.errors import IntbedError
from common.pcap import LINKTYPE_ETHERNET, PcapError, PcapReader
from sinks.intcollector.pipeline import Collector, CollectorConfig
from sinks.intcollector.receiver import DEFAULT_PORT
from sinks.intcollector.stores.base import Store

LINKTYPE_RAW = 101  # raw IP (also 12/14 on some systems)
LINKTYPE_LINUX_SLL = 113
LINKTYPE_IPV4 = 228
DEFAULT_BATCH = 4096

# Skip reasons, counted in ReplayStats.skipped.
NOT_IPV4 = "not_ipv4"
NOT_UDP = "not_udp"
OTHER_PORT = "other_port"
FRAGMENT = "fragment"
CUT = "truncated_frame"

_PCAPNG_MAGIC = b"\x0a\x0d\x0d\x0a"
_VLAN_TYPES = (0x8100, 0x88A8, 0x9100)
_ETH_OFFSET = {LINKTYPE_ETHERNET: 12, LINKTYPE_LINUX_SLL: 14}  # where the ethertype sits
_RAW_TYPES = (LINKTYPE_RAW, LINKTYPE_IPV4, 12, 14)


class ReplayError(IntbedError):
    """A capture that cannot be replayed: not a pcap, an unknown link type."""


@dataclass
class ReplayStats:
    """Frames read, reports fed and their bytes, frames skipped by reason,
    the capture's time span and the wall time the replay took."""

    frames: int = 0
    reports: int = 0
    bytes: int = 0
    batches: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    first_ns: int | None = None
    last_ns: int | None = None
    wall_s: float = 0.0

    @property
    def reports_per_s(self) -> float:
        return self.reports / self.wall_s if self.wall_s > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"frames": self.frames, "reports": self.reports, "bytes": self.bytes,
                "batches": self.batches, "skipped": dict(self.skipped),
                "first_ns": self.first_ns, "last_ns": self.last_ns, "wall_s": self.wall_s,
                "reports_per_s": self.reports_per_s}




def udp_payload(frame: bytes, linktype: int, port: int) -> bytes | str:
    """The payload of an IPv4/UDP datagram to ``port`` in ``frame``, or the
    reason it is not one (NOT_IPV4, NOT_UDP, OTHER_PORT, FRAGMENT, CUT)."""
    if linktype in _RAW_TYPES:
        ip = 0
    else:
        at = _ETH_OFFSET[linktype]
        if len(frame) < at + 2:
            return CUT
        ethertype = int.from_bytes(frame[at:at + 2], "big")
        at += 2
        while ethertype in _VLAN_TYPES:
            if len(frame) < at + 4:
                return CUT
            ethertype = int.from_bytes(frame[at + 2:at + 4], "big")
            at += 4
        if ethertype != 0x0800:
            return NOT_IPV4
        ip = at
    if len(frame) < ip + 20:
        return CUT
    first = frame[ip]
    if first >> 4 != 4:
        return NOT_IPV4
    if frame[ip + 9] != 17:
        return NOT_UDP
    if int.from_bytes(frame[ip + 6:ip + 8], "big") & 0x3FFF:  # MF or an offset
        return FRAGMENT
    udp = ip + 4 * (first & 0x0F)
    if len(frame) < udp + 8:
        return CUT
    dport, length = struct.unpack_from("!HH", frame, udp + 2)
    if dport != port:
        return OTHER_PORT
    end = udp + length
    if length < 8 or end > len(frame):
        return CUT
    return frame[udp + 8:end]


def _open(path: str | Path) -> tuple[Any, PcapReader]:
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed by replay
    except FileNotFoundError:
        raise ReplayError(f"{path}: no such file") from None
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        if f.read(4) == _PCAPNG_MAGIC:
            raise ReplayError(f"{path}: a pcapng file; convert it to pcap first "
                              f"(editcap -F pcap {path} out.pcap)")
        f.seek(0)
        reader = PcapReader(f, str(path), truncated_ok=True)
        if reader.header is None:
            raise ReplayError(f"{path}: not a pcap file (shorter than a pcap header)")
        linktype = reader.header.linktype
        if linktype not in _ETH_OFFSET and linktype not in _RAW_TYPES:
            raise ReplayError(f"{path}: link type {linktype} is not Ethernet, Linux cooked "
                              "or raw IP")
    except PcapError as exc:
        f.close()
        raise ReplayError(exc.message) from None
    except BaseException:
        f.close()
        raise
    return f, reader


def reports(path: str | Path, port: int = DEFAULT_PORT,
            stats: ReplayStats | None = None) -> Iterator[tuple[int, bytes]]:
    """(timestamp ns, report payload) of every report in the capture. A file
    cut mid-record (a capture killed while writing) gives its complete records."""
    stats = ReplayStats() if stats is None else stats
    f, reader = _open(path)
    assert reader.header is not None
    linktype = reader.header.linktype
    with f:
        for t_ns, frame in reader:
            stats.frames += 1
            payload = udp_payload(frame, linktype, port)
            if isinstance(payload, str):
                stats.skipped[payload] += 1
                continue
            yield t_ns, payload


@dataclass
class Replayed:
    collector: Collector
    stats: ReplayStats


def replay(path: str | Path, store: Store, config: CollectorConfig | None = None, *,
           port: int = DEFAULT_PORT, batch: int = DEFAULT_BATCH) -> Replayed:
    """Feed every report of the capture to a new collector on ``store`` and
    stop it (its queued events written). ``config.time_origin_ns`` is
    replaced by the first record's timestamp."""
    if batch < 1:
        raise ValueError("batch must be positive")
    config = CollectorConfig() if config is None else config
    stats = ReplayStats()
    clock = VirtualClock()
    started = time.perf_counter()
    records = reports(path, port, stats)
    collector: Collector | None = None
    payloads: list[bytes] = []
    times: list[float] = []
    origin = 0

    def feed() -> None:
        assert collector is not None
        collector.feed(payloads, times)
        stats.batches += 1
        payloads.clear()
        times.clear()

    for t_ns, payload in records:
        if collector is None:
            origin = t_ns
            stats.first_ns = t_ns
            collector = Collector(store, clock, replace(config, time_origin_ns=origin))
            collector.start()
        t = (t_ns - origin) / 1e9
        if payloads and (len(payloads) >= batch or t >= clock.next_due()):
            feed()
        clock.advance_to(t)
        payloads.append(payload)
        times.append(t)
        stats.reports += 1
        stats.bytes += len(payload)
        stats.last_ns = t_ns
    if collector is None:  # no report in the capture: an idle collector for its counters
        collector = Collector(store, clock, config)
    elif payloads:
        feed()
    collector.stop()
    stats.wall_s = time.perf_counter() - started
    return Replayed(collector, stats)
