# Cython's view of tables.py on the compiled fast path (common.accel): the
# C function a one-field lpm table's slots are read through (the machine
# words of a bytearray), and Entry as an extension type, so a built
# pipeline that declares its hit entry one reads the action and arguments
# as struct members, not by two lookups by name on a cold object (a built
# pipeline's key includes this file: dataplane.compiler.native). Python
# ignores this file; the attributes are those of __slots__.
from cpython.bytearray cimport PyByteArray_AS_STRING

cdef class Entry:
    cdef public object matches, action, args, priority, packets, bytes, meter, handle, ref
