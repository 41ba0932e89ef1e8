"""Telemetry report parsing against reports built with Scapy
(report_builders), every version, byte for byte; rejections; the batch path
against the per-report one, and its rate."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from report_builders import (
    ALL_V05,
    ALL_V10,
    ALL_V20,
    INT_ITEMS,
    INT_PORT,
    TR10_ITEMS,
    TR20_ITEMS,
    V05_HEADERS,
    ReportSpec,
    build,
    expected,
    frame,
    hop_fields,
    int_bytes,
    value_fields,
)

from benchmarks.collector import generate as bench_generate
from sinks.intcollector import reports
from sinks.intcollector.reports import (
    REASONS,
    IntSignal,
    ParsedReport,
    Rejected,
    ReportStats,
    parse_batch,
    parse_packet,
    parse_report,
    parse_rows,
)

ROUNDTRIP_EXAMPLES_FULL = 10_000
"""Random reports per TR version in a full check, INTBED_REPORT_EXAMPLES=full
(about 7 minutes: an example costs some 13 ms, mostly in Scapy)."""
_EXAMPLES = os.environ.get("INTBED_REPORT_EXAMPLES", "150")
ROUNDTRIP_EXAMPLES = ROUNDTRIP_EXAMPLES_FULL if _EXAMPLES == "full" else int(_EXAMPLES)
"""Per TR version; 150 by default keeps this file near 15 seconds."""
BENCH_REPORTS = 100_000

PORT_SIGNAL = IntSignal(ports=frozenset({INT_PORT}))
ALL_BITS = {0: ALL_V05, 1: ALL_V10, 2: ALL_V20}
COMBOS = [(tr, intv) for tr in (0, 1, 2) for intv in (0, 1, 2)]


def random_hops(int_version: int, instructions: int, count: int, seed: int,
                ) -> list[dict[str, int]]:
    rng = random.Random(seed)
    widths = hop_fields(int_version, instructions)
    return [{name: rng.getrandbits(bits) for name, bits in widths.items()}
            for _ in range(count)]


def full_spec(tr: int, intv: int, hops: int, instructions: int | None = None,
              **kw: Any) -> ReportSpec:
    """TR ``tr`` carrying INT ``intv`` with ``hops`` hops of random values,
    all the version's instructions unless told."""
    if instructions is None:
        instructions = ALL_BITS[intv]
    return ReportSpec(report_version=tr, int_version=intv, instructions=instructions,
                      hops=random_hops(intv, instructions, hops, seed=hops * 31 + tr), **kw)


def check(spec: ReportSpec, signal: IntSignal = reports.DEFAULT_SIGNAL) -> ParsedReport:
    got = parse_report(build(spec), signal)
    assert got == expected(spec)
    assert isinstance(got, ParsedReport)
    return got


def all_ones(cls_fields: dict[str, int]) -> dict[str, int]:
    return {name: (1 << bits) - 1 for name, bits in cls_fields.items()}


# --- values in, values out ------------------------------------------------------

@pytest.mark.parametrize("hops", [1, 6, 20])
@pytest.mark.parametrize(("tr", "intv"), COMBOS)
def test_every_version_parses_to_the_values_put_in(tr: int, intv: int, hops: int) -> None:
    got = check(full_spec(tr, intv, hops))
    assert got.hop_count == hops
    assert len(got.hops["node_id"]) == hops


def test_six_hop_v2_report_field_by_field() -> None:
    spec = full_spec(2, 2, 6, seq=0x3FFFFF, hw_id=0x3F, node_id=0xFFFF_FFFF)
    got = check(spec)
    assert (got.report_version, got.int_version, got.hop_ml) == (2, 2, 12)
    assert got.seq == 0x3FFFFF and got.hw_id == 0x3F and got.node_id == 0xFFFF_FFFF
    assert got.flow == (0x0A000101, 0x0A000202, 17, 1234, 80)
    assert got.hop(0) == spec.hops[0] and got.hop(5) == spec.hops[5]
    assert set(got.hops) == {"node_id", "l1_ingress_port", "l1_egress_port", "hop_latency",
                             "queue_id", "queue_occupancy", "ingress_ts", "egress_ts",
                             "l2_ingress_port", "l2_egress_port", "egress_tx_util",
                             "buffer_id", "buffer_occupancy"}


