"""Input files read as UTF-8 text, with a located error for anything else.

A binary file or one in another encoding would otherwise surface as a
``UnicodeDecodeError`` traceback far from the file that caused it; here it is
one line naming the file, the line and column of the first bad byte.
"""

from __future__ import annotations

from pathlib import Path

from common.errors import IntbedError, Loc


def decode_text(data: bytes, file: str, what: str,
                error: type[IntbedError] = IntbedError) -> str:
    """``data`` as UTF-8 text; ``error`` located at the first byte that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error(f"{what} is not UTF-8 text: byte 0x{data[exc.start]:02x} cannot start "
                    "or continue a character; is this the right file?",
                    Loc(file, line, col)) from None


def read_text(path: str | Path, what: str, error: type[IntbedError] = IntbedError) -> str:
    """The text of the file at ``path``, a ``what`` (e.g. "STF file"), as an
    ``error`` when it cannot be read or is not UTF-8."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise error(f"cannot read {what}: {reason}", Loc(str(path), 0)) from None
    return decode_text(data, str(path), what, error)


def read_yaml_mapping(path: str | Path, what: str, keys: str,
                      error: type[IntbedError] = IntbedError) -> dict:
    """The mapping a YAML file (a ``what``, e.g. "switch profile") holds;
    ``error`` naming the file, and the line where the YAML breaks, or the
    ``keys`` it should have when it holds something else."""
    import yaml

    text = read_text(path, what, error)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise error(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise error(f"{path}: a {what} is a mapping ({keys})")
    return data
