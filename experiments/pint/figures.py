"""PINT path tracing: packets needed to decode a flow's path vs its length.

One point is (scheme, bit budget, path length): ``flows`` flows, each with
its own random 5-tuple and random 32-bit switch ids, go through the
switches' encoding rules and the sink's decoder (``sinks.pint``);
each flow's count is the packet after which its whole path was known.
Both decoders are measured: the default one, which keeps undecoded
digests, and the online one, which keeps none and whose expectation
``sinks.pint.analysis`` computes exactly (the analytic curve; for the
Baseline it is the coupon collector ``kF H_kF``). Switches do not know a
flow's path length, so XOR's ``p`` and the hybrid's ``(tau, p)`` are set
once for a design length (the longest swept unless given). The 16-bit
rows are PINT's side of INT-label's Fig. 22 (packets, and extra bits =
packets x 16, to trace one flow's path vs its length).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from common.seeds import derive_seed
from experiments.framework import Context, Experiment, Headline, Param, Result, register
from sinks.pint.analysis import online_expected, reservoir_expected, tuned_hybrid
from sinks.pint.pathtrace import MAX_HOPS, PathCoding
from sinks.pint.simulate import trace_flows

PAPER = "PINT: Probabilistic In-band Network Telemetry (Ben Basat et al.), section 4"
SCHEMES = ("reservoir", "xor", "hybrid")
LABELS = {"reservoir": "Baseline", "xor": "XOR", "hybrid": "hybrid"}
COLORS = {"reservoir": "tab:blue", "xor": "tab:orange", "hybrid": "tab:green"}


def coding_for(scheme: str, bits: int, design: int) -> PathCoding:
    if scheme == "reservoir":
        return PathCoding.reservoir(bits)
    if scheme == "xor":
        return PathCoding.xor(bits, 1.0 / design)
    return PathCoding(bits, 32, *tuned_hybrid(design))


def measure(point: tuple[str, int, int, int, int, int]) -> dict[str, Any]:
    """One (scheme, bits, hops) point: both decoders and the analytic value."""
    scheme, bits, hops, design, flows, seed = point
    coding = coding_for(scheme, bits, design)
    expected = online_expected(hops, coding.tau, coding.p, coding.fragments)
    packets = int(expected * 4) + 64
    row: dict[str, Any] = {
        "scheme": scheme, "bits": bits, "hops": hops, "fragments": coding.fragments,
        "tau": coding.tau, "p": coding.p, "flows": flows,
        "expected_online": expected,
        "expected_baseline": reservoir_expected(hops, coding.fragments),
    }
    traced = trace_flows(coding, hops, flows, packets, seed)
    for decoder, pending in (("stored", None), ("online", 0)):
        needed = traced.packets_to_decode(pending)
        done = needed[needed > 0]
        row[f"undecoded_{decoder}"] = int(flows - done.shape[0])
        row[f"mean_{decoder}"] = float(done.mean()) if done.size else math.nan
        row[f"stderr_{decoder}"] = (float(done.std(ddof=1) / math.sqrt(done.shape[0]))
                                    if done.size > 1 else math.nan)
        row[f"p99_{decoder}"] = float(np.percentile(done, 99)) if done.size else math.nan
        # INT-label's Fig. 22(b) counts the digest bits a flow spent until decoded
        row[f"extra_bits_{decoder}"] = row[f"mean_{decoder}"] * bits
    return row


def _hops_check(v: Any, p: dict[str, Any]) -> str | None:
    if not v or any(not 1 <= int(h) <= MAX_HOPS for h in v):
        return f"give path lengths between 1 and {MAX_HOPS}"
    return None


def _bits_check(v: Any, p: dict[str, Any]) -> str | None:
    if not v or any(int(b) not in (8, 16, 32) for b in v):
        return "bit budgets are 8, 16 or 32"
    return None


def _schemes_check(v: Any, p: dict[str, Any]) -> str | None:
    bad = [s for s in v if s not in SCHEMES]
    if not v or bad:
        return f"unknown scheme {', '.join(bad) or '(none)'}: choose from {', '.join(SCHEMES)}"
    return None


def compute(ctx: Context) -> Result:
    p = ctx.params
    design = p["design_hops"] or max(p["hops"])
    points = [
        (scheme, int(bits), int(hops), design, p["flows"],
         derive_seed(ctx.seed, "pint-path-tracing", scheme, bits, hops) & 0xFFFFFFFF)
        for scheme in p["schemes"] for bits in p["bits"] for hops in p["hops"]
    ]
    rows = ctx.map(measure, points, label="points")
    heads: list[Headline] = []
    longest = max(p["hops"])
    for bits in p["bits"]:
        by = {r["scheme"]: r for r in rows if r["bits"] == bits and r["hops"] == longest}
        if "reservoir" in by and "hybrid" in by:
            heads.append(Headline(
                f"hybrid / Baseline packets, {longest} hops, {bits} bits",
                by["hybrid"]["mean_stored"] / by["reservoir"]["mean_stored"], None, "",
                note="the paper proves O(k ln ln k) for the hybrid against k ln k for the "
                     "Baseline; sections 3-5 give no number at this length"))
        for scheme, r in sorted(by.items()):
            heads.append(Headline(f"{LABELS[scheme]} packets, {longest} hops, {bits} bits",
                                  r["mean_stored"], None, "packets"))
    worst = max((abs(r["mean_online"] - r["expected_online"]) / r["stderr_online"]
                 for r in rows if r["stderr_online"] > 0), default=math.nan)
    heads.append(Headline("largest gap online MC vs analytic (standard errors)", worst, None, "",
                          note="the online decoder against its exact expectation"))
    notes = [f"design length {design} hops: XOR p = 1/{design}; hybrid (tau, p) = "
             f"{tuple(round(x, 4) for x in tuned_hybrid(design))}"]
    return Result(rows, heads, notes)


def plot(res: Result, params: dict[str, Any], fig: Any) -> None:
    budgets = sorted({r["bits"] for r in res.rows})
    axes = fig.subplots(1, len(budgets), squeeze=False)[0]
    for ax, bits in zip(axes, budgets):
        for scheme in params["schemes"]:
            rows = sorted((r for r in res.rows if r["bits"] == bits and r["scheme"] == scheme),
                          key=lambda r: r["hops"])
            if not rows:
                continue
            hops = [r["hops"] for r in rows]
            color = COLORS[scheme]
            ax.plot(hops, [r["mean_stored"] for r in rows], "-o", color=color, ms=3,
                    label=f"{LABELS[scheme]}")
            ax.plot(hops, [r["mean_online"] for r in rows], "x", color=color, ms=4)
            ax.plot(hops, [r["expected_online"] for r in rows], "--", color=color, lw=0.8)
        ax.set_title(f"{bits}-bit budget", fontsize=9)
        ax.set_xlabel("path length (hops)")
        ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("packets to decode")
    axes[0].legend(fontsize=7, title="line: stored; x: online; --: analytic", title_fontsize=6)


register(Experiment(
    "pint-path-tracing", "packets to decode a path vs its length, per scheme and bit budget",
    PAPER,
    [
        Param("hops", [2, 5, 10, 15, 20, 25, 30, 36, 42, 48, 54, 59], "path lengths",
              quick=[5, 24], check=_hops_check),
        Param("bits", [8, 16, 32], "bit budgets of the path query", quick=[8, 32],
              check=_bits_check),
        Param("schemes", list(SCHEMES), "reservoir (Baseline), xor, hybrid",
              check=_schemes_check),
        Param("flows", 1000, "flows per point", quick=50,
              check=lambda v, p: None if 2 <= v <= 100_000 else "give 2 to 100,000 flows"),
        Param("design_hops", 0, "path length XOR and hybrid are tuned for (0: the longest)",
              check=lambda v, p: None if 0 <= v <= MAX_HOPS
              else f"give 0 (the longest swept) or a path length up to {MAX_HOPS}"),
    ],
    compute, plot, description=__doc__.split("\n\n")[1].replace("\n", " "),
))

# PINT's other figures register where they are computed.
from experiments.pint import cc, paths_net, quantiles  # noqa: E402, F401
