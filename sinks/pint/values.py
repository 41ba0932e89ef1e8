"""Value approximation (paper section 4): numbers in b bits by (1+eps) steps.

Code 0 is the value 0; code ``c >= 1`` stands for ``lo * (1+eps)^(c-1)``, so
``2^b - 1`` codes cover ``[lo, hi]`` with ``(1+eps)^(2^b-2) = hi/lo``. A
value between two levels is rounded up with probability
``(v - low) / (high - low)`` and down otherwise (randomized rounding), so
the decoded value is unbiased and within a factor ``1+eps`` of the truth;
values below ``lo`` round between 0 and ``lo`` the same way; values above
``hi`` saturate at the top code (counted). The rounding coin is a hash word
of (packet, hop), so the sink could recompute it and a switch needs no
random source; a switch finds the level with a range-match table on the
value (``levels()``).

Per-packet aggregation keeps the maximum code along the path: codes are
monotone in the value, so the sink decodes the path maximum within the
same factor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from common import samebits
from common.errors import InvalidValueError

from .hashing import TWO32, GlobalHashes

__all__ = ["ValueCodec", "max_aggregate"]


@dataclass(frozen=True)
class ValueCodec:
    bits: int
    lo: float
    hi: float

    def __post_init__(self) -> None:
        if not 2 <= self.bits <= 32:
            raise InvalidValueError(f"value approximation needs 2 to 32 bits, not {self.bits}")
        if not 0 < self.lo < self.hi:
            raise InvalidValueError(
                f"value range [{self.lo}, {self.hi}] must have 0 < lo < hi"
            )

    @property
    def top(self) -> int:
        return (1 << self.bits) - 1

    @property
    def eps(self) -> float:
        """The multiplicative step: decoded values are within a factor 1+eps."""
        steps = self.top - 1
        return math.expm1(math.log(self.hi / self.lo) / steps) if steps else math.inf

    def levels(self) -> np.ndarray:
        """The value of each code (index = code), read-only.

        They become range-match table entries (``p4config.level_entries``),
        so they are computed by ``math.exp`` element by element, never by
        numpy's CPU-dependent kernel (``common.samebits``)."""
        return self._levels

    @cached_property
    def _levels(self) -> np.ndarray:
        codes = np.arange(self.top + 1, dtype=np.float64)
        out = self.lo * samebits.exp((codes - 1) * math.log1p(self.eps))
        out[0] = 0.0
        if self.top >= 1:
            out[self.top] = self.hi
        out.flags.writeable = False
        return out

    def encode(self, values: np.ndarray, coins: np.ndarray) -> tuple[np.ndarray, int]:
        """Codes of ``values`` rounded by 32-bit ``coins``; also how many saturated."""
        v = np.asarray(values, dtype=np.float64)
        levels = self.levels()
        low_code = np.searchsorted(levels, v, side="right") - 1
        low_code = np.clip(low_code, 0, self.top)
        saturated = v > self.hi
        low = levels[low_code]
        high = levels[np.minimum(low_code + 1, self.top)]
        span = high - low
        frac = np.divide(v - low, span, out=np.zeros_like(v), where=span > 0)
        up = np.asarray(coins, dtype=np.float64) < frac * TWO32
        codes = np.where(up & (low_code < self.top), low_code + 1, low_code)
        codes = np.where(saturated, self.top, codes)
        return codes.astype(np.uint32), int(saturated.sum())

    def decode(self, codes: np.ndarray) -> np.ndarray:
        return self.levels()[np.asarray(codes, dtype=np.int64)]


def max_aggregate(
    pids: np.ndarray,
    hop_values: np.ndarray,
    codec: ValueCodec,
    hashes: GlobalHashes,
    hops: np.ndarray | None = None,
) -> tuple[np.ndarray, int]:
    """The digests of packets after each hop wrote max(digest, code(value)).

    ``hop_values`` is ``(k, n)``: hop ``i``'s value for each packet; a
    packet with ``hops[j] < k`` passes only its first ``hops[j]`` hops.
    Returns the digests and the count of saturated values.
    """
    values = np.asarray(hop_values, dtype=np.float64)
    k, n = values.shape
    limit = np.full(n, k) if hops is None else np.asarray(hops)
    digest = np.zeros(n, dtype=np.uint32)
    saturated = 0
    crcs = hashes.id_crcs(pids)
    for hop in range(1, k + 1):
        coins = hashes.hop_word_from(crcs, "round", hop)
        codes, sat = codec.encode(values[hop - 1], coins)
        active = hop <= limit
        saturated += int((values[hop - 1][active] > codec.hi).sum()) if sat else 0
        digest = np.where(active, np.maximum(digest, codes), digest)
    return digest, saturated
