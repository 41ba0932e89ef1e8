"""INT-label's figures (Song, Pan et al.), one registered experiment each.

Figures 15, 16, 20 and 21 are analytical (section 4.3 and the authors'
counting model); the others run INT-label on the sim target (see
``orchestration.systems.intlabel.run``).
"""

from __future__ import annotations

from typing import Any

from experiments.framework import Context, Experiment, Headline, Param, Result, register
from experiments.intlabel import counting, theory
from orchestration.network import RunEnv

PAPER = "INT-label: lightweight network-wide telemetry by distributed labeling (Song, Pan et al.)"


def _even_ks(v: Any, _: dict[str, Any]) -> str | None:
    if not v or any(k < 2 or k % 2 for k in v):
        return "fat-tree sizes k must be even numbers >= 2"
    return None


def _ratio(v: Any, _: dict[str, Any]) -> str | None:
    return None if 0 < v <= 1 else "T_s/T must be in (0, 1]"


# ---------------------------------------------------------------- figure 15


def fig15_compute(ctx: Context) -> Result:
    ks = [int(k) for k in ctx.params["ks"]]
    r = ctx.params["ts_over_t"]
    sweep = theory.figure15_sweep(ks, r)
    rows = [{"k": int(k), "base_a": float(a), "base_b_paper": float(bp), "base_b": float(b)}
            for k, a, bp, b in zip(sweep["k"], sweep["base_a"], sweep["base_b_paper"],
                                   sweep["base_b"])]
    last = rows[-1]
    heads = [
        Headline(f"E[labels] Base A, k={last['k']}", last["base_a"], None, "labels/packet"),
        Headline(f"E[labels] Base B (paper's recursion), k={last['k']}", last["base_b_paper"],
                 None, "labels/packet"),
        Headline(f"E[labels] Base B (per-port model), k={last['k']}", last["base_b"], None,
                 "labels/packet",
                 note="the paper's recursion uses each packet's own f for the interval "
                      "probability; the per-port model (checked by Monte Carlo) is lower"),
        Headline("Base B above Base A at every k",
                 float(all(x["base_b_paper"] > x["base_a"] for x in rows)), 1.0, "bool"),
    ]
    return Result(rows, heads, ["The paper states trends only (both grow with k; Base B "
                                "above Base A); it prints no values for figure 15."])


def fig15_plot(result: Result, params: dict[str, Any], fig: Any) -> None:
    ax = fig.add_subplot()
    ks = [r["k"] for r in result.rows]
    ax.plot(ks, [r["base_a"] for r in result.rows], "o-", label="Base A")
    ax.plot(ks, [r["base_b_paper"] for r in result.rows], "s-", label="Base B (paper)")
    ax.plot(ks, [r["base_b"] for r in result.rows], "^--", label="Base B (per-port model)")
    ax.set_xlabel("fat-tree size k")
    ax.set_ylabel("expected labeling times per packet")
    ax.set_title(f"Fig. 15: T_s/T = {params['ts_over_t']}")
    ax.legend()
    ax.grid(alpha=0.3)


register(Experiment(
    "intlabel-fig15", "theoretical labeling times of Base A/B vs fat-tree size", PAPER,
    [Param("ks", list(theory.FIG15_K), "fat-tree sizes k", check=_even_ks),
     Param("ts_over_t", 0.01, "packet spacing over labeling interval, T_s/T", check=_ratio)],
    fig15_compute, fig15_plot,
    "Expected number of labels a packet carries (section 4.3) for senders spread over a "
    "k-ary fat-tree, from the binomial (Base A) and the W_n recursion (Base B), f(i)=i/5."))


# ---------------------------------------------------------------- figure 16


def fig16_compute(ctx: Context) -> Result:
    sweep = theory.figure16_sweep(ctx.params["ratios"], ctx.params["k"])
    rows = [{"ts_over_t": float(r), "base_a": float(a), "base_b_paper": float(bp),
             "base_b": float(b)}
            for r, a, bp, b in zip(sweep["ts_over_t"], sweep["base_a"], sweep["base_b_paper"],
                                   sweep["base_b"])]
    inc = all(b["base_a"] > a["base_a"] and b["base_b_paper"] > a["base_b_paper"]
              for a, b in zip(rows, rows[1:]))
    heads = [Headline("expectations increase with T_s/T", float(inc), 1.0, "bool"),
             Headline("E[labels] Base A at the largest T_s/T", rows[-1]["base_a"], None,
                      "labels/packet"),
             Headline("E[labels] Base B at the largest T_s/T", rows[-1]["base_b_paper"], None,
                      "labels/packet")]
    return Result(rows, heads, [f"k = {ctx.params['k']}, f(i) = i/5 as in the paper."])


