"""GPINT probes on the wire (docs/gpint_format.md): build, encode, parse.

One plain ``Probe`` value stands for all three kinds the DSCP tells apart
(0x17 measurement probe, 0x19 feedback, 0x21 recovery notice); ``encode``
and ``parse_probe`` are struct-based so the monitor's per-packet work stays
cheap. Building refuses what a switch could not carry (``ProbeBuildError``
says what to shorten); parsing refuses anything malformed with a
``ProbeError`` whose ``kind`` the receiver counts, so one bad frame never
stops the monitor.

Frame layout, big-endian::

    Ethernet (14) | IPv4 (20, DSCP = kind, protocol 254) | Req META (2)
    | sr_count (2) | SR entries (3 each) | dlv_count (2) | DLVs (4 each)
    | mea_total (2) | values (4 each)

A feedback stops after Req META. IPv4 ``totalLen`` covers everything after
Ethernet; bytes beyond it are Ethernet padding and are ignored. The IPv4
header has no options and is no fragment; its identification is the
monitor's session number (the switches' loop check keys on it).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from common.checksum import internet_checksum
from common.errors import IntbedError

GPINT_PROTO = 254
ETHERTYPE_IPV4 = 0x0800

KIND_PROBE = 0x17
KIND_FEEDBACK = 0x19
KIND_NOTICE = 0x21
KIND_NAMES = {KIND_PROBE: "probe", KIND_FEEDBACK: "feedback", KIND_NOTICE: "notice"}

REQ_RULE_HITS = 0
REQ_PORT_COUNTERS = 1

# The paper's limits (section V-A) as docs/gpint_format.md fixes them.
MAX_PROBE_BYTES = 2200
MAX_SR = 200
MAX_DLV = 200
MAX_VALUES = 128
MAX_REQUEST_ID = (1 << 15) - 1

ETH_BYTES = 14
IPV4_BYTES = 20
REQ_BYTES = 2
# Ethernet, IPv4, Req META and the three 16-bit counts of an empty probe.
EMPTY_PROBE_BYTES = ETH_BYTES + IPV4_BYTES + REQ_BYTES + 3 * 2  # 42
FEEDBACK_BYTES = ETH_BYTES + IPV4_BYTES + REQ_BYTES  # 36
SR_BYTES = 3
DLV_BYTES = 4
VALUE_BYTES = 4

# The monitor sits where intbed's collector host does (orchestration.network).
MONITOR_MAC = "00:00:00:ff:ff:fe"
MONITOR_IP = "10.255.255.254"

_ETH = struct.Struct("!6s6sH")
_IP = struct.Struct("!BBHHHBBHII")
_U16 = struct.Struct("!H")
_SR = struct.Struct("!BH")
_DLV = struct.Struct("!BBH")
_DF = 0x4000


class ProbeError(IntbedError):
    """A received frame that is not a well-formed GPINT packet. ``kind``
    names the check that failed (the receiver counts by it), the message
    gives the values."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class ProbeBuildError(IntbedError):
    """A probe the data plane could not carry; the message says what to
    shorten or which field is out of range."""


class SrEntry(NamedTuple):
    """One SR entry: where the switch sends the probe next and which of its
    counters it inserts (``mea_start .. mea_start + mea_count - 1``)."""

    next_port: int
    mea_start: int = 0
    mea_count: int = 0


class Dlv(NamedTuple):
    """One device-level entry, appended by the switch that inserted it."""

    switch_id: int
    qdepth: int
    mea_count: int


class SwitchReading(NamedTuple):
    """What one switch put in a probe: its DLV fields and its values."""

    switch_id: int
    qdepth: int
    values: tuple[int, ...]


class Addresses(NamedTuple):
    """The probe's Ethernet and IPv4 addresses as integers, with TTL and
    IPv4 identification (the session, for the switches' loop check).
    Switches route probes by SR entries only."""

    eth_dst: int
    eth_src: int
    ip_src: int
    ip_dst: int
    ttl: int = 64
    ident: int = 0

    @classmethod
    def of(cls, src_mac: str = MONITOR_MAC, dst_mac: str = MONITOR_MAC,
           src_ip: str = MONITOR_IP, dst_ip: str = MONITOR_IP, ttl: int = 64,
           ident: int = 0) -> Addresses:
        """From text addresses (default: from the monitor to itself)."""
        return cls(_mac(dst_mac), _mac(src_mac), _ip(src_ip), _ip(dst_ip), ttl, ident)


