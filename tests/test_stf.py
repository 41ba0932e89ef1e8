"""STF parsing, expectation matching, control-plane conversion and runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.errors import Loc, RuntimeConfigError, StfError
from dataplane.schema import (
    ActionInfo,
    ActionParamInfo,
    ActionRefInfo,
    MatchFieldInfo,
    ProgramSchema,
    TableInfo,
)
from dataplane.testing.stf import (
    Expect,
    McGroupCreate,
    McNodeAssociate,
    McNodeCreate,
    MirroringAdd,
    Packet,
    SetDefault,
    StfKey,
    TableAdd,
    Wait,
    apply_command,
    compare_outputs,
    find_conformance_cases,
    first_mismatch,
    parse_stf,
    parse_stf_text,
    run_conformance_case,
    run_stf,
)

# --- parsing ----------------------------------------------------------------------------------

GOOD = """\
# a comment line

packet 0 0102 03 04   # trailing comment
EXPECT 1 01 ** 0304 $
expect 2
add ingress.t 7 h.f:0x0a*  k : 5 ingress.set(port:3, v : 0x10) = A
setdefault t drop()
mirroring_add 5 3
mc_mgrp_create 1
mc_node_create 9 1 2 3
mc_node_associate 1 0
wait
"""


def loc(line: int) -> Loc:
    return Loc("t.stf", line)


def test_parse_every_command_keeps_its_line() -> None:
    assert parse_stf_text(GOOD, "t.stf") == [
        Packet(loc(3), 0, b"\x01\x02\x03\x04"),
        Expect(loc(4), 1, "01**0304", exact=True),
        Expect(loc(5), 2, None),
        TableAdd(
            loc(6),
            "ingress.t",
            (
                StfKey("h.f", 0x0A0, care_mask=0xFF0, care_bits=8, has_wildcards=True),
                StfKey("k", 5),
            ),
            "ingress.set",
            (("port", 3), ("v", 0x10)),
            priority=7,
        ),
        SetDefault(loc(7), "t", "drop", ()),
        MirroringAdd(loc(8), 5, 3),
        McGroupCreate(loc(9), 1),
        McNodeCreate(loc(10), 9, (1, 2, 3)),
        McNodeAssociate(loc(11), 1, 0),
        Wait(loc(12)),
    ]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("a:0x0a0b", StfKey("a", 0x0A0B, care_mask=0xFFFF, care_bits=16)),
        ("a:0b1*0", StfKey("a", 0b100, care_mask=0b101, care_bits=2, has_wildcards=True)),
        ("a:010", StfKey("a", 10)),
        ("a:0x0a&&&0xf0", StfKey("a", 0x0A, mask=0xF0)),
        ("a:0x0a000000/8", StfKey("a", 0x0A000000, prefix_len=8)),
        ("hdr.h$1.f:1", StfKey("hdr.h$1.f", 1)),
        ("h[0].$valid$:1", StfKey("h[0].$valid$", 1)),
    ],
)
def test_parse_key_values(text: str, key: StfKey) -> None:
    (cmd,) = parse_stf_text(f"add t {text} a()")
    assert isinstance(cmd, TableAdd)
    assert cmd.keys == (key,)
    assert cmd.priority is None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("packet x 00", "'packet' needs a decimal port number, got 'x'"),
        ("packet 0", "'packet' needs data"),
        ("packet 0 0g", "invalid character 'g' in packet data"),
        ("packet 0 012", "packet data has an odd number of hex digits (3)"),
        ("expect 1 01 $ 02", "invalid character '$' in expected data ('$' must end the line)"),
        ("expect", "'expect' needs a decimal port number, got 'nothing'"),
        ("add t k:1", "'add' needs an action call such as 'act(arg:1)'"),
        ("add t k a()", "a key must be NAME:VALUE, got 'k'"),
        ("add t k:0xzz a()", "invalid number '0xzz'"),
        ("add t k:1 a(x)", "an action argument must be NAME:VALUE, got 'x'"),
        ("add t k:1 a(x:1) junk", "unexpected text after the action: 'junk'"),
        ("add t k:0o7* a()", "'*' digits are allowed in hex and binary values only: '0o7*'"),
        ("add t-1 k:1 a()", "invalid table name 't-1'"),
        ("mirroring_add 1", "'mirroring_add' takes 2 number(s), got 1"),
        ("mc_node_create", "'mc_node_create' takes at least one number, got 0"),
        ("wait 3", "'wait' takes no arguments"),
        ("check_counter c(1)", "STF command 'check_counter' is not supported"),
        ("frobnicate 1", "unknown STF command 'frobnicate'"),
    ],
)
def test_malformed_line_is_located(line: str, message: str) -> None:
    text = f"# header\npacket 0 00\n{line}\nexpect 0 00\n"
    with pytest.raises(StfError) as info:
        parse_stf_text(text, "bad.stf")
    assert str(info.value) == f"bad.stf:3: error: {message}"
    assert info.value.loc == Loc("bad.stf", 3)


def test_parse_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "x.stf"
    path.write_text("packet 1 ab\n\nexpect 1 ab\n")
    assert parse_stf(path) == [
        Packet(Loc(str(path), 1), 1, b"\xab"),
        Expect(Loc(str(path), 3), 1, "AB"),
    ]
    with pytest.raises(StfError, match=r"missing\.stf: error: cannot read STF file"):
        parse_stf(tmp_path / "missing.stf")


def test_every_conformance_stf_parses(samples_dir: Path) -> None:
    files = sorted(samples_dir.glob("*.stf"))
    assert len(files) == 117
    for path in files:
        commands = parse_stf(path)
        lines = [ln.split("#", 1)[0].split() for ln in path.read_text().splitlines()]
        expects = sum(1 for words in lines if words and words[0].lower() == "expect")
        assert any(isinstance(c, Packet) for c in commands), path.name
        assert sum(isinstance(c, Expect) for c in commands) == expects, path.name


# --- matching ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nibbles", "exact", "data", "result"),
    [
        ("0102", False, b"\x01\x02", None),
        ("0102", False, b"\x01\x02\x03", None),  # extra bytes allowed without '$'
        ("0102", True, b"\x01\x02\x03", 4),  # ...but not with it
        ("0102", True, b"\x01\x02", None),
        ("0102", False, b"\x01", 2),  # packet too short
        ("0*0*", False, b"\x0f\x0e", None),  # '*' is one nibble
        ("0*0*", False, b"\x1f\x0e", 0),
        ("01*3", False, b"\x01\x24", 3),
        ("ab", False, b"\xab", None),
        ("AB", False, b"\xac", 1),
        (None, False, b"\x99\x98", None),  # expect PORT alone
    ],
)
def test_first_mismatch(nibbles: str | None, exact: bool, data: bytes, result: int | None) -> None:
    nibbles = nibbles.upper() if nibbles else nibbles
    assert first_mismatch(nibbles, exact, data) == result


def exp(port: int, nibbles: str | None, line: int = 1, exact: bool = False) -> Expect:
    return Expect(Loc("t.stf", line), port, nibbles, exact)


def test_compare_passes_per_port_in_order() -> None:
    expects = [exp(1, "AA"), exp(2, "BB"), exp(1, "A*"), exp(3, None)]
    outputs = {1: [b"\xaa", b"\xa7"], 2: [b"\xbb\x00"], 3: [b"\x01\x02"]}
    result = compare_outputs(expects, outputs, ports=[0])
    assert result.passed
    assert result.diff == ""
    assert result.outputs == outputs


def test_compare_order_within_a_port_matters() -> None:
    result = compare_outputs([exp(1, "AA", 3), exp(1, "BB", 4)], {1: [b"\xbb", b"\xaa"]})
    assert not result.passed
    assert result.reason == "port 1: packet 0 differs at byte 0 (line 3)"


def test_compare_counts_must_be_exact() -> None:
    extra = compare_outputs([exp(1, "AA")], {1: [b"\xaa", b"\xaa"]})
    missing = compare_outputs([exp(1, "AA"), exp(1, None)], {1: [b"\xaa"]})
    assert (extra.passed, missing.passed) == (False, False)
    assert extra.reason == "port 1: expected 1 packet(s), got 2"
    assert missing.reason == "port 1: expected 2 packet(s), got 1"


def test_observed_port_without_expect_must_stay_silent() -> None:
    result = compare_outputs([exp(1, "AA")], {1: [b"\xaa"], 0: [b"\x01"]}, ports=[0, 1])
    assert not result.passed
    assert result.reason == "port 0: expected 0 packet(s), got 1"
    # A port named by no packet or expect line is not observed, as under bmv2stf.
    assert compare_outputs([exp(1, "AA")], {1: [b"\xaa"], 7: [b"\x01"]}, ports=[0]).passed


def test_diff_shows_hex_and_marks_first_differing_byte() -> None:
    expects = [exp(2, "0001020304", 5, exact=True), exp(2, "FF", 6), exp(4, "10", 7)]
    outputs = {2: [b"\x00\x01\x02\x09\x04"], 4: [b"\x10", b"\x11"]}
    result = compare_outputs(expects, outputs)
    assert result.diff.splitlines() == [
        "port 2: expected 2 packet(s), got 1 (and 1 more port(s) differ)",
        "port 2:",
        "  #0 differs at byte 3 (line 5)",
        "    expected: 00 01 02 03 04 $",
        "    actual:   00 01 02 09 04",
        "                       ^^",
        "  #1 missing (line 6)",
        "    expected: FF",
        "port 4:",
        "  #0 ok (line 7)",
        "    expected: 10",
        "    actual:   10",
        "  #1 unexpected",
        "    actual:   11",
    ]


# --- control-plane commands -------------------------------------------------------------------


def make_schema() -> ProgramSchema:
    fields = [
        MatchFieldInfo("hdr.h.f", 16, "ternary", 1),
        MatchFieldInfo("hdr.ipv4.dstAddr", 32, "lpm", 2),
        MatchFieldInfo("hdr.h.$valid$", 1, "exact", 3),
        MatchFieldInfo("meta.idx", 8, "exact", 4),
    ]
    table = TableInfo(
        "ingress.t",
        fields,
        [ActionRefInfo("ingress.fwd"), ActionRefInfo("ingress.drop"), ActionRefInfo("NoAction")],
        "NoAction",
    )
    other = TableInfo("egress.t2", [], [ActionRefInfo("egress.drop")], "egress.drop")
    actions = [
        ActionInfo("ingress.fwd", [ActionParamInfo("port", 9, 1)]),
        ActionInfo("ingress.drop", []),
        ActionInfo("egress.drop", []),
        ActionInfo("NoAction", []),
    ]
    return ProgramSchema(tables=[table, other], actions=actions)


class RecordingSwitch:
    """Records control-plane calls; refuses priorities above 100."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def table_add(
        self, table: str, matches: dict, action: str, args: dict, priority: int | None
    ) -> None:
        if priority is not None and priority > 100:
            raise RuntimeConfigError("priority too large")
        self.calls.append(("table_add", table, matches, action, args, priority))

    def table_set_default(self, table: str, action: str, args: dict) -> None:
        self.calls.append(("table_set_default", table, action, args))

    def mirroring_add(self, session: int, port: int) -> None:
        self.calls.append(("mirroring_add", session, port))

    def mc_group_create(self, group: int) -> None:
        self.calls.append(("mc_group_create", group))

    def mc_node_create(self, rid: int, ports: tuple[int, ...]) -> int:
        self.calls.append(("mc_node_create", rid, tuple(ports)))
        return 0

    def mc_node_associate(self, group: int, node: int) -> None:
        self.calls.append(("mc_node_associate", group, node))


