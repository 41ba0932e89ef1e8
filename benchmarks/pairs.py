"""Wall-clock comparison of two versions of the sim, in alternating pairs.

A shared machine's speed swings by up to 40% from one minute to the next,
so a figure measured today against one from last week says little. Each
pair here runs ``intbed bench sim --json`` in this checkout, then in the
other one (or in this one with the compiled fast path off), each in a
fresh process; the host's swing moves both runs of a pair alike, and the
median of the per-pair ratios is the figure the README's table reports.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.sim import ran_as_python
from common.errors import IntbedError
from common.paths import PACKAGE_ROOT, child_env
from fastpath.loader import PURE_ENV

RATES = ("fabric", "gpint")
"""The cases whose figure is a real-time factor (higher is faster)."""


def bench_once(root: Path, seconds: float, k: int, pure: bool = False) -> dict[str, Any]:
    """One ``intbed bench sim --json`` of the checkout at ``root``, in a
    fresh process that imports that checkout's code."""
    env = child_env({PURE_ENV: "1"} if pure else {}, root)
    argv = [sys.executable, "-m", "intbed.cli", "bench", "sim", "--json",
            "--seconds", repr(seconds), "--k", str(k)]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=root, check=False)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = " | ".join(proc.stderr.strip().splitlines()[-4:])
        raise IntbedError(f"intbed bench sim in {root} failed (exit {proc.returncode}): {tail}")
    try:
        report: dict[str, Any] = json.loads(lines[-1])
    except json.JSONDecodeError as exc:
        raise IntbedError(f"intbed bench sim in {root} printed no JSON report: "
                          f"{lines[-1][:200]!r}") from exc
    return report


def pair_row(this: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """One pair's figures and ratios (above 1: this checkout is faster, or
    for the fat-tree's memory, smaller)."""
    row: dict[str, Any] = {}
    for case in RATES:
        a, b = this[case]["realtime_factor"], other[case]["realtime_factor"]
        row[case] = {"this": a, "against": b, "ratio": round(a / b, 3) if b else None}
    a, b = this["fat_tree"], other["fat_tree"]
    row["fat_tree"] = {
        "this_wall_s": a["wall_s"], "against_wall_s": b["wall_s"],
        "ratio": round(b["wall_s"] / a["wall_s"], 3) if a["wall_s"] else None,
        "this_peak_rss_mb": a["peak_rss_mb"], "against_peak_rss_mb": b["peak_rss_mb"],
    }
    return row


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(statistics.median(known), 3) if known else None


def compare_wall(against: Path | None, pairs: int, seconds: float = 10.0, k: int = 8,
                 against_pure: bool = False,
                 progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """``pairs`` alternating runs of this checkout and ``against`` (or of
    this one with its fast path off: ``against_pure``)."""
    if (against is None) == (not against_pure):
        raise IntbedError("compare with one of another checkout and --against-pure")
    other_root = PACKAGE_ROOT if against is None else against
    label = "pure Python" if against_pure else str(other_root)
    rows = []
    stale: dict[str, set[str]] = {"this": set(), "against": set()}
    for i in range(pairs):
        if progress is not None:
            progress(f"pair {i + 1} of {pairs}: this checkout")
        this = bench_once(PACKAGE_ROOT, seconds, k)
        if progress is not None:
            progress(f"pair {i + 1} of {pairs}: {label}")
        other = bench_once(other_root, seconds, k, pure=against_pure)
        rows.append(pair_row(this, other))
        stale["this"].update(ran_as_python(this))
        stale["against"].update(ran_as_python(other))
    median = {case: {"this": _median([r[case]["this"] for r in rows]),
                     "against": _median([r[case]["against"] for r in rows]),
                     "ratio": _median([r[case]["ratio"] for r in rows])} for case in RATES}
    median["fat_tree"] = {"ratio": _median([r["fat_tree"]["ratio"] for r in rows])}
    return {"against": label, "pairs": rows, "median": median,
            "simulated_s": seconds, "k": k,
            "ran_as_python": {side: sorted(names) for side, names in stale.items()}}
