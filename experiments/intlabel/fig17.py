"""Figure 17: the measured distribution of labeling times per packet, beside
section 4.3's model evaluated on the network that produced it.

Section 4.3 labels a packet at each hop with probability T_s/T (Base A: a
binomial over the path) or, for Base B, q + (1 - q) f(INT_num), where q is
the port's interval-labeling probability. The paper evaluates these with
one T_s/T for every port and a fat-tree hop mix; in a real fabric each port
has its own packet rate and each flow its own path. So the model here takes
each port's T_s from the run (packets it sent over the traffic time) and
each flow's path from the data plane itself (a packet of the flow traced
through the switches after the run), and mixes the per-path distributions
over flows weighted by their packets. With Poisson-like arrivals the
interval probability is T_s/(T + T_s) (the interval counts from the label
to the next arrival); for Base B the per-port q follows from the renewal
argument of ``theory.g_renewal`` with exponential gaps:
q = e^{-xT/T_s} / ((1 - e^{-xT/T_s})/x + e^{-xT/T_s}), x the mean f over the
packets the port carries, solved to a fixed point along the paths.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from experiments.framework import Context, Experiment, Headline, Param, Result, register
from experiments.intlabel.params import run_check
from experiments.intlabel.theory import total_variation
from orchestration.network import RunEnv
from orchestration.systems.intlabel.config import RunConfig
from orchestration.systems.intlabel.run import run_intlabel

PAPER = "INT-label: lightweight network-wide telemetry by distributed labeling (Song, Pan et al.)"
MAX_LABELS = 8


def trace_paths(net: Any, topo: Any, cfg: RunConfig) -> dict[str, Any]:
    """Per flow (sender, server): the (switch, port) egress hops its packets
    take, found by sending one of its packets through the switches; and
    every port's packet count."""
    from orchestration.sim import COLLECTOR_PORT
    from traffic.packets import FlowSpec, PacketFactory

    paths: dict[str, list[tuple[str, int]]] = {}
    for src in cfg.senders:
        s = topo.hosts[src]
        for dst, d in topo.hosts.items():
            if dst == src:
                continue
            flow = FlowSpec(s.mac, d.mac, s.ip, d.ip, "udp", 10000, 20000,
                            cfg.packet_size - 42)
            frame = PacketFactory(flow).packet(0)
            node, port = topo.host_switch(src)
            hops: list[tuple[str, int]] = []
            for _ in range(16):
                outs = [(p, f) for p, f in net.switches[node].engine.process(port, frame)
                        if p != COLLECTOR_PORT]
                if not outs:
                    break
                out_port, frame = outs[0]
                hops.append((node, out_port))
                peer, peer_port = next((pn, pp) for p, pn, pp in topo.port_peers(node)
                                       if p == out_port)
                if peer in topo.hosts:
                    break
                node, port = peer, peer_port
            paths[f"{src}>{dst}"] = [list(h) for h in hops]
    counts = {f"{name}:{p}": ep.tx_packets for name, sw in net.switches.items()
              for p, ep in sw.ports.items() if p != COLLECTOR_PORT}
    return {"paths": paths, "port_packets": counts,
            "traffic_s": cfg.traffic_duration_s()}


def _f(name: str, max_hop: int):
    if name == "F1":
        return lambda i: 0.0 if i == 0 else 1.0
    if name == "F2":
        return lambda i: min(1.0, i / (max_hop - 1))
    if name == "F3":  # F2 times elapsed/T, in expectation elapsed/T = 1/2
        return lambda i: min(1.0, i / (max_hop - 1)) / 2
    raise ValueError(name)


def model_distribution(extra: dict[str, Any], mode: str, T_ms: float, f_name: str = "F1",
                       max_hop: int = 5, iterations: int = 8) -> np.ndarray:
    """Section 4.3's per-hop model on the run's own paths and port rates."""
    paths = {k: [tuple(h) for h in v] for k, v in extra["paths"].items()}
    duration = extra["traffic_s"]
    rate = {tuple(k.rsplit(":", 1)[0:1]) + (int(k.rsplit(":", 1)[1]),): n / duration
            for k, n in extra["port_packets"].items()}
    T = T_ms / 1000.0
    f = _f(f_name, max_hop)
    x: dict[tuple[str, int], float] = defaultdict(float)
    dists: dict[str, np.ndarray] = {}
    for _ in range(iterations if mode == "B" else 1):
        fsum: dict[tuple[str, int], float] = defaultdict(float)
        wsum: dict[tuple[str, int], float] = defaultdict(float)
        for key, hops in paths.items():
            dist = np.zeros(MAX_LABELS + 1)
            dist[0] = 1.0
            for hop in hops:
                lam = rate.get(hop, 0.0)
                if lam <= 0:
                    continue
                if mode == "A":
                    p = np.full(MAX_LABELS + 1, 1.0 / (1.0 + lam * T))
                else:
                    xp = x[hop]
                    e = math.exp(-xp * lam * T)
                    q = 1.0 / (1.0 + lam * T) if xp < 1e-12 else e / ((1 - e) / xp + e)
                    p = np.array([q + (1 - q) * f(i) for i in range(MAX_LABELS + 1)])
                    fsum[hop] += float(sum(dist[i] * f(i) for i in range(MAX_LABELS + 1)))
                    wsum[hop] += 1.0
                p[MAX_LABELS] = 0.0  # a full stack takes no more labels
                nxt = dist * (1 - p)
                nxt[1:] += dist[:-1] * p[:-1]
                dist = nxt
            dists[key] = dist
        if mode == "B":
            x = defaultdict(float, {h: fsum[h] / wsum[h] for h in wsum})
    total = sum(dists.values())
    return total / total.sum()


