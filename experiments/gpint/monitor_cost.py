"""How long intbed's GPINT monitor takes per request, measured in process.

The paper's SNMP baseline "does not scale well given that the
orchestrator ... can only deploy 12 probes concurrently" (section V-B2):
its orchestrator pays for every request it sends and every reply it
handles. In virtual time intbed's monitor pays nothing, so this measures
what the monitor's own code costs on this machine: a ``Monitor`` on a
``VirtualClock`` with a ``send_frame`` that only keeps the frame, sending
every probe of a session at once (the send side: building the probe, the
session's bookkeeping) and then handed each path's filled-in probe as the
last switch would deliver it (the receive side: parsing, storing the
readings, ending the path). Paths of 1 switch (an SNMP request) up to 128
give the cost by path length; each point is the median over ``rounds``
of the time per request (the machine is shared: the median is robust to
another process taking the CPU for a while).

``python -m experiments.gpint.monitor_cost [--out FILE]`` prints the table
and writes it as YAML (docs/measurements/gpint-monitor/ keeps the
measurement the run's defaults come from).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common.clock import VirtualClock
from common.host import cores, cpu_model
from controller.gpint.monitor import Monitor
from controller.gpint.probe import KIND_PROBE, Dlv, Probe, encode
from topologies.generators import gpint_ws

HOPS = (1, 2, 5, 10, 20, 50, 100, 128)  # one value per switch: at most 128 (MAX_VALUES)


def _paths(names: Sequence[str], hops: int, count: int) -> list[list[str]]:
    """``count`` walks of ``hops`` switches over a ring of ``names`` (each
    step to a ring neighbour, which gpint_ws's lattice always links)."""
    n = len(names)
    return [[names[(start + i) % n] for i in range(hops)] for start in range(count)]


def time_requests(hops: int, requests: int = 120, rounds: int = 15,
                  mea_count: int = 1) -> tuple[float, float]:
    """Median seconds per request to send and to receive a probe of
    ``hops`` switches (``mea_count`` values each)."""
    topo = gpint_ws(n=max(hops, 20), k=4, p=0.0, seed=0, hosts=0)
    names = sorted(topo.switches, key=lambda s: topo.switches[s].device_id)
    paths = _paths(names, hops, requests)
    ids = {name: spec.device_id for name, spec in topo.switches.items()}
    sends, receives = [], []
    for _ in range(rounds):
        clock = VirtualClock()
        out: list[tuple[str, bytes]] = []
        mon = Monitor(topo, paths, clock, lambda sw, frame, out=out: out.append((sw, frame)),
                      recovery=None, max_in_flight=requests, switch_ids=ids,
                      mea_ranges={name: (0, mea_count) for name in topo.switches})
        replies = []
        for rid, path in enumerate(paths):
            dlv = [Dlv(ids[name] & 0xFF, 0, mea_count) for name in path]
            replies.append(encode(Probe(KIND_PROBE, rid, 0, [], dlv,
                                        list(range(mea_count * hops)))))
        t0 = time.perf_counter()
        mon.start(1)
        t1 = time.perf_counter()
        for frame in replies:
            mon.on_frame(frame, 0.0)
        t2 = time.perf_counter()
        if len(out) != requests or len(mon.results) != 1 or not mon.results[0].completed:
            raise RuntimeError("the measured session did not send and complete every request")
        sends.append((t1 - t0) / requests)
        receives.append((t2 - t1) / requests)
    return statistics.median(sends), statistics.median(receives)


def measure(hops: Sequence[int] = HOPS, rounds: int = 15) -> dict[str, Any]:
    """Per-request send and receive times by path length (µs), as
    ``controller.gpint.cost.MonitorCost`` takes them, with the machine."""
    points = {h: time_requests(h, rounds=rounds) for h in hops}
    return {
        "machine": {"cpu": cpu_model(), "cores": cores(),
                    "python": platform.python_version()},
        "rounds": rounds,
        "hops": list(points),
        "send_us": [round(s * 1e6, 2) for s, _ in points.values()],
        "receive_us": [round(r * 1e6, 2) for _, r in points.values()],
    }


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    result = measure(rounds=args.rounds)
    import yaml

    text = yaml.safe_dump(result, sort_keys=False)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)


if __name__ == "__main__":
    main()
