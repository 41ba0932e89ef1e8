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

import numba
import numpy as np

from common.errors import InvalidValueError

from .hashing import CRC_TABLE, GlobalHashes, below, hop_word_scalar, scaled, threshold

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


@numba.njit(cache=True)
def _trace_kernel(crcs, baseline, shifts, rows, limit, table, salt, hop_thresholds,
                  xor_threshold, value_mask, crc_table, with_digest):
    """Per packet, per hop: the switch's decision and write (sequential
    over hops, so one pass per packet beats a numpy pass per hop)."""
    n = crcs.shape[0]
    digests = np.zeros(n, dtype=np.uint32)
    masks = np.zeros(n, dtype=np.uint64)
    for j in range(n):
        digest = np.uint64(0)
        mask = np.uint64(0)
        for hop in range(1, limit[j] + 1):
            word = np.uint64(hop_word_scalar(crcs[j], hop, salt, crc_table))
            bit = np.uint64(1) << np.uint64(hop - 1)
            if baseline[j]:
                if word < hop_thresholds[hop]:
                    mask = bit
                    if with_digest:
                        digest = (table[rows[j], hop - 1] >> shifts[j]) & value_mask
            elif word < xor_threshold:
                mask |= bit
                if with_digest:
                    digest ^= (table[rows[j], hop - 1] >> shifts[j]) & value_mask
        digests[j] = np.uint32(digest)
        masks[j] = mask
    return digests, masks


_HOP_THRESHOLDS = np.array([0] + [threshold(1.0 / hop) for hop in range(1, MAX_HOPS + 1)],
                           dtype=np.uint64)


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
    limit = np.asarray(limit, dtype=np.int64)
    _check_hops(limit)
    n = pids.shape[0]
    baseline = below(hashes.packet_word(pids, "scheme"), coding.tau)
    frags = (scaled(hashes.packet_word(pids, "fragment"), coding.fragments)
             if coding.fragments > 1 else np.zeros(n, dtype=np.int64))
    shifts = (frags * coding.bits).astype(np.uint64)
    with_digest = table is not None
    if table is None:
        table, rows = np.zeros((1, 1), dtype=np.uint64), np.zeros(n, dtype=np.int64)
    digests, masks = _trace_kernel(
        hashes.id_crcs(pids), baseline, shifts, np.asarray(rows, dtype=np.int64), limit,
        np.asarray(table, dtype=np.uint64), np.uint32(hashes.salt("hop")), _HOP_THRESHOLDS,
        np.uint64(threshold(coding.p)), np.uint64(coding.fragment_mask), CRC_TABLE, with_digest,
    )
    return (digests if with_digest else None), masks, frags


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
