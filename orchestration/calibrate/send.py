"""The calibration sender, run inside a host's namespace:

    python -m orchestration.calibrate.send IFACE RATE_PPS SECONDS SIZE SEED SEQ0

Poisson arrivals at ``RATE_PPS`` for ``SECONDS``: UDP frames of ``SIZE``
bytes from 10.0.1.1 to 10.0.2.2 whose first payload bytes are a magic and
the sequence number (from ``SEQ0``), sent on a packet socket. Deadlines are
absolute (lateness never accumulates) and slept for, never spun on: the
switch under test needs the cores. The kernel timestamps that the capture
takes are the send times, not this loop's clock.
"""

from __future__ import annotations

import socket
import struct
import sys
import time

import numpy as np

MAGIC = b"INTBCAL1"
SRC_MAC = bytes.fromhex("000000000101")
SWITCH_MAC = bytes.fromhex("0000000001fe")
SRC_IP = socket.inet_aton("10.0.1.1")
DST_IP = socket.inet_aton("10.0.2.2")
UDP_DPORT = 5000
HEADERS = 14 + 20 + 8


def _checksum(header: bytes) -> int:
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def frame(size: int, seq: int) -> bytes:
    """One calibration frame (Ethernet, IPv4, UDP, magic, sequence)."""
    payload = MAGIC + struct.pack("!Q", seq)
    payload += bytes(size - HEADERS - len(payload))
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, size - 14, seq & 0xFFFF, 0, 64, 17, 0,
                               SRC_IP, DST_IP))
    ip[10:12] = struct.pack("!H", _checksum(bytes(ip)))
    udp = struct.pack("!HHHH", 4000, UDP_DPORT, size - 34, 0)
    return SWITCH_MAC + SRC_MAC + b"\x08\x00" + bytes(ip) + udp + payload


def parse_seq(data: bytes) -> int | None:
    """The sequence number of a captured calibration frame, else None."""
    at = data.find(MAGIC, HEADERS, HEADERS + len(MAGIC) + 1)
    if at < 0 or len(data) < at + len(MAGIC) + 8:
        return None
    return int(struct.unpack_from("!Q", data, at + len(MAGIC))[0])


def send(iface: str, rate_pps: float, seconds: float, size: int, seed: int, seq0: int) -> int:
    rng = np.random.default_rng(seed)
    count = max(1, int(rate_pps * seconds * 1.2) + 16)
    offsets = np.cumsum(rng.exponential(1e9 / rate_pps, count)).astype(np.int64)
    offsets = offsets[offsets < seconds * 1e9]
    frames = [frame(size, seq0 + i) for i in range(len(offsets))]
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((iface, 0))
    out = sock.send
    now = time.monotonic_ns
    start = now() + 20_000_000
    sent = 0
    for off, data in zip(offsets.tolist(), frames):
        wait = start + off - now()
        if wait > 0:  # no busy wait: the switch needs the cores more
            time.sleep(wait / 1e9)
        try:
            out(data)
            sent += 1
        except OSError:
            pass
    sock.close()
    return sent


def main(argv: list[str]) -> int:
    iface, rate, seconds, size, seed, seq0 = argv
    sent = send(iface, float(rate), float(seconds), int(size), int(seed), int(seq0))
    print(sent)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
