"""Telemetry Report parsing: TR v0.5, v1.0 and v2.0 carrying INT-MD v0.5, v1.0
or v2.0 over TCP/UDP in an IPv4 packet (docs/telemetry_report_format.md).

``parse_report`` takes the UDP payload of one report and returns a
``ParsedReport`` or a ``Rejected`` with a stable reason code; it never raises
on malformed bytes, so one bad report cannot stop a collector.
``parse_batch`` gives the same values as columns, decoded with numpy.

Both paths share one planner. Planning a report records where every value
sits (``fields``, the metadata stack) and every byte test that chose that
layout (``preds``): versions, lengths, bitmaps, ethertype, protocol, the INT
signal. Any report of the same length that passes the same tests has the
same layout, so the batch path plans one report of a group and decodes all
reports that pass its tests at once; the values are the same as
``parse_report``'s because both decode the same plan.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter

import numpy as np

# Reason codes of Rejected: stable strings for counters and logs.
TRUNCATED = "truncated"  # the data ends inside a fixed-size header
BAD_LENGTH = "bad_length"  # a length field disagrees with the header it describes
HOPS_OVERFLOW = "hops_overflow"  # the INT stack announced does not fit in the bytes left
UNKNOWN_VERSION = "unknown_version"  # TR or INT version field not 0.5/1.0/2.0
BAD_HOP_ML = "bad_hop_ml"  # per-hop length disagrees with the instruction bitmap
BAD_INNER = "bad_inner"  # the inner IPv4 header is not IPv4
UNSUPPORTED_REPORT_TYPE = "unsupported_report_type"  # TR v2.0 RepType other than 0, 1
UNSUPPORTED_INNER = "unsupported_inner"  # IPv6, TLV or DS extension inner contents
UNSUPPORTED_INT_TYPE = "unsupported_int_type"  # INT shim type other than MD/hop-by-hop
COALESCED = "coalesced"  # a TR v2.0 packet with several reports: use parse_packet
REASONS = (TRUNCATED, BAD_LENGTH, HOPS_OVERFLOW, UNKNOWN_VERSION, BAD_HOP_ML, BAD_INNER,
           UNSUPPORTED_REPORT_TYPE, UNSUPPORTED_INNER, UNSUPPORTED_INT_TYPE, COALESCED)

# Version fields as they are on the wire.
TR_V05, TR_V10, TR_V20 = 0, 1, 2
INT_V05, INT_V10, INT_V20 = 0, 1, 2

ETHERTYPE_IPV4 = 0x0800
ETHERTYPE_VLAN = 0x8100
IPPROTO_TCP = 6
IPPROTO_UDP = 17
INT_TYPE_MD = 1  # INT-MD (v2.0), hop-by-hop (v0.5, v1.0)
TR20_REPORT_LENGTH_TO_END = 0xFF  # Report Length value meaning "to the end of the payload"

_FULL = {1: 0xFF, 2: 0xFFFF, 4: 0xFFFF_FFFF, 8: 0xFFFF_FFFF_FFFF_FFFF}
_CODE = {1: "B", 2: "H", 4: "I", 8: "Q"}
_BE = {size: np.dtype(f">u{size}") for size in _FULL}
_NATIVE = {size: np.dtype(f"u{size}") for size in _FULL}


@dataclass(frozen=True, slots=True)
class IntSignal:
    """How the INT domain marks packets that carry INT after TCP/UDP: a DSCP
    value under a mask and/or destination ports. Both are per-domain choices
    the report does not carry. The default is the specs' example, DSCP 0x17."""

    dscp: int | None = 0x17
    dscp_mask: int = 0x3F
    ports: frozenset[int] = frozenset()


DEFAULT_SIGNAL = IntSignal()


@dataclass(frozen=True, slots=True)
class Rejected:
    """A report that was not parsed; ``reason`` is one of REASONS."""

    reason: str


@dataclass(frozen=True, slots=True)
class ParsedReport:
    """One telemetry report. Versions are the wire values (0 = v0.5,
    1 = v1.0, 2 = v2.0). ``report_md`` is the reporting node's own metadata
    from the report header, ``hops`` the INT metadata stack by field name,
    newest hop first as on the wire; ``flow`` is (src, dst, proto, sport,
    dport) of the inner packet with IPv4 addresses as integers."""

    report_version: int
    hw_id: int
    seq: int
    node_id: int | None
    ingress_ts: int | None
    dropped: bool
    congested: bool
    tracked: bool
    intermediate: bool
    report_md: Mapping[str, int]
    flow: tuple[int, int, int, int, int] | None
    inner_dscp: int | None
    int_version: int | None
    instructions: int
    hop_ml: int
    int_header: Mapping[str, int]
    hop_count: int
    hops: Mapping[str, tuple[int, ...]]

    def hop(self, i: int) -> dict[str, int]:
        """Hop ``i`` of the stack (0 = the last hop that pushed metadata)."""
        return {name: values[i] for name, values in self.hops.items()}


@dataclass
class ReportStats:
    """Accepted reports and rejected ones by reason, for a collector's log."""

    accepted: int = 0
    rejected: Counter[str] = field(default_factory=Counter)

    def add(self, result: ParsedReport | Rejected) -> None:
        if isinstance(result, Rejected):
            self.rejected[result.reason] += 1
        else:
            self.accepted += 1

    def merge(self, other: ReportStats) -> None:
        self.accepted += other.accepted
        self.rejected.update(other.rejected)

    @property
    def total(self) -> int:
        return self.accepted + sum(self.rejected.values())

    def summary(self) -> str:
        """One log line: totals, then the reasons, most frequent first."""
        rejected = self.total - self.accepted
        line = f"reports {self.total}: accepted {self.accepted}, rejected {rejected}"
        if self.rejected:
            line += " (" + ", ".join(f"{r} {c}" for r, c in self.rejected.most_common()) + ")"
        return line


# --- the planner -----------------------------------------------------------

