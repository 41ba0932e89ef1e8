"""The fast path's per-value loops, compiled with numba when it imports.

Event detection is sequential per key (a key's reference moves at each of
its events), which numpy can only approximate in rounds; as one compiled
loop over flat arrays it costs a few nanoseconds per value. Keys are mapped
to dense slots by an open-addressing hash table (uint64 key -> slot) in the
same loop, so a batch costs one call per metric.

Without numba the same functions run as plain Python (slow, but the same
results); ``COMPILED`` says which. ``MetricTable`` then uses its numpy
rounds instead (``events.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

try:  # pragma: no cover - depends on the environment
    from numba import njit as _njit

    COMPILED = True
except ImportError:  # pragma: no cover
    COMPILED = False

EMPTY = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
"""The hash table's empty mark. Of the packed keys only an address pair
(255.255.255.255, 255.255.255.255) has all 64 bits set; ``hash_lookup``
keeps that key's slot outside the table. Metric keys never do (their high
bits are a flow slot or a 32-bit switch id shifted by 8 or 16)."""
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _jit(function: Callable[..., Any]) -> Callable[..., Any]:
    return _njit(cache=True, nogil=True)(function) if COMPILED else function


@_jit
def _find(table: np.ndarray, key: np.uint64) -> tuple[int, bool]:
    """Entry of ``key`` in the table (pairs key, slot), or of the empty
    entry it would take."""
    mask = np.uint64(len(table) // 2 - 1)
    at = (key * _GOLDEN) >> np.uint64(32) & mask
    while True:
        here = table[2 * at]
        if here == key:
            return int(at), True
        if here == EMPTY:
            return int(at), False
        at = (at + np.uint64(1)) & mask


@_jit
def hash_lookup(table: np.ndarray, keys_by_slot: np.ndarray, count: int, keys: np.ndarray,
                out: np.ndarray, empty_slot: np.ndarray) -> int:
    """Slot of every key into ``out``; unknown keys get the next slots in
    order of first appearance. Returns the new count. The key ``EMPTY`` has
    its slot in ``empty_slot[0]`` (-1: not seen yet). The caller keeps the
    table at most half full and ``keys_by_slot`` large enough."""
    for i in range(len(keys)):
        key = keys[i]
        if key == EMPTY:
            if empty_slot[0] < 0:
                empty_slot[0] = count
                keys_by_slot[count] = key
                count += 1
            out[i] = empty_slot[0]
            continue
        at, hit = _find(table, key)
        if hit:
            out[i] = table[2 * at + 1]
        else:
            table[2 * at] = key
            table[2 * at + 1] = count
            keys_by_slot[count] = key
            out[i] = count
            count += 1
    return count


@_jit
def rehash(keys_by_slot: np.ndarray, count: int, table: np.ndarray) -> None:
    """Fill an empty table with the first ``count`` slots' keys."""
    for slot in range(count):
        if keys_by_slot[slot] == EMPTY:  # its slot is kept outside the table
            continue
        at, _ = _find(table, keys_by_slot[slot])
        table[2 * at] = keys_by_slot[slot]
        table[2 * at + 1] = slot


REF, LATEST, SEEN_NS, DIRTY = 0, 1, 2, 3
"""Columns of a table's per-slot state (one row of int64 per key, so a
value's updates touch one cache line)."""


@_jit
def observe_rows(keys: np.ndarray, values: np.ndarray, reports: np.ndarray,
                 report_ns: np.ndarray, table: np.ndarray, keys_by_slot: np.ndarray, count: int,
                 state: np.ndarray, threshold: float, categorical: bool, detect: bool,
                 ev_slots: np.ndarray, ev_values: np.ndarray, ev_reports: np.ndarray,
                 ev_pos: np.ndarray, row_ids: np.ndarray, cache: np.ndarray) -> tuple[int, int]:
    """Key lookup and the event rule of section III-D in one pass.

    ``keys`` and ``values`` are (rows, width): row r belongs to report
    ``reports[r]`` (time ``report_ns[reports[r]]``) and its values are taken
    last column first (the INT source's hop is the last on the wire). A key
    not in the table is new: it gets the next slot and its value is an
    event. Otherwise, ``categorical``: any change is an event; else a value
    more than ``threshold`` from the reference (the value of the key's last
    event). With ``detect`` off every value is an event (and the reference).
    Events go to ``ev_*`` (slot, value, report, position in row-major order
    with columns reversed); latest value, time and the dirty flag (``state``
    columns) are written for every value. Returns the new key count and the
    number of events. The caller keeps the table at most half full after
    ``rows * width`` new keys and ``state``, ``keys_by_slot`` that large.

    ``row_ids[r]`` (a flow slot; -1: none) picks row ``row_ids[r]`` of
    ``cache``, which holds (key, slot) per column as that flow's last row
    had them: a flow's keys rarely change (a path change), so most values
    find their slot there without hashing."""
    width = keys.shape[1]
    found = 0
    for r in range(keys.shape[0]):
        report = reports[r]
        now = report_ns[report]
        row = row_ids[r]
        for c in range(width - 1, -1, -1):
            key = keys[r, c]
            value = np.int64(values[r, c])
            if row >= 0 and cache[row, 2 * c] == key:
                slot = np.int64(cache[row, 2 * c + 1])
                hit = True
            else:
                at, hit = _find(table, key)
                if hit:
                    slot = np.int64(table[2 * at + 1])
                else:
                    table[2 * at] = key
                    table[2 * at + 1] = count
                    keys_by_slot[count] = key
                    slot = count
                    count += 1
                if row >= 0:
                    cache[row, 2 * c] = key
                    cache[row, 2 * c + 1] = slot
            if hit:
                if not detect:
                    event = True
                elif categorical:
                    event = value != state[slot, REF]
                else:
                    event = abs(value - state[slot, REF]) > threshold
            else:
                event = True
            if event:
                state[slot, REF] = value
                ev_slots[found] = slot
                ev_values[found] = value
                ev_reports[found] = report
                ev_pos[found] = r * width + width - 1 - c
                found += 1
            state[slot, LATEST] = value
            state[slot, SEEN_NS] = now
            state[slot, DIRTY] = 1
    return count, found


