"""pytest imports test modules outside packages by their file name alone,
so two such files of one name stop the whole run at collection."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_test_modules_outside_packages_share_a_name() -> None:
    seen: dict[str, list[str]] = defaultdict(list)
    for f in TESTS.rglob("test_*.py"):
        if not (f.parent / "__init__.py").is_file():
            seen[f.name].append(str(f.relative_to(TESTS)))
    clashes = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not clashes, f"rename one of each: {clashes}"
