"""Import intbed's own top-level packages before a controller's folder can
shadow them: scripts are often called ``controller.py``, and the script's
folder comes first on ``sys.path``. Loaded once by the shim packages."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[3])
PACKAGES = ("common", "p4proto", "controller")


def load() -> None:
    if all(getattr(sys.modules.get(p), "__file__", "") and
           str(sys.modules[p].__file__).startswith(ROOT) for p in PACKAGES):
        return
    saved = list(sys.path)
    sys.path.insert(0, ROOT)
    try:
        for name in PACKAGES:
            module = sys.modules.get(name)
            if module is not None and not str(getattr(module, "__file__", "")).startswith(ROOT):
                del sys.modules[name]
            importlib.import_module(name)
    finally:
        sys.path[:] = saved


load()
