"""intbed's P4-16 v1model programs, shipped as package data so an installed
intbed finds them as a checkout does."""

from __future__ import annotations

from pathlib import Path

DIR = Path(__file__).resolve().parent


def program_path(name: str | Path) -> Path:
    """``l3_forward`` -> this folder's ``l3_forward.p4``; a path ending in
    ``.p4`` is taken as is."""
    p = Path(name)
    if p.suffix == ".p4":
        return p
    return DIR / f"{name}.p4"


def programs() -> list[Path]:
    """Every program in this folder, by name."""
    return sorted(DIR.glob("*.p4"))
