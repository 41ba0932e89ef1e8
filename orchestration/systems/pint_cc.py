"""HPCC senders on hosts, fed by full INT (``int_md.p4``) or by PINT's 8-bit
per-packet maximum (``pint.p4``), written once against ``Network``.

Every host runs a sender and a receiver. A flow's data packets are UDP to
port ``DATA_PORT`` carrying (flow id, sequence number, data bytes) and up to
``MSS`` data bytes; the receiver answers each with an ACK to ``ACK_PORT``
that echoes the telemetry the data packet collected. The sender keeps
HPCC's window (``sinks.pint.hpcc``) and sends while its bytes in flight
are below it. The fabric is lossless (queues deep enough for every window:
the run reports drops, and a flow that lost a packet never completes), as
HPCC's RDMA fabric is with PFC.

What each switch gives per packet, and how the sender makes HPCC's per-link
``u = qlen/(B*T) + txRate/B`` of it:

- **Full INT** (INT-MD v2.0, instruction bits 2, 3, 5, 7: hop latency,
  queue id and occupancy, egress timestamp, egress port tx utilization; 20
  bytes a hop behind a 16-byte shim and header, all kept to the receiver:
  no sink port). ``qlen/B`` is the hop latency (v1model: egress minus
  ingress timestamp, in microseconds: the time the packet queued, which is
  the queue it found drained at line rate), the smaller of this ACK's and the
  last one's, as HPCC takes the smaller qlen; ``tau`` is the difference of
  the hop's egress timestamps between the two ACKs.
- **PINT** (one per-packet maximum query in an 8-bit digest behind
  pint.p4's 2-byte shim; no sink port, so the receiver reads the digest):
  every hop writes ``max(digest, code(deq_timedelta))``, the value
  approximation of its queueing delay in microseconds, which is again
  ``qlen/B``; the sender decodes the path maximum (within ``1+eps``) and
  takes ``tau`` as the time since the flow's previous ACK.

**txRate/B.** HPCC reads a per-port byte counter; v1model gives the egress
pipeline no transmitted-byte count or rate (int_md.p4 writes INT's "not
available" into the tx utilization item), and a register that kept one
would need a division per packet. Both variants therefore use what a queue
tells for certain: a packet that waited (``qlen > 0``) saw a link
transmitting at line rate, ``txRate/B = 1``; one that did not wait reads
0. The sim knows each port's rate and transmitted bytes (``EgressPort``),
but handing them to the pipeline would be a v1model extension, so neither
variant gets them. A path with no queue thus reads ``U = 0`` and, after
``max_stage`` rounds of additive increase, the window returns to the
line-rate window (HPCC's rate cap): both variants probe harder than HPCC
with byte counters would, in the same way, so they compare.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from common.errors import InvalidValueError
from common.seeds import derive_seed
from controller.pint.p4config import configure_switch, pint_writes
from orchestration.network import Network
from orchestration.systems.pint import INIT_TTL, Endpoints, switch_ids, transport
from sinks.pint.engine import Aggregation, Query, plan_queries
from sinks.pint.hpcc import HpccParams, HpccState, link_u, on_ack
from sinks.pint.values import ValueCodec
from topologies.model import Topology

DATA_PORT = 5001
ACK_PORT = 6001
MSS = 1000  # data bytes per packet
CC_HEADER = struct.Struct("!IIH")  # flow id, sequence number, data bytes
ACK_HEADER = struct.Struct("!IIB")  # flow id, sequence number, telemetry length
PLAIN_BYTES = 14 + 20 + 8 + CC_HEADER.size  # a data frame's headers, no telemetry
INT_DSCP = 0x17
INT_INSTRUCTIONS = 0x3500  # bits 2, 3, 5, 7 (bit 0 is the most significant)
INT_HOP_BYTES = 20
INT_MAX_HOPS = 8
PINT_BITS = 8
PINT_QUERY = "queue-delay"
PINT_LO_US, PINT_HI_US = 1.0, 4096.0
MODES = ("int", "pint")


@dataclass(frozen=True)
class CcFlow:
    fid: int
    src: str
    dst: str
    size: int  # data bytes
    start_ns: int

    @property
    def packets(self) -> int:
        return max(1, -(-self.size // MSS))

    def data_bytes(self, seq: int) -> int:
        return min(MSS, self.size - seq * MSS) if self.size else 0


@dataclass
class FlowOutcome:
    flow: CcFlow
    fct_ns: int | None = None
    ideal_ns: int = 0
    switches: int = 0
    telemetry_bytes: int = 0  # over the flow's data packets, as delivered
    received: int = 0


@dataclass
class CcRunResult:
    mode: str
    outcomes: list[FlowOutcome]
    queue_drops: int
    ack_telemetry_bytes: int
    acks: int
    base_rtt_s: float
    elapsed_s: float
    extra: dict[str, Any] = field(default_factory=dict)


def serialization_ns(nbytes: int, bandwidth_mbps: float) -> int:
    """As the sim's wires compute it (integer nanoseconds)."""
    return nbytes * 8 * 1_000_000_000 // round(bandwidth_mbps * 1_000_000)


