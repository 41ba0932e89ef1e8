"""Many datagrams per system call: Linux ``recvmmsg(2)`` and ``sendmmsg(2)``
through ctypes, into and out of preallocated buffers.

One ``recv`` per datagram costs a Python call, a system call and an object
per report, which tops out near a million reports per second before any
parsing. ``MmsgReceiver`` takes up to a whole batch per call into fixed
slots of one buffer and gives the lengths as a numpy array, so the
collector reads the reports in place as rows (``Collector.feed_rows``);
``MmsgSender`` sends slices of a preallocated block of payloads, for load
generators. ``available()`` says whether the calls exist here (Linux, glibc
or musl); elsewhere the receiver falls back to ``recv_into``.

Cheaper still on Linux >= 5.0: UDP segmentation offload. ``GsoSender``
hands the kernel up to ``GSO_SEGMENTS`` equal-sized datagrams in one buffer
(``UDP_SEGMENT``), and a socket with ``UDP_GRO`` set (``enable_gro``)
receives runs of equal-sized datagrams from one sender as one buffer with
the segment size beside it; the kernel's per-datagram work then happens
once per run. On loopback this is what moves a million reports a second
through two cores.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import socket
import sys

import numpy as np

MSG_DONTWAIT = 0x40
MSG_TRUNC = 0x20
MAX_VLEN = 1024  # UIO_MAXIOV: the kernel takes at most this many messages per call
SOL_UDP = 17
UDP_SEGMENT = 103
UDP_GRO = 104
GSO_SEGMENTS = 128  # UDP_MAX_SEGMENTS of Linux 6 (64 before): datagrams per segmented send
GRO_BUFFER = 65536  # a coalesced run is at most one IP packet's worth
_IP_PAYLOAD = 65507  # the most a (super-)datagram may carry


def enable_gro(sock: socket.socket) -> bool:
    """Ask for coalesced receive on ``sock``; False where the kernel has none."""
    try:
        sock.setsockopt(SOL_UDP, UDP_GRO, 1)
    except OSError:
        return False
    return True


def gro_segment(ancdata: list[tuple[int, int, bytes]], default: int) -> int:
    """The segment size the kernel put beside a coalesced run (``default``,
    the whole buffer, when it was one datagram)."""
    for level, kind, data in ancdata:
        if level == SOL_UDP and kind == UDP_GRO and len(data) >= 4:
            return int.from_bytes(data[:4], sys.byteorder)
    return default


class _IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class _MsgHdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                ("iov", ctypes.c_void_p), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]


class _MMsgHdr(ctypes.Structure):
    _fields_ = [("hdr", _MsgHdr), ("len", ctypes.c_uint)]


_LIBC: ctypes.CDLL | None = None


def _libc() -> ctypes.CDLL | None:
    global _LIBC
    if _LIBC is None and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.recvmmsg.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint,
                                      ctypes.c_int, ctypes.c_void_p]
            libc.sendmmsg.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint,
                                      ctypes.c_int]
            _LIBC = libc
        except (OSError, AttributeError):
            return None
    return _LIBC


def available() -> bool:
    return _libc() is not None


def _headers(count: int, buffer: np.ndarray, slot: int,
             lengths: np.ndarray | None = None) -> ctypes.Array[_MMsgHdr]:
    """``count`` message headers, message i's one iovec on bytes
    [i * slot, i * slot + length) of ``buffer`` (length ``slot`` unless given)."""
    iovecs = (_IoVec * count)()
    headers = (_MMsgHdr * count)()
    base = buffer.ctypes.data
    for i in range(count):
        iovecs[i].base = base + i * slot
        iovecs[i].len = slot if lengths is None else int(lengths[i])
        headers[i].hdr.iov = ctypes.addressof(iovecs[i])
        headers[i].hdr.iovlen = 1
    headers._iovecs = iovecs  # type: ignore[attr-defined]  # keep them alive with the headers
    return headers


class MmsgReceiver:
    """``recvmmsg`` on a non-blocking socket into ``slots`` fixed slots of
    ``slot`` bytes (``rows``: a (slots, slot) uint8 array). ``receive(first)``
    fills slots from ``first`` on and returns how many it filled; their
    lengths on the wire are in ``lengths`` and ``truncated`` marks datagrams
    longer than a slot (cut to it by the kernel)."""

    def __init__(self, sock: socket.socket, slots: int, slot: int) -> None:
        libc = _libc()
        if libc is None:
            raise OSError("recvmmsg is not available here")
        self._call = libc.recvmmsg
        self._fd = sock.fileno()
        self.slot = slot
        self.rows = np.zeros((slots, slot), dtype=np.uint8)
        self._headers = _headers(slots, self.rows, slot)
        self._base = ctypes.addressof(self._headers)
        fields = np.frombuffer(self._headers, dtype=np.uint8).reshape(slots, -1)
        size = ctypes.sizeof(_MMsgHdr)
        self._lengths = fields[:, _MMsgHdr.len.offset:_MMsgHdr.len.offset + 4].view(np.uint32)
        flag_at = _MsgHdr.flags.offset
        self._flags = fields[:, flag_at:flag_at + 4].view(np.int32)
        assert fields.shape[1] == size

    @property
    def lengths(self) -> np.ndarray:
        """Bytes received in each slot (a view: valid until the next call)."""
        return self._lengths[:, 0]

    @property
    def truncated(self) -> np.ndarray:
        return (self._flags[:, 0] & MSG_TRUNC) != 0

    def receive(self, first: int) -> int:
        """Datagrams waiting, into slots ``first``...; 0 when there are none."""
        vlen = min(MAX_VLEN, len(self.rows) - first)
        if vlen <= 0:
            return 0
        got = self._call(self._fd, self._base + first * ctypes.sizeof(_MMsgHdr), vlen,
                         MSG_DONTWAIT | MSG_TRUNC, None)  # TRUNC: true lengths
        if got < 0:
            err = ctypes.get_errno()
            if err in (11, 4):  # EAGAIN, EINTR: nothing waiting
                return 0
            raise OSError(err, os.strerror(err))
        return int(got)


class MmsgSender:
    """``sendmmsg`` of a fixed block of payloads on a connected socket:
    ``send(first, count)`` sends payloads first..first+count-1 (cyclically)
    in calls of up to ``MAX_VLEN``, returning how many the kernel took."""

    def __init__(self, sock: socket.socket, payloads: list[bytes]) -> None:
        libc = _libc()
        if libc is None:
            raise OSError("sendmmsg is not available here")
        self._call = libc.sendmmsg
        self._fd = sock.fileno()
        slot = max(map(len, payloads))
        # the block twice over, so any cyclic run of up to len(payloads) is contiguous
        self.count = len(payloads)
        block = np.zeros((2 * self.count, slot), dtype=np.uint8)
        lengths = np.zeros(2 * self.count, dtype=np.int64)
        for i, payload in enumerate(payloads + payloads):
            block[i, :len(payload)] = np.frombuffer(payload, dtype=np.uint8)
            lengths[i] = len(payload)
        self._block = block
        self._headers = _headers(2 * self.count, block, slot, lengths)
        self._base = ctypes.addressof(self._headers)
        self._size = ctypes.sizeof(_MMsgHdr)

    def send(self, first: int, count: int) -> int:
        sent = 0
        while sent < count:
            at = (first + sent) % self.count
            vlen = min(MAX_VLEN, count - sent, self.count)
            got = self._call(self._fd, self._base + at * self._size, vlen, 0)
            if got <= 0:
                err = ctypes.get_errno()
                if got < 0 and err not in (11, 4, 105):  # EAGAIN, EINTR, ENOBUFS
                    raise OSError(err, os.strerror(err))
                break
            sent += got
        return sent


class GsoSender:
    """Segmented sends of a block of equal-sized payloads on a connected
    socket: ``send(first, count)`` as ``MmsgSender.send``, ``GSO_SEGMENTS``
    datagrams per system call. Raises OSError where ``UDP_SEGMENT`` is not
    supported, and ValueError for payloads of different sizes."""

    def __init__(self, sock: socket.socket, payloads: list[bytes]) -> None:
        sizes = {len(p) for p in payloads}
        if len(sizes) != 1:
            raise ValueError("segmented sends need payloads of one size")
        self.size = sizes.pop()
        sock.setsockopt(SOL_UDP, UDP_SEGMENT, self.size)
        self._send = sock.send
        self.count = len(payloads)
        self._block = memoryview(b"".join(payloads + payloads))
        # As many as one send may carry; kernels before 6.x take 64 at most.
        self.segments = max(1, min(GSO_SEGMENTS, _IP_PAYLOAD // self.size))

    def send(self, first: int, count: int) -> int:
        sent, size = 0, self.size
        while sent < count:
            at = (first + sent) % self.count
            n = min(self.segments, count - sent, self.count)
            try:
                self._send(self._block[at * size:(at + n) * size])
            except OSError as exc:
                if exc.errno == 22 and self.segments > 64:  # EINVAL: an older kernel's limit
                    self.segments = 64
                    continue
                if exc.errno in (11, 4, 105):  # EAGAIN, EINTR, ENOBUFS: not taken
                    break
                raise
            sent += n
        return sent
