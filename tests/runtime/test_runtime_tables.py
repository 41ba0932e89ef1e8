"""Table entry management and lookup semantics for every match kind."""

from __future__ import annotations

import random

import pytest

from common.errors import P4UnsupportedError, RuntimeConfigError
from dataplane.runtime import tables
from dataplane.runtime.externs import GREEN, RED, Meter
from dataplane.runtime.tables import (
    Exact,
    Lpm,
    OptionalMatch,
    RangeMatch,
    Table,
    Ternary,
)
from dataplane.schema import ActionRefInfo, MatchFieldInfo, TableInfo

ACTIONS = {"NoAction": 0, "fwd": 1, "drop": 2, "only_default": 3}
NOACTION, FWD, DROP, ONLY_DEFAULT = 0, 1, 2, 3


def make_table(fields: list[tuple[str, int, str]], size: int = 1024, **kw: object) -> Table:
    info = TableInfo(
        name="ingress.t",
        match_fields=[
            MatchFieldInfo(name, width, kind, id=i + 1)
            for i, (name, width, kind) in enumerate(fields)
        ],
        action_refs=[
            ActionRefInfo("fwd"),
            ActionRefInfo("drop"),
            ActionRefInfo("NoAction"),
            ActionRefInfo("only_default", scope="DEFAULT_ONLY"),
        ],
        default_action="NoAction",
        size=size,
        **kw,  # type: ignore[arg-type]
    )
    return Table(info, ACTIONS)


# --- exact -------------------------------------------------------------------


def test_exact_lookup_hit_miss_and_modify_delete() -> None:
    t = make_table([("h.dst", 48, "exact"), ("m.vrf", 8, "exact")])
    assert t.mode == "exact"
    e = t.insert([Exact(0xAABBCCDDEEFF), Exact(3)], FWD, [7])
    assert t.lookup((0xAABBCCDDEEFF, 3)) is e
    assert (e.action, e.args, e.handle) == (FWD, (7,), 0)
    assert t.lookup((0xAABBCCDDEEFF, 4)) is None
    assert t.find([Exact(0xAABBCCDDEEFF), Exact(3)]) is e
    e.packets += 5
    t.modify([Exact(0xAABBCCDDEEFF), 3], DROP)
    assert (e.action, e.args, e.packets) == (DROP, (), 5)
    assert t.delete(e) is e
    assert t.lookup((0xAABBCCDDEEFF, 3)) is None
    assert len(t) == 0
    with pytest.raises(RuntimeConfigError, match="does not exist"):
        t.delete([Exact(0xAABBCCDDEEFF), Exact(3)])


def test_exact_validation_errors() -> None:
    t = make_table([("h.a", 8, "exact")], size=2)
    with pytest.raises(RuntimeConfigError, match="2 match fields given"):
        t.insert([Exact(1), Exact(2)], FWD)
    with pytest.raises(RuntimeConfigError, match="does not fit in 8 bits"):
        t.insert([Exact(256)], FWD)
    with pytest.raises(RuntimeConfigError, match="does not fit"):
        t.insert([Exact(-1)], FWD)
    with pytest.raises(RuntimeConfigError, match="needs a value"):
        t.insert([None], FWD)
    with pytest.raises(RuntimeConfigError, match="expected an exact match"):
        t.insert([Ternary(1, 0xFF)], FWD)
    with pytest.raises(RuntimeConfigError, match="not allowed in table entries"):
        t.insert([Exact(1)], ONLY_DEFAULT)
    t.insert([Exact(1)], FWD)
    with pytest.raises(RuntimeConfigError, match="already exists"):
        t.insert([Exact(1)], DROP)
    t.insert([Exact(2)], FWD)
    with pytest.raises(RuntimeConfigError, match="table full"):
        t.insert([Exact(3)], FWD)
    t.delete([Exact(1)])
    t.insert([Exact(3)], FWD)
    assert [e.matches for e in t.entries] == [(Exact(2),), (Exact(3),)]