def fig16_plot(result: Result, params: dict[str, Any], fig: Any) -> None:
    ax = fig.add_subplot()
    x = [r["ts_over_t"] for r in result.rows]
    ax.plot(x, [r["base_a"] for r in result.rows], "o-", label="Base A")
    ax.plot(x, [r["base_b_paper"] for r in result.rows], "s-", label="Base B (paper)")
    ax.plot(x, [r["base_b"] for r in result.rows], "^--", label="Base B (per-port model)")
    ax.set_xlabel("T_s / T")
    ax.set_ylabel("expected labeling times per packet")
    ax.set_title(f"Fig. 16: k = {params['k']}")
    ax.legend()
    ax.grid(alpha=0.3)


register(Experiment(
    "intlabel-fig16", "expected labeling times vs T_s/T", PAPER,
    [Param("ratios", [round(x, 6) for x in theory.FIG16_RATIOS], "T_s/T values"),
     Param("k", 20, "fat-tree size", check=lambda v, _: None if v >= 2 and v % 2 == 0
           else "k must be even and >= 2")],
    fig16_compute, fig16_plot))


# ------------------------------------------------------------- figures 20-21


def _counting_rows(fn: Any, ks: list[int]) -> list[dict[str, Any]]:
    rows = []
    for variant in ("sheet", "corrected"):
        data = fn(ks, variant)
        for i, k in enumerate(data["k"]):
            row: dict[str, Any] = {"variant": variant, "k": int(k)}
            for scheme in counting.SCHEMES:
                row[scheme] = float(data[scheme][i])
            rows.append(row)
    return rows


SHEET_20 = {10: (250, 300, 50), 20: (2000, 2200, 200), 30: (6750, 7200, 450)}


def fig20_compute(ctx: Context) -> Result:
    rows = _counting_rows(counting.figure20, ctx.params["ks"])
    heads = []
    for row in rows:
        if row["variant"] == "sheet" and row["k"] in SHEET_20:
            p = SHEET_20[row["k"]]
            for scheme, paper in zip(("INT-path", "Pingmesh", "HULA"), p):
                heads.append(Headline(f"{scheme} generators, k={row['k']}", row[scheme], paper,
                                      note="a formula (the authors' counting model), not a "
                                           "measurement: it equals the sheet by construction"))
    return Result(rows, heads, ["'sheet' reproduces the authors' spreadsheet; 'corrected' "
                                "uses INT-path's own path count (1 or k paths)."])


PAPER_INT_PATH_EXTRA = 35.0
"""Section 6.2: INT-path "needs to generate extra probe packets, resulting in more
bandwidth cost than INT-label by ~35%"."""


def _wire_point(point: tuple[str, int, dict[str, Any], RunEnv]) -> dict[str, Any]:
    from orchestration.systems.intlabel.wire import int_path_wire, intlabel_wire

    scheme, k, p, env = point
    if scheme == "INT-path":
        w = int_path_wire(k, p["T_ms"], sessions=p["sessions"], seed=env.seed, env=env)
    else:
        w = intlabel_wire(k, p["T_ms"], rate_mbps=p["rate_mbps"], duration_s=p["duration_s"],
                          env=env)
    return {"variant": "measured", "k": k, "scheme": scheme, "mbps": w.mbps,
            "extra_packets_per_s": w.extra_packets_per_s, "coverage": w.coverage,
            "loss_rate": w.loss_rate}


