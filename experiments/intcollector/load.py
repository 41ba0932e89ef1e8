"""The collector's CPU at a report rate, measured in a process of its own.

A child process (``python -m experiments.intcollector.load SPEC``) builds a
pool of reports for a ``Workload``, starts a ``Collector`` on the wall
clock (the normal path on its timer thread) with a store, feeds it once
unmeasured (new keys, compilation), then feeds the pool at the paced rate
for the measured window and stops the collector (its last flush counted).
Reports are fed the way ``UdpReceiver`` feeds them: a batch when
``DEFAULT_BATCH`` reports have arrived or ``DEFAULT_LINGER_S`` after the
first. CPU is the process's CPU time, ``time.process_time`` (every thread:
fast path, normal path, store), so other processes on the machine do not
count; CPU % is that time over the window. The socket receive is not part
of it: reports come from memory.

A run whose feeding fell behind its schedule by more than 5 % of the
window (or 0.5 s), or whose queue dropped values, could not keep up and is
marked ``saturated``. ``calibrate`` instead feeds as fast as it can, with
the normal path run after every batch, for reports per CPU second.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from common.paths import child_env
from common.wallclock import WallClock
from experiments.framework import ExperimentError
from experiments.intcollector.reports import ALL_INSTRUCTIONS, ReportWriter, random_flows
from sinks.intcollector.pipeline import Collector, CollectorConfig
from sinks.intcollector.receiver import DEFAULT_BATCH, DEFAULT_LINGER_S
from sinks.intcollector.stores import SqliteStore, Store, encode_lines

CONFIGS: dict[str, CollectorConfig] = {
    "detection": CollectorConfig(),
    "no-detection": CollectorConfig(event_detection=False),
    "per-report-push": CollectorConfig(event_detection=False, per_report_push=True),
}
"""The paper's INTCollector, INTCollector w/o event detection, and the
Prometheus INT exporter's manner (every report's values pushed at once)."""
STORES = ("sqlite", "lines")
QUIET = {"hop_latency": 500, "queue_id": 1, "queue_occupancy": 300, "congestion_queue_id": 1,
         "queue_congestion": 10, "egress_tx_util": 1000}
"""Steady per-hop values: reports carry new keys and no changes (section V-A)."""
TOGGLE = 200  # queue occupancy step of an event, four times the default threshold
POOL = 1024  # reports in a pool without events
WARM_UP = 64  # reports fed before measuring, at least one per flow
MAX_LAG = 0.05


@dataclass(frozen=True)
class Workload:
    """What the reports carry: hops, flows, INT v0.5 instruction bits
    0 .. instructions-1, and queue-occupancy changes per second (each a
    step of ``TOGGLE`` at one switch: one event)."""

    hops: int = 6
    flows: int = 1
    instructions: int = ALL_INSTRUCTIONS
    event_rate: float = 0.0
    switches: int = 100


@dataclass(frozen=True)
class LoadSpec:
    workload: Workload
    config: str
    rate: float  # reports/s; ignored by calibrate
    seconds: float
    store: str = "sqlite"
    calibrate: bool = False
    seed: int = 0


def pool(w: Workload, rate: float, seed: int) -> tuple[np.ndarray, float]:
    """Report rows to feed in a cycle, and the time one cycle stands for.

    Without events: ``POOL`` reports, flows in turn, steady values. With
    events: one second of reports at ``rate``; the changes fall at
    (j + 0.5) / event_rate, each one toggling one switch's queue
    occupancy, every toggled switch twice (so the cycle ends as it began
    and repeats without extra events)."""
    rng = np.random.default_rng(seed)
    flows = random_flows(w.flows, w.hops, w.switches, rng)
    writer = ReportWriter(flows, w.instructions)
    if w.event_rate <= 0:
        count = max(POOL, w.flows)
        cycle = count / rate if rate > 0 else 1.0
    else:
        count, cycle = max(int(round(rate)), 1), 1.0
    index = np.arange(count)
    flow = index % w.flows
    times = index / count * cycle
    values = {name: np.full((count, w.hops), v, dtype=np.int64) for name, v in QUIET.items()}
    ts = (index[:, None] * 1000 + np.arange(w.hops)[None, :] * 10_000) & 0xFFFFFFFF
    values["ingress_ts"], values["egress_ts"] = ts, ts + 500
    if w.event_rate > 0:
        values["queue_occupancy"] += TOGGLE * _toggled(flows.path[flow], times, w, rng)
    return writer.rows(flow, values, seq=index), cycle


def _toggled(switch: np.ndarray, times: np.ndarray, w: Workload,
             rng: np.random.Generator) -> np.ndarray:
    """1 where a (report, hop)'s switch is toggled at the report's time."""
    changes = 2 * max(1, int(round(w.event_rate / 2)))
    at = (np.arange(changes) + 0.5) / changes
    carried = rng.permutation(np.unique(switch))
    chosen = np.resize(carried, changes // 2)  # in turn: a switch's flips lie far apart
    which = np.concatenate([chosen, chosen])  # each chosen switch again half a cycle later
    out = np.zeros(switch.shape, dtype=np.int64)
    for s in np.unique(which):
        flips = np.sort(at[which == s])
        mask = switch == s
        out[mask] = (np.searchsorted(flips, np.broadcast_to(times[:, None], switch.shape)[mask],
                                     side="right") % 2)
    return out


class LineSink:
    """A store that encodes InfluxDB line protocol and sends it nowhere: the
    collector's side of writing to a database on another machine."""

    def __init__(self) -> None:
        self.bytes = 0

    def write(self, points: Sequence[Any]) -> None:
        self.bytes += len(encode_lines(points))

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