def ideal_fct_ns(flow: CcFlow, links: int, bandwidth_mbps: float, delay_us: float) -> int:
    """The flow alone on an idle path of ``links`` equal links, frames without
    telemetry: store-and-forward, full frames then the last, smaller one."""
    full = serialization_ns(PLAIN_BYTES + MSS, bandwidth_mbps)
    n = flow.packets
    last = serialization_ns(PLAIN_BYTES + flow.data_bytes(n - 1), bandwidth_mbps)
    delay = round(delay_us * 1000)
    return (n - 1) * full + last + links * delay + (links - 1) * (full if n > 1 else last)


def base_rtt_s(topo: Topology, bandwidth_mbps: float, delay_us: float) -> float:
    """HPCC's ``T``: a full data frame out and a bare ACK back over the longest
    host-to-host path."""
    import networkx as nx

    diameter = nx.diameter(topo.switch_graph())
    links = diameter + 2
    data = serialization_ns(PLAIN_BYTES + MSS, bandwidth_mbps)
    ack = serialization_ns(14 + 20 + 8 + ACK_HEADER.size, bandwidth_mbps)
    return links * (data + ack + 2 * round(delay_us * 1000)) / 1e9


def uniform_links(topo: Topology) -> tuple[float, float]:
    """(bandwidth Mb/s, delay us) shared by every link: the ideal FCT and T
    assume one rate and one delay."""
    kinds = {(ln.bandwidth_mbps, ln.delay_us) for ln in topo.links}
    if len(kinds) != 1:
        raise InvalidValueError(f"topology {topo.name}: links differ in rate or delay "
                                f"({sorted(kinds)}); the HPCC run needs them equal")
    return kinds.pop()


def pint_codec() -> ValueCodec:
    return ValueCodec(PINT_BITS, PINT_LO_US, PINT_HI_US)


def configure_int(net: Network, topo: Topology, ids: dict[str, int]) -> None:
    """Host ports are INT sources for the data port; no sinks, so the stack
    reaches the receiver."""
    for name in topo.switches:
        client = net.clients[name]
        client.tables["MyEgress.int_node_config"].default.modify(
            "MyEgress.set_node_id", {"node_id": ids[name]})
        host_ports = [port for port, peer, _ in topo.port_peers(name) if peer in topo.hosts]
        for port in host_ports:
            client.tables["MyIngress.int_source_port"].insert(
                {"standard_metadata.ingress_port": port}, "MyIngress.set_source_port")
        if host_ports:
            client.tables["MyIngress.int_watchlist"].insert(
                {"hdr.ipv4.protocol": (17, 0xFF), "meta.l4_dport": (DATA_PORT, DATA_PORT)},
                "MyIngress.int_watch",
                {"instructions": INT_INSTRUCTIONS, "max_hop_cnt": INT_MAX_HOPS}, priority=10)


def configure_pint(net: Network, topo: Topology, seed: int, ids: dict[str, int]) -> None:
    """One 8-bit per-packet maximum on every packet; host ports are sources
    only, so the digest reaches the receiver."""
    plan = plan_queries([Query(PINT_QUERY, "queue delay", Aggregation.PER_PACKET, PINT_BITS)],
                        PINT_BITS)
    for name in topo.switches:
        host_ports = [port for port, peer, _ in topo.port_peers(name) if peer in topo.hosts]
        writes = pint_writes(plan, seed, switch_id=ids[name],
                             value_codecs={PINT_QUERY: pint_codec()},
                             source_ports=host_ports, init_ttl=INIT_TTL)
        configure_switch(net.clients[name], writes)


@dataclass
class _Udp:
    ttl: int
    dport: int
    payload: int  # offset of the UDP payload
    digest: int | None  # PINT's digest when the packet carries one


