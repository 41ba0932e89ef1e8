"""INT-label's analysis (paper section 4) and a Monte Carlo model that checks it.

Notation follows the paper: T is the labeling interval, Ts the packet spacing on a port,
r = Ts/T the per-packet interval-labeling probability, H the number of switches on a path
(1, 3 or 5 in a k-ary fat-tree), Z_A and Z_B the number of INT items a packet carries at the
last hop under Base A and Base B, W_n the items after n hops.

Two Base B models live here. ``*_paper`` is the recursion of section 4.3 as published: the
interval probability is g(f(INT_num)) of the packet's own f, added to f(INT_num). The default
model corrects it (see ``base_b_hop_distributions``): a port's interval condition is set by
the *other* packets through that port, so g takes the port's mean probabilistic-labeling rate,
and f only applies when the interval test fails (Algo 2 replaces the else branch of Algo 1).
The corrected model agrees with the Monte Carlo of per-port labeling (``monte_carlo_labels``)
within a total variation distance of 0.01 for Ts/T from 1/100 to 1/2; the published
recursion is off by 0.02 at Ts/T = 1/100, 0.1 at 1/20 and 0.24 at 1/4 (F1).

Both models assume what the Monte Carlo does: every port sees one packet per Ts, its traffic
is a well-mixed merge of many flows (successive packets' items are independent), and the
flows are uniform all-to-all, so each port carries path classes in proportion to P(H).

The published figures 15 and 16 come from the paper's recursion with g(x) = (Ts/T)(1 - x),
the function in the authors' artifact (``g_paper_linear``); the sweeps return both models.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from common import samebits
from common.errors import InvalidValueError

MAX_HOP = 5
"""Longest path in a fat-tree, in switches (section 2); also MAX_hop of Base B's f."""

PATH_HOPS = (1, 3, 5)
"""Switches on a path to the same edge, the same pod, another pod (section 4.3)."""

MEAN_ELAPSED = 0.5
"""E[(CT - LT)/T] at a probabilistic decision: the packet falls uniformly inside the interval.

F3 weights F2 by (CT - LT)/T; the closed forms use this mean (``f3``). In the Monte Carlo
the exact elapsed time is used and the two agree within TVD 0.01 for Ts/T in [1/100, 1/2].
"""

FIG15_K = tuple(range(4, 21, 2))
"""Fat-tree sizes of figure 15: k = 4, 6, ..., 20 at Ts/T = 1/100.

The authors' sweep also evaluates k = 2, a degenerate fat-tree (two hosts, every path five
switches, E[H] = 5) that breaks the growth with k that section 6 describes.
"""

FIG16_RATIOS = tuple(float(x) for x in np.linspace(1 / 1000, 1 / 100, 10))
"""Ts/T values of figure 16 (the authors' sweep: ten points from 1/1000 to 1/100, k = 20)."""

ProbFn = Callable[..., float]
"""f(INT_num) -> labeling probability of Base B (Algo 2 line 5)."""

GFn = Callable[[float, float], float]
"""g(x, Ts/T) -> probability that the interval condition holds (section 4.3's p_B)."""


# -- fat-tree paths ---------------------------------------------------------------------------


def _check_k(k: int) -> None:
    if k < 2 or k % 2:
        raise InvalidValueError(f"a k-ary fat-tree needs an even k >= 2, got {k}")


def _check_ratio(ts_over_t: float) -> None:
    if not 0.0 < ts_over_t <= 1.0:
        raise InvalidValueError(f"Ts/T must be in (0, 1], got {ts_over_t}")


def hop_distribution(k: int) -> dict[int, float]:
    """P(H = 1), P(H = 3), P(H = 5) for host1 sending to every other host (section 4.3).

    Of the k^3/4 - 1 destinations, k/2 - 1 share host1's edge switch, (k/2 - 1) k/2 share
    its pod and (k - 1) (k/2)^2 are in other pods.
    """
    _check_k(k)
    half = k // 2
    total = k**3 // 4 - 1
    return {1: (half - 1) / total, 3: (half - 1) * half / total, 5: (k - 1) * half**2 / total}


def mean_hops(k: int) -> float:
    """E[H] on a k-ary fat-tree: the factor by which topology scales E[Z_A] (figure 15)."""
    return sum(h * p for h, p in hop_distribution(k).items())


