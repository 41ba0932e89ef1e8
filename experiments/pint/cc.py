"""PINT's congestion-control use case: HPCC fed by full INT against HPCC fed
by PINT's 8-bit per-packet maximum, flow completion time slowdown by flow size.

A k-ary fat-tree (1 Gb/s links, 10 us each) runs ``int_md.p4`` or
``pint.p4`` on the sim target; every host runs HPCC senders and receivers
(``orchestration.systems.pint_cc``). Flows arrive as a Poisson process at a
load of the hosts' line rate, between random distinct hosts, with sizes from
the web-search distribution (DCTCP's, as the HPCC and PINT evaluations use
it) scaled by ``size_scale`` to fit the sim's speed. Slowdown is a flow's
completion time (start to its last packet at the receiver) over the ideal:
the same flow alone on its path, frames without telemetry. Both variants play
the same flows.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from common.seeds import derive_seed
from experiments.framework import Context, Experiment, Headline, Param, Result, register
from orchestration.network import RunEnv

PAPER = ("PINT: Probabilistic In-band Network Telemetry (Ben Basat et al.), sections 3.2 and 5 "
         "(HPCC with PINT); HPCC (Li et al., SIGCOMM 2019), Algorithm 1")
# Web search (Alizadeh et al., DCTCP): flow size in bytes, cumulative percent,
# interpolated linearly between the points.
WEB_SEARCH_CDF = ((0, 0.0), (10_000, 15.0), (20_000, 20.0), (30_000, 30.0), (50_000, 40.0),
                  (80_000, 53.0), (200_000, 60.0), (1_000_000, 70.0), (2_000_000, 80.0),
                  (5_000_000, 90.0), (10_000_000, 97.0), (30_000_000, 100.0))
# Bucket edges in unscaled web-search bytes (20 %, 40 %, 20 %, 20 % of flows).
BUCKET_EDGES = (20_000, 200_000, 2_000_000)
QUEUE_DEPTH = 4000  # packets: no window set can overflow it (the fabric is lossless)
MODES = ("int", "pint")
STATS = ((50, "median"), (95, "p95"), (99, "p99"))
CLAIMS = [
    "PINT (section 3.2, the copy in this repository): 'State of the art congestion control "
    "solutions often use INT to collect utilization and queue occupancy statistics [46]. PINT "
    "shows that we can get similar or better performance while minimizing the overheads "
    "associated with collecting the statistics.'",
    "PINT (abstract): congestion control, path tracing and tail latencies together 'using only "
    "sixteen bits per packet, with performance comparable to the state of the art'; the HPCC "
    "authors' results page (hpcc-group.github.io/results.html): HPCC-PINT cuts the INT "
    "overhead to at most 2 bytes per packet, HPCC-INT carries about 5 % of header overhead and "
    "so runs at an effectively higher load, which lengthens long flows' completion times. Section "
    "5's per-bucket numbers are in figures this repository's copy of the paper does not hold, "
    "so no paper column is filled.",
]


def mean_size(cdf: tuple[tuple[int, float], ...] = WEB_SEARCH_CDF) -> float:
    """Mean of the piecewise-linear CDF (uniform within each segment)."""
    return sum((b - a) / 100.0 * (x0 + x1) / 2.0
               for (x0, a), (x1, b) in zip(cdf, cdf[1:]))


def flow_sizes(rng: np.random.Generator, n: int, scale: float) -> np.ndarray:
    """``n`` sizes in bytes (at least 1) by inverse transform of the CDF."""
    xs = np.array([x for x, _ in WEB_SEARCH_CDF], dtype=float)
    ps = np.array([p for _, p in WEB_SEARCH_CDF]) / 100.0
    sizes = np.interp(rng.random(n), ps, xs) * scale
    return np.maximum(1, np.round(sizes)).astype(np.int64)


def web_search_flows(hosts: list[str], n: int, load: float, bandwidth_mbps: float,
                     scale: float, seed: int) -> list[Any]:
    """Poisson arrivals at ``load`` of every host's line rate together."""
    from orchestration.systems.pint_cc import CcFlow

    rng = np.random.default_rng(derive_seed(seed, "pint-cc", "flows", repr(load)))
    rate = load * len(hosts) * bandwidth_mbps * 1e6 / 8 / (mean_size() * scale)  # flows/s
    starts = np.cumsum(rng.exponential(1e9 / rate, n)).astype(np.int64)
    sizes = flow_sizes(rng, n, scale)
    flows = []
    for i in range(n):
        a, b = rng.choice(len(hosts), 2, replace=False)
        flows.append(CcFlow(i, hosts[a], hosts[b], int(sizes[i]), int(starts[i])))
    return flows


