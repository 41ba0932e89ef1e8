"""Flow cache speed: packets/s through H_P on one core and over worker
processes that each own a shard of it, beside the targets.

The trace follows the paper's evaluation: 64-byte packets with INT v2.0
over UDP from 5 hops with 4 instructions each (switch id, hop latency,
queue occupancy, tx utilization), exponential values, heavy-tailed flow
sizes over 100,000 flows, all of which are active (each sends at least one
packet); H_P has 2^19 rows x 12 buckets, 8 + 8 rings of 64K entries.
Thresholds make some events (queue occupancy above 150, hop latency
changes above 200) so the event path is exercised.

Each case runs the trace once to warm up (every flow gets its bucket and
its memory is touched) and is then timed on a second pass, in arrival
order, ``batch`` packets per call, the rings drained after every call.
Parsing (the collector's batch parser) is timed on its own; the cases
time the cache. With workers, the dispatcher cuts the trace by shard
ahead of time (a NIC's receive-side scaling would; that cut is timed on
its own too) and places each shard's packets in shared memory; the rate
is all packets over the time from the first worker's start to the last
one's end. The machine is shared: the load average is reported with
the numbers, and beside the wall-clock rates, rates per CPU second
(``packets_per_cpu_s``; for workers the sum of each worker's packets over
its CPU time, ``packets_per_s_cpu_sum``), which other processes' use of
the cores does not lower; ``cpu_scaling`` is their ratio, the scaling the
workers would show with a core each to themselves.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import Any

from sinks.flowcache.cache import FlowCache, PacketBatch
from sinks.flowcache.config import FlowCacheConfig
from sinks.flowcache.ingest import rows_to_batch
from sinks.flowcache.shards import ShardWorkers, SharedBatch, split
from sinks.flowcache.trace import TraceSpec, generate

TARGET = {"one_core_packets_per_s": 1_000_000, "two_worker_scaling": 1.7}
FLOWS = 100_000
HOPS = 5
INSTRUCTIONS = 4
BATCH = 8192
THRESHOLDS = {"threshold": {"queue_occupancy": 150}, "change": {"hop_latency": 200}}


def bench_config() -> FlowCacheConfig:
    return FlowCacheConfig(max_hops=HOPS, thresholds=THRESHOLDS)


def _shifted(batch: PacketBatch, shift: int) -> PacketBatch:
    return replace(batch, ts=batch.ts + shift)


def one_core(batch: PacketBatch, piece: int = BATCH) -> dict[str, Any]:
    cache = FlowCache(bench_config())
    span = int(batch.ts[-1]) + 1
    for shift in (0, span):
        events = evictions = 0
        cpu, start = time.process_time(), time.perf_counter()
        for at in range(0, len(batch), piece):
            cache.process(_shifted(batch.take(slice(at, at + piece)), shift))
            events += len(cache.drain_events())
            evictions += len(cache.drain_evictions())
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    n = len(batch)
    return {"packets": n, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
            "packets_per_s": round(n / wall), "packets_per_cpu_s": round(n / cpu),
            "events": events, "evictions": evictions, "counters": cache.counters}


def with_workers(batch: PacketBatch, workers: int, piece: int = BATCH) -> dict[str, Any]:
    start = time.perf_counter()
    pieces = split(batch, workers)
    split_s = time.perf_counter() - start
    shared = [SharedBatch.create(p) for p in pieces]
    span = int(batch.ts[-1]) + 1
    try:
        with ShardWorkers(bench_config(), workers) as pool:
            pool.run([s for s, _ in shared], piece)  # warm-up pass
            results = pool.run([s for s, _ in shared], piece, ts_shift=span)
    finally:
        for _, shm in shared:
            shm.close()
            shm.unlink()
    n = sum(r["packets"] for r in results)
    wall = max(r["end"] for r in results) - min(r["start"] for r in results)
    return {"workers": workers, "packets": n, "wall_s": round(wall, 3),
            "packets_per_s": round(n / wall),
            "packets_per_s_cpu_sum": round(sum(r["packets"] / r["cpu_s"] for r in results)),
            "per_worker": [{"packets": r["packets"], "wall_s": round(r["end"] - r["start"], 3),
                            "cpu_s": round(r["cpu_s"], 3), "events": r["events"]}
                           for r in results],
            "dispatch_split_s": round(split_s, 3),
            "dispatch_packets_per_s": round(len(batch) / split_s)}


def run_flowcache_benchmarks(packets: int = 2_000_000, workers: int = 2,
                             seed: int = 1) -> dict[str, Any]:
    spec = TraceSpec(packets=packets, flows=FLOWS, hops=HOPS, instructions=INSTRUCTIONS,
                     seed=seed)
    trace = generate(spec)
    rows_to_batch(trace.rows[:1000], trace.ts[:1000], HOPS)  # load the parser's compiled code
    start = time.perf_counter()
    batch = rows_to_batch(trace.rows, trace.ts, HOPS)
    parse_s = time.perf_counter() - start
    frame_bytes = int(trace.rows.shape[1])
    del trace
    single = one_core(batch)
    multi = with_workers(batch, workers)
    scaling = multi["packets_per_s"] / single["packets_per_s"]
    cpu_scaling = multi["packets_per_s_cpu_sum"] / single["packets_per_cpu_s"]
    return {
        "trace": {"packets": packets, "flows": FLOWS, "hops": HOPS,
                  "instructions": INSTRUCTIONS, "frame_bytes": frame_bytes, "batch": BATCH},
        "table": {"rows": bench_config().rows, "buckets": bench_config().buckets,
                  "rings": bench_config().rings, "ring_entries": bench_config().ring_entries},
        "parse": {"seconds": round(parse_s, 3), "packets_per_s": round(packets / parse_s)},
        "one_core": single,
        "workers": multi,
        "scaling": round(scaling, 2),
        "cpu_scaling": round(cpu_scaling, 2),
        "target": TARGET,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
    }


def report_lines(r: dict[str, Any]) -> list[str]:
    """The report as lines of text, targets beside the measurements."""
    t, one, multi, target = r["trace"], r["one_core"], r["workers"], r["target"]
    n = multi["workers"]
    met = {True: "met", False: "NOT met"}
    return [
        f"trace: {t['packets']:,} packets of {t['frame_bytes']} B, {t['flows']:,} flows, "
        f"{t['hops']} hops x {t['instructions']} instructions; table {r['table']['rows']:,} x "
        f"{r['table']['buckets']}, batches of {t['batch']:,}",
        f"parse (collector batch parser): {r['parse']['packets_per_s']:,} packets/s",
        f"one core: {one['packets_per_s']:,} packets/s wall, {one['packets_per_cpu_s']:,} per "
        f"CPU second; target {target['one_core_packets_per_s']:,}: "
        f"{met[one['packets_per_s'] >= target['one_core_packets_per_s']]} (wall), "
        f"{met[one['packets_per_cpu_s'] >= target['one_core_packets_per_s']]} (CPU)",
        f"{n} workers: {multi['packets_per_s']:,} packets/s wall, "
        f"{multi['packets_per_s_cpu_sum']:,} summed per CPU second; dispatch cut "
        f"{multi['dispatch_packets_per_s']:,} packets/s",
        f"scaling {n} workers / one core: {r['scaling']} wall, {r['cpu_scaling']} CPU; "
        f"target {target['two_worker_scaling']} with 2 workers",
        f"events per pass {one['events']:,}; load average {r['load_average']} on {r['cpus']} "
        f"CPUs (other processes share them: wall rates fall with load, CPU rates do not)",
    ]
