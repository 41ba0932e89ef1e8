"""Output paths checked before a command does any work, so a typo in a
directory or a suffix costs one line, not a finished run and a traceback."""

from __future__ import annotations

import os
from pathlib import Path

from common.errors import IntbedError, Loc


def option_error(option: str, message: str) -> IntbedError:
    """An error located at a command-line option (``--png: error: ...``)."""
    return IntbedError(message, Loc(option, 0))


def check_output_file(path: Path, option: str) -> Path:
    """``path`` can be created or overwritten: its directory exists and is
    writable, and it is not itself a directory."""
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise option_error(option, f"{path}: directory {parent} does not exist; create it "
                                   "or write elsewhere")
    if path.is_dir():
        raise option_error(option, f"{path} is a directory; give a file name")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise option_error(option, f"{path}: not writable here (permission denied)")
    return path


def check_figure_file(path: Path, option: str) -> Path:
    """``check_output_file`` plus a suffix matplotlib can write."""
    from matplotlib.backend_bases import FigureCanvasBase

    kinds = FigureCanvasBase.get_supported_filetypes()
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in kinds:
        raise option_error(option, f"{path}: cannot draw a '{path.suffix or '(no suffix)'}' "
                                   f"file; use one of {', '.join('.' + k for k in kinds)}")
    return check_output_file(path, option)
