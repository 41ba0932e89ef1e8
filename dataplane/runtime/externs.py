"""State and algorithms of the v1model externs, as BMv2 ``simple_switch`` runs them.

Every rule here follows BMv2 (``src/bm_sim/calculations.cpp``, ``meters.cpp``,
``counters.h``, ``targets/simple_switch/primitives.cpp``) so the engine's output
matches what p4c's STF tests expect bit for bit. The per-packet entry points
(``count``, ``read``/``write``, ``execute``, ``HASH_ALGORITHMS``) take flat ints
and allocate nothing large.
"""

from __future__ import annotations

import binascii
import random as _random
from collections.abc import Callable, Sequence
from struct import unpack_from

import cython

from common.checksum import internet_checksum
from common.errors import P4UnsupportedError, RuntimeConfigError
from dataplane.contract import CRC_PARAMS

MASK64 = (1 << 64) - 1

# V1Model meter colours (v1model.p4: V1MODEL_METER_COLOR_*).
GREEN = 0
YELLOW = 1
RED = 2


# ---------------------------------------------------------------------------
# Calculation input
# ---------------------------------------------------------------------------


def pack_bits(fields: Sequence[tuple[int, int]]) -> bytes:
    """Concatenate ``(value, bitwidth)`` pairs MSB first, as BMv2's ``BufBuilder``
    deparses a field list: each field follows the previous one bit by bit, and
    the buffer is rounded up to whole bytes with zero bits at the end.

    Values are taken modulo ``2**bitwidth`` (a negative ``int<W>`` becomes its
    two's complement). Fields of invalid headers must be left out by the caller:
    BMv2 skips them.
    """
    acc = 0
    total = 0
    for value, width in fields:
        acc = (acc << width) | (value & ((1 << width) - 1))
        total += width
    pad = -total & 7
    return (acc << pad).to_bytes((total + pad) >> 3, "big")


# ---------------------------------------------------------------------------
# CRCs
# ---------------------------------------------------------------------------


def _reflect(value: int, nbits: int) -> int:
    out = 0
    for _ in range(nbits):
        out = (out << 1) | (value & 1)
        value >>= 1
    return out


def make_crc(
    width: int, poly: int, init: int, xor_out: int, refin: bool, refout: bool
) -> Callable[[bytes], int]:
    """A table-driven CRC with BMv2 ``crc_custom`` parameters (Rocksoft model).

    BMv2's defaults: crc16_custom = (0x8005, 0, 0, refin, refout) and
    crc32_custom = (0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, refin, refout).
    """
    if not 8 <= width <= 64:
        raise ValueError("CRC width must be 8 to 64 bits")
    mask = (1 << width) - 1
    top = 1 << (width - 1)
    table = []
    for dividend in range(256):
        rem = dividend << (width - 8)
        for _ in range(8):
            rem = ((rem << 1) ^ poly) if rem & top else (rem << 1)
        table.append(rem & mask)
    if refin:
        # Reflected register form: equivalent to reflecting every input byte
        # and shifting MSB first, with the register held reflected.
        rtable = [_reflect(table[_reflect(i, 8)], width) for i in range(256)]
        rinit = _reflect(init, width)

        # On the compiled fast path the register is a machine word (width is
        # at most 64); as Python, these declarations do nothing.
        @cython.locals(rem=cython.ulonglong, byte=cython.ulonglong)
        def crc_reflected(data: bytes) -> int:
            rem = rinit
            for byte in data:
                rem = (rem >> 8) ^ rtable[(rem ^ byte) & 0xFF]
            if not refout:
                rem = _reflect(rem, width)
            return rem ^ xor_out

        return crc_reflected

    shift = width - 8

    @cython.locals(rem=cython.ulonglong, byte=cython.ulonglong)
    def crc_normal(data: bytes) -> int:
        rem = init
        for byte in data:
            rem = table[((rem >> shift) ^ byte) & 0xFF] ^ ((rem << 8) & mask)
        if refout:
            rem = _reflect(rem, width)
        return rem ^ xor_out

    return crc_normal


def crc32(data: bytes) -> int:
    """BMv2 ``crc32`` (``CRC_PARAMS``); identical to zlib's, so use the C
    implementation."""
    return binascii.crc32(data)


crc16 = make_crc(*CRC_PARAMS["crc16"])
crc16.__doc__ = "BMv2 ``crc16``: CRC-16/ARC (``CRC_PARAMS``)."


