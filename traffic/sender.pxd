# Cython's view of sender.py on the compiled fast path (fastpath.loader):
# SentLog as an extension type, so record() appends to its four columns as
# typed lists read from struct members (a C call each) instead of looking
# each one up by name, and a Sender's iteration calls it as a C function.
# Python ignores this file; the attributes are those of __slots__.
from traffic.packets cimport PacketFactory

cdef class SentLog:
    cdef public list times_us, keys, seqs, sizes
    cpdef record(self, time_us, key, seq, size)
