"""Synthetic INT traces after the paper's evaluation (section IV-A): 64-byte
packets carrying INT v2.0 over UDP from a given number of transit hops
(1-5) and instructions (1-4), with exponentially distributed values.

Flow sizes are heavy-tailed: every flow has one packet, and the rest are
spread over the flows in proportion to Pareto(shape ``alpha``) weights, so
a few flows carry most packets, as in Internet traces; the packets of all
flows are interleaved uniformly at random. Each flow keeps one path of
``hops`` switches drawn from ``switches``. Values are exponential with the
given means, rounded down and capped (queue occupancy 0-300, as the paper's).
INT is inserted after the original UDP header: destination port INT_PORT,
the original port in the shim (NPT 1), Hop ML one word per instruction.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from common.pcap import PcapWriter
from sinks.flowcache.ingest import INT_PORT

ORIGINAL_FRAME = 60
"""A 64-byte packet on the wire without its 4-byte FCS, as captured."""
ETH, IPV4, UDP = 14, 20, 8
SHIM_AT = ETH + IPV4 + UDP
MD_HEADER = 12
INSTRUCTION_BITS = (0x8000, 0x2000, 0x1000, 0x0100)
"""Instruction bitmap bits in the order instructions are added: switch id
(bit 0), hop latency (2), queue id + occupancy (3), egress tx utilization (7)."""
QUEUE_MAX = 300


@dataclass(frozen=True)
class TraceSpec:
    packets: int = 100_000
    flows: int = 1000
    hops: int = 5
    instructions: int = 4
    switches: int = 32
    alpha: float = 1.2
    latency_mean: float = 50.0
    queue_mean: float = 40.0
    util_mean: float = 30.0
    rate_pps: float = 10_000_000.0
    seed: int = 1


@dataclass(frozen=True)
class Trace:
    """Frames as equal-length rows, arrival times, and what was put in them:
    per packet its flow index, per flow its 5-tuple, per packet and hop
    (source first) switch id, hop latency, queue occupancy, tx utilization."""

    rows: np.ndarray
    ts: np.ndarray
    flow: np.ndarray
    tuples: np.ndarray
    values: np.ndarray
    spec: TraceSpec


def generate(spec: TraceSpec) -> Trace:
    if not 1 <= spec.instructions <= 4 or not 0 <= spec.hops <= 255 or spec.flows < 1 \
            or spec.packets < spec.flows:
        raise ValueError(f"bad trace spec {spec}")
    rng = np.random.default_rng(spec.seed)
    weights = rng.pareto(spec.alpha, spec.flows) + 1.0
    sizes = 1 + rng.multinomial(spec.packets - spec.flows, weights / weights.sum())
    flow = rng.permutation(np.repeat(np.arange(spec.flows), sizes))
    tuples = np.stack([0x0A000000 + rng.integers(1, 1 << 24, spec.flows),
                       0x0A000000 + rng.integers(1, 1 << 24, spec.flows),
                       np.full(spec.flows, 17), rng.integers(1024, 65536, spec.flows),
                       rng.integers(1, 65536, spec.flows)], axis=1).astype(np.uint64)
    paths = rng.integers(1, spec.switches + 1, (spec.flows, max(spec.hops, 1)))
    n, h = spec.packets, spec.hops
    values = np.zeros((n, h, 4), np.uint32)
    values[:, :, 0] = paths[flow, :h]
    values[:, :, 1] = np.minimum(rng.exponential(spec.latency_mean, (n, h)), 2**32 - 1)
    values[:, :, 2] = np.minimum(rng.exponential(spec.queue_mean, (n, h)), QUEUE_MAX)
    values[:, :, 3] = np.minimum(rng.exponential(spec.util_mean, (n, h)), 2**32 - 1)
    ts = (np.arange(n) * (1e9 / spec.rate_pps)).astype(np.int64)
    rows = _frames(spec, tuples[flow], values)
    return Trace(rows, ts, flow, tuples, values, spec)


def _put(rows: np.ndarray, at: int, size: int, values: np.ndarray | int) -> None:
    """Big-endian ``values`` into bytes [at, at + size) of every row."""
    values = np.asarray(values, np.uint64)
    for b in range(size):
        rows[:, at + size - 1 - b] = (values >> np.uint64(8 * b)) & np.uint64(0xFF)


def _frames(spec: TraceSpec, tuples: np.ndarray, values: np.ndarray) -> np.ndarray:
    words = spec.instructions
    int_bytes = 4 + MD_HEADER + 4 * words * spec.hops
    length = ORIGINAL_FRAME + int_bytes
    rows = np.zeros((len(tuples), length), np.uint8)
    rows[:, 12:14] = (0x08, 0x00)
    rows[:, ETH] = 0x45
    _put(rows, ETH + 2, 2, length - ETH)
    rows[:, ETH + 8] = 64
    rows[:, ETH + 9] = 17
    _put(rows, ETH + 12, 4, tuples[:, 0])
    _put(rows, ETH + 16, 4, tuples[:, 1])
    _put(rows, ETH + 10, 2, _ip_checksums(rows[:, ETH:ETH + IPV4]))
    u = ETH + IPV4
    _put(rows, u, 2, tuples[:, 3])
    _put(rows, u + 2, 2, INT_PORT)
    _put(rows, u + 4, 2, length - u)  # UDP checksum left 0 (none), as IPv4 allows
    rows[:, SHIM_AT] = (1 << 4) | (1 << 2)  # Type 1 (INT-MD), NPT 1
    rows[:, SHIM_AT + 1] = (MD_HEADER + 4 * words * spec.hops) // 4
    _put(rows, SHIM_AT + 2, 2, tuples[:, 4])  # the original destination port
    md = SHIM_AT + 4
    rows[:, md] = 2 << 4  # Ver 2
    _put(rows, md + 1, 3, (words << 8) | max(0, 64 - spec.hops))  # Hop ML, Remaining Hop Count
    _put(rows, md + 4, 2, sum(INSTRUCTION_BITS[:words]))
    stack = md + MD_HEADER
    for k in range(spec.hops):  # the wire has the newest (last) hop first
        hop = spec.hops - 1 - k
        for w in range(words):
            _put(rows, stack + 4 * (k * words + w), 4, values[:, hop, w])
    return rows


def _ip_checksums(headers: np.ndarray) -> np.ndarray:
    words = headers.astype(np.uint32)
    total = (words[:, 0::2] << 8 | words[:, 1::2]).sum(axis=1)
    while (total >> 16).any():
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def write_pcap(path: str | Path, trace: Trace) -> None:
    """The trace as a nanosecond pcap of Ethernet frames."""
    with PcapWriter(path, nanosecond=True) as out:
        for row, t in zip(trace.rows, trace.ts.tolist()):
            out.write(row.tobytes(), t)
