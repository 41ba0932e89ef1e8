"""The Internet checksum (RFC 1071), the one implementation intbed has.

IPv4, ICMP, UDP and TCP headers, the engine's ``csum16`` hash and the
traffic generators' incremental updates all use these three functions, so
a frame the sender builds and a checksum the switch computes cannot
disagree by construction.

The ones' complement sum of 16-bit words is congruent to the words' plain
sum modulo 0xFFFF (because 2**16 == 1 mod 0xFFFF), and so is the whole
buffer read as one big-endian integer: ``fold`` of either gives the same
16-bit sum, computed with one modulo instead of a loop. The only case the
modulo cannot tell apart is ones' complement "negative zero": a non-zero
sum congruent to 0 folds to 0xFFFF, as the end-around carry gives it.
"""

from __future__ import annotations

__all__ = ["fold", "internet_checksum", "ones_sum"]


def fold(total: int) -> int:
    """A non-negative sum of 16-bit words, folded to 16 bits by end-around
    carry: what incremental updates (a base sum plus changed words) need."""
    s = total % 0xFFFF
    return 0xFFFF if s == 0 and total else s


def ones_sum(data: bytes) -> int:
    """The folded ones' complement sum of ``data``'s big-endian 16-bit words,
    an odd trailing byte padded with a zero byte."""
    if len(data) & 1:
        data += b"\x00"
    return fold(int.from_bytes(data, "big"))


def internet_checksum(data: bytes) -> int:
    """RFC 1071: the ones' complement of ``ones_sum(data)``; 0xFFFF for
    all-zero input, 0 for a buffer whose checksum field is already right."""
    return ones_sum(data) ^ 0xFFFF
