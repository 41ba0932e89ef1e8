"""Compile P4-16 v1model programs for BMv2 with ``p4c``, cached by content.

The command is p4c's driver for the BMv2 ``simple_switch`` back end::

    p4c --target bmv2 --arch v1model [-I DIR]... \\
        --p4runtime-files OUT/NAME.p4info.txtpb -o OUT FILE.p4

The driver writes ``OUT/NAME.json`` (``NAME`` is the source file's stem, as
``p4c.bmv2.cfg`` names it); ``--p4runtime-files`` picks the P4Info format from
the suffix, and ``.txtpb`` is protobuf text (``p4RuntimeSerializer.cpp``).

Compiling takes seconds, so results are kept under a cache directory, one
entry per key. The key hashes the p4c version (``p4c --version``), the
flags, the source file's name and the text of the source and of every file
it includes that can be found (``#include "x"`` beside the including file,
then the ``-I`` directories; p4c's own ``core.p4``/``v1model.p4`` are covered
by the version). An entry is written to a temporary directory and renamed
into place, so concurrent compiles of one program never see half an entry.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from common.errors import IntbedError, Loc
from dataplane.compiler.options import current as current_options

__all__ = [
    "P4C",
    "Bmv2Artifacts",
    "P4cError",
    "compile_bmv2",
    "default_cache_dir",
    "p4c_command",
    "p4c_error",
    "p4c_version",
    "source_files",
]

P4C = "p4c"
P4C_FLAGS = ("--target", "bmv2", "--arch", "v1model")
P4INFO_SUFFIX = ".p4info.txtpb"
# Bump when the layout of a cache entry changes.
CACHE_FORMAT = "1"
COMPILE_TIMEOUT = 600.0

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^">\n]+)[">]', re.MULTILINE)
# p4c's diagnostics: "FILE(LINE): [--Werror=NAME] error: MESSAGE" (lib/error_message.cpp,
# SourceFileLine::toString); the position and the [--Werror=..] tag may be absent.
_P4C_DIAG = re.compile(
    r"^(?:(?P<file>[^\s(][^(]*)\((?P<line>\d+)\):\s*)?(?:\[--Werror=[^\]]*\]\s*)?"
    r"error:\s*(?P<msg>.+)$", re.MULTILINE)
# The C preprocessor's (p4c's driver runs cc -E first): "FILE:LINE:COL: [fatal ]error: MSG".
_CPP_DIAG = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?:fatal )?error:\s*(?P<msg>.+)$",
    re.MULTILINE)


class P4cError(IntbedError):
    """p4c refused a program, or could not be run."""


class Bmv2Artifacts(NamedTuple):
    """What ``simple_switch`` and a P4Runtime controller load."""

    json: Path
    p4info: Path


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/intbed/p4c``, i.e. ``~/.cache/intbed/p4c`` by default."""
    base = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(base).expanduser() / "intbed" / "p4c"


def p4c_command(p4_path: Path, out_dir: Path, p4c: str = P4C,
                include_dirs: Sequence[Path] = (),
                defines: Mapping[str, str] | None = None) -> list[str]:
    """The p4c command line that compiles ``p4_path`` into ``out_dir``."""
    cmd = [p4c, *P4C_FLAGS]
    for name, value in (defines or {}).items():
        cmd += ["-D", f"{name}={value}"]
    for d in include_dirs:
        cmd += ["-I", str(d)]
    cmd += ["--p4runtime-files", str(out_dir / (p4_path.stem + P4INFO_SUFFIX)),
            "-o", str(out_dir), str(p4_path)]
    return cmd


_VERSIONS: dict[tuple[str, int], str] = {}


