"""INT-label's Fig. 22: packets and extra bits to trace one flow's path
with INT-label, PINT and INT, vs the path's length.

INT and INT-label are measured on the target (``--target``, sim by
default): each traces one flow on a line of switches and the collector
decodes the path from the reports it receives
(``orchestration.systems.intlabel.trace``): INT-label by its specific-flow
telemetry (section 3.3, every hop labels the flow's 1 kB packets with its
32-byte item) and, beside it, by Base A labels without the mark (each hop
labels the flow now and then amid cross traffic, the path assembled from
several reports), INT by INT-MD v2.0 probes asking each hop for its node id.
Packets are those sent until a report first gave the true path; extra bits
are the telemetry bits those packets carried on the wire into the last
switch (a probe's whole frame). PINT is measured too: flows through
``sinks.pint``'s encoders and decoder at the paper's 16-bit budget (32-bit
switch ids, so two fragments), beside the online decoder's exact
expectation; its extra bits are packets x 16.
"""

from __future__ import annotations

import math
from typing import Any

from common.seeds import derive_seed
from experiments.framework import Context, Experiment, Headline, Param, Result, register
from experiments.pint.figures import LABELS, _schemes_check, measure
from experiments.stats import mean_ci
from orchestration.network import RunEnv
from orchestration.systems.intlabel.trace import TraceResult, trace_flow
from sinks.pint.pathtrace import MAX_HOPS

PAPER = ("INT-label: Lightweight In-band Network-Wide Telemetry via Distributed Labeling "
         "(Song et al.), section 6, Fig. 22")
BITS_PER_BYTE = 8
PAPER_BUDGET = 16  # "the maximum number of bits ... carried by a single packet in PINT"
PAPER_QUOTES = (
    "Both INT and INT-label require only a single packet to complete the path probing task.",
    "PINT requires an increasing number of packets as the number of hops increases.",
    "INT uses an active probing approach by sending probe packets, which introduces "
    "additional overhead in terms of packet headers.",
    "INT-label can accomplish path probing with the minimum number of required INT packets "
    "and extra bits.",
)


def grows(rows: list[dict[str, Any]], sigmas: float = 3.0) -> bool:
    """Each longer path needs at least as many packets, within ``sigmas``
    combined standard errors (a Monte Carlo mean may dip by chance)."""
    rows = sorted(rows, key=lambda r: r["hops"])
    return all(b["pint_packets"] >= a["pint_packets"]
               - sigmas * math.hypot(a["pint_stderr"], b["pint_stderr"])
               for a, b in zip(rows, rows[1:]))


def _trace(point: tuple[str, int, int, int, RunEnv]) -> TraceResult:
    scheme, hops, packets, rep, env = point
    return trace_flow(scheme, hops, packets=packets, rep=rep, env=env)


def traced_bits(t: TraceResult) -> float | None:
    """Telemetry bits of the packets sent until the path was decoded."""
    if t.packets_to_trace is None:
        return None
    return float(BITS_PER_BYTE * sum(t.wire_bytes[:t.packets_to_trace]))


def compute(ctx: Context) -> Result:
    p = ctx.params
    design = max(p["hops"])
    hops = [int(h) for h in p["hops"]]
    points = [(scheme, PAPER_BUDGET, h, design, p["flows"],
               derive_seed(ctx.seed, "intlabel-fig22", scheme, h) & 0xFFFFFFFF)
              for scheme in p["schemes"] for h in hops]
    traces = ctx.map(_trace, [(s, h, p["trace_packets"], 0, ctx.env)
                              for s in ("int", "intlabel") for h in hops]
                     + [("intlabel-base", h, p["base_packets"], rep, ctx.env)
                        for h in hops for rep in range(p["base_runs"])], label="traces")
    by = {(t.scheme, t.hops): t for t in traces if t.scheme != "intlabel-base"}
    base = {h: [t for t in traces if t.scheme == "intlabel-base" and t.hops == h]
            for h in hops}
    rows = []
    for r in ctx.map(measure, points, label="points"):
        k = r["hops"]
        it, lt = by[("int", k)], by[("intlabel", k)]
        b_packets = mean_ci(t.packets_to_trace for t in base[k])
        b_bits = mean_ci(traced_bits(t) for t in base[k])
        rows.append({
            "scheme": r["scheme"], "hops": k, "flows": r["flows"],
            "pint_packets": r["mean_stored"], "pint_stderr": r["stderr_stored"],
            "pint_packets_online": r["mean_online"], "pint_expected_online": r["expected_online"],
            "pint_undecoded": r["undecoded_stored"], "pint_bits": r["extra_bits_stored"],
            "int_packets": it.packets_to_trace, "intlabel_packets": lt.packets_to_trace,
            "int_bits": traced_bits(it), "intlabel_bits": traced_bits(lt),
            "int_wire_bytes": it.wire_bytes[0] if it.wire_bytes else None,
            "intlabel_wire_bytes": lt.wire_bytes[0] if lt.wire_bytes else None,
            "intlabel_decoded_hops": max((len(d) for d in lt.decoded_paths), default=0),
            "int_first_report_traces": it.first_report_traces,
            "intlabel_first_report_traces": lt.first_report_traces,
            "int_sent": it.sent, "intlabel_sent": lt.sent,
            "base_packets": b_packets[0], "base_packets_ci95": b_packets[1],
            "base_bits": b_bits[0], "base_runs": b_packets[2],
            "base_untraced": sum(t.packets_to_trace is None for t in base[k]),
        })
    return Result(rows, headlines(rows, p), [f"paper: \"{q}\"" for q in PAPER_QUOTES]
                  + [f"PINT's XOR and hybrid are tuned for {design} hops (the longest swept)",
                     f"INT and INT-label measured on the {ctx.target} target, at most "
                     f"{p['trace_packets']} packets per flow"])


