"""Ethernet/IPv4/UDP|TCP packets for traffic flows.

A flow's packet is declared once with Scapy; per packet only a few fields
change, so ``PacketFactory`` keeps Scapy's bytes as a template and patches
them with ``struct``: building a Scapy packet costs tens of microseconds,
patching a template about one. The patched bytes are exactly what Scapy
builds for the same field values (the tests check this byte for byte).

Per-packet fields: the IPv4 identification (``seq`` mod 2^16), the ports,
the first 8 payload bytes (``seq``, big-endian, so a receiver can identify
the packet), for TCP the sequence number (the byte offset of the payload in
the stream), and the IPv4 header and UDP/TCP checksums, updated with
one's-complement arithmetic from sums precomputed over the constant bytes
(RFC 1071). The rest of the payload is a fixed pattern.

Frames are not padded to Ethernet's 60-byte minimum, as Scapy leaves them.
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass, replace
from functools import lru_cache
from socket import inet_aton
from typing import TYPE_CHECKING, NamedTuple, Protocol

import cython

from common.checksum import ones_sum
from traffic.errors import TrafficError

if TYPE_CHECKING:
    from scapy.packet import Packet

ETH_LEN = 14
IPV4_LEN = 20
UDP_LEN = 8
TCP_LEN = 20
# Bytes of the payload that carry the packet's sequence number.
SEQ_BYTES = 8
PROTO_NUMBERS = {"udp": 17, "tcp": 6}
PROTO_NAMES = {17: "udp", 6: "tcp"}
# Flags of a data segment of an established stream, PSH 0x08 | ACK 0x10;
# Scapy's own default (SYN) would make every packet a connection attempt.
TCP_DATA_FLAGS = 0x18
TCP_WINDOW = 8192  # Scapy's default window
ETHERTYPE_IPV4 = 0x0800
# IPv4 total length is a 16-bit field.
MAX_IP_LEN = 0xFFFF

_H = struct.Struct("!H")
_Q = struct.Struct("!Q")
_I = struct.Struct("!I")
_HH = struct.Struct("!HH")
_IPV4 = struct.Struct("!BBHHHBBH4s4s")
_UDP = struct.Struct("!HHHH")
_TCP = struct.Struct("!HHIIBBHHH")


class HostAddr(Protocol):
    """Anything with a host's MAC and IPv4 address as strings (a topology's
    host, an ``Endpoint``)."""

    @property
    def mac(self) -> str: ...

    @property
    def ip(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A host's addresses as plain strings."""

    name: str
    mac: str
    ip: str


class FlowKey(NamedTuple):
    """The 5-tuple that names a flow; ``proto`` is the IP protocol number."""

    src_ip: str
    dst_ip: str
    proto: int
    sport: int
    dport: int

    def __str__(self) -> str:
        name = PROTO_NAMES.get(self.proto, str(self.proto))
        return f"{name} {self.src_ip}:{self.sport} > {self.dst_ip}:{self.dport}"


def header_len(proto: str) -> int:
    """Bytes of Ethernet, IPv4 and L4 headers before the payload."""
    return ETH_LEN + IPV4_LEN + (UDP_LEN if proto == "udp" else TCP_LEN)


def _check_mac(mac: str, what: str) -> None:
    parts = mac.split(":")
    if len(parts) != 6 or not all(
        len(p) == 2 and all(c in "0123456789abcdefABCDEF" for c in p) for p in parts
    ):
        raise TrafficError(f"{what} {mac!r} is not a MAC address (aa:bb:cc:dd:ee:ff)")


def _check_ip(ip: str, what: str) -> None:
    try:
        ipaddress.IPv4Address(ip)
    except ValueError:
        raise TrafficError(f"{what} {ip!r} is not an IPv4 address") from None


def _check_range(value: int, low: int, high: int, what: str) -> None:
    if not isinstance(value, int) or not low <= value <= high:
        raise TrafficError(f"{what} {value!r} is outside {low}..{high}")


@dataclass(frozen=True, slots=True)
class FlowSpec:
    """One flow: addresses, transport, payload size (bytes after the L4
    header) and IPv4 DSCP/TTL. ``udp_checksum=False`` sends a zero UDP
    checksum, which RFC 768 allows over IPv4."""

    src_mac: str
    dst_mac: str
    src_ip: str
    dst_ip: str
    proto: str
    sport: int
    dport: int
    payload_size: int
    dscp: int = 0
    ttl: int = 64
    udp_checksum: bool = True

    def __post_init__(self) -> None:
        if self.proto not in PROTO_NUMBERS:
            raise TrafficError(f"protocol {self.proto!r} is not 'udp' or 'tcp'")
        _check_mac(self.src_mac, "source MAC")
        _check_mac(self.dst_mac, "destination MAC")
        _check_ip(self.src_ip, "source IP")
        _check_ip(self.dst_ip, "destination IP")
        _check_range(self.sport, 0, 0xFFFF, "source port")
        _check_range(self.dport, 0, 0xFFFF, "destination port")
        _check_range(self.dscp, 0, 63, "DSCP")
        _check_range(self.ttl, 0, 255, "TTL")
        high = MAX_IP_LEN - (header_len(self.proto) - ETH_LEN)
        _check_range(self.payload_size, SEQ_BYTES, high, "payload size")

    @property
    def key(self) -> FlowKey:
        return FlowKey(self.src_ip, self.dst_ip, PROTO_NUMBERS[self.proto], self.sport, self.dport)

    @property
    def frame_size(self) -> int:
        """Bytes of the whole Ethernet frame (no FCS)."""
        return header_len(self.proto) + self.payload_size

    def with_frame_size(self, frame_size: int) -> FlowSpec:
        """The same flow with the payload sized for ``frame_size`` bytes."""
        return replace(self, payload_size=frame_size - header_len(self.proto))


