"""Virtual time: a discrete-event loop with an asyncio-like clock.

Time is kept in integer nanoseconds so serialization delays of small packets
on fast links stay exact and runs are bit-for-bit reproducible; P4
timestamps and apps see microseconds and seconds derived from it.

Events run in (time, sequence number) order. In Python the queue is
``heapq`` over ``(when_ns, seq, fn, args)`` tuples; on the compiled fast
path (``fastpath.loader``, ``events.pxd``) it is a four-ary heap over one
array of machine-word pairs: the time, and the sequence number shifted
above the slot where the event's callback and arguments wait in two lists.
Ordering costs integer compares instead of tuple compares, a sift moves
two machine words and never a Python reference, and an entry's four
children share a cache line (with a binary heap over three arrays a pop
touched three lines a level, some 15 levels at the GPINT scale). Both pop
the same events in the same order: the keys are the same and unique.

An event is a callable and its arguments (``push``), or a ``Target`` and
a kind and one argument (``push_to``): compiled, the loop calls the
target's ``fire`` as a C method, where a callable is a call through
Python's protocol with an argument tuple (the sim's switches, ports and
hosts are targets: a few hundred instructions fewer an event).
"""

from __future__ import annotations

import heapq
import itertools
from array import array
from collections.abc import Callable
from typing import Any

import cython

NS_PER_US = 1_000
NS_PER_S = 1_000_000_000
_FIRST_CAPACITY = 64
# The compiled heap packs an event's sequence number above its slot: at
# most 2**26 (67 million) events pending at once, and 2**37 (137 billion)
# scheduled in one run. Machine words when compiled (events.pxd).
# (Literals: compiled, a shift of the C int 1 by 37 would overflow.)
_SLOT_BITS = 26
_SLOT_MASK = 0x3FF_FFFF  # 2**26 - 1
_ORDER_LIMIT = 0x20_0000_0000  # 2**37


class Target:
    """What ``Simulator.push_to`` schedules: ``fire(kind, arg)`` runs the
    event, ``kind`` (at least 0) saying which of the target's events it
    is. Compiled, an extension type whose ``fire`` the loop calls in C; a
    Python subclass overrides it as any method."""

    __slots__ = ()

    def fire(self, kind: int, arg: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} has no events")


