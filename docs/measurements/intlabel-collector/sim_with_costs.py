"""Pro's three variants at T = T_i = 100 ms on the sim (seeds 0-2, the
quick Fig. 12 point) with the measured collector model's prices replaced
by another measurement's: how far the sim's INT bytes follow the host.

    .venv/bin/python docs/measurements/intlabel-collector/sim_with_costs.py \
        ITEM_US ITEM_IDLE_US CHANGE_US

The prices are the module constants ``collector_model="measured"`` reads
(orchestration/systems/intlabel/config.py), set here before any run.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import orchestration.systems.intlabel.config as config  # noqa: E402


def main(argv: list[str]) -> None:
    item, idle, change = (float(x) for x in argv)
    config.COLLECTOR_ITEM_US, config.COLLECTOR_ITEM_IDLE_US = item, idle
    config.COLLECTOR_CHANGE_US = change
    from orchestration.network import RunEnv
    from orchestration.systems.intlabel.run import run_intlabel

    for style, restore in (("shift", 1.0), ("flag", 1.0), ("flag", 10.0)):
        out = []
        for seed in range(3):
            cfg = config.RunConfig(rate_bps=5e6, T_ms=100.0, Ti_ms=100.0, packets=2000,
                                   mode="A", pro=True, pro_style=style,
                                   restore_factor=restore, k=1.0)
            m = run_intlabel(cfg, RunEnv(seed=seed))
            out.append(f"{m.bandwidth_occupation:.5f} ({len(m.pro_changes)} changes)")
        print(f"{style}, restore {restore:g} k T: " + ", ".join(out))


if __name__ == "__main__":
    main(sys.argv[1:])
