# Cython's view of receiver.py on the compiled fast path (fastpath.loader):
# Receiver as an extension type, so receive() reads its five columns as
# struct members and appends to them as typed lists (a C call each)
# instead of looking each one up by name on every packet. Python ignores
# this file; the attributes are those of __slots__.
cimport cython

cdef class Receiver:
    cdef public object name
    cdef public list times_us, sizes, hashes, keys, seqs
    # A C call from on_arrival (and __call__); a Python subclass's receive
    # is still found and called.
    cpdef receive(self, frame, time_us)
    cpdef on_arrival(self, host, frame, long long time_ns)

# parse_frame's compiled branch copies the flow's 13 key bytes and the
# payload out of the frame with these (no slice objects).
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.string cimport memcpy