def packets_per_interval(t: int, ts: int) -> int:
    """Packets per labeling cycle on a port with spacing ``ts`` and interval ``t`` (same unit).

    Algo 1 labels when CT - LT > T, so after a label the (floor(T/Ts) + 1)-th packet is the
    next interval label; the formulas' Ts/T is exact with Ts/T = 1 / packets_per_interval.
    """
    if ts <= 0 or t < 0:
        raise InvalidValueError("need ts > 0 and t >= 0")
    return t // ts + 1


# -- Base B's labeling probability f ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LabelProbability:
    """A tabulated f(INT_num); entry i holds for INT_num = i, the last for larger INT_num.

    ``elapsed_weighted`` marks F3, which multiplies by (CT - LT)/T; called with INT_num only
    it returns the value at ``MEAN_ELAPSED``.
    """

    name: str
    table: tuple[float, ...]
    elapsed_weighted: bool = False

    def __call__(self, int_num: int, elapsed_over_t: float = MEAN_ELAPSED) -> float:
        p = self.table[min(int_num, len(self.table) - 1)]
        return p * elapsed_over_t if self.elapsed_weighted else p


def f1(max_hop: int = MAX_HOP) -> LabelProbability:
    """F1 (section 6, figure 19): 0 for an unlabeled packet, 1 once it carries an item."""
    return LabelProbability("F1", (0.0,) + (1.0,) * max_hop)


def f2(max_hop: int = MAX_HOP) -> LabelProbability:
    """F2 = INT_num / (MAX_hop - 1), capped at 1 (section 3.1)."""
    return LabelProbability("F2", tuple(min(1.0, i / (max_hop - 1)) for i in range(max_hop + 1)))


def f3(max_hop: int = MAX_HOP) -> LabelProbability:
    """F3 = INT_num / (MAX_hop - 1) * (CT - LT)/T (figure 19); in expectation F2 / 2."""
    table = tuple(min(1.0, i / (max_hop - 1)) for i in range(max_hop + 1))
    return LabelProbability("F3", table, elapsed_weighted=True)


def f_figures(max_hop: int = MAX_HOP) -> LabelProbability:
    """f(i) = i / MAX_hop, i = 0..4: the function of figures 15 and 16."""
    return LabelProbability("i/5", tuple(min(1.0, i / max_hop) for i in range(max_hop + 1)))


# -- the interval probability g ---------------------------------------------------------------


def g_renewal(x: float, ts_over_t: float) -> float:
    """P(interval label) at a port whose other packets are labeled by f at rate ``x``.

    With deterministic spacing Ts there are m = T/Ts packets per interval. After a label,
    each packet is labeled probabilistically with probability x until the m-th one, which
    the interval rule labels. Cycle lengths are truncated-geometric with mean
    (1 - (1-x)^m)/x, and a cycle ends on the interval rule with probability (1-x)^(m-1);
    per packet (renewal-reward) g(x) = x (1-x)^(m-1) / (1 - (1-x)^m). It falls from
    1/m = Ts/T at x = 0 to 0 at x = 1, as section 4.3 requires of g. Here x is the mean f
    over the port's traffic, not the arriving packet's own f (``base_b_hop_distributions``).
    """
    _check_ratio(ts_over_t)
    m = 1.0 / ts_over_t
    if x <= 1e-12 or m <= 1.0:
        return ts_over_t
    if x >= 1.0:
        return 0.0
    log_keep = math.log1p(-x)
    share = x * math.exp((m - 1.0) * log_keep) / -math.expm1(m * log_keep)
    return min(share, ts_over_t)


def g_paper_linear(x: float, ts_over_t: float) -> float:
    """g(x) = (Ts/T)(1 - x): the simplest g with g(0) = Ts/T and g(1) = 0.

    This is the g of the authors' artifact, hence of the published figures 15 and 16.
    """
    return ts_over_t * (1.0 - x)


# -- Base A -----------------------------------------------------------------------------------


def base_a_distribution(k: int, ts_over_t: float) -> np.ndarray:
    """P(Z_A = s), s = 0..5: Y_l ~ B(l, Ts/T) mixed over P(H = l) (section 4.3)."""
    _check_ratio(ts_over_t)
    p = ts_over_t
    out = np.zeros(MAX_HOP + 1)
    for hops, weight in hop_distribution(k).items():
        for s in range(hops + 1):
            out[s] += weight * math.comb(hops, s) * p**s * (1.0 - p) ** (hops - s)
    return out


# -- Base B as published ----------------------------------------------------------------------


