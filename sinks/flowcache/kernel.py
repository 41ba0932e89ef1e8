"""The flow cache's per-packet work, compiled by numba.

A packet's update depends on the one before it in the same row (LRU order,
the previous value for change events), so the loop is sequential and runs
as one compiled call per batch. State lives in flat preallocated arrays
grouped in tuples (see ``cache.FlowCache``); nothing is allocated per packet.

Integer discipline: keys and hashes are uint64, values are widened to int64
before any arithmetic (numba turns uint64 mixed with int64 into float64).
"""

from __future__ import annotations

import numba as nb
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from sinks.flowcache.layout import (
    C_E2E_LATENCY,
    C_E_OVERFLOW,
    C_EVENTS,
    C_EVICT_AGED,
    C_EVICT_COLLISION,
    C_EVICT_FLUSH,
    C_G_OVERFLOW,
    C_HIST_OVERFLOW,
    C_HITS,
    C_INSERTS,
    C_PACKETS,
    C_SWEEPS,
    CHANGE,
    E2E,
    E2E_HOP,
    EVICT_AGED,
    EVICT_COLLISION,
    EVICT_FLUSH,
    FLAG_E2E,
    FLAG_PATH,
    HOP_LATENCY,
    KEY_VALID,
    PATH_CHANGE,
    SWITCH_ID,
    T_E2E_LATENCY,
    THRESHOLD,
    UNKNOWN_SWITCH,
    WHOLE_PATH,
)

Arrays = tuple[np.ndarray, ...]
"""A group of state arrays (table, rings, histograms), as ``cache.FlowCache`` holds them."""

# params: int64 settings and the aging timer, one array so Python can change them between calls.
P_BUCKETS, P_ROWS, P_SHARDS, P_EVENT_MASK, P_AGING_PERIOD, P_AGING_INTERVAL, P_NEXT_DUE, \
    P_SWITCHES = range(8)
N_PARAMS = 8
AHEAD = 16
HALF = 8
DIRECT_HOPS = 256
"""Direct-table entries for hops without a switch id, one per hop index."""
# meta: one int64 row per bucket, the scalars a packet touches together.
M_COUNT, M_E2E, M_HOPS, M_FLAGS = range(4)
META = 4

_U = np.uint64
_MUL1 = _U(0xBF58476D1CE4E5B9)
_MUL2 = _U(0x94D049BB133111EB)
_FNV_BASIS = _U(0xCBF29CE484222325)
_FNV_PRIME = _U(0x100000001B3)
_VALID = _U(KEY_VALID)
_UNKNOWN = _U(UNKNOWN_SWITCH)
_BIG = np.int64((1 << 63) - 1)


@intrinsic
def prefetch(typingctx, array, index):  # type: ignore[no-untyped-def]
    """LLVM's prefetch of ``array[index]`` for reading: a hint, never a fault."""
    sig = types.void(array, index)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        ary_type = signature.args[0]
        ary = context.make_array(ary_type)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, ary_type, ary, [args[1]],
                                       wraparound=False)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
            "llvm.prefetch.p0i8")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


@nb.njit(cache=True, inline="always")
def mix64(x: np.uint64) -> np.uint64:
    """splitmix64's finaliser: every input bit moves every output bit."""
    x = x ^ (x >> _U(30))
    x = x * _MUL1
    x = x ^ (x >> _U(27))
    x = x * _MUL2
    return x ^ (x >> _U(31))


@nb.njit(cache=True, inline="always")
def flow_hash(key0: np.uint64, key1: np.uint64) -> np.uint64:
    """Hash of a 5-tuple as (src << 32 | dst, proto << 32 | sport << 16 | dport)."""
    return mix64(key0 ^ mix64(key1))


@nb.njit(cache=True)
def flow_hashes(key0: np.ndarray, key1: np.ndarray) -> np.ndarray:
    """flow_hash of every packet, for sharding a batch over workers."""
    out = np.empty(key0.shape[0], np.uint64)
    for i in range(key0.shape[0]):
        out[i] = flow_hash(key0[i], key1[i])
    return out


