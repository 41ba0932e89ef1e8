"""Externs a program declares itself run on plugins (user_extern/: a program,
its STF test and the plugin); without a plugin the program is refused
where it uses the extern, as p4c's BMv2 back end refuses it without
--emit-externs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from common.errors import P4UnsupportedError, RuntimeConfigError
from dataplane.compiler.pipeline import compile_file
from dataplane.runtime import plugins
from dataplane.runtime.switch import Switch
from intbed.cli import cli

HERE = Path(__file__).resolve().parent / "user_extern"
PROGRAM = HERE / "user_extern.p4"


@pytest.fixture(autouse=True)
def _clean_registry() -> None:
    yield
    plugins.unregister("mix")
    plugins.unregister("Tally")


def test_the_stf_passes_with_the_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(plugins.ENV, str(HERE / "plugin.py"))
    plugins._loaded.clear()
    result = CliRunner().invoke(cli, ["p4", "stf", str(PROGRAM), str(HERE / "user_extern.stf")])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("PASS user_extern: 2 packets in, 2 expected out")


def test_without_a_plugin_the_program_is_refused_where_its_extern_is_used(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # p4c's BMv2 back end refuses a program's own externs without
    # --emit-externs (p4c's testdata/p4_16_bmv_errors/no-externs-bmv2.p4).
    monkeypatch.delenv(plugins.ENV, raising=False)
    with pytest.raises(P4UnsupportedError) as info:
        compile_file(PROGRAM)
    line = info.value.line()
    assert re.match(r"^\S*user_extern\.p4:\d+:\d+: error: unsupported construct: the "
                    r"program's own extern (function 'mix'|object 'Tally')", line), line
    assert plugins.ENV in line and "\n" not in line


def test_a_plugin_unregistered_after_compiling_fails_at_its_call() -> None:
    plugins.extern_function("mix")(lambda a, b: 0)
    plugins.extern_object("Tally")(type("Tally", (), {"__init__": lambda self, start: None,
                                                      "next": lambda self, add: 0}))
    program = compile_file(PROGRAM)
    plugins.unregister("mix")
    sw = Switch(program)
    with pytest.raises(RuntimeConfigError, match="extern function 'mix' has no implementation"):
        sw.process(0, bytes(6))


def test_registered_in_process_and_widths_kept() -> None:
    plugins.extern_function("mix")(lambda a, b: 0x1_2345)  # wider than bit<16>

    class Tally:
        def __init__(self, start: int) -> None:
            assert start == 100

        def next(self, add: int) -> int:
            return 0x1FF

    plugins.extern_object("Tally")(Tally)
    out = Switch(compile_file(PROGRAM)).process(0, bytes([1, 2, 0, 0, 0]))
    assert out == [(2, bytes([1, 2, 0x23, 0x45, 0xFF]))]


def test_a_plugin_that_does_not_load_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(plugins.ENV, "no_such_intbed_plugin_module")
    with pytest.raises(RuntimeConfigError, match="cannot load extern plugin "
                                                 "'no_such_intbed_plugin_module'"):
        Switch(compile_file(PROGRAM))