class _Reject(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason


Pred = tuple[int, int, int, int, tuple[int, ...], bool]
"""(offset, size, shift, mask, values, expected): the word of ``size`` bytes
at ``offset``, shifted and masked, is (or is not) one of ``values``."""
Spec = tuple[int, int, int, int]
"""(offset, size, shift, mask) of a value."""
HopField = tuple[str, int, int, int, int]
"""(name, offset in the hop, size, shift, mask) of a per-hop value."""


class _HopLayout:
    """Per-hop layout of one (INT version, instruction bitmap, hop length),
    with a struct that unpacks one hop's words for the per-report path."""

    __slots__ = ("hop_bytes", "fields", "words", "struct", "picks")

    def __init__(self, hop_bytes: int, fields: list[HopField]) -> None:
        self.hop_bytes = hop_bytes
        self.fields = tuple(fields)
        self.words = tuple(sorted({(rel, size) for _, rel, size, _, _ in fields}))
        fmt, pos = ">", 0
        for rel, size in self.words:
            fmt += "x" * (rel - pos) + _CODE[size]
            pos = rel + size
        self.struct = struct.Struct(fmt + "x" * (hop_bytes - pos))
        index = {word: i for i, word in enumerate(self.words)}
        self.picks = tuple(
            (name, index[(rel, size)], shift, None if shift == 0 and mask == _FULL[size] else mask)
            for name, rel, size, shift, mask in fields)


class _Check:
    """A plan's tests as one masked comparison of the bytes they read (the
    equality tests), plus the others (port sets, failed signal tests)."""

    __slots__ = ("index", "get", "mask", "want", "byte_masks", "byte_wants", "others",
                 "words", "word_masks", "word_wants")

    def __init__(self, preds: Sequence[Pred]) -> None:
        per_byte: dict[int, list[int]] = {}
        others: list[Pred] = []
        for pred in preds:
            offset, size, shift, mask, values, expected = pred
            if not expected or len(values) != 1:
                others.append(pred)
                continue
            bits, want = mask << shift, values[0] << shift
            for i in range(size):
                down = 8 * (size - 1 - i)
                if bits >> down & 0xFF:
                    entry = per_byte.setdefault(offset + i, [0, 0])
                    entry[0] |= bits >> down & 0xFF
                    entry[1] |= want >> down & 0xFF
        self.index = sorted(per_byte)
        masks = bytes(per_byte[i][0] for i in self.index)
        wants = bytes(per_byte[i][1] for i in self.index)
        self.mask, self.want = int.from_bytes(masks, "big"), int.from_bytes(wants, "big")
        self.byte_masks = np.frombuffer(masks, dtype=np.uint8)
        self.byte_wants = np.frombuffer(wants, dtype=np.uint8)
        # the same tests as masked comparisons of the 8-byte words the bytes sit in
        self.words = sorted({i // 8 for i in self.index})
        word_masks = bytearray(8 * len(self.words))
        word_wants = bytearray(8 * len(self.words))
        for i, m, w in zip(self.index, masks, wants):
            at = 8 * self.words.index(i // 8) + i % 8
            word_masks[at], word_wants[at] = m, w
        self.word_masks = np.frombuffer(bytes(word_masks), dtype=np.uint64)
        self.word_wants = np.frombuffer(bytes(word_wants), dtype=np.uint64)
        self.get = itemgetter(*self.index) if len(self.index) > 1 else None
        self.others = tuple(others)

    def passes(self, data: bytes) -> bool:
        if self.get is not None:
            if int.from_bytes(bytes(self.get(data)), "big") & self.mask != self.want:
                return False
        elif self.index and data[self.index[0]] & self.mask != self.want:
            return False
        for offset, size, shift, mask, values, expected in self.others:
            value = (int.from_bytes(data[offset:offset + size], "big") >> shift) & mask
            if (value in values) != expected:
                return False
        return True

    def passes_rows(self, rows: np.ndarray) -> np.ndarray:
        """``passes`` for every row of a (reports, length) byte array."""
        if self.index and rows.shape[1] % 8 == 0 and rows.strides[1] == 1 \
                and rows.strides[0] % 8 == 0 and rows.ctypes.data % 8 == 0:
            picked = rows.view(np.uint64)[:, self.words]
            ok = ((picked & self.word_masks) == self.word_wants).all(axis=1)
        elif self.index:
            picked = rows[:, self.index]
            ok = ((picked & self.byte_masks) == self.byte_wants).all(axis=1)
        else:
            ok = np.ones(len(rows), dtype=bool)
        for offset, size, shift, mask, values, expected in self.others:
            value = _shifted(_column(rows, offset, size), size, shift, mask)
            hit = np.isin(value, values)
            ok &= hit if expected else ~hit
        return ok


class _Decoder:
    """A plan's header values as one struct unpack of the words they sit in."""

    __slots__ = ("struct", "picks", "md", "int_header")

    def __init__(self, fields: Mapping[str, Spec], keys: Sequence[str]) -> None:
        fmt, pos, packed = ">", 0, []
        for offset, size in sorted({(offset, size) for offset, size, _, _ in fields.values()}):
            if offset < pos:  # overlaps the word before: read on its own
                continue
            fmt += "x" * (offset - pos) + _CODE[size]
            pos = offset + size
            packed.append((offset, size))
        index = {word: i for i, word in enumerate(packed)}
        self.struct = struct.Struct(fmt)
        self.picks = tuple(
            (name, index.get((offset, size), -1), offset, size, shift,
             None if shift == 0 and mask == _FULL[size] else mask)
            for name, (offset, size, shift, mask) in fields.items())
        self.md = tuple((key[3:], key) for key in keys if key.startswith("md."))
        self.int_header = tuple((key[4:], key) for key in keys
                                if key.startswith("int.") and key not in _INT_TOP)

    def values(self, data: bytes, vals: dict[str, int | None]) -> None:
        words = self.struct.unpack_from(data)
        for name, word, offset, size, shift, mask in self.picks:
            value = words[word] if word >= 0 else int.from_bytes(data[offset:offset + size], "big")
            vals[name] = value if mask is None else (value >> shift) & mask


class _Plan:
    """Where one report's values sit and the tests that chose that layout."""

    __slots__ = ("data", "preds", "fields", "consts", "stack", "hop", "reason", "_check",
                 "_decoder")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.preds: list[Pred] = []
        self.fields: dict[str, Spec] = {}
        self.consts: dict[str, int | None] = {}
        self.stack = 0
        self.hop: _HopLayout | None = None
        self.reason: str | None = None
        self._check: _Check | None = None
        self._decoder: _Decoder | None = None

    def check(self) -> _Check:
        if self._check is None:
            self._check = _Check(self.preds)
        return self._check

    def decoder(self) -> _Decoder:
        if self._decoder is None:
            self._decoder = _Decoder(self.fields, [*self.consts, *self.fields])
        return self._decoder

    @staticmethod
    def need(offset: int, size: int, end: int) -> None:
        if offset + size > end:
            raise _Reject(TRUNCATED)

    def _read(self, offset: int, size: int, shift: int, mask: int) -> int:
        return (int.from_bytes(self.data[offset:offset + size], "big") >> shift) & mask

    def ctl(self, offset: int, size: int, shift: int = 0, mask: int | None = None) -> int:
        """Read a value the layout depends on, and record it as a test."""
        mask = _FULL[size] if mask is None else mask
        value = self._read(offset, size, shift, mask)
        self.preds.append((offset, size, shift, mask, (value,), True))
        return value

    def test(self, offset: int, size: int, shift: int, mask: int, values: frozenset[int]) -> bool:
        """Whether a value is one of ``values``, recorded as a test."""
        hit = self._read(offset, size, shift, mask) in values
        self.preds.append((offset, size, shift, mask, tuple(sorted(values)), hit))
        return hit

    def field(self, name: str, offset: int, size: int, shift: int = 0,
              mask: int | None = None) -> None:
        self.consts.pop(name, None)
        self.fields[name] = (offset, size, shift, _FULL[size] if mask is None else mask)

    def const(self, name: str, value: int | None) -> None:
        self.fields.pop(name, None)
        self.consts[name] = value

    def fields_at(self, prefix: str, offset: int, fields: Sequence[HopField]) -> None:
        for name, rel, size, shift, mask in fields:
            self.field(prefix + name, offset + rel, size, shift, mask)

    def set_stack(self, offset: int, hops: int, layout: _HopLayout, bitmap: int,
                  hop_ml: int) -> None:
        self.stack, self.hop = offset, layout
        self.const("int.instructions", bitmap)
        self.const("int.hop_ml", hop_ml)
        self.const("int.hop_count", hops)


# Metadata items (INT per-hop metadata and TR report metadata share them):
# (width in bytes, fields as (name, offset in the item, size, shift, mask)).
Item = tuple[int, tuple[HopField, ...]]
_M32 = _FULL[4]
_M64 = _FULL[8]


def _word(name: str) -> Item:
    return 4, ((name, 0, 4, 0, _M32),)


def _split(first: str, second: str) -> Item:
    """An 8-bit id and a 24-bit value in one word (queue, buffer, congestion)."""
    return 4, ((first, 0, 4, 24, 0xFF), (second, 0, 4, 0, 0xFFFFFF))


_RESERVED: Item = (4, ())
_NODE = _word("node_id")
_L1_PORTS: Item = (4, (("l1_ingress_port", 0, 2, 0, 0xFFFF), ("l1_egress_port", 2, 2, 0, 0xFFFF)))
_L2_PORTS: Item = (8, (("l2_ingress_port", 0, 4, 0, _M32), ("l2_egress_port", 4, 4, 0, _M32)))
_LATENCY = _word("hop_latency")
_QUEUE = _split("queue_id", "queue_occupancy")
_BUFFER = _split("buffer_id", "buffer_occupancy")
_TX_UTIL = _word("egress_tx_util")
_DROP: Item = (4, (("drop_queue_id", 0, 4, 24, 0xFF), ("drop_reason", 0, 4, 16, 0xFF)))
_TS32_IN, _TS32_OUT = _word("ingress_ts"), _word("egress_ts")
_TS64_IN: Item = (8, (("ingress_ts", 0, 8, 0, _M64),))
_TS64_OUT: Item = (8, (("egress_ts", 0, 8, 0, _M64),))

# INT instruction bit (0 = MSB) -> item, per INT version; bits absent are
# reserved: 4 bytes (all ones from a hop that cannot fill them), not decoded.
_HOP_ITEMS: dict[int, dict[int, Item]] = {
    INT_V05: {0: _NODE, 1: _L1_PORTS, 2: _LATENCY, 3: _QUEUE, 4: _TS32_IN, 5: _TS32_OUT,
              6: _split("congestion_queue_id", "queue_congestion"), 7: _TX_UTIL},
    INT_V10: {0: _NODE, 1: _L1_PORTS, 2: _LATENCY, 3: _QUEUE, 4: _TS32_IN, 5: _TS32_OUT,
              6: _L2_PORTS, 7: _TX_UTIL, 15: _word("checksum_complement")},
    INT_V20: {0: _NODE, 1: _L1_PORTS, 2: _LATENCY, 3: _QUEUE, 4: _TS64_IN, 5: _TS64_OUT,
              6: _L2_PORTS, 7: _TX_UTIL, 8: _BUFFER, 15: _word("checksum_complement")},
}
# TR v1.0 RepMdBits (6 bits, 0 = MSB) and TR v2.0 RepMdBits (16 bits).
_TR10_MD: dict[int, Item] = {0: _L1_PORTS, 1: _LATENCY, 2: _QUEUE, 3: _TS32_OUT, 4: _DROP,
                             5: _TX_UTIL}
_TR20_MD: dict[int, Item] = {1: _L1_PORTS, 2: _LATENCY, 3: _QUEUE, 4: _TS64_IN, 5: _TS64_OUT,
                             6: _L2_PORTS, 7: _TX_UTIL, 8: _BUFFER, 15: _DROP}


def _set_bits(bitmap: int, width: int) -> list[int]:
    """Bit numbers set in ``bitmap``, bit 0 being the most significant."""
    return [b for b in range(width) if bitmap >> (width - 1 - b) & 1]


def _lay_out(bits: Sequence[int], items: Mapping[int, Item]) -> tuple[int, list[HopField]]:
    """Items of the set bits back to back: total width and fields."""
    fields: list[HopField] = []
    offset = 0
    for bit in bits:
        width, item_fields = items.get(bit, _RESERVED)
        fields += [(name, offset + rel, size, shift, mask)
                   for name, rel, size, shift, mask in item_fields]
        offset += width
    return offset, fields


@lru_cache(maxsize=4096)
def _hop_layout(version: int, bitmap: int, hop_ml: int) -> _HopLayout | str:
    """Per-hop layout, or the reason the bitmap and hop length disagree.
    v0.5 gives Ins Cnt (one 4-byte word per instruction) where later versions
    give Hop ML; v2.0 hops may add domain-specific words, which sit before
    the checksum complement and are skipped."""
    bits = _set_bits(bitmap, 16)
    width, fields = _lay_out(bits, _HOP_ITEMS[version])
    if version == INT_V05:
        return _HopLayout(width, fields) if hop_ml == len(bits) else BAD_HOP_ML
    extra = 4 * hop_ml - width
    if extra < 0 or (extra and version != INT_V20):
        return BAD_HOP_ML
    if extra and 15 in bits:
        fields = [(n, rel + extra if n == "checksum_complement" else rel, s, sh, m)
                  for n, rel, s, sh, m in fields]
    return _HopLayout(4 * hop_ml, fields)


def _plan(data: bytes, signal: IntSignal) -> _Plan:
    plan = _Plan(data)
    try:
        plan.need(0, 1, len(data))
        version = plan.ctl(0, 1, 4, 0xF)
        planner = _TR_PLANNERS.get(version)
        if planner is None:
            raise _Reject(UNKNOWN_VERSION)
        plan.const("hdr.version", version)
        planner(plan, signal)
    except _Reject as reject:
        plan.reason = reject.reason
    plan.data = b""  # plans are kept for reuse; the template's bytes are not needed
    return plan


def _plan_tr05(p: _Plan, signal: IntSignal) -> None:
    """TR v0.5: 12-byte fixed header, then Ethernet, optionally behind a
    drop report header (NProto 1) or a switch-local header (NProto 2)."""
    end = len(p.data)
    p.need(0, 12, end)
    nproto = p.ctl(0, 1, 0, 0xF)
    _report_flags(p, 0, 23)
    p.field("hdr.hw_id", 0, 4, 0, 0x3F)
    p.field("hdr.seq", 4, 4)
    p.field("hdr.ingress_ts", 8, 4)
    offset = 12
    if nproto in (1, 2):
        size = 12 if nproto == 1 else 16
        p.need(offset, size, end)
        p.field("hdr.node_id", offset, 4)
        p.fields_at("md.", offset + 4, _L1_PORTS[1])
        if nproto == 1:
            p.field("md.queue_id", offset + 8, 1)
            p.field("md.drop_reason", offset + 9, 1)
        else:
            p.fields_at("md.", offset + 8, _QUEUE[1])
            p.fields_at("md.", offset + 12, _TS32_OUT[1])
        offset += size
    elif nproto != 0:
        raise _Reject(UNSUPPORTED_INNER)
    _plan_ethernet(p, signal, offset, end)


def _plan_tr10(p: _Plan, signal: IntSignal) -> None:
    """TR v1.0: 16-byte header plus one word per RepMdBits bit, its Length
    field counting both in words; NProt says what the inner packet starts with."""
    end = len(p.data)
    p.need(0, 16, end)
    words = p.ctl(0, 1, 0, 0xF)
    nprot = p.ctl(0, 4, 21, 0x7)
    md_bits = _set_bits(p.ctl(0, 4, 15, 0x3F), 6)
    _report_flags(p, 0, 8)
    p.field("hdr.hw_id", 0, 4, 0, 0x3F)
    p.field("hdr.node_id", 4, 4)
    p.field("hdr.seq", 8, 4)
    p.field("hdr.ingress_ts", 12, 4)
    md_bytes, md_fields = _lay_out(md_bits, _TR10_MD)
    if 4 * words != 16 + md_bytes:
        raise _Reject(BAD_LENGTH)
    p.fields_at("md.", 16, md_fields)
    if nprot == 0:
        _plan_ethernet(p, signal, 4 * words, end)
    elif nprot == 1:
        _plan_ipv4(p, signal, 4 * words, end)
    else:
        raise _Reject(UNSUPPORTED_INNER)


def _plan_tr20(p: _Plan, signal: IntSignal) -> None:
    """TR v2.0: group header, then one individual report whose Report Length
    (words after its first) bounds the report metadata and inner packet."""
    size = len(p.data)
    p.need(0, 12, size)
    p.field("hdr.hw_id", 0, 4, 22, 0x3F)
    p.field("hdr.seq", 0, 4, 0, 0x3FFFFF)
    p.field("hdr.node_id", 4, 4)
    rep_type = p.ctl(8, 1, 4, 0xF)
    in_type = p.ctl(8, 1, 0, 0xF)
    rep_words = p.ctl(9, 1)
    _report_flags(p, 8, 7)
    p.field("hdr.i", 8, 4, 4, 1)
    end = size if rep_words == TR20_REPORT_LENGTH_TO_END else 12 + 4 * rep_words
    if end > size:
        raise _Reject(TRUNCATED)
    if end < size:
        raise _Reject(COALESCED if size - end >= 4 else BAD_LENGTH)
    offset = 12
    if rep_type == 1:
        offset = _plan_tr20_int_md(p, offset, end)
    elif rep_type != 0:
        raise _Reject(UNSUPPORTED_REPORT_TYPE)
    if in_type == 3:
        _plan_ethernet(p, signal, offset, end)
    elif in_type == 4:
        _plan_ipv4(p, signal, offset, end)
    elif in_type != 0:
        raise _Reject(UNSUPPORTED_INNER)


def _plan_tr20_int_md(p: _Plan, offset: int, end: int) -> int:
    """RepType INT: RepMdBits, domain id and DS words, then MD Length words of
    metadata (baseline first, domain-specific rest skipped). Returns the end."""
    md_words = p.ctl(10, 1)
    if offset + 8 + 4 * md_words > end:
        raise _Reject(BAD_LENGTH)
    md_bytes, md_fields = _lay_out(_set_bits(p.ctl(offset, 2), 16), _TR20_MD)
    if md_bytes > 4 * md_words:
        raise _Reject(BAD_LENGTH)
    p.field("md.domain_specific_id", offset + 2, 2)
    p.field("md.ds_md_bits", offset + 4, 2)
    p.field("md.ds_md_status", offset + 6, 2)
    p.fields_at("md.", offset + 8, md_fields)
    return offset + 8 + 4 * md_words


def _report_flags(p: _Plan, offset: int, d_shift: int) -> None:
    """The D, Q, F association bits, adjacent and in that order in every version."""
    for i, name in enumerate(("hdr.d", "hdr.q", "hdr.f")):
        p.field(name, offset, 4, d_shift - i, 1)


def _plan_ethernet(p: _Plan, signal: IntSignal, offset: int, end: int) -> None:
    p.need(offset, 14, end)
    ethertype = p.ctl(offset + 12, 2)
    if ethertype == ETHERTYPE_VLAN:
        offset += 4
        p.need(offset, 14, end)
        ethertype = p.ctl(offset + 12, 2)
    if ethertype != ETHERTYPE_IPV4:
        raise _Reject(UNSUPPORTED_INNER)
    _plan_ipv4(p, signal, offset + 14, end)


def _plan_ipv4(p: _Plan, signal: IntSignal, offset: int, end: int) -> None:
    """The inner IPv4 packet: flow fields, then INT after TCP/UDP when the
    DSCP or the destination port says it is there."""
    p.need(offset, 20, end)
    if p.ctl(offset, 1, 4, 0xF) != 4:
        raise _Reject(BAD_INNER)
    ihl = p.ctl(offset, 1, 0, 0xF)
    if ihl < 5:
        raise _Reject(BAD_LENGTH)
    p.need(offset, 4 * ihl, end)
    proto = p.ctl(offset + 9, 1)
    p.const("flow.proto", proto)
    p.field("flow.dscp", offset + 1, 1, 2, 0x3F)
    p.field("flow.src", offset + 12, 4)
    p.field("flow.dst", offset + 16, 4)
    l4 = offset + 4 * ihl
    if proto == IPPROTO_UDP:
        p.need(l4, 8, end)
        int_at = l4 + 8
    elif proto == IPPROTO_TCP:
        p.need(l4, 20, end)
        data_offset = p.ctl(l4 + 12, 1, 4, 0xF)
        if data_offset < 5:
            raise _Reject(BAD_LENGTH)
        p.need(l4, 4 * data_offset, end)
        int_at = l4 + 4 * data_offset
    else:
        p.const("flow.sport", 0)
        p.const("flow.dport", 0)
        return
    p.field("flow.sport", l4, 2)
    p.field("flow.dport", l4 + 2, 2)
    by_dscp = signal.dscp is not None and p.test(
        offset + 1, 1, 2, signal.dscp_mask, frozenset({signal.dscp & signal.dscp_mask}))
    by_port = bool(signal.ports) and p.test(l4 + 2, 2, 0, 0xFFFF, signal.ports)
    if by_dscp or by_port:
        _plan_int(p, int_at, end, by_port)


def _plan_int(p: _Plan, offset: int, end: int, by_port: bool) -> None:
    """The shim is 4 bytes in every version; the metadata header's version,
    in its first nibble, says how to read both."""
    p.need(offset, 5, end)
    version = p.ctl(offset + 4, 1, 4, 0xF)
    planner = _INT_PLANNERS.get(version)
    if planner is None:
        raise _Reject(UNKNOWN_VERSION)
    p.const("int.version", version)
    planner(p, offset, end, by_port)


def _plan_int05(p: _Plan, offset: int, end: int, by_port: bool) -> None:
    """INT v0.5: the shim length counts shim, metadata header, stack and the
    4-byte tail that follows the stack; Total Hop Count gives the hops."""
    p.need(offset, 12, end)
    if p.ctl(offset, 1) != INT_TYPE_MD:
        raise _Reject(UNSUPPORTED_INT_TYPE)
    shim_words = p.ctl(offset + 2, 1)
    ins_cnt = p.ctl(offset + 4, 4, 16, 0x1F)
    hops = p.ctl(offset + 4, 4, 0, 0xFF)
    bitmap = p.ctl(offset + 8, 2)
    for name, shift, mask in (("rep", 26, 3), ("c", 25, 1), ("e", 24, 1), ("max_hop_cnt", 8, 0xFF)):
        p.field("int." + name, offset + 4, 4, shift, mask)
    stack_bytes = 4 * shim_words - 16
    if stack_bytes < 0:
        raise _Reject(BAD_LENGTH)
    if offset + 4 * shim_words > end:
        raise _Reject(HOPS_OVERFLOW)
    layout = _checked_layout(INT_V05, bitmap, ins_cnt)
    if hops * layout.hop_bytes > stack_bytes:
        raise _Reject(HOPS_OVERFLOW)
    if hops * layout.hop_bytes < stack_bytes:
        raise _Reject(BAD_LENGTH)
    tail = offset + 12 + stack_bytes
    p.field("int.tail_proto", tail, 1)
    p.field("int.tail_dport", tail + 1, 2)
    p.field("int.tail_dscp", tail + 3, 1)
    if by_port:
        p.field("flow.dport", tail + 1, 2)
    p.set_stack(offset + 12, hops, layout, bitmap, ins_cnt)


def _plan_int10(p: _Plan, offset: int, end: int, by_port: bool) -> None:
    """INT v1.0: the shim length counts shim, metadata header and stack."""
    p.need(offset, 12, end)
    if p.ctl(offset, 1) != INT_TYPE_MD:
        raise _Reject(UNSUPPORTED_INT_TYPE)
    shim_words = p.ctl(offset + 2, 1)
    p.field("int.dscp", offset + 3, 1, 2, 0x3F)
    for name, shift, mask in (("rep", 26, 3), ("c", 25, 1), ("e", 24, 1), ("m", 23, 1)):
        p.field("int." + name, offset + 4, 4, shift, mask)
    _plan_md_stack(p, INT_V10, offset + 4, offset + 12, 4 * shim_words - 12, end)


def _plan_int20(p: _Plan, offset: int, end: int, by_port: bool) -> None:
    """INT v2.0: the shim length leaves the shim out; NPT says whether the
    shim holds the original DSCP (0), UDP port (1) or IP protocol (2)."""
    p.need(offset, 16, end)
    if p.ctl(offset, 1, 4, 0xF) != INT_TYPE_MD:
        raise _Reject(UNSUPPORTED_INT_TYPE)
    npt = p.ctl(offset, 1, 2, 3)
    shim_words = p.ctl(offset + 1, 1)
    p.const("int.npt", npt)
    for name, shift in (("d", 27), ("e", 26), ("m", 25)):
        p.field("int." + name, offset + 4, 4, shift, 1)
    for name, rel in (("domain_id", 10), ("ds_instructions", 12), ("ds_flags", 14)):
        p.field("int." + name, offset + rel, 2)
    proto = 0
    if npt == 0:
        p.field("int.dscp", offset + 3, 1, 2, 0x3F)
    elif npt == 1:
        p.field("int.orig_dport", offset + 2, 2)
        p.field("flow.dport", offset + 2, 2)
    elif npt == 2:
        proto = p.ctl(offset + 3, 1)
        p.const("int.orig_proto", proto)
        p.const("flow.proto", proto)
    else:
        raise _Reject(UNSUPPORTED_INT_TYPE)
    stack_bytes = 4 * shim_words - 12
    _plan_md_stack(p, INT_V20, offset + 4, offset + 16, stack_bytes, end)
    if npt == 2:
        _plan_original_ports(p, proto, offset + 16 + stack_bytes, end)


def _plan_original_ports(p: _Plan, proto: int, l4: int, end: int) -> None:
    """NPT 2: INT came with its own UDP header; the flow's ports are in the
    original L4 header after the stack, when the report kept it."""
    if proto in (IPPROTO_TCP, IPPROTO_UDP) and l4 + 4 <= end:
        p.field("flow.sport", l4, 2)
        p.field("flow.dport", l4 + 2, 2)
    else:
        p.const("flow.sport", 0)
        p.const("flow.dport", 0)


def _plan_md_stack(p: _Plan, version: int, md: int, stack: int, stack_bytes: int,
                   end: int) -> None:
    """v1.0/v2.0 metadata header word (Hop ML, Remaining Hop Count) and the
    stack: a whole number of hops of Hop ML words each."""
    hop_ml = p.ctl(md, 4, 8, 0x1F)
    bitmap = p.ctl(md + 4, 2)
    p.field("int.remaining_hop_cnt", md, 4, 0, 0xFF)
    if stack_bytes < 0:
        raise _Reject(BAD_LENGTH)
    if stack + stack_bytes > end:
        raise _Reject(HOPS_OVERFLOW)
    layout = _checked_layout(version, bitmap, hop_ml)
    if layout.hop_bytes == 0:
        if stack_bytes:
            raise _Reject(BAD_LENGTH)
        hops = 0
    else:
        hops, rest = divmod(stack_bytes, layout.hop_bytes)
        if rest:
            raise _Reject(BAD_LENGTH)
    p.set_stack(stack, hops, layout, bitmap, hop_ml)


def _checked_layout(version: int, bitmap: int, hop_ml: int) -> _HopLayout:
    layout = _hop_layout(version, bitmap, hop_ml)
    if isinstance(layout, str):
        raise _Reject(layout)
    return layout


_TR_PLANNERS: dict[int, Callable[[_Plan, IntSignal], None]] = {
    TR_V05: _plan_tr05, TR_V10: _plan_tr10, TR_V20: _plan_tr20}
_INT_PLANNERS: dict[int, Callable[[_Plan, int, int, bool], None]] = {
    INT_V05: _plan_int05, INT_V10: _plan_int10, INT_V20: _plan_int20}


# --- one report ------------------------------------------------------------

_INT_TOP = frozenset({"int.version", "int.instructions", "int.hop_ml", "int.hop_count"})


def _make_report(vals: dict[str, int | None], hops: dict[str, tuple[int, ...]],
                 decoder: _Decoder) -> ParsedReport:
    """A ParsedReport from a plan's constants and decoded values."""
    flow = None
    if "flow.src" in vals:
        flow = (vals["flow.src"], vals["flow.dst"], vals["flow.proto"], vals["flow.sport"],
                vals["flow.dport"])
    get = vals.get
    return ParsedReport(
        report_version=vals["hdr.version"], hw_id=vals["hdr.hw_id"], seq=vals["hdr.seq"],
        node_id=get("hdr.node_id"), ingress_ts=get("hdr.ingress_ts"),
        dropped=bool(vals["hdr.d"]), congested=bool(vals["hdr.q"]), tracked=bool(vals["hdr.f"]),
        intermediate=bool(get("hdr.i", 0)),
        report_md={short: vals[key] for short, key in decoder.md},  # type: ignore[misc]
        flow=flow,  # type: ignore[arg-type]
        inner_dscp=get("flow.dscp"), int_version=get("int.version"),
        instructions=get("int.instructions") or 0, hop_ml=get("int.hop_ml") or 0,
        int_header={short: vals[key] for short, key in decoder.int_header},  # type: ignore[misc]
        hop_count=get("int.hop_count") or 0, hops=hops)


def _decode(plan: _Plan, data: bytes) -> ParsedReport:
    decoder = plan.decoder()
    vals = dict(plan.consts)
    decoder.values(data, vals)
    hops: dict[str, tuple[int, ...]] = {}
    layout = plan.hop
    if layout is not None:
        count = vals["int.hop_count"] or 0
        columns: list[tuple[int, ...]] = []
        if count and layout.hop_bytes:
            stack = memoryview(data)[plan.stack:plan.stack + count * layout.hop_bytes]
            columns = list(zip(*layout.struct.iter_unpack(stack)))
        for name, word, shift, mask in layout.picks:
            column = columns[word] if columns else ()
            hops[name] = column if mask is None else tuple((x >> shift) & mask for x in column)
    return _make_report(vals, hops, decoder)


_PLANS: dict[tuple[int, IntSignal], list[_Plan]] = {}
_PLANS_PER_KEY = 4
_PLAN_KEYS = 4096


def _known_plan(data: bytes, signal: IntSignal) -> _Plan:
    """A recent plan whose tests ``data`` passes (it is then ``data``'s own
    plan: same length, same tested bytes), else a new one, remembered."""
    key = (len(data), signal)
    plans = _PLANS.get(key)
    if plans is None:
        if len(_PLANS) >= _PLAN_KEYS:
            _PLANS.clear()
        plans = _PLANS[key] = []
    for plan in plans:
        if plan.check().passes(data):
            return plan
    plan = _plan(data, signal)
    plans.insert(0, plan)
    del plans[_PLANS_PER_KEY:]
    return plan


def parse_report(data: bytes, signal: IntSignal = DEFAULT_SIGNAL) -> ParsedReport | Rejected:
    """Parse the UDP payload of one telemetry report. Never raises on
    malformed bytes: they give a Rejected with one of REASONS."""
    plan = _known_plan(data, signal)
    if plan.reason is not None:
        return Rejected(plan.reason)
    return _decode(plan, data)


def parse_packet(data: bytes, signal: IntSignal = DEFAULT_SIGNAL) -> list[ParsedReport | Rejected]:
    """Every report of one UDP payload: TR v2.0 may coalesce several
    individual reports behind one group header; each is parsed with it."""
    if len(data) < 12 or data[0] >> 4 != TR_V20:
        return [parse_report(data, signal)]
    results: list[ParsedReport | Rejected] = []
    offset, size = 8, len(data)
    while offset < size:
        if offset + 4 > size:
            results.append(Rejected(BAD_LENGTH))
            break
        words = data[offset + 1]
        end = size if words == TR20_REPORT_LENGTH_TO_END else offset + 4 + 4 * words
        if end > size:
            results.append(Rejected(TRUNCATED))
            break
        results.append(parse_report(bytes(data[:8]) + bytes(data[offset:end]), signal))
        offset = end
    return results


# --- batches ---------------------------------------------------------------

_TEMPLATES_PER_LENGTH = 16
"""Layouts tried by template per report length before the rest of that
length is planned report by report (then grouped by plan); bounds the
matching work on batches where nearly every report differs."""
_CHUNK_BYTES = 1 << 21
"""Reports decoded together: a chunk stays in cache while its words are read."""


@dataclass(slots=True, eq=False)
class ReportGroup:
    """Accepted reports of one layout. ``consts`` holds what the layout
    fixes (versions, bitmap, hop count, ...), ``columns`` one array per other
    value, ``hops`` one (reports, hop_count) array per metadata field, under
    the names ``ParsedReport`` uses (prefixed hdr., md., flow., int.)."""

    index: np.ndarray
    consts: dict[str, int | None]
    columns: dict[str, np.ndarray]
    hops: dict[str, np.ndarray]
    _decoder: _Decoder

    def __len__(self) -> int:
        return len(self.index)

    def report(self, row: int) -> ParsedReport:
        """Row ``row`` as a ParsedReport (for checks and slow consumers)."""
        vals = dict(self.consts)
        for name, column in self.columns.items():
            vals[name] = int(column[row])
        hops = {name: tuple(int(x) for x in values[row]) for name, values in self.hops.items()}
        return _make_report(vals, hops, self._decoder)


@dataclass(eq=False)
class BatchResult:
    """``parse_batch``'s answer: accepted reports in groups, rejected ones by
    position, counts; ``result(i)`` is the answer for report ``i``."""

    size: int
    groups: list[ReportGroup] = field(default_factory=list)
    rejected: dict[int, Rejected] = field(default_factory=dict)
    stats: ReportStats = field(default_factory=ReportStats)
    only: frozenset[str] | None = None  # the values decoded; None: all
    _where: np.ndarray | None = None

    def result(self, i: int) -> ParsedReport | Rejected:
        if i in self.rejected:
            return self.rejected[i]
        if self._where is None:
            where = np.full((self.size, 2), -1, dtype=np.int64)
            for g, group in enumerate(self.groups):
                where[group.index, 0] = g
                where[group.index, 1] = np.arange(len(group))
            self._where = where
        g, row = self._where[i]
        return self.groups[int(g)].report(int(row))

    def _add(self, plan: _Plan, rows: np.ndarray, index: np.ndarray) -> None:
        if plan.reason is not None:
            rejected = Rejected(plan.reason)
            for i in index.tolist():
                self.rejected[i] = rejected
            self.stats.rejected[plan.reason] += len(index)
        else:
            self.groups.append(_decode_rows(plan, rows, index, self.only))
            self.stats.accepted += len(index)


def _column(rows: np.ndarray, offset: int, size: int) -> np.ndarray:
    """The big-endian word at ``offset`` of every row, in native order."""
    if size == 1:
        return rows[:, offset]
    return rows[:, offset:offset + size].view(_BE[size])[:, 0].astype(_NATIVE[size])


def _shifted(word: np.ndarray, size: int, shift: int, mask: int) -> np.ndarray:
    return word if shift == 0 and mask == _FULL[size] else (word >> shift) & mask


def _store(dest: np.ndarray, value: np.ndarray, shift: int, mask: int) -> None:
    """``dest[...] = (value >> shift) & mask`` without temporaries."""
    if shift:
        np.right_shift(value, shift, out=dest)
    else:
        np.copyto(dest, value)
    if mask != _FULL[dest.itemsize]:
        np.bitwise_and(dest, mask, out=dest)


def _hop_words(layout: _HopLayout) -> list[tuple[str, int, bool, int, int]]:
    """Per-hop fields as (name, 32-bit word index, 64-bit?, shift, mask) in
    the hop's 32-bit words: every INT item is whole words, so a hop can be
    byte-swapped as words at once and its fields taken from them."""
    out = []
    for name, rel, size, shift, mask in layout.fields:
        if size == 8:
            out.append((name, rel // 4, True, shift, mask))
        else:
            out.append((name, rel // 4, False, shift + 8 * (4 - rel % 4 - size), mask))
    return out


def _decode_rows(plan: _Plan, rows: np.ndarray, index: np.ndarray,
                 only: frozenset[str] | None = None) -> ReportGroup:
    """Decode reports of one layout, a cache-sized chunk at a time: header
    words one by one, the stack as one block of 32-bit words. With ``only``,
    the columns and per-hop fields not named there are left out."""
    size, length = rows.shape
    layout, count = plan.hop, plan.consts.get("int.hop_count") or 0
    hop_words = _hop_words(layout) if layout is not None else []
    stack_end = plan.stack + count * (layout.hop_bytes if layout is not None else 0)
    fields = plan.fields
    if only is not None:
        fields = {name: spec for name, spec in fields.items() if name in only}
        hop_words = [word for word in hop_words if word[0] in only]
    columns = {name: np.empty(size, _NATIVE[spec[1]]) for name, spec in fields.items()}
    hops = {name: np.empty((size, count if stack_end > plan.stack else 0),
                           np.uint64 if wide else np.uint32)
            for name, _, wide, _, _ in hop_words}
    step = max(1, _CHUNK_BYTES // length)
    for start in range(0, size, step):
        part = rows[start:start + step]
        words: dict[tuple[int, int], np.ndarray] = {}
        for name, (offset, width, shift, mask) in fields.items():
            word = words.get((offset, width))
            if word is None:
                word = words[(offset, width)] = _column(part, offset, width)
            _store(columns[name][start:start + step], word, shift, mask)
        if stack_end > plan.stack and hop_words:
            block = part[:, plan.stack:stack_end].view(_BE[4]).astype(np.uint32)
            block = block.reshape(len(part), count, -1)
            for name, word_index, wide, shift, mask in hop_words:
                dest = hops[name][start:start + step]
                if wide:
                    np.copyto(dest, block[:, :, word_index])
                    np.left_shift(dest, 32, out=dest)
                    np.bitwise_or(dest, block[:, :, word_index + 1], out=dest)
                    if shift or mask != _FULL[8]:
                        _store(dest, dest, shift, mask)
                else:
                    _store(dest, block[:, :, word_index], shift, mask)
    return ReportGroup(index, dict(plan.consts), columns, hops, plan.decoder())


def _parse_rows(rows: np.ndarray, index: np.ndarray, signal: IntSignal,
                result: BatchResult) -> None:
    """Reports of one length: plan the first unmatched one, take every
    report that passes its tests, repeat; then the leftovers one by one."""
    pending = np.arange(len(rows))
    for _ in range(_TEMPLATES_PER_LENGTH):
        if not pending.size:
            return
        candidates = rows if pending.size == len(rows) else rows[pending]
        plan = _known_plan(candidates[0].tobytes(), signal)  # batches of one stream share plans
        ok = plan.check().passes_rows(candidates)
        if ok.all():
            result._add(plan, candidates, index[pending])
            return
        result._add(plan, candidates[ok], index[pending[ok]])
        pending = pending[~ok]
    plans: dict[tuple[Pred, ...], tuple[_Plan, list[int]]] = {}
    for pos in pending.tolist():
        plan = _plan(rows[pos].tobytes(), signal)
        plans.setdefault(tuple(plan.preds), (plan, []))[1].append(pos)
    for plan, positions in plans.values():
        result._add(plan, rows[positions], index[positions])


def _as_rows(reports: Sequence[bytes], length: int) -> np.ndarray:
    """Equal-length reports as one (reports, length) uint8 array. numpy's
    copy into a fixed-width bytes array costs about half of bytes.join on
    large batches; it gives a 2-D array of strings instead when the items are
    not bytes (bytearray, memoryview), and then join is used."""
    if length:
        try:
            strings = np.array(reports, dtype=f"S{length}")
        except (TypeError, ValueError):
            strings = None
        if strings is not None and strings.ndim == 1:
            return strings.view(np.uint8).reshape(len(reports), length)
    return np.frombuffer(b"".join(reports), dtype=np.uint8).reshape(len(reports), length)


def parse_batch(reports: Sequence[bytes], signal: IntSignal = DEFAULT_SIGNAL,
                only: frozenset[str] | None = None) -> BatchResult:
    """Parse many report payloads at once, for replay and offline analysis.
    Reports are grouped by length, then by layout, and each group is decoded
    with numpy; ``result(i)`` equals ``parse_report(reports[i])``. A TR v2.0
    packet with several individual reports is rejected as COALESCED, as
    parse_report does. ``only`` names the columns and per-hop fields to
    decode (the rest are left out, and ``result(i)`` needs them all)."""
    size = len(reports)
    if not size:
        return BatchResult(0, only=only)
    lengths = np.fromiter(map(len, reports), dtype=np.int64, count=size)
    first, last = int(lengths.min()), int(lengths.max())
    if first == last:
        return parse_rows(_as_rows(reports, first), signal, only)
    result = BatchResult(size, only=only)
    order = np.argsort(lengths, kind="stable")
    bounds = np.flatnonzero(np.diff(lengths[order])) + 1
    for index in np.split(order, bounds):
        group = [reports[i] for i in index.tolist()]
        _parse_rows(_as_rows(group, len(group[0])), index, signal, result)
    return result


def parse_rows(rows: np.ndarray, signal: IntSignal = DEFAULT_SIGNAL,
               only: frozenset[str] | None = None) -> BatchResult:
    """``parse_batch`` for equal-length reports already in a (reports,
    length) uint8 array, such as a strided view into a capture file's
    buffer: the reports are read where they are, not copied."""
    if rows.ndim != 2 or rows.dtype != np.uint8:
        raise ValueError(f"want a 2-D uint8 array, not {rows.ndim}-D {rows.dtype}")
    if rows.shape[1] and rows.strides[1] != 1:
        rows = np.ascontiguousarray(rows)
    result = BatchResult(len(rows), only=only)
    if len(rows):
        _parse_rows(rows, np.arange(len(rows)), signal, result)
    return result
