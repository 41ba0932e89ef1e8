"""Namespaces by process id, packet sockets in them, and offloads off.

Mininet's hosts are unnamed network namespaces held by a shell process, so
they are reached through ``/proc/PID/ns/net``. ``setns(2)`` moves only the
calling thread, and a socket keeps the namespace it was created in, so a
thread can open a host's sockets and return home without a subprocess.

There is no ``ethtool`` here, so offloads are switched off with its ioctl
(``SIOCETHTOOL``, the legacy ``ETHTOOL_S*`` commands, which the kernel maps
onto netdev features). A veth with transmit checksum offload hands frames
from the kernel's stack to a packet socket with only the pseudo-header sum
in the checksum field; the switch forwards them as they are and the next
host's kernel drops them. Frames the senders write to raw sockets carry
their own checksums either way.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct
from collections.abc import Iterator
from contextlib import contextmanager

CLONE_NEWNET = 0x40000000  # <linux/sched.h>
ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1
SO_RCVBUFFORCE = 33
SIOCETHTOOL = 0x8946  # <linux/sockios.h>
# <linux/ethtool.h>: set commands, in the order ``ethtool -K`` would apply them
# (segmentation before scatter-gather, which it depends on).
ETHTOOL_SET = {"gro": 0x2C, "gso": 0x24, "tso": 0x1F, "sg": 0x19, "tx": 0x17, "rx": 0x15}
ETHTOOL_GET = {"gro": 0x2B, "gso": 0x23, "tso": 0x1E, "sg": 0x18, "tx": 0x16, "rx": 0x14}
IFNAMSIZ = 16

_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


@contextmanager
def in_namespace_of(pid: int | None) -> Iterator[None]:
    """Run the calling thread in the network namespace of process ``pid``
    for the block (None: stay where it is)."""
    if pid is None:
        yield
        return
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        target = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
        try:
            _setns(target)
            try:
                yield
            finally:
                _setns(home)
        finally:
            os.close(target)
    finally:
        os.close(home)


def namespace_inode(pid: int) -> int:
    """Identity of the network namespace of ``pid``."""
    return os.stat(f"/proc/{pid}/ns/net").st_ino


def packet_socket(iface: str, pid: int | None = None, *, rcvbuf: int = 8 << 20,
                  promisc: bool = False) -> socket.socket:
    """A non-blocking raw socket on ``iface`` of the namespace of ``pid``,
    for every EtherType, hiding the frames sent out of it."""
    with in_namespace_of(pid):
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    try:
        sock.bind((iface, ETH_P_ALL))
        try:
            sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
        except OSError:
            pass  # readers skip PACKET_OUTGOING themselves
        if promisc:
            with in_namespace_of(pid):
                index = socket.if_nametoindex(iface)
            mreq = struct.pack("iHH8s", index, PACKET_MR_PROMISC, 0, b"")
            sock.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP, mreq)
        try:
            sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, rcvbuf)
        except OSError:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def _ethtool(sock: socket.socket, iface: str, cmd: int, data: int = 0) -> int:
    """One ``struct ethtool_value`` ioctl; returns the value field."""
    buf = ctypes.create_string_buffer(struct.pack("II", cmd, data), 8)
    ifr = struct.pack(f"{IFNAMSIZ}sP", iface.encode(), ctypes.addressof(buf))
    fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifr)
    return struct.unpack("II", buf.raw[:8])[1]


def disable_offloads(iface: str, pid: int | None = None) -> dict[str, int]:
    """``ethtool -K IFACE rx off tx off sg off tso off gso off gro off``
    inside the namespace of ``pid``; returns each feature's state after."""
    with in_namespace_of(pid):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for cmd in ETHTOOL_SET.values():
            try:
                _ethtool(sock, iface, cmd, 0)
            except OSError:
                pass  # a feature the driver cannot change: reported below
        return {name: _ethtool(sock, iface, cmd) for name, cmd in ETHTOOL_GET.items()}
    finally:
        sock.close()
