"""``intbed --version``: what is installed, so a bug report says which code and
which external tools a run could use."""

from __future__ import annotations

import platform
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

# External programs the live targets and tests look for on PATH, by what they serve.
TOOLS = (
    ("p4c", "p4c"),
    ("BMv2", "simple_switch_grpc"),
    ("redis-server", "redis-server"),
    ("influxd", "influxd"),
    ("mnexec", "mnexec"),
)
CHECKOUT = Path(__file__).resolve().parents[1]


def package_version() -> str:
    try:
        return metadata.version("intbed")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def checkout_commit(root: Path = CHECKOUT) -> str | None:
    """The commit of a git checkout intbed runs from (``+dirty`` with local edits),
    or None for an installed copy."""
    if not (root / ".git").exists() or shutil.which("git") is None:
        return None
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=10, check=True)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def version_lines() -> list[str]:
    lines = [f"intbed {package_version()}"]
    commit = checkout_commit()
    if commit is not None:
        lines.append(f"commit {commit} ({CHECKOUT})")
    lines.append(f"Python {platform.python_version()} ({platform.python_implementation()})")
    for label, program in TOOLS:
        path = shutil.which(program)
        found = path if path is not None else "not found"
        name = label if label == program else f"{label} ({program})"
        lines.append(f"{name}: {found}")
    return lines
