"""Tracing one flow's path on a line of switches (INT-label's Fig. 22),
written once against ``Network``.

``s1 - ... - sn`` (``topologies.generators.line``): one UDP flow from a host
of s1 to a host of sn sends one packet per round, rounds ``gap_s`` apart,
until the collector's reports give its path or ``packets`` have been sent.
Three schemes:

- ``intlabel``: ``p4src/intlabel.p4``, the flow installed as a specific
  flow (section 3.3) on s1, so every hop labels its packets; a report's
  path is its items' switch ids, the bottom (first hop) item first
  (``sinks.intlabel.report``). The packets are 1 kB user packets.
- ``intlabel-base``: the same switches without the mark, Base A with
  interval ``T_ms``: each hop labels the first packet after T whoever sent
  it. Every link of the path also carries Poisson cross traffic
  (``cross_pps``, 1 kB packets from a second host on each switch, each
  stream on one link of the path only) and the flow's own packets leave at
  Poisson times too (mean gap ``gap_s``), so a hop labels the flow's packets
  now and then, independently of the other hops, and the path is assembled
  from several reports (``sinks.intlabel.pathdecode``, the collector
  knowing the wiring).
- ``int``: ``p4src/int_md.p4``, s1's host port an INT source for the flow
  (a watchlist entry asking for the node id only, all path tracing needs),
  sn's host port the sink that sends Telemetry Report v2.0; a report's path
  is its node ids, first hop first (``sinks.intcollector.reports``). The
  packets are probes, UDP datagrams with no payload: the paper's INT
  "uses an active probing approach by sending probe packets".

The true path is the switches that transmitted the flow's first packet, in
time order. ``packets_to_trace`` is how many packets had been sent when the
reports so far first decoded to the true path (None: they never did). A
packet's telemetry bytes are measured on the wire, on the link into the
last switch (the most any link carries; the sink's own hop rides in its
report only, in every scheme): for INT-label the frame there less the frame
the host sent, for an INT probe the whole frame (a probe is all overhead).
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from common.errors import InvalidValueError
from common.seeds import derive_seed
from controller.intlabel import CollectorEndpoint, IntLabelConfig, SpecificFlow, configure_switch
from orchestration.network import COLLECTOR_IP, COLLECTOR_MAC, COLLECTOR_PORT, RunEnv
from orchestration.systems.pint import Endpoints, HostFlow
from sinks.intcollector.reports import ParsedReport, parse_packet
from sinks.intlabel.pathdecode import PathAssembler
from sinks.intlabel.report import Report, ReportError, parse_report
from topologies.generators import line
from topologies.model import Topology, ip_to_int, switch_mac

SCHEMES = ("intlabel", "intlabel-base", "int")
PROGRAMS = {"intlabel": "intlabel", "intlabel-base": "intlabel", "int": "int_md"}
SPORT, DPORT = 40000, 5001
CROSS_SPORT, CROSS_DPORT = 41000, 5002
WARMUP_S = 0.5  # cross traffic alone first, so every port has labeled before the flow
INT_NODE_ID = 0x8000  # INT-MD instruction bit 0: node id, 4 bytes a hop
INT_MAX_HOPS = 64
INT_REPORT_PORT = 32766
USER_PAYLOAD = 1000 - 42  # INT-label labels 1 kB user packets (section 6.1)
PROBE_PAYLOAD = 0


@dataclass
class TraceResult:
    """One flow traced on a line of ``hops`` switches by ``scheme``."""

    scheme: str
    hops: int
    true_path: tuple[int, ...]
    packets_to_trace: int | None
    sent: int
    reports: int
    decoded_paths: list[tuple[int, ...]] = field(default_factory=list)
    """Each report's decoded path, in arrival order."""
    wire_bytes: list[int] = field(default_factory=list)
    """Telemetry bytes of each packet on the link into the last switch."""
    labels: dict[int, tuple[int, ...]] = field(default_factory=dict)
    """INT-label: the switch ids each of the flow's reported packets carried,
    by packet number (IPv4 identification)."""
    sent_bytes: int = 0
    """The frame the source host sent (what the wire bytes are measured against)."""

    @property
    def first_report_traces(self) -> bool:
        return bool(self.decoded_paths) and self.decoded_paths[0] == self.true_path


def _topology(scheme: str, hops: int) -> tuple[Topology, HostFlow, list[HostFlow]]:
    """The line, the traced flow and the cross flows (``intlabel-base`` only)."""
    if scheme != "intlabel-base":
        topo = line(hops)
        return topo, HostFlow("h1", f"h{hops}", SPORT, DPORT), []
    topo = line(hops, hosts_per_switch=2)  # s_i has h(2i-1) and h(2i)
    # One cross flow per link of the path and none on two of them: s_i's second
    # host to s_(i+1)'s second host, and sn's second host to the flow's destination.
    cross = [HostFlow(f"h{2 * i}", f"h{2 * i + 2}", CROSS_SPORT, CROSS_DPORT)
             for i in range(1, hops)]
    cross.append(HostFlow(f"h{2 * hops}", f"h{2 * hops - 1}", CROSS_SPORT, CROSS_DPORT))
    return topo, HostFlow("h1", f"h{2 * hops - 1}", SPORT, DPORT), cross


