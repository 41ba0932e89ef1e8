"""A TR v2.0 report carrying INT-MD v2.0 over UDP with all nine baseline
instructions (bits 0-8), its bytes laid out here from
``docs/telemetry_report_format.md`` with struct, independently of the
parser. The collector benchmark builds its reports from this template, and
the receiver runs two of them through a throwaway fast path at start, so
the compiled loops are loaded before the first datagram arrives (loading
them takes a few hundred milliseconds, long enough for a busy socket to
overflow)."""

from __future__ import annotations

import struct

INSTRUCTIONS = 0xFF80  # INT v2.0 bits 0-8: node, L1 ports, latency, queue, ts in/out, L2 ports,
#                        tx util, buffer
HOP_WORDS = 12  # 1 + 1 + 1 + 1 + 2 + 2 + 2 + 1 + 1
HOP_BYTES = 4 * HOP_WORDS
INT_DSCP = 0x17  # the parser's default INT signal
DPORT = 5001
SRC_IP = 0x0A000001
DST_IP = 0x0A000102

# byte offsets in a report (UDP payload of the report packet)
GROUP = 0  # TR v2.0 group header, 8 bytes
INDIVIDUAL = 8  # individual report header, 4 bytes
MAIN = 12  # RepMdBits .. DSMdStatus, 8 bytes, no metadata words
IPV4 = 20  # inner packet (InType 4: IPv4 directly)
UDP = IPV4 + 20
SHIM = UDP + 8
INT_HEADER = SHIM + 4
STACK = INT_HEADER + 12
# per hop, offsets in the hop record (instruction-bit order)
HOP_FIELDS = {"node_id": (0, 4), "l1_ingress_port": (4, 2), "l1_egress_port": (6, 2),
              "hop_latency": (8, 4), "queue_id": (12, 1), "queue_occupancy": (13, 3),
              "ingress_ts": (16, 8), "egress_ts": (24, 8), "l2_ingress_port": (32, 4),
              "l2_egress_port": (36, 4), "egress_tx_util": (40, 4), "buffer_id": (44, 1),
              "buffer_occupancy": (45, 3)}


def report_length(hops: int) -> int:
    return STACK + hops * HOP_BYTES


def template(hops: int) -> bytes:
    """One report of ``hops`` hops with the per-report values (sequence
    number, source port, per-hop values) left zero."""
    length = report_length(hops)
    inner_len = length - IPV4
    group = struct.pack("!II", (2 << 28) | (0 << 22), 0)  # Ver 2, hw_id 0, seq 0; node id 0
    report_words = (length - INDIVIDUAL - 4) // 4
    individual = struct.pack("!BBBB", (1 << 4) | 4, report_words, 0, 0x20)  # INT, IPv4; F
    main = struct.pack("!HHHH", 0, 0, 0, 0)
    ip = struct.pack("!BBHHHBBHII", 0x45, INT_DSCP << 2, inner_len, 0, 0x4000, 64, 17, 0,
                     SRC_IP, DST_IP)
    udp = struct.pack("!HHHH", 0, DPORT, inner_len - 20, 0)
    shim = struct.pack("!BBBB", 1 << 4, (12 + hops * HOP_BYTES) // 4, 0, INT_DSCP << 2)
    header = struct.pack("!BBBBHHHH", 2 << 4, 0, HOP_WORDS, 64 - hops, INSTRUCTIONS, 0, 0, 0)
    out = group + individual + main + ip + udp + shim + header + bytes(hops * HOP_BYTES)
    assert len(out) == length and report_words * 4 + 4 + INDIVIDUAL == length
    return out
