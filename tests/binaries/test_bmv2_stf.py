"""orchestration.binaries.bmv2_stf: STF -> simple_switch_CLI translation, pcap files,
and whole runs against the fake p4c / simple_switch / simple_switch_CLI of
fakebin/ (a BMv2-like file-driven switch with a one-table program). Tests on
real BMv2 run only where p4c and BMv2 are installed."""

from __future__ import annotations

import os
import shutil
import stat
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from common.errors import IntbedError, StfError
from common.paths import PACKAGE_ROOT
from dataplane.testing.stf import parse_stf_text
from intbed.cli import cli
from orchestration.binaries.bmv2_stf import (
    Bmv2Program,
    Disagreement,
    available,
    bmv2_skip_reason,
    cli_command,
    compare_case,
    compare_engines,
    find_cases,
    main,
    pcap_header,
    pcap_record,
    read_pcap_frames,
    run_bmv2,
    run_stf_bmv2,
    switch_command,
)

HERE = Path(__file__).resolve().parent
FWD, FWD_STF = HERE / "fwd.p4", HERE / "fwd.stf"
FAST = {"quiet": 0.1, "settle_max": 2.0}
FRAME = bytes.fromhex("000000000002000000000001080001")

# A BMv2 JSON with every kind of key, as p4c names things.
PROGRAM = Bmv2Program.from_json({
    "header_types": [
        {"name": "standard_metadata", "fields": [["ingress_port", 9, False]]},
        {"name": "h_t", "fields": [["a", 16, False], ["b", 32, False], ["c", 8, False]]},
        {"name": "scalars_0", "fields": [["userMetadata.m", 12, False]]},
    ],
    "headers": [
        {"name": "standard_metadata", "header_type": "standard_metadata"},
        {"name": "h", "header_type": "h_t"},
        {"name": "scalars", "header_type": "scalars_0"},
    ],
    "actions": [
        {"name": "NoAction", "id": 0, "runtime_data": []},
        {"name": "ingress.set", "id": 1,
         "runtime_data": [{"name": "port", "bitwidth": 9}, {"name": "mac", "bitwidth": 48}]},
        {"name": "ingress.other.set", "id": 2, "runtime_data": []},
    ],
    "pipelines": [
        {"name": "ingress", "tables": [
            {"name": "ingress.t_tern", "match_type": "ternary", "action_ids": [0, 1],
             "key": [{"match_type": "exact", "name": "sm.ingress_port",
                      "target": ["standard_metadata", "ingress_port"]},
                     {"match_type": "ternary", "name": "hdr.h.a", "target": ["h", "a"]},
                     {"match_type": "exact", "name": "hdr.h.$valid$",
                      "target": ["h", "$valid$"]}]},
            {"name": "ingress.t_lpm", "match_type": "lpm", "action_ids": [0, 1],
             "key": [{"match_type": "lpm", "name": "hdr.h.b", "target": ["h", "b"]}]},
            {"name": "ingress.t_range", "match_type": "range", "action_ids": [0, 2],
             "key": [{"match_type": "range", "name": "meta.m",
                      "target": ["scalars", "userMetadata.m"]},
                     {"match_type": "exact", "name": "hdr.h.c", "target": ["h", "c"]}]},
        ]},
        {"name": "egress", "tables": [
            {"name": "egress.t_tern", "match_type": "exact", "action_ids": [0],
             "key": [{"match_type": "exact", "name": "hdr.h.c", "target": ["h", "c"]}]},
        ]},
    ],
})


def line_of(text: str) -> str | None:
    [cmd] = parse_stf_text(text, "t.stf")
    return cli_command(PROGRAM, cmd)