def _mac(text: str) -> int:
    return int(text.replace(":", ""), 16)


def _ip(text: str) -> int:
    a, b, c, d = (int(x) for x in text.split("."))
    return (a << 24) | (b << 16) | (c << 8) | d


DEFAULT_ADDRESSES = Addresses.of()


@dataclass(slots=True)
class Probe:
    """A GPINT packet of any kind. A feedback has empty stacks; a notice is
    the stored probe as it left its switch (its own SR entry popped)."""

    kind: int
    request_id: int
    request_type: int = REQ_RULE_HITS
    sr: list[SrEntry] = field(default_factory=list)
    dlv: list[Dlv] = field(default_factory=list)
    values: list[int] = field(default_factory=list)
    addrs: Addresses = DEFAULT_ADDRESSES

    def readings(self) -> list[SwitchReading]:
        """The values grouped per switch, in path order (DLV j = j-th switch)."""
        out: list[SwitchReading] = []
        values = self.values
        at = 0
        for d in self.dlv:
            out.append(SwitchReading(d.switch_id, d.qdepth, tuple(values[at:at + d.mea_count])))
            at += d.mea_count
        return out

    def last_position(self, path_len: int) -> int:
        """Index in the full path of the switch that sent this packet on:
        every switch pops its own entry, so the entries left say how far the
        probe got, whatever switch it started from."""
        return path_len - len(self.sr) - 1

    def first_position(self, path_len: int) -> int:
        """Index in the full path of the switch that inserted DLV 0, if every
        switch since the start measured (a switch that already measured the
        request in this session adds no DLV: match by switch id then, as
        ``recovery.dlv_positions`` does)."""
        return self.last_position(path_len) - len(self.dlv) + 1

    def to_bytes(self) -> bytes:
        return encode(self)


def probe_bytes(hops: int, values: int) -> int:
    """Size of a probe with ``hops`` SR entries and ``values`` values once the
    last switch has filled it in: each hop trades a 3-byte SR entry for a
    4-byte DLV, so a probe is largest when it reaches the monitor."""
    return EMPTY_PROBE_BYTES + DLV_BYTES * hops + VALUE_BYTES * values


def build_probe(request_id: int, hops: Sequence[tuple[int, int, int]], *,
                request_type: int = REQ_RULE_HITS, addrs: Addresses = DEFAULT_ADDRESSES,
                max_bytes: int = MAX_PROBE_BYTES) -> bytes:
    """A measurement probe (0x17) for a path given as ``(next_port,
    mea_start, mea_count)`` per switch, first switch first, with an empty INT
    stack. Refused (``ProbeBuildError``) when the filled-in probe would
    break the 200-entry, 128-value or ``max_bytes`` limit."""
    n = len(hops)
    if n == 0:
        raise ProbeBuildError("a probe needs at least one hop")
    if n > MAX_SR:
        raise ProbeBuildError(f"an INT path of {n} hops is over the {MAX_SR} SR entries a "
                              f"probe carries: split the path")
    total = sum(h[2] for h in hops)
    if total > MAX_VALUES:
        raise ProbeBuildError(f"the path's MEA ranges ask for {total} values, over the "
                              f"{MAX_VALUES} a probe carries: shorten the MEA ranges or "
                              f"split the path")
    size = probe_bytes(n, total)
    if size > max_bytes:
        raise ProbeBuildError(f"the probe would grow to {size} bytes by the end of its path, "
                              f"over the {max_bytes}-byte limit: shorten the path ({n} hops) "
                              f"or its MEA ranges ({total} values)")
    sr = [SrEntry(*h) for h in hops]
    return encode(Probe(KIND_PROBE, request_id, request_type, sr, [], [], addrs))


