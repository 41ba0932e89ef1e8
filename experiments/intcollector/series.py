"""Fig. 9's input: one switch's hop latency over time, and what the
collector's events keep of it.

The paper's series came from a real switch, which we do not have. The
series here is generated from a queue model, seeded, that has the three
kinds of change section III-D names as what event detection must catch or
ignore:

- **gradual change of load**: the egress link's utilisation u(t) is an
  Ornstein-Uhlenbeck process (mean 0.4, standard deviation 0.12, time
  constant 10 s, kept in [0.02, 0.9]); the mean queue is u / (1 - u)
  packets (M/M/1) and each queued packet adds 120 ns (1,500 bytes at
  100 Gb/s);
- **micro-bursts**: Poisson, 0.1 per second, each adding an exponentially
  distributed 100 ns (mean) that drains with a 0.5 s time constant;
- **small fluctuations**: Gaussian noise, 4 ns standard deviation.

On top of a 100 ns pipeline latency this gives values of 100-300 ns, the
range of the paper's example ("the last hop latency is 130, threshold is
40"), sampled at the paper's low report rate (10 reports/s).
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from common.clock import VirtualClock
from experiments.intcollector.reports import ReportWriter, random_flows
from sinks.intcollector.pipeline import Collector, CollectorConfig
from sinks.intcollector.reports import DEFAULT_SIGNAL
from sinks.intcollector.stores import SqliteStore

BASE_NS = 100.0
NS_PER_PACKET = 120.0  # 1,500 bytes at 100 Gb/s
MEAN_U, SD_U, TAU_S = 0.4, 0.12, 10.0
BURSTS_PER_S, BURST_NS, BURST_TAU_S = 0.1, 100.0, 0.5
NOISE_NS = 4.0


def latency_series(samples: int, rate_pps: float, rng: np.random.Generator) -> np.ndarray:
    """``samples`` hop latencies (integer ns), one every 1 / ``rate_pps`` s."""
    dt = 1.0 / rate_pps
    decay = math.exp(-dt / TAU_S)
    u = np.empty(samples)
    u[0] = MEAN_U
    shocks = rng.normal(0.0, SD_U * math.sqrt(1 - decay * decay), samples)
    for i in range(1, samples):
        u[i] = MEAN_U + (u[i - 1] - MEAN_U) * decay + shocks[i]
    u = np.clip(u, 0.02, 0.9)
    queue_ns = NS_PER_PACKET * u / (1 - u)
    kicks = (rng.random(samples) < BURSTS_PER_S * dt) * rng.exponential(BURST_NS, samples)
    burst = np.empty(samples)
    level, fade = 0.0, math.exp(-dt / BURST_TAU_S)
    for i in range(samples):
        level = level * fade + kicks[i]
        burst[i] = level
    noise = rng.normal(0.0, NOISE_NS, samples)
    return np.rint(BASE_NS + queue_ns + burst + noise).astype(np.int64)


@dataclass
class Detected:
    """What the store holds for the series: its points' sample indices and
    values, and the step function they make (the last stored value)."""

    indices: np.ndarray
    values: np.ndarray
    events: int
    reconstructed: np.ndarray


def detect(series: np.ndarray, rate_pps: float, threshold: float, seed: int = 0) -> Detected:
    """Send the series through the collector, one single-hop report per
    sample of one flow, with T(hop latency) = ``threshold``, into a SQLite
    store; read the hop latency series back. The periodic push is not run
    (the store keeps events only, which is what Fig. 9 plots)."""
    flows = random_flows(1, 1, 1, np.random.default_rng(seed))
    writer = ReportWriter(flows, instructions=3)
    rows = writer.rows(np.zeros(len(series), dtype=np.intp),
                       {"hop_latency": series[:, None]}, seq=np.arange(len(series)))
    times = np.arange(len(series)) / rate_pps
    config = CollectorConfig(thresholds={"flow_hop_latency": threshold,
                                         "flow_latency": threshold}, signal=DEFAULT_SIGNAL)
    with tempfile.TemporaryDirectory(prefix="intcollector-fig9-") as tmp:
        store = SqliteStore(Path(tmp) / "points.sqlite")
        try:
            collector = Collector(store, VirtualClock(), config)
            collector.feed_rows(rows, times)
            collector.step()
            events = int(collector.counters.events["flow_hop_latency"])
            (found,) = store.query("flow_hop_latency")
            points = found.points
        finally:
            store.close()
    at = np.array([t for t, _ in points], dtype=np.int64)
    indices = np.rint(at / 1e9 * rate_pps).astype(np.intp)
    values = np.array([v for _, v in points], dtype=np.int64)
    return Detected(indices, values, events, reconstruct(len(series), indices, values))


def reconstruct(samples: int, indices: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The series as the database knows it: at every sample the value of
    the last stored point at or before it."""
    last = np.searchsorted(indices, np.arange(samples), side="right") - 1
    if (last < 0).any():
        raise ValueError("the first sample has no stored point: a new key is always an event")
    return values[last]


def mse(real: np.ndarray, reconstructed: np.ndarray) -> float:
    """Mean squared error (ns^2) of the reconstructed series."""
    diff = real.astype(np.float64) - reconstructed
    return float(np.mean(diff * diff))
