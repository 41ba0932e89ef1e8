# Cython's view of events.py on the compiled fast path (fastpath.loader): the
# Simulator as an extension type whose event queue is a four-ary heap over
# one array of machine-word pairs (a time; a sequence number above the slot
# of two lists where the callbacks and their arguments wait), C-contiguous.
# Python ignores this file and runs the heapq branch.
# Stores into the callback and argument lists' slots (the slot numbers
# come from the free list, always in range).
from dataplane.runtime.items cimport put_item as _store

# The heap's packing of a sequence number above a slot, in machine words.
cdef long long _SLOT_BITS, _SLOT_MASK, _ORDER_LIMIT

# An event's target: the loop calls fire in C (cpdef: a Python subclass's
# fire is found and called instead).
cdef class Target:
    cpdef void fire(self, long long kind, object arg) except *

cdef class Simulator:
    # The clock and counters in machine words: an event's time is stored,
    # not boxed, and hot paths read the clock as a struct load.
    cdef public long long now_ns, events_run
    cdef public bint _stopped
    cdef object _heap, _seq
    cdef long long[::1] _keys, _free, _kinds
    cdef list _fns, _args
    cdef Py_ssize_t _n, _nfree
    cdef long long _next
    cpdef push(self, long long when_ns, fn, args)
    cpdef push_to(self, long long when_ns, Target target, long long kind, arg)
    cdef void _schedule(self, long long when_ns, fn, args, long long kind)
    cdef void _grow(self)
    cdef void _pop_head(self)