def encode(p: Probe) -> bytes:
    """The frame for ``p``: totalLen and the IPv4 header checksum computed."""
    kind = p.kind
    if kind not in KIND_NAMES:
        raise ProbeBuildError(f"DSCP 0x{kind:02x} is no GPINT kind "
                              f"(0x17 probe, 0x19 feedback, 0x21 notice)")
    _check("request_id", p.request_id, MAX_REQUEST_ID)
    _check("request_type", p.request_type, 1)
    req = _U16.pack((p.request_id << 1) | p.request_type)
    if kind == KIND_FEEDBACK:
        if p.sr or p.dlv or p.values:
            raise ProbeBuildError("a feedback carries Req META only: no SR or INT stack")
        payload = req
    else:
        payload = _stacks(req, p.sr, p.dlv, p.values)
    a = p.addrs
    total_len = IPV4_BYTES + len(payload)
    if ETH_BYTES + total_len > MAX_PROBE_BYTES:
        raise ProbeBuildError(f"a {ETH_BYTES + total_len}-byte probe is over the "
                              f"{MAX_PROBE_BYTES}-byte limit: shorten its path or MEA ranges")
    ip = bytearray(_IP.pack(0x45, kind << 2, total_len, a.ident, _DF, a.ttl, GPINT_PROTO, 0,
                            a.ip_src, a.ip_dst))
    _U16.pack_into(ip, 10, internet_checksum(bytes(ip)))
    eth = _ETH.pack(a.eth_dst.to_bytes(6, "big"), a.eth_src.to_bytes(6, "big"), ETHERTYPE_IPV4)
    return b"".join((eth, ip, payload))


def _stacks(req: bytes, sr: Sequence[SrEntry], dlv: Sequence[Dlv],
            values: Sequence[int]) -> bytes:
    if len(sr) > MAX_SR:
        raise ProbeBuildError(f"{len(sr)} SR entries, at most {MAX_SR}: split the path")
    if len(dlv) > MAX_DLV:
        raise ProbeBuildError(f"{len(dlv)} DLV entries, at most {MAX_DLV}: split the path")
    if len(values) > MAX_VALUES:
        raise ProbeBuildError(f"{len(values)} values, at most {MAX_VALUES}: shorten the MEA "
                              f"ranges")
    if sum(d.mea_count for d in dlv) != len(values):
        raise ProbeBuildError(f"the DLVs count {sum(d.mea_count for d in dlv)} values, the "
                              f"probe has {len(values)}")
    parts = [req, _U16.pack(len(sr))]
    for port, start, count in sr:
        _check("next_port", port, 0xFF)
        _check("mea_start", start, 0xFF)
        _check("mea_count", count, 0xFF)
        parts.append(_SR.pack(port, (start << 8) | count))
    parts.append(_U16.pack(len(dlv)))
    for sid, qdepth, count in dlv:
        _check("switch_id", sid, 0xFF)
        _check("qdepth", qdepth, 0xFF)
        _check("DLV mea_count", count, 0xFFFF)
        parts.append(_DLV.pack(sid, qdepth, count))
    parts.append(_U16.pack(len(values)))
    try:
        parts.append(struct.pack(f"!{len(values)}I", *values))
    except struct.error as exc:
        raise ProbeBuildError(f"a value does not fit 32 bits: {exc}") from None
    return b"".join(parts)


def _check(name: str, value: int, top: int) -> None:
    if not 0 <= value <= top:
        raise ProbeBuildError(f"{name} {value} does not fit its field (0..{top})")