@pytest.mark.parametrize("intv", [0, 1, 2])
def test_full_width_values(intv: int) -> None:
    hop = all_ones(hop_fields(intv, ALL_BITS[intv]))
    check(ReportSpec(report_version=2, int_version=intv, instructions=ALL_BITS[intv],
                     hops=[hop, hop], seq=0x3FFFFF, node_id=0xFFFF_FFFF, hw_id=0x3F))


def test_report_length_0xff_reaches_the_end_of_the_payload() -> None:
    data = build(full_spec(2, 2, 20))
    assert data[9] == 0xFF and len(data) > 12 + 4 * 0xFF


@pytest.mark.parametrize("header", [1, 2])
def test_v05_drop_and_switch_local_headers(header: int) -> None:
    names = {k: v for k, v in value_fields(V05_HEADERS[header]).items() if k != "switch_id"}
    md = {name: (1 << bits) - 2 for name, bits in names.items()}
    got = check(full_spec(0, 0, 3, v05_header=header, report_md=md, node_id=0x01020304))
    assert got.node_id == 0x01020304
    assert got.report_md == md


def test_v05_without_local_header_has_no_node_id() -> None:
    assert check(full_spec(0, 0, 2)).node_id is None


def test_v10_every_report_metadata_bit() -> None:
    md: dict[str, int] = {}
    for cls in TR10_ITEMS.values():
        md.update({k: (1 << w) - 3 for k, w in value_fields(cls).items()})
    got = check(full_spec(1, 1, 2, report_md=md))
    assert got.report_md["drop_reason"] == 0xFD and got.report_md["egress_ts"] == 0xFFFF_FFFD


def test_v20_every_report_metadata_bit_and_ds_words() -> None:
    md: dict[str, int] = {}
    for cls in TR20_ITEMS.values():
        md.update({k: (1 << w) - 5 for k, w in value_fields(cls).items()})
    check(full_spec(2, 2, 3, report_md=md, domain_specific_id=7, ds_md_bits=0x8000,
                    ds_md_status=3, ds_md_words=2))


def test_v20_inner_only_and_no_inner() -> None:
    check(full_spec(2, 2, 4, rep_type=0))
    got = check(ReportSpec(rep_type=1, inner="none", int_version=None, hops=[],
                           report_md={"hop_latency": 5}))
    assert got.flow is None and got.int_version is None


@pytest.mark.parametrize(("tr", "inner"), [(1, "ipv4"), (2, "ipv4"), (0, "vlan"), (2, "vlan")])
def test_inner_packet_starts(tr: int, inner: str) -> None:
    check(full_spec(tr, 2, 2, inner=inner))


@pytest.mark.parametrize("options", [[], [("MSS", 1460)], [("NOP", None), ("WScale", 7)],
                                     [("Timestamp", (1, 2)), ("NOP", None), ("NOP", None)]])
@pytest.mark.parametrize("intv", [0, 1, 2])
def test_int_over_tcp(intv: int, options: list[tuple[str, object]]) -> None:
    check(full_spec(1, intv, 3, l4="tcp", tcp_options=options, sport=40000, dport=443))


@pytest.mark.parametrize(("intv", "npt"), [(0, 0), (1, 0), (2, 1), (2, 2)])
def test_int_signalled_by_udp_port(intv: int, npt: int) -> None:
    spec = full_spec(2, intv, 2, by_port=True, dscp=0, npt=npt, dport=53, sport=5353)
    got = check(spec, PORT_SIGNAL)
    assert got.flow is not None
    assert got.flow[4] == (INT_PORT if intv == 1 else 53)  # v1.0 has no original port


def test_v20_npt2_original_udp_header_after_the_stack() -> None:
    check(full_spec(2, 2, 2, npt=2, orig_proto=17, sport=7, dport=8))


def test_without_the_int_signal_the_report_has_no_int() -> None:
    spec = ReportSpec(int_version=None, dscp=0, payload=b"no INT here")
    got = check(spec)
    assert got.int_version is None and got.hops == {} and got.flow is not None
    assert parse_report(build(spec), IntSignal(dscp=None)) == got


def test_dscp_signal_as_one_bit() -> None:
    spec = full_spec(2, 2, 2, dscp=0x21)
    check(spec, IntSignal(dscp=0x20, dscp_mask=0x20))
    assert parse_report(build(spec)).int_version is None  # 0x21 is not 0x17