# ---------------------------------------------------------------------------
# Checksum-like hashes
# ---------------------------------------------------------------------------


csum16 = internet_checksum
"""BMv2 ``csum16`` is the Internet checksum (RFC 1071) exactly: big-endian
16-bit words, an odd trailing byte padded with a zero byte, 0xFFFF for
all-zero input; the engine uses intbed's one implementation of it."""


def xor16(data: bytes) -> int:
    """BMv2 ``xor16``: XOR of big-endian 16-bit words, the tail byte in the
    high half of a zero-padded word."""
    if len(data) & 1:
        data += b"\x00"
    acc = 0
    for word in unpack_from(f">{len(data) >> 1}H", data):
        acc ^= word
    return acc


def identity(data: bytes) -> int:
    """BMv2 ``identity``: the first min(8, len) bytes as a big-endian number;
    bytes beyond the eighth are ignored (the result is a uint64)."""
    return int.from_bytes(data[:8], "big")


def _no_random_hash(data: bytes) -> int:
    raise P4UnsupportedError(
        "HashAlgorithm.random is not supported: BMv2 simple_switch has no hash "
        "named 'random' and refuses to load such a program"
    )


HASH_ALGORITHMS: dict[str, Callable[[bytes], int]] = {
    "crc32": crc32,
    "crc32_custom": crc32,  # default config equals crc32 (reconfigurable only over Thrift)
    "crc16": crc16,
    "crc16_custom": crc16,  # default config equals crc16
    "random": _no_random_hash,
    "identity": identity,
    "csum16": csum16,
    "xor16": xor16,
}
"""v1model ``HashAlgorithm`` member name -> BMv2 calculation over the packed bytes."""


def compute_hash(
    algo: str, fields: Sequence[tuple[int, int]], base: int, max_: int, out_width: int
) -> int:
    """v1model ``hash(result, algo, base, data, max)`` as BMv2's
    ``modify_field_with_hash_based_offset`` does it: ``base + h % max`` in
    uint64 arithmetic (``max == 0`` is treated as 1, so the result is ``base``),
    then truncated to the width of ``result``."""
    return hash_bytes(algo, pack_bits(fields), base, max_, out_width)


def hash_bytes(algo: str, data: bytes, base: int, max_: int, out_width: int) -> int:
    """``compute_hash`` of fields packed already (``pack_bits``' bytes)."""
    h = HASH_ALGORITHMS[algo](data)
    size = max_ & MASK64 or 1
    return ((h % size + (base & MASK64)) & MASK64) & ((1 << out_width) - 1)


def checksum_value(algo: str, fields: Sequence[tuple[int, int]], payload: bytes = b"") -> int:
    """The full output of ``algo`` over the packed fields followed by
    ``payload`` (the ``_with_payload`` variants append the packet's unparsed
    bytes after the byte-padded field list, as BMv2 ``BufBuilder`` does)."""
    return HASH_ALGORITHMS[algo](pack_bits(fields) + payload)


def verify_checksum(
    algo: str, fields: Sequence[tuple[int, int]], expected: int, payload: bytes = b""
) -> bool:
    """BMv2 ``CalcBasedChecksum::verify_``: the untruncated calculation output
    must equal the checksum field's value."""
    return checksum_value(algo, fields, payload) == expected


def update_checksum(
    algo: str, fields: Sequence[tuple[int, int]], width: int, payload: bytes = b""
) -> int:
    """BMv2 ``CalcBasedChecksum::update_``: the calculation output written into
    a ``bit<width>`` field (truncated to the field)."""
    return checksum_value(algo, fields, payload) & ((1 << width) - 1)


# ---------------------------------------------------------------------------
# Counters
# ---------------------------------------------------------------------------


