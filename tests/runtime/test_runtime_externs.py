"""Counters, registers, meters and random() with BMv2's rules."""

from __future__ import annotations

import pytest

from common.errors import RuntimeConfigError
from dataplane.runtime.externs import (
    GREEN,
    RED,
    YELLOW,
    CounterArray,
    MeterArray,
    RandomSource,
    RegisterArray,
)


def test_colour_values_are_v1model_constants() -> None:
    assert (GREEN, YELLOW, RED) == (0, 1, 2)


# --- counters -----------------------------------------------------------------


def test_counter_counts_packets_and_bytes_and_ignores_bad_index() -> None:
    c = CounterArray(4, "PACKETS")
    c.count(1, 64)
    c.count(1, 1500)
    c.count(3, 10)
    c.count(4, 99)  # past the end: nothing happens (BMv2)
    assert c.read(1) == (2, 1564)
    assert c.read(3) == (1, 10)
    assert c.read(0) == (0, 0)
    c.write(0, 7, 700)
    assert c.read(0) == (7, 700)
    c.reset(1)
    assert c.read(1) == (0, 0)
    c.reset()
    assert c.packets == [0, 0, 0, 0] and c.bytes == [0, 0, 0, 0]
    with pytest.raises(RuntimeConfigError, match="out of range"):
        c.read(4)


# --- registers ----------------------------------------------------------------


def test_register_masks_to_width_and_ignores_bad_index() -> None:
    r = RegisterArray(2, 12)
    r.write(0, 0x1ABC)
    assert r.read(0) == 0xABC
    r.write(1, -1)
    assert r.read(1) == 0xFFF
    r.write(2, 5)  # ignored
    assert r.values == [0xABC, 0xFFF]
    assert r.read(2) == 0
    assert r.read(2, default=77) == 77  # BMv2 leaves the destination as it was
    r.set(0, 0x1001)
    assert r.get(0) == 0x001
    with pytest.raises(RuntimeConfigError, match="out of range"):
        r.get(2)
    with pytest.raises(RuntimeConfigError, match="out of range"):
        r.set(-1, 0)
    r.reset()
    assert r.values == [0, 0]


def test_signed_register_reads_back_negative() -> None:
    r = RegisterArray(1, 8, signed=True)
    r.write(0, -3)
    assert r.values == [0xFD]
    assert r.read(0) == -3
    r.write(0, 0x7F + 1)
    assert r.read(0) == -128
    r.write(0, 0x7F)
    assert r.read(0) == 127


# --- meters -------------------------------------------------------------------


def test_unconfigured_meter_is_green() -> None:
    m = MeterArray(2, "BYTES")
    assert all(m.execute(0, 10**6, t) == GREEN for t in range(5))
    assert m.rates(0) is None


def test_packet_meter_colour_transitions() -> None:
    # CIR 1000 pkt/s burst 2, PIR 2000 pkt/s burst 4: 0.001 and 0.002 tokens/us.
    m = MeterArray(1, "PACKETS")
    m.set_rates(0, [(1000, 2), (2000, 4)])
    assert [m.execute(0, 1500, 0) for _ in range(5)] == [GREEN, GREEN, YELLOW, YELLOW, RED]
    # 1000 us later: +2 peak tokens, +1 committed token.
    assert m.execute(0, 1500, 1000) == GREEN
    assert m.execute(0, 1500, 1000) == YELLOW
    assert m.execute(0, 1500, 1000) == RED
    # Tokens come from int(elapsed_us * rate): at 1499 us int(2.998) = 2 peak
    # tokens since start, none new, so RED; at 1500 us one new peak token but
    # int(1.5) = 1 committed token is not new, so YELLOW.
    assert m.execute(0, 1500, 1499) == RED
    assert m.execute(0, 1500, 1500) == YELLOW


def test_red_leaves_committed_bucket_untouched() -> None:
    m = MeterArray(1, "PACKETS")
    m.set_rates(None, [(1000, 1), (1000, 1)])
    assert m.execute(0, 0, 0) == GREEN
    assert m.execute(0, 0, 0) == RED
    # Both buckets refill from the time since start, so no tokens were lost.
    assert m.execute(0, 0, 1000) == GREEN
    assert m.execute(0, 0, 1000) == RED


def test_byte_meter_uses_packet_length_and_caps_at_burst() -> None:
    m = MeterArray(1, "BYTES")
    m.set_rates(0, [(1_000_000, 1500), (2_000_000, 3000)])  # 1 and 2 bytes/us
    assert m.execute(0, 1500, 0) == GREEN  # peak 1500 left, committed 0
    assert m.execute(0, 1000, 0) == YELLOW  # peak 500 left
    assert m.execute(0, 1000, 0) == RED
    assert m.execute(0, 1000, 250) == YELLOW  # peak 500 + 500 -> 0; committed 250
    # A long idle period refills both buckets only up to their bursts.
    assert m.execute(0, 1500, 10**9) == GREEN
    assert m.execute(0, 1501, 10**9) == RED


def test_meter_configuration_rules() -> None:
    m = MeterArray(3, "PACKETS", clock=lambda: 0)
    with pytest.raises(RuntimeConfigError, match="CIR 20 is larger than PIR 10"):
        m.set_rates(0, [(20, 1), (10, 1)])
    with pytest.raises(RuntimeConfigError, match="exactly two rates"):
        m.set_rates(0, [(20, 1)])
    with pytest.raises(RuntimeConfigError, match="out of range"):
        m.set_rates(3, [(1, 1), (2, 2)])
    m.set_rates(None, [(1500, 10), (3000, 20)])
    assert [m.rates(i) for i in range(3)] == [(1500, 10, 3000, 20)] * 3
    m.reset_rates(1)
    assert m.rates(1) is None
    assert m.execute(1, 0) == GREEN  # time from the clock
    assert m.execute(3, 0) is None  # past the end: nothing happens
    with pytest.raises(ValueError, match="PACKETS or BYTES"):
        MeterArray(1, "BOTH")


# --- random -----------------------------------------------------------------


def test_random_is_seeded_and_in_range() -> None:
    a = RandomSource(42)
    b = RandomSource(42)
    seq_a = [a.random(10, 20) for _ in range(200)]
    assert seq_a == [b.random(10, 20) for _ in range(200)]
    assert min(seq_a) == 10 and max(seq_a) == 20
    assert seq_a != [RandomSource(43).random(10, 20) for _ in range(200)]
    assert a.random(5, 5) == 5
    assert a.random(0, (1 << 48) - 1) < 1 << 48


def test_random_lo_above_hi_writes_nothing() -> None:
    assert RandomSource(1).random(9, 3, default=123) == 123