def test_icmp_inner_packet_has_no_ports_or_int() -> None:
    got = check(ReportSpec(int_version=None, l4="icmp", hops=[]))
    assert got.flow is not None and got.flow[2:] == (1, 0, 0)


@pytest.mark.parametrize("intv", [0, 1, 2])
def test_reserved_instruction_bits_take_a_word_and_are_skipped(intv: int) -> None:
    reserved = {0: 0x00C0, 1: 0x0060, 2: 0x0030}[intv]
    got = check(full_spec(2, intv, 3, instructions=ALL_BITS[intv] | reserved))
    assert got.hop_ml == {0: 10, 1: 12, 2: 14}[intv]  # two reserved words more than ALL_*


def test_v20_domain_specific_words_sit_before_the_checksum() -> None:
    spec = full_spec(2, 2, 3, instructions=ALL_V20 | 0x0001, ds_words=2, domain_id=9)
    got = check(spec)
    assert got.hop_ml == 12 + 1 + 2
    assert got.hops["checksum_complement"] == tuple(h["checksum_complement"] for h in spec.hops)


def test_zero_hops() -> None:
    for intv in (0, 1, 2):
        assert check(full_spec(2, intv, 0)).hop_count == 0


# --- random reports -------------------------------------------------------------

def _values(cls_fields: dict[str, int]) -> st.SearchStrategy[dict[str, int]]:
    return st.fixed_dictionaries({k: st.integers(0, (1 << w) - 1)
                                  for k, w in cls_fields.items()})


def _report_md(tr: int) -> st.SearchStrategy[tuple[int, dict[str, int]]]:
    """(v0.5 NProto, report metadata) for TR version ``tr``."""
    if tr == 0:
        return st.sampled_from([0, 1, 2]).flatmap(lambda h: st.tuples(st.just(h), _values(
            {k: w for k, w in value_fields(V05_HEADERS[h]).items() if k != "switch_id"})
            if h else st.just({})))
    table = TR10_ITEMS if tr == 1 else TR20_ITEMS

    def merge(parts: list[dict[str, int]]) -> tuple[int, dict[str, int]]:
        return 0, {k: v for part in parts for k, v in part.items()}

    return st.lists(st.sampled_from(sorted(table)), unique=True).flatmap(
        lambda bits: st.tuples(*[_values(value_fields(table[b])) for b in bits]).map(
            lambda parts: merge(list(parts))))


@st.composite
def report_specs(draw: st.DrawFn, tr: int) -> ReportSpec:
    intv = draw(st.sampled_from([0, 1, 2]))
    known = sorted(INT_ITEMS[intv])
    bits = draw(st.lists(st.sampled_from(range(16)) if draw(st.booleans()) else
                         st.sampled_from(known), min_size=1, max_size=12, unique=True))
    instructions = sum(1 << (15 - b) for b in bits)
    hops = draw(st.lists(_values(hop_fields(intv, instructions)), max_size=8))
    v05_header, md = draw(_report_md(tr))
    rep_type = draw(st.sampled_from([0, 1])) if tr == 2 else 1
    by_port = draw(st.booleans())
    npt = draw(st.sampled_from([0, 1, 2])) if intv == 2 else 0
    inner = draw(st.sampled_from(["ethernet", "vlan"] + (["ipv4"] if tr else [])))
    word = st.integers(0, 0xFFFF_FFFF)
    return ReportSpec(
        report_version=tr, int_version=intv, instructions=instructions, hops=hops,
        ds_words=draw(st.integers(0, 2)) if intv == 2 else 0,
        hw_id=draw(st.integers(0, 63)), seq=draw(st.integers(0, (1 << 22) - 1) if tr == 2
                                                 else word),
        node_id=draw(word), ingress_ts=draw(word), dropped=draw(st.booleans()),
        congested=draw(st.booleans()), tracked=draw(st.booleans()),
        intermediate=draw(st.booleans()), report_md=md if rep_type else {},
        v05_header=v05_header, inner=inner, rep_type=rep_type,
        domain_specific_id=draw(st.integers(0, 0xFFFF)), ds_md_bits=draw(st.integers(0, 0xFFFF)),
        ds_md_status=draw(st.integers(0, 0xFFFF)), ds_md_words=draw(st.integers(0, 2)),
        l4=draw(st.sampled_from(["udp", "tcp"])) if npt != 2 else "udp",
        tcp_options=draw(st.sampled_from([[], [("MSS", 1400)], [("WScale", 3)]])),
        src=".".join(str(draw(st.integers(0, 255))) for _ in range(4)),
        dst=".".join(str(draw(st.integers(0, 255))) for _ in range(4)),
        sport=draw(st.integers(0, 0xFFFF)), dport=draw(st.integers(0, 0xFFFF)),
        dscp=draw(st.integers(0, 63)) if by_port else 0x17, by_port=by_port,
        rep=draw(st.integers(0, 3)), c=draw(st.integers(0, 1)), e=draw(st.integers(0, 1)),
        m=draw(st.integers(0, 1)), d=draw(st.integers(0, 1)),
        max_hop_cnt=draw(st.integers(0, 255)), remaining_hop_cnt=draw(st.integers(0, 255)),
        int_dscp=draw(st.integers(0, 63)), npt=npt, orig_proto=draw(st.sampled_from([6, 17])),
        domain_id=draw(st.integers(0, 0xFFFF)), ds_instructions=draw(st.integers(0, 0xFFFF)),
        ds_flags=draw(st.integers(0, 0xFFFF)), payload=draw(st.binary(max_size=12)))


