"""Where intbed's files are, the same way from a checkout and an install.

Every intbed package sits in one directory (a checkout's root, or
site-packages after ``pip install .``); child processes that import intbed
(host senders, ``intbed-switch``) get that directory on ``PYTHONPATH``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
"""The directory that holds ``common``, ``dataplane``, ``intbed`` and the rest."""


def checkout_root() -> Path | None:
    """The git checkout intbed runs from, or None for an installed copy."""
    return PACKAGE_ROOT if (PACKAGE_ROOT / ".git").exists() else None


def shared_dir() -> Path:
    """``../shared`` beside a checkout (p4c's samples and corpus); a path
    that does not exist for an installed copy."""
    return PACKAGE_ROOT.parent / "shared"


def child_env(extra: Mapping[str, str] | None = None, root: Path = PACKAGE_ROOT
              ) -> dict[str, str]:
    """This process's environment with intbed importable in a child process:
    the checkout at ``root`` (this one unless another is being measured)
    first on its import path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(root), *filter(None, [env.get("PYTHONPATH")])])
    env.update(extra or {})
    return env
