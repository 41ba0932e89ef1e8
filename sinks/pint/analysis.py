"""Expected packets to decode a k-hop path, per path-tracing scheme.

Online decoding (no waiting packets kept, ``max_pending = 0``) is a Markov
chain on the number ``j`` of known hops of one fragment: the next packet
teaches a new hop exactly when one unknown hop wrote it, with probability

    P_j = tau * (k - j) / k  +  (1 - tau) * (k - j) * p * (1 - p)^(k - j - 1)

(a Baseline packet's writer is uniform over the k hops; in an XOR packet
each hop joins independently with probability p and the known ones are
XORed out). With one fragment the expected packet count is
``sum_j 1 / P_j``; for ``tau = 1`` that is the coupon collector's
``k * H_k``. With F fragments each packet serves one uniformly chosen
fragment; poissonising the arrivals makes the fragments independent, and
by Wald's identity the expected packet count equals the expected time of
the last fragment: ``E = integral_0^inf (1 - G(t)^F) dt`` with ``G`` the
distribution of one fragment's time (uniformised: ``G(t) = sum_n
Pois(n; t) D_n``, ``D_n`` the probability one fragment is done after n
packets of the flow). For the Baseline scheme this is again the coupon
collector over the k * F (hop, fragment) pairs, ``kF * H_kF``.

Keeping waiting packets (the default decoder) can only help: every
packet online decoding uses, the stored decoder uses too, so the online
value is an upper bound for it. The paper (section 4.3) proves that the
Baseline needs k ln k (1 + o(1)) packets while the hybrid of Baseline and
XOR with ``p`` about ``ln ln k / ln k`` needs O(k ln ln k);
``tuned_hybrid`` picks the (tau, p) that minimise the online expectation
for a design path length.
"""

from __future__ import annotations

import math

import numpy as np

from common import samebits

__all__ = [
    "harmonic",
    "online_expected",
    "reservoir_expected",
    "step_probabilities",
    "tuned_hybrid",
]


def harmonic(n: int) -> float:
    return float(np.sum(1.0 / np.arange(1, n + 1))) if n > 0 else 0.0


def reservoir_expected(k: int, fragments: int = 1) -> float:
    """Coupon collector over k * F equally likely (hop, fragment) pairs."""
    n = k * fragments
    return n * harmonic(n)


def step_probabilities(k: int, tau: float, p: float) -> np.ndarray:
    """P_j for j = 0..k-1 known hops (see the module docstring)."""
    unknown = k - np.arange(k, dtype=np.float64)
    xor = unknown * p * samebits.power(1.0 - p, unknown - 1.0)
    return tau * unknown / k + (1.0 - tau) * xor


def _one_fragment_cdf(probs: np.ndarray, n_max: int) -> np.ndarray:
    """D_c for c = 0..n_max: one fragment done after c of its own packets."""
    k = probs.shape[0]
    state = np.zeros(k + 1)
    state[0] = 1.0
    done = np.empty(n_max + 1)
    done[0] = state[k]
    stay = 1.0 - np.append(probs, 0.0)
    move = np.append(probs, 0.0)
    for c in range(1, n_max + 1):
        nxt = state * stay
        nxt[1:] += state[:-1] * move[:-1]
        state = nxt
        done[c] = state[k]
    return done


def _fragment_time_cdf(done: np.ndarray, fragments: int, ts: np.ndarray) -> np.ndarray:
    """G(t): one fragment done by time t when its packets arrive at rate 1/F."""
    c = np.arange(done.shape[0], dtype=np.float64)
    log_fact = np.array([math.lgamma(i + 1.0) for i in range(done.shape[0])])
    mu = np.maximum(ts / fragments, 1e-300)[:, None]
    pmf = samebits.exp(c[None, :] * samebits.log(mu) - mu - log_fact[None, :])
    beyond = np.clip(1.0 - pmf.sum(axis=1), 0.0, 1.0)
    return samebits.dot(pmf, done) + beyond * done[-1]


def online_expected(k: int, tau: float, p: float, fragments: int = 1) -> float:
    """Expected packets for online decoding of a k-hop path (exact; with
    several fragments up to the integration's ~1e-6 relative error)."""
    probs = step_probabilities(k, tau, p)
    if np.any(probs <= 0.0):
        return math.inf
    mean_one = float(np.sum(1.0 / probs))
    if fragments == 1:
        return mean_one
    own = int(mean_one * 6) + 64
    done = _one_fragment_cdf(probs, own)
    while done[-1] < 1.0 - 1e-13:
        own *= 2
        done = _one_fragment_cdf(probs, own)
    t_max = fragments * own * 1.5
    ts = np.linspace(0.0, t_max, 2001)
    tail = 1.0 - samebits.power(_fragment_time_cdf(done, fragments, ts), fragments)
    dt = ts[1] - ts[0]
    weights = np.ones(ts.shape[0])
    weights[1:-1:2], weights[2:-1:2] = 4.0, 2.0
    return float(np.sum(weights * tail) * dt / 3.0)


def tuned_hybrid(k: int, fragments: int = 1) -> tuple[float, float]:
    """(tau, p) minimising the online expectation for design length ``k``."""
    best = (math.inf, 1.0, 0.0)
    for tau in np.linspace(0.0, 1.0, 41):
        for p in np.linspace(0.5 / k, min(1.0, 4.0 / k), 36) if k > 1 else [1.0]:
            e = online_expected(k, float(tau), float(p), 1)
            if e < best[0]:
                best = (e, float(tau), float(p))
    return best[1], best[2]
