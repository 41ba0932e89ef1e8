"""A program with no ``main`` package is checked as p4c checks it (bodies
too), and is refused, with the reason, by anything that would run it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from common.errors import P4SemanticError, RuntimeConfigError
from dataplane.compiler.pipeline import compile_file
from dataplane.runtime.switch import Switch
from intbed.cli import cli

LIBRARY = """#include <core.p4>
header h_t { bit<8> a; }
control Count(inout h_t h, inout bit<32> n) {
    action bump() { n = n + 1; }
    table t { key = { h.a : exact; } actions = { bump; } }
    apply { if (h.isValid()) { t.apply(); } }
}
"""


def test_bodies_are_checked(tmp_path: Path) -> None:
    src = tmp_path / "lib.p4"
    src.write_text(LIBRARY.replace("n = n + 1;", "n = h;"))
    with pytest.raises(P4SemanticError) as err:
        compile_file(src)
    assert err.value.loc is not None and err.value.loc.line == 4


def test_a_library_checks_and_says_there_is_nothing_to_run(tmp_path: Path) -> None:
    src = tmp_path / "lib.p4"
    src.write_text(LIBRARY)
    result = CliRunner().invoke(cli, ["p4", "check", str(src)])
    assert result.exit_code == 0, result.output
    assert result.output == ("ok: 1 tables, 2 actions (no 'main' package instance: checked, "
                             "nothing to run)\n")
    with pytest.raises(RuntimeConfigError, match="no 'main' package instance"):
        Switch(compile_file(src))
