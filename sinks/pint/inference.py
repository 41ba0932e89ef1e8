"""Path inference for one flow: recompute who wrote, peel, report."""

from __future__ import annotations

import numpy as np

from .hashing import GlobalHashes
from .pathtrace import PathCoding, participants
from .peeling import PathDecode, peel

__all__ = ["decode_flow"]


def decode_flow(
    coding: PathCoding,
    hashes: GlobalHashes,
    pids: np.ndarray,
    hops: int,
    digests: np.ndarray,
    max_pending: int | None = None,
) -> PathDecode:
    """Decode a ``hops``-hop path from one flow's digests, in arrival order."""
    pids = np.asarray(pids, dtype=np.uint32)
    masks, frags = participants(coding, hashes, pids, np.full(pids.shape[0], hops))
    known, values, confirmed, done_at, checks, conflicts = peel(
        masks, frags, np.asarray(digests, dtype=np.uint32), hops, coding.fragments,
        -1 if max_pending is None else max_pending, False,
    )
    path: list[int | None] = []
    for hop in range(hops):
        bit = np.uint64(1 << hop)
        if all(known[f] & bit for f in range(coding.fragments)):
            path.append(sum(int(values[f, hop]) << (f * coding.bits)
                            for f in range(coding.fragments)))
        else:
            path.append(None)
    complete = done_at > 0
    confidence = float(np.count_nonzero(confirmed[:, :hops])) / (hops * coding.fragments)
    return PathDecode(
        path=tuple(path),
        complete=complete,
        packets_needed=int(done_at) if complete else None,
        packets_seen=int(pids.shape[0]),
        checks=int(checks),
        conflicts=int(conflicts),
        confidence=confidence,
    )
