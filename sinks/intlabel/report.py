"""Telemetry reports of ``p4src/intlabel.p4``, parsed to items.

Layout (docs/intlabel_format.md, "Telemetry report"), all big-endian::

    Ethernet (14) | IPv4 (20) | UDP (8) | report header (8) | n items (32 n)
    | restored IPv4 header (20) | L4 ports (4)

so a report frame is exactly 74 + 32 n bytes. Items come newest first; the
last one (the first hop's) carries the bottom flag. The item count follows
Algorithm 4 (lines 2-6): n = INT_num - MAX_hop for a specific flow
(INT_num > MAX_hop), else INT_num; the header's own count must agree.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from common.errors import IntbedError

REPORT_UDP_PORT = 32766
REPORT_VERSION = 1
REPORT_FLAG_SPECIFIC = 0x1
ITEM_FLAG_BOTTOM = 0x80
ITEM_BYTES = 32
ETHERTYPE_IPV4 = 0x0800
IPPROTO_UDP = 17
# Offsets in the frame: outer Ethernet + IPv4 + UDP, then the report header.
_ETH, _IP, _UDP = 14, 20, 8
REPORT_HDR_OFFSET = _ETH + _IP + _UDP  # 42
ITEMS_OFFSET = REPORT_HDR_OFFSET + 8  # 50
# Fixed part: 50 bytes before the items, restored IPv4 (20) and ports (4) after.
REPORT_FIXED_BYTES = ITEMS_OFFSET + 20 + 4  # 74

# 48-bit timestamps are read as a 16-bit high and a 32-bit low part; the
# flags byte shares a word with enq_qdepth (24 bits), reserved with deq_qdepth.
_ITEM = struct.Struct("!IHHHIHIIII")
_HDR = struct.Struct("!BBBBI")
_U16 = struct.Struct("!H")
_INNER = struct.Struct("!4xH2xBB2xII")  # identification, ttl, protocol, src, dst
_PORTS = struct.Struct("!HH")
_MASK24 = 0xFFFFFF


class ReportError(IntbedError):
    """A frame that is not a well-formed INT-label report; ``kind`` names the
    check that failed (for counting), the message gives the values."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(slots=True)
class IntItem:
    """One label: the state of ``switch_id``'s ``egress_port`` when it
    labeled the packet. Times in the switch's microseconds, depths in packets."""

    switch_id: int
    ingress_port: int
    egress_port: int
    ingress_ts: int
    label_time: int
    hop_latency: int
    enq_qdepth: int
    deq_qdepth: int
    bottom: bool


@dataclass(slots=True)
class Report:
    """A report: the sink, the packet's INT_num, its items (newest first)
    and the restored packet's flow (addresses as 32-bit integers), TTL and
    IPv4 identification."""

    sink_switch: int
    int_num: int
    max_hop: int
    specific: bool
    items: list[IntItem]
    src_ip: int
    dst_ip: int
    protocol: int
    sport: int
    dport: int
    ttl: int
    ip_id: int

    @property
    def flow(self) -> tuple[int, int, int, int, int]:
        return (self.src_ip, self.dst_ip, self.protocol, self.sport, self.dport)


def item_count(int_num: int, max_hop: int) -> int:
    """Algorithm 4, ExtractINT: the number of items behind ``INT_num``."""
    return int_num - max_hop if int_num > max_hop else int_num


def parse_item(frame: bytes, offset: int) -> IntItem:
    (sid, inp, outp, its_hi, its_lo, lt_hi, lt_lo, lat, w_enq, w_deq) = _ITEM.unpack_from(
        frame, offset)
    return IntItem(sid, inp, outp, (its_hi << 32) | its_lo, (lt_hi << 32) | lt_lo, lat,
                   w_enq & _MASK24, w_deq & _MASK24, bool((w_enq >> 24) & ITEM_FLAG_BOTTOM))


def parse_report(frame: bytes, udp_port: int = REPORT_UDP_PORT,
                 max_hop: int | None = None) -> Report:
    """Parse one report frame; ``max_hop`` overrides the header's for
    Algorithm 4's rule. Raises ``ReportError`` on anything malformed."""
    size = len(frame)
    if size < REPORT_FIXED_BYTES:
        raise ReportError("short", f"report of {size} bytes, at least {REPORT_FIXED_BYTES}")
    if frame[12] != 0x08 or frame[13] != 0x00:
        raise ReportError("not-ipv4", f"ethertype 0x{frame[12]:02x}{frame[13]:02x}, not IPv4")
    if frame[_ETH] != 0x45:
        raise ReportError("ipv4-header",
                          f"outer IPv4 version/IHL 0x{frame[_ETH]:02x}, expected 0x45")
    if frame[_ETH + 9] != IPPROTO_UDP:
        raise ReportError("not-udp", f"outer IPv4 protocol {frame[_ETH + 9]}, expected UDP")
    dport = _U16.unpack_from(frame, _ETH + _IP + 2)[0]
    if dport != udp_port:
        raise ReportError("udp-port", f"UDP port {dport}, expected {udp_port}")
    vflags, int_num, count, hdr_max_hop, sink = _HDR.unpack_from(frame, REPORT_HDR_OFFSET)
    if vflags >> 4 != REPORT_VERSION:
        raise ReportError("version", f"report version {vflags >> 4}, expected {REPORT_VERSION}")
    mh = hdr_max_hop if max_hop is None else max_hop
    n = item_count(int_num, mh)
    if n != count:
        raise ReportError("item-count", f"INT_num {int_num} with MAX_hop {mh} gives {n} "
                          f"items, the header says {count}")
    need = REPORT_FIXED_BYTES + ITEM_BYTES * n
    if size < need:
        raise ReportError("truncated", f"report with {n} items is {size} bytes, needs {need}")
    items = [parse_item(frame, ITEMS_OFFSET + ITEM_BYTES * i) for i in range(n)]
    inner = ITEMS_OFFSET + ITEM_BYTES * n
    ip_id, ttl, proto, src, dst = _INNER.unpack_from(frame, inner)
    sport, dp = _PORTS.unpack_from(frame, inner + 20)
    return Report(sink, int_num, mh, bool(vflags & REPORT_FLAG_SPECIFIC), items,
                  src, dst, proto, sport, dp, ttl, ip_id)
