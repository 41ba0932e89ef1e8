"""Every file a command reads and every path it writes, refused in one line
before any work: bytes that are not UTF-8, missing files and directories,
unwritable suffixes, YAML errors on their own line, and STF tests as strict
as p4c's runner."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from intbed.cli import cli

REPO = Path(__file__).resolve().parents[1]
L3 = REPO / "p4src" / "l3_forward.p4"
L3_STF = REPO / "tests" / "p4" / "l3_forward.stf"
# Not UTF-8: 0xff never occurs in UTF-8, 0xc3 opens a two-byte sequence that
# "(" cannot continue.
BAD_BYTES = b"\xff\xc3("


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), prog_name="intbed")
    return result.exit_code, result.stdout, result.stderr


def with_bad_bytes(path: Path, text: str, line: int, col: int) -> Path:
    """``text`` with BAD_BYTES inserted at 1-based ``line``/``col``."""
    lines = text.encode().split(b"\n")
    lines[line - 1] = lines[line - 1][:col - 1] + BAD_BYTES + lines[line - 1][col - 1:]
    path.write_bytes(b"\n".join(lines))
    return path


# ------------------------------------------------------------------ UTF-8


def test_p4_source_not_utf8_is_located(tmp_path: Path) -> None:
    bad = with_bad_bytes(tmp_path / "bad.p4", L3.read_text(), 4, 5)
    for command in ("check", "info"):
        code, out, err = run("p4", command, str(bad))
        assert (code, out) == (1, "")
        assert err == (f"{bad}:4:5: error: P4 source is not UTF-8 text: byte 0xff cannot "
                       "start or continue a character; is this the right file?\n")


def test_included_file_not_utf8_is_located_in_the_include(tmp_path: Path) -> None:
    (tmp_path / "main.p4").write_text('#include "consts.p4"\nconst bit<8> A = B;\n')
    with_bad_bytes(tmp_path / "consts.p4", "// constants\n// more\nconst bit<8> B = 1;\n",
                   2, 4)
    code, out, err = run("p4", "check", str(tmp_path / "main.p4"))
    assert (code, out) == (1, "")
    assert err.startswith(f"{tmp_path / 'consts.p4'}:2: error: P4 source is not UTF-8 text")


def test_stf_not_utf8_is_located(tmp_path: Path) -> None:
    bad = with_bad_bytes(tmp_path / "bad.stf", L3_STF.read_text(), 17, 1)
    code, out, err = run("p4", "stf", str(L3), str(bad))
    assert (code, out) == (1, "")
    assert err.startswith(f"{bad}:17:1: error: STF file is not UTF-8 text: byte 0xff")


def test_random_binary_stf_is_one_line(tmp_path: Path) -> None:
    binary = tmp_path / "capture.pcap"
    binary.write_bytes(bytes.fromhex("d4c3b2a102000400") + bytes(range(256)))
    code, out, err = run("p4", "stf", str(L3), str(binary))
    assert (code, out) == (1, "")
    assert err.count("\n") == 1 and ": error: STF file is not UTF-8 text" in err


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_topology_file_not_utf8_is_located(tmp_path: Path, suffix: str) -> None:
    text = ("switches:\n  - {name: s1}\nhosts:\n  - {name: h1}\nlinks:\n"
            "  - {a: h1, b: s1}\n")
    bad = with_bad_bytes(tmp_path / f"t{suffix}", text, 4, 11)
    code, out, err = run("topo", "show", str(bad))
    assert (code, out) == (1, "")
    assert err.startswith(f"{bad}:4:11: error: topology file is not UTF-8 text: byte 0xff")


def test_resume_with_a_config_json_that_is_not_text(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_bytes(BAD_BYTES * 10)
    code, out, err = run("run", "intlabel-fig21", "--out", str(tmp_path), "--resume")
    assert (code, out) == (1, "")
    assert err.count("\n") == 1 and "config.json" in err and "Traceback" not in err
    assert (tmp_path / "config.json").read_bytes() == BAD_BYTES * 10


# ------------------------------------------------------------------ output paths


@pytest.mark.parametrize(("args", "expected"), [
    (["topo", "show", "intlabel-fabric", "--png", "/nonexistent-dir/x.png"],
     "--png: error: /nonexistent-dir/x.png: directory /nonexistent-dir does not exist"),
    (["topo", "show", "intlabel-fabric", "--png", "out.txt"],
     "--png: error: out.txt: cannot draw a '.txt' file; use one of "),
    (["topo", "save", "intlabel-fabric", "-o", "/missing-dir/x.yaml"],
     "--output: error: /missing-dir/x.yaml: directory /missing-dir does not exist"),
])
def test_output_paths_are_checked_before_any_work(args: list[str], expected: str,
                                                  tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(*args)
    assert (code, out) == (1, "")  # no summary printed before the refusal
    assert err.startswith(expected) and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_output_to_a_read_only_directory(tmp_path: Path) -> None:
    import os

    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    if os.access(locked, os.W_OK):
        pytest.skip("running as a user that writes anywhere; permission cannot be refused")
    code, out, err = run("topo", "save", "line", "-o", str(locked / "t.yaml"))
    assert (code, out) == (1, "") and "not writable" in err


def test_good_output_paths_still_work(tmp_path: Path) -> None:
    code, out, _ = run("topo", "save", "line", "--n", "3", "-o", str(tmp_path / "t.yaml"))
    assert code == 0 and (tmp_path / "t.yaml").is_file()
    code, out, _ = run("topo", "show", "line", "--n", "3", "--png", str(tmp_path / "t.svg"))
    assert code == 0 and (tmp_path / "t.svg").read_bytes().lstrip().startswith(b"<?xml")


# ------------------------------------------------------------------ topology files


@pytest.mark.parametrize("name", ["/no/such/dir/fabric.yaml", "fabric.yml", "sub/fabric"])
def test_missing_topology_path_is_no_such_file(name: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for args in (["topo", "show", name], ["sim", "ping", "--topo", name]):
        code, out, err = run(*args)
        assert (code, out) == (1, "")
        assert err.startswith(f"{name}: error: no such file"), err


def test_unclosed_bracket_is_reported_where_it_opens(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("switches:\n  - {name: s1}\nhosts:\n  - {name: h1\n"
                    "links:\n  - {a: h1, b: s1}\n")
    code, out, err = run("topo", "show", str(path))
    assert (code, out) == (1, "")
    assert err.startswith(f"{path}:4: error: YAML syntax: flow mapping not closed")


# ------------------------------------------------------------------ STF strictness


def stf_variant(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.stf"
    path.write_text(text)
    return path


def table_lines() -> str:
    return "".join(ln + "\n" for ln in L3_STF.read_text().splitlines()
                   if ln.startswith("add "))


def test_stf_without_packet_line_is_an_error(tmp_path: Path) -> None:
    for text in ("", "# only comments\n", table_lines(), table_lines() + "expect 3\n"):
        stf = stf_variant(tmp_path, text)
        code, out, err = run("p4", "stf", str(L3), str(stf))
        assert (code, out) == (1, "")
        assert err.startswith(f"{stf}: error: no 'packet' line"), text


def test_stf_cut_inside_an_expect_line_is_an_error(tmp_path: Path) -> None:
    text = L3_STF.read_text()
    first_expect = text.index("\nexpect 3 ") + 1
    # Cut after an odd number of hex digits: the last byte of the line is half there.
    cut = text[:first_expect] + "expect 3 00000000000c 000000000101 0800 450"
    stf = stf_variant(tmp_path, cut)
    line = cut.count("\n") + 1
    code, out, err = run("p4", "stf", str(L3), str(stf))
    assert (code, out) == (1, "")
    assert err.startswith(f"{stf}:{line}: error: expected data has an odd number of hex "
                          "digits (31)")


@pytest.mark.parametrize(("command", "port"), [
    ("packet 512 00", 512), ("expect 600 00", 600), ("packet 70000 00", 70000),
    ("mc_node_create 0 1 512", 512), ("mirroring_add 5 1024", 1024)])
def test_stf_ports_must_fit_nine_bits(tmp_path: Path, command: str, port: int) -> None:
    stf = stf_variant(tmp_path, "packet 0 00\n" + command + "\n")
    code, out, err = run("p4", "stf", str(L3), str(stf))
    assert (code, out) == (1, "")
    assert err.startswith(f"{stf}:2: error: ")
    assert f"port {port} does not fit v1model's 9-bit port number (0..511)" in err


def test_pass_line_counts_packets(tmp_path: Path) -> None:
    text = L3_STF.read_text()
    sent = sum(1 for ln in text.splitlines() if ln.startswith("packet "))
    expected = sum(1 for ln in text.splitlines() if ln.startswith("expect "))
    assert run("p4", "stf", str(L3), str(L3_STF)) == (
        0, f"PASS l3_forward: {sent} packets in, {expected} expected out, 0 unexpected\n", "")


def test_packets_to_ports_the_test_never_names_are_counted(tmp_path: Path) -> None:
    # 10.1.2.3 goes out of port 3 (the /32 route); nothing observes port 3.
    lines = L3_STF.read_text().splitlines()
    packet = next(ln for ln in lines if ln.startswith("packet 0 ") and "0a010203" in ln)
    stf = stf_variant(tmp_path, table_lines() + packet + "\n")
    assert run("p4", "stf", str(L3), str(stf)) == (
        0, "PASS l3_forward: 1 packet in, 0 expected out, 1 unexpected\n", "")


def test_control_character_in_topology_is_located(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_bytes(b"switches:\n  - {name: s\x001}\n")
    code, out, err = run("topo", "show", str(path))
    assert (code, out) == (1, "")
    assert err == (f"{path}:2:13: error: YAML: character U+0000 is not allowed in YAML "
                   "text; is this the right file?\n")


@pytest.mark.parametrize("extern", ["direct_counter() dc;", "counter(8) c;",
                                    "register<bit<8>>() r;"])
def test_extern_missing_constructor_arguments_is_one_line(tmp_path: Path, extern: str) -> None:
    path = tmp_path / "p.p4"
    path.write_text(
        "#include <core.p4>\n#include <v1model.p4>\nstruct H {}\nstruct M {}\n"
        "parser P(packet_in p, out H h, inout M m, inout standard_metadata_t s) {\n"
        "    state start { transition accept; } }\n"
        "control C(inout H h, inout M m) { apply {} }\n"
        "control I(inout H h, inout M m, inout standard_metadata_t s) {\n"
        f"    {extern}\n    apply {{}} }}\n"
        "control E(inout H h, inout M m, inout standard_metadata_t s) { apply {} }\n"
        "control D(packet_out p, in H h) { apply {} }\n"
        "V1Switch(P(), C(), I(), E(), C(), D()) main;\n")
    code, out, err = run("p4", "check", str(path))
    assert (code, out) == (1, "")
    assert err.startswith(f"{path}:9:")


def test_checksum_call_missing_an_argument_is_one_line(tmp_path: Path) -> None:
    lines = L3.read_text().splitlines(keepends=True)
    # Only the second of verify_checksum/update_checksum's uses, the update.
    at = [i for i, ln in enumerate(lines) if ln.strip() == "hdr.ipv4.hdrChecksum,"][-1]
    path = tmp_path / "p.p4"
    path.write_text("".join(lines[:at] + lines[at + 1:]))
    code, out, err = run("p4", "check", str(path))
    assert (code, out) == (1, "")
    assert err.startswith(f"{path}:") and ": error: " in err


def test_extern_call_in_a_program_without_main(tmp_path: Path) -> None:
    path = tmp_path / "p.p4"
    path.write_text("#include <core.p4>\n#include <v1model.p4>\n"
                    "control C(inout bit<8> x) {\n    register<bit<8>>(4) r;\n"
                    "    apply { r.read(x, 0); }\n}\n")
    code, out, err = run("p4", "check", str(path))
    assert code in (0, 1) and not err.startswith("internal error"), err
