"""PINT's dynamic per-flow aggregation: median and p99 of each (switch,
flow)'s latency from sampled digests, error vs packets per flow.

Each flow crosses ``hops`` switches; switch ``i``'s latency for a packet
of flow ``f`` is lognormal, median ``m`` drawn log-uniformly in
[2, 200] us and shape ``sigma`` uniformly in [0.3, 1.0] per (switch,
flow), independent per packet (seeded). Every packet's digest carries one
hop's value in ``value_bits`` bits (reservoir sampling over the path and
value approximation, ``sinks.pint.dynamic.encode_samples``); the sink
recomputes which hop wrote and feeds a KLL sketch of size ``k`` per
(flow, hop). At each packet count the sketch's median and p99 are scored
in rank: against the samples it was fed (the KLL error alone, bounded by
the sketch's normalised rank error at 99 % confidence) and against every
packet's true latency at that hop (end to end: the KLL error plus the
sampling's DKW term ``sqrt(ln(2/0.01) / 2m)`` for m samples, with the
value approximation's factor ``1+eps`` as slack in value).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from common import samebits
from common.seeds import derive_seed
from experiments.framework import Context, Experiment, Headline, Param, Result, register
from sinks.pint.dynamic import LatencySketches, encode_samples, sampled_hops
from sinks.pint.hashing import GlobalHashes
from sinks.pint.pathtrace import MAX_HOPS
from sinks.pint.simulate import flow_packet_ids
from sinks.pint.values import ValueCodec

PAPER = "PINT: Probabilistic In-band Network Telemetry (Ben Basat et al.), sections 4.1 and 5"
QUANTILES = (0.5, 0.99)
DELTA = 0.01  # the confidence the KLL bound is stated at
LO_US, HI_US = 1.0, 1e6  # value range of the approximation (1 us .. 1 s)
CHUNK = 1 << 18  # packets encoded at once


def dkw(m: int, delta: float = DELTA) -> float:
    """Rank error of an empirical CDF of m samples (Dvoretzky-Kiefer-Wolfowitz)."""
    return math.sqrt(math.log(2.0 / delta) / (2.0 * m)) if m else math.inf


def rank_error(sorted_values: np.ndarray, low: float, high: float, q: float) -> float:
    """How far rank q is from the ranks of [low, high] in a sorted stream:
    0 when some value in the range has rank q (ties make ranks intervals)."""
    n = sorted_values.shape[0]
    below = np.searchsorted(sorted_values, low, side="left") / n
    upto = np.searchsorted(sorted_values, high, side="right") / n
    return float(max(below - q, q - upto, 0.0))


class Streams:
    """Every flow's true per-hop latencies, drawn a chunk at a time."""

    def __init__(self, rng: np.random.Generator, flows: int, hops: int) -> None:
        self.rng = rng
        self.log_median = rng.uniform(math.log(2.0), math.log(200.0), (hops, flows))
        self.sigma = rng.uniform(0.3, 1.0, (hops, flows))

    def draw(self, packets: int) -> np.ndarray:
        """``(hops, flows, packets)`` latencies in us."""
        z = self.rng.standard_normal((*self.sigma.shape, packets))
        return samebits.exp(self.log_median[..., None] + self.sigma[..., None] * z)


def chunks(checkpoints: list[int]) -> list[tuple[int, int, bool]]:
    """(start, end, is a checkpoint) spans of at most CHUNK packets per flow."""
    out, start = [], 0
    for end in checkpoints:
        while end - start > CHUNK:
            out.append((start, start + CHUNK, False))
            start += CHUNK
        out.append((start, end, True))
        start = end
    return out


def compute(ctx: Context) -> Result:
    p = ctx.params
    flows, hops, checkpoints = p["flows"], p["hops"], sorted(set(p["packets"]))
    seed = derive_seed(ctx.seed, "pint-quantiles")
    rng = np.random.default_rng(seed)
    hashes = GlobalHashes(seed & 0xFFFFFFFF, "latency")
    codec = ValueCodec(p["value_bits"], LO_US, HI_US)
    sketches = LatencySketches(p["k"])
    streams = Streams(rng, flows, hops)
    pids = flow_packet_ids(rng, flows, checkpoints[-1])
    truth = np.empty((hops, flows, checkpoints[-1]), dtype=np.float32)
    fed: list[list[np.ndarray]] = [[] for _ in range(flows * hops)]
    rows: list[dict[str, Any]] = []
    spans = chunks(checkpoints)
    for done, (start, end, score) in enumerate(spans):
        n = end - start
        values = streams.draw(n)
        truth[:, :, start:end] = values
        ids = pids[:, start:end].ravel()
        codes = encode_samples(ids, values.reshape(hops, flows * n), codec, hashes)
        hop = sampled_hops(hashes, ids, np.full(flows * n, hops))
        flow = np.repeat(np.arange(flows), n)
        decoded = codec.decode(codes).astype(np.float32)
        sketches.update(flow, hop, decoded)
        key = flow * hops + (hop - 1)
        order = np.argsort(key, kind="stable")
        bounds = np.searchsorted(key[order], np.arange(flows * hops + 1))
        for pair in range(flows * hops):
            fed[pair].append(decoded[order[bounds[pair]:bounds[pair + 1]]])
        if score:
            rows += score_all(sketches, fed, truth[:, :, :end], codec.eps)
        ctx.progress("chunks", done + 1, len(spans))
    return Result(rows, headlines(rows, sketches.rank_error), notes(p, sketches, codec))


