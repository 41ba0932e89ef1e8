"""INT packets as the sink receives them (Ethernet, IPv4, UDP or TCP, INT
shim and stack) into a ``PacketBatch``, through the collector's parser.

``sinks.intcollector.reports`` parses telemetry *reports*, whose payload
begins with a Telemetry Report header. A TR v0.5 fixed header of twelve
zero bytes (NProto 0: Ethernet follows) in front of a frame makes the frame
a report the parser reads whole, so the sink reuses its batch path
(``parse_rows``/``parse_batch``) unchanged instead of parsing INT again.
Whatever the parser rejects (a shim length past the end of the frame, a
stack that is not a whole number of hops, ...) is counted by reason and
skipped; nothing here raises on packet bytes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from common.pcap import LINKTYPE_ETHERNET, PcapError, PcapReader
from sinks.flowcache.cache import VALUES, PacketBatch, make_batch
from sinks.flowcache.layout import PARSER_FIELDS
from sinks.intcollector.reports import (
    BatchResult,
    IntSignal,
    ReportGroup,
    parse_batch,
    parse_rows,
)

TR05_PREFIX = bytes(12)
"""TR v0.5 fixed header: Ver 0, NProto 0 (Ethernet), no flags, hw_id, seq
and timestamp 0."""
INT_PORT = 0x1000
"""UDP destination port that marks INT in the paper's deployment (INT_PORT)."""
SINK_SIGNAL = IntSignal(dscp=0x17, dscp_mask=0x3F, ports=frozenset({INT_PORT}))
"""INT is recognised by the specs' DSCP 0x17 or by the INT port."""
NOT_INT = "not_int"
TOO_MANY_HOPS = "too_many_hops"


@dataclass
class IngestStats:
    """Frames taken into batches and frames skipped, by reason (the
    parser's reasons plus NOT_INT and TOO_MANY_HOPS)."""

    accepted: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return self.accepted + sum(self.skipped.values())


def frames_to_batch(frames: Sequence[bytes], ts: np.ndarray, max_hops: int,
                    signal: IntSignal = SINK_SIGNAL,
                    stats: IngestStats | None = None) -> PacketBatch:
    """Parse ``frames`` (arrival times ``ts`` in ns) into a batch in their
    order; frames that are not well-formed INT packets are left out and
    counted in ``stats``."""
    reports = [TR05_PREFIX + bytes(f) for f in frames]
    return _to_batch(parse_batch(reports, signal), np.asarray(ts, np.int64), max_hops, stats)


def rows_to_batch(rows: np.ndarray, ts: np.ndarray, max_hops: int,
                  signal: IntSignal = SINK_SIGNAL, stats: IngestStats | None = None) -> PacketBatch:
    """``frames_to_batch`` for equal-length frames in a (frames, length)
    uint8 array (the one copy made is the prefix's)."""
    reports = np.zeros((rows.shape[0], rows.shape[1] + len(TR05_PREFIX)), np.uint8)
    reports[:, len(TR05_PREFIX):] = rows
    return _to_batch(parse_rows(reports, signal), np.asarray(ts, np.int64), max_hops, stats)


def reports_to_batch(reports: Sequence[bytes], ts: np.ndarray, max_hops: int,
                     signal: IntSignal = SINK_SIGNAL,
                     stats: IngestStats | None = None) -> PacketBatch:
    """Telemetry reports that carry the INT packet (an INT sink's reports,
    e.g. ``p4src/int_md.p4``'s TR v2.0) into a batch, as ``frames_to_batch``
    does for the INT packets themselves."""
    return _to_batch(parse_batch(list(reports), signal), np.asarray(ts, np.int64), max_hops,
                     stats)


def pcap_batches(path: str | Path, max_hops: int, batch: int = 8192,
                 signal: IntSignal = SINK_SIGNAL,
                 stats: IngestStats | None = None) -> Iterator[PacketBatch]:
    """A pcap of Ethernet frames as batches in capture order, stamped with
    the capture times. A file that is not such a pcap is one PcapError line."""
    try:
        stream = open(path, "rb")  # noqa: SIM115 - closed by the with below
    except OSError as exc:
        raise PcapError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with stream:
        reader = PcapReader(stream, str(path))
        if reader.header is not None and reader.header.linktype != LINKTYPE_ETHERNET:
            raise PcapError(f"{path}: link type {reader.header.linktype}, the sink reads "
                            f"Ethernet captures (link type {LINKTYPE_ETHERNET})")
        frames: list[bytes] = []
        times: list[int] = []
        for record in reader:
            frames.append(record.frame)
            times.append(record.t_ns)
            if len(frames) == batch:
                yield frames_to_batch(frames, np.array(times, np.int64), max_hops, signal, stats)
                frames, times = [], []
        if frames:
            yield frames_to_batch(frames, np.array(times, np.int64), max_hops, signal, stats)


def _to_batch(result: BatchResult, ts: np.ndarray, max_hops: int,
              stats: IngestStats | None) -> PacketBatch:
    size = result.size
    key0 = np.zeros(size, np.uint64)
    key1 = np.zeros(size, np.uint64)
    hops = np.zeros(size, np.uint8)
    present = np.zeros(size, np.uint8)
    values = np.zeros((size, max_hops, VALUES), np.uint32)
    keep = np.zeros(size, bool)
    skipped: Counter[str] = Counter(r.reason for r in result.rejected.values())
    for group in result.groups:
        if group.consts.get("int.version") is None or "flow.src" not in group.columns:
            skipped[NOT_INT] += len(group)
            continue
        count = int(group.consts.get("int.hop_count") or 0)
        if count > max_hops:
            skipped[TOO_MANY_HOPS] += len(group)
            continue
        index = group.index
        keep[index] = True
        key0[index] = (_col(group, "flow.src") << np.uint64(32)) | _col(group, "flow.dst")
        key1[index] = ((_col(group, "flow.proto") << np.uint64(32))
                       | (_col(group, "flow.sport") << np.uint64(16)) | _col(group, "flow.dport"))
        hops[index] = count
        bits = 0
        for m, name in enumerate(PARSER_FIELDS):
            column = group.hops.get(name)
            if column is None:
                continue
            bits |= 1 << m
            if count:
                # the wire has the newest hop first; the cache keeps the path's order
                values[index, :count, m] = column[:, ::-1]
        present[index] = bits
    if stats is not None:
        stats.accepted += int(keep.sum())
        stats.skipped.update(skipped)
    batch = make_batch(key0, key1, ts, hops, present, values)
    return batch if keep.all() else batch.take(np.flatnonzero(keep))


def _col(group: ReportGroup, name: str) -> np.ndarray:
    """A flow field as uint64 per report, whether the layout fixed it
    (a constant) or decoded it (a column)."""
    if name in group.columns:
        return group.columns[name].astype(np.uint64)
    return np.full(len(group), group.consts.get(name) or 0, np.uint64)