def _point(cfg: RunConfig, env: RunEnv | None = None) -> dict[str, Any]:
    m = run_intlabel(cfg, env, inspect=trace_paths)
    return {"labels_per_packet": m.labels_per_packet, "extra": m.extra,
            "delivered": m.packets_delivered}


ALL_SERVERS = tuple(f"h{i}" for i in range(1, 9))


def fig17_compute(ctx: Context) -> Result:
    p = ctx.params
    base = RunConfig(packets=p["packets"], T_ms=p["T_ms"], f=p["f"])
    # The paper's setup (servers 1 and 8 send), and well-mixed traffic (every
    # server sends) where the model's independence between hops holds.
    mixed = replace(base, senders=ALL_SERVERS, packets=2 * p["packets"])
    cases = [("paper", "A", replace(base, mode="A")), ("paper", "B", replace(base, mode="B")),
             ("mixed", "A", replace(mixed, mode="A")), ("mixed", "B", replace(mixed, mode="B"))]
    runs = ctx.map(partial(_point, env=ctx.env), [c for _, _, c in cases], "runs")
    rows = []
    heads = []
    for (traffic, mode, _), run in zip(cases, runs):
        measured = np.array(run["labels_per_packet"][:MAX_LABELS + 1], dtype=float)
        measured /= measured.sum()
        model = model_distribution(run["extra"], mode, p["T_ms"], p["f"])
        tvd = total_variation(measured, model)
        for s in range(6):
            rows.append({"traffic": traffic, "mode": mode, "labels": s,
                         "packets": int(run["labels_per_packet"][s]),
                         "fraction": float(measured[s]), "model_fraction": float(model[s])})
        note = ("acceptance: under 0.05" if traffic == "mixed" else
                "two senders: hops along a path stay in phase, so labels correlate")
        heads.append(Headline(f"total variation vs section 4.3 model, Base {mode}, "
                              f"{traffic} traffic", tvd, None, "", note=note))
    a = {r["labels"]: r["packets"] for r in rows if r["mode"] == "A" and r["traffic"] == "paper"}
    b = {r["labels"]: r["packets"] for r in rows if r["mode"] == "B" and r["traffic"] == "paper"}
    heads.append(Headline("Base B has more 5-label packets than Base A",
                          float(b[5] > a[5]), 1.0, "bool"))
    heads.append(Headline("Base B has fewer 1- and 2-label packets than Base A",
                          float(b[1] + b[2] < a[1] + a[2]), 1.0, "bool"))
    return Result(rows, heads, [
        " ".join(__doc__.split("\n\n")[1].split()),
        "With only servers 1 and 8 sending, consecutive ports of a path carry nearly the same "
        "packets, so the packet that renews one port's interval tends to renew the next one "
        "too; labels then cluster on fewer packets than independent hops predict. With every "
        "server sending, ports mix flows and the model holds."])


def fig17_plot(result: Result, params: dict[str, Any], fig: Any) -> None:
    ax = fig.add_subplot()
    width = 0.2
    for j, mode in enumerate(("A", "B")):
        rows = [r for r in result.rows
                if r["mode"] == mode and r["labels"] >= 1 and r["traffic"] == "paper"]
        xs = np.array([r["labels"] for r in rows], dtype=float)
        ax.bar(xs + (2 * j - 1) * width, [r["fraction"] for r in rows], width * 2,
               label=f"Base {mode} (simulated)", alpha=0.8)
        ax.plot(xs + (2 * j - 1) * width, [r["model_fraction"] for r in rows], "k.",
                ms=8, label="section 4.3 model" if j == 0 else None)
        mixed = [r for r in result.rows
                 if r["mode"] == mode and r["labels"] >= 1 and r["traffic"] == "mixed"]
        ax.plot(xs + (2 * j - 1) * width, [r["fraction"] for r in mixed], "x",
                color=f"C{j}", ms=7, label=f"Base {mode}, every server sending")
        ax.plot(xs + (2 * j - 1) * width, [r["model_fraction"] for r in mixed], "+",
                color="k", ms=7, label="model, every server sending" if j == 0 else None)
    ax.set_xlabel("labeling times per packet")
    ax.set_ylabel("fraction of packets")
    ax.set_title(f"Fig. 17 ({params['packets']:,} packets, T = {params['T_ms']:g} ms)")
    ax.legend()
    ax.grid(alpha=0.3)


register(Experiment(
    "intlabel-fig17", "distribution of labeling times per packet (Base A/B) vs the model",
    PAPER,
    [Param("packets", 10_000, "packets sent in all", quick=3000,
           check=run_check("packets")),
     Param("T_ms", 50.0, "labeling interval T (ms)",
           check=run_check("T_ms")),
     Param("f", "F1", "Base B probability function (F1, F2, F3)",
           check=run_check("f"))],
    fig17_compute, fig17_plot))
