"""PINT's global hashes against zlib's CRC-32, Scapy-built headers and a
pure-Python finaliser; uniformity of the reservoir choice they drive."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from scapy.layers.inet import IP, TCP

from sinks.pint.hashing import (
    GlobalHashes,
    below,
    crc32_bytes,
    fmix32,
    packet_ids,
    scaled,
    threshold,
    to_unit,
    top_bits,
)
from sinks.pint.simulate import flow_packet_ids


def ref_fmix32(x: int) -> int:
    x ^= x >> 16
    x = (x * 0x85EBCA6B) & 0xFFFFFFFF
    x ^= x >> 13
    x = (x * 0xC2B2AE35) & 0xFFFFFFFF
    return x ^ (x >> 16)


def test_crc32_matches_zlib() -> None:
    rng = np.random.default_rng(3)
    for length in (1, 4, 5, 15, 40):
        rows = rng.integers(0, 256, size=(50, length), dtype=np.uint8)
        ours = crc32_bytes(rows)
        assert [int(c) for c in ours] == [zlib.crc32(bytes(r)) for r in rows]


def test_fmix32_matches_reference() -> None:
    values = np.array([0, 1, 0xDEADBEEF, 0xFFFFFFFF, 12345678], dtype=np.uint32)
    assert [int(v) for v in fmix32(values)] == [ref_fmix32(int(v)) for v in values]


def test_packet_id_is_crc_of_header_fields_built_by_scapy() -> None:
    rng = np.random.default_rng(5)
    for _ in range(20):
        src, dst = (f"10.{a}.{b}.{c}" for a, b, c in rng.integers(0, 256, size=(2, 3)))
        sport, dport, ip_id = (int(x) for x in rng.integers(0, 65536, size=3))
        raw = bytes(IP(src=src, dst=dst, id=ip_id) / TCP(sport=sport, dport=dport))
        key = raw[12:16] + raw[16:20] + raw[9:10] + raw[20:22] + raw[22:24] + raw[4:6]
        fields = IP(raw)
        ours = packet_ids(
            int.from_bytes(raw[12:16], "big"), int.from_bytes(raw[16:20], "big"), fields.proto,
            fields[TCP].sport, fields[TCP].dport, fields.id,
        )
        assert int(ours) == zlib.crc32(key)


def test_every_ip_id_of_a_flow_gets_its_own_packet_id() -> None:
    ids = packet_ids(0x0A000001, 0x0A000002, 17, 4000, 53, np.arange(65536))
    assert np.unique(ids).shape[0] == 65536


def test_hop_words_are_crc_of_id_and_hop_then_salted_finaliser() -> None:
    hashes = GlobalHashes(11, "path")
    pids = np.array([0, 7, 0xFFFFFFFF, 0x12345678], dtype=np.uint32)
    salt = hashes.salt("hop")
    words = hashes.hop_words(pids, "hop", 5)
    for j, pid in enumerate(pids):
        assert int(hashes.packet_word(pids, "hop")[j]) == ref_fmix32(
            zlib.crc32(int(pid).to_bytes(4, "big")) ^ salt)
        for hop in range(1, 6):
            want = ref_fmix32(zlib.crc32(int(pid).to_bytes(4, "big") + bytes([hop])) ^ salt)
            assert int(words[hop - 1, j]) == want
            assert int(hashes.hop_word(pids, "hop", hop)[j]) == want
    assert hashes.salt("hop") != hashes.salt("query")
    assert GlobalHashes(12, "path").salt("hop") != salt


def test_thresholds_are_exact_at_the_ends() -> None:
    words = np.array([0, 1, 0xFFFFFFFF], dtype=np.uint32)
    assert below(words, 1.0).all()
    assert not below(words, 0.0).any()
    assert threshold(0.5) == 2**31
    with pytest.raises(ValueError):
        threshold(1.5)
    assert list(scaled(np.array([0, 2**31, 2**32 - 1], dtype=np.uint32), 4)) == [0, 2, 3]


def _writers(words: np.ndarray) -> np.ndarray:
    writer = np.zeros(words.shape[1], dtype=np.int64)
    for hop in range(1, words.shape[0] + 1):
        writer = np.where(below(words[hop - 1], 1.0 / hop), hop, writer)
    return writer


def test_reservoir_choice_is_uniform_over_hops_for_one_flow() -> None:
    """Chi-square over the 8 hops of one flow's 60,000 consecutive IP ids:
    below 24.32, the 99.9 % point of chi-square with 7 degrees of freedom.
    Without the finaliser (CRC alone) the statistic is in the thousands."""
    pids = flow_packet_ids(np.random.default_rng(1), 1, 60000).ravel()
    counts = np.bincount(_writers(GlobalHashes(2, "q").hop_words(pids, "hop", 8)))[1:]
    expected = pids.shape[0] / 8
    assert float(((counts - expected) ** 2 / expected).sum()) < 24.32


def test_unit_and_bit_string_views_of_a_word() -> None:
    words = np.array([0, 2**31, 2**32 - 1], dtype=np.uint32)
    assert list(to_unit(words)) == [0.0, 0.5, (2**32 - 1) / 2**32]
    assert list(top_bits(words, 4)) == [0, 8, 15]
    assert list(top_bits(words, 32)) == [0, 2**31, 2**32 - 1]
    with pytest.raises(ValueError):
        top_bits(words, 0)
