"""From a load sweep to a switch profile (``dataplane.targets.sim.timing``).

The model is a single server (the switch's ingress thread) with a random
service time S, and a per-packet delay D that limits no rate (hand-offs
between threads; at low load, mostly waking the switch up). Three
measurements fix it:

* the **capacity** C: the delivered rate once the offered load is past
  what the switch serves (points that lose 5 % or more), so E[S] = 1 / C;
* the **latency at the lowest rate** L, where a packet waits for no other:
  L = D + S, so D is L shifted down by E[S] (its top 0.1 %, a
  scheduler's pauses of milliseconds, left out);
* the **spread of S**: S is gamma distributed with mean 1 / C, and its
  coefficient of variation is the one (of a grid from 0, constant, to 3)
  whose replay of the loaded points (offered load between 20 % and 98 %
  of C) comes closest to their measured median and 90th percentile.

The replay runs each point's measured send times through the model
(Lindley's recursion, the input buffer's limit included); its latency
quantiles and loss are written beside the measured ones, so a reader sees
where the model holds. A sweep that never saturates gives no capacity:
the profile then says so and takes the highest delivered rate as C (a
lower bound on the switch, an upper bound on its service time).
"""

from __future__ import annotations

import math
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from common.host import cores, cpu_model
from dataplane.targets.sim.timing import quantile_mean
from orchestration.calibrate.sweep import Point

SATURATED_LOSS = 0.05
QUANTILES = 41
TOP_TRIM = 0.999
INPUT_DEPTH = 1024
CV_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
LOADED = (0.2, 0.98)


def capacity_pps(points: Sequence[Point]) -> float | None:
    """The delivered rate of the saturated points (their best), or None."""
    saturated = [p.delivered_pps for p in points if p.loss >= SATURATED_LOSS]
    return max(saturated) if saturated else None


def gamma_quantiles(mean_ns: float, cv: float, n: int = QUANTILES, seed: int = 0) -> np.ndarray:
    """Quantiles of a gamma distribution of ``mean_ns`` and coefficient of
    variation ``cv`` (0: the constant), from a large fixed-seed sample."""
    probs = np.linspace(0.0, 1.0, n)
    if cv <= 0:
        return np.full(n, mean_ns)
    shape = 1.0 / (cv * cv)
    sample = np.random.default_rng(seed).gamma(shape, mean_ns / shape, 400_000)
    q = np.quantile(sample, np.minimum(probs, TOP_TRIM))
    return np.maximum(q * (mean_ns / quantile_mean(q.tolist())), 1.0)


def fit(points: Sequence[Point]) -> dict[str, Any]:
    """The profile's numbers (service and delay quantiles) and how they
    were found."""
    if not points:
        raise ValueError("a fit needs at least one measured rate")
    low = min(points, key=lambda p: p.rate_pps)
    lat = low.latency_ns[low.delivered].astype(np.float64)
    if len(lat) < 100:
        raise ValueError(f"the lowest rate ({low.rate_pps:g} pps) delivered {len(lat)} "
                         "frames; a fit needs 100 or more")
    cap = capacity_pps(points)
    measured = cap is not None
    if cap is None:
        cap = max(p.delivered_pps for p in points)
    mean_s = 1e9 / cap
    probs = np.linspace(0.0, 1.0, QUANTILES)
    delay = np.maximum(np.quantile(lat, np.minimum(probs, TOP_TRIM)) - mean_s, 0.0)
    delay = np.maximum.accumulate(delay)
    loaded = [p for p in points
              if LOADED[0] <= p.offered_pps / cap < LOADED[1] and p.loss < SATURATED_LOSS
              and p.delivered.sum() >= 100]
    errors: dict[float, float] = {}
    for cv in CV_GRID if loaded else ():
        q = gamma_quantiles(mean_s, cv)
        err = 0.0
        for i, p in enumerate(loaded):
            model, _ = replay(p, q, delay, seed=i)
            meas = p.latency_ns[p.delivered]
            for pct in (50, 90):
                err += math.log(np.percentile(model, pct) / np.percentile(meas, pct)) ** 2
        errors[cv] = err
    cv = min(errors, key=errors.__getitem__) if errors else 1.0
    return {"service_quantiles_ns": [float(v) for v in gamma_quantiles(mean_s, cv)],
            "delay_quantiles_ns": [float(v) for v in delay], "capacity_pps": float(cap),
            "capacity_measured": measured, "service_cv": cv,
            "service_cv_fitted_on": [float(p.rate_pps) for p in loaded],
            "low_rate_pps": float(low.rate_pps)}


