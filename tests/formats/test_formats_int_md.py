"""INT-MD and Telemetry Report as p4src/include/int_md_headers.p4 declares
them, against the Python code that reads or builds them:

- sinks/intcollector/reports.py: its constants, its per-hop item
  layouts (``_HOP_ITEMS``) and reports packed from the P4 field widths
  alone (TR v2.0 with INT-MD v2.0, TR v1.0 with INT v1.0, as int_md.p4's two
  report modes send them), parsed value by value;
- sinks/intcollector/synthetic.py: its offsets and template;
- orchestration/systems/pint_cc.py: the INT-MD v2.0 stack its receivers read;
- and the P4 headers against the specifications' layouts as
  tests/intcollector/report_builders.py writes them with Scapy (the layouts
  tests/intcollector checks the parser against), so P4, spec and parser
  are held to one another.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

import pytest
from p4headers import Header, describe_bits, ipv4, program, spec_fields
from scapy.packet import Packet

from orchestration.systems import pint_cc
from sinks.intcollector import reports, synthetic
from sinks.intcollector.reports import IntSignal, ParsedReport, parse_report
from tests.intcollector import report_builders as spec

P4 = program("int_md")
H = P4.header
ETH, IP, UDP = H("ethernet_t"), H("ipv4_t"), H("udp_t")
SHIM, SHIM_V1, MD, MD_DS = H("int_shim_t"), H("int_shim_v1_t"), H("int_md_t"), H("int_md_ds_t")
GROUP, REPORT, CONTENTS, TR1 = H("tr2_group_t"), H("tr2_report_t"), H("tr2_int_t"), H("tr1_t")
WORD = H("int_word_t")


def hop_headers(version: int) -> dict[int, Header]:
    """Instruction bit (0 = the bitmap's MSB) -> the P4 header a hop pushes
    for it: headers_t's hop_* members in order (the deparser's order), the
    32-bit timestamps for v1.0 and the 64-bit ones for v2.0."""
    members = [m for m in P4.members("headers_t") if m.name.startswith("hop_")]
    v1 = {m.name[:-3] for m in members if m.name.endswith("_v1")}
    if version == reports.INT_V20:
        chosen = [m for m in members if not m.name.endswith("_v1")]
    else:
        chosen = [m for m in members if m.name not in v1]
    return {bit: H(m.type) for bit, m in enumerate(chosen)}


COVERS = {(h.file, h.name) for h in (
    ETH, IP, UDP, SHIM, SHIM_V1, MD, MD_DS, GROUP, REPORT, CONTENTS, TR1, WORD,
    *hop_headers(reports.INT_V10).values(), *hop_headers(reports.INT_V20).values())}
"""The P4 headers this module checks a Python parser against (test_formats_coverage)."""

# Python's per-hop field names -> the P4 field they hold.
HOP_FIELD = {"node_id": "node_id", "l1_ingress_port": "ingress_port",
             "l1_egress_port": "egress_port", "hop_latency": "hop_latency",
             "queue_id": "queue_id", "queue_occupancy": "occupancy", "ingress_ts": "ts",
             "egress_ts": "ts", "l2_ingress_port": "ingress_port",
             "l2_egress_port": "egress_port", "egress_tx_util": "util",
             "buffer_id": "buffer_id", "buffer_occupancy": "occupancy"}


def test_hop_headers_follow_the_instruction_bits() -> None:
    assert [h.name for h in hop_headers(reports.INT_V20).values()] == [
        "int_node_id_t", "int_l1_ports_t", "int_hop_latency_t", "int_queue_t", "int_ts64_t",
        "int_ts64_t", "int_l2_ports_t", "int_tx_util_t", "int_buffer_t"]
    assert [h.name for h in hop_headers(reports.INT_V10).values()][4:6] == [
        "int_ts32_t", "int_ts32_t"]


def test_constants_are_the_p4_programs() -> None:
    assert (P4.const("TR_VERSION_1"), P4.const("TR_VERSION_2")) == (reports.TR_V10, reports.TR_V20)
    assert (P4.const("INT_VERSION_1"), P4.const("INT_VERSION_2")) == (
        reports.INT_V10, reports.INT_V20)
    assert reports.INT_TYPE_MD == P4.const("INT_TYPE_MD") == P4.const("INT_TYPE_HOP_BY_HOP")
    assert P4.const("TR2_REPORT_LENGTH_TO_END") == reports.TR20_REPORT_LENGTH_TO_END
    assert reports.DEFAULT_SIGNAL.dscp == P4.const("INT_DSCP")
    assert reports.DEFAULT_SIGNAL.dscp_mask == IP.field("dscp").mask
    assert (P4.const("ETHERTYPE_IPV4"), P4.const("IPPROTO_TCP"), P4.const("IPPROTO_UDP")) == (
        reports.ETHERTYPE_IPV4, reports.IPPROTO_TCP, reports.IPPROTO_UDP)
    assert GROUP.size + REPORT.size + CONTENTS.size == P4.const("TR2_BYTES")
    assert TR1.size == P4.const("TR1_BYTES")


@pytest.mark.parametrize("version", [reports.INT_V10, reports.INT_V20])
def test_parser_hop_items_are_the_p4_hop_headers(version: int) -> None:
    """Every hop header the program pushes is one item of the parser's, of
    its width, with every P4 field decoded from its own bits."""
    items = reports._HOP_ITEMS[version]
    for bit, header in hop_headers(version).items():
        if version == reports.INT_V10 and bit not in items:
            # v1.0 has no bit 8: the parser skips the word, which is the
            # buffer item's 4 bytes the program writes
            assert (bit, header.size) == (8, 4)
            continue
        width, fields = items[bit]
        assert width == header.size, (bit, header.name)
        got = dict(zip((f[0] for f in fields), spec_fields(
            ((rel, size, shift, mask) for _, rel, size, shift, mask in fields), header)))
        assert got == {name: HOP_FIELD[name] for name in got}, (bit, header.name)
        assert sorted(got.values()) == sorted(header.names), (bit, header.name)


def test_stack_words_are_the_parsers_word() -> None:
    """The program carries upstream hops' metadata as int_word_t words, and
    the shim length and Hop ML count words: the parser's 4-byte unit."""
    assert WORD.layout == (("w", 32),)
    for version in (reports.INT_V10, reports.INT_V20):
        for header in hop_headers(version).values():
            assert header.size % WORD.size == 0, header.name
    assert SHIM.size == SHIM_V1.size == WORD.size
    assert (MD.size + MD_DS.size) % WORD.size == 0
    assert WORD.size * synthetic.HOP_WORDS == synthetic.HOP_BYTES
    # the stack holds all an 8-bit shim length can announce after the fixed headers
    fixed = (MD.size + MD_DS.size) // WORD.size
    assert P4.member("headers_t", "int_words").stack == SHIM.field("len").mask - fixed


