"""common.names: the one short-name rule, as the P4Runtime client, the STF
runners and the engine's control API use it."""

from __future__ import annotations

import pytest

from common.errors import IntbedError
from common.names import NameLookupError, lookup

TABLES = ["MyIngress.ipv4_lpm", "MyIngress.ecmp", "MyEgress.ecmp", "MyIngress.sub.ipv4_lpm2"]


def test_exact_wins_over_suffixes() -> None:
    names = ["t", "ingress.t", "egress.t"]
    assert lookup("t", names, "table") == "t"
    assert lookup("ingress.t", names, "table") == "ingress.t"


def test_unique_dotted_suffix_like_a_p4info_alias() -> None:
    assert lookup("ipv4_lpm", TABLES, "table") == "MyIngress.ipv4_lpm"
    assert lookup("sub.ipv4_lpm2", TABLES, "table") == "MyIngress.sub.ipv4_lpm2"
    assert lookup("MyIngress.ecmp", TABLES, "table") == "MyIngress.ecmp"
    fields = ["hdr.ipv4.dstAddr", "hdr.inner.dstAddr", "meta.vrf"]
    assert lookup("ipv4.dstAddr", fields, "match field") == "hdr.ipv4.dstAddr"
    assert lookup("vrf", fields, "match field") == "meta.vrf"


def test_leading_dots_are_p4_top_level_names() -> None:
    assert lookup(".MyIngress.ecmp", TABLES, "table") == "MyIngress.ecmp"
    assert lookup(".ipv4_lpm", TABLES, "table") == "MyIngress.ipv4_lpm"
    assert lookup(".NoAction", ["NoAction", "a.NoAction"], "action") == "NoAction"


@pytest.mark.parametrize("name", ["lpm", "ipv4_", "MyIngress", "Ingress.ecmp", "v4_lpm"])
def test_plain_text_suffixes_and_prefixes_never_match(name: str) -> None:
    with pytest.raises(NameLookupError) as info:
        lookup(name, TABLES, "table")
    assert info.value.matches == []


def test_unknown_lists_the_choices() -> None:
    with pytest.raises(NameLookupError) as info:
        lookup("nope", TABLES, "table")
    err = info.value
    assert isinstance(err, IntbedError) and isinstance(err, LookupError)
    assert err.message == ("no table named 'nope' (known: MyEgress.ecmp, MyIngress.ecmp, "
                           "MyIngress.ipv4_lpm, MyIngress.sub.ipv4_lpm2)")
    assert str(err) == f"error: {err.message}"
    assert (err.name, err.what, err.choices) == ("nope", "table", TABLES)
    with pytest.raises(NameLookupError, match=r"no action named 'x' in table t \(known: none\)"):
        lookup("x", [], "action", "in table t")


def test_ambiguous_lists_the_candidates() -> None:
    with pytest.raises(NameLookupError) as info:
        lookup("ecmp", TABLES, "table", "in the P4Info")
    assert info.value.message == ("table name 'ecmp' in the P4Info is ambiguous: "
                                  "MyEgress.ecmp, MyIngress.ecmp")
    assert info.value.matches == ["MyEgress.ecmp", "MyIngress.ecmp"]


def test_any_iterable_of_choices() -> None:
    assert lookup("b", (n for n in ["x.a", "x.b"]), "thing") == "x.b"
    assert lookup("b", {"x.a": 1, "x.b": 2}, "thing") == "x.b"
