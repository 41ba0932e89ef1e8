"""Dynamic per-flow aggregation: per-(switch, flow) value streams, sketched.

Each packet carries one hop's value: hop ``i`` overwrites the digest with
its (approximated) value when ``g(packet, i) < 1/i``, reservoir sampling
over the path, so every hop is sampled with probability 1/k and the sink,
recomputing ``g``, knows which hop wrote. The recording module feeds each
(flow, hop) stream into a KLL sketch (``datasketches``) of parameter ``k``
(the query's space budget): a quantile query then has normalised rank
error at most ``rank_error`` with 99 % confidence, on top of the value
approximation's factor ``1+eps``.
"""

from __future__ import annotations

import numpy as np
from datasketches import kll_floats_sketch

from common import samebits
from common.errors import InvalidValueError

from .hashing import GlobalHashes, below
from .pathtrace import PathCoding, participants
from .values import ValueCodec

__all__ = ["LatencySketches", "encode_samples", "sampled_hops"]

DEFAULT_K = 200


def encode_samples(
    pids: np.ndarray,
    hop_values: np.ndarray,
    codec: ValueCodec,
    hashes: GlobalHashes,
    hops: np.ndarray | None = None,
) -> np.ndarray:
    """Digests after each hop ``i`` overwrote with its code when ``g < 1/i``."""
    values = np.asarray(hop_values, dtype=np.float64)
    k, n = values.shape
    limit = np.full(n, k) if hops is None else np.asarray(hops)
    digest = np.zeros(n, dtype=np.uint32)
    crcs = hashes.id_crcs(pids)
    for hop in range(1, k + 1):
        codes, _ = codec.encode(values[hop - 1], hashes.hop_word_from(crcs, "round", hop))
        write = (limit >= hop) & below(hashes.hop_word_from(crcs, "hop", hop), 1.0 / hop)
        digest = np.where(write, codes, digest)
    return digest


def sampled_hops(hashes: GlobalHashes, pids: np.ndarray, hops: np.ndarray) -> np.ndarray:
    """The 1-based hop whose value each packet carries, as the sink recomputes it."""
    masks, _ = participants(PathCoding.reservoir(32), hashes, pids, hops)
    return samebits.bit_length(masks)


class LatencySketches:
    """One KLL sketch per (flow, hop)."""

    def __init__(self, k: int = DEFAULT_K) -> None:
        if not 8 <= k <= 65535:
            raise InvalidValueError(f"KLL sketch size k={k} must be between 8 and 65535")
        self.k = k
        self.sketches: dict[tuple[int, int], kll_floats_sketch] = {}

    @property
    def rank_error(self) -> float:
        """Normalised rank error of one quantile query (99 % confidence)."""
        return kll_floats_sketch.get_normalized_rank_error(self.k, False)

    def update(self, flows: np.ndarray, hops: np.ndarray, values: np.ndarray) -> None:
        flows = np.asarray(flows, dtype=np.int64)
        hops = np.asarray(hops, dtype=np.int64)
        values = np.asarray(values, dtype=np.float32)
        keys = np.stack([flows, hops], axis=1)
        uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
        order = np.argsort(inverse.ravel(), kind="stable")
        bounds = np.searchsorted(inverse.ravel()[order], np.arange(uniq.shape[0] + 1))
        for row, (flow, hop) in enumerate(uniq):
            key = (int(flow), int(hop))
            sketch = self.sketches.get(key)
            if sketch is None:
                sketch = self.sketches[key] = kll_floats_sketch(self.k)
            sketch.update(values[order[bounds[row]:bounds[row + 1]]])

    def quantile(self, flow: int, hop: int, q: float) -> float:
        sketch = self.sketches.get((flow, hop))
        if sketch is None:
            raise InvalidValueError(f"no samples of flow {flow} at hop {hop}")
        return float(sketch.get_quantile(q))

    def count(self, flow: int, hop: int) -> int:
        sketch = self.sketches.get((flow, hop))
        return 0 if sketch is None else int(sketch.n)
