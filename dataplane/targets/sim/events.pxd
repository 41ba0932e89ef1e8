# Cython's view of events.py on the compiled fast path (common.accel): the
# Simulator as an extension type, so its own attribute reads are direct
# slot loads. Python ignores this file; the attributes are those of
# __slots__, all plain objects, so both paths behave the same.
cdef class Simulator:
    cdef public object now_ns, heap, seq, events_run, _stopped
