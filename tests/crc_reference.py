"""Reference CRCs written out from their definitions, for tests that check
the engine's hashes independently of ``dataplane.runtime.externs``."""

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