class Simulator:
    """The event loop of one simulated network.

    Events scheduled for the same instant run in the order they were
    scheduled (a sequence number breaks ties), which keeps runs
    deterministic. Hot paths call ``push(when_ns, fn, args)`` (no
    clamping: never earlier than ``now_ns``).
    """

    __slots__ = ("now_ns", "events_run", "_stopped", "_heap", "_seq",
                 "_keys", "_free", "_nfree", "_fns", "_args", "_kinds", "_n", "_next")

    def __init__(self) -> None:
        self.now_ns = 0
        self.events_run = 0
        self._stopped = False
        if cython.compiled:
            # Heap entry i: _keys[2i] its time, _keys[2i + 1] its sequence
            # number << _SLOT_BITS | its slot.
            self._keys = array("q", bytes(16 * _FIRST_CAPACITY))
            # Slots not holding an event, taken from the end.
            self._free = array("q", range(_FIRST_CAPACITY - 1, -1, -1))
            self._nfree = _FIRST_CAPACITY
            self._fns = [None] * _FIRST_CAPACITY
            self._args = [None] * _FIRST_CAPACITY
            # Per slot: a target event's kind, or -1 for a callable's.
            self._kinds = array("q", bytes(8 * _FIRST_CAPACITY))
            self._n = 0
            self._next = 0
        else:
            self._heap: list[tuple[int, int, Callable[..., Any], tuple[Any, ...]]] = []
            self._seq = itertools.count()

    # -- clock interface for apps (seconds, like asyncio's loop) ------------

    def now(self) -> float:
        """Current virtual time in seconds."""
        return self.now_ns / NS_PER_S

    def now_us(self) -> int:
        return self.now_ns // NS_PER_US

    def call_later(self, delay_s: float, fn: Callable[..., Any], *args: Any) -> None:
        self.at_ns(self.now_ns + round(delay_s * NS_PER_S), fn, *args)

    def call_at(self, when_s: float, fn: Callable[..., Any], *args: Any) -> None:
        self.at_ns(round(when_s * NS_PER_S), fn, *args)

    # -- engine interface (nanoseconds) -------------------------------------

    def at_ns(self, when_ns: int, fn: Callable[..., Any], *args: Any) -> None:
        if when_ns < self.now_ns:
            when_ns = self.now_ns
        self.push(when_ns, fn, args)

    def after_ns(self, delay_ns: int, fn: Callable[..., Any], *args: Any) -> None:
        self.push(self.now_ns + delay_ns, fn, args)

    def push(self, when_ns: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        """Run ``fn(*args)`` at ``when_ns`` (not before ``now_ns``)."""
        if not cython.compiled:
            heapq.heappush(self._heap, (when_ns, next(self._seq), fn, args))
            return
        self._schedule(when_ns, fn, args, -1)

    def push_to(self, when_ns: int, target: Target, kind: int, arg: Any) -> None:
        """Run ``target.fire(kind, arg)`` at ``when_ns`` (not before
        ``now_ns``; ``kind`` at least 0), in turn with ``push``'s events."""
        if not cython.compiled:
            heapq.heappush(self._heap, (when_ns, next(self._seq), target.fire, (kind, arg)))
            return
        self._schedule(when_ns, target, arg, kind)

    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.locals(when=cython.longlong, pos=cython.Py_ssize_t, parent=cython.Py_ssize_t,
                   order=cython.longlong, slot=cython.Py_ssize_t, keys=cython.p_longlong)
    def _schedule(self, when_ns: int, fn: Any, args: Any, kind: int) -> None:
        """The compiled queue's push: ``fn`` waits with ``args`` in a free
        slot, and the heap takes its time, order and slot."""
        when = when_ns
        if self._next >= _ORDER_LIMIT:
            raise OverflowError(f"more than {_ORDER_LIMIT:,} events in one run")
        if self._nfree == 0:
            self._grow()
        self._nfree -= 1
        slot = self._free[self._nfree]
        _store(self._fns, slot, fn)  # noqa: F821 (cimported in events.pxd)
        _store(self._args, slot, args)  # noqa: F821
        self._kinds[slot] = kind
        order = self._next
        self._next += 1
        pos = self._n
        self._n += 1
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
    def _pop_head(self) -> None:
        """Remove the earliest event and free its slot (compiled path; the
        caller has read its callback and arguments)."""
        keys = cython.address(self._keys[0])  # a pointer: no view to acquire
        head = keys[1] & _SLOT_MASK
        _store(self._fns, head, None)  # noqa: F821
        _store(self._args, head, None)  # noqa: F821
        self._free[self._nfree] = head
        self._nfree += 1
        n = self._n - 1
        self._n = n
        if n == 0:
            return
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

    def stop(self) -> None:
        """Stop ``run`` after the current event."""
        self._stopped = True

    def pending(self) -> int:
        if cython.compiled:
            return self._n
        return len(self._heap)

    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.locals(limit=cython.longlong, when=cython.longlong, count=cython.longlong,
                   next_progress=cython.longlong, head=cython.Py_ssize_t, kind=cython.longlong)
    def run(self, until_ns: int | None = None,
            progress: Callable[[int], None] | None = None,
            progress_every_ns: int = NS_PER_S) -> int:
        """Run events up to and including ``until_ns`` (or until none are
        left). Returns the number of events run. ``progress`` is called with
        the virtual time about every ``progress_every_ns``."""
        limit = until_ns if until_ns is not None else 1 << 62
        next_progress = self.now_ns + progress_every_ns
        count = 0
        self._stopped = False
        if cython.compiled:
            while self._n and self._keys[0] <= limit and not self._stopped:
                when = self._keys[0]
                head = self._keys[1] & _SLOT_MASK
                fn = self._fns[head]
                args = self._args[head]
                kind = self._kinds[head]
                self._pop_head()
                self.now_ns = when
                if kind < 0:
                    fn(*args)
                else:
                    cython.cast(Target, fn).fire(kind, args)
                count += 1
                if progress is not None and when >= next_progress:
                    progress(when)
                    next_progress = when + progress_every_ns
        else:
            heap = self._heap
            pop = heapq.heappop
            while heap and heap[0][0] <= limit and not self._stopped:
                when, _, fn, args = pop(heap)
                self.now_ns = when
                fn(*args)
                count += 1
                if progress is not None and when >= next_progress:
                    progress(when)
                    next_progress = when + progress_every_ns
        if until_ns is not None and not self._stopped:
            self.now_ns = max(self.now_ns, until_ns)
        self.events_run += count
        return count

