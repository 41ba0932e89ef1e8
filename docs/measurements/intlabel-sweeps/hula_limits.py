"""Fig. 14's two unstated settings swept: the rate limit of every data port
(``margin`` times the busiest port's background packet rate) and the queue
depth, with HULA probing every 10, 20, 50 and 100 ms (the sim, seed 0,
3 s of traffic, the default switch model: the experiment's own runs).

    .venv/bin/python docs/measurements/intlabel-sweeps/hula_limits.py > \
        docs/measurements/intlabel-sweeps/hula_limits.txt

The paper sets both so that "there is no packet loss while sending
background traffic alone" and gives neither; each row says how much the
background alone loses at that setting.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from orchestration.network import RunEnv  # noqa: E402
from orchestration.systems.hula import background_rate_limit, run_hula_loss  # noqa: E402

MARGINS = (1.0, 1.01, 1.02, 1.05, 1.1)
DEPTHS = (2, 4, 8, 16, 64)
INTERVALS_MS = (10.0, 20.0, 50.0, 100.0)
DURATION_S = 3.0


def main() -> None:
    env = RunEnv(seed=0)
    busiest = background_rate_limit(1.0, duration_s=DURATION_S, env=env)
    print(f"busiest data port, background alone at line rate: {busiest:.1f} packets/s")
    print("margin depth | background alone | HULA loss at " +
          " / ".join(f"{t:g}" for t in INTERVALS_MS) + " ms")
    for margin in MARGINS:
        for depth in DEPTHS:
            limit = busiest * margin
            alone = run_hula_loss(None, rate_limit_pps=limit, queue_depth=depth,
                                  duration_s=DURATION_S, env=env)["background_loss_rate"]
            hula = [run_hula_loss(t, rate_limit_pps=limit, queue_depth=depth,
                                  duration_s=DURATION_S, env=env)["background_loss_rate"]
                    for t in INTERVALS_MS]
            print(f"{margin:<6g} {depth:<5d} | {alone:.4f} | " +
                  " / ".join(f"{x:.4f}" for x in hula))


if __name__ == "__main__":
    main()
