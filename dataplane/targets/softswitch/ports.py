"""Switch ports on Linux interfaces (AF_PACKET) and their pcap files.

A port is a raw ``AF_PACKET`` socket bound to one interface for every
EtherType, in promiscuous mode (BMv2 opens its interfaces through libpcap in
promiscuous mode too), opened by ``common.rawsock``. Such a socket also
sees frames that others (the kernel's own stack, other packet sockets) send
out of the interface; they are not arrivals. The kernel hides them where it
can (``PACKET_IGNORE_OUTGOING``, Linux 4.20+); on older kernels the receive
loop skips addresses whose ``sll_pkttype`` is ``PACKET_OUTGOING``.

``--pcap DIR`` writes ``<iface>_in.pcap`` and ``<iface>_out.pcap`` per port,
as BMv2 names them, through ``common.pcap``: classic libpcap files (magic
``a1b2c3d4``, version 2.4, microsecond timestamps, link type 1 = Ethernet).
"""

from __future__ import annotations

import socket
from pathlib import Path

from common.pcap import LINKTYPE_ETHERNET, PcapWriter
from common.rawsock import RawSocketError, ignores_outgoing, open_raw_socket
from dataplane.targets.softswitch.cli import SwitchConfigError

PACKET_OUTGOING = socket.PACKET_OUTGOING
SOCKET_BUFFER = 8 << 20  # bytes; rides out bursts while the engine is busy
MAX_FRAME = 65536  # a GSO frame on a veth can reach 64 KiB
PCAP_SNAPLEN = 262144  # above MAX_FRAME: frames are never cut


def open_interface(name: str) -> tuple[socket.socket, bool]:
    """A non-blocking promiscuous raw socket on interface ``name``; the flag
    says whether the kernel already hides frames sent out of the interface."""
    try:
        sock = open_raw_socket(name, promisc=True, rcvbuf=SOCKET_BUFFER, sndbuf=SOCKET_BUFFER,
                               blocking=False)
    except RawSocketError as exc:
        raise SwitchConfigError(exc.message) from None
    return sock, ignores_outgoing(sock)


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
            self.pcap_in = PcapWriter(pcap_dir / f"{iface}_in.pcap", LINKTYPE_ETHERNET,
                                      PCAP_SNAPLEN)
            self.pcap_out = PcapWriter(pcap_dir / f"{iface}_out.pcap", LINKTYPE_ETHERNET,
                                       PCAP_SNAPLEN)
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
