# Cython's view of network.py on the compiled fast path (common.accel): the
# classes with __slots__ as extension types, so their own attribute reads
# are direct slot loads, and the per-packet methods as cpdef methods, which
# the module's own classes call as C functions (the locals declared below
# say which class a port, wire or switch is). Python ignores this file; the
# attributes are those of __slots__, all plain objects, and every method
# keeps its Python signature, so both paths behave the same.
cimport cython

cdef class SimSwitch

cdef class Wire:
    cdef public object sim, dst, dst_port, delay_ns, loss, rng, bits_ns, sent, lost
    cdef public object bandwidth_bps, _deliver
    cpdef serialization_ns(self, nbytes)
    cpdef transmit(self, packet, ser_ns)

cdef class EgressPort:
    cdef public object sim, switch, port, queue, depth, gap_ns, wire, busy, free_at
    cdef public object drops, tx_packets, tx_bytes, max_depth, taps
    cdef object _on_free
    cpdef enqueue(self, job)
    cpdef _dequeue(self)
    # Times in machine words: nanoseconds since the run began fit 64 bits
    # for 292 years, and // on them keeps Python's floor semantics.
    @cython.locals(sw=SimSwitch, wire=Wire, now=cython.longlong, offset=cython.longlong,
                   us=cython.longlong, gap=cython.longlong, ser=cython.longlong)
    cpdef _serve(self, job, long long enq_ns, enq_depth)

cdef class HostNic:
    cdef public object sim, wire, queue, busy
    cdef object _on_sent
    cpdef send(self, packet)
    @cython.locals(wire=Wire)
    cpdef _next(self)

# SimSwitch and SimHost keep an instance __dict__: apps and tests may set
# attributes of their own on them, as they can on any Python object.
cdef class SimSwitch:
    cdef dict __dict__
    cdef public object sim, recirculation_ns, recirculated, name, engine, ports, offset_us
    cdef public object proc_gap_ns, input, input_depth, input_busy, input_drops, rx_packets
    cdef public object taps, unconnected, unconnected_drops
    cdef object _on_input
    cpdef receive(self, port, packet)
    cpdef _queue_input(self, item)
    cpdef recirculate(self, item)
    cpdef _serve_input(self)
    @cython.locals(ep=EgressPort)
    cpdef ingress(self, port, packet, instance_type=*, preserved=*)
    @cython.locals(ep=EgressPort)
    cpdef enqueue(self, job)

cdef class SimHost:
    cdef dict __dict__
    cdef public object sim, name, mac, ip, nic, handlers, rx_packets, tx_packets
    cpdef receive(self, port, packet)
