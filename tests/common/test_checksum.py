"""common.checksum against Scapy's independent implementation."""

from __future__ import annotations

import random

import pytest
from scapy.layers.inet import ICMP, IP, UDP
from scapy.utils import checksum as scapy_checksum

from common.checksum import fold, internet_checksum, ones_sum


def _loop_fold(total: int) -> int:
    """The textbook end-around carry, to check the modulo form against."""
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


@pytest.mark.parametrize("seed", range(20))
def test_matches_scapy_on_random_buffers(seed: int) -> None:
    rng = random.Random(seed)
    for n in (0, 1, 2, 3, 19, 20, 21, 64, 1499, 1500):
        data = rng.randbytes(n)
        assert internet_checksum(data) == scapy_checksum(data), (seed, n)


def test_edges_agree_with_scapy() -> None:
    for data in (b"", b"\x00", b"\x00\x00\x00\x00", b"\xff\xff", b"\xff\xff" * 7, b"\xff",
                 b"\x01", b"\xfe\xff\x00\x01"):
        assert internet_checksum(data) == scapy_checksum(data), data.hex()
    assert internet_checksum(b"") == 0xFFFF
    assert internet_checksum(b"\xff\xff") == 0


def test_rfc1071_example() -> None:
    # RFC 1071 section 3: 0001 f203 f4f5 f6f7 sums (with carries) to ddf2.
    assert ones_sum(bytes.fromhex("0001f203f4f5f6f7")) == 0xDDF2
    assert internet_checksum(bytes.fromhex("0001f203f4f5f6f7")) == 0xDDF2 ^ 0xFFFF


def test_headers_scapy_built_verify_to_zero() -> None:
    """A header with its checksum in place sums to 0xFFFF: checksum 0."""
    ip = bytes(IP(src="10.0.0.1", dst="10.0.3.9", id=77, ttl=31) / UDP() / b"x")[:20]
    assert internet_checksum(ip) == 0
    assert internet_checksum(ip[:10] + b"\0\0" + ip[12:]) == int.from_bytes(ip[10:12], "big")
    icmp = bytes(ICMP(type=8, id=5, seq=9) / bytes(range(33)))
    assert internet_checksum(icmp) == 0


@pytest.mark.parametrize("seed", range(5))
def test_fold_is_the_end_around_carry(seed: int) -> None:
    rng = random.Random(seed)
    for total in [0, 1, 0xFFFF, 0x10000, 0x1FFFE, 0xFFFF * 5, *rng.sample(range(1 << 40), 200)]:
        assert fold(total) == _loop_fold(total), hex(total)


def test_incremental_update_equals_a_full_sum() -> None:
    """Adding changed words to a folded base gives the checksum of the whole,
    as the traffic generators patch their templates."""
    rng = random.Random(3)
    base = rng.randbytes(40)
    for _ in range(200):
        word = rng.getrandbits(16)
        whole = base + word.to_bytes(2, "big")
        assert fold(ones_sum(base) + word) ^ 0xFFFF == scapy_checksum(whole)