def parse_udp(frame: bytes) -> _Udp | None:
    """The UDP payload's offset in an IPv4 frame, past PINT's shim and digest."""
    if len(frame) < 42 or frame[12:14] != b"\x08\x00" or frame[14] != 0x45:
        return None
    proto, l4, digest = transport(frame)
    if proto != 17 or len(frame) < l4 + 8:
        return None
    return _Udp(frame[22], int.from_bytes(frame[l4 + 2:l4 + 4], "big"), l4 + 8, digest)


def int_stack(frame: bytes, udp_payload: int) -> tuple[bytes, int] | None:
    """(the INT-MD stack, the offset past it) of a frame INT-signalled by
    DSCP, or None when the frame carries no INT."""
    if frame[15] >> 2 != INT_DSCP:
        return None
    shim = udp_payload
    words = frame[shim + 1]
    start, end = shim + 16, shim + 4 + 4 * words
    if words < 3 or len(frame) < end:
        return None
    return frame[start:end], end


def int_hops(stack: bytes) -> list[tuple[int, int, int]]:
    """(hop latency us, queue occupancy, egress timestamp us) per hop, in path
    order (the stack holds the last hop first)."""
    out = []
    for off in range(len(stack) - INT_HOP_BYTES, -1, -INT_HOP_BYTES):
        latency, queue = struct.unpack_from("!II", stack, off)
        (egress,) = struct.unpack_from("!Q", stack, off + 8)
        out.append((latency, queue & 0xFFFFFF, egress))
    return out


class _Sender:
    """One flow's HPCC sender."""

    __slots__ = ("flow", "state", "next_seq", "inflight", "hops", "last_ack_ns")

    def __init__(self, flow: CcFlow, params: HpccParams) -> None:
        self.flow = flow
        self.state = HpccState.start(params)
        self.next_seq = 0
        self.inflight = 0
        self.hops: list[tuple[int, int, int]] | None = None
        self.last_ack_ns: int | None = None


class HpccRun:
    """Every host's senders and receivers for one run."""

    def __init__(self, net: Network, topo: Topology, flows: list[CcFlow], mode: str,
                 params: HpccParams) -> None:
        if mode not in MODES:
            raise InvalidValueError(f"telemetry mode '{mode}' (modes: {', '.join(MODES)})")
        self.net, self.topo, self.mode, self.params = net, topo, mode, params
        self.ends = Endpoints(topo)
        self.flows = {f.fid: f for f in flows}
        self.outcomes = {f.fid: FlowOutcome(f) for f in flows}
        self.senders: dict[int, _Sender] = {}
        self.done = 0
        self.acks = 0
        self.ack_telemetry = 0
        self.t0_ns = 0
        levels = pint_codec().decode(np.arange(1 << PINT_BITS))
        self.pint_us = [float(v) for v in levels]

    # -------------------------------------------------------------- sending
    def start_flow(self, fid: int) -> None:
        self.senders[fid] = s = _Sender(self.flows[fid], self.params)
        self._send_more(s)

    def _send_more(self, s: _Sender) -> None:
        f = s.flow
        while s.next_seq < f.packets and s.inflight < s.state.window:
            n = f.data_bytes(s.next_seq)
            payload = CC_HEADER.pack(f.fid, s.next_seq, n) + bytes(n)
            frame = self.ends.frame(f.src, f.dst, s.next_seq, 1024 + f.fid % 60000, DATA_PORT,
                                    payload)
            s.inflight += len(frame)
            s.next_seq += 1
            self.net.send_frame(f.src, frame)

    # ------------------------------------------------------------ receiving
    def on_frames(self, host: str, frames: list[tuple[bytes, float]]) -> None:
        for frame, t in frames:
            udp = parse_udp(frame)
            if udp is None:
                continue
            now_ns = round(t * 1e9)
            if udp.dport == DATA_PORT:
                self._on_data(host, frame, udp, now_ns)
            elif udp.dport == ACK_PORT:
                self._on_ack(frame, udp, now_ns)

    def _on_data(self, host: str, frame: bytes, udp: _Udp, now_ns: int) -> None:
        off = udp.payload
        if self.mode == "int":
            found = int_stack(frame, off)
            if found is None:
                return
            telemetry, off = found
        else:
            if udp.digest is None:
                return
            telemetry = bytes([udp.digest])
        fid, seq, n = CC_HEADER.unpack_from(frame, off)
        out = self.outcomes[fid]
        f = out.flow
        out.received += 1
        out.switches = INIT_TTL - udp.ttl
        out.telemetry_bytes += len(frame) - (PLAIN_BYTES + n)
        if out.received == f.packets:
            out.fct_ns = now_ns - self.t0_ns - f.start_ns
            self.done += 1
        ack = ACK_HEADER.pack(fid, seq, len(telemetry)) + telemetry
        self.net.send_frame(host, self.ends.frame(host, f.src, seq, DATA_PORT, ACK_PORT, ack))

    def _on_ack(self, frame: bytes, udp: _Udp, now_ns: int) -> None:
        fid, seq, length = ACK_HEADER.unpack_from(frame, udp.payload)
        s = self.senders[fid]
        telemetry = frame[udp.payload + ACK_HEADER.size:udp.payload + ACK_HEADER.size + length]
        self.acks += 1
        self.ack_telemetry += length
        f = s.flow
        s.inflight -= PLAIN_BYTES + f.data_bytes(seq)
        p = self.params
        if self.mode == "int":
            u, tau = self._int_sample(s, int_hops(telemetry))
        else:
            delay_us = self.pint_us[telemetry[0]]
            u = link_u(delay_us * 1e-6, 1.0 if delay_us > 0 else 0.0, p)
            tau = p.base_rtt_s if s.last_ack_ns is None else (now_ns - s.last_ack_ns) / 1e9
        s.last_ack_ns = now_ns
        on_ack(s.state, u, tau, seq + 1, s.next_seq, p)
        self._send_more(s)

    def _int_sample(self, s: _Sender, hops: list[tuple[int, int, int]]) -> tuple[float, float]:
        """The path's largest link u and the time its sample covers."""
        p = self.params
        prev = s.hops if s.hops is not None and len(s.hops) == len(hops) else None
        best, tau = 0.0, p.base_rtt_s
        for i, (latency, queue, egress) in enumerate(hops):
            busy = 1.0 if latency > 0 or queue > 0 else 0.0
            q_us = latency if prev is None else min(latency, prev[i][0])
            u = link_u(q_us * 1e-6, busy, p)
            if u > best or i == 0:
                best = u
                tau = p.base_rtt_s if prev is None else (egress - prev[i][2]) * 1e-6
        s.hops = hops
        return best, tau


