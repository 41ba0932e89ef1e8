# Cython's view of network.py on the compiled fast path (fastpath.loader): the
# classes with __slots__ as extension types, so their own attribute reads
# are direct slot loads, and the per-packet methods as cpdef methods, which
# the module's own classes call as C functions (the locals declared below
# say which class a port, wire or switch is). The simulator attribute is a
# Simulator (events.pxd), so reading its clock and pushing an event are a
# struct load and a C call, and an egress queue takes EgressJobs only. Python
# ignores this file; the attributes are those of __slots__. Counters,
# times in nanoseconds, depths and busy flags are machine words (an
# increment is an add, not a new integer object; each is only ever given an
# int or a bool), the rest plain objects, and every method keeps its Python
# signature, so both paths behave the same.
cimport cython

from dataplane.runtime.switch cimport EgressJob
from dataplane.targets.sim.events cimport Simulator, Target

cdef class SimSwitch
cdef class SimHost

# A machine word, so a switch's fire compares its kind with it in C.
cdef long long SERVE_INPUT
# Serialization times in C arithmetic (network.py).
cdef long long _BITS_NS

cdef class Wire:
    cdef public Simulator sim
    cdef public object dst, dst_port, rng, bits_ns, _deliver
    # A float: the loss test is a C comparison, not a truth test of an object.
    cdef public double loss
    cdef Target _target
    cdef public long long delay_ns, bandwidth_bps, sent, lost, last_ns
    cdef public object jitter
    cdef list _jitter_times
    cdef Py_ssize_t _jitter_i
    cpdef long long serialization_ns(self, long long nbytes) except? -1
    @cython.locals(sim=Simulator, at=cython.longlong, times=list, i=Py_ssize_t)
    cpdef transmit(self, packet, long long ser_ns)

cdef class EgressPort(Target):
    cdef public Simulator sim
    cdef public object switch, port, queue, wire
    # A list (shared with the switch's): its emptiness a size read.
    cdef public list taps
    cdef object _append, _popleft
    cdef public Py_ssize_t depth
    cdef public long long gap_ns, free_at, drops, tx_packets, tx_bytes, max_depth
    cdef public bint busy
    # The depth a machine word: compared with the limit and stored in the
    # job in C (inferred, it was an integer object).
    @cython.locals(depth=Py_ssize_t)
    cpdef enqueue(self, EgressJob job)
    @cython.locals(job=EgressJob)
    cpdef void fire(self, long long kind, object arg) except *
    # Times in machine words: nanoseconds since the run began fit 64 bits
    # for 292 years, and // on them keeps Python's floor semantics. The job
    # an EgressJob, so its enqueue timestamp is a struct load (untyped, a
    # lookup by name through the type's descriptors, some 100 instructions).
    @cython.locals(sw=SimSwitch, sim=Simulator, now=cython.longlong,
                   offset=cython.longlong, enq_us=object, now_us=object,
                   us=cython.longlong, gap=cython.longlong, ser=cython.longlong)
    cpdef _serve(self, EgressJob job, long long enq_ns, enq_depth)
    @cython.locals(wire=Wire, ser=cython.longlong)
    cpdef long long _emit(self, bytes packet, long long now) except? -1

cdef class HostNic(Target):
    cdef public Simulator sim
    cdef public object wire, queue
    cdef object _append, _popleft
    cdef public bint busy
    cpdef send(self, packet)
    @cython.locals(wire=Wire, sim=Simulator, ser=cython.longlong)
    cpdef void fire(self, long long kind, object arg) except *

# SimSwitch and SimHost keep an instance __dict__: apps and tests may set
# attributes of their own on them, as they can on any Python object. They
# are final: with a __dict__, every C call of a cpdef method would otherwise
# look the method up on the instance in case Python code had replaced it
# (Cython's cache of that answer holds one instance at a time, so with many
# switches it missed: a lookup and a bound method made and freed per call).
# Nothing subclasses them or replaces their cpdef methods.
@cython.final
cdef class SimSwitch:
    cdef dict __dict__
    cdef public Simulator sim
    cdef public object recirculation_ns, name, engine, ports, input, unconnected
    cdef public list taps
    cdef object _input_append, _input_popleft
    cdef public long long offset_us, proc_gap_ns, recirculated, input_drops, rx_packets
    cdef public long long unconnected_drops
    cdef public object _draws
    cdef list _service_times
    cdef Py_ssize_t _service_i
    cdef public Py_ssize_t input_depth
    cdef public bint input_busy
    cdef list _by_port
    cdef public object _bound_engine, _engine_ingress, _engine_egress
    cdef public object _ingress_hop, _egress_hop
    cdef public Target _events
    cpdef _bind_engine(self)
    cpdef receive(self, port, packet)
    cpdef _queue_input(self, item)
    cpdef recirculate(self, item)
    cpdef _serve_input(self)
    @cython.locals(sim=Simulator, gap=cython.longlong, times=list, i=Py_ssize_t)
    cpdef _schedule_input(self)
    @cython.locals(job=EgressJob, us=cython.longlong, ts=object)
    cpdef ingress(self, port, packet, instance_type=*, preserved=*)
    # The port list typed list and its index a machine word: one C item read.
    @cython.locals(ep=EgressPort, by_port=list, p=Py_ssize_t)
    cpdef enqueue(self, EgressJob job)

@cython.final
cdef class SimHost:
    cdef dict __dict__
    cdef public Simulator sim
    cdef public object name, mac, ip, handlers
    cdef public HostNic nic  # None until linked; a C call to send through
    cdef public long long rx_packets, tx_packets
    cdef public Target _events
    cpdef receive(self, port, packet)

# The switches' and hosts' events: the event loop calls fire in C, and fire
# calls the final switch or host in C.
cdef class _SwitchEvents(Target):
    cdef SimSwitch switch
    cpdef void fire(self, long long kind, object arg) except *

cdef class _HostEvents(Target):
    cdef SimHost host
    cpdef void fire(self, long long kind, object arg) except *
