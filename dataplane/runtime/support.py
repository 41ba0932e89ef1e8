"""Names the generated pipeline code uses at run time.

Generated code is exec'd with these in its globals, so everything here is
on the per-packet path: keep it small and allocation-free.
"""

from __future__ import annotations

from common.errors import IntbedError


class ExitPipeline(Exception):  # noqa: N818 - it is a control-flow signal, not an error
    """``exit``: leave every block currently executing."""


class ParserReject(Exception):  # noqa: N818 - control-flow signal
    """The parser reached ``reject`` (``code`` None) or failed with an error
    code (PacketTooShort, NoMatch, ...)."""

    __slots__ = ("code",)

    def __init__(self, code: int | None) -> None:
        self.code = code


class AssertionFailed(IntbedError):  # noqa: N818
    """v1model ``assert``/``assume`` failed: BMv2 stops the switch, so this
    ends the run with the location of the failed check."""

    def __init__(self, where: str) -> None:
        super().__init__("assert/assume failed in the data plane")
        self.where = where

    def __str__(self) -> str:
        return f"{self.where}: error: {self.message}"


def sat_add(a: int, b: int, lo: int, hi: int) -> int:
    r = a + b
    return hi if r > hi else lo if r < lo else r


def to_signed(v: int, width: int) -> int:
    v &= (1 << width) - 1
    return v - (1 << width) if v >> (width - 1) else v


def shl(v: int, n: int, mask: int, width: int) -> int:
    """``v << n`` truncated to ``width`` bits; guards huge shift amounts."""
    return (v << n) & mask if n < width else 0


def read_bits(data: bytes, bitpos: int, width: int) -> int | None:
    """``width`` bits at bit offset ``bitpos`` of ``data`` (MSB first), or
    None when the packet is too short."""
    end = bitpos + width
    if end > len(data) * 8:
        return None
    first = bitpos >> 3
    last = (end + 7) >> 3
    chunk = int.from_bytes(data[first:last], "big")
    return (chunk >> ((last << 3) - end)) & ((1 << width) - 1)


def join_bits(parts: list[tuple[int, int]]) -> bytes:
    """Concatenate (value, width) pairs MSB first; the total must be a
    whole number of bytes (deparser output)."""
    acc = 0
    total = 0
    for value, width in parts:
        acc = (acc << width) | (value & ((1 << width) - 1))
        total += width
    return acc.to_bytes((total + 7) >> 3, "big") if total else b""