def bucket_names(scale: float) -> list[str]:
    edges = [e * scale for e in BUCKET_EDGES]
    names = [f"< {_kb(edges[0])}"]
    names += [f"{_kb(lo)}-{_kb(hi)}" for lo, hi in zip(edges, edges[1:])]
    return names + [f">= {_kb(edges[-1])}"]


def _kb(v: float) -> str:
    return f"{v / 1000:g} KB"


def bucket_of(size: int, scale: float) -> int:
    return sum(size >= e * scale for e in BUCKET_EDGES)


def run_point(point: tuple[float, str, dict[str, Any], RunEnv]) -> dict[str, Any]:
    """One (load, telemetry) run: per-flow rows and the run's counters."""
    from orchestration.systems.pint_cc import run_hpcc
    from topologies.generators import fat_tree

    load, mode, p, env = point
    seed = env.seed
    topo = fat_tree(p["k"])
    for spec in topo.switches.values():
        spec.queue_depth = QUEUE_DEPTH
    hosts = sorted(topo.hosts)
    bandwidth = topo.links[0].bandwidth_mbps
    flows = web_search_flows(hosts, p["flows"], load, bandwidth, p["size_scale"], seed)
    net = env.open(topo, "int_md" if mode == "int" else "pint")
    r = run_hpcc(net, topo, flows, mode=mode, seed=seed, eta=p["eta"],
                 max_stage=p["max_stage"])
    rows = []
    for o in r.outcomes:
        f = o.flow
        rows.append({
            "load": load, "mode": mode, "flow": f.fid, "src": f.src, "dst": f.dst,
            "size": f.size, "packets": f.packets,
            "bucket": bucket_of(f.size, p["size_scale"]), "switches": o.switches,
            "start_ns": f.start_ns, "fct_ns": o.fct_ns, "ideal_ns": o.ideal_ns,
            "slowdown": None if o.fct_ns is None else o.fct_ns / o.ideal_ns,
            "received": o.received,
            "telemetry_bytes_per_packet": o.telemetry_bytes / max(o.received, 1),
        })
    return {"rows": rows, "queue_drops": r.queue_drops, "acks": r.acks,
            "ack_telemetry_bytes": r.ack_telemetry_bytes, "base_rtt_s": r.base_rtt_s,
            "elapsed_s": r.elapsed_s, **r.extra}


def compute(ctx: Context) -> Result:
    p = ctx.params
    points = [(float(load), mode, p, ctx.env)
              for load in p["loads"] for mode in MODES]
    runs = ctx.map(run_point, points, "runs")
    rows = [row for run in runs for row in run["rows"]]
    heads: list[Headline] = []
    names = bucket_names(p["size_scale"])
    for load in p["loads"]:
        for b, bucket in enumerate(names):
            for mode in MODES:
                s = [r["slowdown"] for r in rows if r["load"] == load and r["mode"] == mode
                     and r["bucket"] == b and r["slowdown"] is not None]
                for q, stat in STATS:
                    heads.append(Headline(
                        f"{load:.0%} load, flows {bucket}: {stat} slowdown, {mode.upper()}",
                        float(np.percentile(s, q)) if s else None, None, "x"))
    for (load, mode, *_), run in zip(points, runs):
        mine = [r for r in rows if r["load"] == load and r["mode"] == mode]
        packets = sum(r["received"] for r in mine)
        tel = sum(r["telemetry_bytes_per_packet"] * r["received"] for r in mine)
        heads.append(Headline(f"{load:.0%} load, {mode.upper()}: telemetry bytes per data packet",
                              tel / max(packets, 1), None, "B"))
        heads.append(Headline(f"{load:.0%} load, {mode.upper()}: echoed bytes per ACK",
                              run["ack_telemetry_bytes"] / max(run["acks"], 1), None, "B"))
        heads.append(Headline(f"{load:.0%} load, {mode.upper()}: flows completed",
                              float(sum(r["fct_ns"] is not None for r in mine)), None,
                              "flows", note=f"of {len(mine)}; queue drops {run['queue_drops']}"))
    first = runs[0]
    notes = CLAIMS + [
        f"fat-tree k={p['k']} ({p['k'] ** 3 // 4} hosts), 1 Gb/s and 10 us per link, queues of "
        f"{QUEUE_DEPTH} packets; HPCC T = {first['base_rtt_s'] * 1e6:.1f} us (longest path, a "
        f"full frame out and an ACK back), W_init = {first['w_init']:.0f} B, "
        f"W_AI = {first['w_ai']:.1f} B (W_init (1 - eta) / 16), eta = {p['eta']}, "
        f"maxStage = {p['max_stage']}",
        "flow sizes: web search, CDF points (bytes, %) " + ", ".join(
            f"({x:,}, {c:g})" for x, c in WEB_SEARCH_CDF)
        + f", linear between them, times {p['size_scale']} (mean "
        f"{mean_size() * p['size_scale'] / 1000:.1f} KB)",
        "telemetry: INT-MD v2.0, hop latency + queue occupancy + egress timestamp + tx "
        "utilization (20 B a hop, 16 B of shim and header); PINT: one 8-bit maximum of the "
        "queueing delay (value approximation over 1 us..4096 us) behind pint.p4's 2-byte shim; "
        "txRate/B is 1 when the packet queued and 0 otherwise in both (v1model has no tx counter)",
    ]
    return Result(rows, heads, notes, {"runs": [{k: v for k, v in run.items() if k != "rows"}
                                                for run in runs]})