def base_b_hop_distributions_paper(
    ts_over_t: float, f: ProbFn, g: GFn = g_paper_linear, hops: int = MAX_HOP
) -> np.ndarray:
    """Row n = P(W_n = s) by section 4.3's recursion, exactly as published.

    W_1 ~ Bernoulli(Ts/T); P(W_{n+1} = i) = P(W_n = i)(1 - g(f(i)) - f(i))
    + P(W_n = i - 1)(f(i - 1) + g(f(i - 1))).
    """
    _check_ratio(ts_over_t)
    w = np.zeros((hops + 1, hops + 1))
    w[0, 0] = 1.0
    w[1, 0], w[1, 1] = 1.0 - ts_over_t, ts_over_t
    for n in range(1, hops):
        label = [f(i) + g(f(i), ts_over_t) for i in range(n + 1)]
        for i in range(n + 1):
            w[n + 1, i] += w[n, i] * (1.0 - label[i])
            w[n + 1, i + 1] += w[n, i] * label[i]
    return w


def base_b_distribution_paper(
    k: int, ts_over_t: float, f: ProbFn, g: GFn = g_paper_linear
) -> np.ndarray:
    """P(Z_B = s) = sum_l P(H = l) P(W_l = s) with the published recursion (figures 15, 16)."""
    w = base_b_hop_distributions_paper(ts_over_t, f, g)
    return sum(p * w[h] for h, p in hop_distribution(k).items())


# -- Base B, port-state model -----------------------------------------------------------------


def _stay_probs(f: ProbFn, q: float) -> np.ndarray:
    """P(no label | INT_num = i) = (1 - q)(1 - f(i)) at a port whose interval condition
    holds with probability q; the label probability is its complement q + (1 - q) f(i)."""
    return np.array([(1.0 - q) * (1.0 - f(i)) for i in range(MAX_HOP + 1)])


def _advance(dist: np.ndarray, stay: np.ndarray) -> np.ndarray:
    """One hop: i items stay i with probability stay[i] and become i + 1 otherwise."""
    out = dist * stay
    out[1:] += (dist * (1.0 - stay))[:-1]
    return out


def base_b_hop_distributions(
    ts_over_t: float, f: ProbFn, g: GFn = g_renewal, hops: int = MAX_HOP
) -> np.ndarray:
    """Row n = P(W_n = s) with the interval probability taken from the port's traffic.

    At the n-th switch of a path the port carries packets at their n-th hop, whose items are
    distributed as W_{n-1}, so its probabilistic-labeling rate is x_n = E[f(W_{n-1})] and the
    interval condition holds with q_n = g(x_n). The interval test runs first, so a packet
    with i items is labeled with probability q_n + (1 - q_n) f(i), and
    P(W_n = i) = P(W_{n-1} = i)(1 - L_n(i)) + P(W_{n-1} = i - 1) L_n(i - 1).
    The paper instead uses g(f(i)) + f(i): with F1 an unlabeled packet at hop 2 would see
    q = Ts/T although the labeled packets around it keep refreshing LT (q ~ 0.58 Ts/T).
    """
    _check_ratio(ts_over_t)
    w = np.zeros((hops + 1, MAX_HOP + 1))
    w[0, 0] = 1.0
    fvals = np.array([f(i) for i in range(MAX_HOP + 1)])
    for n in range(1, hops + 1):
        q = g(samebits.dot(w[n - 1], fvals), ts_over_t)
        w[n] = _advance(w[n - 1], _stay_probs(f, q))
    return w[:, : hops + 1]


def base_b_distribution(
    k: int, ts_over_t: float, f: ProbFn, g: GFn | None = None
) -> np.ndarray:
    """P(Z_B = s), s = 0..5: corrected W_l mixed over P(H = l) (section 4.3's Z_B)."""
    w = base_b_hop_distributions(ts_over_t, f, g or g_renewal)
    return sum(p * w[h] for h, p in hop_distribution(k).items())


PortLayout = tuple[tuple[str, tuple[tuple[int, int], ...]], ...]
"""Ports in path order: (name, ((H, position on the path), ...) of the traffic through it)."""

LAYERED: PortLayout = (
    ("hop1", ((1, 1), (3, 1), (5, 1))),
    ("hop2", ((3, 2), (5, 2))),
    ("hop3", ((3, 3), (5, 3))),
    ("hop4", ((5, 4),)),
    ("hop5", ((5, 5),)),
)
"""Section 4.3's implicit network: the n-th switch of any path sees only n-th hops."""

