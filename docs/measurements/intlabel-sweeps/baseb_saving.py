"""Fig. 7's "Base B labels 35.2 % fewer packets than Base A at T = 100 ms"
against what the paper leaves open: the seed (the random destinations),
the senders' arrivals and Base B's probability function f (F1 is the
paper's default), 10,000 packets, T_i = 100 ms, on the sim.

    .venv/bin/python docs/measurements/intlabel-sweeps/baseb_saving.py > \
        docs/measurements/intlabel-sweeps/baseb_saving.txt
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from orchestration.network import RunEnv  # noqa: E402
from orchestration.systems.intlabel.config import RunConfig  # noqa: E402
from orchestration.systems.intlabel.run import run_intlabel  # noqa: E402

SEEDS = range(5)


def labeled(mode: str, seed: int, **kw: object) -> int:
    cfg = RunConfig(mode=mode, T_ms=100.0, Ti_ms=100.0, packets=10_000, **kw)  # type: ignore[arg-type]
    return run_intlabel(cfg, RunEnv(seed=seed)).labeled_packets


def main() -> None:
    print("arrivals f | Base B's saving over Base A, % (seeds 0-4) | mean")
    for arrivals in ("constant", "poisson", "onoff"):
        for f in ("F1", "F2", "F3"):
            saving = []
            for seed in SEEDS:
                a = labeled("A", seed, arrivals=arrivals)
                b = labeled("B", seed, arrivals=arrivals, f=f)
                saving.append(100.0 * (a - b) / a)
            print(f"{arrivals} {f} | " + ", ".join(f"{x:.1f}" for x in saving) +
                  f" | {statistics.fmean(saving):.1f}")


if __name__ == "__main__":
    main()