# ------------------------------------------------- reports as int_md.p4 sends

def _hop_values(rng: random.Random, version: int, bitmap: int,
                hops: int) -> tuple[bytes, list[dict[str, int]]]:
    """``hops`` hops of the bitmap's items from the P4 headers, with the
    values each hop carries under the parser's names."""
    headers = hop_headers(version)
    bits = [b for b in range(16) if bitmap >> (15 - b) & 1]
    stack, put = b"", []
    for _ in range(hops):
        values: dict[str, int] = {}
        for bit in bits:
            header = headers[bit]
            v = header.sample(rng)
            stack += header.pack(v)
            _, fields = reports._HOP_ITEMS[version].get(bit, (0, ()))
            for name, *_ in fields:
                values[name] = v[HOP_FIELD[name]]
        put.append(values)
    return stack, put


def _inner(rng: random.Random, int_bytes: bytes, payload: bytes) -> tuple[bytes, dict, dict]:
    udp = UDP.sample(rng, len=UDP.size + len(int_bytes) + len(payload))
    ip = IP.sample(rng, dscp=P4.const("INT_DSCP"), protocol=P4.const("IPPROTO_UDP"),
                   totalLen=IP.size + udp["len"])
    return ipv4(IP, **ip) + UDP.pack(udp) + int_bytes + payload, ip, udp