def run_hpcc(net: Network, topo: Topology, flows: list[CcFlow], *, mode: str, seed: int,
             eta: float = 0.95, max_stage: int = 5, w_ai: float | None = None,
             limit_s: float = 30.0, step_s: float = 0.01) -> CcRunResult:
    """Configure ``mode``'s telemetry, play ``flows`` (start times from the
    traffic's time 0), run until every flow completes or ``limit_s`` of
    network time passed. ``net`` runs ``int_md`` or ``pint``."""
    bandwidth, delay = uniform_links(topo)
    rtt = base_rtt_s(topo, bandwidth, delay)
    w_init = bandwidth * 1e6 / 8 * rtt
    params = HpccParams(rtt, w_init, eta, max_stage,
                        w_init * (1 - eta) / 16 if w_ai is None else w_ai)
    run = HpccRun(net, topo, flows, mode, params)
    ids = switch_ids(topo, derive_seed(seed, "pint-cc"))
    with net:
        for host in topo.hosts:
            net.listen(host, lambda frames, h=host: run.on_frames(h, frames))
        net.install_routes()
        if mode == "int":
            configure_int(net, topo, ids)
        else:
            configure_pint(net, topo, seed, ids)
        clock = net.clock
        run.t0_ns = round(clock.now() * 1e9)
        for f in flows:
            clock.call_later(f.start_ns / 1e9, run.start_flow, f.fid)
        last_start = max((f.start_ns for f in flows), default=0) / 1e9
        while run.done < len(flows) and clock.now() - run.t0_ns / 1e9 < last_start + limit_s:
            net.run(step_s)
        counters = net.finish()
    for out in run.outcomes.values():
        links = out.switches + 1
        out.ideal_ns = ideal_fct_ns(out.flow, links, bandwidth, delay)
    return CcRunResult(mode, [run.outcomes[f.fid] for f in flows], counters.queue_drops,
                       run.ack_telemetry, run.acks, rtt, counters.elapsed_s,
                       {"events": counters.events, "w_ai": params.w_ai, "w_init": w_init})