def _winner(row: dict[str, Any], pint: str) -> str:
    bits = {"INT": row["int_bits"], "INT-label": row["intlabel_bits"],
            f"PINT {pint}": row["pint_bits"]}
    known = {k: v for k, v in bits.items() if v is not None and math.isfinite(v)}
    return min(known, key=known.__getitem__) if known else "-"


def headlines(rows: list[dict[str, Any]], p: dict[str, Any]) -> list[Headline]:
    first = sorted((r for r in rows if r["scheme"] == p["schemes"][0]), key=lambda r: r["hops"])
    int_counts = [r["int_packets"] for r in first]
    lbl_traced = [r for r in first if r["intlabel_packets"] is not None]
    lbl_missed = [r["hops"] for r in first if r["intlabel_packets"] is None]
    worst_int = None if None in int_counts else float(max(int_counts))
    heads = [
        Headline("INT packets to trace a path (most over the paths swept)", worst_int, 1.0,
                 "packets", tolerance=0.0,
                 note="measured: probes sent until a report's node ids were the true path"),
        Headline("INT-label packets to trace a path (most over the paths it traced)",
                 float(max(r["intlabel_packets"] for r in lbl_traced)) if lbl_traced else None,
                 1.0, "packets", tolerance=0.0,
                 note="measured: packets sent until a report's items were the true path"),
        Headline("longest path INT-label traces", float(max(r["hops"] for r in lbl_traced))
                 if lbl_traced else None, None, "switches",
                 note=("its stack holds 8 items (docs/intlabel_format.md), so on the "
                       f"{', '.join(map(str, lbl_missed))}-switch paths every report carries "
                       "the first 8 hops only and the path is never traced"
                       if lbl_missed else "every path swept was traced")),
    ]
    longest = max(r["hops"] for r in lbl_traced) if lbl_traced else max(p["hops"])
    at = next(r for r in first if r["hops"] == longest)
    heads += [Headline(f"INT extra bits, {longest} hops", at["int_bits"], None, "bits",
                       note=f"a {at['int_wire_bytes']}-byte probe frame"),
              Headline(f"INT-label extra bits, {longest} hops", at["intlabel_bits"], None,
                       "bits", note=f"{at['intlabel_wire_bytes']} bytes of INT option and "
                                    "32-byte items on the user packet")]
    far = first[-1]
    heads.append(Headline(
        f"INT-label without the specific-flow mark: packets to trace {far['hops']} switches",
        far["base_packets"], None, "packets", ci95=far["base_packets_ci95"],
        n=far["base_runs"],
        note=f"Base A, T = 50 ms, Poisson cross traffic of 500 packets/s on every link: a hop "
             f"labels the flow now and then, so the path is assembled from several reports "
             f"(a coupon collector over the hops, as PINT's); {far['base_bits']:.0f} extra "
             f"bits; untraced runs: {far['base_untraced']}"))
    cheaper = [r["hops"] for r in first if r["intlabel_bits"] is not None
               and r["int_bits"] is not None and r["intlabel_bits"] < r["int_bits"]]
    heads.append(Headline(
        "longest path where INT-label costs fewer extra bits than INT",
        float(max(cheaper)) if cheaper else None, None, "switches",
        note="a label adds a 32-byte item a hop where INT's probe adds a 4-byte node id, so "
             "INT's 58-byte probe headers are paid back within a few hops; '-': on no path "
             "swept"))
    for scheme in p["schemes"]:
        mine = sorted((r for r in rows if r["scheme"] == scheme), key=lambda r: r["hops"])
        heads.append(Headline(f"PINT {LABELS[scheme]} packets grow with hops",
                              float(grows(mine)), 1.0, "bool", direction=grows(mine)))
        last = mine[-1]
        heads.append(Headline(f"PINT {LABELS[scheme]} packets, {last['hops']} hops",
                              last["pint_packets"], None, "packets",
                              note="the paper's Fig. 22 gives no numbers in its text"))
        heads.append(Headline(f"PINT {LABELS[scheme]} extra bits, {last['hops']} hops",
                              last["pint_bits"], None, "bits"))
        winners = {r["hops"]: _winner(r, LABELS[scheme]) for r in mine}
        fewest = all(w == "INT-label" for w in winners.values())
        heads.append(Headline(
            f"INT-label fewest extra bits on every path (vs INT and PINT {LABELS[scheme]})",
            float(fewest), 1.0, "bool", direction=fewest,
            note="fewest bits by path length: " + ", ".join(
                f"{h}: {w}" for h, w in winners.items())
            + " (PINT's 16-bit digests spend less than one 32-byte item a hop)"))
    return heads


