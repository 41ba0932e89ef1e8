# Cython's view of tables.py on the compiled fast path (fastpath.loader): the
# C function a one-field lpm table's slots are read through (the machine
# words of a bytearray), and Entry as an extension type, so a built
# pipeline that declares its hit entry one reads the action and arguments
# as struct members, not by two lookups by name on a cold object (a built
# pipeline's key includes this file: dataplane.compiler.native). Python
# ignores this file; the attributes are those of __slots__.
from cpython.bytearray cimport PyByteArray_AS_STRING

cdef class Entry:
    cdef public object matches, action, args, priority, packets, bytes, meter, handle, ref


# The slot of a one-field lpm table's answer for ``value`` among ``n`` (a
# power of two): Fibonacci hashing (2**64 / golden ratio), so addresses
# that differ in one byte, as a network's hosts do, land in different
# slots; the product's bits from 32 up index up to 2**32 slots. The one
# hash of both lpm_slots.slots_lookup, which fills the slots, and
# lpm1_lookup below, which reads them.
cdef inline Py_ssize_t lpm1_slot(unsigned long long value, Py_ssize_t n):
    return <Py_ssize_t>(((value * 0x9E3779B97F4A7C15ULL) >> 32) & <unsigned long long>(n - 1))


# A one-field lpm table's lookup for a built pipeline (codegen: the table's
# apply), without the key's tuple and the call through Python's protocol:
# the answer the slots already hold for ``key``, read in C, or the table's
# own lookup ``miss`` when they hold none or the table has no slots (a key
# wider than 63 bits, or tables.py running as Python).
cdef inline object lpm1_lookup(bytearray keys, list found, object key, object miss):
    cdef Py_ssize_t n = len(found)
    cdef unsigned long long value
    cdef Py_ssize_t i
    if n:
        value = key
        i = lpm1_slot(value, n)
        if (<unsigned long long *>PyByteArray_AS_STRING(keys))[i] == value + 1:
            return found[i]
    return miss((key,))
