"""Spec chapter 17 with v1model.p4: the V1Switch package's six blocks
(their kinds, parameters, directions and shared types), the version the
architecture file is read at, and what BMv2 itself refuses or lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.errors import P4SemanticError
from dataplane.compiler.pipeline import compile_file
from tests.typecheck.pairs import Pair, check, parametrize

V1 = "V1Switch(P(), V(), I(), E(), C(), D()) main;"
PACKAGE = "7.2.14 Package types"
ARCH = "17 Architecture description"
M2 = "struct M2 { bit<8> x; } "


def ingress(params: str) -> dict[str, str]:
    """A second ingress control, ``I2``, with ``params``."""
    return {"TOP": f"{M2}control I2({params}) {{ apply {{ }} }}"}


PAIRS = [
    Pair(PACKAGE, "the blocks share the metadata type", "MAIN", V1,
         V1.replace("I()", "I2()"), "already M",
         shared=ingress("inout H hdr, inout M2 m, inout standard_metadata_t sm")),
    Pair(PACKAGE, "the blocks share the headers type", "MAIN", V1,
         V1.replace("I()", "I2()"), "already H",
         shared=ingress("inout M2 hdr, inout M m, inout standard_metadata_t sm")),
    Pair(PACKAGE, "a block's directions are the block type's", "MAIN", V1,
         V1.replace("I()", "I2()"), "is 'in', the control type's 'meta' is 'inout'",
         shared=ingress("inout H hdr, in M m, inout standard_metadata_t sm")),
    Pair(PACKAGE, "a block takes the architecture's own types", "MAIN", V1,
         V1.replace("I()", "I2()"), "wants standard_metadata_t",
         shared=ingress("inout H hdr, inout M m, inout M sm")),
    Pair(PACKAGE, "a parser stands where a parser is wanted", "MAIN", V1,
         V1.replace("I()", "P()"), "is a control; P is a parser"),
    Pair(PACKAGE, "a control stands where a control is wanted", "MAIN", V1,
         V1.replace("P()", "C()"), "is a parser; C is a control"),
    Pair(PACKAGE, "a block has the parameter count of its place", "MAIN", V1,
         V1.replace("V()", "I()"), "verify block takes 2 parameters"),
    Pair(PACKAGE, "a block's constructor call takes its constructor parameters", "MAIN", V1,
         V1.replace("E()", "E(1)"), "E constructor: too many arguments"),
    Pair(PACKAGE, "V1Switch takes six blocks", "MAIN", V1,
         V1.replace(", D()", ""), "V1Switch takes 6 arguments"),
    Pair(PACKAGE, "a named argument names a parameter", "MAIN",
         "V1Switch(p = P(), vr = V(), ig = I(), eg = E(), ck = C(), dep = D()) main;",
         "V1Switch(p = P(), vr = V(), ingress = I(), eg = E(), ck = C(), dep = D()) main;",
         "V1Switch has no parameter 'ingress'"),
    Pair(ARCH, "BMv2 runs the V1Switch package only", "MAIN", V1,
         "Pk(I()) main;", "package 'Pk'", shared={"TOP": "package Pk(Ingress<H, M> i);"},
         unsupported=True),
    Pair(ARCH, "the package BMv2 runs is main", "MAIN", V1,
         V1.replace(" main;", " pipe;"), "package instance 'pipe' with no 'main'",
         unsupported=True),
    Pair(ARCH, "main is the last package instance", "MAIN", V1,
         V1 + " " + V1.replace(" main;", " second;"), "a package instance after 'main'",
         unsupported=True),
    Pair(ARCH, "a BMv2 header is whole bytes", "PSTMTS",
         "o.setValid();", "pkt.extract(o);", "not a whole number of bytes",
         shared={"TOP": "header odd_t { bit<3> a; }", "PLOCALS": "odd_t o;"},
         unsupported=True),
    Pair(ARCH, "BMv2 has no random hash", "APPLY",
         "hash(m.y, HashAlgorithm.crc16, 16w0, { m.x }, 16w1024);",
         "hash(m.y, HashAlgorithm.random, 16w0, { m.x }, 16w1024);",
         "HashAlgorithm.random", unsupported=True),
    Pair(ARCH, "a direct meter read is owned by a table", "LOCALS",
         "direct_meter<bit<8>>(MeterType.packets) dm; action a() { dm.read(m.x); } "
         "table t { key = { m.x: exact; } actions = { a; } meters = dm; }",
         "direct_meter<bit<8>>(MeterType.packets) dm; action a() { dm.read(m.x); } "
         "table t { key = { m.x: exact; } actions = { a; } }", "no table owns it",
         shared={"APPLY": "t.apply();"}),
    Pair(ARCH, "BMv2 matches the v1model match kinds", "LOCALS",
         "table t { key = { m.x: exact; } actions = { NoAction; } }",
         "table t { key = { m.x: fancy; } actions = { NoAction; } }", "match kind 'fancy'",
         shared={"TOP": "match_kind { fancy }", "APPLY": "t.apply();"}, unsupported=True),
]


@parametrize(PAIRS)
def test_rule(pair: Pair, tmp_path: Path) -> None:
    check(pair, tmp_path)


@pytest.mark.parametrize(("version", "message"), [
    ("-6419018", "a v1model version is a non-negative number"),
    ("20000101", "unknown v1model version 20000101"),
    ("20990101", "unknown v1model version 20990101"),
], ids=["negative", "before the first", "after the last"])
def test_the_v1model_version_is_one_p4c_knows(tmp_path: Path, version: str,
                                               message: str) -> None:
    """17, with p4c: V1MODEL_VERSION names a generation of v1model.p4,
    20180101 to 20200408; the error names v1model.p4's line."""
    from tests.typecheck.pairs import DEFAULTS, program

    text = program("MAIN", DEFAULTS["MAIN"], {})
    good = tmp_path / "good.p4"
    good.write_text(text.replace("#include <v1model.p4>",
                                 "#define V1MODEL_VERSION 20200408\n#include <v1model.p4>"))
    compile_file(good)
    bad = tmp_path / "bad.p4"
    bad.write_text(text.replace("#include <v1model.p4>",
                                f"#define V1MODEL_VERSION {version}\n#include <v1model.p4>"))
    with pytest.raises(P4SemanticError, match=message) as caught:
        compile_file(bad)
    assert caught.value.loc is not None and caught.value.loc.file.endswith("v1model.p4")


def test_the_user_metadata_is_a_struct(tmp_path: Path) -> None:
    """17, with p4c's BMv2 back end: V1Switch's M is a struct; the same
    program with a header there is refused on the parser's parameter."""
    from tests.typecheck.pairs import DEFAULTS, program

    text = program("MAIN", DEFAULTS["MAIN"], {})
    good = tmp_path / "good.p4"
    good.write_text(text)
    compile_file(good)
    bad = tmp_path / "bad.p4"
    bad.write_text(text.replace("struct M {", "header M {").replace(" error e; }", " }"))
    with pytest.raises(P4SemanticError, match="user metadata type must be a struct") as caught:
        compile_file(bad)
    assert caught.value.loc is not None and caught.value.loc.line == 9