def plot(res: Result, params: dict[str, Any], fig: Any) -> None:
    ax_a, ax_b = fig.subplots(1, 2)
    first = sorted((r for r in res.rows if r["scheme"] == params["schemes"][0]),
                   key=lambda r: r["hops"])
    hops = [r["hops"] for r in first]
    for scheme, marker in zip(params["schemes"], "os^"):
        rows = sorted((r for r in res.rows if r["scheme"] == scheme), key=lambda r: r["hops"])
        ax_a.plot(hops, [r["pint_packets"] for r in rows], f"-{marker}", ms=3,
                  label=f"PINT {LABELS[scheme]}")
        ax_a.plot(hops, [r["pint_expected_online"] for r in rows], "--", lw=0.8, color="gray",
                  label="online decoder's expectation" if marker == "o" else None)
        ax_b.plot(hops, [r["pint_bits"] for r in rows], f"-{marker}", ms=3,
                  label=f"PINT {LABELS[scheme]}")
    nan = float("nan")
    for key, style, label in (("int", "-k", "INT (probe)"), ("intlabel", "-r", "INT-label"),
                              ("base", ":r", "INT-label, no specific flow")):
        ax_a.plot(hops, [nan if r[f"{key}_packets"] is None else r[f"{key}_packets"]
                         for r in first], style + "x", label=label)
        ax_b.plot(hops, [nan if r[f"{key}_bits"] is None else r[f"{key}_bits"]
                         for r in first], style + "x", label=label)
    for ax, title, label in ((ax_a, "(a) packets", "packets to trace the path"),
                             (ax_b, "(b) extra bits", "extra bits")):
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("hops")
        ax.set_ylabel(label)
        ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6)


def _hops_check(v: Any, p: dict[str, Any]) -> str | None:
    if len(v) < 2 or any(not 2 <= int(h) <= MAX_HOPS for h in v):
        return f"give at least two path lengths between 2 and {MAX_HOPS}"
    return None


register(Experiment(
    "intlabel-fig22", "packets and extra bits to trace a flow's path: INT-label, PINT, INT",
    PAPER,
    [
        Param("hops", [2, 3, 4, 5, 6, 7, 8, 9, 10], "path lengths (switches)", quick=[2, 5, 10],
              check=_hops_check),
        Param("schemes", ["hybrid", "reservoir"], "PINT's schemes: hybrid, reservoir, xor",
              check=_schemes_check),
        Param("flows", 1000, "PINT flows per point", quick=200,
              check=lambda v, p: None if 2 <= v <= 100_000 else "give 2 to 100,000 flows"),
        Param("trace_packets", 20, "most packets an INT or INT-label flow sends",
              check=lambda v, p: None if 1 <= v <= 10_000 else "give 1 to 10,000 packets"),
        Param("base_packets", 2000, "most packets a flow sends without the specific-flow mark",
              check=lambda v, p: None if 1 <= v <= 100_000 else "give 1 to 100,000 packets"),
        Param("base_runs", 10, "runs per path length without the mark (cross traffic drawn "
              "anew)", quick=3,
              check=lambda v, p: None if 1 <= v <= 1000 else "give 1 to 1,000 runs"),
    ],
    compute, plot, description=__doc__.split("\n\n")[1].replace("\n", " "),
))
