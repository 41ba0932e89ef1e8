"""Frames arriving on a host's interfaces, read by a thread of this process.

The collector app runs in the orchestrator, but the collector's interfaces
(one per switch report port) live in the collector host's namespace: the
sockets are opened there (``common.rawsock.open_raw_socket``) and read here
with one epoll loop. Frames come in batches, everything the sockets hold at a
wake-up (up to ``BATCH`` per socket), as ``(frame, t_ns, index)``: ``t_ns``
is the kernel's receive time (``SO_TIMESTAMPNS``) moved onto the monotonic
clock, so a handler that falls behind still sees when each frame arrived;
``index`` is the frame's interface.
"""

from __future__ import annotations

import logging
import os
import select
import socket
import struct
import threading
import time
from collections.abc import Callable, Sequence

from common.rawsock import open_raw_socket

log = logging.getLogger(__name__)
MAX_FRAME = 65536
BATCH = 64  # frames taken from one socket before the others get a turn
RCVBUF = 8 << 20  # bytes: rides out a burst while the handler is busy
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # <asm-generic/socket.h>
_TIMESPEC = struct.Struct("qq")
_ANC = socket.CMSG_SPACE(_TIMESPEC.size)
Frame = tuple[bytes, int, int]
Handler = Callable[[list[Frame]], None]


class FrameTap:
    """``start()`` opens the sockets and the reader thread; ``stop()`` hands
    over what the sockets still hold, then closes them (idempotent)."""

    def __init__(self, ifaces: Sequence[str], pid: int | None, handler: Handler) -> None:
        self.ifaces = list(ifaces)
        self.pid = pid
        self.handler = handler
        self.frames = 0
        self.errors: list[BaseException] = []
        self._socks: list[socket.socket] = []
        self._wake = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._stop = False
        self._thread: threading.Thread | None = None
        self._offset_ns = 0  # CLOCK_REALTIME - CLOCK_MONOTONIC

    def start(self) -> None:
        try:
            for iface in self.ifaces:
                sock = open_raw_socket(iface, self.pid, rcvbuf=RCVBUF, blocking=False)
                sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
                self._socks.append(sock)
        except OSError:
            self._close()
            raise
        self._offset_ns = time.time_ns() - time.monotonic_ns()
        self._thread = threading.Thread(target=self._run, name="intbed-frame-tap", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._stop = True
            os.eventfd_write(self._wake, 1)
            self._thread.join()
            self._thread = None
        self._close()

    def _close(self) -> None:
        for s in self._socks:
            s.close()
        self._socks = []
        if self._wake >= 0:
            os.close(self._wake)
            self._wake = -1

    def _read(self, index: int, sock: socket.socket, out: list[Frame]) -> int:
        """Up to BATCH frames of one socket into ``out``; how many were read."""
        recvmsg = sock.recvmsg
        offset = self._offset_ns
        for n in range(BATCH):
            try:
                frame, anc, _, addr = recvmsg(MAX_FRAME, _ANC)
            except BlockingIOError:
                return n
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            t_ns = 0
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    sec, nsec = _TIMESPEC.unpack(data[:_TIMESPEC.size])
                    t_ns = sec * 1_000_000_000 + nsec - offset
            out.append((frame, t_ns or time.monotonic_ns(), index))
        return BATCH

    def _deliver(self, batch: list[Frame]) -> None:
        if not batch:
            return
        self.frames += len(batch)
        try:
            self.handler(batch)
        except Exception as exc:  # a bad batch must not stop collection
            self.errors.append(exc)
            log.exception("frame handler failed")

    def _run(self) -> None:
        ep = select.epoll()
        by_fd = {s.fileno(): (i, s) for i, s in enumerate(self._socks)}
        for fd in by_fd:
            ep.register(fd, select.EPOLLIN)
        ep.register(self._wake, select.EPOLLIN)
        try:
            while not self._stop:
                batch: list[Frame] = []
                for fd, _ in ep.poll(0.5):
                    if fd in by_fd:
                        self._read(*by_fd[fd], batch)
                batch.sort(key=lambda f: f[1])
                self._deliver(batch)
            rest: list[Frame] = []  # what arrived before stop()
            for i, s in by_fd.values():
                while self._read(i, s, rest) == BATCH:
                    pass
            rest.sort(key=lambda f: f[1])
            self._deliver(rest)
        finally:
            ep.close()
