"""Telemetry reports as INTCollector's evaluation sends them: TR v0.5 with
INT v0.5 over UDP, written with numpy a batch at a time.

The paper's collector reads TR v0.5 / INT v0.5, and only INT v0.5 carries
queue congestion (instruction bit 6), so only these reports give all six
metrics of Table I (k = 22 values for a five-hop report, as section V-B2
counts). Layout (docs/telemetry_report_format.md): the 12-byte TR v0.5
header (NProto 0, F set), the inner Ethernet, IPv4 (DSCP 0x17, the parser's
default INT signal) and UDP headers (checksum 0: none, as IPv4 allows), the
INT v0.5 shim, the 8-byte metadata header, one record per hop (newest hop
first) and the 4-byte tail.

Everything but the hop records and the TR sequence number depends on the
flow alone, so each flow's header bytes are built once and rows are filled
from them; per-hop values are written as big-endian columns into the stack.
Arrays of per-hop values are given in path order (the INT source first),
as ``Flows.path`` is.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from common.checksum import internet_checksum

INT_DSCP = 0x17
TR_HEADER = 12
ETHERNET = 14
IPV4 = 20
UDP = 8
SHIM = 4
MD_HEADER = 8
TAIL = 4
PREFIX = TR_HEADER + ETHERNET + IPV4 + UDP + SHIM + MD_HEADER

ITEMS: tuple[tuple[tuple[str, int, int], ...], ...] = (
    (("node_id", 0, 4),),
    (("l1_ingress_port", 0, 2), ("l1_egress_port", 2, 2)),
    (("hop_latency", 0, 4),),
    (("queue_id", 0, 1), ("queue_occupancy", 1, 3)),
    (("ingress_ts", 0, 4),),
    (("egress_ts", 0, 4),),
    (("congestion_queue_id", 0, 1), ("queue_congestion", 1, 3)),
    (("egress_tx_util", 0, 4),),
)
"""INT v0.5 instruction bits 0-7: each item's fields as (name, byte offset
in the item's word, width in bytes)."""
ALL_INSTRUCTIONS = len(ITEMS)


@dataclass(frozen=True)
class Flows:
    """Flows and their paths: 5-tuples (UDP) and, per hop in path order, the
    switch id and the ingress and egress port ids."""

    src: np.ndarray  # uint32 IPv4 addresses
    dst: np.ndarray
    sport: np.ndarray
    dport: np.ndarray
    path: np.ndarray  # (flows, hops) switch ids, INT source first
    ingress: np.ndarray  # (flows, hops)
    egress: np.ndarray  # (flows, hops)

    def __len__(self) -> int:
        return len(self.src)

    @property
    def hops(self) -> int:
        return int(self.path.shape[1])


def instruction_fields(instructions: int) -> list[str]:
    """The per-hop fields of INT v0.5 bits 0 .. instructions - 1."""
    return [name for item in ITEMS[:instructions] for name, _, _ in item]


def _be(values: np.ndarray, width: int) -> np.ndarray:
    """The low ``width`` bytes of each value, big-endian, on a new last axis."""
    raw = np.ascontiguousarray(values, dtype=">u4").view(np.uint8)
    return raw.reshape(*values.shape, 4)[..., 4 - width:]


