"""P4Info of action profiles and selectors, field by field against what p4c
writes for its own samples (values read from p4c's
``testdata/p4_16_samples_outputs/*.p4info.txtpb``), and the annotation rules
of p4c's v1model handler on a program of our own."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.paths import shared_dir
from dataplane.compiler.p4info import build_p4info
from dataplane.compiler.pipeline import compile_file

SAMPLES = shared_dir() / "p4-frontend" / "p4_16_samples"

# sample -> ([(id, name, alias, table_ids, with_selector, size, max_group_size,
#              size semantics)], {table: implementation_id}), as p4c writes them.
P4C = {
    "action_profile-bmv2": (
        [(294074782, "ap", "ap", (46872340,), False, 128, 0, None),
         (300324846, "ap_ws", "ap_ws", (38116258,), True, 1024, 0, None)],
        {"IngressI.indirect": 294074782, "IngressI.indirect_ws": 300324846}),
    "action_profile_max_group_size_annotation": (
        [(294074782, "ap", "ap", (46872340,), False, 128, 0, None),
         (300324846, "ap_ws", "ap_ws", (38116258,), True, 1024, 200, "sum_of_weights")],
        {"IngressI.indirect": 294074782, "IngressI.indirect_ws": 300324846}),
    "action_selector_shared-bmv2": (
        [(291652621, "IngressI.as", "as", (38116258, 33951097), True, 1024, 0, None)],
        {"IngressI.indirect_ws": 291652621, "IngressI.indirect_ws_1": 291652621}),
    "issue297-bmv2": (
        [(289199568, "IngressI.ap", "ap", (46872340,), False, 128, 0, None),
         (300324846, "ap_ws", "ap_ws", (38116258,), True, 1024, 0, None)],
        {"IngressI.indirect": 289199568, "IngressI.indirect_ws": 300324846}),
    "issue1560-bmv2": ([], {"cIngress.t0": 0, "cIngress.t1": 0, "cIngress.t2": 0}),
}


def profiles(info) -> list[tuple]:  # noqa: ANN001 - a P4Info message
    return [
        (ap.preamble.id, ap.preamble.name, ap.preamble.alias, tuple(ap.table_ids),
         ap.with_selector, ap.size, ap.max_group_size, ap.WhichOneof("selector_size_semantics"))
        for ap in info.action_profiles
    ]


@pytest.mark.parametrize("sample", sorted(P4C))
def test_action_profiles_as_p4c_writes_them(sample: str) -> None:
    path = SAMPLES / f"{sample}.p4"
    if not path.is_file():
        pytest.skip(f"p4c's front-end samples are not beside the repository ({SAMPLES})")
    info = build_p4info(compile_file(path).schema)
    want_profiles, want_tables = P4C[sample]
    assert sorted(profiles(info)) == sorted(want_profiles)
    assert {t.preamble.name: t.implementation_id for t in info.tables} == want_tables
    for ap in info.action_profiles:
        assert list(ap.preamble.annotations) == []  # the size annotations become fields


def test_switch_p4_16_profiles_compile_and_describe_themselves() -> None:
    path = SAMPLES / "switch_p4_16.p4"
    if not path.is_file():
        pytest.skip(f"p4c's front-end samples are not beside the repository ({SAMPLES})")
    info = build_p4info(compile_file(path).schema)
    got = {ap.preamble.name: (ap.with_selector, ap.size, len(ap.table_ids))
           for ap in info.action_profiles}
    assert got["bd_action_profile"] == (False, 1024, 1)
    assert got["ecmp_action_profile"][:2] == (True, 1024)
    assert {"lag_action_profile", "fabric_lag_action_profile"} <= set(got)
    by_id = {t.preamble.id: t for t in info.tables}
    for ap in info.action_profiles:
        assert all(by_id[t].implementation_id == ap.preamble.id for t in ap.table_ids)


SUM_OF_MEMBERS = """
#include <core.p4>
#include <v1model.p4>
struct H { } struct M { bit<16> h; }
parser P(packet_in p, out H h, inout M m, inout standard_metadata_t s) {
    state start { transition accept; } }
control V(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    action a(bit<9> port) { s.egress_spec = port; }
    @max_group_size(200) @selector_size_semantics("sum_of_members") @max_member_weight(4000)
    @kept("yes")
    action_selector(HashAlgorithm.crc32, 32w512, 32w16) sel;
    @max_group_size(7) action_profile(32w64) prof;
    table t { key = { m.h : selector; } actions = { a; } implementation = sel; }
    table u { key = { s.ingress_port : exact; } actions = { a; } implementation = prof; }
    apply { t.apply(); u.apply(); }
}
control E(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
control C(inout H h, inout M m) { apply { } }
control D(packet_out p, in H h) { apply { } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_size_annotations_follow_p4cs_rules(tmp_path: Path) -> None:
    """Sum-of-members semantics carry the member weight; a profile without a
    selector ignores the group-size annotations; other annotations stay."""
    path = tmp_path / "sum_of_members.p4"
    path.write_text(SUM_OF_MEMBERS)
    info = build_p4info(compile_file(path).schema)
    by_name = {ap.preamble.name: ap for ap in info.action_profiles}
    sel, prof = by_name["I.sel"], by_name["I.prof"]
    assert (sel.max_group_size, sel.WhichOneof("selector_size_semantics")) == \
        (200, "sum_of_members")
    assert sel.sum_of_members.max_member_weight == 4000
    assert list(sel.preamble.annotations) == ['@kept("yes")']
    assert (prof.max_group_size, prof.WhichOneof("selector_size_semantics")) == (0, None)
    assert list(prof.preamble.annotations) == []
    assert not prof.with_selector and prof.size == 64