def run_commands(text: str) -> list[tuple]:
    switch = RecordingSwitch()
    for cmd in parse_stf_text(text, "t.stf"):
        apply_command(switch, make_schema(), cmd)
    return switch.calls


def test_table_add_resolves_names_and_reads_literals_like_bmv2stf() -> None:
    from dataplane.runtime.tables import Exact, Lpm, Ternary

    calls = run_commands(
        "add t 10 h.f:0x0a dstAddr:0x0a01**** hdr.h.valid:1 idx:7 fwd(port:3)\n"
        "add ingress.t 100 f:0x1f&&&0x0f ipv4.dstAddr:0x0a010203/8 h.$valid:0 meta.idx:0 drop()\n"
    )
    assert calls == [
        (
            "table_add",
            "ingress.t",
            {
                "hdr.h.f": Ternary(0x0A, 0xFF),
                "hdr.ipv4.dstAddr": Lpm(0x0A010000, 16),
                "hdr.h.$valid$": Exact(1),
                "meta.idx": Exact(7),
            },
            "ingress.fwd",
            {"port": 3},
            10,
        ),
        (
            "table_add",
            "ingress.t",
            {
                "hdr.h.f": Ternary(0x0F, 0x0F),
                "hdr.ipv4.dstAddr": Lpm(0x0A000000, 8),
                "hdr.h.$valid$": Exact(0),
                "meta.idx": Exact(0),
            },
            "ingress.drop",
            {},
            100,
        ),
    ]