@nb.njit(cache=True, inline="always")
def row_of(h: np.uint64, shards: np.int64, rows: np.int64) -> np.int64:
    """Row of a flow in its shard; the shard itself is h % shards."""
    return np.int64((h // _U(shards)) % _U(rows))


@nb.njit(cache=True)
def _evict(b: int, reason: int, now: int, table: Arrays, gring: Arrays, params: np.ndarray,
           counters: np.ndarray) -> None:
    key0, key1, last_ts, meta, latest, sums, nsamp = table
    (head, tail, g_key0, g_key1, g_count, g_last_ts, g_nhops, g_reason, g_time, g_latest,
     g_sums, g_nsamp) = gring
    ring = (b // params[P_BUCKETS]) % head.shape[0]
    cap = g_key0.shape[1]
    if reason == EVICT_COLLISION:
        counters[C_EVICT_COLLISION] += 1
    elif reason == EVICT_AGED:
        counters[C_EVICT_AGED] += 1
    else:
        counters[C_EVICT_FLUSH] += 1
    if head[ring] - tail[ring] >= cap:
        counters[C_G_OVERFLOW] += 1
    else:
        s = head[ring] % cap
        g_key0[ring, s] = key0[b]
        g_key1[ring, s] = key1[b] & ~_VALID
        g_count[ring, s] = meta[b, M_COUNT]
        g_last_ts[ring, s] = last_ts[b]
        g_nhops[ring, s] = meta[b, M_HOPS]
        g_reason[ring, s] = reason
        g_time[ring, s] = now
        g_latest[ring, s] = latest[b]
        g_sums[ring, s] = sums[b]
        g_nsamp[ring, s] = nsamp[b]
        head[ring] += 1
    key1[b] = _U(0)


@nb.njit(cache=True)
def sweep(now: int, table: Arrays, gring: Arrays, params: np.ndarray,
          counters: np.ndarray) -> None:
    """Aging: evict every bucket idle for longer than the aging period."""
    key1, last_ts = table[1], table[2]
    period = params[P_AGING_PERIOD]
    counters[C_SWEEPS] += 1
    for b in range(key1.shape[0]):
        if key1[b] != _U(0) and now - last_ts[b] > period:
            _evict(b, EVICT_AGED, now, table, gring, params, counters)


@nb.njit(cache=True)
def flush_rows(start: int, stop: int, now: int, table: Arrays, gring: Arrays, params: np.ndarray,
               counters: np.ndarray) -> None:
    """Evict every occupied bucket of rows [start, stop) (reason flush)."""
    key1 = table[1]
    buckets = params[P_BUCKETS]
    for b in range(start * buckets, stop * buckets):
        if key1[b] != _U(0):
            _evict(b, EVICT_FLUSH, now, table, gring, params, counters)


@nb.njit(cache=True)
def _switch_slot(key: np.uint64, direct_at: int, direct: np.ndarray, sw_keys: np.ndarray,
                 sw_slot: np.ndarray, sw_list: np.ndarray, params: np.ndarray,
                 counters: np.ndarray) -> int:
    """Dense histogram slot of a switch key not found in the direct table:
    by open addressing, inserted on first sight (and then remembered in the
    direct table at ``direct_at`` when that is >= 0); -1 when the directory
    is full. Called off the hot path only: a call that takes arrays costs
    their reference counts, inlined or not."""
    mask = sw_keys.shape[0] - 1
    stored = key + _U(1)
    i = np.int64(mix64(key) & _U(mask))
    while True:
        k = sw_keys[i]
        if k == stored:
            return sw_slot[i]
        if k == _U(0):
            n = params[P_SWITCHES]
            if n >= sw_list.shape[0]:
                counters[C_HIST_OVERFLOW] += 1
                return -1
            sw_keys[i] = stored
            sw_slot[i] = n
            sw_list[n] = key
            params[P_SWITCHES] = n + 1
            if direct_at >= 0:
                direct[direct_at] = n
            return n
        i = (i + 1) & mask


@nb.njit(cache=True)
def _bisect(edges: np.ndarray, nbins: np.ndarray, m: int, v: int) -> int:
    """Index of the last lower bound <= v, for values past the lookup table."""
    lo, hi = 0, nbins[m]
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if edges[m, mid] <= v:
            lo = mid
        else:
            hi = mid
    return lo


@nb.njit(cache=True)
def process(table: Arrays, gring: Arrays, ering: Arrays, hist: Arrays, thresholds: np.ndarray,
            params: np.ndarray, counters: np.ndarray, pkt_key0: np.ndarray, pkt_key1: np.ndarray,
            pkt_ts: np.ndarray, pkt_hops: np.ndarray, pkt_present: np.ndarray,
            pkt_values: np.ndarray) -> None:
    """Feed a batch: for each packet, aging if due, lookup/insert/evict in
    its row, change/threshold/path events, values, histograms."""
    key0, key1, last_ts, meta, latest, sums, nsamp = table
    sw_keys, sw_slot, sw_list, counts, edges, nbins, direct, lut, lut_top, lut_full = hist
    direct_ids = direct.shape[0] - DIRECT_HOPS  # direct[:direct_ids] by switch id, then by hop
    buckets, rows, shards = params[P_BUCKETS], params[P_ROWS], params[P_SHARDS]
    e_head, e_tail, e_key0, e_key1, e_switch, e_hop, e_value, e_bitmap, e_ts = ering
    rings, e_cap = e_head.shape[0], e_key0.shape[1]
    # a packet's events wait here until its ring is known to take them: writing
    # them in one place keeps the ring's arrays out of helper calls
    most = latest.shape[1] * 3 + 2
    pend_switch, pend_hop = np.empty(most, np.int64), np.empty(most, np.int64)
    pend_value, pend_bits = np.empty(most, np.uint64), np.empty(most, np.int64)
    n = pkt_key0.shape[0]
    # Rows ahead of time, so the memory of packets to come can be asked for
    # early: a row's keys AHEAD packets before, its bucket's values half-way.
    flat_latest, flat_sums, flat_nsamp = latest.reshape(-1), sums.reshape(-1), nsamp.reshape(-1)
    flat_meta = meta.reshape(-1)
    per_bucket = latest.shape[1] * latest.shape[2]
    rows_of = np.empty(n, np.int64)
    for i in range(n):
        rows_of[i] = row_of(flow_hash(pkt_key0[i], pkt_key1[i]), shards, rows) * buckets
    for i in range(n):
        if i + AHEAD < n:
            ahead = rows_of[i + AHEAD]
            prefetch(key1, ahead)
            prefetch(key1, ahead + buckets - 1)
            prefetch(key0, ahead)
            prefetch(last_ts, ahead)
            prefetch(last_ts, ahead + buckets - 1)
        if i + HALF < n:
            near = rows_of[i + HALF]
            want = pkt_key1[i + HALF] | _VALID
            for b in range(near, near + buckets):
                if key1[b] == want and key0[b] == pkt_key0[i + HALF]:
                    at = b * per_bucket
                    prefetch(flat_latest, at)
                    prefetch(flat_latest, at + per_bucket - 1)
                    prefetch(flat_sums, at)
                    prefetch(flat_sums, at + per_bucket // 2)
                    prefetch(flat_sums, at + per_bucket - 1)
                    prefetch(flat_nsamp, at)
                    prefetch(flat_nsamp, at + per_bucket - 1)
                    prefetch(flat_meta, b * META)
                    break
        ts = pkt_ts[i]
        if params[P_AGING_PERIOD] > 0:
            if params[P_NEXT_DUE] < 0:
                params[P_NEXT_DUE] = ts + params[P_AGING_INTERVAL]
            elif ts >= params[P_NEXT_DUE]:
                sweep(ts, table, gring, params, counters)
                params[P_NEXT_DUE] = ts + params[P_AGING_INTERVAL]
        k0 = pkt_key0[i]
        k1 = pkt_key1[i] | _VALID
        base = rows_of[i]
        row = base // buckets
        hit, free, lru, lru_ts = -1, -1, -1, _BIG
        for b in range(base, base + buckets):
            kb = key1[b]
            if kb == _U(0):
                if free < 0:
                    free = b
            elif kb == k1 and key0[b] == k0:
                hit = b
                break
            elif last_ts[b] < lru_ts:
                lru_ts = last_ts[b]
                lru = b
        counters[C_PACKETS] += 1
        if hit >= 0:
            b = hit
            counters[C_HITS] += 1
        else:
            if free >= 0:
                b = free
            else:
                b = lru
                _evict(b, EVICT_COLLISION, ts, table, gring, params, counters)
            counters[C_INSERTS] += 1
            key0[b] = k0
            key1[b] = k1
            meta[b] = 0
            latest[b] = 0
            sums[b] = 0
            nsamp[b] = 0
        ring = row % rings
        pending = 0
        mask = params[P_EVENT_MASK]
        present = np.int64(pkt_present[i])
        hops = np.int64(pkt_hops[i])
        prev_hops = meta[b, M_HOPS]
        prev_flags = meta[b, M_FLAGS]
        ids = (present >> SWITCH_ID) & 1
        ids_before = ids and (prev_flags & FLAG_PATH) != 0
        ek1 = pkt_key1[i]
        first = -1  # the first hop where the path differs from the last packet's
        if ids_before and (mask & PATH_CHANGE):
            for h in range(min(hops, prev_hops)):
                if latest[b, h, SWITCH_ID] != pkt_values[i, h, SWITCH_ID]:
                    first = h
                    break
            if first < 0 and hops != prev_hops:
                first = min(hops, prev_hops)
        total = np.int64(0)
        for h in range(hops):
            sid = pkt_values[i, h, SWITCH_ID]
            switch = np.int64(sid) if ids else np.int64(WHOLE_PATH)
            same = h < prev_hops and (not ids_before or latest[b, h, SWITCH_ID] == sid)
            # the histogram slot: by direct index when the key allows, else hashed
            at = direct_ids + h  # no switch id: by hop index
            if ids:
                at = np.int64(sid) if np.int64(sid) < direct_ids else -1
            slot = direct[at] if at >= 0 else -1
            if slot < 0:
                slot = _switch_slot(_U(sid) if ids else (_UNKNOWN | _U(h)), at, direct, sw_keys,
                                    sw_slot, sw_list, params, counters)
            if ids:
                latest[b, h, SWITCH_ID] = sid
                sums[b, h, SWITCH_ID] += _U(sid)
                nsamp[b, h, SWITCH_ID] += 1
            for m in range(1, 4):
                if (present >> m) & 1:
                    v = np.int64(pkt_values[i, h, m])
                    bits = 0
                    if v > thresholds[THRESHOLD, m - 1]:
                        bits |= 1 << (m - 1)
                    if same and nsamp[b, h, m] > 0 and \
                            abs(v - np.int64(latest[b, h, m])) > thresholds[CHANGE, m - 1]:
                        bits |= 1 << (m + 2)
                    bits &= mask
                    if bits:
                        pend_switch[pending], pend_hop[pending] = switch, h
                        pend_value[pending], pend_bits[pending] = v, bits
                        pending += 1
                    latest[b, h, m] = v
                    sums[b, h, m] += _U(v)
                    nsamp[b, h, m] += 1
                    if slot >= 0:
                        top = lut_top[m - 1]
                        if v <= top:
                            k = lut[m - 1, v]
                        elif lut_full[m - 1]:
                            k = nbins[m - 1] - 1  # past the last lower bound
                        else:
                            k = _bisect(edges, nbins, m - 1, v)
                        counts[slot, m - 1, k] += 1
                    if m == HOP_LATENCY:
                        total += v
        latency = (present >> HOP_LATENCY) & 1
        if latency:
            bits = 0
            if total > thresholds[THRESHOLD, E2E]:
                bits |= T_E2E_LATENCY
            if (prev_flags & FLAG_E2E) and abs(total - meta[b, M_E2E]) > thresholds[CHANGE, E2E]:
                bits |= C_E2E_LATENCY
            bits &= mask
            if bits:
                pend_switch[pending], pend_hop[pending] = WHOLE_PATH, E2E_HOP
                pend_value[pending], pend_bits[pending] = total, bits
                pending += 1
        if first >= 0:
            digest = _FNV_BASIS
            for h in range(hops):
                digest = (digest ^ _U(pkt_values[i, h, SWITCH_ID])) * _FNV_PRIME
            switch = np.int64(pkt_values[i, first, SWITCH_ID]) if first < hops \
                else np.int64(WHOLE_PATH)
            pend_switch[pending], pend_hop[pending] = switch, first
            pend_value[pending], pend_bits[pending] = digest, PATH_CHANGE
            pending += 1
        # the packet's events into its ring, in the order found; a full ring drops them
        counters[C_EVENTS] += pending
        for j in range(pending):
            if e_head[ring] - e_tail[ring] >= e_cap:
                counters[C_E_OVERFLOW] += 1
                continue
            slot_e = e_head[ring] % e_cap
            e_key0[ring, slot_e] = k0
            e_key1[ring, slot_e] = ek1
            e_switch[ring, slot_e] = pend_switch[j]
            e_hop[ring, slot_e] = pend_hop[j]
            e_value[ring, slot_e] = pend_value[j]
            e_bitmap[ring, slot_e] = pend_bits[j]
            e_ts[ring, slot_e] = ts
            e_head[ring] += 1
        meta[b, M_COUNT] += 1
        last_ts[b] = ts
        meta[b, M_HOPS] = hops
        meta[b, M_FLAGS] = (FLAG_E2E if latency else 0) | (FLAG_PATH if ids else 0)
        if latency:
            meta[b, M_E2E] = total