def score_all(sketches: LatencySketches, fed: list[list[np.ndarray]], truth: np.ndarray,
              eps: float) -> list[dict[str, Any]]:
    """One row per (flow, hop, quantile) at this many packets per flow."""
    hops, flows, packets = truth.shape
    rows = []
    for f in range(flows):
        for h in range(1, hops + 1):
            samples = np.sort(np.concatenate(fed[f * hops + h - 1]))
            if samples.shape[0] == 0:
                continue
            true = np.sort(truth[h - 1, f])
            for q in QUANTILES:
                est = sketches.quantile(f, h, q)
                rows.append({
                    "packets": packets, "flow": f, "hop": h, "q": q,
                    "samples": int(samples.shape[0]), "estimate_us": est,
                    "exact_sampled_us": float(np.quantile(samples, q)),
                    "exact_us": float(np.quantile(true, q)),
                    "kll_rank_error": rank_error(samples, est, est, q),
                    "kll_bound": sketches.rank_error,
                    "e2e_rank_error": rank_error(true, est / (1 + eps), est * (1 + eps), q),
                    "e2e_bound": sketches.rank_error + dkw(int(samples.shape[0])),
                })
    return rows


def headlines(rows: list[dict[str, Any]], bound: float) -> list[Headline]:
    heads = []
    most = max(r["packets"] for r in rows)
    for q in QUANTILES:
        name = "median" if q == 0.5 else f"p{round(q * 100)}"
        mine = [r for r in rows if r["q"] == q]
        heads.append(Headline(f"{name}: largest KLL rank error, any packets", max(
            r["kll_rank_error"] for r in mine), None, "rank",
            note=f"bound {bound:.4f} (99 % confidence per query)"))
        last = [r for r in mine if r["packets"] == most]
        heads.append(Headline(f"{name}: mean end-to-end rank error, {most} packets/flow",
                              float(np.mean([r["e2e_rank_error"] for r in last])), None, "rank"))
    heads.append(Headline("every median and p99 within the KLL bound",
                          float(all(r["kll_rank_error"] <= r["kll_bound"] for r in rows)),
                          None, "bool"))
    heads.append(Headline("every median and p99 within KLL + DKW end to end",
                          float(all(r["e2e_rank_error"] <= r["e2e_bound"] for r in rows)),
                          None, "bool"))
    return heads


def notes(p: dict[str, Any], sketches: LatencySketches, codec: ValueCodec) -> list[str]:
    return [f"KLL k = {sketches.k}: normalised rank error {sketches.rank_error:.4f} at 99 % "
            f"confidence; values in {codec.bits} bits over [{LO_US:g}, {HI_US:g}] us "
            f"(eps = {codec.eps:.4f})",
            "sections 3-5 of the paper give no quantile error numbers to set beside these"]


def plot(res: Result, params: dict[str, Any], fig: Any) -> None:
    ax = fig.subplots(1, 1)
    packets = sorted({r["packets"] for r in res.rows})
    for q, color in zip(QUANTILES, ("tab:blue", "tab:red")):
        name = "median" if q == 0.5 else "p99"
        for key, style, what in (("kll_rank_error", "-o", "KLL"),
                                 ("e2e_rank_error", "--s", "end to end")):
            worst = [max(r[key] for r in res.rows if r["q"] == q and r["packets"] == n)
                     for n in packets]
            ax.plot(packets, worst, style, color=color, ms=3, label=f"{name}, {what} (max)")
    bound = res.rows[0]["kll_bound"]
    ax.axhline(bound, color="k", lw=0.8, label=f"KLL bound, k={params['k']}")
    e2e = [max(r["e2e_bound"] for r in res.rows if r["packets"] == n) for n in packets]
    ax.plot(packets, e2e, ":k", lw=0.8, label="KLL + DKW")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_ylim(bottom=0.0)
    ax.set_xlabel("packets per flow")
    ax.set_ylabel("rank error over (switch, flow)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6)


def _packets_check(v: Any, p: dict[str, Any]) -> str | None:
    if not v or any(not 1 <= int(n) <= 10_000_000 for n in v):
        return "give packet counts per flow between 1 and 10,000,000"
    return None


register(Experiment(
    "pint-quantiles", "median and p99 of per-hop latency vs packets per flow (KLL sketches)",
    PAPER,
    [
        Param("packets", [100, 300, 1000, 3000, 10_000, 30_000, 100_000],
              "packets per flow at which the sketches are queried",
              quick=[100, 1000, 10_000], check=_packets_check),
        Param("flows", 10, "flows", quick=4,
              check=lambda v, p: None if 1 <= v <= 10_000 else "give 1 to 10,000 flows"),
        Param("hops", 5, "switches on every flow's path", quick=4,
              check=lambda v, p: None if 1 <= v <= MAX_HOPS
              else f"give 1 to {MAX_HOPS} hops"),
        Param("k", 200, "KLL sketch size (the query's space budget)",
              check=lambda v, p: None if 8 <= v <= 65535 else "give k between 8 and 65535"),
        Param("value_bits", 8, "digest bits of one latency value",
              check=lambda v, p: None if 2 <= v <= 32 else "give 2 to 32 bits"),
    ],
    compute, plot, description=__doc__.split("\n\n")[0].replace("\n", " "),
))