def test_defaults() -> None:
    t = make_table([("h.a", 8, "exact")])
    assert (t.default_action, t.default_args) == (NOACTION, ())
    t.set_default(ONLY_DEFAULT, [9])
    assert (t.default_action, t.default_args) == (ONLY_DEFAULT, (9,))
    t.reset_default()
    assert (t.default_action, t.default_args) == (NOACTION, ())
    const = make_table([("h.a", 8, "exact")], const_default_action=True)
    with pytest.raises(RuntimeConfigError, match="const"):
        const.set_default(FWD, [1])


def test_table_only_action_cannot_be_default() -> None:
    info = TableInfo(
        "ingress.t",
        [MatchFieldInfo("h.a", 8, "exact")],
        [ActionRefInfo("fwd", scope="TABLE_ONLY"), ActionRefInfo("NoAction")],
        default_action="NoAction",
    )
    t = Table(info, ACTIONS)
    with pytest.raises(RuntimeConfigError, match="not allowed as default"):
        t.set_default(FWD, [1])


def test_clear_keeps_default_and_lookup_binding() -> None:
    t = make_table([("h.a", 8, "exact")])
    t.insert([Exact(1)], FWD)
    t.set_default(DROP)
    t.clear()
    assert t.lookup((1,)) is None
    assert t.default_action == DROP
    e = t.insert([Exact(1)], FWD)
    assert t.lookup((1,)) is e


# --- lpm -----------------------------------------------------------------------


def test_lpm_longest_prefix_wins() -> None:
    t = make_table([("ipv4.dst", 32, "lpm")])
    assert t.mode == "lpm"
    default_route = t.insert([None], DROP)
    net8 = t.insert([Lpm(0x0A000000, 8)], FWD, [1])
    net24 = t.insert([Lpm(0x0A000100, 24)], FWD, [2])
    host = t.insert([Lpm(0x0A000105, 32)], FWD, [3])
    assert t.lookup((0x0A000105,)) is host
    assert t.lookup((0x0A000106,)) is net24
    assert t.lookup((0x0A020304,)) is net8
    assert t.lookup((0x0B000000,)) is default_route
    t.delete([Lpm(0x0A000100, 24)])
    assert t.lookup((0x0A000106,)) is net8
    t.delete(default_route)
    assert t.lookup((0x0B000000,)) is None
    assert t.find([Lpm(0x0A000105, 32)]) is host


@pytest.mark.parametrize(("width", "slots", "kept"), [
    (8, 1024, 1 << 16), (32, 1, 1 << 16), (32, 4, 1 << 16), (63, 1024, 1 << 16),
    (64, 1024, 3), (64, 1024, 1 << 16)])
