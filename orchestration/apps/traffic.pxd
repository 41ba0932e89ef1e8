# Cython's view of traffic.py on the compiled fast path (fastpath.loader): a
# schedule's playback as a target of the event loop, whose fire the loop
# calls in C, and which sends through its host and schedules through its
# simulator as C calls. Python ignores this file.
cimport cython

from dataplane.targets.sim.events cimport Simulator, Target
from dataplane.targets.sim.network cimport SimHost

cdef class Playback(Target):
    cdef public long long sent
    cdef public bint cancelled
    cdef Simulator _sim
    cdef SimHost _host
    cdef object _events
    cpdef void fire(self, long long kind, object arg) except *
    @cython.locals(sim=Simulator, when=cython.longlong)
    cpdef _next(self)