def p4c_version(p4c: str = P4C) -> str:
    """The first line of ``p4c --version`` (remembered per binary and mtime)."""
    exe = shutil.which(p4c)
    if exe is None:
        raise P4cError(f"{p4c} not found on PATH (install p4c to compile for BMv2)")
    key = (exe, os.stat(exe).st_mtime_ns)
    if key not in _VERSIONS:
        try:
            proc = subprocess.run([exe, "--version"], capture_output=True, text=True,
                                  timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise P4cError(f"cannot run '{p4c} --version': {exc}") from None
        lines = [ln.strip() for ln in proc.stdout.splitlines() if ln.strip()]
        if proc.returncode != 0 or not lines:
            raise P4cError(f"'{p4c} --version' failed (status {proc.returncode})")
        _VERSIONS[key] = lines[0]
    return _VERSIONS[key]


def source_files(p4_path: Path, include_dirs: Sequence[Path] = ()) -> list[Path]:
    """``p4_path`` and every file it includes, transitively, that exists.

    Quoted includes are looked up beside the including file, then in
    ``include_dirs``; angle-bracket includes in ``include_dirs`` only (as cpp
    with ``-nostdinc``). A file hidden behind ``#if`` is still listed: an
    extra file only makes the key more specific.
    """
    seen: dict[Path, None] = {}
    todo = [p4_path.resolve()]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen[path] = None
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        found = []
        for kind, name in _INCLUDE.findall(text):
            dirs = ([path.parent] if kind == '"' else []) + [Path(d) for d in include_dirs]
            hit = next((d / name for d in dirs if (d / name).is_file()), None)
            if hit is not None:
                found.append(hit.resolve())
        todo.extend(reversed(found))
    return list(seen)


def _cache_key(p4_path: Path, version: str, include_dirs: Sequence[Path],
               defines: Mapping[str, str] | None = None) -> str:
    digest = hashlib.sha256()

    def feed(*parts: str | bytes) -> None:
        for part in parts:
            data = part.encode() if isinstance(part, str) else part
            digest.update(len(data).to_bytes(8, "big"))
            digest.update(data)

    feed(CACHE_FORMAT, version, *P4C_FLAGS, p4_path.name)
    for name, value in sorted((defines or {}).items()):
        feed("-D", name, value)
    root = p4_path.resolve().parent
    for path in source_files(p4_path, include_dirs):
        try:
            name = str(path.relative_to(root))
        except ValueError:
            name = str(path)
        feed(name, path.read_bytes())
    return digest.hexdigest()[:32]


def compile_bmv2(p4_path: str | Path, cache_dir: str | Path | None = None, *,
                 p4c: str = P4C, include_dirs: Sequence[str | Path] = (),
                 defines: Mapping[str, str] | None = None,
                 timeout: float = COMPILE_TIMEOUT) -> Bmv2Artifacts:
    """p4c's JSON and P4Info for ``p4_path``, compiled now or taken from the cache.

    A program p4c refuses raises P4cError with p4c's first error line (located
    when p4c gives a position).
    """
    p4_path = Path(p4_path)
    if not p4_path.is_file():
        raise P4cError(f"cannot open P4 source file '{p4_path}'")
    if not include_dirs and defines is None:
        ambient = current_options()  # the command's -I/-D
        include_dirs, defines = ambient.include_dirs, ambient.defines
    dirs = [Path(d) for d in include_dirs]
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    entry = cache / _cache_key(p4_path, p4c_version(p4c), dirs, defines)
    result = Bmv2Artifacts(entry / (p4_path.stem + ".json"),
                           entry / (p4_path.stem + P4INFO_SUFFIX))
    if result.json.is_file() and result.p4info.is_file():
        return result
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=cache))
    try:
        _run_p4c(p4_path, tmp, p4c, dirs, timeout, defines)
        try:
            tmp.rename(entry)
        except OSError:  # another compile of the same program won the race
            if not result.json.is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return result


def _run_p4c(p4_path: Path, out_dir: Path, p4c: str, include_dirs: Sequence[Path],
             timeout: float, defines: Mapping[str, str] | None = None) -> None:
    cmd = p4c_command(p4_path.resolve(), out_dir, p4c, include_dirs, defines)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              check=False)
    except OSError as exc:
        raise P4cError(f"cannot run {p4c}: {exc.strerror}") from None
    except subprocess.TimeoutExpired:
        raise P4cError(f"{p4c} did not finish within {timeout:g} s",
                       Loc(str(p4_path), 1)) from None
    if proc.returncode != 0:
        raise p4c_error(proc.stderr + proc.stdout, proc.returncode, p4_path)
    for name in (p4_path.stem + ".json", p4_path.stem + P4INFO_SUFFIX):
        if not (out_dir / name).is_file():
            raise P4cError(f"{p4c} exited with status 0 but wrote no {name}",
                           Loc(str(p4_path), 1))


def p4c_error(output: str, status: int, p4_path: Path) -> P4cError:
    """p4c's first error line as a P4cError (located when p4c gave a position)."""
    for pattern in (_P4C_DIAG, _CPP_DIAG):
        m = pattern.search(output)
        if m is not None:
            loc = None
            if m["file"]:
                col = m.groupdict().get("col")
                loc = Loc(m["file"].strip(), int(m["line"]), int(col or 0))
            return P4cError(f"p4c: {m['msg'].strip()}", loc)
    lines = _nonblank(output.splitlines())
    bug = next((ln for ln in lines if "Compiler Bug" in ln or ln.startswith("Error")), None)
    detail = bug or (lines[-1] if lines else f"exited with status {status}")
    return P4cError(f"p4c: {detail}", Loc(str(p4_path), 1))


def _nonblank(lines: Iterable[str]) -> list[str]:
    return [ln.strip() for ln in lines if ln.strip()]
