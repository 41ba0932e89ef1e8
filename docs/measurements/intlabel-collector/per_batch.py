"""The live INT-label collector's time per batch of report frames, and how
long the oldest frame of a batch waited: is its cost a fixed price per
frame (the sim's single server, ``COLLECTOR_COST_US``) or a price per
batch plus one per frame, so that it gets cheaper per frame when reports
queue?

Runs Pro's flag at T = T_i = 100 ms, k = 1 on the mininet target (as root,
nothing else of intbed running), once per restore factor (1: the paper's
k T; 10: the authors' repository), and fits busy seconds = a + b n over
the batches by least squares, and busy seconds = b n + d items + c
changes, where items counts the INT items the batch's reports carried and
changes counts the changes of S that Pro made while the batch was handled
(each a P4Runtime write to a switch).

``python docs/measurements/intlabel-collector/per_batch.py [--restore 1
--restore 10] [--out FILE]`` prints a summary and writes every batch as
YAML.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


def measure(restore: float, packets: int = 2000) -> dict[str, Any]:
    import numpy as np

    from orchestration.live.options import LiveOptions
    from orchestration.network import RunEnv
    from orchestration.systems.intlabel import run as run_mod
    from orchestration.systems.intlabel.config import RunConfig

    batches: list[tuple[int, int, int, float, float]] = []
    original = run_mod._Run._on_reports

    def timed(self: Any, frames: list[tuple[bytes, float]]) -> None:
        start = self.net.clock.now()
        changes = len(self.pro.changes)
        items = self.collector.stats.items
        t0 = time.perf_counter()
        original(self, frames)
        busy = time.perf_counter() - t0
        batches.append((len(frames), self.collector.stats.items - items,
                        len(self.pro.changes) - changes, busy,
                        start - min(t for _, t in frames)))

    cfg = RunConfig(rate_bps=5e6, T_ms=100.0, Ti_ms=100.0, packets=packets, mode="A", pro=True,
                    pro_style="flag", restore_factor=restore, k=1.0)
    run_mod._Run._on_reports = timed  # type: ignore[method-assign]
    try:
        m = run_mod.run_intlabel(cfg, RunEnv(target="mininet", seed=0, live=LiveOptions()))
    finally:
        run_mod._Run._on_reports = original  # type: ignore[method-assign]
    n = np.array([b[0] for b in batches], dtype=float)
    items = np.array([b[1] for b in batches], dtype=float)
    c = np.array([b[2] for b in batches], dtype=float)
    busy = np.array([b[3] for b in batches])
    wait = np.array([b[4] for b in batches])
    b, a = np.polyfit(n, busy, 1) if len(set(n)) > 1 else (busy.sum() / n.sum(), 0.0)
    # busy = per frame x n + per item x items + per change x changes
    per_frame, per_item, per_change = np.linalg.lstsq(np.column_stack([n, items, c]), busy,
                                                      rcond=None)[0]
    return {"restore_factor": restore, "frames": int(n.sum()), "batches": len(batches),
            "us_per_frame": round(float(busy.sum() / n.sum()) * 1e6, 1),
            "fit_us": {"per_batch": round(float(a) * 1e6, 1),
                       "per_frame": round(float(b) * 1e6, 1)},
            "items": int(items.sum()),
            "fit_frames_items_changes_us": {"per_frame": round(float(per_frame) * 1e6, 1),
                                            "per_item": round(float(per_item) * 1e6, 1),
                                            "per_change": round(float(per_change) * 1e6, 1)},
            "frames_per_batch": {"median": float(np.median(n)), "max": int(n.max())},
            "oldest_wait_ms": {"median": round(float(np.median(wait)) * 1e3, 2),
                               "p90": round(float(np.quantile(wait, 0.9)) * 1e3, 2),
                               "max": round(float(wait.max()) * 1e3, 2)},
            "int_bandwidth_occupation": round(m.bandwidth_occupation, 5),
            "pro_changes": len(m.pro_changes),
            "batches_n_items_changes_busy_us_wait_ms": [
                [k, i, ch, round(s * 1e6, 1), round(w * 1e3, 2)] for k, i, ch, s, w in batches]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--restore", type=float, action="append",
                    help="restore factors (repeatable; default 1 and 10)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    import yaml

    runs = [measure(r) for r in (args.restore or [1.0, 10.0])]
    for r in runs:
        print(yaml.safe_dump({k: v for k, v in r.items() if not k.startswith("batches_")},
                             sort_keys=False), end="---\n")
    if args.out is not None:
        args.out.write_text(yaml.safe_dump({"runs": runs}, sort_keys=False))


if __name__ == "__main__":
    main()
