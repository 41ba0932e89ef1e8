"""common.paths: where intbed is, for this process and its children."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from common.paths import PACKAGE_ROOT, checkout_root, child_env, shared_dir


def test_package_root_holds_the_packages() -> None:
    for pkg in ("common", "dataplane", "orchestration", "p4src", "traffic"):
        assert (PACKAGE_ROOT / pkg / "__init__.py").is_file(), pkg
    assert shared_dir() == PACKAGE_ROOT.parent / "shared"
    root = checkout_root()
    assert root is None or (root / ".git").exists()


def test_child_env_puts_intbed_first(tmp_path: Path) -> None:
    env = child_env({"EXTRA": "1"})
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(PACKAGE_ROOT)
    assert env["EXTRA"] == "1"
    out = subprocess.run([sys.executable, "-c", "import common, os; print(common.__file__)"],
                         env=child_env(), cwd=tmp_path, capture_output=True, text=True,
                         check=True)
    assert Path(out.stdout.strip()).parent == PACKAGE_ROOT / "common"
