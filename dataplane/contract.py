"""What the compiler and the runtime agree on, in one module both import,
so that neither imports the other: the hidden slots at the head of every
packet state, and BMv2's CRC parameters (the runtime computes the CRCs,
generated code inlines the reflected ones)."""

from __future__ import annotations

# Hidden per-packet slots, before the program's own state.
CUR = 0  # parser cursor (bytes)
CLONE = 1  # clone session + 1 (0: none)
CLONE_FL = 2  # preserved field list + 1 for the clone (0: none)
RESUB = 3  # resubmit field list + 1 (0: none)
RECIRC = 4  # recirculate field list + 1 (0: none)
TRUNC = 5  # smallest truncate length asked for, plus 1 (0: none)
PAYLOAD = 6  # bytes after the parsed headers (for *_with_payload checksums)
DIRECT_COLOR = 7  # colour of the last direct meter executed
HIDDEN_SLOTS = 8

CRC_PARAMS: dict[str, tuple[int, int, int, int, bool, bool]] = {
    "crc16": (16, 0x8005, 0x0000, 0x0000, True, True),
    "crc32": (32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, True, True),
}
"""BMv2's ``crc16`` (CRC-16/ARC) and ``crc32`` (CRC-32/ISO-HDLC) as
(width, poly, init, xor-out, refin, refout)."""

CRC_ALIASES = {"crc16_custom": "crc16", "crc32_custom": "crc32"}
"""v1model hash algorithms that compute a CRC of ``CRC_PARAMS`` (the
``_custom`` ones in their default configuration, reconfigurable only over
Thrift)."""


def reflect(value: int, width: int) -> int:
    """``value``'s low ``width`` bits in reverse order."""
    out = 0
    for _ in range(width):
        out = (out << 1) | (value & 1)
        value >>= 1
    return out


def reflected_crc(algo: str) -> tuple[int, int, int] | None:
    """(reflected polynomial, register start, final XOR) of hash algorithm
    ``algo`` when it is one of ``CRC_PARAMS``' reflected CRCs (or an alias
    of one): what a bit-at-a-time reflected CRC needs. None for anything else."""
    params = CRC_PARAMS.get(CRC_ALIASES.get(algo, algo))
    if params is None:
        return None
    width, poly, init, xor_out, refin, refout = params
    if not (refin and refout):
        return None
    return reflect(poly, width), reflect(init, width), xor_out