def _configure_intlabel(net: object, topo: Topology, flow: HostFlow | None, max_hop: int,
                        T_ms: float) -> None:
    """Base A everywhere; ``flow`` (if any) a specific flow on its first hop."""
    marked = () if flow is None else (SpecificFlow(
        src_ip=topo.hosts[flow.src].ip, dst_ip=topo.hosts[flow.dst].ip, proto=17,
        sport=flow.sport, dport=flow.dport),)
    cfg = IntLabelConfig(mode="A", T_ms=T_ms, max_hop=max_hop, specific_flows=marked)
    endpoint = CollectorEndpoint(COLLECTOR_MAC, COLLECTOR_IP, COLLECTOR_PORT)
    for name in topo.switches:
        configure_switch(net.clients[name], topo, name, cfg, endpoint)  # type: ignore[attr-defined]


def wiring(topo: Topology) -> dict[tuple[int, int], int | None]:
    """(switch id, port) -> the switch id on the other end, None for a host."""
    out: dict[tuple[int, int], int | None] = {}
    for name, spec in topo.switches.items():
        for port, peer, _ in topo.port_peers(name):
            out[(spec.device_id, port)] = (topo.switches[peer].device_id
                                           if peer in topo.switches else None)
    return out


def _configure_int(net: object, topo: Topology, flow: HostFlow) -> None:
    """Node ids are device ids; every host port a source and a sink, the
    watchlist the flow's UDP port, reports by clone session 500."""
    watch = ({"hdr.ipv4.protocol": (17, 0xFF), "meta.l4_dport": (flow.dport, flow.dport)},
             {"instructions": INT_NODE_ID, "max_hop_cnt": INT_MAX_HOPS})
    for i, (name, spec) in enumerate(sorted(topo.switches.items())):
        tables = net.clients[name].tables  # type: ignore[attr-defined]
        defaults = {
            "MyEgress.int_node_config": ("MyEgress.set_node_id", {"node_id": spec.device_id}),
            "MyEgress.int_report_config": ("MyEgress.set_report", {
                "src_mac": switch_mac(spec.device_id), "collector_mac": COLLECTOR_MAC,
                "src_ip": f"10.253.0.{i + 1}", "collector_ip": COLLECTOR_IP,
                "src_port": INT_REPORT_PORT, "collector_port": INT_REPORT_PORT, "hw_id": 0,
                "version": 2}),
        }
        for table, (action, params) in defaults.items():
            tables[table].default.modify(action, params)
        for port, peer, _ in topo.port_peers(name):
            if peer in topo.hosts:
                tables["MyIngress.int_source_port"].insert(
                    {"standard_metadata.ingress_port": port}, "MyIngress.set_source_port")
                tables["MyEgress.int_sink_port"].insert(
                    {"standard_metadata.egress_port": port}, "MyEgress.set_sink_port")
        tables["MyIngress.int_watchlist"].insert(watch[0], "MyIngress.int_watch", watch[1],
                                                 priority=10)
        net.clients[name].clone_sessions.insert(500, [COLLECTOR_PORT])  # type: ignore[attr-defined]


def intlabel_report(frame: bytes) -> Report | None:
    try:
        return parse_report(frame)
    except ReportError:
        return None


def decode_intlabel(frame: bytes) -> tuple[int, ...] | None:
    """The path an INT-label report gives: switch ids, first hop first."""
    report = intlabel_report(frame)
    return None if report is None else tuple(i.switch_id for i in reversed(report.items))


def decode_int(frame: bytes) -> tuple[int, ...] | None:
    """The path an INT report gives: node ids, first hop first."""
    if len(frame) < 42:
        return None
    results = parse_packet(frame[42:])
    if not results or not isinstance(results[0], ParsedReport):
        return None
    return tuple(reversed(results[0].hops.get("node_id", ())))


class _Decoder:
    """What the collector makes of the reports it receives, one at a time."""

    def __init__(self, scheme: str, topo: Topology, flow: HostFlow) -> None:
        self.scheme = scheme
        self.flow_ips = (ip_to_int(topo.hosts[flow.src].ip), ip_to_int(topo.hosts[flow.dst].ip))
        self.assembler = PathAssembler(wiring(topo))
        self.labels: dict[int, tuple[int, ...]] = {}
        self.paths: list[tuple[int, ...]] = []

    def feed(self, frame: bytes) -> tuple[int, ...] | None:
        if self.scheme == "int":
            path = decode_int(frame)
        else:
            report = intlabel_report(frame)
            if report is None or (report.src_ip, report.dst_ip) != self.flow_ips:
                return None
            self.labels[report.ip_id] = tuple(i.switch_id for i in reversed(report.items))
            path = (self.labels[report.ip_id] if self.scheme == "intlabel"
                    else self.assembler.feed(report.items))
        if path is not None:
            self.paths.append(path)
        return path


