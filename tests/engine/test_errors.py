"""Bad programs give one located error line, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from common.errors import P4SemanticError, P4SyntaxError, P4UnsupportedError
from dataplane.compiler.pipeline import compile_file
from intbed.cli import cli as main

PRELUDE = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; }
struct H { h_t h; }
struct M { }
parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }
"""
MAIN = "V1Switch(P(), V(), I(), E(), C(), D()) main;\n"


def program(body: str) -> str:
    return PRELUDE + "control I(inout H hdr, inout M m, inout standard_metadata_t sm) {\n" \
        + body + "\n}\n" + MAIN


CASES = {
    "syntax": (program("apply { hdr.h.a = 1 }"), P4SyntaxError, "syntax error"),
    "unknown_name": (program("apply { hdr.h.a = nosuch; }"), P4SemanticError, "nosuch"),
    "width": (program("apply { hdr.h.a = hdr.h.b; }"), P4SemanticError, "bit<16>"),
    "unsupported": (
        program("Checksum16() ck; apply { }"),
        P4UnsupportedError,
        "Checksum16",
    ),
}


def line_of(text: str, needle: str) -> int:
    for n, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return n
    raise AssertionError(needle)


@pytest.mark.parametrize("case", sorted(CASES))
def test_compile_error_is_located(tmp_path: Path, case: str) -> None:
    text, exc, fragment = CASES[case]
    src = tmp_path / f"{case}.p4"
    src.write_text(text)
    with pytest.raises(exc) as info:
        compile_file(src)
    err = info.value
    assert err.loc is not None
    assert Path(err.loc.file).name == src.name
    assert err.loc.line >= line_of(text, "control I")
    assert fragment in err.message


@pytest.mark.parametrize("case", sorted(CASES))
def test_cli_prints_one_line_and_exits_1(tmp_path: Path, case: str) -> None:
    text, _, _ = CASES[case]
    src = tmp_path / f"{case}.p4"
    src.write_text(text)
    result = CliRunner().invoke(main, ["p4", "check", str(src)])
    assert result.exit_code == 1
    lines = [ln for ln in result.output.strip().splitlines() if ln]
    assert len(lines) == 1, result.output
    assert lines[0].startswith(str(src)) or f"{src.name}:" in lines[0]
    assert ": error: " in lines[0]
    assert "Traceback" not in result.output
