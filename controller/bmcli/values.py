"""Values as simple_switch_CLI reads them.

A field or parameter of 32 bits may be written as dotted IPv4, one of 48
bits as a colon-separated MAC, one of 128 bits as IPv6; any width takes an
integer in decimal or with a ``0x``/``0o``/``0b`` prefix. The value must fit
the width. Match keys add their kind's form: ``value/len`` (lpm),
``value&&&mask`` (ternary), ``low->high`` (range).
"""

from __future__ import annotations

import ipaddress
import re

_MAC = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")


class BadValue(ValueError):
    """A word that is not a value of the width asked for; the message says why."""


def parse_value(word: str, width: int, what: str) -> int:
    """``word`` as an unsigned integer of ``width`` bits (``what`` names it in errors)."""
    number: int | None = None
    if width == 32 and word.count(".") == 3:
        try:
            number = int(ipaddress.IPv4Address(word))
        except ValueError:
            raise BadValue(f"{what} '{word}' is not an IPv4 address") from None
    elif width == 48 and _MAC.match(word):
        number = int(word.replace(":", ""), 16)
    elif width == 128 and ":" in word:
        try:
            number = int(ipaddress.IPv6Address(word))
        except ValueError:
            raise BadValue(f"{what} '{word}' is not an IPv6 address") from None
    else:
        try:
            number = int(word, 0)
        except ValueError:
            forms = {32: ", an IPv4 address", 48: ", a MAC address", 128: ", an IPv6 address"}
            raise BadValue(f"{what} '{word}' is not a number (decimal or 0x hex"
                           f"{forms.get(width, '')})") from None
    if number < 0:
        raise BadValue(f"{what} '{word}' is negative")
    if number >> width:
        raise BadValue(f"{what} '{word}' is too wide: {number.bit_length()} bits for a "
                       f"{width}-bit field")
    return number


def parse_lpm(word: str, width: int, what: str) -> tuple[int, int]:
    value, sep, plen_text = word.partition("/")
    if not sep:
        raise BadValue(f"{what} '{word}' is an lpm key: write VALUE/PREFIX_LEN")
    try:
        plen = int(plen_text)
    except ValueError:
        raise BadValue(f"{what} '{word}': prefix length '{plen_text}' is not a number") from None
    if not 0 <= plen <= width:
        raise BadValue(f"{what} '{word}': prefix length {plen} is not in 0..{width}")
    number = parse_value(value, width, what)
    full = (1 << width) - 1
    return number & (full ^ (full >> plen)), plen


def parse_ternary(word: str, width: int, what: str) -> tuple[int, int]:
    value, sep, mask = word.partition("&&&")
    if not sep:
        raise BadValue(f"{what} '{word}' is a ternary key: write VALUE&&&MASK")
    v, m = parse_value(value, width, what), parse_value(mask, width, f"{what} mask")
    return v & m, m


def parse_range(word: str, width: int, what: str) -> tuple[int, int]:
    low, sep, high = word.partition("->")
    if not sep:
        raise BadValue(f"{what} '{word}' is a range key: write LOW->HIGH")
    lo, hi = parse_value(low, width, what), parse_value(high, width, what)
    if lo > hi:
        raise BadValue(f"{what} '{word}': the low end is above the high end")
    return lo, hi


def parse_rate_burst(word: str, what: str) -> tuple[float, int]:
    """``RATE:BURST`` of meter_set_rates: rate per microsecond, burst in units."""
    rate, sep, burst = word.partition(":")
    try:
        if not sep:
            raise ValueError
        r, b = float(rate), int(burst)
    except ValueError:
        raise BadValue(f"{what} '{word}' is not RATE:BURST (rate per microsecond, "
                       "burst as an integer)") from None
    if r < 0 or b < 0:
        raise BadValue(f"{what} '{word}' is negative")
    return r, b
