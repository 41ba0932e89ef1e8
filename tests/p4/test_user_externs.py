"""Externs a program declares itself run on plugins (user_extern/: a program,
its STF test and the plugin); without a plugin, the call is a
located run-time error naming the extern."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from common.errors import RuntimeConfigError
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


def test_without_a_plugin_the_call_names_the_extern(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(plugins.ENV, raising=False)
    sw = Switch(compile_file(PROGRAM))
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