@contextmanager
def open_store(kind: str) -> Iterator[Store]:
    if kind == "lines":
        yield LineSink()
        return
    with tempfile.TemporaryDirectory(prefix="intcollector-load-") as tmp:
        store = SqliteStore(Path(tmp) / "points.sqlite")
        try:
            yield store
        finally:
            store.close()


def _cpu() -> float:
    """The process's CPU seconds, every thread: CLOCK_PROCESS_CPUTIME_ID has
    nanosecond resolution, where /proc's user and system times (psutil)
    count 10 ms ticks, up to 7 points of a 0.6 s window's CPU percentage."""
    return time.process_time()


def run(spec: LoadSpec) -> dict[str, Any]:
    """One measurement, in this process (the child)."""
    rows, cycle = pool(spec.workload, spec.rate, spec.seed)
    clock = WallClock()
    with open_store(spec.store) as store:
        collector = Collector(store, clock, CONFIGS[spec.config])
        try:
            collector.feed_rows(rows[:max(spec.workload.flows, WARM_UP)])  # every key once
            collector.step()
            before = sum(collector.counters.events.values())
            out = _calibrate(collector, rows, spec) if spec.calibrate else \
                _paced(collector, rows, spec)
        finally:
            clock.close()
    c = collector.counters
    events = sum(c.events.values())
    out.update(values=c.values, events=events, window_events=events - before,
               exported_points=c.exported_points,
               store_writes=c.store_writes, queue_drops=c.queue_drops,
               accepted=c.reports.accepted, cycle_s=cycle)
    return out


def _take(rows: np.ndarray, start: int, size: int) -> np.ndarray:
    """``size`` rows of the pool from ``start`` on, going round."""
    start %= len(rows)
    if start + size <= len(rows):
        return rows[start:start + size]
    return rows.take(np.arange(start, start + size) % len(rows), axis=0)


def _batches(rows: np.ndarray, size: int) -> Iterator[np.ndarray]:
    start = 0
    while True:
        yield _take(rows, start, size)
        start += size