FATTREE: PortLayout = (
    ("edge_up", ((3, 1), (5, 1))),
    ("agg_up", ((5, 2),)),
    ("core_down", ((5, 3),)),
    ("agg_down", ((3, 2), (5, 4))),
    ("edge_down", ((1, 1), (3, 3), (5, 5))),
)
"""Egress port kinds of a fat-tree under uniform all-to-all traffic: aggregation downlinks
merge 3-hop and 5-hop paths, edge downlinks end every path."""

LAYOUTS = {"layered": LAYERED, "fattree": FATTREE}


def base_b_distribution_fattree(
    k: int, ts_over_t: float, f: ProbFn, g: GFn | None = None
) -> np.ndarray:
    """P(Z_B = s) with the port-state model on the fat-tree's port kinds (``FATTREE``).

    Each port kind carries the path classes H in proportion to P(H); its interval
    probability is g of the mean f over that mix.
    """
    _check_ratio(ts_over_t)
    g = g or g_renewal
    weights = hop_distribution(k)
    fvals = np.array([f(i) for i in range(MAX_HOP + 1)])
    state = {h: np.eye(MAX_HOP + 1)[0] for h in PATH_HOPS}
    for _name, members in FATTREE:
        total = sum(weights[h] for h, _pos in members)
        if total == 0.0:
            continue
        x = sum(weights[h] * samebits.dot(state[h], fvals) for h, _pos in members) / total
        stay = _stay_probs(f, g(x, ts_over_t))
        for h, _pos in members:
            state[h] = _advance(state[h], stay)
    return sum(weights[h] * state[h] for h in PATH_HOPS)


# -- expectations and figure sweeps -----------------------------------------------------------


def _mean(dist: np.ndarray) -> float:
    return samebits.dot(np.arange(len(dist)), dist)


def expected_labels_a(k: int, ts_over_t: float) -> float:
    """E[Z_A] = (Ts/T) E[H] (figures 15 and 16, Base A)."""
    return _mean(base_a_distribution(k, ts_over_t))


def expected_labels_b(k: int, ts_over_t: float, f: ProbFn, g: GFn | None = None) -> float:
    """E[Z_B] under the port-state model."""
    return _mean(base_b_distribution(k, ts_over_t, f, g))


def expected_labels_b_paper(
    k: int, ts_over_t: float, f: ProbFn, g: GFn = g_paper_linear
) -> float:
    """E[Z_B] with the published recursion (the published figures 15 and 16)."""
    return _mean(base_b_distribution_paper(k, ts_over_t, f, g))


def _sweep(points: Sequence[tuple[int, float]], f: ProbFn) -> dict[str, np.ndarray]:
    return {
        "base_a": np.array([expected_labels_a(k, r) for k, r in points]),
        "base_b_paper": np.array([expected_labels_b_paper(k, r, f) for k, r in points]),
        "base_b": np.array([expected_labels_b(k, r, f) for k, r in points]),
    }


def figure15_sweep(
    ks: Sequence[int] = FIG15_K, ts_over_t: float = 0.01, f: ProbFn | None = None
) -> dict[str, np.ndarray]:
    """E[Z_A], E[Z_B] (published and port-state) against fat-tree k (figure 15)."""
    out = _sweep([(k, ts_over_t) for k in ks], f or f_figures())
    return {"k": np.asarray(ks), **out}


def figure16_sweep(
    ratios: Sequence[float] = FIG16_RATIOS, k: int = 20, f: ProbFn | None = None
) -> dict[str, np.ndarray]:
    """E[Z_A], E[Z_B] (published and port-state) against Ts/T at k = 20 (figure 16)."""
    out = _sweep([(k, r) for r in ratios], f or f_figures())
    return {"ts_over_t": np.asarray(ratios, dtype=float), **out}


# -- delay and coverage (sections 4.1, 4.2) ---------------------------------------------------


def full_coverage_window(t: float, ts: float) -> float:
    """Base A labels every port with traffic within T + Ts of any instant (section 4.1)."""
    return t + ts


_erfc = np.vectorize(math.erfc, otypes=[float])


