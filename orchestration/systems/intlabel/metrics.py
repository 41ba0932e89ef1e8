"""INT-label's evaluation metrics (paper section 6.2) and their ground truth.

- Coverage rate per telemetry interval T_i: the ports updated at the
  controller in the window divided by the ports that carried traffic in
  the window. "Updated" means an item of that (switch, egress port) whose
  report *arrived* in the window and was *accepted* by Algorithm 4 (newer
  than the stored label); the variant "arrived, accepted or not" is kept
  beside it. Updated ports are counted among the window's active ports
  only, so a window's coverage is at most 1. Figures use the accepted one.
- Bandwidth occupation: INT bytes (2 + 32 n per labeled frame, per link it
  crosses) over the user bytes without INT, both summed over every frame a
  switch port transmits on a data link (the collector port excluded).
- Labeled packets: reports received, plus packets seen carrying INT on a
  data link that never produced a report (lost on the way).
- Labeling times: items in reports, plus the items last seen in those lost
  packets (a label is written at egress, before the link that loses it).

``GroundTruth`` is a transmit tap ``(time_ns, switch, port, frame)``: it
only reads frames, so it works on any target that can tap ports.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

# intlabel_headers.p4: INT_TYPE, option and item sizes, bottom flag.
INT_TYPE = 253
OPTION_BYTES = 2
ITEM_BYTES = 32
MAX_ITEMS = 8
# Byte offsets in an Ethernet frame with a 20-byte IPv4 header.
_IP = 14
_IP_ID = _IP + 4
_IP_PROTO = _IP + 9
_IP_SRC = _IP + 12
_IP_END = _IP + 20
_INT_NUM = _IP_END + 1
_PACKET_ID = struct.Struct("!IIH")

PortName = tuple[str, int]


def frame_packet_id(frame: bytes) -> bytes:
    """Identity of a user packet on the wire: IPv4 source, destination and
    identification (the traffic factory sets it to seq mod 2^16), which no
    switch rewrites; labels and restoration leave them alone."""
    return frame[_IP_SRC:_IP_END] + frame[_IP_ID:_IP_ID + 2]


def report_packet_id(src_ip: int, dst_ip: int, ip_id: int) -> bytes:
    """The same identity, from a report's restored IPv4 header."""
    return _PACKET_ID.pack(src_ip, dst_ip, ip_id)


class GroundTruth:
    """What the data links carried, per telemetry window.

    ``active[w]`` holds the (switch, port) pairs that transmitted user
    traffic in window w ([w T_i, (w + 1) T_i)); ``labeled`` maps each packet
    seen with INT to the most items it was seen with.
    """

    __slots__ = ("window_ns", "max_hop", "skip_ports", "active", "int_bytes", "user_bytes",
                 "frames", "int_frames", "labeled", "_w", "_cur")

    def __init__(self, window_ns: int, max_hop: int, skip_ports: Iterable[int] = ()) -> None:
        self.window_ns = window_ns
        self.max_hop = max_hop
        self.skip_ports = frozenset(skip_ports)
        self.active: dict[int, set[PortName]] = {}
        self.int_bytes = 0
        self.user_bytes = 0
        self.frames = 0
        self.int_frames = 0
        self.labeled: dict[bytes, int] = {}
        self._w = -1
        self._cur: set[PortName] = set()

    def tap(self, time_ns: int, switch: str, port: int, frame: bytes) -> None:
        if port in self.skip_ports:
            return
        w = time_ns // self.window_ns
        if w != self._w:
            self._w = w
            cur = self.active.get(w)
            if cur is None:
                cur = self.active[w] = set()
            self._cur = cur
        self._cur.add((switch, port))
        self.frames += 1
        size = len(frame)
        if size > _INT_NUM and frame[_IP_PROTO] == INT_TYPE and frame[12:14] == b"\x08\x00":
            int_num = frame[_INT_NUM]
            n = int_num - self.max_hop if int_num > self.max_hop else int_num
            int_bytes = OPTION_BYTES + ITEM_BYTES * n
            self.int_bytes += int_bytes
            self.user_bytes += size - int_bytes
            self.int_frames += 1
            pid = frame[_IP_SRC:_IP_END] + frame[_IP_ID:_IP_ID + 2]
            if n > self.labeled.get(pid, 0):
                self.labeled[pid] = n
        else:
            self.user_bytes += size

    def all_active(self) -> set[PortName]:
        out: set[PortName] = set()
        for ports in self.active.values():
            out |= ports
        return out


