"""Telemetry reports from a UDP socket into ``Collector.feed``, in batches.

A wakeup of the socket takes every datagram waiting into one preallocated
buffer (``batch`` slots of ``max_datagram`` bytes): on Linux with
``recvmmsg(2)`` (``mmsg.py``), up to 1024 datagrams per system call and no
Python object per datagram; elsewhere with one ``recv_into`` each.

The fast path has a fixed cost per call (numpy calls per metric), so a
batch is fed when the buffer is full or ``linger_s`` after its first
datagram, not at every wakeup: at tens of thousands of reports per second,
wakeups come every millisecond or two and feeding each would spend most of
the time on that fixed cost. Events reach the queue at most ``linger_s``
later, against the normal path's flush every second. The compiled loops
of the fast path are loaded at construction (``warm_up``), not by the
first batch, during which a busy socket would overflow.

When all datagrams of a batch have the same length (one switch, one INT
configuration: the usual case) the collector reads them in place as rows
of the buffer (``feed_rows``); otherwise they are copied out as bytes
(``feed``).

Each report gets the time of the wakeup that took it. A datagram longer
than a slot is counted (``oversize``) and not fed: cut, it would only be
rejected as truncated. Datagrams the kernel dropped because the socket's
buffer was full are counted by the kernel per socket; on Linux
``kernel_drops`` reads that counter (``/proc/net/udp``), elsewhere it is None.

``stop()`` from any thread wakes the loop through a socket pair; the loop
takes what is still queued on the socket and feeds it before it returns,
so a stop right after the last datagram arrived loses nothing.
"""

from __future__ import annotations

import errno
import os
import selectors
import socket
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from common.errors import IntbedError
from sinks.intcollector import fastloop, mmsg, synthetic
from sinks.intcollector.events import Thresholds
from sinks.intcollector.pipeline import Collector, Counters, FastPath, ValueQueue

DEFAULT_PORT = 32766  # the report port int_md.p4's reports go to
DEFAULT_BATCH = 1024
DEFAULT_MAX_DATAGRAM = 2048  # a report of an Ethernet-MTU packet fits
DEFAULT_RCVBUF = 16 << 20
DEFAULT_LINGER_S = 0.01
_SO_RCVBUFFORCE = 33  # Linux: set past net.core.rmem_max (needs CAP_NET_ADMIN)


class ReceiverError(IntbedError):
    """A listen address that cannot be parsed or bound."""


@dataclass
class ReceiverStats:
    """What the socket gave, counted once fed: datagrams and their bytes
    (oversize ones included), wakeups and batches fed, and what the kernel
    dropped."""

    datagrams: int = 0
    bytes: int = 0
    oversize: int = 0
    wakeups: int = 0
    batches: int = 0
    kernel_drops: int | None = None
    first_s: float | None = None  # collector clock at the first and the last batch
    last_s: float | None = None
    busy_s: float = 0.0  # wall time spent receiving and feeding
    cpu_s: float = 0.0  # CPU time of the receiving thread in it
    feed_cpu_s: float = 0.0  # the part of cpu_s spent in the collector's fast path

    @property
    def span_rate(self) -> float:
        """Datagrams per second between the first and the last batch."""
        if self.first_s is None or self.last_s is None or self.last_s <= self.first_s:
            return 0.0
        return self.datagrams / (self.last_s - self.first_s)

    @property
    def capacity(self) -> float:
        """Datagrams per second of busy time: what the loop could take."""
        return self.datagrams / self.busy_s if self.busy_s > 0 else 0.0

    @property
    def cpu_capacity(self) -> float:
        """Datagrams per CPU second: what the loop could take on a core of
        its own (the wall time also counts waits for a busy machine's CPU)."""
        return self.datagrams / self.cpu_s if self.cpu_s > 0 else 0.0

    def as_dict(self) -> dict[str, float | None]:
        return {**self.__dict__, "span_rate": self.span_rate, "capacity": self.capacity,
                "cpu_capacity": self.cpu_capacity}


def parse_listen(text: str, default_host: str = "0.0.0.0") -> tuple[str, int]:
    """``HOST:PORT``, ``[V6]:PORT``, ``:PORT`` or ``PORT`` to (host, port)."""
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = "", text
    host = host.strip("[]") or default_host
    try:
        port = int(port_text)
    except ValueError:
        raise ReceiverError(f"listen address {text!r}: want HOST:PORT") from None
    if not 0 <= port <= 65535:
        raise ReceiverError(f"listen address {text!r}: port {port} is not 0-65535")
    return host, port