def filler(size: int) -> bytes:
    """The fixed payload pattern: byte i is i mod 256."""
    return bytes(i & 0xFF for i in range(size))


def payload_bytes(size: int, seq: int) -> bytes:
    """A packet's payload: ``seq`` in the first 8 bytes, then the pattern."""
    return _Q.pack(seq & 0xFFFF_FFFF_FFFF_FFFF) + filler(size)[SEQ_BYTES:]


def tcp_seq_number(seq: int, payload_size: int) -> int:
    """TCP sequence number of packet ``seq``: its payload's byte offset."""
    return (seq * payload_size) & 0xFFFF_FFFF


def scapy_packet(
    flow: FlowSpec, seq: int, sport: int | None = None, dport: int | None = None
) -> Packet:
    """Packet ``seq`` of ``flow`` declared with Scapy (the reference that
    ``PacketFactory`` reproduces). Scapy is imported here so that modules
    which only receive packets do not pay for loading it."""
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw

    sport = flow.sport if sport is None else sport
    dport = flow.dport if dport is None else dport
    ip = IP(src=flow.src_ip, dst=flow.dst_ip, tos=flow.dscp << 2, ttl=flow.ttl, id=seq & 0xFFFF)
    if flow.proto == "udp":
        l4 = UDP(sport=sport, dport=dport, chksum=None if flow.udp_checksum else 0)
    else:
        l4 = TCP(
            sport=sport,
            dport=dport,
            seq=tcp_seq_number(seq, flow.payload_size),
            ack=0,
            flags=TCP_DATA_FLAGS,
        )
    pay = Raw(load=payload_bytes(flow.payload_size, seq))
    return Ether(src=flow.src_mac, dst=flow.dst_mac) / ip / l4 / pay


