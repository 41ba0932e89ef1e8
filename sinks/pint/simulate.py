"""Monte Carlo of path tracing: many flows, each on its own random path,
encoded by the switches' rules and decoded by the sink's, counting the
packets each flow needed. Packet ids are those of real headers: one
5-tuple per flow, consecutive IPv4 identifications from a random start."""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from .hashing import GlobalHashes, packet_ids
from .pathtrace import PathCoding, trace_paths
from .peeling import peel

__all__ = ["TracedFlows", "flow_packet_ids", "packets_to_decode", "trace_flows"]


def flow_packet_ids(rng: np.random.Generator, flows: int, packets: int) -> np.ndarray:
    """``(flows, packets)`` ids: random 5-tuples, consecutive IP ids."""
    src = rng.integers(0, 2**32, size=(flows, 1), dtype=np.uint64)
    dst = rng.integers(0, 2**32, size=(flows, 1), dtype=np.uint64)
    sport = rng.integers(1024, 65536, size=(flows, 1), dtype=np.uint64)
    dport = rng.integers(1, 1024, size=(flows, 1), dtype=np.uint64)
    start = rng.integers(0, 65536, size=(flows, 1), dtype=np.uint64)
    ip_id = (start + np.arange(packets, dtype=np.uint64)) & np.uint64(0xFFFF)
    return packet_ids(src, dst, 6, sport, dport, ip_id)


@numba.njit(cache=True)
def _decode_all(masks, frags, digests, hops, fragments, max_pending):
    out = np.empty(masks.shape[0], dtype=np.int64)
    for row in range(masks.shape[0]):
        result = peel(masks[row], frags[row], digests[row], hops, fragments, max_pending, True)
        out[row] = result[3]
    return out


@dataclass(frozen=True)
class TracedFlows:
    """``flows`` flows' packets as the sink sees them: per flow and packet
    the writers' mask, the fragment and the digest."""

    coding: PathCoding
    hops: int
    masks: np.ndarray
    frags: np.ndarray
    digests: np.ndarray

    def packets_to_decode(self, max_pending: int | None = None) -> np.ndarray:
        """Packets each flow needed (-1 where its packets were not enough)."""
        return _decode_all(self.masks, self.frags, self.digests, self.hops,
                           self.coding.fragments, -1 if max_pending is None else max_pending)


def trace_flows(coding: PathCoding, hops: int, flows: int, packets: int, seed: int
                ) -> TracedFlows:
    """``flows`` flows of ``packets`` packets, each on its own random
    ``hops``-hop path, through the switches."""
    rng = np.random.default_rng(seed)
    hashes = GlobalHashes(seed, "path")
    pids = flow_packet_ids(rng, flows, packets).ravel()
    paths = rng.integers(0, 2**coding.value_bits, size=(flows, hops), dtype=np.uint64)
    rows = np.repeat(np.arange(flows), packets)
    digests, masks, frags = trace_paths(coding, hashes, pids, paths, rows)
    shape = (flows, packets)
    return TracedFlows(coding, hops, masks.reshape(shape), frags.reshape(shape),
                       digests.reshape(shape))


def packets_to_decode(
    coding: PathCoding,
    hops: int,
    flows: int,
    packets: int,
    seed: int,
    max_pending: int | None = None,
) -> np.ndarray:
    """Packets each of ``flows`` flows needed to decode a ``hops``-hop path
    (-1 where ``packets`` were not enough)."""
    return trace_flows(coding, hops, flows, packets, seed).packets_to_decode(max_pending)