def _calibrate(collector: Collector, rows: np.ndarray, spec: LoadSpec) -> dict[str, Any]:
    """Batches as large as the receiver's, smaller while one batch takes
    more than a twentieth of the time (a slow configuration is still
    measured over many batches)."""
    feed, step, now = collector.feed_rows, collector.step, time.perf_counter
    size, fed = WARM_UP, 0
    cpu0, t0 = _cpu(), now()
    while now() - t0 < spec.seconds:
        began = now()
        feed(_take(rows, fed, size))
        step()
        fed += size
        if size < DEFAULT_BATCH and now() - began < spec.seconds / 20:
            size = min(DEFAULT_BATCH, 2 * size)
    cpu = _cpu() - cpu0
    return {"reports": fed, "cpu_s": cpu, "reports_per_cpu_s": fed / max(cpu, 1e-9),
            "batch": size}


def _paced(collector: Collector, rows: np.ndarray, spec: LoadSpec) -> dict[str, Any]:
    size = max(1, min(DEFAULT_BATCH, int(round(spec.rate * DEFAULT_LINGER_S))))
    interval = size / spec.rate
    count = max(1, int(round(spec.seconds / interval)))
    batches = _batches(rows, size)
    feed, sleep, now = collector.feed_rows, time.sleep, time.perf_counter
    collector.start()
    cpu0, t0 = _cpu(), now()
    lag = 0.0
    for k in range(1, count + 1):
        due = t0 + k * interval
        wait = due - now()
        if wait > 0:
            sleep(wait)
        else:
            lag = max(lag, -wait)
        feed(next(batches))
    window = count * interval
    collector.stop()
    cpu = _cpu() - cpu0
    late = lag > max(0.5, MAX_LAG * window) or collector.counters.queue_drops > 0
    return {"reports": count * size, "batch": size, "window_s": window, "cpu_s": cpu,
            "load_average": os.getloadavg()[0],
            "cpu_percent": 100.0 * cpu / window, "max_lag_s": lag, "saturated": late}


@dataclass(frozen=True)
class Job:
    """Measurements run one after the other in one child process: ``specs``,
    or, with ``loads``, a calibration of ``specs[0]`` (its ``seconds`` from
    ``calibrate_s``) followed by ``specs[0]`` at each load times the
    calibrated capacity. One process per job keeps the startup (imports,
    compiled loops) out of every point; each point has its own collector and
    store, and its CPU is the process's CPU during its own window."""

    specs: tuple[LoadSpec, ...]
    loads: tuple[float, ...] = ()
    calibrate_s: float = 0.0

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_json(text: str) -> Job:
        data = json.loads(text)
        specs = tuple(LoadSpec(**{**s, "workload": Workload(**s["workload"])})
                      for s in data["specs"])
        return Job(specs, tuple(data["loads"]), data["calibrate_s"])


def run_job(job: Job) -> dict[str, Any]:
    """A job, in this process (the child)."""
    if not job.loads:
        return {"runs": [{"rate": s.rate, **run(s)} for s in job.specs]}
    base = job.specs[0]
    cal = run(replace(base, seconds=job.calibrate_s, calibrate=True))
    capacity = cal["reports_per_cpu_s"]
    runs = [{"rate": round(load * capacity, 1), "load": load,
             **run(replace(base, rate=round(load * capacity, 1)))} for load in job.loads]
    return {"calibration": cal, "runs": runs}


def measure(job: Job) -> dict[str, Any]:
    """``run_job`` in a fresh child process: its CPU is the collector's alone."""
    what = f"collector load run ({', '.join(sorted({s.config for s in job.specs}))})"
    seconds = job.calibrate_s + sum(s.seconds for s in job.specs) * max(1, len(job.loads))
    cmd = [sys.executable, "-m", "experiments.intcollector.load", job.to_json()]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=child_env(),
                              timeout=300 + 3 * seconds)
    except subprocess.TimeoutExpired:
        raise ExperimentError(f"{what} did not finish in time; lower the rates or "
                              "'seconds'") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise ExperimentError(f"{what} failed: {last}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    print(json.dumps(run_job(Job.from_json(sys.argv[1]))))