def plot(res: Result, params: dict[str, Any], fig: Any) -> None:
    loads = params["loads"]
    names = bucket_names(params["size_scale"])
    axes = fig.subplots(1, len(loads), squeeze=False)[0]
    for ax, load in zip(axes, loads):
        x = np.arange(len(names))
        for i, (mode, color) in enumerate(zip(MODES, ("tab:red", "tab:blue"))):
            for q, style in ((50, "o"), (95, "s"), (99, "^")):
                ys = []
                for b in range(len(names)):
                    s = [r["slowdown"] for r in res.rows if r["load"] == load
                         and r["mode"] == mode and r["bucket"] == b and r["slowdown"] is not None]
                    ys.append(np.percentile(s, q) if s else math.nan)
                ax.plot(x + (i - 0.5) * 0.2, ys, style + "-", color=color, ms=4, lw=0.8,
                        label=f"{mode.upper()} p{q}")
        ax.set_xticks(x, names, fontsize=6)
        ax.set_yscale("log")
        ax.set_title(f"{load:.0%} load", fontsize=8)
        ax.set_xlabel("flow size")
        ax.set_ylabel("FCT slowdown")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6)


def _loads_check(v: Any, p: dict[str, Any]) -> str | None:
    if not v or any(not 0 < float(x) < 1 for x in v):
        return "give loads between 0 and 1 (exclusive), e.g. 0.3,0.5"
    return None


register(Experiment(
    "pint-cc", "HPCC with full INT vs with PINT's 8-bit maximum: FCT slowdown by flow size",
    PAPER,
    [
        Param("loads", [0.3, 0.5], "offered load, a fraction of the hosts' line rate",
              quick=[0.5], check=_loads_check),
        Param("flows", 500, "flows per run", quick=24,
              check=lambda v, p: None if 1 <= v <= 100_000 else "give 1 to 100,000 flows"),
        Param("size_scale", 0.1, "factor on the web-search flow sizes", quick=0.01,
              check=lambda v, p: None if 0 < v <= 1 else "give a factor in (0, 1]"),
        Param("k", 4, "fat-tree arity",
              check=lambda v, p: None if v in (2, 4, 6, 8) else "give k = 2, 4, 6 or 8"),
        Param("eta", 0.95, "HPCC's target utilization",
              check=lambda v, p: None if 0 < v <= 1 else "give eta in (0, 1]"),
        Param("max_stage", 5, "HPCC's rounds of additive increase before a multiplicative step",
              check=lambda v, p: None if 0 <= v <= 100 else "give 0 to 100"),
    ],
    compute, plot, description=__doc__.split("\n\n")[0].replace("\n", " "),
    # The paper's switches are ns-3's output-queued ones, which take no time
    # beyond the links': HPCC's store-and-forward arithmetic assumes them.
    switch_model="ideal",
))