@lru_cache(maxsize=256)
def _prototype(proto: str, payload_size: int, dscp: int, ttl: int) -> bytes:
    """The constant bytes of one packet shape, as Scapy declares it in
    ``scapy_packet`` (Ethernet II, IPv4 without options and its default
    flags, UDP, or TCP with Scapy's default window and no options); what
    differs per flow or packet (addresses, ports, id, payload seq,
    checksums) is zero here, and ``PacketFactory`` patches it. Written with
    struct so a sim run does not load Scapy (some 20 MB); tests compare the
    result with Scapy's."""
    l4_len = (TCP_LEN if proto == "tcp" else UDP_LEN) + payload_size
    ether = bytes(12) + _H.pack(ETHERTYPE_IPV4)
    ip = _IPV4.pack(0x45, dscp << 2, IPV4_LEN + l4_len, 0, 0, ttl, PROTO_NUMBERS[proto], 0,
                    bytes(4), bytes(4))
    if proto == "tcp":
        l4 = _TCP.pack(0, 0, 0, 0, (TCP_LEN // 4) << 4, TCP_DATA_FLAGS, TCP_WINDOW, 0, 0)
    else:
        l4 = _UDP.pack(0, 0, l4_len, 0)
    return ether + ip + l4 + payload_bytes(payload_size, 0)


@cython.cfunc
@cython.inline
@cython.locals(p=cython.p_uchar, off=cython.Py_ssize_t, value=cython.ulonglong,
               nbytes=cython.int, k=cython.int)
def _put_be(p: object, off: int, value: int, nbytes: int) -> None:
    """``value`` as ``nbytes`` big-endian bytes at ``p[off]``: C stores on
    the compiled fast path (PacketFactory.packet's compiled branch only;
    the caller keeps ``off + nbytes`` within the buffer)."""
    k = nbytes - 1
    while k >= 0:
        p[off + k] = value & 0xFF
        value >>= 8
        k -= 1


class PacketFactory:
    """Bytes of the packets of one flow, patched from a Scapy-built template."""

    __slots__ = (
        "flow",
        "key",
        "frame_size",
        "_template",
        "_ip_base",
        "_l4_base",
        "_l4",
        "_csum_off",
        "_pay_off",
        "_tcp",
        "_udp_csum",
        "_payload_size",
        "_sport",
        "_dport",
    )

    def __init__(self, flow: FlowSpec) -> None:
        self.flow = flow
        self.key = flow.key
        template = bytearray(_prototype(flow.proto, flow.payload_size, flow.dscp, flow.ttl))
        # One frame per packet shape; addresses are written here (checksums
        # are recomputed below from the patched bytes).
        template[0:6] = bytes.fromhex(flow.dst_mac.replace(":", ""))
        template[6:12] = bytes.fromhex(flow.src_mac.replace(":", ""))
        # (FlowSpec checked both are dotted quads; inet_aton is the C parse)
        template[ETH_LEN + 12 : ETH_LEN + 16] = inet_aton(flow.src_ip)
        template[ETH_LEN + 16 : ETH_LEN + 20] = inet_aton(flow.dst_ip)
        self.frame_size = len(template)
        l4 = ETH_LEN + IPV4_LEN
        tcp = flow.proto == "tcp"
        self._l4 = l4
        self._tcp = tcp
        self._csum_off = l4 + (16 if tcp else 6)
        self._pay_off = l4 + (TCP_LEN if tcp else UDP_LEN)
        self._udp_csum = flow.udp_checksum
        self._payload_size = flow.payload_size
        # The flow's ports, read per packet (compiled, machine words; the
        # flow is frozen).
        self._sport = flow.sport
        self._dport = flow.dport
        # The fields that change per packet are zero in the prototype, so the
        # bases are the sums of what stays.
        self._ip_base = ones_sum(bytes(template[ETH_LEN:l4]))
        seg = bytes(template[l4:])
        pseudo = (
            template[ETH_LEN + 12 : ETH_LEN + 20]
            + bytes((0, PROTO_NUMBERS[flow.proto]))
            + _H.pack(len(seg))
        )
        self._l4_base = ones_sum(bytes(pseudo)) + ones_sum(seg)
        self._template = bytes(template)
        if self._pay_off + SEQ_BYTES > len(template):  # packet() stores up to here
            raise TrafficError(f"{flow.payload_size}-byte payload: too short for the "
                               f"{SEQ_BYTES}-byte sequence number")

    # On the compiled fast path the sums are machine words (each is a few
    # 16-bit words plus a folded base), common.checksum.fold is written out
    # in place, and the frame is one new bytes object copied from the
    # template and patched by C stores (_put_be) before anyone sees it;
    # Python ignores the declarations and patches a bytearray with struct.
    def packet(self, seq: int, sport: int | None = None, dport: int | None = None) -> bytes:
        """Frame of packet ``seq``; ``sport``/``dport`` override the flow's."""
        ip_id = seq & 0xFFFF
        total = self._ip_base + ip_id
        ip_ck = (total % 0xFFFF or (0xFFFF if total else 0)) ^ 0xFFFF  # fold(), inlined
        sp = self._sport if sport is None else sport
        dp = self._dport if dport is None else dport
        if (sp | dp) >> 16:
            raise ValueError(f"ports {sp}, {dp}: each must fit 16 bits")
        s = seq & 0xFFFF_FFFF_FFFF_FFFF
        total = (
            self._l4_base
            + sp
            + dp
            + (s >> 48)
            + ((s >> 32) & 0xFFFF)
            + ((s >> 16) & 0xFFFF)
            + (s & 0xFFFF)
        )
        tcp = self._tcp
        t = 0
        if tcp:
            t = (seq * self._payload_size) & 0xFFFF_FFFF
            total += (t >> 16) + (t & 0xFFFF)
        csum = tcp or self._udp_csum
        ck = (total % 0xFFFF or (0xFFFF if total else 0)) ^ 0xFFFF  # as fold() does
        # RFC 768: a computed zero UDP checksum is sent as all ones.
        if not tcp and not ck:
            ck = 0xFFFF
        if cython.compiled:
            # __init__ checked that the template holds every offset below.
            frame = PyBytes_FromStringAndSize(  # noqa: F821 (cimported in packets.pxd)
                PyBytes_AS_STRING(self._template), len(self._template))  # noqa: F821
            p = cython.cast(cython.p_uchar, PyBytes_AS_STRING(frame))  # noqa: F821
            _put_be(p, 18, ip_id, 2)  # ETH_LEN + 4
            _put_be(p, 24, ip_ck, 2)  # ETH_LEN + 10
            _put_be(p, 34, (sp << 16) | dp, 4)  # self._l4
            _put_be(p, self._pay_off, s, 8)
            if tcp:
                _put_be(p, 38, t, 4)  # self._l4 + 4
            if csum:
                _put_be(p, self._csum_off, ck, 2)
            return frame
        buf = bytearray(self._template)
        _H.pack_into(buf, 18, ip_id)
        _H.pack_into(buf, 24, ip_ck)
        _HH.pack_into(buf, 34, sp, dp)
        _Q.pack_into(buf, self._pay_off, s)
        if tcp:
            _I.pack_into(buf, 38, t)
        if csum:
            _H.pack_into(buf, self._csum_off, ck)
        return bytes(buf)