@_jit
def row_hashes(rows: np.ndarray, out: np.ndarray) -> None:
    """A 64-bit hash of each row of switch ids (paths), never ``EMPTY``."""
    for r in range(rows.shape[0]):
        h = np.uint64(len(rows[r]))
        for c in range(rows.shape[1]):
            h = h * _GOLDEN + np.uint64(rows[r, c])
            h ^= h >> np.uint64(29)
        out[r] = h if h != EMPTY else np.uint64(0)


class HashIndex:
    """Packed uint64 keys to dense slots 0, 1, 2, ... in order of first
    appearance, one compiled call per column. The interface of
    ``metrics.KeyIndex`` (count, key, keys, lookup)."""

    __slots__ = ("count", "_keys", "_table", "_empty_slot")

    def __init__(self, capacity: int = 64) -> None:
        self.count = 0
        self._empty_slot = np.full(1, -1, dtype=np.int64)
        self._keys = np.zeros(capacity, dtype=np.uint64)
        entries = 1 << max(7, (2 * capacity - 1).bit_length())
        self._table = np.full(2 * entries, EMPTY, dtype=np.uint64)  # key, slot per entry

    def key(self, slot: int) -> int:
        return int(self._keys[slot])

    @property
    def keys(self) -> np.ndarray:
        return self._keys[:self.count]

    def reserve(self, more: int) -> None:
        """Room for ``more`` new keys: the slot array and a table at most half full."""
        need = self.count + more
        if need > len(self._keys):
            grown = np.zeros(max(need, 2 * len(self._keys)), dtype=np.uint64)
            grown[:self.count] = self._keys[:self.count]
            self._keys = grown
        if 2 * need > len(self._table) // 2:
            entries = 1 << (4 * need - 1).bit_length()
            self._table = np.full(2 * entries, EMPTY, dtype=np.uint64)
            rehash(self._keys, self.count, self._table)

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Hash table (key, slot pairs) and the key of each slot, for compiled loops."""
        return self._table, self._keys

    def lookup(self, keys: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Slot of every key (int64), adding the keys not known yet."""
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        self.reserve(len(keys))
        if out is None:
            out = np.empty(len(keys), dtype=np.int64)
        self.count = hash_lookup(self._table, self._keys, self.count, keys, out,
                                 self._empty_slot)
        return out


@_jit
def pack_keys(high: np.ndarray, shift: int, low: np.ndarray, out: np.ndarray) -> None:
    """``out[r, c] = high[r, c] << shift | low[r, c]`` as uint64 in one pass
    (numpy makes two temporaries); ``high`` may be (rows, 1), for a value
    per row."""
    per_row = high.shape[1] == 1
    for r in range(out.shape[0]):
        for c in range(out.shape[1]):
            h = high[r, 0] if per_row else high[r, c]
            out[r, c] = (np.uint64(h) << np.uint64(shift)) | np.uint64(low[r, c])


@_jit
def row_sums(values: np.ndarray, out: np.ndarray) -> None:
    """The int64 sum of each row (flow latency from the hop latencies)."""
    for r in range(values.shape[0]):
        total = np.int64(0)
        for c in range(values.shape[1]):
            total += np.int64(values[r, c])
        out[r] = total


@_jit
def rows_equal(known: np.ndarray, slots: np.ndarray, rows: np.ndarray) -> bool:
    """Whether ``rows[r]`` equals ``known[slots[r]]`` for every r."""
    for r in range(rows.shape[0]):
        slot = slots[r]
        for c in range(rows.shape[1]):
            if known[slot, c] != rows[r, c]:
                return False
    return True