def _check_report(r: ParsedReport | reports.Rejected, ip: Mapping[str, int],
                  udp: Mapping[str, int], md: Mapping[str, int], hops: list[dict[str, int]],
                  hop_bytes: int) -> ParsedReport:
    assert isinstance(r, ParsedReport), r
    assert r.flow == (ip["srcAddr"], ip["dstAddr"], ip["protocol"], udp["srcPort"],
                      udp["dstPort"])
    assert r.inner_dscp == ip["dscp"]
    assert (r.int_version, r.instructions, r.hop_ml) == (md["ver"], md["instructions"],
                                                         md["hop_ml"])
    assert r.hop_ml * 4 == hop_bytes
    assert r.int_header["remaining_hop_cnt"] == md["remaining_hop_cnt"]
    assert r.hop_count == len(hops)
    assert [r.hop(i) for i in range(len(hops))] == hops
    return r


BITMAPS = [0x8000, 0xF000, 0x3500, 0xFF80]


@pytest.mark.parametrize("bitmap", BITMAPS)
def test_tr2_reports_packed_from_the_p4_widths_parse_value_by_value(bitmap: int) -> None:
    rng = random.Random(bitmap)
    for hops in (0, 1, 4):
        stack, put = _hop_values(rng, reports.INT_V20, bitmap, hops)
        hop_bytes = len(stack) // hops if hops else sum(
            h.size for b, h in hop_headers(reports.INT_V20).items() if bitmap >> (15 - b) & 1)
        md = MD.sample(rng, ver=P4.const("INT_VERSION_2"), flag8=0, rsvd=0,
                       hop_ml=hop_bytes // 4, instructions=bitmap)
        ds = MD_DS.sample(rng)
        words = (MD.size + MD_DS.size + len(stack)) // 4
        dscp = rng.getrandbits(6)
        shim = SHIM.sample(rng, int_type=P4.const("INT_TYPE_MD"), npt=P4.const("NPT_DSCP"),
                           len=words, npt_field=dscp << 2)
        int_bytes = SHIM.pack(shim) + MD.pack(md) + MD_DS.pack(ds) + stack
        inner, ip, udp = _inner(rng, int_bytes, bytes(rng.randrange(0, 9)))
        contents = CONTENTS.sample(rng, rep_md_bits=0)
        body = CONTENTS.pack(contents) + inner
        lengths = [P4.const("TR2_REPORT_LENGTH_TO_END")]
        if len(body) % 4 == 0:
            lengths.append(len(body) // 4)  # words after the individual header's first
        for length in lengths:
            group = GROUP.sample(rng, ver=P4.const("TR_VERSION_2"))
            report = REPORT.sample(rng, rep_type=P4.const("TR2_REP_TYPE_INT"),
                                   in_type=P4.const("TR2_IN_TYPE_IPV4"), report_length=length,
                                   md_length=0)
            r = _check_report(parse_report(GROUP.pack(group) + REPORT.pack(report) + body),
                              ip, udp, md, put, hop_bytes)
            assert (r.report_version, r.hw_id, r.seq, r.node_id) == (
                group["ver"], group["hw_id"], group["seq"], group["node_id"])
            assert (r.dropped, r.congested, r.tracked, r.intermediate) == (
                bool(report["d"]), bool(report["q"]), bool(report["f"]), bool(report["i"]))
            assert r.report_md == {"domain_specific_id": contents["domain_id"],
                                   "ds_md_bits": contents["ds_md_bits"],
                                   "ds_md_status": contents["ds_md_status"]}
            flags = md["flags"]  # D, E, M, reserved
            assert r.int_header == {
                "npt": P4.const("NPT_DSCP"), "dscp": dscp, "d": flags >> 3 & 1,
                "e": flags >> 2 & 1, "m": flags >> 1 & 1, "domain_id": md["domain_id"],
                "ds_instructions": ds["ds_instructions"], "ds_flags": ds["ds_flags"],
                "remaining_hop_cnt": md["remaining_hop_cnt"]}


@pytest.mark.parametrize("bitmap", BITMAPS[:3])
def test_tr1_reports_packed_from_the_p4_widths_parse_value_by_value(bitmap: int) -> None:
    rng = random.Random(bitmap + 1)
    for hops in (0, 2, 5):
        stack, put = _hop_values(rng, reports.INT_V10, bitmap, hops)
        hop_bytes = sum(h.size for b, h in hop_headers(reports.INT_V10).items()
                        if bitmap >> (15 - b) & 1)
        md = MD.sample(rng, ver=P4.const("INT_VERSION_1"), rsvd=0, hop_ml=hop_bytes // 4,
                       instructions=bitmap)
        shim = SHIM_V1.sample(rng, int_type=P4.const("INT_TYPE_HOP_BY_HOP"),
                              len=(SHIM_V1.size + MD.size + len(stack)) // 4)
        inner, ip, udp = _inner(rng, SHIM_V1.pack(shim) + MD.pack(md) + stack, b"")
        tr = TR1.sample(rng, ver=P4.const("TR_VERSION_1"), len=TR1.size // 4,
                        nprot=P4.const("TR1_NPROT_IPV4"), rep_md_bits=0)
        r = _check_report(parse_report(TR1.pack(tr) + inner), ip, udp, md, put, hop_bytes)
        assert (r.report_version, r.hw_id, r.node_id, r.seq, r.ingress_ts) == (
            tr["ver"], tr["hw_id"], tr["switch_id"], tr["seq"], tr["ingress_ts"])
        assert (r.dropped, r.congested, r.tracked) == (bool(tr["d"]), bool(tr["q"]),
                                                       bool(tr["f"]))
        flags = md["flags"]  # Rep (2), C, E; flag8 is M
        assert r.int_header == {
            "dscp": shim["dscp"], "rep": flags >> 2, "c": flags >> 1 & 1, "e": flags & 1,
            "m": md["flag8"], "remaining_hop_cnt": md["remaining_hop_cnt"]}


# ---------------------------------------------------------- the synthetic report

def test_synthetic_report_offsets_are_the_p4_headers() -> None:
    assert synthetic.GROUP + GROUP.size == synthetic.INDIVIDUAL
    assert synthetic.INDIVIDUAL + REPORT.size == synthetic.MAIN
    assert synthetic.IPV4 == synthetic.MAIN + CONTENTS.size == P4.const("TR2_BYTES")
    assert synthetic.IPV4 + IP.size == synthetic.UDP
    assert synthetic.UDP + UDP.size == synthetic.SHIM
    assert synthetic.SHIM + SHIM.size == synthetic.INT_HEADER
    assert synthetic.INT_HEADER + MD.size + MD_DS.size == synthetic.STACK
    assert P4.const("INT_DSCP") == synthetic.INT_DSCP
    headers = hop_headers(reports.INT_V20)
    assert sum(1 << (15 - b) for b in headers) == synthetic.INSTRUCTIONS
    assert sum(h.size for h in headers.values()) == synthetic.HOP_BYTES
    at, fields = 0, {}
    for header in headers.values():
        for f in header.fields:
            fields[(at + f.byte_offset, f.bits // 8)] = f.name
        at += header.size
    assert {name: fields[spot] for name, spot in synthetic.HOP_FIELDS.items()} == {
        name: HOP_FIELD[name] for name in synthetic.HOP_FIELDS}
    assert sorted(synthetic.HOP_FIELDS.values()) == sorted(fields)


def test_synthetic_template_unpacks_by_the_p4_widths() -> None:
    data = synthetic.template(3)
    group, report = GROUP.unpack(data), REPORT.unpack(data, synthetic.INDIVIDUAL)
    shim, md = SHIM.unpack(data, synthetic.SHIM), MD.unpack(data, synthetic.INT_HEADER)
    ip = IP.unpack(data, synthetic.IPV4)
    assert group["ver"] == P4.const("TR_VERSION_2")
    assert (report["rep_type"], report["in_type"]) == (P4.const("TR2_REP_TYPE_INT"),
                                                       P4.const("TR2_IN_TYPE_IPV4"))
    assert report["report_length"] * 4 + synthetic.INDIVIDUAL + REPORT.size == len(data)
    assert (ip["dscp"], ip["protocol"]) == (P4.const("INT_DSCP"), P4.const("IPPROTO_UDP"))
    assert (shim["int_type"], shim["npt"], shim["len"] * 4) == (
        P4.const("INT_TYPE_MD"), P4.const("NPT_DSCP"), len(data) - synthetic.INT_HEADER)
    assert (md["ver"], md["hop_ml"], md["instructions"]) == (
        P4.const("INT_VERSION_2"), synthetic.HOP_WORDS, synthetic.INSTRUCTIONS)
    assert isinstance(parse_report(data), ParsedReport)


# ------------------------------------------------------- pint_cc's INT receivers

def test_pint_cc_int_constants_are_the_p4_programs() -> None:
    assert P4.const("INT_DSCP") == pint_cc.INT_DSCP
    headers = hop_headers(reports.INT_V20)
    bits = [b for b in range(16) if pint_cc.INT_INSTRUCTIONS >> (15 - b) & 1]
    assert [headers[b].name for b in bits] == [
        "int_hop_latency_t", "int_queue_t", "int_ts64_t", "int_tx_util_t"]  # int_hops' order
    assert sum(headers[b].size for b in bits) == pint_cc.INT_HOP_BYTES


def test_pint_cc_reads_int_md_frames_packed_from_the_p4_widths() -> None:
    rng = random.Random(9)
    bits = [b for b in range(16) if pint_cc.INT_INSTRUCTIONS >> (15 - b) & 1]
    headers = hop_headers(reports.INT_V20)
    for hops in (1, 3):
        stack, put = b"", []
        for _ in range(hops):
            v = [headers[b].sample(rng) for b in bits]
            stack += b"".join(headers[b].pack(x) for b, x in zip(bits, v))
            put.append((v[0]["hop_latency"], v[1]["occupancy"], v[2]["ts"]))
        md = MD.sample(rng, ver=2, hop_ml=pint_cc.INT_HOP_BYTES // 4,
                       instructions=pint_cc.INT_INSTRUCTIONS)
        shim = SHIM.pack(int_type=1, npt=0, len=(MD.size + MD_DS.size + len(stack)) // 4,
                         npt_field=0)
        payload = pint_cc.CC_HEADER.pack(1, 2, 3)
        inner, ip, udp = _inner(rng, shim + MD.pack(md) + MD_DS.pack() + stack, payload)
        frame = ETH.pack(etherType=P4.const("ETHERTYPE_IPV4")) + inner
        parsed = pint_cc.parse_udp(frame)
        assert parsed is not None
        assert (parsed.ttl, parsed.dport, parsed.payload, parsed.digest) == (
            ip["ttl"], udp["dstPort"], ETH.size + IP.size + UDP.size, None)
        got = pint_cc.int_stack(frame, parsed.payload)
        assert got is not None
        assert got == (stack, len(frame) - len(payload))
        assert pint_cc.int_hops(got[0]) == put[::-1]  # path order: the stack is newest first


# ------------------------------------------------ the P4 headers and the specs

def scapy_fields(cls: type[Packet], *headers: Header) -> dict[str, str]:
    """Each field of a Scapy layer (a spec's layout) as the P4 bits it sits
    on; the layer must be exactly the headers' size."""
    out, at = {}, 0
    for f in cls.fields_desc:
        bits = round(8 * f.sz)
        out[f.name] = describe_bits(at, bits, headers, parts=True)
        at += bits
    assert at == sum(h.bits for h in headers), cls.__name__
    return out


def test_tr_headers_are_the_specs() -> None:
    assert scapy_fields(spec.GroupHeaderV20, GROUP) == {
        "ver": "ver", "hw_id": "hw_id", "seq": "seq", "node_id": "node_id"}
    assert scapy_fields(spec.IndividualHeaderV20, REPORT) == {
        "rep_type": "rep_type", "in_type": "in_type", "report_length": "report_length",
        "md_length": "md_length", "d": "d", "q": "q", "f": "f", "i": "i", "rsvd": "rsvd"}
    assert scapy_fields(spec.IntContentsV20, CONTENTS) == {
        "rep_md_bits": "rep_md_bits", "domain_specific_id": "domain_id",
        "ds_md_bits": "ds_md_bits", "ds_md_status": "ds_md_status"}
    assert scapy_fields(spec.ReportV10, TR1) == {
        "ver": "ver", "length": "len", "nprot": "nprot", "rep_md_bits": "rep_md_bits",
        "reserved": "rsvd", "d": "d", "q": "q", "f": "f", "hw_id": "hw_id",
        "switch_id": "switch_id", "seq": "seq", "ingress_ts": "ingress_ts"}


def test_int_headers_are_the_specs() -> None:
    assert scapy_fields(spec.ShimV20, SHIM) == {
        "type": "int_type", "npt": "npt", "r": "rsvd", "length": "len",
        "npt_field": "npt_field"}
    assert scapy_fields(spec.ShimV10, SHIM_V1) == {
        "type": "int_type", "reserved": "rsvd1", "length": "len", "dscp": "dscp", "r": "rsvd2"}
    assert scapy_fields(spec.MetadataHeaderV20, MD, MD_DS) == {
        "ver": "int_md_t.ver", "d": "int_md_t.flags[3:3]", "e": "int_md_t.flags[2:2]",
        "m": "int_md_t.flags[1:1]",
        "reserved": "int_md_t.flags[0:0]+int_md_t.flag8+int_md_t.rsvd",
        "hop_ml": "int_md_t.hop_ml", "remaining_hop_cnt": "int_md_t.remaining_hop_cnt",
        "instructions": "int_md_t.instructions", "domain_id": "int_md_t.domain_id",
        "ds_instructions": "int_md_ds_t.ds_instructions", "ds_flags": "int_md_ds_t.ds_flags"}
    assert scapy_fields(spec.MetadataHeaderV10, MD) == {
        "ver": "ver", "rep": "flags[3:2]", "c": "flags[1:1]", "e": "flags[0:0]",
        "m": "flag8", "reserved": "rsvd", "hop_ml": "hop_ml",
        "remaining_hop_cnt": "remaining_hop_cnt", "instructions": "instructions",
        "reserved2": "domain_id"}
    # the flag bits int_md.p4 sets are the spec's D and E (v2.0) and E (v1.0)
    assert P4.const("V2_FLAG_D") == 1 << 3 and P4.const("V2_FLAG_E") == 1 << 2
    assert P4.const("V1_FLAG_E") == 1 << 0


@pytest.mark.parametrize("version", [reports.INT_V10, reports.INT_V20])
def test_hop_headers_are_the_specs_items(version: int) -> None:
    for bit, header in hop_headers(version).items():
        item = spec.INT_ITEMS[version].get(bit, spec.ReservedWord)
        labels = scapy_fields(item, header)
        assert {n: v for n, v in labels.items() if n in HOP_FIELD} == {
            n: HOP_FIELD[n] for n in labels if n in HOP_FIELD}, (bit, header.name)


def test_signal_default_reaches_the_int_of_a_p4_packet() -> None:
    """The parser's signal test reads the DSCP where ipv4_t has it."""
    rng = random.Random(2)
    stack, put = _hop_values(rng, reports.INT_V20, 0x8000, 1)
    md = MD.pack(ver=2, hop_ml=1, instructions=0x8000)
    shim = SHIM.pack(int_type=1, len=(MD.size + MD_DS.size + len(stack)) // 4)
    inner, _, _ = _inner(rng, shim + md + MD_DS.pack() + stack, b"")
    tr = TR1.pack(ver=1, len=4, nprot=P4.const("TR1_NPROT_IPV4"))
    assert parse_report(tr + inner).hop_count == 1
    other = IntSignal(dscp=P4.const("INT_DSCP") ^ 1)
    assert parse_report(tr + inner, other).hop_count == 0