@pytest.mark.parametrize(("stf", "cli_line"), [
    # bmv2stf: keys in the table's order, left-out keys "don't care", 10000 - PRIO.
    ("add ingress.t_tern 5 hdr.h.a:0x0a sm.ingress_port:3 ingress.set(mac:0xa, port:1)",
     "table_add ingress.t_tern ingress.set 0x3 0xa&&&0xff 0 => 0x1 0xa 9995"),
    ("add ingress.t_tern h.a:0x1*3 set(port:2, mac:0)",
     "table_add ingress.t_tern ingress.set 0 0x103&&&0xf0f 0 => 0x2 0x0 9999"),
    ("add ingress.t_tern 1 hdr.h.a:0x0102&&&0xff00 hdr.h.valid:1 NoAction()",
     "table_add ingress.t_tern NoAction 0 0x100&&&0xff00 0x1 => 9999"),
    ("add ingress.t_tern 7 hdr.h.a:258 NoAction()",
     "table_add ingress.t_tern NoAction 0 0x102&&&0xffff 0 => 9993"),
    ("add t_lpm hdr.h.b:0x0a01**** ingress.set(port:511, mac:0xffffffffffff)",
     "table_add ingress.t_lpm ingress.set 0xa010000/16 => 0x1ff 0xffffffffffff"),
    ("add t_lpm hdr.h.b:0x0a0101ff/24 NoAction()",
     "table_add ingress.t_lpm NoAction 0xa010100/24 =>"),
    ("add t_lpm hdr.h.b:167837953 NoAction()",
     "table_add ingress.t_lpm NoAction 0xa010101/32 =>"),
    ("add t_range hdr.h.c:7 other.set()",
     "table_add ingress.t_range ingress.other.set 0->0xfff 0x7 => 9999"),
    ("setdefault egress.t_tern NoAction()", "table_set_default egress.t_tern NoAction"),
    ("setdefault t_lpm set(port:3, mac:0x010203040506)",
     "table_set_default ingress.t_lpm ingress.set 0x3 0x10203040506"),
    ("mirroring_add 5 7", "mirroring_add 5 7"),
    ("mc_mgrp_create 1113", "mc_mgrp_create 1113"),
    ("mc_node_create 5 0 3", "mc_node_create 5 0 3"),
    ("mc_node_associate 1113 0", "mc_node_associate 1113 0"),
    ("packet 0 00", None),
    ("expect 0", None),
    ("wait", None),
])
def test_translation(stf: str, cli_line: str | None) -> None:
    assert line_of(stf) == cli_line


@pytest.mark.parametrize(("stf", "message"), [
    ("add nothing NoAction()", "t.stf:1: error: no table named 'nothing' (known: "
     "egress.t_tern, ingress.t_lpm, ingress.t_range, ingress.t_tern)"),
    ("add t_tern NoAction()", "t.stf:1: error: table name 't_tern' is ambiguous: "
     "egress.t_tern, ingress.t_tern"),
    ("add t_lpm hdr.h.z:1 NoAction()", "t.stf:1: error: table ingress.t_lpm has no key field "
     "'hdr.h.z' (keys: hdr.h.b)"),
    ("add t_lpm hdr.h.b:1 ingress.set(port:1)",
     "t.stf:1: error: action ingress.set needs parameter(s) mac"),
    ("add t_lpm hdr.h.b:1 ingress.set(port:1, mac:2, vlan:3)",
     "t.stf:1: error: action ingress.set has no parameter 'vlan'"),
    ("add t_lpm hdr.h.b:1 drop()", "t.stf:1: error: no action named 'drop' in table "
     "ingress.t_lpm (known: NoAction, ingress.set)"),
    ("add t_lpm hdr.h.b:1&&&3 NoAction()",
     "t.stf:1: error: key hdr.h.b (lpm): 'V&&&MASK' is for ternary keys"),
    ("add t_range hdr.h.c:1/8 other.set()",
     "t.stf:1: error: key hdr.h.c (exact): 'V/LEN' is for lpm keys"),
    ("add t_range hdr.h.c:0x1* other.set()",
     "t.stf:1: error: key hdr.h.c (exact): '*' digits are for ternary and lpm keys"),
    ("add t_range hdr.h.c:1 c:2 other.set()",
     "t.stf:1: error: key field hdr.h.c is given twice"),
])
def test_translation_errors(stf: str, message: str) -> None:
    with pytest.raises(StfError) as err:
        line_of(stf)
    assert str(err.value) == message


def test_switch_command() -> None:
    assert switch_command("/c/fwd.json", [3, 1], 9123, 42) == [
        "simple_switch", "--log-file", "switch.log", "--log-flush", "--use-files", "0",
        "--thrift-port", "9123", "--device-id", "42", "-i", "1@pcap1", "-i", "3@pcap3",
        "/c/fwd.json"]