class ReportWriter:
    """Rows of TR v0.5 reports for ``flows`` carrying INT v0.5 instruction
    bits 0 .. ``instructions`` - 1 (1-8)."""

    def __init__(self, flows: Flows, instructions: int = ALL_INSTRUCTIONS,
                 hw_id: int = 1) -> None:
        if not 1 <= instructions <= ALL_INSTRUCTIONS:
            raise ValueError(f"instructions must be 1..{ALL_INSTRUCTIONS}, not {instructions}")
        self.flows = flows
        self.instructions = instructions
        self.hop_bytes = 4 * instructions
        self.stack = flows.hops * self.hop_bytes
        self.length = PREFIX + self.stack + TAIL
        self.fields = instruction_fields(instructions)
        self._prefix = np.stack([np.frombuffer(self._header(i, hw_id), dtype=np.uint8)
                                 for i in range(len(flows))])

    def _header(self, i: int, hw_id: int) -> bytes:
        f = self.flows
        inner = self.length - TR_HEADER - ETHERNET
        bitmap = sum(1 << (15 - b) for b in range(self.instructions))
        tr = struct.pack("!BBBBII", 0x00, 0x20, 0, hw_id & 0x3F, 0, 0)
        eth = bytes.fromhex("020000000002" "020000000001" "0800")
        ip = bytearray(struct.pack("!BBHHHBBHII", 0x45, INT_DSCP << 2, inner, 0, 0x4000, 64,
                                   17, 0, int(f.src[i]), int(f.dst[i])))
        ip[10:12] = struct.pack("!H", internet_checksum(bytes(ip)))
        udp = struct.pack("!HHHH", int(f.sport[i]), int(f.dport[i]), inner - IPV4, 0)
        words = (SHIM + MD_HEADER + self.stack + TAIL) // 4
        shim = struct.pack("!BBBB", 1, 0, words, 0)
        md = struct.pack("!BBBBHH", 0, self.instructions, f.hops + 2, f.hops, bitmap, 0)
        out = tr + eth + bytes(ip) + udp + shim + md
        assert len(out) == PREFIX
        return out

    def rows(self, flow: np.ndarray, values: Mapping[str, np.ndarray],
             seq: np.ndarray | int = 0) -> np.ndarray:
        """One report per entry of ``flow`` (flow indices): a (count, length)
        uint8 array. ``values`` holds (count, hops) arrays in path order for
        the per-hop fields; node and port ids come from the flows, other
        fields not given are zero."""
        flow = np.asarray(flow, dtype=np.intp)
        count, hops = len(flow), self.flows.hops
        out = np.empty((count, self.length), dtype=np.uint8)
        out[:, :PREFIX] = self._prefix[flow]
        out[:, 4:8] = _be(np.broadcast_to(np.asarray(seq, dtype=np.uint64) & 0xFFFFFFFF,
                                          (count,)), 4)
        ids = {"node_id": self.flows.path, "l1_ingress_port": self.flows.ingress,
               "l1_egress_port": self.flows.egress}
        stack = np.zeros((count, hops, self.hop_bytes), dtype=np.uint8)
        for bit, item in enumerate(ITEMS[:self.instructions]):
            for name, offset, width in item:
                given = values.get(name)
                if given is None and name in ids:
                    given = ids[name][flow]
                if given is None:
                    continue
                at = 4 * bit + offset
                stack[:, :, at:at + width] = _be(np.asarray(given)[:, ::-1], width)
        out[:, PREFIX:PREFIX + self.stack] = stack.reshape(count, self.stack)
        out[:, PREFIX + self.stack:] = np.frombuffer(
            struct.pack("!BHB", 17, 0, 0), dtype=np.uint8)
        # the tail keeps the original destination port (v0.5 port signalling)
        out[:, PREFIX + self.stack + 1:PREFIX + self.stack + 3] = _be(
            self.flows.dport[flow].astype(np.uint64), 2)
        return out


def random_flows(count: int, hops: int, switches: int, rng: np.random.Generator) -> Flows:
    """``count`` UDP flows between 10.0.0.0/16 hosts, each over ``hops``
    distinct switches (ids 1..switches) drawn at random, egress ports 1-4."""
    if hops > switches:
        raise ValueError(f"{hops} hops need at least as many switches, not {switches}")
    path = np.argsort(rng.random((count, switches)), axis=1)[:, :hops] + 1
    index = np.arange(count, dtype=np.uint64)
    return Flows(src=np.uint64(0x0A000000) + (index % np.uint64(251)) + np.uint64(1),
                 dst=np.uint64(0x0A010000) + (index // np.uint64(251)) + np.uint64(1),
                 sport=(1024 + index % np.uint64(60000)), dport=np.full(count, 5001, np.uint64),
                 path=path.astype(np.uint64),
                 ingress=rng.integers(1, 5, (count, hops)).astype(np.uint64),
                 egress=rng.integers(1, 5, (count, hops)).astype(np.uint64))
