"""How long Pro's flags last and how late their expiries come, live against
the sim, from a Fig. 12 cross-check's live runs (k = 1, T = 100 ms).

    .venv/bin/python docs/measurements/intlabel-collector/flag_lengths.py \
        results/crosscheck/intlabel-fig12-quick [--collector-profile NAME|PATH]

For every live run of Pro's flag at T = 100 ms in the folder it prints the
flags' lengths (a port's S = 48 to its S = 0, ms), the lag of the
expiries that raised them (the time since the port's last update minus
k T: what the Pro loop saw, whichever way the expiry came), how the live
store found its expiries (notification, sweep, a set that found the
deadline passed) and the INT bandwidth occupation; then the same run's
config on the sim with the same seed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from orchestration.network import RunEnv  # noqa: E402
from orchestration.systems.intlabel.config import RunConfig  # noqa: E402
from orchestration.systems.intlabel.run import run_intlabel  # noqa: E402

FLAGGED = 48  # intlabel.p4's LABEL_ALL_SHIFT


def flag_lengths_ms(changes: list) -> list[float]:
    ports: dict[tuple[str, int], list[tuple[float, int]]] = {}
    for t, switch, port, shift in changes:
        ports.setdefault((switch, port), []).append((t, shift))
    return [(t1 - t0) * 1e3 for seq in ports.values()
            for (t0, s0), (t1, s1) in zip(seq, seq[1:]) if s0 == FLAGGED and s1 != FLAGGED]


def quantiles(values: list[float]) -> str:
    if not values:
        return "-"
    v = sorted(values)
    return (f"median {statistics.median(v):.0f}, p90 {v[int(0.9 * (len(v) - 1))]:.0f}, "
            f"mean {statistics.fmean(v):.1f} (n {len(v)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--collector-profile", default=None)
    args = ap.parse_args()
    all_lags: list[float] = []
    for path in sorted(args.folder.glob("mininet/seed*/live/*-pro-flag*-T100ms-*/metrics.json")):
        m = json.loads(path.read_text())
        cfg = RunConfig.from_dict(m["config"])
        lags = [1e3 * (r["since_update_s"] - cfg.k * cfg.T_s)
                for r in m["extra"]["pro_reactions"] if r["shift"] == FLAGGED]
        all_lags += lags
        ex = m["extra"]["redis_expiry"]
        sim = run_intlabel(cfg, RunEnv(seed=m["env"]["seed"],
                                       collector_profile=args.collector_profile))
        print(f"{path.parent.name}: restore {cfg.restore_factor:g} k T")
        print(f"  live: flags {quantiles(flag_lengths_ms(m['pro_changes']))}; raising "
              f"expiries' lag {quantiles(lags)}; store: {ex['events']} notified (mean lag "
              f"{1e3 * ex['lag']['mean']:.1f} ms), {ex['swept']} swept, {ex['superseded']} "
              f"superseded; INT bandwidth {m['bandwidth_occupation']:.4f}")
        print(f"  sim:  flags {quantiles(flag_lengths_ms(sim.pro_changes))}; "
              f"INT bandwidth {sim.bandwidth_occupation:.4f}")
    print(f"all live raising expiries' lag (ms): {quantiles(all_lags)}")


if __name__ == "__main__":
    main()