def test_pcap_files(tmp_path: Path) -> None:
    ours = tmp_path / "in.pcap"
    ours.write_bytes(pcap_header() + pcap_record(b"\x01\x02", 1_000_001) + pcap_record(b"", 2))
    data = ours.read_bytes()
    assert data[:24] == struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    assert data[24:40] == struct.pack("<IIII", 1, 1, 2, 2)
    assert read_pcap_frames(ours) == [b"\x01\x02", b""]
    # BMv2's outputs: link type 0, snaplen 0; big-endian and nanosecond files read too.
    bmv2 = tmp_path / "out.pcap"
    bmv2.write_bytes(struct.pack(">IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 0, 0)
                     + struct.pack(">IIII", 0, 5, 3, 3) + b"abc"
                     + struct.pack(">IIII", 0, 6, 9, 9) + b"cut")
    assert read_pcap_frames(bmv2) == [b"abc"]
    (tmp_path / "empty.pcap").write_bytes(b"")
    assert read_pcap_frames(tmp_path / "empty.pcap") == []
    (tmp_path / "junk.pcap").write_bytes(b"x" * 30)
    with pytest.raises(IntbedError, match="not a pcap file"):
        read_pcap_frames(tmp_path / "junk.pcap")


def processes_gone(tools) -> bool:
    for event in tools.events():
        if event["event"] == "start":
            try:
                os.kill(event["pid"], 0)
                return False
            except ProcessLookupError:
                pass
    return True


def test_run_on_the_fake_switch(fake_tools, tmp_path: Path) -> None:
    work = tmp_path / "work"
    run = run_bmv2(FWD, FWD_STF, cache_dir=tmp_path / "cache", workdir=work, **FAST)
    assert run.outputs == {1: [], 2: [FRAME[:-1] + b"\x03"], 3: [FRAME[:-1] + b"\x02"]}
    assert run.packet_ports == [1] and run.notes == []
    assert run.result().passed

    [start] = fake_tools.events("simple_switch")[:1]
    thrift = start["argv"][start["argv"].index("--thrift-port") + 1]
    json_path = next((tmp_path / "cache").glob("*/fwd.json"))
    assert start["argv"] == switch_command(json_path, [1, 2, 3], int(thrift), int(thrift))[1:]
    assert Path(start["cwd"]) == work
    cli_lines = [e["line"] for e in fake_tools.events("simple_switch_CLI") if "line" in e]
    assert cli_lines == ["table_set_default I.fwd I.set_port 0x3",
                         "table_add I.fwd I.set_port 0x1 => 0x2"]
    # The packet before setdefault was dropped: commands wait for earlier packets.
    assert (work / "switch.log").read_text().splitlines() == [
        f"packet {FRAME.hex()} in 1 out None",
        f"packet {FRAME[:-1].hex()}02 in 1 out 3",
        f"packet {FRAME[:-1].hex()}03 in 1 out 2",
    ]
    assert stat.S_ISFIFO((work / "pcap1_in.pcap").stat().st_mode)
    assert (work / "pcap2_in.pcap").read_bytes() == pcap_header()
    assert processes_gone(fake_tools)
    assert not Path(f"/tmp/bmv2-{thrift}-notifications.ipc").exists()


def test_failing_expectation_gives_the_stf_diff(fake_tools, tmp_path: Path) -> None:
    stf = tmp_path / "fwd.stf"
    stf.write_text(FWD_STF.read_text().replace("0800 03 $", "0800 04 $"))
    result = run_stf_bmv2(FWD, stf, cache_dir=tmp_path, **FAST)
    assert not result.passed
    assert result.reason == "port 2: packet 0 differs at byte 14 (line 10)"


def test_refused_command_is_located(fake_tools, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_THRIFT_ERROR", "table_add")
    with pytest.raises(StfError) as err:
        run_bmv2(FWD, FWD_STF, cache_dir=tmp_path, **FAST)
    assert str(err.value) == (
        f"{FWD_STF}:8: error: simple_switch_CLI refused 'table_add I.fwd I.set_port 0x1 => "
        "0x2': Error: fake refusal of table_add")
    assert processes_gone(fake_tools)


def test_unknown_names_fail_before_the_switch_starts(fake_tools, tmp_path: Path) -> None:
    stf = tmp_path / "bad.stf"
    stf.write_text("packet 1 00\nadd fwd ingress_port:1 set_port(prt:2)\n")
    with pytest.raises(StfError, match=r"bad.stf:2: error: action I.set_port has no "
                                       r"parameter 'prt'"):
        run_bmv2(FWD, stf, cache_dir=tmp_path, **FAST)
    assert fake_tools.events("simple_switch") == []


def test_switch_that_dies(fake_tools, tmp_path: Path, monkeypatch) -> None:
    fake_tools.add("simple_switch", "simple_switch_grpc")
    monkeypatch.setenv("FAKE_SWITCH_EXIT", "2")
    with pytest.raises(IntbedError) as err:
        run_bmv2(FWD, FWD_STF, cache_dir=tmp_path, **FAST)
    assert err.value.message == "simple_switch exited with status 2:\nfake switch: cannot start"


def test_cli_that_cannot_connect(fake_tools, tmp_path: Path) -> None:
    cli_path = fake_tools.bindir / "simple_switch_CLI"
    cli_path.write_text("#!/bin/sh\necho 'Could not connect to thrift client on port 1'\n"
                        "exit 1\n")
    with pytest.raises(IntbedError) as err:
        run_bmv2(FWD, FWD_STF, cache_dir=tmp_path, **FAST)
    assert err.value.message == (
        "simple_switch_CLI ended early: Could not connect to thrift client on port 1")
    assert processes_gone(fake_tools)


TWO_PORTS = """\
packet 1 000000000002 000000000001 0800 01
add fwd sm.ingress_port:1 set_port(port:2)
add fwd sm.ingress_port:4 set_port(port:2)
packet 4 000000000002 000000000001 0800 02
expect 2 000000000002 000000000001 0800 02
"""


def test_two_input_ports_reorder_like_bmv2(fake_tools, tmp_path: Path) -> None:
    """BMv2's file reader holds port 1's packet until port 4 has one: the entries
    added in between already apply to it. The run says so; the engines differ."""
    stf = tmp_path / "two.stf"
    stf.write_text(TWO_PORTS)
    cmp = compare_case(FWD, stf, cache_dir=tmp_path, **FAST)
    assert cmp.notes == ["control-plane commands follow packets on several input ports: "
                         "BMv2's file reader may apply them early"]
    assert cmp.intbed is not None and cmp.intbed.passed
    assert cmp.bmv2 is not None and cmp.bmv2.reason == "port 2: expected 1 packet(s), got 2"
    assert cmp.disagreements == [
        Disagreement("two.stf", 2, 0, FRAME[:-1] + b"\x02", FRAME),
        Disagreement("two.stf", 2, 1, None, FRAME[:-1] + b"\x02"),
    ]
    assert str(cmp.disagreements[1]) == (
        "two.stf: port 2 packet #1: intbed (nothing) / bmv2 000000000002000000000001080002")


def test_compare_engines(fake_tools, tmp_path: Path, monkeypatch) -> None:
    assert compare_engines(FWD, FWD_STF, cache_dir=tmp_path, **FAST) == []
    monkeypatch.setenv("FAKE_SWITCH_MANGLE", "1")
    assert compare_engines(FWD, FWD_STF, cache_dir=tmp_path, **FAST) == [
        Disagreement("fwd.stf", 2, 0, FRAME[:-1] + b"\x03", FRAME[:-1] + b"\xfc"),
        Disagreement("fwd.stf", 3, 0, FRAME[:-1] + b"\x02", FRAME[:-1] + b"\xfd"),
    ]


def test_compare_ignores_wildcard_nibbles(fake_tools, tmp_path: Path, monkeypatch) -> None:
    """Bytes an expect line leaves to ``*`` (a real clock's timestamps) do not count:
    the mangled last byte is a wildcard on port 2 and not on port 3."""
    stf = tmp_path / "wild.stf"
    stf.write_text(FWD_STF.read_text().replace("0800 03 $", "0800 ** $"))
    monkeypatch.setenv("FAKE_SWITCH_MANGLE", "1")
    assert compare_engines(FWD, stf, cache_dir=tmp_path, **FAST) == [
        Disagreement("wild.stf", 3, 0, FRAME[:-1] + b"\x02", FRAME[:-1] + b"\xfd"),
    ]


def test_compare_reports_an_engine_that_cannot_run(fake_tools, tmp_path: Path,
                                                   monkeypatch) -> None:
    monkeypatch.setenv("FAKE_P4C_STDERR", "fwd.p4(3): error: nope\n")
    [only] = compare_engines(FWD, FWD_STF, cache_dir=tmp_path, **FAST)
    assert only == Disagreement("fwd.stf", None, 0, None, None,
                                "bmv2: fwd.p4:3: error: p4c: nope")
    assert str(only) == "fwd.stf: bmv2: fwd.p4:3: error: p4c: nope"


def test_find_cases(tmp_path: Path) -> None:
    cases = find_cases([PACKAGE_ROOT / "tests" / "p4"])
    pairs = {stf.name: p4.relative_to(PACKAGE_ROOT).as_posix() for p4, stf in cases}
    assert pairs["clone.stf"] == "tests/p4/clone.p4"
    assert pairs["intlabel_pro.stf"] == "p4src/intlabel.p4"
    assert pairs["hula_tor.stf"] == "p4src/hula.p4"
    assert pairs["l3_forward.stf"] == "p4src/l3_forward.p4"
    (tmp_path / "orphan.stf").write_text("")
    with pytest.raises(IntbedError, match="no program for orphan.stf"):
        find_cases([tmp_path])


def test_main_lists_agreement_and_disagreement(fake_tools, tmp_path: Path, monkeypatch,
                                               capsys) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    shutil.copy(FWD, cases)
    shutil.copy(FWD_STF, cases)
    args = [str(cases), "--cache-dir", str(tmp_path / "cache")]
    assert main(args) == 0
    assert capsys.readouterr().out == (
        "AGREE fwd.stf (intbed PASS, bmv2 PASS)\n1 agree, 0 differ, 0 intbed-only\n")
    monkeypatch.setenv("FAKE_SWITCH_MANGLE", "1")
    assert main(args) == 1
    assert capsys.readouterr().out == (
        "DIFFER fwd.stf (intbed PASS, bmv2 FAIL (port 2: packet 0 differs at byte 14 "
        "(line 10) (and 1 more port(s) differ))): 2 packet(s)\n"
        "  fwd.stf: port 2 packet #0: intbed 000000000002000000000001080003 / "
        "bmv2 0000000000020000000000010800FC\n"
        "  fwd.stf: port 3 packet #0: intbed 000000000002000000000001080002 / "
        "bmv2 0000000000020000000000010800FD\n"
        "0 agree, 1 differ, 0 intbed-only\n")


def test_main_skips_without_bmv2(no_tools, capsys) -> None:
    assert main(["tests/p4"]) == 0
    assert capsys.readouterr().out == (
        "skipped: simple_switch not found on PATH (build BMv2 to run this)\n")


def test_cli_stf_target_bmv2(fake_tools, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    result = CliRunner().invoke(cli, ["p4", "stf", "--target", "bmv2", str(FWD), str(FWD_STF)])
    assert (result.exit_code, result.output) == (
        0, "PASS fwd: 3 packets in, 2 expected out, 0 unexpected\n")
    assert list((tmp_path / "intbed" / "p4c").glob("*/fwd.json"))
    monkeypatch.setenv("FAKE_SWITCH_MANGLE", "1")
    result = CliRunner().invoke(cli, ["p4", "stf", "--target", "bmv2", str(FWD), str(FWD_STF)])
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == "port 2: packet 0 differs at byte 14 (line 10) " \
                                            "(and 1 more port(s) differ)"


def test_cli_stf_target_bmv2_without_bmv2(no_tools) -> None:
    result = CliRunner().invoke(cli, ["p4", "stf", "--target", "bmv2", str(FWD), str(FWD_STF)])
    assert result.exit_code == 1
    assert result.output == "error: simple_switch not found on PATH (build BMv2 to run this)\n"


# --- real BMv2 ------------------------------------------------------------------------------

REAL = available()
# Tests marked "# bmv2: skip REASON" need the STF clock that reads 0
# (intbed's runner): on BMv2's real clock they must differ.
STF_FILES = [
    pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=bmv2_skip_reason(p)))
    if bmv2_skip_reason(p) else p
    for p in sorted((PACKAGE_ROOT / "tests" / "p4").glob("*.stf"))]


@pytest.mark.skipif(REAL is not None, reason=str(REAL))
@pytest.mark.parametrize("stf", STF_FILES, ids=lambda p: p.stem)
def test_real_bmv2_agrees_with_intbed(stf: Path) -> None:
    [(p4, _)] = find_cases([stf])
    cmp = compare_case(p4, stf)
    assert cmp.bmv2 is not None and cmp.bmv2.passed, cmp.bmv2.diff if cmp.bmv2 else cmp
    assert cmp.disagreements == []


def test_bmv2_skip_marker(tmp_path: Path) -> None:
    marked = tmp_path / "a.stf"
    marked.write_text("# bmv2: skip needs a clock that reads 0\n# more\npacket 0 00\n")
    plain = tmp_path / "b.stf"
    plain.write_text("# a comment\npacket 0 00\n# bmv2: skip too late to count\n")
    assert bmv2_skip_reason(marked) == "needs a clock that reads 0"
    assert bmv2_skip_reason(plain) is None
