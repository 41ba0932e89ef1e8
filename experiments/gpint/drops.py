"""Why a planner's probes fail under load: drops along its paths, predicted.

A probe is lost when any switch it crosses drops it. With Poisson
background traffic a probe meets each switch's time-average state, so the
chance it survives a path is the product, over the path's visits, of one
minus that switch's drop ratio (input drops over packets received, read
from the sim switches after the run). ``python -m experiments.gpint.drops
--n 20 --planner euler --seeds 0,1,2,3`` runs ``run_gpint`` with a long
probe timeout (so no probe is counted for being late) and prints, per
seed, the predicted and the measured failed-probe ratio, the busiest
switch's utilisation and drop ratio, and how often a path visits a switch
over 100 % (docs/gpint.md, "Failed probes at 14,000 packets/s").
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from typing import Any

from orchestration.network import Network, RunEnv
from orchestration.systems.gpint import GpintRunConfig, run_gpint, run_topology, switch_loads


def diagnose(cfg: GpintRunConfig, seed: int) -> dict[str, Any]:
    """One run's predicted and measured failed-probe ratios (module doc)."""
    drop: dict[str, float] = {}

    def read(net: Network) -> None:
        for name, sw in net.switches.items():  # type: ignore[attr-defined]
            drop[name] = sw.input_drops / max(1, sw.rx_packets)

    result = run_gpint(cfg, RunEnv(seed=seed), before_finish=read)
    paths = cfg.paths(seed)
    loads = switch_loads(run_topology(cfg, seed), cfg.load_pps)
    util = {s: loads[s] / result.capacities_pps[s] for s in loads}
    survive = [math.prod(1 - drop[s] for s in path) for path in paths]
    summary = result.summary()
    return {
        "seed": seed, "paths": len(paths), "lengths": [len(p) for p in paths],
        "busiest_utilisation": round(max(util.values()), 3),
        "largest_drop_ratio": round(max(drop.values()), 3),
        "saturated_visits_per_path": round(
            sum(sum(1 for s in p if util[s] > 1) for p in paths) / len(paths), 2),
        "predicted_failed": round(1 - sum(survive) / len(survive), 3),
        "measured_failed": round(summary["failed_probe_ratio"], 3),
        "late": round(summary["late_probe_ratio"], 3), "sessions": summary["sessions"],
    }


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--planner", default="euler")
    ap.add_argument("--load", type=float, default=14_000.0)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--seeds", default="0,1,2,3")
    args = ap.parse_args(argv)
    cfg = GpintRunConfig(n=args.n, planner=args.planner, load_pps=args.load,
                         probe_timeout_s=args.timeout, duration_s=args.duration)
    for seed in (int(s) for s in args.seeds.split(",")):
        print(json.dumps(diagnose(cfg, seed)))


if __name__ == "__main__":
    main()
