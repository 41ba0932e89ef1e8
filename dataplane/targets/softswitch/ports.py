"""Switch ports on Linux interfaces (AF_PACKET) and their pcap files.

A port is a raw ``AF_PACKET`` socket bound to one interface for every
EtherType, in promiscuous mode (BMv2 opens its interfaces through libpcap in
promiscuous mode too). Such a socket also sees frames that others (the
kernel's own stack, other packet sockets) send out of the interface; they
are not arrivals. The kernel hides them with ``PACKET_IGNORE_OUTGOING``
(Linux 4.20+); on older kernels the receive loop skips addresses whose
``sll_pkttype`` is ``PACKET_OUTGOING``.

``--pcap DIR`` writes ``<iface>_in.pcap`` and ``<iface>_out.pcap`` per port,
as BMv2 names them: classic libpcap files (magic ``a1b2c3d4``, version 2.4,
microsecond timestamps, link type 1 = Ethernet).
"""

from __future__ import annotations

import socket
import struct
import time
from pathlib import Path
from typing import BinaryIO

from dataplane.targets.softswitch.cli import SwitchConfigError

# <linux/if_ether.h>, <linux/if_packet.h>
ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_ADD_MEMBERSHIP = 1
PACKET_MR_PROMISC = 1
PACKET_IGNORE_OUTGOING = 23
PACKET_OUTGOING = 4
SOCKET_BUFFER = 8 << 20  # bytes; rides out bursts while the engine is busy
MAX_FRAME = 65536  # a GSO frame on a veth can reach 64 KiB

# libpcap's file format (pcap-savefile(5)).
PCAP_MAGIC = 0xA1B2C3D4
PCAP_SNAPLEN = 262144
LINKTYPE_ETHERNET = 1
_PCAP_HEADER = struct.Struct("<IHHiIII")
_PCAP_RECORD = struct.Struct("<IIII")


class PcapWriter:
    """Appends frames to a libpcap file; buffered, flushed on demand."""

    __slots__ = ("path", "_file", "_pack", "_write", "count")

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: BinaryIO = open(path, "wb", buffering=1 << 16)  # noqa: SIM115
        self._file.write(_PCAP_HEADER.pack(PCAP_MAGIC, 2, 4, 0, 0, PCAP_SNAPLEN,
                                           LINKTYPE_ETHERNET))
        self._pack = _PCAP_RECORD.pack
        self._write = self._file.write
        self.count = 0

    def write(self, frame: bytes, t_ns: int | None = None) -> None:
        """One record stamped ``t_ns`` (wall clock, default now)."""
        if t_ns is None:
            t_ns = time.time_ns()
        us = t_ns // 1000
        n = len(frame)
        self._write(self._pack(us // 1_000_000, us % 1_000_000, n, n))
        self._write(frame)
        self.count += 1

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()


def read_pcap(path: Path) -> list[tuple[int, bytes]]:
    """(timestamp in microseconds, frame) of every record of a libpcap file."""
    data = Path(path).read_bytes()
    magic, major, minor, _, _, _, link = _PCAP_HEADER.unpack_from(data)
    if magic != PCAP_MAGIC or (major, minor) != (2, 4) or link != LINKTYPE_ETHERNET:
        raise ValueError(f"{path}: not a microsecond Ethernet pcap file")
    out = []
    pos = _PCAP_HEADER.size
    while pos < len(data):
        sec, usec, incl, _ = _PCAP_RECORD.unpack_from(data, pos)
        pos += _PCAP_RECORD.size
        out.append((sec * 1_000_000 + usec, data[pos:pos + incl]))
        pos += incl
    return out


def open_interface(name: str) -> tuple[socket.socket, bool]:
    """A non-blocking raw socket on interface ``name``; the flag says whether
    the kernel already hides frames sent out of the interface."""
    try:
        ifindex = socket.if_nametoindex(name)
    except OSError:
        raise SwitchConfigError(f"no such interface '{name}'") from None
    # Protocol 0 receives nothing until bind() picks the interface and
    # EtherType, so no frame of another interface slips in meanwhile.
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    try:
        sock.bind((name, ETH_P_ALL))
        mreq = struct.pack("iHH8s", ifindex, PACKET_MR_PROMISC, 0, b"")
        sock.setsockopt(SOL_PACKET, PACKET_ADD_MEMBERSHIP, mreq)
        for force, plain in ((33, socket.SO_RCVBUF), (32, socket.SO_SNDBUF)):
            try:  # SO_RCVBUFFORCE / SO_SNDBUFFORCE pass the sysctl caps (root)
                sock.setsockopt(socket.SOL_SOCKET, force, SOCKET_BUFFER)
            except OSError:
                sock.setsockopt(socket.SOL_SOCKET, plain, SOCKET_BUFFER)
        try:
            sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
            ignores_outgoing = True
        except OSError:
            ignores_outgoing = False
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise SwitchConfigError(f"interface '{name}': {exc.strerror or exc}") from None
    return sock, ignores_outgoing


class SwitchPort:
    """One data port: its socket, pcap files and counters."""

    __slots__ = ("port", "iface", "sock", "send", "ignores_outgoing", "pcap_in", "pcap_out",
                 "loss", "plain", "rx", "tx", "tx_errors", "lost")

    def __init__(self, port: int, iface: str, pcap_dir: Path | None = None,
                 loss: float = 0.0) -> None:
        self.port = port
        self.iface = iface
        self.sock, self.ignores_outgoing = open_interface(iface)
        self.send = self.sock.send
        self.pcap_in: PcapWriter | None = None
        self.pcap_out: PcapWriter | None = None
        if pcap_dir is not None:
            self.pcap_in = PcapWriter(pcap_dir / f"{iface}_in.pcap")
            self.pcap_out = PcapWriter(pcap_dir / f"{iface}_out.pcap")
        self.loss = loss
        # Nothing to do on transmit but send: the data plane's fast path.
        self.plain = loss == 0.0 and pcap_dir is None
        self.rx = 0
        self.tx = 0
        self.tx_errors = 0
        self.lost = 0

    def fileno(self) -> int:
        return self.sock.fileno()

    def flush(self) -> None:
        for w in (self.pcap_in, self.pcap_out):
            if w is not None:
                w.flush()

    def close(self) -> None:
        self.sock.close()
        for w in (self.pcap_in, self.pcap_out):
            if w is not None:
                w.close()

    def counters(self) -> dict[str, int]:
        return {"rx": self.rx, "tx": self.tx, "tx_errors": self.tx_errors, "lost": self.lost}
