"""How long intbed's INT-label collector takes per report frame on a live
target, where it runs on Redis beside the switches.

In virtual time the collector would pay nothing, yet on the mininet target
it is a Python process that parses each report, writes the database and the
aging store (Redis round trips) and runs Pro's reaction: with Pro's flag at
k = 1 its reports come faster than it handles them, updates reach the
aging store hundreds of milliseconds late, and the flag flips half as often
as in a free collector (docs/intlabel.md, "the collector's cost"). This
runs Pro's flag on the mininet target (as root) and times every batch the
collector is handed: busy seconds over frames is the cost per frame that
``RunConfig.collector_cost_us`` charges in the sim (``COLLECTOR_COST_US``).

``python -m experiments.intlabel.collector_cost [--T-ms 50 --T-ms 100]
[--out FILE]`` prints and writes the measurement as YAML.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path
from typing import Any

from common.host import cores, cpu_model


def measure(T_ms: float, *, target: str = "mininet", packets: int = 2000) -> dict[str, Any]:
    """One run of Pro's flag at ``T_ms`` (k T = 100 ms); the collector's
    batches timed (``perf_counter``) around ``_Run._on_reports``."""
    from controller.intlabel.config import PAPER_RESTORE_FACTOR
    from orchestration.live.options import LiveOptions
    from orchestration.network import RunEnv, get_target
    from orchestration.systems.intlabel import run as run_mod
    from orchestration.systems.intlabel.config import RunConfig

    batches: list[tuple[int, float]] = []
    original = run_mod._Run._on_reports

    def timed(self: Any, frames: list[tuple[bytes, float]]) -> None:
        t0 = time.perf_counter()
        original(self, frames)
        batches.append((len(frames), time.perf_counter() - t0))

    cfg = RunConfig(rate_bps=5e6, T_ms=T_ms, Ti_ms=100.0, packets=packets, mode="A", pro=True,
                    pro_style="flag", restore_factor=PAPER_RESTORE_FACTOR, k=100.0 / T_ms)
    live = LiveOptions() if get_target(target).live else None
    run_mod._Run._on_reports = timed  # type: ignore[method-assign]
    try:
        m = run_mod.run_intlabel(cfg, RunEnv(target=target, seed=0, live=live))
    finally:
        run_mod._Run._on_reports = original  # type: ignore[method-assign]
    frames = sum(n for n, _ in batches)
    busy = sum(s for _, s in batches)
    return {"T_ms": T_ms, "frames": frames, "batches": len(batches), "busy_s": round(busy, 4),
            "us_per_frame": round(busy / frames * 1e6, 1) if frames else None,
            "pro_changes": len(m.pro_changes), "traffic_s": round(cfg.traffic_duration_s(), 3)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--T-ms", type=float, action="append", dest="Ts",
                    help="labeling intervals (repeatable; default 50 and 100)")
    ap.add_argument("--target", default="mininet")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    runs = [measure(t, target=args.target) for t in (args.Ts or [50.0, 100.0])]
    frames = sum(r["frames"] for r in runs)
    busy = sum(r["busy_s"] for r in runs)
    out = {"target": args.target, "machine": {"cores": cores(), "cpu": cpu_model(),
                                              "python": platform.python_version()},
           "runs": runs, "us_per_frame": round(busy / frames * 1e6, 1) if frames else None}
    import yaml

    text = yaml.safe_dump(out, sort_keys=False)
    print(text, end="")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)


if __name__ == "__main__":
    main()
