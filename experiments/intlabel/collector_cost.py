"""How long intbed's INT-label collector takes on a live target, where it
runs on Redis beside the switches, and the sim's model of it fitted.

In virtual time the collector would pay nothing, yet on the mininet target
it is a Python process that parses each report, writes the database and the
aging store (Redis round trips) and shares its process with Pro, whose
changes of S are P4Runtime writes: with Pro's flag at k = 1 its reports
come faster than it handles them and updates reach the aging store
hundreds of milliseconds late (docs/intlabel.md, "the collector's cost").
This runs Pro's flag on the mininet target (as root, nothing else of intbed
running) and times every batch the collector is handed
(``run_intlabel``'s ``on_batch``). Busy time is fitted by least squares as
a price per INT item and per change of S made meanwhile, over the batches
handled while the traffic runs, and as a price per item over those after
it: ``collector_model="measured"``'s ``COLLECTOR_ITEM_US``,
``COLLECTOR_CHANGE_US`` and ``COLLECTOR_ITEM_IDLE_US``. Busy time over
frames is the older per-frame model's ``COLLECTOR_COST_US``.

``python -m experiments.intlabel.collector_cost [--T-ms 100 ...]
[--restore 1 --restore 10] [--repeat N] [--out FILE]`` prints the summary and writes it,
with every batch, as YAML.
"""

from __future__ import annotations

import argparse
import platform
from pathlib import Path
from typing import Any

from common.host import cores, cpu_model

# A batch handled this long after the traffic's end counts as idle: the
# senders and switches have stopped by then.
IDLE_AFTER_S = 0.0


def measure(T_ms: float, restore: float, *, target: str = "mininet",
            packets: int = 2000) -> dict[str, Any]:
    """One run of Pro's flag at ``T_ms`` with k T = T_i = 100 ms and the
    restore ``restore`` x k T; every batch the collector handled."""
    from orchestration.live.options import LiveOptions
    from orchestration.network import RunEnv, get_target
    from orchestration.systems.intlabel.config import RunConfig
    from orchestration.systems.intlabel.run import CollectorBatch, run_intlabel

    batches: list[CollectorBatch] = []
    cfg = RunConfig(rate_bps=5e6, T_ms=T_ms, Ti_ms=100.0, packets=packets, mode="A", pro=True,
                    pro_style="flag", restore_factor=restore, k=100.0 / T_ms)
    live = LiveOptions() if get_target(target).live else None
    m = run_intlabel(cfg, RunEnv(target=target, seed=0, live=live), on_batch=batches.append)
    frames = sum(b.frames for b in batches)
    busy = sum(b.busy_s for b in batches)
    waits = sorted(b.wait_s for b in batches) or [0.0]
    return {"T_ms": T_ms, "restore_factor": restore, "frames": frames,
            "batches": len(batches), "items": sum(b.items for b in batches),
            "busy_s": round(busy, 4),
            "us_per_frame": round(busy / frames * 1e6, 1) if frames else None,
            "oldest_wait_ms": {"median": round(waits[len(waits) // 2] * 1e3, 2),
                               "p90": round(waits[int(0.9 * (len(waits) - 1))] * 1e3, 2),
                               "max": round(waits[-1] * 1e3, 2)},
            "pro_changes": len(m.pro_changes),
            "int_bandwidth_occupation": round(m.bandwidth_occupation, 5),
            "traffic_s": round(cfg.traffic_duration_s(), 3),
            "batches_frames_items_changes_busy_us_wait_ms_after_traffic_ms": [
                [b.frames, b.items, b.changes, round(b.busy_s * 1e6, 1),
                 round(b.wait_s * 1e3, 2), round(b.after_traffic_s * 1e3, 1)]
                for b in batches]}


def fit(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The measured model over every run's batches: busy = d items + c
    changes while the traffic runs, busy = d' items after it."""
    import numpy as np

    rows = np.array([r for run in runs
                     for r in run["batches_frames_items_changes_busy_us_wait_ms_after_traffic_ms"]],
                    dtype=float).reshape(-1, 6)
    loaded = rows[rows[:, 5] < IDLE_AFTER_S * 1e3]
    idle = rows[rows[:, 5] >= IDLE_AFTER_S * 1e3]
    out: dict[str, Any] = {"batches_loaded": len(loaded), "batches_idle": len(idle)}
    if len(loaded) >= 2:
        a = np.column_stack([loaded[:, 1], loaded[:, 2]])
        (d, c), *_ = np.linalg.lstsq(a, loaded[:, 3], rcond=None)
        resid = loaded[:, 3] - a @ np.array([d, c])
        total = ((loaded[:, 3] - loaded[:, 3].mean()) ** 2).sum()
        out.update(item_us=round(float(d), 1), change_us=round(float(c), 1),
                   r2=round(float(1 - (resid ** 2).sum() / total), 3) if total else None)
    if len(idle) and idle[:, 1].sum():
        # Pro has stopped once the traffic ends: no changes to share the time.
        out["item_idle_us"] = round(float(idle[:, 3].sum() / idle[:, 1].sum()), 1)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--T-ms", type=float, action="append", dest="Ts",
                    help="labeling intervals (repeatable; default 100)")
    ap.add_argument("--restore", type=float, action="append",
                    help="restore factors (repeatable; default 1 and 10)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs of each setting (the fit pools them; each run has its own)")
    ap.add_argument("--target", default="mininet")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    runs = [measure(t, r, target=args.target) for _ in range(args.repeat)
            for t in (args.Ts or [100.0]) for r in (args.restore or [1.0, 10.0])]
    for run in runs:
        run["measured_model"] = fit([run])
    frames = sum(r["frames"] for r in runs)
    busy = sum(r["busy_s"] for r in runs)
    out = {"target": args.target, "machine": {"cores": cores(), "cpu": cpu_model(),
                                              "python": platform.python_version()},
           "us_per_frame": round(busy / frames * 1e6, 1) if frames else None,
           "measured_model": fit(runs), "runs": runs}
    import yaml

    summary = {k: v for k, v in out.items() if k != "runs"}
    summary["runs"] = [{k: v for k, v in r.items() if not k.startswith("batches_")}
                       for r in runs]
    print(yaml.safe_dump(summary, sort_keys=False), end="")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(yaml.safe_dump(out, sort_keys=False))


if __name__ == "__main__":
    main()
