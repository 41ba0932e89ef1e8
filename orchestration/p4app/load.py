"""One entry point for both p4-utils network descriptions."""

from __future__ import annotations

from pathlib import Path

from common.errors import Loc
from orchestration.p4app.spec import P4App, P4AppError, build_app


def load_app(path: str | Path) -> P4App:
    """A ``p4app.json`` (any ``.json``) or a NetworkAPI script (``.py``), built."""
    path = Path(path)
    if path.suffix == ".json":
        from orchestration.p4app.jsonfile import load_p4app

        return build_app(load_p4app(path))
    if path.suffix == ".py":
        from orchestration.p4app.netapi import load_script

        return build_app(load_script(path))
    raise P4AppError("not a p4-utils network: give a p4app.json (.json) or a NetworkAPI "
                     "script (.py)", Loc(str(path), 0))