class CounterArray:
    """``counter``/``direct_counter`` cells. BMv2 always keeps both packets and
    bytes whatever the declared unit; ``unit`` only says what P4Runtime reports."""

    __slots__ = ("size", "unit", "packets", "bytes")

    def __init__(self, size: int, unit: str = "BOTH") -> None:
        self.size = size
        self.unit = unit
        self.packets = [0] * size
        self.bytes = [0] * size

    def count(self, index: int, nbytes: int) -> None:
        """Per packet: ``nbytes`` is the packet's ingress length (BMv2
        ``get_ingress_length``). An index past the end changes nothing."""
        if index < self.size:
            self.packets[index] += 1
            self.bytes[index] += nbytes

    def _check(self, index: int) -> None:
        if not 0 <= index < self.size:
            raise RuntimeConfigError(f"counter index {index} out of range (size {self.size})")

    def read(self, index: int) -> tuple[int, int]:
        """``(packets, bytes)`` of one cell."""
        self._check(index)
        return self.packets[index], self.bytes[index]

    def write(self, index: int, packets: int, nbytes: int) -> None:
        self._check(index)
        self.packets[index] = packets
        self.bytes[index] = nbytes

    def reset(self, index: int | None = None) -> None:
        """Zero one cell, or all of them."""
        if index is None:
            self.packets[:] = [0] * self.size
            self.bytes[:] = [0] * self.size
        else:
            self.write(index, 0, 0)


# ---------------------------------------------------------------------------
# Registers
# ---------------------------------------------------------------------------


class RegisterArray:
    """``register<T>(size)`` cells, stored as unsigned ``width``-bit integers."""

    __slots__ = ("size", "width", "signed", "mask", "_sign", "values")

    def __init__(self, size: int, width: int, signed: bool = False) -> None:
        self.size = size
        self.width = width
        self.signed = signed
        self.mask = (1 << width) - 1
        self._sign = 1 << (width - 1) if signed and width else 0
        self.values = [0] * size

    def read(self, index: int, default: int = 0) -> int:
        """Per packet. Out of range, BMv2 leaves the destination unchanged: the
        engine passes the destination's current value as ``default``. A signed
        register reads back as a negative int when its top bit is set."""
        if index < self.size:
            v = self.values[index]
            if self._sign and v & self._sign:
                return v - (1 << self.width)
            return v
        return default

    def write(self, index: int, value: int) -> None:
        """Per packet: the value wraps to the register width; an index past the
        end writes nothing (BMv2)."""
        if index < self.size:
            self.values[index] = value & self.mask

    def get(self, index: int) -> int:
        """Control-plane read: an out-of-range index is an error."""
        if not 0 <= index < self.size:
            raise RuntimeConfigError(f"register index {index} out of range (size {self.size})")
        return self.read(index)

    def set(self, index: int, value: int) -> None:
        if not 0 <= index < self.size:
            raise RuntimeConfigError(f"register index {index} out of range (size {self.size})")
        self.values[index] = value & self.mask

    def reset(self) -> None:
        self.values[:] = [0] * self.size


# ---------------------------------------------------------------------------
# Meters
# ---------------------------------------------------------------------------


class Meter:
    """One two-rate three-colour marker, BMv2 ``bm::Meter`` with 2 rates.

    Rates are held in units per microsecond (BMv2 ``info_rate``; P4Runtime's
    per-second rates are divided by 1e6 as BMv2's PI layer does). Token counts
    are derived from the time since the switch started (``now_us``), not from
    the previous call, exactly as BMv2 computes them, so the float rounding is
    the same. The peak bucket is tested first: short of peak tokens is RED and
    the committed bucket is left untouched; otherwise the peak tokens are taken
    and short of committed tokens is YELLOW; else GREEN. An unconfigured meter
    is always GREEN.
    """

    __slots__ = (
        "packets",
        "configured",
        "cir",
        "cburst",
        "pir",
        "pburst",
        "c_tokens",
        "c_last",
        "p_tokens",
        "p_last",
    )

    def __init__(self, packets: bool) -> None:
        self.packets = packets
        self.configured = False
        self.cir = self.pir = 0.0
        self.cburst = self.pburst = 0
        self.c_tokens = self.c_last = self.p_tokens = self.p_last = 0

    def set_rates(self, cir: int, cburst: int, pir: int, pburst: int) -> None:
        """Configure from P4Runtime units: rates in packets or bytes per second,
        bursts in packets or bytes. BMv2 refuses CIR > PIR."""
        if cir < 0 or pir < 0 or cburst < 0 or pburst < 0:
            raise RuntimeConfigError("meter rates and burst sizes must not be negative")
        c_rate = cir / 1000000.0
        p_rate = pir / 1000000.0
        if c_rate > p_rate:
            raise RuntimeConfigError(f"meter CIR {cir} is larger than PIR {pir}")
        self.cir, self.cburst, self.pir, self.pburst = c_rate, cburst, p_rate, pburst
        # BMv2 set_rate: buckets start full, token history restarts at 0.
        self.c_tokens, self.p_tokens = cburst, pburst
        self.c_last = self.p_last = 0
        self.configured = True

    def reset_rates(self) -> None:
        self.configured = False

    def rates(self) -> tuple[int, int, int, int] | None:
        """``(cir, cburst, pir, pburst)`` in per-second units, as BMv2's PI layer
        reads them back (truncated), or ``None`` when unconfigured."""
        if not self.configured:
            return None
        return (int(self.cir * 1000000.0), self.cburst, int(self.pir * 1000000.0), self.pburst)

    def execute(self, nbytes: int, now_us: int) -> int:
        """Colour of one packet. ``nbytes`` is its ingress length (ignored by a
        packets meter); ``now_us`` is microseconds since the switch started."""
        if not self.configured:
            return GREEN
        need = 1 if self.packets else nbytes
        t = int(now_us * self.pir)
        tokens = self.p_tokens + t - self.p_last
        self.p_last = t
        if tokens > self.pburst:
            tokens = self.pburst
        if tokens < need:
            self.p_tokens = tokens
            return RED
        self.p_tokens = tokens - need
        t = int(now_us * self.cir)
        tokens = self.c_tokens + t - self.c_last
        self.c_last = t
        if tokens > self.cburst:
            tokens = self.cburst
        if tokens < need:
            self.c_tokens = tokens
            return YELLOW
        self.c_tokens = tokens - need
        return GREEN


