# Cython's view of switch.py on the compiled fast path (fastpath.loader):
# EgressJob, made once per packet-hop, as an extension type, so the egress
# closure (which declares its job one) reads its fields as struct members
# instead of looking them up by name. Python ignores this file; the
# attributes are those of __slots__, all plain objects. (Its freelist and
# no_gc decorators are on the class in switch.py: Cython takes them there.)
cdef class EgressJob:
    cdef public object port, state, length
    cdef public bytes frame
    cdef public Py_ssize_t offset
    # Machine words: the sim's egress port stores them in C while the job
    # waits (no tuple and no integer objects per queued packet).
    cdef public long long enq_ns
    cdef public Py_ssize_t enq_depth
    cdef public object enq_us

# The compiled reset of a finished state (switch._reset): items.reset_runs
# over runs read as machine words from a bytes object (_packed_spans).
cimport cython
from cpython.bytearray cimport PyByteArray_AS_STRING
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.string cimport memcpy
from dataplane.runtime.items cimport reset_runs as _reset_runs

cdef inline void _reset(list s, list template, bytes spans) except *

# An egress job made without __init__'s argument parsing (the engine's, one
# per packet-hop): the allocator, then the fields __init__ fills too.
@cython.locals(job=EgressJob)
cdef EgressJob _new_job(object port, object state, bytes frame, object length,
                        Py_ssize_t offset)
cdef inline void _fill_job(EgressJob job, object port, object state, bytes frame,
                           object length, Py_ssize_t offset)

# The deparse buffer's first n bytes and the payload (a frame from an
# offset) as one bytes object: two memcpy into a bytes object made at its
# final size.
@cython.locals(size=Py_ssize_t, p=cython.p_char)
cdef bytes _joined(bytearray buffer, Py_ssize_t n, bytes frame, Py_ssize_t offset)

# The hop functions' stores into fixed slots of a state (_put): the hop
# functions store only into slots of the template, and every state they
# hold has its length (an egress job's is checked).
from dataplane.runtime.items cimport push_item as _push_item
from dataplane.runtime.items cimport put_item as _put
from dataplane.runtime.items cimport take_last as _take_last
