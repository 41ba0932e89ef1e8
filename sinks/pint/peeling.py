"""The path-tracing inference: peeling XOR digests one packet at a time.

A packet is (mask of hops that wrote, fragment, digest). Hops already
known are XORed out of the digest; one unknown hop left means its value is
the digest; more than one means the packet waits (at most ``max_pending``
of them, the query's space budget; 0 decodes online, keeping nothing) until
enough hops are known. A packet whose hops are all known is a *check*: its
digest must be 0 after peeling, else it is a *conflict*. Baseline packets
are the one-hop case. Every learned value starts a cascade over the waiting
packets of its fragment, so each decoded value is used as soon as it is.

The loop is sequential per packet (a value learned now changes what the
next packet can teach), so it runs in numba.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

__all__ = ["PathDecode", "peel"]


@numba.njit(cache=True)
def _bit_index(bit: np.uint64) -> int:
    index = 0
    while bit > np.uint64(1):
        bit >>= np.uint64(1)
        index += 1
    return index


@numba.njit(cache=True)
def _popcount(x: np.uint64) -> int:
    count = 0
    while x:
        x &= x - np.uint64(1)
        count += 1
    return count


@numba.njit(cache=True)
def peel(masks, frags, digests, hops, fragments, max_pending, stop_when_done):
    """Decode one flow's packets in order.

    Returns ``(known, values, confirmed, done_at, checks, conflicts)``:
    per fragment the mask of known hops, per (fragment, hop) the value and
    how many check packets confirmed it; the 1-based index of the packet
    after which every hop of every fragment was known (-1 if never);
    the check and conflict counts.
    """
    n = masks.shape[0]
    full = np.uint64(0xFFFFFFFFFFFFFFFF)
    if hops < 64:
        full = (np.uint64(1) << np.uint64(hops)) - np.uint64(1)
    known = np.zeros(fragments, dtype=np.uint64)
    values = np.zeros((fragments, 64), dtype=np.uint32)
    confirmed = np.zeros((fragments, 64), dtype=np.int64)
    cap = n if max_pending < 0 else min(n, max_pending)
    p_mask = np.zeros(max(cap, 1), dtype=np.uint64)
    p_val = np.zeros(max(cap, 1), dtype=np.uint32)
    p_frag = np.zeros(max(cap, 1), dtype=np.int64)
    pending = 0
    stack_f = np.zeros(fragments * 64 + 1, dtype=np.int64)
    stack_h = np.zeros(fragments * 64 + 1, dtype=np.int64)
    done_at = -1
    checks = 0
    conflicts = 0
    remaining = fragments
    for t in range(n):
        f = frags[t]
        m = masks[t]
        v = digests[t]
        seen = m & known[f]
        rest = seen
        while rest:
            low = rest & (~rest + np.uint64(1))
            v ^= values[f, _bit_index(low)]
            rest ^= low
        unknown = m & ~known[f]
        if unknown == 0:
            checks += 1
            if v != 0:
                conflicts += 1
            else:
                rest = m
                while rest:
                    low = rest & (~rest + np.uint64(1))
                    confirmed[f, _bit_index(low)] += 1
                    rest ^= low
            continue
        if _popcount(unknown) > 1:
            if pending < cap:
                p_mask[pending] = unknown
                p_val[pending] = v
                p_frag[pending] = f
                pending += 1
            continue
        # one unknown hop: learn it, then cascade through the waiting packets
        stack_f[0] = f
        stack_h[0] = _bit_index(unknown)
        values[f, stack_h[0]] = v
        known[f] |= unknown
        if known[f] & full == full:
            remaining -= 1
        top = 1
        while top > 0:
            top -= 1
            lf = stack_f[top]
            lbit = np.uint64(1) << np.uint64(stack_h[top])
            lval = values[lf, stack_h[top]]
            j = 0
            while j < pending:
                if p_frag[j] != lf or not (p_mask[j] & lbit):
                    j += 1
                    continue
                p_mask[j] ^= lbit
                p_val[j] ^= lval
                left = p_mask[j]
                if _popcount(left) <= 1:
                    val = p_val[j]
                    pending -= 1
                    p_mask[j] = p_mask[pending]
                    p_val[j] = p_val[pending]
                    p_frag[j] = p_frag[pending]
                    if left == 0:
                        checks += 1
                        if val != 0:
                            conflicts += 1
                    elif known[lf] & left:
                        checks += 1
                        if values[lf, _bit_index(left)] != val:
                            conflicts += 1
                    else:
                        h = _bit_index(left)
                        values[lf, h] = val
                        known[lf] |= left
                        if known[lf] & full == full:
                            remaining -= 1
                        stack_f[top] = lf
                        stack_h[top] = h
                        top += 1
                    continue
                j += 1
        if remaining == 0 and done_at < 0:
            done_at = t + 1
            if stop_when_done:
                break
    return known, values, confirmed, done_at, checks, conflicts


@dataclass(frozen=True)
class PathDecode:
    """What the inference knows about one flow's path.

    ``confidence`` is the fraction of the path's (hop, fragment) values
    that a later packet confirmed (a check whose peeled digest was 0): a
    value decoded from a corrupted digest cannot survive a confirming check,
    so 1.0 means every value was seen twice consistently. ``conflicts`` are
    checks that failed: a digest inconsistent with the decoded path (a path
    change or a corrupted digest).
    """

    path: tuple[int | None, ...]
    complete: bool
    packets_needed: int | None
    packets_seen: int
    checks: int
    conflicts: int
    confidence: float
