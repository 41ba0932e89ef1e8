"""Fuzzed P4 sources (the programs in p4src/, mutated) and STF tests through
``intbed p4 check/info/stf``: exit 0 or 1 and one line, never a traceback."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from fuzz_cli_support import assert_handled, fuzz_settings, invoke
from hypothesis import given
from hypothesis import strategies as st
from mutations import mutated

from p4src import programs

REPO = Path(__file__).resolve().parents[2]
P4_SOURCES = [p.read_bytes() for p in programs()]
P4_TOKENS = ["{", "}", "(", ")", ";", "<", ">", "bit<9>", "bit<0>", "int<8>", "8w256",
             "0x1ff", "apply", "table", "action", "control", "parser", "state", "transition",
             "select", "default", "return", "exit", "extract", "emit", "const", "typedef",
             "header", "struct", "@name(\"x\")", "#include <nothere.p4>", "#define X",
             "#if", "/*", "*/", "//", "\"", "'", "\\", "1 / 0", "x[", "]", ".", "..",
             "&&&", "++", "--", "-1", "99999999999999999999999999999", "this", "_"]
STF_LINES = [line.encode() for stf in sorted((REPO / "tests" / "p4").glob("l3_forward*.stf"))
             for line in stf.read_text().splitlines() if line and not line.startswith("#")]
STF_TOKENS = ["packet", "expect", "add", "setdefault", "mirroring_add", "mc_mgrp_create",
              "mc_node_create", "mc_node_associate", "wait", "remove", "0", "1", "511", "512",
              "65536", "-1", "0x", "0b1*", "0o7", "**", "$", "&&&", "/", "/33", ":", "(", ")",
              ",", "=", "#", "ff", "f", "MyIngress.ipv4_lpm", "hdr.ipv4.dstAddr",
              "MyIngress.drop()", "MyIngress.ipv4_forward(dstAddr:1, port:2)", "port:"]
L3 = REPO / "p4src" / "l3_forward.p4"
_names = itertools.count()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory like p4src/ (its include/ beside the files), so mutated
    programs resolve their quoted includes."""
    path = tmp_path_factory.mktemp("p4fuzz")
    (path / "include").symlink_to(REPO / "p4src" / "include")
    return path


@fuzz_settings(30)
@given(source=mutated(P4_SOURCES, P4_TOKENS), command=st.sampled_from(["check", "info"]))
def test_mutated_p4_programs(workdir: Path, source: bytes, command: str) -> None:
    # A new name each time: the compiler caches by path and mtime.
    path = workdir / f"prog{next(_names)}.p4"
    path.write_bytes(source)
    assert_handled(invoke("p4", command, str(path)))


def stf_text() -> st.SearchStrategy[bytes]:
    """Lines of l3_forward's STF tests, mutated and reordered, or built from
    STF's own words."""
    made = st.lists(st.sampled_from(STF_TOKENS), min_size=1, max_size=8).map(
        lambda words: " ".join(words).encode())
    line = st.one_of(st.sampled_from(STF_LINES), made)
    lines = st.lists(line, min_size=0, max_size=12).map(b"\n".join)
    return st.one_of(lines, mutated([b"\n".join(STF_LINES)], STF_TOKENS, most=6))


@fuzz_settings(120)
@given(text=stf_text())
def test_fuzzed_stf_tests(workdir: Path, text: bytes) -> None:
    path = workdir / "t.stf"
    path.write_bytes(text)
    assert_handled(invoke("p4", "stf", str(L3), str(path)))
