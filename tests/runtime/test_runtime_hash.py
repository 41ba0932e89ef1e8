"""Hash and checksum algorithms against published check values and BMv2's
own output in p4c's STF tests."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scapy.layers.inet import IP, UDP
from scapy.utils import checksum

from common.errors import P4UnsupportedError
from common.paths import shared_dir
from dataplane.runtime.externs import (
    HASH_ALGORITHMS,
    checksum_value,
    compute_hash,
    crc16,
    crc32,
    csum16,
    identity,
    make_crc,
    pack_bits,
    update_checksum,
    verify_checksum,
    xor16,
)

SAMPLES = shared_dir() / "p4-conformance" / "samples"
CHECK = b"123456789"
M64 = (1 << 64) - 1


def _bitwise_crc(width: int, poly: int, init: int, xor_out: int, refin: bool, refout: bool):
    """Reference CRC, one bit at a time, written from the Rocksoft model."""
    top = 1 << (width - 1)
    mask = (1 << width) - 1

    def refl(v: int, n: int) -> int:
        return int(format(v, f"0{n}b")[::-1], 2)

    def crc(data: bytes) -> int:
        reg = init
        for byte in data:
            if refin:
                byte = refl(byte, 8)
            reg ^= byte << (width - 8)
            for _ in range(8):
                reg = ((reg << 1) ^ poly) & mask if reg & top else (reg << 1) & mask
        if refout:
            reg = refl(reg, width)
        return reg ^ xor_out

    return crc


# --- published check values (CRC catalogue, input "123456789") ---------------


def test_crc32_check_value() -> None:
    assert crc32(CHECK) == 0xCBF43926
    assert HASH_ALGORITHMS["crc32"](CHECK) == 0xCBF43926
    assert HASH_ALGORITHMS["crc32_custom"](CHECK) == 0xCBF43926


def test_crc16_is_crc16_arc() -> None:
    assert crc16(CHECK) == 0xBB3D
    assert HASH_ALGORITHMS["crc16"](CHECK) == 0xBB3D
    assert HASH_ALGORITHMS["crc16_custom"](CHECK) == 0xBB3D
    assert crc16(b"") == 0


@pytest.mark.parametrize(
    ("params", "check"),
    [
        ((8, 0x07, 0, 0, False, False), 0xF4),  # CRC-8/SMBUS (BMv2 crc8_custom default)
        ((16, 0x1021, 0xFFFF, 0, False, False), 0x29B1),  # CRC-16/IBM-3740
        ((16, 0x1021, 0, 0, True, True), 0x2189),  # CRC-16/KERMIT
        ((16, 0x8005, 0, 0, False, False), 0xFEE8),  # CRC-16/UMTS
        ((32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, False, False), 0xFC891918),  # BZIP2
        ((32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, True, True), 0xCBF43926),
        ((64, 0x1B, M64, M64, True, True), 0xB90956C775A41001),  # CRC-64/GO-ISO
    ],
)
def test_make_crc_catalogue(params: tuple, check: int) -> None:
    assert make_crc(*params)(CHECK) == check


@given(
    st.sampled_from([8, 16, 32]),
    st.integers(min_value=0),
    st.integers(min_value=0),
    st.integers(min_value=0),
    st.booleans(),
    st.booleans(),
    st.binary(max_size=40),
)
def test_make_crc_matches_bitwise_reference(
    width: int, poly: int, init: int, xor_out: int, refin: bool, refout: bool, data: bytes
) -> None:
    mask = (1 << width) - 1
    args = (width, poly & mask, init & mask, xor_out & mask, refin, refout)
    assert make_crc(*args)(data) == _bitwise_crc(*args)(data)


@given(st.binary(max_size=64))
def test_crc32_equals_generic_table_crc(data: bytes) -> None:
    generic = make_crc(32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, True, True)
    assert crc32(data) == generic(data)


# --- identity, xor16, csum16 -------------------------------------------------


def test_identity_keeps_first_eight_bytes() -> None:
    assert identity(b"") == 0
    assert identity(b"\x12\x34") == 0x1234
    assert identity(bytes(range(1, 9))) == 0x0102030405060708
    assert identity(bytes(range(1, 12))) == 0x0102030405060708


def test_xor16() -> None:
    assert xor16(b"") == 0
    assert xor16(b"\x12\x34\x56\x78") == 0x1234 ^ 0x5678
    assert xor16(b"\x12\x34\x56") == 0x1234 ^ 0x5600


def test_csum16_rfc1071_example_and_edges() -> None:
    header = bytes.fromhex("4500007300004000401100" + "00" + "c0a80001c0a800c7")
    assert csum16(header) == 0xB861
    filled = header[:10] + b"\xb8\x61" + header[12:]
    assert csum16(filled) == 0
    assert csum16(b"") == 0xFFFF
    assert csum16(b"\x00\x00\x00\x00") == 0xFFFF
    assert csum16(b"\xff\xff") == 0x0000
    assert csum16(b"\x01") == 0xFEFF  # odd byte padded at the end


@given(st.binary(max_size=80))
def test_csum16_matches_scapy(data: bytes) -> None:
    assert csum16(data) == checksum(data)


def test_csum16_on_scapy_ipv4_and_udp_headers() -> None:
    pkt = IP(bytes(IP(src="10.0.2.15", dst="10.1.0.1", ttl=17, id=4242) / UDP()))
    raw = bytes(pkt)[:20]
    assert pkt.chksum == csum16(raw[:10] + b"\x00\x00" + raw[12:])
    fields = [
        (pkt.version, 4), (pkt.ihl, 4), (pkt.tos, 8), (pkt.len, 16), (pkt.id, 16),
        (int(pkt.flags), 3), (pkt.frag, 13), (pkt.ttl, 8), (pkt.proto, 8),
        (int.from_bytes(raw[12:16], "big"), 32), (int.from_bytes(raw[16:20], "big"), 32),
    ]  # fmt: skip
    assert update_checksum("csum16", fields, 16) == pkt.chksum
    assert verify_checksum("csum16", fields, pkt.chksum)
    assert not verify_checksum("csum16", fields, pkt.chksum ^ 1)


def test_checksum_with_payload_appends_after_padded_fields() -> None:
    assert checksum_value("csum16", [(0x12, 8)], b"\x34") == csum16(b"\x12\x34")
    assert checksum_value("csum16", [(0x1, 4)], b"\xab") == csum16(b"\x10\xab")
    assert checksum_value("crc32", [(0xAB, 8)], b"cd") == crc32(b"\xabcd")


def test_verify_compares_untruncated_output() -> None:
    # A bit<16> field never equals a crc32 whose top bits are set (BMv2 compares uint64s).
    value = crc32(b"\x00\x01")
    assert value >> 16
    assert not verify_checksum("crc32", [(1, 16)], value & 0xFFFF)
    assert update_checksum("crc32", [(1, 16)], 16) == value & 0xFFFF


# --- pack_bits and hash() ---------------------------------------------------


def test_pack_bits_msb_first_with_trailing_pad() -> None:
    assert pack_bits([]) == b""
    assert pack_bits([(0xABC, 12)]) == b"\xab\xc0"
    assert pack_bits([(1, 1), (0, 2), (5, 3)]) == b"\x94"
    assert pack_bits([(0xA, 4), (0xBCDE, 16)]) == b"\xab\xcd\xe0"
    assert pack_bits([(0x1FF, 8)]) == b"\xff"  # wider values wrap to the width
    assert pack_bits([(-1, 4), (0, 4)]) == b"\xf0"  # int<4> -1


def test_compute_hash_base_max_and_truncation() -> None:
    data = [(0x0A000001, 32), (0x0A000002, 32), (6, 8)]
    h = crc32(pack_bits(data))
    assert compute_hash("crc32", data, 0, 1 << 32, 32) == h
    assert compute_hash("crc32", data, 100, 7, 16) == 100 + h % 7
    assert compute_hash("crc32", data, 5, 0, 16) == 5  # max 0 acts as 1
    assert compute_hash("crc32", data, 0, 1 << 32, 8) == h & 0xFF
    assert compute_hash("identity", [(0x112233445566, 48)], 5, 0, 48) == 5
    assert compute_hash("identity", [(0x112233445566, 48)], 0, 1 << 48, 48) == 0x112233445566
    assert compute_hash("xor16", [(0x1234, 16), (0x00FF, 16)], 0, 1 << 16, 16) == 0x12CB
    # base + h % max wraps in 64 bits, then to the result width
    assert compute_hash("identity", [(10, 64)], M64, 16, 64) == 9
    assert compute_hash("identity", [(10, 64)], M64, 16, 8) == 9


def test_random_hash_is_rejected_like_bmv2() -> None:
    with pytest.raises(P4UnsupportedError, match="random"):
        compute_hash("random", [(1, 8)], 0, 16, 8)


# --- BMv2's real output, from p4c's STF tests --------------------------------


def _stf_lines(name: str, command: str) -> list[bytes]:
    path = SAMPLES / f"{name}.stf"
    if not path.exists():
        pytest.skip(f"conformance samples not present at {SAMPLES}")
    out = []
    for line in path.read_text().splitlines():
        parts = line.split("#", 1)[0].split()
        if parts and parts[0] == command:
            out.append(bytes.fromhex("".join(parts[2:])))
    return out


def test_constant_in_calculation_bmv2() -> None:
    # hash(h.a, HashAlgorithm.crc16, 10w0, { 16w1 }, 10w4) -> BMv2 emits 0x0001
    (expected,) = _stf_lines("constant-in-calculation-bmv2", "expect")
    assert compute_hash("crc16", [(1, 16)], 0, 4, 16) == int.from_bytes(expected, "big")


def test_issue655_bmv2_csum16_of_one_field() -> None:
    # ingress adds 1 to d; update_checksum(true, { d }, c, csum16)
    packets = _stf_lines("issue655-bmv2", "packet")
    expects = _stf_lines("issue655-bmv2", "expect")
    assert len(packets) == len(expects) == 6
    for pkt, exp in zip(packets, expects, strict=True):
        d = (int.from_bytes(pkt[:2], "big") + 1) & 0xFFFF
        assert exp == d.to_bytes(2, "big") + update_checksum("csum16", [(d, 16)], 16).to_bytes(
            2, "big"
        )


def test_checksum3_bmv2_ipv4_update() -> None:
    expects = _stf_lines("checksum3-bmv2", "expect")
    assert expects
    for frame in expects:
        ip = frame[14:34]
        fields = [
            (ip[0] >> 4, 4), (ip[0] & 15, 4), (ip[1], 8),
            (int.from_bytes(ip[2:4], "big"), 16), (int.from_bytes(ip[4:6], "big"), 16),
            (ip[6] >> 5, 3), (int.from_bytes(ip[6:8], "big") & 0x1FFF, 13),
            (ip[8], 8), (ip[9], 8),
            (int.from_bytes(ip[12:16], "big"), 32), (int.from_bytes(ip[16:20], "big"), 32),
        ]  # fmt: skip
        assert update_checksum("csum16", fields, 16) == int.from_bytes(ip[10:12], "big")
