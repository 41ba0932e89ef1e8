# Cython's view of packets.py on the compiled fast path (fastpath.loader):
# PacketFactory as an extension type, so packet() (cpdef) reads its fields as
# struct members (the sums' bases as machine words) instead of looking
# them up by name, and the C functions its compiled branch builds a frame
# with. Python ignores this file; the attributes are those of __slots__.
cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize

cdef class PacketFactory:
    cdef public object flow, key, frame_size
    cdef bytes _template
    cdef unsigned long long _ip_base, _l4_base
    cdef Py_ssize_t _l4, _csum_off, _pay_off
    cdef object _payload_size
    cdef bint _tcp, _udp_csum
    cdef unsigned long long _sport, _dport
    # A C call from a sender's iteration (sender.pxd types its factories).
    @cython.locals(ip_id=cython.ulonglong, s=cython.ulonglong, total=cython.ulonglong,
                   t=cython.ulonglong, ck=cython.ulonglong, ip_ck=cython.ulonglong,
                   sp=cython.ulonglong, dp=cython.ulonglong, buf=bytearray,
                   p=cython.p_uchar, tcp=cython.bint, csum=cython.bint)
    cpdef bytes packet(self, seq, sport=*, dport=*)
