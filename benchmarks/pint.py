"""PINT's speed on one core: what the experiments and a sink's recording
module do per packet.

Cases, each timed by CPU (``time.process_time``) and wall clock after one
warm-up call (numba compiles, caches fill):

* ``hop_words``: global hash words (CRC-32 of the id, hop byte, finaliser);
* ``encode``: the switches' walk over a 36-hop path (hybrid, 8-bit budget,
  4 fragments): digests, writers' masks and fragments;
* ``decode``: the peeling decoder over flows of 5,000 packets each;
* ``ingest``: whole 16-bit digests of three queries (path, per-packet max,
  latency samples) into the recording module, path decoding included;
* ``kll``: latency samples into per-(flow, hop) KLL sketches.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from sinks.pint.dynamic import LatencySketches, encode_samples
from sinks.pint.engine import Aggregation, Query, plan_queries
from sinks.pint.hashing import GlobalHashes
from sinks.pint.pathtrace import PathCoding, trace_paths
from sinks.pint.peeling import peel
from sinks.pint.recorder import Recorder
from sinks.pint.simulate import flow_packet_ids
from sinks.pint.values import ValueCodec, max_aggregate

HOPS = 36
FLOW_PACKETS = 5000


def _timed(fn: Callable[[], Any], items: int) -> dict[str, Any]:
    fn()  # warm-up: numba compilation and caches
    cpu0, wall0 = time.process_time(), time.perf_counter()
    fn()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {"items": items, "cpu_s": round(cpu, 6), "wall_s": round(wall, 6),
            "per_s_cpu": round(items / cpu) if cpu > 0 else None,
            "per_s_wall": round(items / wall) if wall > 0 else None}


def run_pint_benchmarks(packets: int = 1_000_000, seed: int = 0) -> dict[str, Any]:
    """Items per second of each case (see the module docstring)."""
    rng = np.random.default_rng(seed)
    flows = max(1, packets // FLOW_PACKETS)
    n = flows * FLOW_PACKETS
    pids = flow_packet_ids(rng, flows, FLOW_PACKETS).ravel()
    paths = rng.integers(0, 2**32, size=(flows, HOPS), dtype=np.uint64)
    rows = np.repeat(np.arange(flows), FLOW_PACKETS)
    hashes = GlobalHashes(seed, "path")
    coding = PathCoding(8, 32, 0.5, 0.07)
    crcs = hashes.id_crcs(pids)
    report: dict[str, Any] = {"packets": n, "hops": HOPS, "flows": flows,
                              "coding": {"bits": coding.bits, "tau": coding.tau, "p": coding.p}}
    report["hop_words"] = _timed(lambda: hashes.hop_word_from(crcs, "hop", 7), n)
    report["encode"] = _timed(lambda: trace_paths(coding, hashes, pids, paths, rows), n)
    digests, masks, frags = trace_paths(coding, hashes, pids, paths, rows)

    def decode() -> None:
        for f in range(flows):
            part = slice(f * FLOW_PACKETS, (f + 1) * FLOW_PACKETS)
            peel(masks[part], frags[part], digests[part], HOPS, coding.fragments, -1, False)

    report["decode"] = _timed(decode, n)
    report["ingest"] = _ingest_case(rng, pids, rows, paths, coding, seed)
    values = rng.lognormal(3.0, 1.0, size=n)
    hop_of = rng.integers(1, HOPS + 1, size=n)

    def sketch() -> None:
        LatencySketches(200).update(rows, hop_of, values)

    report["kll"] = _timed(sketch, n)
    return report


def _ingest_case(rng: np.random.Generator, pids: np.ndarray, rows: np.ndarray,
                 paths: np.ndarray, coding: PathCoding, seed: int) -> dict[str, Any]:
    queries = [Query("path", "switch_id", Aggregation.STATIC_PER_FLOW, 8),
               Query("util", "utilisation", Aggregation.PER_PACKET, 8, 0.5),
               Query("lat", "latency", Aggregation.DYNAMIC_PER_FLOW, 8, 0.5)]
    codec = ValueCodec(8, 1.0, 1e6)
    plan = plan_queries(queries, 16)
    make = lambda: Recorder(plan, seed, {"path": coding}, {"util": codec, "lat": codec})  # noqa: E731
    recorder = make()
    values = rng.uniform(1.0, 1e5, size=(HOPS, pids.shape[0]))
    fields = {
        "path": trace_paths(coding, recorder.hashes("path"), pids, paths, rows)[0],
        "util": max_aggregate(pids, values, codec, recorder.hashes("util"))[0],
        "lat": encode_samples(pids, values, codec, recorder.hashes("lat")),
    }
    digests = plan.compose(plan.set_ids(recorder.selector.packet_word(pids, "query")), fields)
    hops = np.full(pids.shape[0], HOPS)

    def ingest() -> None:
        fresh = make()
        for lo in range(0, pids.shape[0], 65536):
            part = slice(lo, lo + 65536)
            fresh.ingest(rows[part], pids[part], hops[part], digests[part])
        fresh.paths("path")

    return _timed(ingest, pids.shape[0])