def test_other_control_commands() -> None:
    calls = run_commands(
        "setdefault t2 drop()\nmirroring_add 4 2\nmc_mgrp_create 3\n"
        "mc_node_create 5 1 2\nmc_node_associate 3 0\nwait\n"
    )
    assert calls == [
        ("table_set_default", "egress.t2", "egress.drop", {}),
        ("mirroring_add", 4, 2),
        ("mc_group_create", 3),
        ("mc_node_create", 5, (1, 2)),
        ("mc_node_associate", 3, 0),
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("add nope idx:1 drop()", "no table named 'nope' (known: egress.t2, ingress.t)"),
        (
            "add t idx:1 egress.drop()",
            "no action named 'egress.drop' in table ingress.t (known: NoAction, ingress.drop, "
            "ingress.fwd)",
        ),
        ("setdefault t fwd()", "action ingress.fwd needs parameter(s) port"),
        ("setdefault t fwd(port:1, q:2)", "action ingress.fwd has no parameter 'q'"),
        ("add t idx:0x1* drop()", "key meta.idx (exact): '*' digits are for ternary and lpm keys"),
        ("add t idx:1&&&1 drop()", "key meta.idx (exact): 'V&&&MASK' is for ternary keys"),
        ("add t 101 idx:1 drop()", "priority too large"),
    ],
)
def test_control_errors_are_located_at_the_stf_line(line: str, message: str) -> None:
    with pytest.raises(StfError) as info:
        run_commands(f"wait\n{line}\n")
    assert str(info.value) == f"t.stf:2: error: {message}"