def parse_probe(frame: bytes) -> Probe:
    """Parse one GPINT frame of any kind; ``ProbeError`` on anything that
    is not one: cut short, not IPv4/GPINT, bad header checksum, unknown
    DSCP, counts that disagree with totalLen or with each other, counts
    over the limits."""
    size = len(frame)
    if size < FEEDBACK_BYTES:
        raise ProbeError("short", f"frame of {size} bytes, a GPINT packet has at least "
                         f"{FEEDBACK_BYTES}")
    eth_dst, eth_src, ethertype = _ETH.unpack_from(frame, 0)
    if ethertype != ETHERTYPE_IPV4:
        raise ProbeError("not-ipv4", f"ethertype 0x{ethertype:04x}, not IPv4")
    (ver_ihl, tos, total_len, ident, frag, ttl, proto, _csum, src,
     dst) = _IP.unpack_from(frame, ETH_BYTES)
    if ver_ihl != 0x45:
        raise ProbeError("ipv4-header", f"IPv4 version/IHL 0x{ver_ihl:02x}; GPINT packets "
                         f"are 0x45 (no options)")
    if frag & ~_DF:
        raise ProbeError("ipv4-fragment", f"IPv4 flags/offset 0x{frag:04x}: a fragment")
    if proto != GPINT_PROTO:
        raise ProbeError("not-gpint", f"IPv4 protocol {proto}, GPINT is {GPINT_PROTO}")
    end = ETH_BYTES + total_len
    if end > size:
        raise ProbeError("short", f"IPv4 totalLen {total_len} needs {end} bytes, the frame "
                         f"has {size}")
    off = ETH_BYTES + IPV4_BYTES
    if off + REQ_BYTES > end:
        raise ProbeError("length", f"IPv4 totalLen {total_len} leaves no room for Req META")
    if internet_checksum(frame[ETH_BYTES:off]) != 0:
        raise ProbeError("ipv4-checksum", f"IPv4 header checksum 0x{_csum:04x} is wrong")
    kind = tos >> 2
    if kind not in KIND_NAMES:
        raise ProbeError("dscp", f"DSCP 0x{kind:02x} is no GPINT kind")
    req = _U16.unpack_from(frame, off)[0]
    off += REQ_BYTES
    addrs = Addresses(int.from_bytes(eth_dst, "big"), int.from_bytes(eth_src, "big"),
                      src, dst, ttl, ident)
    if kind == KIND_FEEDBACK:
        if off != end:
            raise ProbeError("length", f"feedback with {end - off} bytes after Req META "
                             f"(totalLen {total_len}); it carries Req META only")
        return Probe(kind, req >> 1, req & 1, [], [], [], addrs)
    n = _count(frame, off, end, "sr_count", MAX_SR)
    off += 2
    sr_end = off + SR_BYTES * n
    _room(sr_end + 2, end, f"{n} SR entries")
    sr = [SrEntry(port, rng >> 8, rng & 0xFF)
          for port, rng in _SR.iter_unpack(frame[off:sr_end])]
    off = sr_end
    m = _count(frame, off, end, "dlv_count", MAX_DLV)
    off += 2
    dlv_end = off + DLV_BYTES * m
    _room(dlv_end + 2, end, f"{n} SR entries and {m} DLVs")
    dlv = [Dlv(*d) for d in _DLV.iter_unpack(frame[off:dlv_end])]
    off = dlv_end
    v = _count(frame, off, end, "mea_total", MAX_VALUES)
    off += 2
    _room(off + VALUE_BYTES * v, end, f"{n} SR entries, {m} DLVs and {v} values")
    values = list(struct.unpack_from(f"!{v}I", frame, off))
    off += VALUE_BYTES * v
    if off != end:
        raise ProbeError("length", f"{end - off} bytes left after {n} SR entries, {m} DLVs "
                         f"and {v} values (totalLen {total_len})")
    counted = sum(d.mea_count for d in dlv)
    if counted != v:
        raise ProbeError("mea-total", f"the DLVs count {counted} values, mea_total says {v}")
    return Probe(kind, req >> 1, req & 1, sr, dlv, values, addrs)


def _count(frame: bytes, off: int, end: int, name: str, top: int) -> int:
    _room(off + 2, end, name)
    n: int = _U16.unpack_from(frame, off)[0]
    if n > top:
        raise ProbeError("limits", f"{name} {n}, at most {top}")
    return n


def _room(need: int, end: int, what: str) -> None:
    if need > end:
        raise ProbeError("length", f"{what}: the packet needs an IPv4 totalLen of at least "
                         f"{need - ETH_BYTES}, it says {end - ETH_BYTES}")
