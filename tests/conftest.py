"""Shared fixtures; puts the repository root on sys.path so tests run from a
plain checkout as well as from an installed tree."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

# p4c's test programs and their STF tests, kept outside the repository.
SAMPLES_DIR = REPO_ROOT / ".." / "shared" / "p4-conformance" / "samples"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def samples_dir() -> Path:
    if not SAMPLES_DIR.is_dir():
        pytest.skip("../shared/p4-conformance/samples not found")
    return SAMPLES_DIR.resolve()


@pytest.fixture
def clean(tmp_path: Path) -> Iterator[None]:
    """Nothing of the test's networks (namespaces, interfaces, processes)
    may remain afterwards."""
    from orchestration.live.snapshot import leftovers, snapshot

    before = snapshot()
    yield
    left = leftovers(before, snapshot(), markers=(str(tmp_path),))
    assert left == [], left
