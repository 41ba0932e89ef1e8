"""What a run pays before its first packet: parsing P4 and building traffic.

- ``parse``: a typical conformance sample (``header-stack-ops-bmv2.p4``,
  which includes v1model.p4) preprocessed once, then parsed with the grammar
  tables already loaded; the best of ``repeats`` parses is reported, since
  the minimum is the figure least disturbed by a shared machine.
- ``schedule``: a Poisson schedule of 100,000 packets/s for one second to
  two random destinations, timed while it is generated and while it is
  iterated (what a sender does once per run).

Timings live here rather than in the tests: a wall-clock bound in a test
fails on a loaded machine without anything being wrong.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PARSE_SAMPLE = "header-stack-ops-bmv2.p4"
SCHEDULE_RATE_PPS = 100_000


def _best(fn: Callable[[], object], repeats: int) -> float:
    """The fastest of ``repeats`` calls of ``fn``, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def bench_parse(samples_dir: Path, repeats: int = 3) -> dict[str, Any]:
    """Preprocess and parse times of ``PARSE_SAMPLE`` (module docstring)."""
    from dataplane.compiler.frontend.parser import parse_text
    from dataplane.compiler.frontend.preprocess import preprocess

    path = samples_dir / PARSE_SAMPLE
    if not path.is_file():
        return {"skipped": f"{path} not found"}
    t0 = time.perf_counter()
    text = preprocess(path, [samples_dir])
    preprocess_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    program = parse_text(text, str(path))
    first_s = time.perf_counter() - t0
    best_s = _best(lambda: parse_text(text, str(path)), repeats)
    return {
        "program": path.stem,
        "lines": text.count("\n"),
        "decls": len(program.decls),
        "preprocess_ms": round(preprocess_s * 1e3, 1),
        "first_parse_ms": round(first_s * 1e3, 1),
        "parse_ms": round(best_s * 1e3, 1),
        "repeats": repeats,
    }


def bench_schedule(rate_pps: int = SCHEDULE_RATE_PPS, seed: int = 3) -> dict[str, Any]:
    """Generation and iteration times of one second of Poisson traffic."""
    from traffic.schedules import poisson, random_destinations

    t0 = time.perf_counter()
    sched = poisson(rate_pps=rate_pps, duration_us=1_000_000, seed=seed, packet_size=64,
                    dest=random_destinations(["x", "y"], seed=seed + 1))
    generate_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    events = sum(1 for _ in sched)
    iterate_s = time.perf_counter() - t0
    return {
        "rate_pps": rate_pps,
        "events": events,
        "generate_ms": round(generate_s * 1e3, 1),
        "iterate_ms": round(iterate_s * 1e3, 1),
        "events_per_s": round(events / iterate_s) if iterate_s > 0 else None,
    }


def run_prep_benchmarks(samples_dir: Path | None = None, repeats: int = 3) -> dict[str, Any]:
    """Both figures: ``{"parse": ..., "schedule": ...}``."""
    from benchmarks.engine import default_samples_dir

    return {"parse": bench_parse(samples_dir or default_samples_dir(), repeats),
            "schedule": bench_schedule()}