class MeterArray:
    """``meter(size, MeterType)`` cells; ``unit`` is ``PACKETS`` or ``BYTES``.

    ``clock`` (microseconds since the switch started) is read when ``execute``
    gets no explicit time.
    """

    __slots__ = ("size", "unit", "clock", "meters")

    def __init__(self, size: int, unit: str, clock: Callable[[], int] | None = None) -> None:
        if unit not in ("PACKETS", "BYTES"):
            raise ValueError(f"meter unit must be PACKETS or BYTES, not {unit!r}")
        self.size = size
        self.unit = unit
        self.clock = clock
        packets = unit == "PACKETS"
        self.meters = [Meter(packets) for _ in range(size)]

    def execute(self, index: int, nbytes: int, now_us: int | None = None) -> int | None:
        """Per packet. Returns the colour, or ``None`` for an index past the end
        (BMv2 then updates nothing and leaves the destination unchanged)."""
        if index >= self.size:
            return None
        if now_us is None:
            now_us = self.clock() if self.clock is not None else 0
        return self.meters[index].execute(nbytes, now_us)

    def _cells(self, index: int | None) -> list[Meter]:
        if index is None:
            return self.meters
        if not 0 <= index < self.size:
            raise RuntimeConfigError(f"meter index {index} out of range (size {self.size})")
        return [self.meters[index]]

    def set_rates(self, index: int | None, rates: Sequence[tuple[int, int]]) -> None:
        """``rates`` = ``[(cir, cburst), (pir, pburst)]`` in P4Runtime units
        (per second); ``index=None`` configures every cell (BMv2
        ``MeterArray::set_rates``)."""
        if len(rates) != 2:
            raise RuntimeConfigError("a v1model meter takes exactly two rates (CIR, PIR)")
        (cir, cburst), (pir, pburst) = rates
        for meter in self._cells(index):
            meter.set_rates(cir, cburst, pir, pburst)

    def reset_rates(self, index: int | None = None) -> None:
        for meter in self._cells(index):
            meter.reset_rates()

    def rates(self, index: int) -> tuple[int, int, int, int] | None:
        return self._cells(index)[0].rates()


# ---------------------------------------------------------------------------
# random()
# ---------------------------------------------------------------------------


class RandomSource:
    """v1model ``random<T>(out T result, in T lo, in T hi)`` with one seeded,
    deterministic stream per switch (BMv2's own generator cannot be seeded)."""

    __slots__ = ("_randrange",)

    def __init__(self, seed: int) -> None:
        self._randrange = _random.Random(seed).randrange

    def random(self, lo: int, hi: int, default: int = 0) -> int:
        """A uniform value in ``[lo, hi]``. BMv2 writes nothing when
        ``lo > hi``: the engine passes the destination's value as ``default``."""
        if lo > hi:
            return default
        if lo == hi:
            return lo
        return self._randrange(lo, hi + 1)
