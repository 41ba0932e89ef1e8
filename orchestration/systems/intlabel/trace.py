"""Tracing one flow's path on a line of switches (INT-label's Fig. 22),
written once against ``Network``.

``h1 - s1 - ... - sn - hn`` (``topologies.generators.line``): one UDP flow
from h1 to hn sends one packet per round, rounds ``gap_s`` apart, until
the collector's reports give its path or ``packets`` have been sent. Two
schemes:

- ``intlabel``: ``p4src/intlabel.p4``, the flow installed as a specific
  flow (section 3.3) on s1, so every hop labels its packets; a report's
  path is its items' switch ids, the bottom (first hop) item first
  (``sinks.intlabel.report``). The packets are 1 kB user packets.
- ``int``: ``p4src/int_md.p4``, s1's host port an INT source for the flow
  (a watchlist entry asking for the node id only, all path tracing needs),
  sn's host port the sink that sends Telemetry Report v2.0; a report's path
  is its node ids, first hop first (``sinks.intcollector.reports``). The
  packets are probes, UDP datagrams with no payload: the paper's INT
  "uses an active probing approach by sending probe packets".

The true path is the switches that transmitted the flow's first packet, in
time order. ``packets_to_trace`` is how many packets had been sent when a
report first decoded to the true path (None: none did). A packet's
telemetry bytes are measured on the wire, on the link into the last switch
(the most any link carries; the sink's own hop rides in its report only,
in both schemes): for INT-label the frame there less the frame h1 sent,
for an INT probe the whole frame (a probe is all overhead).
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass, field

from common.errors import InvalidValueError
from controller.intlabel import CollectorEndpoint, IntLabelConfig, SpecificFlow, configure_switch
from orchestration.network import COLLECTOR_IP, COLLECTOR_MAC, COLLECTOR_PORT, RunEnv
from orchestration.systems.pint import Endpoints, HostFlow
from sinks.intcollector.reports import ParsedReport, parse_packet
from sinks.intlabel.report import ReportError, parse_report
from topologies.generators import line
from topologies.model import Topology, switch_mac

SCHEMES = ("intlabel", "int")
PROGRAMS = {"intlabel": "intlabel", "int": "int_md"}
SPORT, DPORT = 40000, 5001
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
    sent_bytes: int = 0
    """The frame the source host sent (what the wire bytes are measured against)."""

    @property
    def first_report_traces(self) -> bool:
        return bool(self.decoded_paths) and self.decoded_paths[0] == self.true_path


def _flow(topo: Topology) -> HostFlow:
    hosts = sorted(topo.hosts, key=lambda h: int(h[1:]))
    return HostFlow(hosts[0], hosts[-1], SPORT, DPORT)


def _configure_intlabel(net: object, topo: Topology, flow: HostFlow, max_hop: int) -> None:
    cfg = IntLabelConfig(mode="A", max_hop=max_hop, specific_flows=(SpecificFlow(
        src_ip=topo.hosts[flow.src].ip, dst_ip=topo.hosts[flow.dst].ip, proto=17,
        sport=flow.sport, dport=flow.dport),))
    endpoint = CollectorEndpoint(COLLECTOR_MAC, COLLECTOR_IP, COLLECTOR_PORT)
    for name in topo.switches:
        configure_switch(net.clients[name], topo, name, cfg, endpoint)  # type: ignore[attr-defined]


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


def decode_intlabel(frame: bytes) -> tuple[int, ...] | None:
    """The path an INT-label report gives: switch ids, first hop first."""
    try:
        report = parse_report(frame)
    except ReportError:
        return None
    return tuple(item.switch_id for item in reversed(report.items))


def decode_int(frame: bytes) -> tuple[int, ...] | None:
    """The path an INT report gives: node ids, first hop first."""
    if len(frame) < 42:
        return None
    results = parse_packet(frame[42:])
    if not results or not isinstance(results[0], ParsedReport):
        return None
    return tuple(reversed(results[0].hops.get("node_id", ())))


DECODERS = {"intlabel": decode_intlabel, "int": decode_int}


def trace_flow(scheme: str, hops: int, *, packets: int = 20, gap_s: float = 0.02,
               max_hop: int = 5, env: RunEnv | None = None) -> TraceResult:
    """Trace the flow on ``line(hops)`` with ``scheme`` (module docstring)."""
    if scheme not in SCHEMES:
        raise InvalidValueError(f"scheme must be one of {', '.join(SCHEMES)}, not {scheme!r}")
    if hops < 2:
        raise InvalidValueError(f"a traced path needs at least 2 switches, not {hops}")
    env = env or RunEnv()
    topo = line(hops)
    flow = _flow(topo)
    ends = Endpoints(topo)
    payload = USER_PAYLOAD if scheme == "intlabel" else PROBE_PAYLOAD
    ids = {name: spec.device_id for name, spec in topo.switches.items()}
    last = max(topo.switches, key=lambda s: int(s[1:]))
    first_seen: list[tuple[int, int]] = []
    into_last: dict[int, int] = {}
    reports: list[bytes] = []
    lock = threading.Lock()
    src_ip = bytes(int(x) for x in topo.hosts[flow.src].ip.split("."))

    def frame(ident: int) -> bytes:
        body = struct.pack("!H", ident) + bytes(max(payload - 2, 0)) if payload else b""
        return ends.frame(flow.src, flow.dst, ident, flow.sport, flow.dport, body)

    sent_bytes = len(frame(0))
    before_last = f"s{hops - 1}"
    into_port = topo.switch_port_to(before_last, last)

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

    decode = DECODERS[scheme]
    decoded: list[tuple[int, ...]] = []
    traced: int | None = None
    net = env.open(topo, PROGRAMS[scheme], label=f"trace-{scheme}-{hops}")
    with net:
        net.attach_collector(on_reports)
        net.tap_transmitted(tap)
        net.install_routes()
        if scheme == "intlabel":
            _configure_intlabel(net, topo, flow, max_hop)
        else:
            _configure_int(net, topo, flow)
        true: tuple[int, ...] = ()
        sent = 0
        for ident in range(packets):
            net.send_frame(flow.src, frame(ident))
            sent += 1
            net.run(gap_s)
            true = tuple(sid for _, sid in sorted(first_seen))
            with lock:
                got, reports[:] = reports[:], []
            for f in got:
                path = decode(f)
                if path is not None:
                    decoded.append(path)
                    if traced is None and path == true:
                        traced = sent
            if traced is not None:
                break
        net.finish()
    overhead = [n - (0 if scheme == "int" else sent_bytes) for _, n in sorted(into_last.items())]
    return TraceResult(scheme, hops, true, traced, sent, len(decoded), decoded, overhead,
                       sent_bytes)

