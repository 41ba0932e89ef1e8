"""Static per-flow aggregation (path tracing): what switches write, and what
the sink can recompute about it.

Each hop ``i`` (1-based, from the TTL) of a packet owns the value
``v_i`` (its switch id, ``value_bits`` wide). The query has ``bits`` digest
bits; an id wider than that is cut into ``F = ceil(value_bits / bits)``
fragments and a packet-wide hash picks which fragment every hop of that
packet uses, so the sink learns each (hop, fragment) pair separately.

Distributed coding: a packet-wide hash makes the packet a *Baseline*
packet with probability ``tau`` and an *XOR* packet otherwise; then
``g(packet, i)`` decides per hop:

* Baseline (reservoir sampling): hop ``i`` overwrites the digest when
  ``g < 1/i``, so the last writer is uniform over the path's ``k`` hops;
* XOR: hop ``i`` XORs its fragment into the digest when ``g < p``.

``tau = 1`` is the reservoir-sampling baseline, ``tau = 0`` the pure XOR
scheme, anything between the hybrid. The sink knows the packet id and the
hop count, recomputes every ``g`` and so knows, per packet, which hops
wrote (a 64-bit mask: paths of at most 64 hops).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from common.errors import InvalidValueError

from .hashing import GlobalHashes, below, scaled, threshold

__all__ = ["MAX_HOPS", "PathCoding", "participants", "trace_paths"]

MAX_HOPS = 64


@dataclass(frozen=True)
class PathCoding:
    """The parameters switches and sink share for one path-tracing query."""

    bits: int
    value_bits: int = 32
    tau: float = 1.0
    p: float = 0.0

    def __post_init__(self) -> None:
        if not 1 <= self.bits <= 32:
            raise InvalidValueError(f"path tracing needs 1 to 32 digest bits, not {self.bits}")
        if not 1 <= self.value_bits <= 32:
            raise InvalidValueError(f"switch ids must be 1 to 32 bits wide, not {self.value_bits}")
        if not 0.0 <= self.tau <= 1.0 or not 0.0 <= self.p <= 1.0:
            raise InvalidValueError(
                f"tau {self.tau} and p {self.p} must be probabilities in [0, 1]"
            )
        if self.tau < 1.0 and self.p == 0.0:
            raise InvalidValueError("XOR packets need a participation probability p > 0")

    @classmethod
    def reservoir(cls, bits: int, value_bits: int = 32) -> PathCoding:
        return cls(bits, value_bits, 1.0, 0.0)

    @classmethod
    def xor(cls, bits: int, p: float, value_bits: int = 32) -> PathCoding:
        return cls(bits, value_bits, 0.0, p)

    @property
    def scheme(self) -> str:
        if self.tau == 1.0:
            return "reservoir"
        return "xor" if self.tau == 0.0 else "hybrid"

    @property
    def fragments(self) -> int:
        return max(1, math.ceil(self.value_bits / self.bits))

    @property
    def fragment_mask(self) -> int:
        return (1 << min(self.bits, self.value_bits)) - 1

    def switch_config(self, hashes: GlobalHashes, max_hops: int = MAX_HOPS) -> dict:
        """The constants a switch needs, as plain data for a P4Runtime
        writer: the salts, the 32-bit thresholds a hash word is compared
        with ("below" is ``word < threshold``; 2^32 means always, which a
        program tests as hop 1 or as ``tau == 1``), fragment count and width."""
        return {
            "bits": self.bits,
            "fragments": self.fragments,
            "salts": {use: hashes.salt(use) for use in ("scheme", "fragment", "hop")},
            "baseline_threshold": threshold(self.tau),
            "xor_threshold": threshold(self.p),
            "hop_thresholds": [threshold(1.0 / hop) for hop in range(1, max_hops + 1)],
        }


def _check_hops(hops: np.ndarray) -> None:
    if hops.size and (int(hops.min()) < 1 or int(hops.max()) > MAX_HOPS):
        raise InvalidValueError(
            f"hop counts must be 1 to {MAX_HOPS}, got {int(hops.min())}..{int(hops.max())}"
        )


def _trace(
    coding: PathCoding,
    hashes: GlobalHashes,
    pids: np.ndarray,
    limit: np.ndarray,
    table: np.ndarray | None,
    rows: np.ndarray | None,
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """Walk the hops once: the digests (when the path ``table`` is given),
    the writers' masks and the fragments."""
    pids = np.asarray(pids, dtype=np.uint32)
    _check_hops(limit)
    n = pids.shape[0]
    baseline = below(hashes.packet_word(pids, "scheme"), coding.tau)
    frags = (scaled(hashes.packet_word(pids, "fragment"), coding.fragments)
             if coding.fragments > 1 else np.zeros(n, dtype=np.int64))
    shift = (frags * coding.bits).astype(np.uint64)
    mask = np.uint64(coding.fragment_mask)
    digest = np.zeros(n, dtype=np.uint64)
    masks = np.zeros(n, dtype=np.uint64)
    crcs = hashes.id_crcs(pids)
    for hop in range(1, int(limit.max(initial=0)) + 1):
        words = hashes.hop_word_from(crcs, "hop", hop)
        active = limit >= hop
        write = active & baseline & below(words, 1.0 / hop)
        xor = active & ~baseline & below(words, coding.p)
        bit = np.uint64(1 << (hop - 1))
        masks = np.where(write, bit, masks)
        masks = np.where(xor, masks | bit, masks)
        if table is not None:
            value = (table[rows, hop - 1] >> shift) & mask
            digest = np.where(write, value, digest)
            digest = np.where(xor, digest ^ value, digest)
    return (None if table is None else digest.astype(np.uint32)), masks, frags


def trace_paths(
    coding: PathCoding,
    hashes: GlobalHashes,
    pids: np.ndarray,
    paths: np.ndarray,
    path_index: np.ndarray | None = None,
    hops: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The digests the switches leave on packets ``pids``, with the
    writers' masks and fragments the sink will recompute (one hashing pass).

    ``paths`` is ``(m, K)`` switch ids (or ``(K,)`` for one path); packet
    ``j`` follows row ``path_index[j]`` for its first ``hops[j]`` hops
    (default: row 0, all ``K`` hops).
    """
    table = np.atleast_2d(np.asarray(paths, dtype=np.uint64))
    n = np.asarray(pids).shape[0]
    rows = np.zeros(n, dtype=np.int64) if path_index is None else np.asarray(path_index)
    limit = np.full(n, table.shape[1]) if hops is None else np.asarray(hops)
    digest, masks, frags = _trace(coding, hashes, pids, limit, table, rows)
    assert digest is not None
    return digest, masks, frags


def participants(
    coding: PathCoding, hashes: GlobalHashes, pids: np.ndarray, hops: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """What the sink recomputes: the mask of hops that wrote (bit ``i-1``
    for hop ``i``) and the fragment, per packet."""
    _, masks, frags = _trace(coding, hashes, pids, np.asarray(hops), None, None)
    return masks, frags
