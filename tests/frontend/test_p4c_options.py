"""-D and -I as p4c takes them: on the commands, in the compiler, in what
intbed-switch receives, and on p4c's command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dataplane.compiler.options import compile_options, parse_define
from dataplane.compiler.pipeline import compile_file
from intbed.cli import cli

PROGRAM = """#include <core.p4>
#include <v1model.p4>
#include "sizes.p4"
#ifndef EXTRA
#error "define EXTRA (0 or 1)"
#endif
header h_t { bit<8> a; }
struct H { h_t h; }
struct M { }
parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action set() { hdr.h.a = OUT_VALUE; sm.egress_spec = 1; }
    table t { key = { hdr.h.a : exact; } actions = { set; } default_action = set; }
#if EXTRA
    table u { key = { hdr.h.a : exact; } actions = { set; } default_action = set; }
#endif
    apply {
        t.apply();
#if EXTRA
        u.apply();
#endif
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "sizes.p4").write_text("#define OUT_VALUE 8w42\n")
    src = tmp_path / "prog.p4"
    src.write_text(PROGRAM)
    return src, inc


def test_check_takes_defines_and_include_dirs(files: tuple[Path, Path]) -> None:
    src, inc = files
    runner = CliRunner()
    one = runner.invoke(cli, ["p4", "check", str(src), "-D", "EXTRA=1", "-I", str(inc)])
    zero = runner.invoke(cli, ["p4", "check", str(src), "-DEXTRA=0", f"-I{inc}", "--p4v", "16",
                               "--arch", "v1model"])
    assert (one.exit_code, one.output) == (0, "ok: 2 tables, 1 actions\n")
    assert (zero.exit_code, zero.output) == (0, "ok: 1 tables, 1 actions\n")
    missing = runner.invoke(cli, ["p4", "check", str(src), "-I", str(inc)])
    assert missing.exit_code == 1
    assert "define EXTRA (0 or 1)" in missing.output
    bad = runner.invoke(cli, ["p4", "check", str(src), "-D", "1X=2"])
    assert bad.exit_code == 1
    assert "'1X' is not a macro name" in bad.output


def test_a_bare_define_is_one(files: tuple[Path, Path]) -> None:
    assert parse_define("EXTRA") == ("EXTRA", "1")
    src, inc = files
    with compile_options({"EXTRA": "1"}, [inc]):
        program = compile_file(src)
    assert len(program.tables) == 2


def test_intbed_switch_receives_what_the_command_compiled(files: tuple[Path, Path]) -> None:
    from dataplane.control.grpc_server import decode_device_config
    from orchestration.binaries.switches import IntbedSwitch, Prepared

    src, inc = files
    with compile_options({"EXTRA": "1"}, [inc]):
        config = IntbedSwitch().device_config(Prepared(source=src, program=src, p4info=src))
    name, text = decode_device_config(config)
    assert name == "prog"
    assert "#if" not in text and "OUT_VALUE" not in text and "8w42" in text
    shipped = src.parent / "shipped.p4"
    shipped.write_text(text)
    # Compiled with no options at all, as the switch process does.
    assert len(compile_file(shipped).tables) == 2


def test_p4c_gets_the_same_options(files: tuple[Path, Path], tmp_path: Path) -> None:
    from orchestration.binaries.p4c import _cache_key, p4c_command

    src, inc = files
    cmd = p4c_command(src, tmp_path, "p4c", [inc], {"EXTRA": "1"})
    assert cmd[cmd.index("-D") + 1] == "EXTRA=1"
    assert cmd[cmd.index("-I") + 1] == str(inc)
    assert _cache_key(src, "v", [inc], {"EXTRA": "1"}) != _cache_key(src, "v", [inc],
                                                                     {"EXTRA": "0"})


def _compiled_tables(src: Path) -> int:
    return len(compile_file(src).tables)


def test_defines_reach_sweep_workers(files: tuple[Path, Path], tmp_path: Path) -> None:
    from experiments.sweep import run_points

    src, inc = files
    with compile_options({"EXTRA": "1"}, [inc]):
        counts = run_points(_compiled_tables, [src, src], label="t", jobs=2, cluster=None,
                            journal=None, progress=lambda *a: None)
    assert counts == [2, 2]