def test_ambiguous_table_suffix() -> None:
    schema = make_schema()
    schema.tables.append(TableInfo("egress.t", [], [], "NoAction"))
    (cmd,) = parse_stf_text("setdefault t NoAction()", "t.stf")
    with pytest.raises(StfError, match="table name 't' is ambiguous: egress.t, ingress.t"):
        apply_command(RecordingSwitch(), schema, cmd)


# --- runs on the engine -----------------------------------------------------------------------


def test_conformance_sample_with_table_entries_passes(samples_dir: Path) -> None:
    from dataplane.compiler.pipeline import compile_file

    program = compile_file(samples_dir / "issue2153-bmv2.p4")
    result = run_stf(program, samples_dir / "issue2153-bmv2.stf")
    assert result.diff == ""
    assert result.passed
    # The entry for hdr.h.b == 0x55 sends the second packet to port 1 with hdr.h.a cleared.
    assert result.outputs == {
        0: [bytes.fromhex("111111111111222222222222 3333 FFEE".replace(" ", ""))],
        1: [bytes.fromhex("111111111111222222222222 3333 0055".replace(" ", ""))],
    }


def test_wrong_expectation_fails_with_diff(samples_dir: Path, tmp_path: Path) -> None:
    from dataplane.compiler.pipeline import compile_file

    stf = tmp_path / "wrong.stf"
    stf.write_text(
        "add simple_table hdr.h.b:0x55 do_something()\n"
        "packet 0 11 11 11 11 11 11 22 22 22 22 22 22 33 33 FF 55\n"
        "expect 1 11 11 11 11 11 11 22 22 22 22 22 22 33 33 FF 55\n"
    )
    result = run_stf(compile_file(samples_dir / "issue2153-bmv2.p4"), stf)
    assert not result.passed
    assert result.reason == "port 1: packet 0 differs at byte 14 (line 3)"
    assert "    actual:   11 11 11 11 11 11 22 22 22 22 22 22 33 33 00 55" in result.diff


def test_conformance_case_reports_compile_errors(tmp_path: Path) -> None:
    (tmp_path / "broken.p4").write_text("control c( {\n")
    (tmp_path / "broken.stf").write_text("packet 0 00\n")
    (tmp_path / "lonely.p4").write_text("")
    assert find_conformance_cases(tmp_path) == [tmp_path / "broken.p4"]
    name, passed, reason = run_conformance_case(tmp_path / "broken.p4")
    assert (name, passed) == ("broken", False)
    assert "broken.p4:1:" in reason
    assert ": error: " in reason
    assert "\n" not in reason


def test_diff_names_short_and_overlong_packets() -> None:
    short = compare_outputs([exp(1, "AABBCC", 2)], {1: [b"\xaa"]})
    long = compare_outputs([exp(1, "AA", 3, exact=True)], {1: [b"\xaa\xbb"]})
    assert short.reason == "port 1: packet 0 ends early, at byte 1 (line 2)"
    assert long.reason == "port 1: packet 0 goes on past the expected end ($), from byte 1 (line 3)"
    assert long.diff.splitlines()[2:] == [
        "  #0 goes on past the expected end ($), from byte 1 (line 3)",
        "    expected: AA $",
        "    actual:   AA BB",
        "                 ^^",
    ]
