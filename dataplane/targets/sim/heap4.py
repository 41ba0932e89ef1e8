"""The compiled fast path's event queue: a four-ary heap over one array of
machine-word pairs, behind the interface of ``events.EventQueue``.

An entry is the event's time and its sequence number shifted above the
slot where the event's callback, arguments and kind wait in two lists and
an array. Ordering costs integer compares instead of tuple compares, a
sift moves two machine words and never a Python reference, and an entry's
four children share a cache line (with a binary heap over three arrays a
pop touched three lines a level, some 15 levels at the GPINT scale). It
pops the same events in the same order as the reference: the keys, time
then sequence number, are the same and unique.

Compiled only (``events.new_queue`` chooses it): its sifts read the array
through a C pointer, which Python has not got.
"""

from __future__ import annotations

from array import array
from typing import Any

import cython

_FIRST_CAPACITY = 64
# A sequence number is packed above its slot: at most 2**26 (67 million)
# events pending at once, and 2**37 (137 billion) scheduled in one run.
# Machine words when compiled (heap4.pxd). (Literals: compiled, a shift of
# the C int 1 by 37 would overflow.)
_SLOT_BITS = 26
_SLOT_MASK = 0x3FF_FFFF  # 2**26 - 1
_ORDER_LIMIT = 0x20_0000_0000  # 2**37


class EventHeap:
    """``events.EventQueue``'s interface over the four-ary heap."""

    def __init__(self) -> None:
        # Heap entry i: _keys[2i] its time, _keys[2i + 1] its sequence
        # number << _SLOT_BITS | its slot.
        self._keys = array("q", bytes(16 * _FIRST_CAPACITY))
        # Slots not holding an event, taken from the end.
        self._free = array("q", range(_FIRST_CAPACITY - 1, -1, -1))
        self._nfree = _FIRST_CAPACITY
        self._fns: list[Any] = [None] * _FIRST_CAPACITY
        self._args: list[Any] = [None] * _FIRST_CAPACITY
        self._kinds = array("q", bytes(8 * _FIRST_CAPACITY))
        self._next = 0
        self.n = 0
        self.head_ns = 0
        self.popped_args: Any = None
        self.popped_kind = -1

    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.locals(when=cython.longlong, pos=cython.Py_ssize_t, parent=cython.Py_ssize_t,
                   order=cython.longlong, slot=cython.Py_ssize_t, keys=cython.p_longlong)
    def push(self, when_ns: int, fn: Any, args: Any, kind: int) -> None:
        """``fn`` waits with ``args`` and ``kind`` in a free slot, and the
        heap takes its time, order and slot."""
        when = when_ns
        if self._next >= _ORDER_LIMIT:
            raise OverflowError(f"more than {_ORDER_LIMIT:,} events in one run")
        if self._nfree == 0:
            self._grow()
        self._nfree -= 1
        slot = self._free[self._nfree]
        _store(self._fns, slot, fn)  # noqa: F821 (cimported in heap4.pxd)
        _store(self._args, slot, args)  # noqa: F821
        self._kinds[slot] = kind
        order = self._next
        self._next += 1
        pos = self.n
        self.n += 1
        keys = cython.address(self._keys[0])  # a pointer: no view to acquire
        # Sift the hole up; a later push never goes before an equal time.
        while pos > 0:
            parent = (pos - 1) >> 2
            if keys[2 * parent] <= when:
                break
            keys[2 * pos] = keys[2 * parent]
            keys[2 * pos + 1] = keys[2 * parent + 1]
            pos = parent
        keys[2 * pos] = when
        keys[2 * pos + 1] = (order << _SLOT_BITS) | slot
        if pos == 0:
            self.head_ns = when

    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.locals(i=cython.Py_ssize_t, cap=cython.Py_ssize_t, old_keys=cython.longlong[::1],
                   old_kinds=cython.longlong[::1])
    def _grow(self) -> None:
        """Double the capacity (called with every slot in use)."""
        cap = len(self._fns)
        if 2 * cap > _SLOT_MASK + 1:
            raise OverflowError(f"more than {_SLOT_MASK + 1:,} events pending at once")
        old_keys = self._keys
        old_kinds = self._kinds
        self._keys = array("q", bytes(32 * cap))
        self._kinds = array("q", bytes(16 * cap))
        for i in range(cap):
            self._keys[2 * i] = old_keys[2 * i]
            self._keys[2 * i + 1] = old_keys[2 * i + 1]
            self._kinds[i] = old_kinds[i]
        self._free = array("q", range(2 * cap - 1, cap - 1, -1)) + array("q", bytes(8 * cap))
        self._nfree = cap
        self._fns.extend([None] * cap)
        self._args.extend([None] * cap)

    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.locals(n=cython.Py_ssize_t, pos=cython.Py_ssize_t, child=cython.Py_ssize_t,
                   end=cython.Py_ssize_t, j=cython.Py_ssize_t, best=cython.Py_ssize_t,
                   when=cython.longlong, key=cython.longlong, bw=cython.longlong,
                   bk=cython.longlong, jw=cython.longlong, head=cython.Py_ssize_t,
                   keys=cython.p_longlong)
    def pop(self) -> Any:
        """Remove the earliest event and free its slot: its callback is
        returned, its arguments and kind left in ``popped_args`` and
        ``popped_kind``."""
        keys = cython.address(self._keys[0])  # a pointer: no view to acquire
        head = keys[1] & _SLOT_MASK
        fn = self._fns[head]
        self.popped_args = self._args[head]
        self.popped_kind = self._kinds[head]
        _store(self._fns, head, None)  # noqa: F821
        _store(self._args, head, None)  # noqa: F821
        self._free[self._nfree] = head
        self._nfree += 1
        n = self.n - 1
        self.n = n
        if n == 0:
            return fn
        # Sift the last entry down from the root: at each level it goes
        # below the least of the (up to four) children, or stops.
        when = keys[2 * n]
        key = keys[2 * n + 1]
        pos = 0
        while True:
            child = 4 * pos + 1
            if child >= n:
                break
            end = child + 4
            if end > n:
                end = n
            best = child
            bw = keys[2 * child]
            bk = keys[2 * child + 1]
            for j in range(child + 1, end):
                jw = keys[2 * j]
                if jw < bw or (jw == bw and keys[2 * j + 1] < bk):
                    best = j
                    bw = jw
                    bk = keys[2 * j + 1]
            if bw > when or (bw == when and bk > key):
                break
            keys[2 * pos] = bw
            keys[2 * pos + 1] = bk
            pos = best
        keys[2 * pos] = when
        keys[2 * pos + 1] = key
        self.head_ns = keys[0]
        return fn
