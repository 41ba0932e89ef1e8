"""One PINT path-tracing run, written once against ``Network``.

Every switch runs ``p4src/pint.p4`` with routes from ``install_routes``, a
32-bit switch id drawn from the seed, its host ports as PINT sources and
sinks and reports to the collector (port 500). Each flow (a 5-tuple
between two hosts) sends its own number of UDP packets with IPv4
identifications 0, 1, ...; one packet of every flow still sending per
round, rounds ``gap_s`` apart so no queue overflows. The sinks' reports go through
``SinkReports`` into the recording module, which decodes each flow's path;
the ground truth is the switches that transmitted each flow's first packet,
in order (every packet of a flow takes one path: ECMP hashes the 5-tuple).
"""

from __future__ import annotations

import random
import struct
import threading
from dataclasses import dataclass, field

from common.checksum import internet_checksum
from common.seeds import derive_seed
from controller.pint.p4config import configure_switch, pint_writes
from orchestration.network import COLLECTOR_MAC, COLLECTOR_PORT, Network
from sinks.pint.engine import Aggregation, ExecutionPlan, Query, plan_queries
from sinks.pint.pathtrace import PathCoding
from sinks.pint.peeling import PathDecode
from sinks.pint.recorder import FlowProblem, Recorder
from sinks.pint.sink_reports import Flow, SinkReports
from topologies.model import Topology, ip_to_int, mac_to_int, switch_mac

PROGRAM = "pint"
QUERY = "path"
INIT_TTL = 64
PINT_PROTO = 0xFD


@dataclass(frozen=True)
class HostFlow:
    src: str
    dst: str
    sport: int
    dport: int


@dataclass
class PintRunResult:
    """Decoded and true paths by 5-tuple, and what was counted on the way."""

    decoded: dict[Flow, PathDecode | FlowProblem]
    true_paths: dict[Flow, tuple[int, ...]]
    switch_ids: dict[str, int]
    sent: int
    reports: int
    delivered: list[bytes]
    problems: dict[str, int] = field(default_factory=dict)


def path_plan(budget: int, max_pending: int | None = None) -> ExecutionPlan:
    """One path-tracing query on every packet, the whole digest wide,
    keeping at most ``max_pending`` undecoded digests per flow (None: all)."""
    return plan_queries([Query(QUERY, "switch id", Aggregation.STATIC_PER_FLOW, budget,
                               space_budget=max_pending)], budget)


def switch_ids(topo: Topology, seed: int) -> dict[str, int]:
    """Distinct nonzero 32-bit ids, one per switch."""
    rng = random.Random(derive_seed(seed, "pint", "switch-ids"))
    ids = rng.sample(range(1, 2**32), len(topo.switches))
    return dict(zip(sorted(topo.switches), ids))


def random_flows(topo: Topology, n: int, seed: int) -> list[HostFlow]:
    """``n`` distinct flows between random pairs of different hosts."""
    rng = random.Random(derive_seed(seed, "pint", "flows"))
    hosts = sorted(topo.hosts)
    flows: dict[tuple[str, str, int, int], None] = {}
    while len(flows) < n:
        src, dst = rng.sample(hosts, 2)
        flows[(src, dst, rng.randrange(1024, 65536), rng.randrange(1, 65536))] = None
    return [HostFlow(*f) for f in flows]


def configure(net: Network, topo: Topology, plan: ExecutionPlan, coding: PathCoding,
              seed: int, ids: dict[str, int]) -> None:
    for name, spec in topo.switches.items():
        host_ports = [port for port, peer, _ in topo.port_peers(name) if peer in topo.hosts]
        writes = pint_writes(plan, seed, switch_id=ids[name], path_codings={QUERY: coding},
                             source_ports=host_ports, sink_ports=host_ports,
                             init_ttl=INIT_TTL,
                             report_macs=(mac_to_int(switch_mac(spec.device_id)),
                                          mac_to_int(COLLECTOR_MAC)))
        configure_switch(net.clients[name], writes, collector_port=COLLECTOR_PORT)


def udp_frame(eth: bytes, src_ip: bytes, dst_ip: bytes, ident: int, sport: int, dport: int,
              payload: bytes) -> bytes:
    """A UDP packet as a host sends it: IPv4 identification ``ident``, TTL
    ``INIT_TTL`` (the hop count the switches derive), header checksum valid."""
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), ident & 0xFFFF, 0,
                               INIT_TTL, 17, 0, src_ip, dst_ip))
    ip[10:12] = internet_checksum(bytes(ip)).to_bytes(2, "big")
    return eth + bytes(ip) + udp


