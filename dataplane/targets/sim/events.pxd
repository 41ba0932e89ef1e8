# Cython's view of events.py on the compiled fast path (fastpath.loader): the
# Simulator as an extension type over the four-ary heap of heap4.pxd (the
# queue new_queue chooses when compiled). Python ignores this file and runs
# the reference EventQueue.
from dataplane.targets.sim.heap4 cimport EventHeap

# An event's target: the loop calls fire in C (cpdef: a Python subclass's
# fire is found and called instead).
cdef class Target:
    cpdef void fire(self, long long kind, object arg) except *

cdef class Simulator:
    # The clock and counters in machine words: an event's time is stored,
    # not boxed, and hot paths read the clock as a struct load.
    cdef public long long now_ns, events_run
    cdef public bint _stopped
    cdef EventHeap _queue
    cpdef push(self, long long when_ns, fn, args)
    cpdef push_to(self, long long when_ns, Target target, long long kind, arg)