def replay(point: Point, service_ns: Sequence[float], delay_ns: Sequence[float], *,
           seed: int = 0, depth: int = INPUT_DEPTH) -> tuple[np.ndarray, float]:
    """The model's latencies (ns, delivered frames) and loss for the send
    times of ``point``: FIFO service, tail drop past ``depth`` waiting,
    then the per-packet delay."""
    rng = np.random.default_rng(seed)
    n = len(point.tx_ns)
    grid = np.linspace(0, 1, len(service_ns))
    service = np.interp(rng.random(n), grid, np.asarray(service_ns, dtype=np.float64))
    extra = np.interp(rng.random(n), np.linspace(0, 1, len(delay_ns)),
                      np.asarray(delay_ns, dtype=np.float64))
    arrivals = point.tx_ns.astype(np.float64).tolist()
    done: list[float] = []  # departure times of the packets taken in
    out = np.full(n, -1.0)
    free_at = 0.0
    head = 0
    for i, t in enumerate(arrivals):
        while head < len(done) and done[head] <= t:
            head += 1
        if len(done) - head > depth:
            continue
        start = t if t > free_at else free_at
        free_at = start + service[i]
        done.append(free_at)
        out[i] = free_at - t + extra[i]
    kept = out[out >= 0]
    return kept, 1.0 - len(kept) / n if n else 0.0


def check(points: Sequence[Point], service_ns: Sequence[float], delay_ns: Sequence[float]
          ) -> list[dict[str, float]]:
    """Measured against modelled, per rate (latencies in microseconds)."""
    rows = []
    for i, p in enumerate(sorted(points, key=lambda p: p.rate_pps)):
        model, model_loss = replay(p, service_ns, delay_ns, seed=i)
        meas = p.latency_ns[p.delivered] / 1000.0
        row = {"rate_pps": round(float(p.rate_pps), 1),
               "offered_pps": round(float(p.offered_pps), 1),
               "loss": round(float(p.loss), 5), "model_loss": round(float(model_loss), 5)}
        for pct in (50, 90, 99):
            row[f"p{pct}_us"] = round(float(np.percentile(meas, pct)), 2) if len(meas) else -1.0
            row[f"model_p{pct}_us"] = (round(float(np.percentile(model, pct)) / 1000, 2)
                                       if len(model) else -1.0)
        rows.append(row)
    return rows


def machine() -> dict[str, Any]:
    """What the measurement ran on."""
    return {"cpu": cpu_model(), "cores": cores(), "kernel": platform.release(),
            "date": time.strftime("%Y-%m-%d")}


def profile(name: str, points: Sequence[Point], *, command: Sequence[str],
            invocation: str, raw: str | None, program: str) -> dict[str, Any]:
    """The YAML document of a fitted profile."""
    numbers = fit(points)
    service = numbers["service_quantiles_ns"]
    delay = numbers["delay_quantiles_ns"]
    source: dict[str, Any] = {
        "switch": " ".join(command), "program": program, "machine": machine(),
        "commands": invocation,
        "capacity_pps": round(numbers["capacity_pps"], 1),
        "capacity": ("measured: delivered rate of the saturated points"
                     if numbers["capacity_measured"] else
                     "not reached by the sweep: the highest delivered rate, a lower bound"),
        "service_cv": numbers["service_cv"],
        "service_cv_fitted_on_pps": numbers["service_cv_fitted_on"],
        "delay_from_pps": numbers["low_rate_pps"],
    }
    if raw is not None:
        source["raw"] = raw
    return {"name": name, "service_quantiles_us": [round(v / 1000, 3) for v in service],
            "delay_quantiles_us": [round(v / 1000, 3) for v in delay],
            "input_depth": INPUT_DEPTH, "source": source, "fit": check(points, service, delay)}


def save_raw(path: Path, points: Sequence[Point]) -> None:
    """Every point's send times and latencies (compressed numpy archive)."""
    arrays: dict[str, np.ndarray] = {"rates_pps": np.asarray([p.rate_pps for p in points])}
    for i, p in enumerate(points):
        # Gaps between sends and latencies fit 32 bits (2 s): half the bytes.
        arrays[f"tx_gap_ns_{i}"] = np.diff(p.tx_ns, prepend=0).astype(np.int32)
        arrays[f"latency_ns_{i}"] = p.latency_ns.astype(np.int32)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)  # type: ignore[arg-type]


def load_raw(path: Path) -> list[Point]:
    with np.load(path) as data:
        rates = data["rates_pps"]
        return [Point(float(r), np.cumsum(data[f"tx_gap_ns_{i}"].astype(np.int64)),
                      data[f"latency_ns_{i}"].astype(np.int64))
                for i, r in enumerate(rates)]
