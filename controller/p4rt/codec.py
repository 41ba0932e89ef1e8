"""Values to and from P4Runtime bytestrings.

P4Runtime carries every bit<W> value as a big-endian bytestring; the
canonical form (P4Runtime spec, "Bytestrings") is the shortest one, at least
one byte long, and is what the client sends. Controller code may write
addresses as text: dotted IPv4, colon- or dash-separated MAC, IPv6.
"""

from __future__ import annotations

import ipaddress
import re

from common.errors import InvalidValueError

_MAC = re.compile(r"^[0-9a-fA-F]{1,2}([:-][0-9a-fA-F]{1,2}){5}$")

Value = int | str | bytes


def encode(value: int) -> bytes:
    """Canonical bytestring of a non-negative integer."""
    if value < 0:
        raise InvalidValueError(f"P4Runtime values are unsigned, got {value}")
    return value.to_bytes((value.bit_length() + 7) // 8 or 1, "big")


def decode(data: bytes) -> int:
    return int.from_bytes(data, "big")


def parse(value: Value, width: int) -> int:
    """An integer from an int, raw bytes, or text (IPv4, MAC, IPv6, decimal
    or 0x-hex); text must fit the field's ``width`` bits. Integers go out as
    given, so the switch judges whether they fit."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, bytes | bytearray):
        return int.from_bytes(value, "big")
    text = value.strip()
    if _MAC.match(text):
        number = int(re.sub(r"[:-]", "", "".join(p.zfill(2) for p in re.split(r"[:-]", text))), 16)
    elif "." in text or ":" in text:
        number = int(ipaddress.ip_address(text))
    else:
        number = int(text, 0)
    if number < 0 or number >> width:
        raise InvalidValueError(f"{value!r} does not fit in {width} bits")
    return number


def parse_prefix(value: Value | tuple[Value, int], width: int) -> tuple[int, int]:
    """(value, prefix length) from a tuple, ``"10.0.0.0/8"``, or a bare value
    (a full-length prefix)."""
    if isinstance(value, tuple):
        return parse(value[0], width), int(value[1])
    if isinstance(value, str) and "/" in value:
        addr, plen = value.rsplit("/", 1)
        return parse(addr, width), int(plen)
    return parse(value, width), width
