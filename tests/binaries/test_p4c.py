"""orchestration.binaries.p4c: the p4c command line, the content-addressed cache and
p4c's errors, against the fake p4c of fakebin/."""

from __future__ import annotations

from pathlib import Path

import pytest

from dataplane.compiler.p4info import build_p4info, to_text
from dataplane.compiler.pipeline import compile_file
from orchestration.binaries import p4c as p4c_mod
from orchestration.binaries.p4c import (
    P4cError,
    compile_bmv2,
    default_cache_dir,
    p4c_command,
    p4c_error,
    source_files,
)

HERE = Path(__file__).resolve().parent
FWD = HERE / "fwd.p4"


@pytest.fixture
def program(tmp_path: Path) -> Path:
    """fwd.p4 split over an include, so the cache key must cover both files."""
    src = tmp_path / "src"
    (src / "inc").mkdir(parents=True)
    text = FWD.read_text()
    head, sep, rest = text.partition("struct headers_t")
    (src / "inc" / "eth.p4").write_text(head.split("#include <v1model.p4>\n")[1])
    main = src / "fwd.p4"
    main.write_text('#include <core.p4>\n#include <v1model.p4>\n#include "inc/eth.p4"\n'
                    + sep + rest)
    return main


def compiles(tools) -> list[list[str]]:
    return [e["argv"] for e in tools.events("p4c") if e["event"] == "compile"]


def test_command_line() -> None:
    assert p4c_command(Path("/src/prog.p4"), Path("/out"), include_dirs=[Path("/inc")]) == [
        "p4c", "--target", "bmv2", "--arch", "v1model", "-I", "/inc",
        "--p4runtime-files", "/out/prog.p4info.txtpb", "-o", "/out", "/src/prog.p4"]


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "intbed" / "p4c"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == Path.home() / ".cache" / "intbed" / "p4c"


def test_source_files_follow_quoted_includes(program: Path, tmp_path: Path) -> None:
    found = source_files(program)
    assert found == [program.resolve(), (program.parent / "inc" / "eth.p4").resolve()]
    # <core.p4> is p4c's own: covered by the version, not looked for beside the file.
    other = tmp_path / "sys"
    other.mkdir()
    (other / "core.p4").write_text("// core\n")
    assert source_files(program, [other])[1] == (other / "core.p4").resolve()


def test_compile_runs_p4c_once_then_hits_the_cache(fake_tools, program: Path,
                                                   tmp_path: Path, monkeypatch) -> None:
    p4info_text = to_text(build_p4info(compile_file(FWD).schema))
    (tmp_path / "ours.p4info.txtpb").write_text(p4info_text)
    monkeypatch.setenv("FAKE_P4C_P4INFO", str(tmp_path / "ours.p4info.txtpb"))
    cache = tmp_path / "cache"

    json_path, p4info = compile_bmv2(program, cache)
    assert json_path.read_text() == (HERE / "fwd.json").read_text()
    assert p4info.read_text() == p4info_text
    assert json_path.name == "fwd.json" and p4info.name == "fwd.p4info.txtpb"
    assert json_path.parent.parent == cache and p4info.parent == json_path.parent
    [argv] = compiles(fake_tools)
    out = Path(argv[7])
    assert argv == ["--target", "bmv2", "--arch", "v1model", "--p4runtime-files",
                    str(out / "fwd.p4info.txtpb"), "-o", str(out), str(program.resolve())]
    assert out.parent == cache and out.name.startswith(".tmp-") and not out.exists()

    assert compile_bmv2(program, cache) == (json_path, p4info)
    assert len(compiles(fake_tools)) == 1
    assert sorted(p.name for p in cache.iterdir()) == [json_path.parent.name]


def test_cache_key_covers_includes_and_the_p4c_version(fake_tools, program: Path,
                                                       tmp_path: Path, monkeypatch) -> None:
    cache = tmp_path / "cache"
    first = compile_bmv2(program, cache)
    include = program.parent / "inc" / "eth.p4"
    include.write_text(include.read_text() + "// changed\n")
    second = compile_bmv2(program, cache)
    assert second.json.parent != first.json.parent

    monkeypatch.setenv("FAKE_P4C_VERSION", "p4c 1.2.5.0 (SHA: other)")
    monkeypatch.setattr(p4c_mod, "_VERSIONS", {})
    third = compile_bmv2(program, cache)
    assert third.json.parent not in (first.json.parent, second.json.parent)
    assert len(compiles(fake_tools)) == 3
    # The version is asked once per binary, not once per compile.
    assert len([e for e in fake_tools.events("p4c") if e["event"] == "version"]) == 2


def test_p4c_error_becomes_one_located_line(fake_tools, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_P4C_STDERR",
                       f"{FWD}(37): [--Werror=not-found] error: foo: declaration not found\n"
                       "        foo();\n        ^^^\n")
    cache = tmp_path / "cache"
    with pytest.raises(P4cError) as err:
        compile_bmv2(FWD, cache)
    assert str(err.value) == f"{FWD}:37: error: p4c: foo: declaration not found"
    assert list(cache.iterdir()) == []  # nothing cached, no temporary left


@pytest.mark.parametrize(("output", "expected"), [
    ("prog.p4(3): error: syntax error, unexpected IDENTIFIER\n",
     "prog.p4:3: error: p4c: syntax error, unexpected IDENTIFIER"),
    ("[--Werror=unsupported] error: no support for this\n",
     "error: p4c: no support for this"),
    ("warning: something\nprog.p4:2:10: fatal error: nope.p4: No such file or directory\n",
     "prog.p4:2:10: error: p4c: nope.p4: No such file or directory"),
    ("In file: frontend.cpp:12\nCompiler Bug: unexpected node\n",
     "prog.p4:1: error: p4c: Compiler Bug: unexpected node"),
    ("", "prog.p4:1: error: p4c: exited with status 1"),
])
def test_p4c_error_forms(output: str, expected: str) -> None:
    assert str(p4c_error(output, 1, Path("prog.p4"))) == expected


def test_missing_p4c_says_so(no_tools, tmp_path: Path) -> None:
    with pytest.raises(P4cError, match=r"^error: p4c not found on PATH \(install p4c"):
        compile_bmv2(FWD, tmp_path)


def test_missing_source(fake_tools, tmp_path: Path) -> None:
    with pytest.raises(P4cError, match="cannot open P4 source file"):
        compile_bmv2(tmp_path / "none.p4", tmp_path)