@pytest.mark.parametrize("tr", [0, 1, 2])
def test_random_reports_round_trip(tr: int) -> None:
    @settings(max_examples=ROUNDTRIP_EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(report_specs(tr))
    def round_trip(spec: ReportSpec) -> None:
        assert parse_report(build(spec), PORT_SIGNAL) == expected(spec)

    round_trip()


@settings(max_examples=300, deadline=None, database=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_raise(data: bytes) -> None:
    got = parse_report(data)
    assert isinstance(got, ParsedReport) or got.reason in REASONS


_MUTATION_BASES = [build(full_spec(tr, intv, 2)) for tr, intv in COMBOS]


@settings(max_examples=300, deadline=None, database=None)
@given(st.sampled_from(_MUTATION_BASES), st.lists(st.tuples(st.integers(0, 400),
                                                            st.integers(0, 255)), max_size=4),
       st.integers(0, 400))
def test_mutated_reports_never_raise(base: bytes, edits: list[tuple[int, int]], cut: int,
                                     ) -> None:
    data = bytearray(base)
    for pos, value in edits:
        data[pos % len(data)] = value
    for blob in (bytes(data), bytes(data[:cut])):
        got = parse_report(blob, PORT_SIGNAL)
        assert isinstance(got, ParsedReport) or got.reason in REASONS
        assert parse_batch([blob, blob], PORT_SIGNAL).result(1) == got


# --- rejections -------------------------------------------------------------------

def small_spec(tr: int) -> ReportSpec:
    intv = tr
    return full_spec(tr, intv, 2, instructions=0xC000)  # node id and L1 ports


@pytest.mark.parametrize("tr", [0, 1, 2])
def test_truncated_at_every_offset(tr: int) -> None:
    spec = small_spec(tr)
    data = build(spec)
    int_at = data.find(int_bytes(spec))
    fixed_int = 16 if tr == 2 else 12
    for cut in range(len(data)):
        got = parse_report(data[:cut])
        # TR v2.0's Report Length bounds the report: any cut is truncation. TR
        # v0.5 and v1.0 have no such length: past the fixed INT headers, the
        # stack the shim announces overflows what is left.
        overflow = tr != 2 and cut >= int_at + fixed_int
        assert got == Rejected("hops_overflow" if overflow else "truncated"), cut
    assert isinstance(parse_report(data), ParsedReport)


def patched(data: bytes, offset: int, value: int) -> bytes:
    return data[:offset] + bytes([value]) + data[offset + 1:]


def test_v10_header_length_disagreeing_with_rep_md_bits() -> None:
    data = build(full_spec(1, 1, 2, report_md={"hop_latency": 3}))
    assert data[0] == 0x15
    assert parse_report(patched(data, 0, 0x14)) == Rejected("bad_length")
    assert parse_report(patched(data, 0, 0x16)) == Rejected("bad_length")


def test_v20_lengths_that_disagree() -> None:
    data = build(full_spec(2, 2, 2, report_md={"hop_latency": 3}))
    words, md_words = data[9], data[10]
    assert md_words == 1
    assert parse_report(patched(data, 9, words + 1)) == Rejected("truncated")
    assert parse_report(patched(data, 9, words - 1)) == Rejected("coalesced")
    assert parse_report(patched(data, 10, 0)) == Rejected("bad_length")  # RepMdBits needs 1
    assert parse_report(patched(data, 10, words)) == Rejected("bad_length")  # past the report
    assert parse_report(data[:-2]) == Rejected("truncated")


@pytest.mark.parametrize("intv", [1, 2])
def test_shim_length_not_a_whole_number_of_hops(intv: int) -> None:
    spec = full_spec(1, intv, 3, payload=b"\x00" * 8)
    data = build(spec)
    shim = data.find(int_bytes(spec))
    length_at = shim + (1 if intv == 2 else 2)
    assert parse_report(patched(data, length_at, data[length_at] - 1)) == Rejected("bad_length")
    assert parse_report(patched(data, length_at, 2)) == Rejected("bad_length")  # < fixed headers


def test_v05_hop_count_against_the_shim_length() -> None:
    spec = full_spec(1, 0, 3)
    data = build(spec)
    total_at = data.find(int_bytes(spec)) + 7
    assert data[total_at] == 3
    assert parse_report(patched(data, total_at, 4)) == Rejected("hops_overflow")
    assert parse_report(patched(data, total_at, 200)) == Rejected("hops_overflow")
    assert parse_report(patched(data, total_at, 2)) == Rejected("bad_length")


@pytest.mark.parametrize(("tr", "intv"), [(0, 1), (1, 2), (2, 2), (2, 0)])
def test_shim_announcing_more_hops_than_the_bytes_left(tr: int, intv: int) -> None:
    spec = full_spec(tr, intv, 6)
    data = build(spec)
    length_at = data.find(int_bytes(spec)) + (1 if intv == 2 else 2)
    assert parse_report(patched(data, length_at, 250)) == Rejected("hops_overflow")


def test_unknown_versions() -> None:
    data = build(full_spec(2, 2, 2))
    for version in range(3, 16):
        assert parse_report(bytes([version << 4]) + data[1:]) == Rejected("unknown_version")
    spec = full_spec(1, 1, 2)
    data = build(spec)
    md_at = data.find(int_bytes(spec)) + 4
    assert parse_report(patched(data, md_at, 0x30 | data[md_at] & 0xF)) == Rejected(
        "unknown_version")


def test_hop_ml_disagreeing_with_the_bitmap() -> None:
    for intv, hop_ml in ((0, 7), (1, 9), (2, 11)):  # one word short of the instructions
        spec = full_spec(1, intv, 2, hop_ml=hop_ml)
        assert parse_report(build(spec)) == Rejected("bad_hop_ml"), intv
    assert parse_report(build(full_spec(1, 1, 2, hop_ml=13))) == Rejected("bad_hop_ml")


def test_bad_inner_headers() -> None:
    spec = full_spec(1, 1, 2, inner="ipv4")
    data = build(spec)
    assert parse_report(patched(data, 16, 0x44)) == Rejected("bad_length")  # IHL 4
    assert parse_report(patched(data, 16, 0x65)) == Rejected("bad_inner")
    tcp = build(full_spec(1, 1, 2, inner="ipv4", l4="tcp"))
    assert parse_report(patched(tcp, 16 + 20 + 12, 0x40)) == Rejected("bad_length")  # doff 4


def test_unsupported_contents() -> None:
    v20 = build(full_spec(2, 2, 2))
    assert parse_report(patched(v20, 8, 0x23)) == Rejected("unsupported_report_type")
    assert parse_report(patched(v20, 8, 0x15)) == Rejected("unsupported_inner")  # IPv6
    assert parse_report(patched(v20, 8, 0x11)) == Rejected("unsupported_inner")  # TLV
    v10 = build(full_spec(1, 1, 2))
    assert parse_report(patched(v10, 1, 0x40)) == Rejected("unsupported_inner")  # NProt 2
    assert parse_report(patched(v10, 16 + 12, 0x86)) == Rejected("unsupported_inner")
    spec = full_spec(1, 2, 2)
    data = build(spec)
    shim = data.find(int_bytes(spec))
    assert parse_report(patched(data, shim, 0x20)) == Rejected("unsupported_int_type")


def test_coalesced_reports_go_through_parse_packet() -> None:
    first, second = full_spec(2, 2, 2, seq=5), full_spec(2, 2, 6, seq=5)
    one, two = build(first), build(second)
    packet = one + two[8:]
    assert parse_report(packet) == Rejected("coalesced")
    assert parse_packet(packet) == [expected(first), expected(second)]
    assert parse_packet(one) == [expected(first)]
    assert parse_packet(packet[:-4]) == [expected(first), Rejected("truncated")]
    assert parse_packet(build(full_spec(1, 1, 2))) == [expected(full_spec(1, 1, 2))]


def test_stats_count_reasons() -> None:
    stats = ReportStats()
    for data in (build(full_spec(2, 2, 1)), b"", b"\xf0" * 20, b"\x20"):
        stats.add(parse_report(data))
    assert (stats.accepted, dict(stats.rejected)) == (1, {"truncated": 2,
                                                          "unknown_version": 1})
    assert stats.summary() == ("reports 4: accepted 1, rejected 3 "
                               "(truncated 2, unknown_version 1)")
    other = ReportStats(accepted=2)
    other.merge(stats)
    assert other.total == 6


# --- batches ----------------------------------------------------------------------

def mixed_batch() -> list[bytes]:
    rng = random.Random(5)
    out: list[bytes] = []
    for tr, intv in COMBOS:
        for hops in (0, 1, 6, 20):
            for seed in range(3):
                spec = full_spec(tr, intv, hops, seq=seed, l4=rng.choice(["udp", "tcp"]))
                spec.hops = random_hops(intv, spec.instructions, hops, seed=seed)
                out.append(build(spec))
    out += [build(small_spec(2))[:cut] for cut in range(0, 60, 3)]
    out += [bytes(rng.getrandbits(8) for _ in range(len(out[0]))) for _ in range(30)]
    out += [build(full_spec(2, 2, 6, by_port=True, dscp=0, npt=1))] * 3
    rng.shuffle(out)
    return out


@pytest.mark.parametrize("templates", [16, 1])
def test_batch_equals_per_report(monkeypatch: pytest.MonkeyPatch, templates: int) -> None:
    monkeypatch.setattr(reports, "_TEMPLATES_PER_LENGTH", templates)
    batch = mixed_batch()
    result = parse_batch(batch, PORT_SIGNAL)
    stats = ReportStats()
    for i, data in enumerate(batch):
        single = parse_report(data, PORT_SIGNAL)
        stats.add(single)
        assert result.result(i) == single, i
    assert result.stats == stats
    assert sum(len(g) for g in result.groups) + len(result.rejected) == len(batch)


def test_batch_columns() -> None:
    specs = [full_spec(2, 2, 6, seq=i) for i in range(5)]
    result = parse_batch([build(s) for s in specs])
    (group,) = result.groups
    assert group.consts["int.hop_count"] == 6 and group.consts["int.instructions"] == ALL_V20
    assert group.columns["hdr.seq"].tolist() == list(range(5))
    assert group.hops["node_id"].shape == (5, 6)
    assert group.hops["ingress_ts"].dtype == np.uint64
    assert group.hops["queue_occupancy"][0].tolist() == [
        h["queue_occupancy"] for h in specs[0].hops]


def test_batch_of_bytes_like_items() -> None:
    data = [build(full_spec(2, 2, 2, seq=i)) for i in range(3)]
    expect = [parse_report(d) for d in data]
    for items in ([bytearray(d) for d in data], [memoryview(d) for d in data],
                  [data[0], bytearray(data[1]), data[2]]):
        result = parse_batch(items)  # type: ignore[arg-type]
        assert [result.result(i) for i in range(3)] == expect


def test_batch_of_nothing_and_of_empty_reports() -> None:
    assert parse_batch([]).size == 0
    result = parse_batch([b"", b""])
    assert result.result(0) == Rejected("truncated") and result.stats.rejected["truncated"] == 2


def test_rows_read_in_place_from_a_capture_like_buffer() -> None:
    reports_ = [build(full_spec(2, 2, 6, seq=i)) for i in range(4)]
    length = len(reports_[0])
    record = 16 + length  # a pcap-like record header before each report
    buffer = b"".join(b"\xee" * 16 + r for r in reports_)
    rows = np.frombuffer(buffer, dtype=np.uint8).reshape(4, record)[:, 16:]
    result = parse_rows(rows)
    assert [result.result(i) for i in range(4)] == [parse_report(r) for r in reports_]
    with pytest.raises(ValueError):
        parse_rows(np.zeros(8, dtype=np.uint8))


def test_frame_helper_carries_the_payload() -> None:
    payload = build(full_spec(2, 2, 1))
    assert frame(payload).endswith(payload)


def bench_reports(count: int) -> list[bytes]:
    """``count`` distinct 6-hop TR v2.0 reports with all nine instruction
    bits: one Scapy-built report, its sequence numbers and stacks randomized."""
    spec = full_spec(2, 2, 6)
    template = build(spec)
    stack_at = template.find(int_bytes(spec)) + 16
    stack_bytes = 6 * 48
    rows = np.tile(np.frombuffer(template, dtype=np.uint8), (count, 1))
    rng = np.random.default_rng(7)
    rows[:, 2:4] = rng.integers(0, 256, (count, 2), dtype=np.uint8)
    rows[:, stack_at:stack_at + stack_bytes] = rng.integers(
        0, 256, (count, stack_bytes), dtype=np.uint8)
    return [row.tobytes() for row in rows]


def best_of(runs: int, work: Callable[[], object]) -> tuple[float, float]:
    """Shortest wall time and shortest CPU time of ``runs`` runs: the CPU
    time is the rate on one core when other processes share the machine."""
    wall = cpu = float("inf")
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        work()
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return wall, cpu


def test_batch_rate(capsys: pytest.CaptureFixture[str]) -> None:
    data = bench_reports(BENCH_REPORTS)
    rows = np.frombuffer(b"".join(data), dtype=np.uint8).reshape(len(data), -1)
    parse_batch(data[:1000])  # warm the caches
    result = parse_batch(data)
    singles = data[:20_000]
    parsed = [parse_report(d) for d in singles]
    assert len(result.groups) == 1 and not result.rejected
    for i in random.Random(1).sample(range(len(singles)), 500):
        assert result.result(i) == parsed[i]
    lines = []
    for label, count, work in (
            ("parse_batch (list of bytes)", BENCH_REPORTS, lambda: parse_batch(data)),
            ("parse_rows (2-D array)", BENCH_REPORTS, lambda: parse_rows(rows)),
            ("parse_report", len(singles), lambda: [parse_report(d) for d in singles])):
        wall, cpu = best_of(3, work)
        lines.append(f"  {label:28} {count / wall:>12,.0f} reports/s wall, "
                     f"{count / cpu:>12,.0f} reports/s CPU")
    with capsys.disabled():
        print(f"\n{BENCH_REPORTS:,} 6-hop TR v2.0 reports, 9 instructions:", *lines, sep="\n")


@pytest.mark.parametrize("stride", [0, 8, 3])
def test_batch_layout_checks_equal_the_per_report_check(stride: int) -> None:
    """The batch path tests a plan's bytes as 8-byte words when the rows
    allow it (length and stride multiples of 8) and byte by byte otherwise;
    both must agree with the per-report check on reports corrupted in the
    tested bytes and elsewhere."""
    rows, _ = bench_generate(400)
    plan = reports._known_plan(rows[0].tobytes(), reports.DEFAULT_SIGNAL)
    check = plan.check()
    rng = np.random.default_rng(stride)
    bad = rows.copy()
    for row in range(0, len(bad), 3):
        at = int(rng.choice(check.index)) if row % 2 else int(rng.integers(0, bad.shape[1]))
        bad[row, at] ^= np.uint8(1 << int(rng.integers(0, 8)))
    if stride:  # rows inside a wider buffer, as the receiver's slots are
        buffer = np.zeros((len(bad), bad.shape[1] + stride), dtype=np.uint8)
        buffer[:, :bad.shape[1]] = bad
        bad = buffer[:, :bad.shape[1]]
    want = [check.passes(row.tobytes()) for row in bad]
    assert check.passes_rows(bad).tolist() == want
    assert 0 < sum(want) < len(want)
