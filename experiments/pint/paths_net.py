"""PINT path tracing through real switches: pint.p4 on a k-ary fat-tree, on
any target (``--target sim``, ``mininet`` or ``bmv2``).

Flows between random host pairs each send ``packets`` UDP packets through
switches running ``p4src/pint.p4`` (hybrid coding tuned for 5 hops, the
fat-tree's longest path); the sinks' reports reach the recording module,
which decodes every flow's path. The run is written once against
``Network`` (``orchestration.systems.pint.run_pint``); the true path is the
switches that transmitted each flow's first packet. Where
``pint-path-tracing`` checks the coding and decoder by Monte Carlo, this
checks the data plane that writes the digests, on the target chosen.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiments.framework import Context, Experiment, Headline, Param, Result, register
from orchestration.network import RunEnv
from sinks.pint.analysis import online_expected, tuned_hybrid
from sinks.pint.engine import fragments
from sinks.pint.pathtrace import PathCoding

PAPER = "PINT: Probabilistic In-band Network Telemetry (Ben Basat et al.), section 4"
DESIGN_HOPS = 5
# Reports still on their way after the last round: a live target needs about a
# second; on the sim it is idle virtual time, so one value serves every target.
DRAIN_S = 1.0


def coding(bits: int) -> PathCoding:
    tau, p = tuned_hybrid(DESIGN_HOPS, fragments(32, bits))
    return PathCoding(bits, 32, tau, p)


def run_point(point: tuple[dict[str, Any], RunEnv]) -> list[dict[str, Any]]:
    from orchestration.systems.pint import random_flows, run_pint
    from topologies.generators import fat_tree

    p, env = point
    seed = env.seed
    topo = fat_tree(p["k"])
    flows = {f: p["packets"] for f in random_flows(topo, p["flows"], seed)}
    net = env.open(topo, "pint")
    r = run_pint(net, topo, flows=flows, coding=coding(p["bits"]), seed=seed,
                 gap_s=p["gap_ms"] / 1000, drain_s=DRAIN_S)
    rows = []
    for flow, true in sorted(r.true_paths.items()):
        got = r.decoded.get(flow)
        path = getattr(got, "path", None)
        rows.append({
            "flow": " ".join(map(str, flow)), "switches": len(true),
            "decoded": path is not None and tuple(path) == true,
            "packets_needed": getattr(got, "packets_needed", None),
            "conflicts": getattr(got, "conflicts", None),
            "problem": getattr(got, "reason", ""),
            "sent": r.sent, "reports": r.reports,
        })
    return rows


def compute(ctx: Context) -> Result:
    p = ctx.params
    (rows,) = ctx.map(run_point, [(p, ctx.env)], "runs")
    c = coding(p["bits"])
    sent, reports = (rows[0]["sent"], rows[0]["reports"]) if rows else (0, 0)
    heads = [Headline("flows whose decoded path is the one taken",
                      float(sum(r["decoded"] for r in rows)), None, "flows",
                      note=f"of {p['flows']}, target {ctx.target}; reports {reports} of {sent} "
                           "packets")]
    for k in sorted({r["switches"] for r in rows}):
        needed = [r["packets_needed"] for r in rows if r["switches"] == k
                  and r["packets_needed"] is not None]
        heads.append(Headline(
            f"{k}-switch paths: mean packets to decode (stored decoder)",
            float(np.mean(needed)) if needed else None, None, "packets",
            note=f"online decoder's exact expectation "
                 f"{online_expected(k, c.tau, c.p, fragments(32, c.bits)):.2f} (the stored "
                 f"decoder's mean is at most that); {len(needed)} flows"))
    notes = [f"hybrid coding tau = {c.tau:.3f}, p = {c.p:.4f} (tuned for {DESIGN_HOPS} hops), "
             f"{c.bits}-bit digests, 32-bit switch ids",
             "the paper reports no fat-tree run of this kind: the numbers to compare are the "
             "coupon-collector and online-decoder expectations of pint-path-tracing"]
    return Result(rows, heads, notes)


def plot(res: Result, params: dict[str, Any], fig: Any) -> None:
    ax = fig.subplots(1, 1)
    for k in sorted({r["switches"] for r in res.rows}):
        needed = sorted(r["packets_needed"] for r in res.rows if r["switches"] == k
                        and r["packets_needed"] is not None)
        if needed:
            ax.step(needed, np.arange(1, len(needed) + 1) / len(needed), where="post",
                    label=f"{k} switches")
    ax.set_xlabel("packets until the path is decoded")
    ax.set_ylabel("fraction of flows")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)


register(Experiment(
    "pint-path-tracing-net", "PINT path tracing by pint.p4 switches on a fat-tree (any target)",
    PAPER,
    [
        Param("flows", 100, "flows between random host pairs", quick=12,
              check=lambda v, p: None if 1 <= v <= 10_000 else "give 1 to 10,000 flows"),
        Param("packets", 60, "packets each flow sends", quick=40,
              check=lambda v, p: None if 1 <= v <= 65_536 else "give 1 to 65,536 packets"),
        Param("bits", 32, "digest bits",
              check=lambda v, p: None if v in (8, 16, 32) else "give 8, 16 or 32 bits"),
        Param("k", 4, "fat-tree arity",
              check=lambda v, p: None if v in (2, 4, 6, 8) else "give k = 2, 4, 6 or 8"),
        Param("gap_ms", 2.0, "time between rounds (one packet of every flow per round)",
              quick=10.0, check=lambda v, p: None if 0 < v <= 1000 else "give 0 to 1000 ms"),
    ],
    compute, plot, description=__doc__.split("\n\n")[0].replace("\n", " "),
    live=True,
    # PINT is evaluated in simulation (ns-3 and a trace-driven one), whose
    # switches take no time of their own.
    switch_model="ideal",
))