def test_lpm_remembered_results_follow_every_change(monkeypatch: pytest.MonkeyPatch,
                                                     width: int, slots: int, kept: int) -> None:
    """A one-field lpm table remembers each key's result: compiled and up to
    63 bits wide, in hashed slots that keys share (with one slot, each key
    takes it over from the last); otherwise in a dictionary that starts
    afresh after ``kept`` keys. Entries added, removed and cleared between
    lookups must change what it answers, as a longest-prefix match written
    here over the installed prefixes says."""
    monkeypatch.setattr(tables, "LPM_SLOTS", slots)
    monkeypatch.setattr(tables, "LPM_RESULTS_KEPT", kept)
    t = make_table([("h.dst", width, "lpm")])
    full = (1 << width) - 1
    rng = random.Random(slots * 100 + width + kept)
    installed: dict[tuple[int, int], object] = {}
    keys = [rng.getrandbits(width) for _ in range(40)]
    for _ in range(1500):
        op = rng.random()
        if op < 0.15:
            plen = rng.choice((0, 3, width // 2, width - 1, width))
            value = rng.choice(keys[:20]) & (full ^ (full >> plen))
            if (value, plen) not in installed:
                installed[value, plen] = t.insert([Lpm(value, plen)], FWD, [plen])
        elif op < 0.22 and installed:
            value, plen = rng.choice(sorted(installed))
            t.delete(installed.pop((value, plen)))
        elif op < 0.23:
            t.clear()
            installed.clear()
        else:
            key = rng.choice(keys)
            matching = [(plen, entry) for (value, plen), entry in installed.items()
                        if key & (full ^ (full >> plen)) == value]
            want = max(matching, key=lambda m: m[0])[1] if matching else None
            assert t.lookup((key,)) is want
    assert len(t._lpm_results) <= kept
    compiled = tables.__file__.endswith(".so")
    assert (t.lookup.__name__ == "lookup_lpm1_slots") == (compiled and width <= 63)


def test_lpm_zero_prefix_is_dont_care_and_duplicates() -> None:
    t = make_table([("ipv4.dst", 32, "lpm")])
    t.insert([Lpm(0, 0)], DROP)
    with pytest.raises(RuntimeConfigError, match="already exists"):
        t.insert([None], FWD)
    assert t.lookup((0x12345678,)).action == DROP  # type: ignore[union-attr]
    with pytest.raises(RuntimeConfigError, match="prefix length 33 exceeds width 32"):
        t.insert([Lpm(0, 33)], FWD)
    with pytest.raises(RuntimeConfigError, match="beyond prefix length 8"):
        t.insert([Lpm(0x0A000001, 8)], FWD)
    e = t.insert([Lpm(0x0A000001, 8)], FWD, normalize=True)
    assert e.matches == (Lpm(0x0A000000, 8),)
    full = t.insert([Exact(0x0A0000FF)], FWD, [4])  # plain value = /32
    assert full.matches == (Lpm(0x0A0000FF, 32),)


def test_lpm_with_exact_fields() -> None:
    t = make_table([("m.vrf", 4, "exact"), ("ipv4.dst", 32, "lpm"), ("m.zone", 2, "exact")])
    a = t.insert([1, Lpm(0x0A000000, 8), 0], FWD, [1])
    b = t.insert([1, Lpm(0x0A010000, 16), 0], FWD, [2])
    c = t.insert([2, Lpm(0x0A010000, 16), 0], FWD, [3])
    assert t.lookup((1, 0x0A010203, 0)) is b
    assert t.lookup((1, 0x0A020203, 0)) is a
    assert t.lookup((2, 0x0A010203, 0)) is c
    assert t.lookup((2, 0x0A020203, 0)) is None
    assert t.lookup((1, 0x0A010203, 1)) is None


def test_two_lpm_fields_unsupported() -> None:
    with pytest.raises(P4UnsupportedError, match="more than one lpm"):
        make_table([("a", 8, "lpm"), ("b", 8, "lpm")])


# --- ternary, range, optional -----------------------------------------------


def test_ternary_highest_priority_wins_and_ties_go_to_earliest() -> None:
    t = make_table([("h.a", 8, "ternary"), ("h.b", 16, "exact")])
    assert t.mode == "priority"
    with pytest.raises(RuntimeConfigError, match="priority is required"):
        t.insert([Ternary(0, 0), 1], FWD)
    low = t.insert([None, Exact(1)], FWD, [1], priority=1)
    high = t.insert([Ternary(0x10, 0xF0), 1], FWD, [2], priority=10)
    tie_a = t.insert([Ternary(0x01, 0x0F), 1], FWD, [3], priority=5)
    tie_b = t.insert([Ternary(0x11, 0xFF), 1], FWD, [4], priority=5)
    assert t.lookup((0x11, 1)) is high
    assert t.lookup((0x21, 1)) is tie_a
    assert t.lookup((0x22, 1)) is low
    assert t.lookup((0x22, 2)) is None
    t.delete(high)
    assert t.lookup((0x11, 1)) is tie_a
    t.delete([Ternary(0x01, 0x0F), 1], priority=5)
    assert t.lookup((0x11, 1)) is tie_b
    assert [e.handle for e in t.entries] == [low.handle, tie_b.handle]


def test_ternary_key_includes_priority_and_mask_rules() -> None:
    t = make_table([("h.a", 8, "ternary")])
    t.insert([Ternary(0x10, 0xF0)], FWD, priority=3)
    t.insert([Ternary(0x10, 0xF0)], DROP, priority=4)  # same match, other priority
    with pytest.raises(RuntimeConfigError, match="already exists"):
        t.insert([Ternary(0x10, 0xF0)], DROP, priority=4)
    with pytest.raises(RuntimeConfigError, match="bits outside mask"):
        t.insert([Ternary(0x11, 0xF0)], FWD, priority=5)
    e = t.insert([Ternary(0x11, 0xF0)], FWD, priority=5, normalize=True)
    assert e.matches == (Ternary(0x10, 0xF0),)
    assert t.find([Ternary(0, 0)], priority=1) is None
    w = t.insert([Ternary(0, 0)], FWD, priority=1)
    assert w.matches == (None,)
    assert t.find([None], priority=1) is w
    assert t.lookup((0x1F,)) is e
    assert t.lookup((0x2F,)) is w
    exact_like = t.insert([Exact(0x2F)], FWD, priority=9)
    assert exact_like.matches == (Ternary(0x2F, 0xFF),)
    assert t.lookup((0x2F,)) is exact_like


def test_range_match() -> None:
    t = make_table([("tcp.dport", 16, "range"), ("ip.proto", 8, "exact")])
    web = t.insert([RangeMatch(80, 90), 6], FWD, [1], priority=2)
    wide = t.insert([RangeMatch(0, 1023), 6], FWD, [2], priority=1)
    anyp = t.insert([RangeMatch(0, 0xFFFF), 17], FWD, [3], priority=1)
    assert anyp.matches == (None, Exact(17))
    assert t.lookup((80, 6)) is web
    assert t.lookup((90, 6)) is web
    assert t.lookup((91, 6)) is wide
    assert t.lookup((1024, 6)) is None
    assert t.lookup((65535, 17)) is anyp
    with pytest.raises(RuntimeConfigError, match="above high"):
        t.insert([RangeMatch(9, 8), 6], FWD, priority=1)
    with pytest.raises(RuntimeConfigError, match="does not fit in 16 bits"):
        t.insert([RangeMatch(0, 1 << 16), 6], FWD, priority=1)


def test_optional_match() -> None:
    t = make_table([("h.a", 8, "optional"), ("h.b", 8, "optional")])
    both = t.insert([OptionalMatch(1), OptionalMatch(2)], FWD, [1], priority=2)
    first = t.insert([OptionalMatch(1), None], FWD, [2], priority=1)
    assert t.lookup((1, 2)) is both
    assert t.lookup((1, 3)) is first
    assert t.lookup((2, 2)) is None


def test_lpm_field_in_priority_table_acts_as_mask() -> None:
    t = make_table([("ipv4.dst", 32, "lpm"), ("h.a", 8, "ternary")])
    a = t.insert([Lpm(0x0A000000, 8), None], FWD, [1], priority=1)
    b = t.insert([Lpm(0x0A010000, 16), None], FWD, [2], priority=2)
    assert t.lookup((0x0A010101, 0)) is b
    assert t.lookup((0x0A020101, 0)) is a


def test_direct_meter_per_entry() -> None:
    info = TableInfo(
        "ingress.t",
        [MatchFieldInfo("h.a", 8, "exact")],
        [ActionRefInfo("fwd"), ActionRefInfo("NoAction")],
        default_action="NoAction",
        direct_meter="ingress.m",
    )
    t = Table(info, ACTIONS, meter_factory=lambda: Meter(packets=True))
    e = t.insert([1], FWD, [1])
    assert isinstance(e.meter, Meter)
    assert e.meter.execute(100, 0) == GREEN
    e.meter.set_rates(0, 0, 0, 0)
    assert e.meter.execute(100, 10) == RED


def test_selector_fields_are_not_part_of_the_key() -> None:
    t = make_table([("h.a", 8, "exact"), ("h.b", 16, "selector")])
    assert t.kinds == ("exact",)
    e = t.insert([5], FWD)
    assert t.lookup((5,)) is e