@dataclass(frozen=True, slots=True)
class WindowCoverage:
    t_start_s: float
    coverage: float
    active_ports: int
    updated_ports: int


def updates_by_window(arrivals: Iterable[tuple[float, PortName, bool]], window_ns: int, *,
                      accepted_only: bool) -> dict[int, set[PortName]]:
    """Ports updated per window from ``(arrival_s, (switch, port), accepted)``."""
    out: dict[int, set[PortName]] = {}
    for t, port, ok in arrivals:
        if accepted_only and not ok:
            continue
        w = round(t * 1e9) // window_ns
        bucket = out.get(w)
        if bucket is None:
            bucket = out[w] = set()
        bucket.add(port)
    return out


def update_gaps_ms(arrivals: Iterable[tuple[float, PortName, bool]], start_s: float,
                   end_s: float) -> list[float]:
    """Milliseconds between consecutive accepted updates of each port that
    both fall in ``[start_s, end_s)``: what section 4.2's P_t is about."""
    last: dict[PortName, float] = {}
    gaps: list[float] = []
    for t, port, ok in sorted(arrivals, key=lambda a: a[0]):
        if not ok or not start_s <= t < end_s:
            continue
        before = last.get(port)
        if before is not None:
            gaps.append(round((t - before) * 1e3, 6))
        last[port] = t
    return gaps


def window_coverage(active: Mapping[int, set[PortName]], updated: Mapping[int, set[PortName]],
                    window_ns: int, windows: range) -> list[WindowCoverage]:
    """Coverage of each window in ``windows`` that had traffic."""
    out = []
    empty: set[PortName] = set()
    for w in windows:
        act = active.get(w, empty)
        if not act:
            continue
        hit = len(act & updated.get(w, empty))
        out.append(WindowCoverage(w * window_ns / 1e9, hit / len(act), len(act), hit))
    return out


def mean(values: Iterable[float]) -> float:
    vals = list(values)
    return sum(vals) / len(vals) if vals else math.nan