def coverage_probability(
    t: ArrayLike, tp: ArrayLike, ti: ArrayLike, sigma: ArrayLike
) -> np.ndarray | float:
    """P_t = 1 - Phi((T + Tp - Ti) / (sqrt(2) sigma)) (section 4.2); broadcasts arrays.

    The gap between two updates of a port is T + Tp + T_t2 - T_t1 with T_t ~ N(mu, sigma^2),
    so T_t1 - T_t2 ~ N(0, 2 sigma^2). Written as erfc(z / sqrt 2) / 2 to keep the tail exact.
    """
    sigma = np.asarray(sigma, dtype=float)
    if np.any(sigma <= 0.0):
        raise InvalidValueError("sigma must be positive")
    z = (np.asarray(t, dtype=float) + np.asarray(tp, dtype=float) - np.asarray(ti, dtype=float))
    z = z / (math.sqrt(2.0) * sigma)
    out = 0.5 * _erfc(z / math.sqrt(2.0))
    return float(out) if out.ndim == 0 else out


# -- Monte Carlo of per-port labeling ---------------------------------------------------------


def total_variation(p: Sequence[float], q: Sequence[float]) -> float:
    """Total variation distance, half the L1 distance between two distributions."""
    a, b = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    n = max(len(a), len(b))
    a, b = np.pad(a, (0, n - len(a))), np.pad(b, (0, n - len(b)))
    return 0.5 * float(np.abs(a - b).sum())


def _run_port(
    items: np.ndarray, period: int, table: np.ndarray, weighted: bool,
    rng: np.random.Generator,
) -> np.ndarray:
    """Label decisions of one egress port for packets arriving every Ts, in stream order.

    Time counts in units of Ts; ``since`` is CT - LT of the arriving packet. The interval
    rule fires once ``since`` reaches m = T/Ts (Algo 1 line 10 with T = m Ts on a clock
    that ticks once per Ts); otherwise the packet is labeled with probability f(INT_num),
    times (CT - LT)/T for F3 (Algo 2). The first packet finds a uniform phase.
    """
    n = len(items)
    draws = rng.random(n).tolist()
    probs = table[np.minimum(items, len(table) - 1)].tolist()
    out = bytearray(n)
    since = int(rng.integers(1, period + 1))
    if weighted:
        scale = 1.0 / period
        for j in range(n):
            if since >= period or draws[j] < probs[j] * since * scale:
                out[j] = 1
                since = 1
            else:
                since += 1
    else:
        for j in range(n):
            if since >= period or draws[j] < probs[j]:
                out[j] = 1
                since = 1
            else:
                since += 1
    return np.frombuffer(bytes(out), dtype=np.uint8).astype(np.int64)


def monte_carlo_labels(
    k: int, period: int, f: ProbFn | None = None, *, packets: int = 100_000,
    layout: str = "layered", seed: int = 0,
) -> np.ndarray:
    """Empirical P(Z = s), s = 0..5, of packets crossing a fat-tree (Base A if f is None).

    Each packet draws a path length from P(H); each port of ``layout`` is one egress port
    with deterministic spacing Ts, ``period`` = T/Ts packets per labeling interval and its
    own LT, whose stream is a random interleaving of the packets crossing it (a port merges
    many flows). Ports run in path order so every packet reaches a port with the items its
    earlier hops wrote. Seeded by ``seed`` (numpy PCG64).
    """
    if period < 1:
        raise InvalidValueError("period (T/Ts) must be a positive integer")
    rng = np.random.default_rng(seed)
    weights = hop_distribution(k)
    counts = rng.multinomial(packets, [weights[h] for h in PATH_HOPS])
    items = {h: np.zeros(int(n), dtype=np.int64) for h, n in zip(PATH_HOPS, counts)}
    if f is None:
        table, weighted = np.zeros(MAX_HOP + 1), False
    else:
        weighted = bool(getattr(f, "elapsed_weighted", False))
        table = np.array([f(i, 1.0) if weighted else f(i) for i in range(MAX_HOP + 1)])
    for _name, members in LAYOUTS[layout]:
        parts = [items[h] for h, _pos in members]
        stream = np.concatenate(parts)
        order = rng.permutation(len(stream))
        labeled = np.empty_like(stream)
        labeled[order] = _run_port(stream[order], period, table, weighted, rng)
        stream = stream + labeled
        bounds = np.cumsum([len(p) for p in parts])[:-1]
        for (h, _pos), part in zip(members, np.split(stream, bounds)):
            items[h] = part
    everything = np.concatenate([items[h] for h in PATH_HOPS])
    return np.bincount(everything, minlength=MAX_HOP + 1)[: MAX_HOP + 1] / packets