def _bind(host: str, port: int, rcvbuf: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.socket(family, socket.SOCK_DGRAM)
    except OSError as exc:
        raise ReceiverError(f"cannot open a UDP socket for {host}: {exc.strerror}") from None
    try:
        _grow_buffer(sock, rcvbuf)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        where = f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"
        if exc.errno == errno.EADDRINUSE:
            raise ReceiverError(f"cannot listen on UDP {where}: the port is in use") from None
        if isinstance(exc, socket.gaierror):
            raise ReceiverError(f"cannot listen on UDP {where}: unknown host") from None
        raise ReceiverError(f"cannot listen on UDP {where}: {exc.strerror or exc}") from None
    sock.setblocking(False)
    return sock


def _grow_buffer(sock: socket.socket, size: int) -> None:
    """A large receive buffer absorbs bursts while a batch is processed;
    as root past rmem_max, else as far as rmem_max allows."""
    if size <= 0:
        return
    if sys.platform.startswith("linux"):
        try:
            sock.setsockopt(socket.SOL_SOCKET, _SO_RCVBUFFORCE, size)
            return
        except OSError:
            pass
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, size)
    except OSError:
        pass


def kernel_drops(sock: socket.socket) -> int | None:
    """Datagrams the kernel dropped for this socket (full buffer), from the
    drops column of /proc/net/udp(6); None where that is not available."""
    try:
        inode = str(os.fstat(sock.fileno()).st_ino)
    except OSError:
        return None
    for name in ("udp", "udp6"):
        try:
            lines = Path("/proc/net", name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) >= 13 and fields[9] == inode:
                return int(fields[12])
    return None


_warm = False


def warm_up() -> None:
    """Two synthetic reports through a throwaway fast path, once per
    process, as rows and as bytes: numba loads the compiled loops at their
    first call (a few hundred milliseconds), which must not happen while a
    socket fills."""
    global _warm
    if _warm or not fastloop.COMPILED:
        return
    fast = FastPath(ValueQueue(1000), Counters(), Thresholds())
    rows = np.tile(np.frombuffer(synthetic.template(3), dtype=np.uint8), (2, 1))
    rows[1, synthetic.UDP + 1] = 1  # a second flow
    fast.process_rows(rows, 0.0)
    fast.process([row.tobytes() for row in rows], 0.0)
    _warm = True


