"""Rule pairs for the type checker: for each rule of the P4-16
specification that makes a program ill-formed, a small well-typed program
that must compile and its ill-typed neighbour that must be rejected, with
the line of the construct at fault.

A pair fills one slot of ``TEMPLATE`` (the same text in both programs but
for the slot), so the two differ only where the rule bites; ``shared``
fills other slots in both. A slot holds one line, so the expected line of
the error is the slot's line. ``Pair.unsupported`` marks a construct
intbed does not implement: the rejection is then a located
``P4UnsupportedError``; otherwise it must be any other ``IntbedError``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import pytest

from common.errors import IntbedError, P4UnsupportedError
from dataplane.compiler.pipeline import compile_file
from dataplane.runtime import plugins

TEMPLATE = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; }
header g_t { bit<32> w; }
header_union u_t { h_t h; g_t g; }
struct H { h_t h; g_t g; h_t[3] s; u_t u; }
struct M { bit<8> x; bit<16> y; bit<32> z; int<8> i; bool f; error e; }
TOP
parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    PLOCALS
    state start { pkt.extract(hdr.h); PSTMTS transition TRANS }
    state next { transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    LOCALS
    apply { APPLY }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }
MAIN
"""
DEFAULTS = {"TOP": "", "PLOCALS": "", "PSTMTS": "", "TRANS": "accept;", "LOCALS": "",
            "APPLY": "", "MAIN": "V1Switch(P(), V(), I(), E(), C(), D()) main;"}
SLOT = re.compile(r"\b(" + "|".join(DEFAULTS) + r")\b")
LINES = {m.group(1): n for n, line in enumerate(TEMPLATE.splitlines(), 1)
         for m in SLOT.finditer(line)}
LINES |= {name: n for n, line in enumerate(TEMPLATE.splitlines(), 1)
          for name, start in (("PARSER", "parser P("), ("INGRESS", "control I("),
                              ("NEXT", "    state next"))
          if line.startswith(start)}
"""The line of each slot, and of the parser, its state next and ingress."""


@dataclass(frozen=True)
class Pair:
    """One rule: ``good`` and ``bad`` fill ``slot``; ``message`` is a part
    of the error's text."""

    section: str  # "8.12.1 Explicit casts"
    rule: str
    slot: str
    good: str
    bad: str
    message: str
    shared: dict[str, str] = field(default_factory=dict)
    unsupported: bool = False
    at: str | None = None  # the slot whose line the error names, if not ``slot``
    good_unsupported: bool = False
    """The good program is well typed but uses what intbed does not run:
    it must stop at a located ``unsupported construct``, no other error."""

    @property
    def id(self) -> str:
        return f"{self.section.split()[0]} {self.rule}"


def program(slot: str, text: str, shared: dict[str, str]) -> str:
    """``TEMPLATE`` with ``slot`` holding ``text`` and the others theirs."""
    assert "\n" not in text, "a slot holds one line"
    values = {**DEFAULTS, **shared, slot: text}
    return SLOT.sub(lambda m: values[m.group(1)], TEMPLATE)


def check(pair: Pair, tmp_path: Path) -> None:
    """The good program compiles; the bad one is rejected on the slot's
    line, with the message, and as unsupported exactly when marked so.
    A program's own externs count as implemented here: these are typing
    rules; the back end's refusal of unimplemented ones is
    tests/p4/test_user_externs.py's."""
    with mock.patch.object(plugins, "bound", lambda kind, name: True):
        _check(pair, tmp_path)


def _check(pair: Pair, tmp_path: Path) -> None:
    good = tmp_path / "good.p4"
    good.write_text(program(pair.slot, pair.good, pair.shared))
    if pair.good_unsupported:
        with pytest.raises(P4UnsupportedError, match="unsupported construct"):
            compile_file(good)
    else:
        compile_file(good)
    bad = tmp_path / "bad.p4"
    bad.write_text(program(pair.slot, pair.bad, pair.shared))
    with pytest.raises(IntbedError) as caught:
        compile_file(bad)
    error = caught.value
    assert pair.message in error.message, error.line()
    assert isinstance(error, P4UnsupportedError) == pair.unsupported, error.line()
    assert error.loc is not None and error.loc.file.endswith("bad.p4"), error.line()
    assert error.loc.line == LINES[pair.at or pair.slot], error.line()


def parametrize(pairs: list[Pair]) -> pytest.MarkDecorator:
    ids = [p.id for p in pairs]
    assert len(set(ids)) == len(ids), "two pairs have one id"
    return pytest.mark.parametrize("pair", pairs, ids=ids)