@dataclass
class RunMetrics:
    """One run's results: plain data (picklable, JSON-able with ``to_json``).

    ``windows`` are ``(t_start_s, coverage, active_ports, updated_ports)``
    with updates accepted by Algorithm 4 (the figures' definition);
    ``windows_arrived`` counts every arrival. Means are over the windows
    after warm-up and before the traffic ends. ``labels_per_packet[i]``
    counts delivered packets that carried i labels (index 0: delivered
    minus reports); ``items_per_report[i]`` reports with i items.
    """

    config: dict[str, Any]
    windows: list[tuple[float, float, int, int]]
    windows_arrived: list[tuple[float, float, int, int]]
    mean_coverage: float
    mean_coverage_arrived: float
    min_coverage: float
    active_ports: int
    bandwidth_occupation: float
    int_bytes: int
    traffic_bytes: int
    reports: int
    report_bytes: int
    labeled_packets: int
    labeled_lost: int
    labeling_times: int
    items_reported: int
    items_per_report: list[int]
    labels_per_packet: list[int]
    packets_sent: int
    packets_delivered: int
    loss_rate: float
    queue_drops: int
    link_losses: int
    stale_items: int
    malformed_reports: int
    pro_changes: list[tuple[float, str, int, int]]
    sim_time_s: float
    events: int
    wall_time_s: float
    build_time_s: float
    extra: dict[str, Any] = field(default_factory=dict)
    env: dict[str, Any] = field(default_factory=dict)
    """Where the run happened (``RunEnv.to_dict``: seed and target)."""
    update_gaps_ms: list[float] = field(default_factory=list)
    """Gaps between consecutive accepted updates of a port (``update_gaps_ms``)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def comparable(self) -> dict[str, Any]:
        """Everything but the wall-clock times: equal for equal seeds."""
        d = self.to_dict()
        d.pop("wall_time_s")
        d.pop("build_time_s")
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, allow_nan=True)

    def summary(self) -> dict[str, Any]:
        """The headline numbers."""
        return {
            "mean_coverage": self.mean_coverage, "min_coverage": self.min_coverage,
            "bandwidth_occupation": self.bandwidth_occupation,
            "labeled_packets": self.labeled_packets, "labeling_times": self.labeling_times,
            "packets_sent": self.packets_sent, "loss_rate": self.loss_rate,
            "pro_changes": len(self.pro_changes), "wall_time_s": self.wall_time_s,
        }


def assemble(cfg: Any, truth: GroundTruth, arrivals: list[tuple[float, Any, bool]],
             stats: Any, reported: set[bytes], *, delivered: int, sent: int,
             queue_drops: int, link_losses: int, pro_changes: list[Any], sim_time_s: float,
             events: int, wall_time_s: float, build_time_s: float,
             extra: dict[str, Any] | None = None,
             env: dict[str, Any] | None = None) -> RunMetrics:
    """One run's ``RunMetrics`` from what every target measures the same
    way: the ground truth, the controller's arrival log (times from the start
    of traffic), the collector's statistics and the labeled packets that
    reached the collector. Coverage means are over the windows after the
    warm-up and before the traffic ends."""
    window_ns = truth.window_ns
    w_lo = math.ceil(round(cfg.warmup_s * 1e9) / window_ns)
    w_hi = round(cfg.traffic_duration_s() * 1e9) // window_ns
    accepted = updates_by_window(arrivals, window_ns, accepted_only=True)
    arrived = updates_by_window(arrivals, window_ns, accepted_only=False)
    acc = window_coverage(truth.active, accepted, window_ns, range(w_lo, w_hi))
    arr = window_coverage(truth.active, arrived, window_ns, range(w_lo, w_hi))
    every = range(0, max(truth.active, default=-1) + 1)

    def rows(ws: Any) -> list[tuple[float, float, int, int]]:
        return [(w.t_start_s, w.coverage, w.active_ports, w.updated_ports) for w in ws]

    lost = {pid: n for pid, n in truth.labeled.items() if pid not in reported}
    hist = list(stats.items_per_report)
    return RunMetrics(
        config=cfg.to_dict(),
        windows=rows(window_coverage(truth.active, accepted, window_ns, every)),
        windows_arrived=rows(window_coverage(truth.active, arrived, window_ns, every)),
        mean_coverage=mean(w.coverage for w in acc),
        mean_coverage_arrived=mean(w.coverage for w in arr),
        min_coverage=min((w.coverage for w in acc), default=math.nan),
        active_ports=len(truth.all_active()),
        bandwidth_occupation=truth.int_bytes / truth.user_bytes if truth.user_bytes else 0.0,
        int_bytes=truth.int_bytes,
        traffic_bytes=truth.user_bytes,
        reports=stats.reports,
        report_bytes=stats.report_bytes,
        labeled_packets=stats.reports + len(lost),
        labeled_lost=len(lost),
        labeling_times=stats.items + sum(lost.values()),
        items_reported=stats.items,
        items_per_report=hist,
        labels_per_packet=[max(0, delivered - stats.reports)] + hist[1:],
        packets_sent=sent,
        packets_delivered=delivered,
        loss_rate=1.0 - delivered / sent if sent else 0.0,
        queue_drops=queue_drops,
        link_losses=link_losses,
        stale_items=stats.stale_items,
        malformed_reports=stats.malformed_total,
        pro_changes=pro_changes,
        sim_time_s=sim_time_s,
        events=events,
        wall_time_s=wall_time_s,
        build_time_s=build_time_s,
        extra=extra or {},
        env=env or {},
        update_gaps_ms=update_gaps_ms(arrivals, cfg.warmup_s, cfg.traffic_duration_s()),
    )
