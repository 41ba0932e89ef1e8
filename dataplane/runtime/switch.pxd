# Cython's view of switch.py on the compiled fast path (common.accel):
# EgressJob, made once per packet-hop, as an extension type, so the egress
# closure (which declares its job one) reads the four fields as struct
# members instead of looking them up by name. Python ignores this file; the
# attributes are those of __slots__, all plain objects.
cdef class EgressJob:
    cdef public object port, state, payload, length
