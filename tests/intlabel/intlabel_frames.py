"""Telemetry report frames built field by field with struct, independently of
the parser, after docs/intlabel_format.md ("Telemetry report")."""

from __future__ import annotations

import struct

COLLECTOR_MAC = bytes.fromhex("000000fffffe")
SWITCH_MAC = bytes.fromhex("020000000009")


def item_bytes(switch_id: int, in_port: int, out_port: int, ingress_ts: int, label_ts: int,
               latency: int, enq: int, deq: int, bottom: bool = False) -> bytes:
    """One 32-byte item: 48-bit timestamps as 6 raw bytes, 24-bit depths as 3."""
    return (struct.pack("!IHH", switch_id, in_port, out_port)
            + ingress_ts.to_bytes(6, "big") + label_ts.to_bytes(6, "big")
            + struct.pack("!I", latency) + bytes([0x80 if bottom else 0]) + enq.to_bytes(3, "big")
            + b"\x00" + deq.to_bytes(3, "big"))


def report_frame(items: list[bytes], *, int_num: int | None = None, count: int | None = None,
                 max_hop: int = 5, sink: int = 9, flags: int = 0, udp_port: int = 32766,
                 version: int = 1, inner_proto: int = 17, ports: tuple[int, int] = (1234, 80),
                 ip_id: int = 0x0102) -> bytes:
    n = len(items)
    udp_len = 8 + 8 + 32 * n + 20 + 4
    outer = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0, 64, 17, 0,
                        bytes([10, 254, 0, 10]), bytes([10, 255, 255, 254]))
    udp = struct.pack("!HHHH", udp_port, udp_port, udp_len, 0)
    header = struct.pack("!BBBBI", (version << 4) | flags, n if int_num is None else int_num,
                         n if count is None else count, max_hop, sink)
    inner = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 1000, ip_id, 0, 61, inner_proto, 0xBEEF,
                        bytes([10, 0, 1, 1]), bytes([10, 1, 2, 2]))
    return (COLLECTOR_MAC + SWITCH_MAC + b"\x08\x00" + outer + udp + header + b"".join(items)
            + inner + struct.pack("!HH", *ports))