def fig21_compute(ctx: Context) -> Result:
    p = ctx.params
    rows = _counting_rows(counting.figure21, p["ks"])
    points = [(scheme, int(k), p, ctx.env) for k in p["measured_ks"]
              for scheme in ("INT-path", "INT-label")]
    measured = ctx.map(_wire_point, points, label="runs")
    heads = []
    for k in p["measured_ks"]:
        by = {r["scheme"]: r for r in measured if r["k"] == k}
        path, label = by["INT-path"]["mbps"], by["INT-label"]["mbps"]
        more = 100.0 * (path / label - 1.0)
        sheet = counting.bandwidth_mbps(k, "sheet") if k in counting.SHEET_K else {}
        heads += [
            Headline(f"INT-path bandwidth on the wire, k={k}", path, sheet.get("INT-path"),
                     "Mb/s",
                     note=f"{by['INT-path']['extra_packets_per_s']:.0f} probe frames/s on "
                          "the links; a probe grows at every hop, so long Euler trails cost "
                          "far more than the sheet's 216.5 B a probe"),
            Headline(f"INT-label bandwidth on the wire, k={k}", label, sheet.get("INT-label"),
                     "Mb/s",
                     note=f"coverage {by['INT-label']['coverage']:.4f} per T_i = 2T, loss "
                          f"{by['INT-label']['loss_rate']:.4f}; more traffic labels more "
                          "often (a port labels the first packet after T), so INT-label's "
                          "bytes grow with the rate (docs/intlabel.md)"),
            Headline(f"INT-path's extra bandwidth over INT-label, k={k}", more,
                     PAPER_INT_PATH_EXTRA, "%", direction=more > 0,
                     note="the paper's ~35% is its sheet's byte ratio, 216.5 B per probe "
                          "over 160.5 B per labeled packet (a formula, equal at every k); "
                          "measured, a probe grows at every hop, so INT-path's bytes a link "
                          "depend on how long its Euler trails are (docs/intlabel.md)"),
        ]
        rows += [{"variant": "measured", "k": int(k), "INT-path": path, "INT-label": label,
                  "INT-path probe frames/s": by["INT-path"]["extra_packets_per_s"],
                  "INT-label coverage": by["INT-label"]["coverage"],
                  "INT-label loss": by["INT-label"]["loss_rate"]}]
    return Result(rows, heads, [
        "'sheet' reproduces the authors' spreadsheet; 'corrected' adds the x8 the sheet's "
        "Pingmesh term lacks; both are formulas, not measurements.",
        f"'measured': INT-path's Euler trails probed through gpint.p4 and INT-label on user "
        f"traffic ({p['rate_mbps']:g} Mb/s per host), one network-wide sweep every "
        f"T = {p['T_ms']:g} ms, bytes on every data link (orchestration.systems.intlabel.wire)"])


def _counting_plot(ylabel: str, title: str, log: bool) -> Any:
    def plot(result: Result, params: dict[str, Any], fig: Any) -> None:
        ax = fig.add_subplot()
        for variant, style in (("sheet", "-"), ("corrected", "--"), ("measured", ":")):
            rows = [r for r in result.rows if r["variant"] == variant]
            for scheme in counting.SCHEMES:
                if not rows or rows[0].get(scheme) is None:
                    continue
                ax.plot([r["k"] for r in rows], [max(r[scheme], 1e-3) for r in rows],
                        style, marker="o", label=f"{scheme} ({variant})")
        if log:
            ax.set_yscale("log")
        ax.set_xlabel("fat-tree size k")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(fontsize=7, ncol=2)
        ax.grid(alpha=0.3)
    return plot


register(Experiment(
    "intlabel-fig20", "probe generators vs fat-tree size", PAPER,
    [Param("ks", [10, 20, 30], "fat-tree sizes k", check=_even_ks)],
    fig20_compute, _counting_plot("probe generators", "Fig. 20", True)))

register(Experiment(
    "intlabel-fig21", "bandwidth overhead of network-wide telemetry vs fat-tree size", PAPER,
    [Param("ks", [10, 20, 30], "fat-tree sizes k of the sheet's formulas", check=_even_ks),
     Param("measured_ks", [4, 6, 8, 10], "fat-tree sizes k run on the target", quick=[4],
           check=lambda v, _: None if v and all(k in (2, 4, 6, 8, 10) for k in v)
           else "measured fat-tree sizes are 2, 4, 6, 8 or 10"),
     Param("T_ms", 10.0, "one network-wide sweep every T (ms): the sheet's 100/s",
           check=lambda v, _: None if v > 0 else "T must be positive"),
     Param("rate_mbps", 2.0, "INT-label's user traffic per host (Mb/s): at 5 Mb/s the "
           "k = 10 fabric's switches drop 16 % of it",
           check=lambda v, _: None if v > 0 else "the rate must be positive"),
     Param("duration_s", 1.0, "INT-label's traffic per run (s)", quick=0.5,
           check=lambda v, _: None if v > 0 else "the duration must be positive"),
     Param("sessions", 10, "INT-path probe sessions per run",
           check=lambda v, _: None if v >= 1 else "at least one session")],
    fig21_compute, _counting_plot("bandwidth (Mb/s)", "Fig. 21", True),
    description="The authors' counting model (sheet and corrected) beside INT-path and "
                "INT-label measured on the wire of fat-trees run on the target."))


# The rest of INT-label's figures register where they are computed.
from experiments.intlabel import fig17, fig22, sim_figures  # noqa: E402, F401
