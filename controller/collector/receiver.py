"""Telemetry reports from a UDP socket into ``Collector.feed``, in batches.

One wakeup of the socket takes every datagram waiting, up to ``batch`` of
them, with ``recv_into`` into one preallocated buffer (``batch`` slots of
``max_datagram`` bytes): no allocation per datagram and one fast-path call
per wakeup, which is what lets a Python collector keep up with a switch
that sends reports in bursts. When all datagrams of a batch have the same
length (one switch, one INT configuration: the usual case) the collector
reads them in place as rows of that buffer (``feed_rows``); otherwise they
are copied out as bytes (``feed``).

Every report of a batch gets the time of the wakeup that took it. A
datagram longer than a slot is counted (``oversize``) and not fed: cut, it
would only be rejected as truncated. Datagrams the kernel dropped because
the socket's buffer was full are counted by the kernel per socket; on Linux
``kernel_drops`` reads that counter (``/proc/net/udp``), elsewhere it is None.

``stop()`` from any thread wakes the loop through a socket pair; the loop
takes what is still queued on the socket before it returns, so a stop
right after the last datagram arrived loses nothing.
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
from controller.collector.pipeline import Collector

DEFAULT_PORT = 32766  # the report port int_md.p4's reports go to
DEFAULT_BATCH = 1024
DEFAULT_MAX_DATAGRAM = 2048  # a report of an Ethernet-MTU packet fits
DEFAULT_RCVBUF = 16 << 20
_SO_RCVBUFFORCE = 33  # Linux: set past net.core.rmem_max (needs CAP_NET_ADMIN)


class ReceiverError(IntbedError):
    """A listen address that cannot be parsed or bound."""


@dataclass
class ReceiverStats:
    """What the socket gave: datagrams and their bytes (oversize ones
    included), wakeups and batches fed, and what the kernel dropped."""

    datagrams: int = 0
    bytes: int = 0
    oversize: int = 0
    wakeups: int = 0
    batches: int = 0
    kernel_drops: int | None = None

    def as_dict(self) -> dict[str, int | None]:
        return dict(self.__dict__)


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


class UdpReceiver:
    """Binds at construction (so a busy port fails at once); ``run`` feeds
    the collector until ``stop`` or a deadline, in the caller's thread, and
    ``start`` runs it in a thread of its own."""

    def __init__(self, collector: Collector, host: str = "0.0.0.0", port: int = DEFAULT_PORT,
                 *, batch: int = DEFAULT_BATCH, max_datagram: int = DEFAULT_MAX_DATAGRAM,
                 rcvbuf: int = DEFAULT_RCVBUF) -> None:
        if batch < 1 or max_datagram < 1:
            raise ValueError("batch and max_datagram must be positive")
        self.collector = collector
        self.batch = batch
        self.slot = max_datagram
        self.stats = ReceiverStats()
        self.sock = _bind(host, port, rcvbuf)
        self.address: tuple[str, int] = self.sock.getsockname()[:2]
        self._buffer = bytearray(batch * max_datagram)
        view = memoryview(self._buffer)
        self._slots = [view[i * max_datagram:(i + 1) * max_datagram] for i in range(batch)]
        self._rows = np.frombuffer(self._buffer, dtype=np.uint8).reshape(batch, max_datagram)
        self._lengths = [0] * batch
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False

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
                timeout = None if deadline is None else deadline - time.monotonic()
                if timeout is not None and timeout <= 0:
                    break
                ready = selector.select(timeout)
                if any(key.fileobj is self.sock for key, _ in ready):
                    self.stats.wakeups += 1
                    while self._drain() == self.batch:  # more may be waiting
                        pass
        self._drain_all()
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

    def _drain_all(self) -> None:
        while self._drain() == self.batch:
            pass

    def _drain(self) -> int:
        """Receive until the socket is empty or the buffer full, feed the
        batch; returns the datagrams taken (oversize ones included)."""
        recv_into, slots, lengths, slot = self.sock.recv_into, self._slots, self._lengths, \
            self.slot
        taken = kept = size = 0
        uniform = True
        for view in slots:
            try:
                n = recv_into(view, slot, socket.MSG_TRUNC)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:  # e.g. ICMP errors queued on the socket: nothing to take
                break
            taken += 1
            size += n
            if n > slot:
                self.stats.oversize += 1
                continue
            if kept != taken - 1:  # an oversize datagram left a gap: close it
                slots[kept][:n] = view[:n]
            lengths[kept] = n
            if n != lengths[0]:
                uniform = False
            kept += 1
        if not taken:
            return 0
        if kept:
            self._feed(kept, uniform)
        self.stats.datagrams += taken  # after the feed: a datagram counted has been fed
        self.stats.bytes += size
        return taken

    def _feed(self, count: int, uniform: bool) -> None:
        lengths = self._lengths
        collector = self.collector
        now = collector.clock.now()
        if uniform:
            collector.feed_rows(self._rows[:count, :lengths[0]], now)
        else:
            slots = self._slots
            collector.feed([bytes(slots[i][:lengths[i]]) for i in range(count)], now)
        self.stats.batches += 1
