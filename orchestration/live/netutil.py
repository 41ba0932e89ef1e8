"""Offloads off on an interface of a namespace given by process id.

Mininet's hosts are unnamed network namespaces held by a shell process;
``common.rawsock.in_namespace`` moves this thread into one by pid (and opens
the hosts' packet sockets, ``common.rawsock.open_raw_socket``).

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
import socket
import struct

from common.rawsock import in_namespace

SIOCETHTOOL = 0x8946  # <linux/sockios.h>
# <linux/ethtool.h>: set commands, in the order ``ethtool -K`` would apply them
# (segmentation before scatter-gather, which it depends on).
ETHTOOL_SET = {"gro": 0x2C, "gso": 0x24, "tso": 0x1F, "sg": 0x19, "tx": 0x17, "rx": 0x15}
ETHTOOL_GET = {"gro": 0x2B, "gso": 0x23, "tso": 0x1E, "sg": 0x18, "tx": 0x16, "rx": 0x14}
IFNAMSIZ = 16


def _ethtool(sock: socket.socket, iface: str, cmd: int, data: int = 0) -> int:
    """One ``struct ethtool_value`` ioctl; returns the value field."""
    buf = ctypes.create_string_buffer(struct.pack("II", cmd, data), 8)
    ifr = struct.pack(f"{IFNAMSIZ}sP", iface.encode(), ctypes.addressof(buf))
    fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifr)
    return struct.unpack("II", buf.raw[:8])[1]


def disable_offloads(iface: str, pid: int | None = None) -> dict[str, int]:
    """``ethtool -K IFACE rx off tx off sg off tso off gso off gro off``
    inside the namespace of ``pid``; returns each feature's state after."""
    with in_namespace(pid):
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


def add_veth_pair(a: str, b: str) -> str | None:
    """A veth pair ``a``/``b`` in this namespace, both up; None, or why not
    (the pair is removed again when it was made but could not be brought up)."""
    import subprocess

    for i, cmd in enumerate((["ip", "link", "add", a, "type", "veth", "peer", "name", b],
                             ["ip", "link", "set", a, "up"], ["ip", "link", "set", b, "up"])):
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            if i:
                subprocess.run(["ip", "link", "del", a], capture_output=True, check=False)
            return f"{' '.join(cmd)}: {done.stderr.strip()}"
    return None
