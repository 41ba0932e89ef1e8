"""Raw ``AF_PACKET`` sockets on one interface, optionally in another network
namespace: the one place intbed opens them.

A namespace is given by a process id (Mininet's hosts are unnamed
namespaces held by a shell, reached through ``/proc/PID/ns/net``) or by
the path of a namespace file (``ip netns add NAME`` makes
``/var/run/netns/NAME``). ``setns(2)`` moves only the calling thread and a
socket keeps the namespace it was created in, so ``in_namespace`` moves
this thread there for a block and back again, and a socket opened inside
goes on working after the thread has returned: no subprocess needed.

A socket that receives is bound for every EtherType. Such a socket also
sees the frames others (the kernel's stack, other packet sockets) send out
of the interface; ``ignore_outgoing`` asks the kernel to hide them
(``PACKET_IGNORE_OUTGOING``, Linux 4.20+). Older kernels refuse the option,
so readers that must not see them also skip addresses whose
``sll_pkttype`` is ``PACKET_OUTGOING``; ``ignores_outgoing`` tells whether
they need to.
"""

from __future__ import annotations

import ctypes
import os
import socket
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from common.errors import IntbedError

__all__ = [
    "ETH_P_ALL",
    "Namespace",
    "RawSocketError",
    "ignores_outgoing",
    "in_namespace",
    "namespace_path",
    "open_raw_socket",
]

# <linux/sched.h>, <linux/if_ether.h>, <linux/if_packet.h>, <asm-generic/socket.h>
CLONE_NEWNET = 0x40000000
ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1
PACKET_IGNORE_OUTGOING = 23
SO_SNDBUFFORCE = 32
SO_RCVBUFFORCE = 33

Namespace = int | str | os.PathLike[str]
"""A process id, or the path of a network namespace file."""


class RawSocketError(IntbedError, OSError):
    """A raw socket that could not be opened or set up, or a namespace that
    could not be entered. An ``OSError`` too, so code that handles socket
    failures goes on handling these."""

    @classmethod
    def of(cls, message: str, exc: OSError) -> RawSocketError:
        """``message`` with the ``errno`` of the ``OSError`` behind it."""
        err = cls(f"{message}: {exc.strerror or exc}")
        err.errno, err.strerror = exc.errno, exc.strerror
        return err


def namespace_path(ns: Namespace) -> Path:
    """The namespace file of a process id, or the path given."""
    if isinstance(ns, int):
        return Path(f"/proc/{ns}/ns/net")
    return Path(ns)


_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


@contextmanager
def in_namespace(ns: Namespace | None) -> Iterator[None]:
    """Run the calling thread in network namespace ``ns`` for the block and
    return it to its own namespace after (None: stay where it is)."""
    if ns is None:
        yield
        return
    path = namespace_path(ns)
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        try:
            target = os.open(path, os.O_RDONLY)
        except OSError as exc:
            raise RawSocketError.of(f"network namespace {path}", exc) from None
        try:
            try:
                _setns(target)
            except OSError as exc:
                raise RawSocketError.of(f"cannot enter network namespace {path}",
                                        exc) from None
            try:
                yield
            finally:
                _setns(home)
        finally:
            os.close(target)
    finally:
        os.close(home)


def _set_buffer(sock: socket.socket, force: int, plain: int, size: int) -> None:
    try:  # the FORCE variants pass the net.core.[rw]mem_max caps (root)
        sock.setsockopt(socket.SOL_SOCKET, force, size)
    except OSError:
        sock.setsockopt(socket.SOL_SOCKET, plain, size)


def open_raw_socket(iface: str, netns: Namespace | None = None, *, receive: bool = True,
                    promisc: bool = False, ignore_outgoing: bool = True,
                    rcvbuf: int | None = None, sndbuf: int | None = None,
                    blocking: bool = True) -> socket.socket:
    """A raw socket bound to ``iface`` (of namespace ``netns``, else this
    thread's).

    ``receive``: bound for every EtherType; False binds protocol 0, a socket
    that only sends and so never queues the interface's traffic.
    ``promisc``: the interface in promiscuous mode while the socket is open.
    ``ignore_outgoing``: hide frames sent out of the interface where the
    kernel can. ``rcvbuf``/``sndbuf``: buffer sizes in bytes.

    Raises ``RawSocketError`` naming the interface (and namespace)."""
    where = "" if netns is None else f" in network namespace {namespace_path(netns)}"
    with in_namespace(netns):
        try:
            index = socket.if_nametoindex(iface)
        except OSError:
            raise RawSocketError(f"no such interface '{iface}'{where}") from None
        try:
            # Protocol 0 receives nothing until bind() picks the interface and
            # EtherType, so no frame of another interface slips in meanwhile.
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        except OSError as exc:
            raise RawSocketError.of(f"interface '{iface}'{where}", exc) from None
    try:
        sock.bind((iface, ETH_P_ALL if receive else 0))
        if promisc:
            mreq = struct.pack("iHH8s", index, PACKET_MR_PROMISC, 0, b"")
            sock.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP, mreq)
        if rcvbuf is not None:
            _set_buffer(sock, SO_RCVBUFFORCE, socket.SO_RCVBUF, rcvbuf)
        if sndbuf is not None:
            _set_buffer(sock, SO_SNDBUFFORCE, socket.SO_SNDBUF, sndbuf)
        if receive and ignore_outgoing:
            try:
                sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
            except OSError:
                pass  # Linux < 4.20: readers skip PACKET_OUTGOING themselves
        sock.setblocking(blocking)
    except OSError as exc:
        sock.close()
        raise RawSocketError.of(f"interface '{iface}'{where}", exc) from None
    return sock


def ignores_outgoing(sock: socket.socket) -> bool:
    """Whether the kernel hides the frames sent out of ``sock``'s interface."""
    try:
        return bool(sock.getsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING))
    except OSError:
        return False
