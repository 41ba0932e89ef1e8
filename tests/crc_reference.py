"""Reference CRCs and the Internet checksum written out from their
definitions, for tests that check the engine's hashes independently of
``dataplane.runtime.externs``."""

from __future__ import annotations


def crc16_arc(data: bytes) -> int:
    """BMv2's crc16, bit by bit: CRC-16/ARC (reflected 0x8005, init 0, no
    final XOR)."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def internet_checksum(data: bytes) -> int:
    """RFC 1071: the ones' complement of the ones' complement sum of the
    16-bit words (an odd byte padded with a zero)."""
    if len(data) % 2:
        data += b"\0"
    total = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return 0xFFFF - total