def _cross_traffic(net: Any, ends: Endpoints, flows: list[HostFlow], pps: float,
                   horizon_s: float, seed: int) -> None:
    """Poisson 1 kB packets on every cross flow, scheduled up front."""
    rng = np.random.default_rng(seed)
    body = bytes(USER_PAYLOAD)
    for f in flows:
        t, ident = float(rng.exponential(1 / pps)), 0
        while t < horizon_s:
            net.clock.call_later(t, net.send_frame, f.src,
                                 ends.frame(f.src, f.dst, ident, f.sport, f.dport, body))
            t += float(rng.exponential(1 / pps))
            ident = (ident + 1) & 0xFFFF


def trace_flow(scheme: str, hops: int, *, packets: int = 20, gap_s: float = 0.02,
               max_hop: int = 5, T_ms: float = 50.0, cross_pps: float = 500.0,
               until_traced: bool = True, rep: int = 0,
               env: RunEnv | None = None) -> TraceResult:
    """Trace the flow on a line of ``hops`` switches with ``scheme`` (module
    docstring). ``until_traced`` False sends all ``packets`` (to measure how
    often each hop labels the flow); ``rep`` draws other cross traffic."""
    if scheme not in SCHEMES:
        raise InvalidValueError(f"scheme must be one of {', '.join(SCHEMES)}, not {scheme!r}")
    if hops < 2:
        raise InvalidValueError(f"a traced path needs at least 2 switches, not {hops}")
    env = env or RunEnv()
    topo, flow, cross = _topology(scheme, hops)
    ends = Endpoints(topo)
    payload = PROBE_PAYLOAD if scheme == "int" else USER_PAYLOAD
    ids = {name: spec.device_id for name, spec in topo.switches.items()}
    first_seen: list[tuple[int, int]] = []
    into_last: dict[int, int] = {}
    reports: list[bytes] = []
    lock = threading.Lock()
    src_ip = ip_to_int(topo.hosts[flow.src].ip).to_bytes(4, "big")

    def frame(ident: int) -> bytes:
        body = struct.pack("!H", ident) + bytes(max(payload - 2, 0)) if payload else b""
        return ends.frame(flow.src, flow.dst, ident, flow.sport, flow.dport, body)

    sent_bytes = len(frame(0))
    before_last = f"s{hops - 1}"
    into_port = topo.switch_port_to(before_last, f"s{hops}")

    def tap(ns: int, switch: str, port: int, data: bytes) -> None:
        if len(data) < 34 or data[26:30] != src_ip:
            return
        ident = struct.unpack_from("!H", data, 18)[0]
        if ident == 0:
            first_seen.append((ns, ids[switch]))
        if switch == before_last and port == into_port:
            into_last[ident] = len(data)

    def on_reports(frames: list[tuple[bytes, float]]) -> None:
        with lock:
            reports.extend(f for f, _ in frames)

    decoder = _Decoder(scheme, topo, flow)
    traced: int | None = None
    net = env.open(topo, PROGRAMS[scheme], label=f"trace-{scheme}-{hops}")
    with net:
        net.attach_collector(on_reports)
        net.tap_transmitted(tap)
        net.install_routes()
        if scheme == "int":
            _configure_int(net, topo, flow)
        else:
            _configure_intlabel(net, topo, flow if scheme == "intlabel" else None, max_hop,
                                T_ms)
        rng = np.random.default_rng(derive_seed(env.seed, "trace", "flow", hops, rep))
        if cross:
            horizon = WARMUP_S + (packets + 5 * packets ** 0.5 + 5) * gap_s
            _cross_traffic(net, ends, cross, cross_pps, horizon,
                           derive_seed(env.seed, "trace", "cross", hops, rep))
            net.run(WARMUP_S)
        sent = 0
        for ident in range(packets):
            net.send_frame(flow.src, frame(ident))
            sent += 1
            net.run(float(rng.exponential(gap_s)) if cross else gap_s)
            true = tuple(sid for _, sid in sorted(first_seen))
            with lock:
                got, reports[:] = reports[:], []
            for f in got:
                if decoder.feed(f) == true and traced is None:
                    traced = sent
            if traced is not None and until_traced:
                break
        net.finish()
    overhead = [n - (0 if scheme == "int" else sent_bytes) for _, n in sorted(into_last.items())]
    return TraceResult(scheme, hops, true, traced, sent, len(decoder.paths), decoder.paths,
                       overhead, decoder.labels, sent_bytes)
