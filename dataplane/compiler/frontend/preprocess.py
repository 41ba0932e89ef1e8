"""Run the C preprocessor over a P4 source file, the way p4c does.

p4c pipes every P4-16 program through the system ``cpp`` before parsing
(``frontends/common/parser_options.cpp``)::

    cpp -C -undef -nostdinc -x assembler-with-cpp <-D/-I options> -I<p4include> FILE

``-C`` keeps comments, ``-undef`` and ``-nostdinc`` keep C's predefined macros
and system headers out, and ``assembler-with-cpp`` stops cpp from choking on
P4 text that is not C (``'`` in comments, ``@`` annotations). The output keeps
cpp's ``# N "file"`` line markers so the parser can report locations in the
original files. User include directories are searched before intbed's own
``p4include`` (which holds ``core.p4`` and ``v1model.p4``); ``#include "x"``
is looked up beside the including file first, as cpp always does.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from common.errors import Loc, P4SyntaxError
from common.textfile import decode_text, read_text

__all__ = ["builtin_include_dir", "preprocess"]

_NO_DEFINES: Mapping[str, str] = MappingProxyType({})

# The options p4c passes to cpp, in p4c's order.
CPP_FLAGS = ("-C", "-undef", "-nostdinc", "-x", "assembler-with-cpp")

# gcc's diagnostic shape: "file:line:col: error: message" (col optional;
# "fatal error" for a missing include).
_DIAG = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?:fatal )?error:\s*(?P<msg>.*)$",
    re.MULTILINE,
)


def builtin_include_dir() -> Path:
    """The directory with intbed's ``core.p4`` and ``v1model.p4``."""
    return Path(__file__).resolve().parent / "p4include"


def cpp_command(
    path: Path,
    include_dirs: Sequence[Path] = (),
    defines: Mapping[str, str] = _NO_DEFINES,
) -> list[str]:
    """The cpp command line for ``path`` (exposed for diagnostics and tests)."""
    cpp = shutil.which("cpp")
    if cpp is None:
        raise P4SyntaxError(
            "the C preprocessor 'cpp' was not found on PATH; install gcc's cpp "
            "(Debian/Ubuntu: apt-get install cpp)",
            Loc(str(path), 1),
        )
    cmd = [cpp, *CPP_FLAGS]
    for name, value in defines.items():
        cmd.append(f"-D{name}={value}" if value else f"-D{name}")
    for d in include_dirs:
        cmd.append(f"-I{d}")
    cmd.append(f"-I{builtin_include_dir()}")
    cmd.append(str(path))
    return cmd


def preprocess(
    path: Path,
    include_dirs: Sequence[Path] = (),
    defines: Mapping[str, str] = _NO_DEFINES,
) -> str:
    """Preprocess ``path``; return the text with ``# N "file"`` markers.

    A missing include, an ``#error`` or any other cpp failure raises
    P4SyntaxError at the location cpp reports.
    """
    path = Path(path)
    if not path.is_file():
        raise P4SyntaxError(f"cannot open P4 source file '{path}'", None)
    read_text(path, "P4 source", P4SyntaxError)  # located, before cpp copies the bytes
    proc = subprocess.run(
        cpp_command(path, include_dirs, defines),
        capture_output=True,
        check=False,
    )
    stderr = proc.stderr.decode("utf-8", errors="replace")
    if proc.returncode != 0:
        raise _cpp_error(path, stderr)
    return _decode_output(proc.stdout, path)


_MARKER = re.compile(rb'^# (\d+) "([^"\n]*)"', re.MULTILINE)


def _decode_output(data: bytes, path: Path) -> str:
    """cpp's output as text; bytes that are not UTF-8 (in an included file)
    are located in that file through cpp's line markers."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        markers = list(_MARKER.finditer(data, 0, exc.start))
        if not markers:
            decode_text(data, str(path), "P4 source", P4SyntaxError)
        last = markers[-1]
        line = int(last.group(1)) + data.count(b"\n", last.end(), exc.start) - 1
        file = last.group(2).decode("utf-8", errors="replace")
        raise P4SyntaxError("P4 source is not UTF-8 text: byte "
                            f"0x{data[exc.start]:02x} cannot start or continue a character",
                            Loc(file, line)) from None


def _cpp_error(path: Path, stderr: str) -> P4SyntaxError:
    """Turn cpp's first error line into a located P4SyntaxError."""
    m = _DIAG.search(stderr)
    if m is None:
        detail = stderr.strip().splitlines()
        message = detail[-1] if detail else "the C preprocessor failed"
        return P4SyntaxError(f"preprocessor: {message}", Loc(str(path), 1))
    loc = Loc(m["file"], int(m["line"]), int(m["col"] or 0))
    return P4SyntaxError(m["msg"].strip(), loc)


_QUOTED = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$')


def flatten_includes(path: str | Path, _stack: tuple[Path, ...] = ()) -> str:
    """The text of ``path`` with every quoted ``#include "..."`` inlined,
    recursively and relative to the including file as cpp resolves them,
    with ``#line`` markers around each so diagnostics still name the
    original files. A program shipped as one text (P4Runtime's device
    config) then compiles anywhere."""
    path = Path(path).resolve()
    if path in _stack:
        raise P4SyntaxError(f"{path.name} includes itself", Loc(str(_stack[-1]), 1))
    out: list[str] = []
    lines = read_text(path, "P4 source", P4SyntaxError).splitlines()
    for number, line in enumerate(lines, 1):
        m = _QUOTED.match(line)
        if m is None:
            out.append(line)
            continue
        target = path.parent / m.group(1)
        if not target.is_file():
            raise P4SyntaxError(f"include file '{m.group(1)}' not found", Loc(str(path), number))
        out.append(f'#line 1 "{target}"')
        out.append(flatten_includes(target, (*_stack, path)))
        out.append(f'#line {number + 1} "{path}"')
    return "\n".join(out) + "\n"
