# Cython's view of heap4.py (fastpath.loader): the compiled event queue as
# an extension type whose methods the simulator's loop calls in C.
# Stores into the callback and argument lists' slots (the slot numbers
# come from the free list, always in range).
cimport cython
from dataplane.runtime.items cimport put_item as _store

cdef long long _SLOT_BITS, _SLOT_MASK, _ORDER_LIMIT

@cython.final
cdef class EventHeap:
    cdef long long[::1] _keys, _free, _kinds
    cdef list _fns, _args
    cdef Py_ssize_t _nfree
    cdef long long _next
    cdef public Py_ssize_t n
    cdef public long long head_ns
    cdef public object popped_args
    cdef public long long popped_kind
    cdef void push(self, long long when_ns, fn, args, long long kind)
    cdef void _grow(self)
    cdef object pop(self)