class UdpReceiver:
    """Binds at construction (so a busy port fails at once); ``run`` feeds
    the collector until ``stop`` or a deadline, in the caller's thread, and
    ``start`` runs it in a thread of its own."""

    def __init__(self, collector: Collector, host: str = "0.0.0.0", port: int = DEFAULT_PORT,
                 *, batch: int = DEFAULT_BATCH, max_datagram: int = DEFAULT_MAX_DATAGRAM,
                 linger_s: float = DEFAULT_LINGER_S, rcvbuf: int = DEFAULT_RCVBUF,
                 use_mmsg: bool = True, use_gro: bool = True) -> None:
        if batch < 1 or max_datagram < 1 or linger_s < 0:
            raise ValueError("batch and max_datagram must be positive, linger_s not negative")
        self.collector = collector
        self.batch = batch
        self.slot = max_datagram
        self.linger_s = linger_s
        self.stats = ReceiverStats()
        self.sock = _bind(host, port, rcvbuf)
        warm_up()
        self.address: tuple[str, int] = self.sock.getsockname()[:2]
        self._mmsg = (mmsg.MmsgReceiver(self.sock, batch, max_datagram)
                      if use_mmsg and mmsg.available() else None)
        # Coalesced receive (UDP_GRO): a run of equal-sized datagrams in one
        # call, split into slots here. A run is at most GSO_SEGMENTS long.
        self._gro: bytearray | None = None
        if use_gro and batch >= mmsg.GSO_SEGMENTS and mmsg.enable_gro(self.sock):
            self._gro = bytearray(mmsg.GRO_BUFFER)
            self._gro_view = np.frombuffer(self._gro, dtype=np.uint8)
        self._rows = (self._mmsg.rows if self._mmsg is not None
                      else np.zeros((batch, max_datagram), dtype=np.uint8))
        view = memoryview(self._rows.reshape(-1))
        self._slots = [view[i * max_datagram:(i + 1) * max_datagram] for i in range(batch)]
        self._lengths = np.zeros(batch, dtype=np.int64)
        self._times = np.zeros(batch)
        # the batch being filled: reports kept, all of one length?, when it began;
        # datagrams and bytes taken for it (oversize ones too), counted when fed
        self._count = 0
        self._uniform = True
        self._began = 0.0
        self._taken = 0
        self._taken_bytes = 0
        self._oversize = 0
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def gro(self) -> bool:
        """Whether the socket receives coalesced runs (UDP_GRO)."""
        return self._gro is not None

    @property
    def port(self) -> int:
        return int(self.address[1])

    def run(self, seconds: float | None = None) -> ReceiverStats:
        """Receive and feed until ``stop()`` or ``seconds`` have passed."""
        deadline = None if seconds is None else time.monotonic() + seconds
        with selectors.DefaultSelector() as selector:
            selector.register(self.sock, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            while not self._stopping.is_set():
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    break
                waits = [] if deadline is None else [deadline - now]
                if self._taken:
                    due = self._began + self.linger_s - now
                    if due <= 0:
                        self._feed()
                        continue
                    waits.append(due)
                ready = selector.select(min(waits) if waits else None)
                if any(key.fileobj is self.sock for key, _ in ready):
                    self.stats.wakeups += 1
                    self._take_all()
                    if self._taken and self.linger_s <= 0:
                        self._feed()
        self._take_all()
        if self._taken:
            self._feed()
        return self.stats

    def start(self) -> UdpReceiver:
        """``run`` in a daemon thread."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.run, name="intbed-udp-receiver",
                                            daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Ask the loop to finish (it takes what the socket holds first) and
        wait for its thread, if ``start`` made one."""
        self._stopping.set()
        try:
            self._wake_w.send(b"\0")
        except OSError:
            pass
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def close(self) -> None:
        """Stop, note the kernel's drop count, release the sockets."""
        if self._closed:
            return
        self.stop()
        self.stats.kernel_drops = kernel_drops(self.sock)
        self._closed = True
        for sock in (self.sock, self._wake_r, self._wake_w):
            sock.close()

    def __enter__(self) -> UdpReceiver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- inner

    def _take_all(self) -> None:
        """Receive until the socket is empty, feeding each full buffer."""
        room = mmsg.GSO_SEGMENTS if self._gro is not None else 1
        while True:
            more = self._receive()
            if self.batch - self._count < room:
                self._feed()
            if not more:
                return

    def _receive(self) -> bool:
        """Receive into the free slots until the socket is empty (False) or
        the buffer is full or a batch's worth was taken (True: more may wait)."""
        started, cpu = time.perf_counter(), time.thread_time()
        first = self._count
        if self._gro is not None:
            k, taken, size, oversize, more, uniform = self._receive_gro()
        elif self._mmsg is not None:
            k, taken, size, oversize, more, uniform = self._receive_mmsg(self._mmsg)
        else:
            k, taken, size, oversize, more, uniform = self._receive_each()
        if taken:
            if not self._taken:
                self._began = time.monotonic()
            self._times[first:k] = self.collector.clock.now()
            self._count, self._uniform = k, uniform
            self._taken += taken
            self._taken_bytes += size
            self._oversize += oversize
        self.stats.busy_s += time.perf_counter() - started
        self.stats.cpu_s += time.thread_time() - cpu
        return more

    def _receive_mmsg(self, receiver: mmsg.MmsgReceiver) -> tuple[int, int, int, int, bool,
                                                                   bool]:
        """``recvmmsg`` into the free slots; datagrams cut to a slot are
        counted and squeezed out, so the slots filled are contiguous."""
        batch, lengths, rows = self.batch, self._lengths, self._rows
        k = self._count
        uniform = self._uniform
        taken = size = oversize = 0
        while True:
            if k == batch or taken >= batch:
                return k, taken, size, oversize, True, uniform
            asked = min(mmsg.MAX_VLEN, batch - k)
            got = receiver.receive(k)
            if not got:
                return k, taken, size, oversize, False, uniform
            taken += got
            drained = got < asked
            got_lengths = receiver.lengths[k:k + got].astype(np.int64)
            size += int(got_lengths.sum())
            cut = receiver.truncated[k:k + got]
            if cut.any():
                keep = ~cut
                oversize += int(cut.sum())
                got_lengths = got_lengths[keep]
                rows[k:k + len(got_lengths)] = rows[k:k + got][keep]
                got = len(got_lengths)
            lengths[k:k + got] = got_lengths
            if got and uniform and (got_lengths != lengths[0]).any():
                uniform = False
            k += got
            if drained:
                return k, taken, size, oversize, False, uniform

    def _receive_gro(self) -> tuple[int, int, int, int, bool, bool]:
        """Coalesced runs into the free slots, while a whole run fits."""
        batch, lengths, rows, slot = self.batch, self._lengths, self._rows, self.slot
        buf, view = self._gro, self._gro_view
        recvmsg_into = self.sock.recvmsg_into
        space = socket.CMSG_SPACE(4)
        k = self._count
        uniform = self._uniform
        taken = size = oversize = 0
        while True:
            if batch - k < mmsg.GSO_SEGMENTS or taken >= batch:
                return k, taken, size, oversize, True, uniform
            try:
                nbytes, ancdata, flags, _ = recvmsg_into([buf], space, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return k, taken, size, oversize, False, uniform
            except OSError:  # an ICMP error queued on the socket: nothing to take
                return k, taken, size, oversize, False, uniform
            if not nbytes:  # an empty datagram: kept, the parser rejects it
                lengths[k] = 0
                taken += 1
                k += 1
                uniform = bool((lengths[:k] == lengths[0]).all())
                continue
            seg = mmsg.gro_segment(ancdata, nbytes) or nbytes
            n = -(-nbytes // seg)
            taken += n
            size += nbytes
            if seg > slot or flags & socket.MSG_TRUNC:
                oversize += n
                continue
            whole = nbytes // seg
            rows[k:k + whole, :seg] = view[:whole * seg].reshape(whole, seg)
            lengths[k:k + whole] = seg
            rest = nbytes - whole * seg
            if rest:
                rows[k + whole, :rest] = view[whole * seg:nbytes]
                lengths[k + whole] = rest
            if uniform and ((k and lengths[0] != seg) or rest):
                uniform = bool((lengths[:k + n] == lengths[0]).all())
            k += n

    def _receive_each(self) -> tuple[int, int, int, int, bool, bool]:
        """One ``recv_into`` per datagram."""
        recv_into, slots, lengths, slot = self.sock.recv_into, self._slots, self._lengths, \
            self.slot
        batch = self.batch
        k = self._count
        uniform = self._uniform
        taken = size = oversize = 0
        more = False
        while True:
            if k == batch or taken == batch:
                more = True
                break
            try:
                n = recv_into(slots[k], slot, socket.MSG_TRUNC)
            except OSError:  # EAGAIN: empty; or an ICMP error queued on the socket
                break
            taken += 1
            size += n
            if n > slot:  # cut in the slot, which the next datagram takes
                oversize += 1
                continue
            lengths[k] = n
            if n != lengths[0]:
                uniform = False
            k += 1
        return k, taken, size, oversize, more, uniform

    def _feed(self) -> None:
        """Hand the batch to the collector and count it."""
        started, cpu = time.perf_counter(), time.thread_time()
        count, stats, collector = self._count, self.stats, self.collector
        if count:
            times = self._times[:count]
            if self._uniform:
                collector.feed_rows(self._rows[:count, :int(self._lengths[0])], times)
            else:
                slots, lengths = self._slots, self._lengths
                collector.feed([bytes(slots[i][:n]) for i, n in
                                enumerate(lengths[:count].tolist())], times)
            stats.batches += 1
            if stats.first_s is None:
                stats.first_s = float(times[0])
            stats.last_s = float(times[-1])
        stats.datagrams += self._taken  # after the feed: a datagram counted has been fed
        stats.bytes += self._taken_bytes
        stats.oversize += self._oversize
        self._count, self._uniform = 0, True
        self._taken = self._taken_bytes = self._oversize = 0
        stats.busy_s += time.perf_counter() - started
        stats.cpu_s += time.thread_time() - cpu
        stats.feed_cpu_s += time.thread_time() - cpu