class Endpoints:
    """Frame building for one topology: each host's Ethernet head toward its
    ToR and its IPv4 address, worked out once rather than per packet."""

    def __init__(self, topo: Topology) -> None:
        self.eth: dict[str, bytes] = {}
        self.ip: dict[str, bytes] = {}
        for h, spec in topo.hosts.items():
            tor, _ = topo.host_switch(h)
            self.eth[h] = (mac_to_int(switch_mac(topo.switches[tor].device_id)).to_bytes(6, "big")
                           + mac_to_int(spec.mac).to_bytes(6, "big") + b"\x08\x00")
            self.ip[h] = ip_to_int(spec.ip).to_bytes(4, "big")

    def frame(self, src: str, dst: str, ident: int, sport: int, dport: int,
              payload: bytes) -> bytes:
        return udp_frame(self.eth[src], self.ip[src], self.ip[dst], ident, sport, dport, payload)

    def flow_frame(self, flow: HostFlow, ident: int) -> bytes:
        """A UDP packet of ``flow`` with IPv4 identification ``ident``
        (payload the identification), as the source host sends it."""
        return self.frame(flow.src, flow.dst, ident, flow.sport, flow.dport,
                          struct.pack("!HH", ident, 0))


def flow_frame(topo: Topology, flow: HostFlow, ident: int) -> bytes:
    """One packet of ``flow`` (a run sends many through one ``Endpoints``)."""
    return Endpoints(topo).flow_frame(flow, ident)


def transport(frame: bytes) -> tuple[int, int, int | None]:
    """(protocol, transport header offset, PINT digest or None) of an IPv4
    frame, past PINT's shim and digest when the packet carries them."""
    proto, l4 = frame[23], 34
    if proto == PINT_PROTO:
        proto, l4 = frame[34], 36 + frame[35] // 8
        return proto, l4, int.from_bytes(frame[36:l4], "big")
    return proto, l4, None


def frame_flow(frame: bytes) -> tuple[Flow, int] | None:
    """(5-tuple, identification) of a data frame, with or without the digest."""
    if len(frame) < 38 or frame[12:14] != b"\x08\x00":
        return None
    proto, l4, _ = transport(frame)
    src, dst = struct.unpack_from("!II", frame, 26)
    sport, dport = struct.unpack_from("!HH", frame, l4)
    return (src, dst, proto, sport, dport), struct.unpack_from("!H", frame, 18)[0]


def run_pint(net: Network, topo: Topology, *, flows: dict[HostFlow, int], coding: PathCoding,
             seed: int, gap_s: float = 0.002, max_pending: int | None = None,
             drain_s: float = 0.0) -> PintRunResult:
    """Configure, send each flow its number of packets, decode. ``net`` runs
    ``pint``; the frames hosts got come back in ``delivered``. ``drain_s``:
    how long to wait after the last round for reports still on their way
    (live targets; the sim's last round is drained after ``gap_s``)."""
    plan = path_plan(coding.bits, max_pending)
    ids = switch_ids(topo, seed)
    sink = SinkReports(Recorder(plan, seed, {QUERY: coding}))
    reports: list[bytes] = []
    hops: dict[Flow, list[tuple[int, int]]] = {}  # (time, switch id) of the first packet
    delivered: list[bytes] = []
    ends = Endpoints(topo)
    # Only the run's own flows: on a live target the hosts' kernels send
    # frames of their own (an ICMP error, say) that may also carry
    # identification 0.
    sent_flows = {frame_flow(ends.flow_frame(flow, 0)) for flow in flows}

    def tap(ns: int, switch: str, _port: int, frame: bytes) -> None:
        parsed = frame_flow(frame)
        if parsed in sent_flows:
            hops.setdefault(parsed[0], []).append((ns, ids[switch]))  # type: ignore[index]

    lock = threading.Lock()  # live targets hand frames over from reader threads

    def on_reports(frames: list[tuple[bytes, float]]) -> None:
        with lock:
            reports.extend(f for f, _ in frames)

    def on_delivered(frames: list[tuple[bytes, float]]) -> None:
        with lock:
            delivered.extend(f for f, _ in frames)

    def take() -> list[bytes]:
        with lock:
            taken = reports[:]
            reports.clear()
        return taken

    with net:
        # Attached once the network is up: a live target has no hosts before.
        net.attach_collector(on_reports)
        net.tap_transmitted(tap)
        for host in topo.hosts:
            net.listen(host, on_delivered)
        net.install_routes()
        configure(net, topo, plan, coding, seed, ids)
        for ident in range(max(flows.values(), default=0)):
            for flow, count in flows.items():
                if ident < count:
                    net.send_frame(flow.src, ends.flow_frame(flow, ident))
            net.run(gap_s)
            sink.feed(take())
        net.run(max(gap_s, drain_s))
        sink.feed(take())
        net.finish()  # a live target replays what its switches sent to the taps here
    decoded = {sink.flows[key]: result for key, result in sink.recorder.paths(QUERY).items()}
    problems = dict(sink.problems) | dict(sink.recorder.problems)
    # In time order: a live target replays its taps switch by switch.
    true_paths = {f: tuple(sid for _, sid in sorted(p)) for f, p in hops.items()}
    return PintRunResult(decoded, true_paths, ids,
                         sent=sum(flows.values()), reports=sink.reported,
                         delivered=delivered, problems=problems)
