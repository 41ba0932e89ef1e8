"""The ``intbed`` command line, driven through click's CliRunner."""

from __future__ import annotations

import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from common.errors import P4SemanticError
from intbed.cli import cli, main


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def pass_line(stf: Path) -> str:
    """The PASS line of a test whose every expected packet comes out, its
    counts read off the file's packet and expect lines."""
    words = [line.split(None, 1)[0].lower() for line in stf.read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    sent, expected = words.count("packet"), words.count("expect")
    noun = "packet" if sent == 1 else "packets"
    return f"PASS {stf.stem}: {sent} {noun} in, {expected} expected out, 0 unexpected"


def count_blocks(p4info_text: str, kind: str) -> int:
    return sum(1 for line in p4info_text.splitlines() if line == f"{kind} {{")


@pytest.mark.parametrize("name", ["issue2153-bmv2", "match-on-exprs-bmv2"])
def test_check_counts_tables_and_actions_as_p4c(samples_dir: Path, name: str) -> None:
    p4info = (samples_dir / f"{name}.p4info.txtpb").read_text()
    code, out, err = run("p4", "check", str(samples_dir / f"{name}.p4"))
    assert (code, err) == (0, "")
    tables, actions = count_blocks(p4info, "tables"), count_blocks(p4info, "actions")
    assert out == f"ok: {tables} tables, {actions} actions\n"


def test_info_prints_p4cs_p4info(samples_dir: Path) -> None:
    code, out, err = run("p4", "info", str(samples_dir / "issue2153-bmv2.p4"))
    assert (code, err) == (0, "")
    assert out == (samples_dir / "issue2153-bmv2.p4info.txtpb").read_text()


def test_stf_pass_and_fail(samples_dir: Path, tmp_path: Path) -> None:
    p4 = str(samples_dir / "issue2153-bmv2.p4")
    stf = samples_dir / "issue2153-bmv2.stf"
    assert run("p4", "stf", p4, str(stf)) == (0, pass_line(stf) + "\n", "")
    wrong = tmp_path / "wrong.stf"
    wrong.write_text("packet 0 11 11 11 11 11 11 22 22 22 22 22 22 33 33 FF EE\nexpect 1\n")
    code, out, err = run("p4", "stf", p4, str(wrong))
    assert (code, err) == (1, "")
    assert out.splitlines()[:2] == [
        "port 0: expected 0 packet(s), got 1 (and 1 more port(s) differ)",
        "port 0:",
    ]


def test_conformance_reports_each_sample_and_totals(samples_dir: Path, tmp_path: Path) -> None:
    for name in ("issue2153-bmv2", "match-on-exprs-bmv2"):
        for ext in (".p4", ".stf"):
            shutil.copy(samples_dir / (name + ext), tmp_path)  # into a temp dir, not the repo
    (tmp_path / "broken.p4").write_text("control c( {\n")
    (tmp_path / "broken.stf").write_text("packet 0 00\n")
    (tmp_path / "no-test.p4").write_text("")
    for jobs in ("1", "2"):
        code, out, err = run("p4", "conformance", str(tmp_path), "--jobs", jobs)
        lines = out.splitlines()
        assert (code, err) == (1, "")
        assert lines[0].startswith("FAIL broken: ") and "broken.p4:1:" in lines[0]
        assert lines[1:] == [
            pass_line(samples_dir / "issue2153-bmv2.stf"),
            pass_line(samples_dir / "match-on-exprs-bmv2.stf"), "2 passed, 1 failed"]


def test_conformance_all_pass_exits_zero(samples_dir: Path, tmp_path: Path) -> None:
    for ext in (".p4", ".stf"):
        shutil.copy(samples_dir / ("issue2153-bmv2" + ext), tmp_path)
    assert run("p4", "conformance", str(tmp_path)) == (
        0, pass_line(samples_dir / "issue2153-bmv2.stf") + "\n1 passed, 0 failed\n", "")


def test_compile_error_is_one_line_and_exit_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <core.p4>\ncontrol c() { apply { x = ; } }\n")
    code, out, err = run("p4", "check", str(bad))
    assert (code, out) == (1, "")
    assert err == f"{bad}:2:27: error: syntax error at ';': expected an expression\n"


def test_malformed_stf_is_one_line_and_exit_1(samples_dir: Path, tmp_path: Path) -> None:
    stf = tmp_path / "bad.stf"
    stf.write_text("packet 0 00\nexpect zero 00\n")
    code, out, err = run("p4", "stf", str(samples_dir / "arith1-bmv2.p4"), str(stf))
    assert (code, out) == (1, "")
    assert err == f"{stf}:2: error: 'expect' needs a decimal port number, got 'zero'\n"


def test_empty_conformance_dir_is_an_error(tmp_path: Path) -> None:
    assert run("p4", "conformance", str(tmp_path)) == (
        1,
        "",
        f"error: no NAME.p4 with a NAME.stf beside it in {tmp_path}\n",
    )


def test_errors_and_interrupts_never_show_a_traceback() -> None:
    """Every IntbedError is one line and exit 1; Ctrl-C is a quiet exit 130."""

    @cli.command("_raise")
    @click.argument("what")
    def _raise(what: str) -> None:
        if what == "error":
            raise P4SemanticError("unknown name 'x'")
        raise KeyboardInterrupt

    try:
        assert run("_raise", "error") == (1, "", "error: unknown name 'x'\n")
        assert run("_raise", "interrupt") == (130, "", "")
        with pytest.raises(SystemExit) as info:
            main(["_raise", "interrupt"])
        assert info.value.code == 130
    finally:
        cli.commands.pop("_raise")


def test_help_lists_command_groups() -> None:
    code, out, _ = run("--help")
    assert code == 0
    assert "p4" in out and "bench" in out
    code, out, _ = run("p4", "--help")
    assert code == 0
    for command in ("check", "info", "stf", "conformance"):
        assert command in out


def test_bench_engine_json(samples_dir: Path, tmp_path: Path) -> None:
    import json

    for ext in (".p4", ".stf"):
        shutil.copy(samples_dir / ("issue2153-bmv2" + ext), tmp_path)
    code, out, err = run("bench", "engine", "--json", "--packets", "300", "--samples",
                         str(tmp_path))
    assert (code, err) == (0, "")
    report = json.loads(out)
    l3 = report["l3_forward"]
    # Every destination lies in an installed route, so every packet is forwarded.
    assert (l3["program"], l3["routes"], l3["packets"], l3["emitted"]) == (
        "l3_forward", 1000, 300, 300)
    assert l3["packets_per_s"] > 0
    sample = report["largest_sample"]
    # issue2153's STF sends two packets, both forwarded; replayed 150 times each.
    assert (sample["program"], sample["packets"], sample["emitted"]) == (
        "issue2153-bmv2", 300, 300)
    memory = report["memory"]
    assert (memory["switches"], memory["routes"]) == (100, 1000)
    assert memory["rss_mb"] > 10


def test_bench_prep_json(samples_dir: Path) -> None:
    import json

    code, out, err = run("bench", "prep", "--json", "--repeats", "1", "--samples",
                         str(samples_dir))
    assert (code, err) == (0, "")
    report = json.loads(out)
    parse = report["parse"]
    # The sample with v1model.p4 included: hundreds of lines, v1model's decls.
    assert parse["program"] == "header-stack-ops-bmv2" and parse["repeats"] == 1
    assert parse["lines"] > 500 and parse["decls"] > 30
    assert parse["parse_ms"] > 0
    schedule = report["schedule"]
    # Poisson at 100,000/s for one second: the count is within a few sigma of 1e5.
    assert schedule["rate_pps"] == 100_000 and 98_500 < schedule["events"] < 101_500
    assert schedule["iterate_ms"] > 0
