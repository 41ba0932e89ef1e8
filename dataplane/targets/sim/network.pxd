# Cython's view of network.py on the compiled fast path (common.accel): the
# classes with __slots__ as extension types, so their own attribute reads
# are direct slot loads, and the per-packet methods as cpdef methods, which
# the module's own classes call as C functions (the locals declared below
# say which class a port, wire or switch is). The simulator attribute is a
# Simulator (events.pxd), so reading its clock and pushing an event are a
# struct load and a C call, and an egress queue takes EgressJobs only. Python
# ignores this file; the attributes are those of __slots__, the rest plain
# objects, and every method keeps its Python signature, so both paths
# behave the same.
cimport cython

from dataplane.runtime.switch cimport EgressJob
from dataplane.targets.sim.events cimport Simulator

cdef class SimSwitch

cdef class Wire:
    cdef public Simulator sim
    cdef public object dst, dst_port, delay_ns, loss, rng, bits_ns, sent, lost
    cdef public object bandwidth_bps, _deliver
    cpdef serialization_ns(self, nbytes)
    @cython.locals(sim=Simulator)
    cpdef transmit(self, packet, ser_ns)

cdef class EgressPort:
    cdef public Simulator sim
    cdef public object switch, port, queue, depth, gap_ns, wire, busy, free_at
    cdef public object drops, tx_packets, tx_bytes, max_depth, taps
    cdef object _on_free
    cpdef enqueue(self, EgressJob job)
    cpdef _dequeue(self)
    # Times in machine words: nanoseconds since the run began fit 64 bits
    # for 292 years, and // on them keeps Python's floor semantics.
    @cython.locals(sw=SimSwitch, wire=Wire, sim=Simulator, now=cython.longlong,
                   offset=cython.longlong,
                   us=cython.longlong, gap=cython.longlong, ser=cython.longlong)
    cpdef _serve(self, job, long long enq_ns, enq_depth)

cdef class HostNic:
    cdef public Simulator sim
    cdef public object wire, queue, busy
    cdef object _on_sent
    cpdef send(self, packet)
    @cython.locals(wire=Wire, sim=Simulator)
    cpdef _next(self)

# SimSwitch and SimHost keep an instance __dict__: apps and tests may set
# attributes of their own on them, as they can on any Python object.
cdef class SimSwitch:
    cdef dict __dict__
    cdef public Simulator sim
    cdef public object recirculation_ns, recirculated, name, engine, ports, offset_us
    cdef public object proc_gap_ns, input, input_depth, input_busy, input_drops, rx_packets
    cdef public object taps, unconnected, unconnected_drops
    cdef object _on_input
    cpdef receive(self, port, packet)
    @cython.locals(sim=Simulator)
    cpdef _queue_input(self, item)
    cpdef recirculate(self, item)
    @cython.locals(sim=Simulator)
    cpdef _serve_input(self)
    @cython.locals(ep=EgressPort, job=EgressJob)
    cpdef ingress(self, port, packet, instance_type=*, preserved=*)
    @cython.locals(ep=EgressPort)
    cpdef enqueue(self, EgressJob job)

cdef class SimHost:
    cdef dict __dict__
    cdef public Simulator sim
    cdef public object name, mac, ip, nic, handlers, rx_packets, tx_packets
    cpdef receive(self, port, packet)
