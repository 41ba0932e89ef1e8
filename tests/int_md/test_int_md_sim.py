"""p4src/int_md.p4 on the sim target: h1 - s1 - s2 - s3 - s4 - s5 - h2, every
switch configured over P4Runtime, s1 the source and s5 the sink, reports to
the collector on port 500.

h1 sends three bursts of UDP packets faster than s3's port toward s4 may
send (a queue rate limit), so that queue fills and drains. The test records
what the simulator hands each switch, independently of the program: the
time a packet enters (ingress) and the time and queue depth with which it
leaves each port (egress). Then h2 must get exactly what h1 sent (TTL and
IPv4 checksum aside, as routing changes them), the collector one report per
packet, each parsing with five hops whose values are the switches' own:
node and port ids as configured and wired, hop latency, queue occupancy and
timestamps as recorded, and these within what the queue configuration
allows.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from orchestration.network import COLLECTOR_IP, COLLECTOR_MAC, COLLECTOR_PORT, open_network
from orchestration.sim import SimNetwork
from sinks.intcollector.reports import ParsedReport, parse_packet
from topologies.model import Topology, switch_mac

SWITCHES = [f"s{i}" for i in range(1, 6)]
NODE_BASE = 0x0100
SESSION = 500
REPORT_UDP_PORT = 32766
BURSTS, BURST_SIZE = 3, 100
SEND_GAP_NS = 25_000          # 40,000 packets/s within a burst
BURST_GAP_NS = 30_000_000     # the queue drains in between
LIMITED = ("s3", "s4")        # s3's port toward s4 ...
LIMIT_PPS = 10_000            # ... sends at most this many packets/s
LIMIT_GAP_US = 1_000_000 // LIMIT_PPS
QUEUE_DEPTH = 1000            # no drops


def line_topology() -> Topology:
    topo = Topology("int-md-line")
    for name in SWITCHES:
        topo.add_switch(name)
    topo.add_host("h1", "00:00:00:00:00:01", "10.0.1.1")
    topo.add_host("h2", "00:00:00:00:00:02", "10.0.5.1")
    topo.add_link("h1", "s1")
    topo.add_link("h2", "s5")
    for left, right in zip(SWITCHES, SWITCHES[1:]):
        topo.add_link(left, right)
    port = topo.switch_port_to(*LIMITED)
    topo.switches[LIMITED[0]].ports[port].queue_rate_pps = LIMIT_PPS
    topo.switches[LIMITED[0]].ports[port].queue_depth = QUEUE_DEPTH
    return topo


def configure_int(net: SimNetwork, topo: Topology) -> None:
    """Every switch an INT switch; its host ports sources and sinks, with a
    watchlist of UDP ports 5000-5999 (every item, 8 hops) and reports to the
    collector in TR v2.0 through clone session 500."""
    for i, name in enumerate(SWITCHES):
        client = net.clients[name]
        client.tables["MyEgress.int_node_config"].default.modify(
            "MyEgress.set_node_id", {"node_id": NODE_BASE + i + 1})
        host_ports = [port for port, peer, _ in topo.port_peers(name) if peer in topo.hosts]
        for port in host_ports:
            client.tables["MyIngress.int_source_port"].insert(
                {"standard_metadata.ingress_port": port}, "MyIngress.set_source_port")
            client.tables["MyEgress.int_sink_port"].insert(
                {"standard_metadata.egress_port": port}, "MyEgress.set_sink_port")
        if host_ports:
            client.tables["MyIngress.int_watchlist"].insert(
                {"hdr.ipv4.protocol": (17, 0xFF), "meta.l4_dport": (5000, 5999)},
                "MyIngress.int_watch", {"instructions": 0xFF80, "max_hop_cnt": 8}, priority=10)
            client.tables["MyEgress.int_report_config"].default.modify("MyEgress.set_report", {
                "src_mac": switch_mac(topo.switches[name].device_id),
                "collector_mac": COLLECTOR_MAC, "src_ip": f"10.0.0.{i + 1}",
                "collector_ip": COLLECTOR_IP, "src_port": 4000 + i,
                "collector_port": REPORT_UDP_PORT, "hw_id": 0, "version": 2})
            client.clone_sessions.insert(SESSION, [COLLECTOR_PORT])


@dataclass
class Passage:
    """One packet through one switch as the simulator saw it."""

    in_port: int = -1
    in_us: int = -1
    out_port: int = -1
    out_us: int = -1
    enq_qdepth: int = -1


@dataclass
class Recorder:
    """What each switch's pipeline was handed, by (switch, packet number):
    the simulator's calls into the engine, wrapped."""

    passages: dict[tuple[str, int], Passage] = field(default_factory=dict)

    def tap(self, net: SimNetwork, name: str) -> None:
        sim_switch = net.switches[name]
        engine = sim_switch.engine
        ingress, egress = engine.ingress, engine.egress

        def recorded_ingress(port, data, *args):  # type: ignore[no-untyped-def]
            ident = struct.unpack_from("!H", data, 18)[0]  # IPv4 identification
            p = self.passages.setdefault((name, ident), Passage())
            p.in_port, p.in_us = port, sim_switch.now_us()
            return ingress(port, data, *args)

        def recorded_egress(job, enq_timestamp=0, enq_qdepth=0, deq_timedelta=0,  # type: ignore[no-untyped-def]
                            deq_qdepth=0, *rest):
            if job.port != COLLECTOR_PORT:
                # What follows the parsed headers: the UDP payload, which
                # starts with the packet number.
                ident = struct.unpack_from("!Q", job.payload)[0]
                p = self.passages[(name, ident)]
                p.out_port, p.out_us, p.enq_qdepth = job.port, sim_switch.now_us(), enq_qdepth
            return egress(job, enq_timestamp, enq_qdepth, deq_timedelta, deq_qdepth, *rest)

        engine.ingress = recorded_ingress
        engine.egress = recorded_egress


def frame(seq: int, topo: Topology) -> bytes:
    h1, h2 = topo.hosts["h1"], topo.hosts["h2"]
    return bytes(Ether(src=h1.mac, dst=switch_mac(topo.switches["s1"].device_id))
                 / IP(src=h1.ip, dst=h2.ip, id=seq, tos=(seq % 64) << 2)
                 / UDP(sport=40000 + seq % 7, dport=5000 + seq % 1000)
                 / Raw(struct.pack("!Q", seq) + bytes(range(seq % 60))))


def routed(sent: bytes, hops: int) -> bytes:
    """IPv4 onward as ``hops`` routers deliver it: TTL down, header checksum anew."""
    ip = IP(sent[14:])
    ip.ttl -= hops
    del ip.chksum
    return bytes(ip)


@pytest.fixture(scope="module")
def run() -> tuple[Topology, dict[int, bytes], dict[int, bytes], list[bytes], Recorder]:
    topo = line_topology()
    # Switches that take no time: only the rate-limited queue may delay a packet.
    net = open_network("sim", topo, "int_md", seed=3, switch_model="ideal")
    assert isinstance(net, SimNetwork)
    reports: list[bytes] = []
    net.attach_collector(lambda frames: reports.extend(f for f, _ in frames))
    received: dict[int, bytes] = {}
    net.listen("h2", lambda frames: received.update(
        (struct.unpack_from("!H", f, 18)[0], f) for f, _ in frames))
    recorder = Recorder()
    with net:
        net.install_routes()
        configure_int(net, topo)
        for name in SWITCHES:
            recorder.tap(net, name)
        sent = {}
        for b in range(BURSTS):
            for k in range(BURST_SIZE):
                seq = b * BURST_SIZE + k
                sent[seq] = frame(seq, topo)
                net.sim.at_ns(b * BURST_GAP_NS + k * SEND_GAP_NS, net.send_frame, "h1",
                              sent[seq])
        net.run(BURSTS * BURST_GAP_NS / 1e9 + 0.05)
        assert net.queue_drops() == {}
    return topo, sent, received, reports, recorder


def test_h2_gets_every_packet_exactly_as_h1_sent_it(run) -> None:  # type: ignore[no-untyped-def]
    topo, sent, received, _, _ = run
    assert sorted(received) == sorted(sent)
    h2 = topo.hosts["h2"]
    for seq, data in sent.items():
        got = received[seq]
        assert got[14:] == routed(data, len(SWITCHES)), seq
        assert Ether(got).dst == h2.mac and Ether(got).src == switch_mac(
            topo.switches["s5"].device_id)


def test_every_report_parses_with_each_switchs_own_values(run) -> None:  # type: ignore[no-untyped-def]
    topo, sent, _, reports, recorder = run
    assert len(reports) == len(sent)
    path = ["h1", *SWITCHES, "h2"]
    ports = {name: (topo.switch_port_to(name, path[i]), topo.switch_port_to(name, path[i + 2]))
             for i, name in enumerate(SWITCHES)}
    seen: set[int] = set()
    seqs = []
    for data in reports:
        eth = Ether(data)
        ip = eth[IP]
        assert (eth.dst, ip.dst, ip[UDP].dport, ip.src) == (
            COLLECTOR_MAC, COLLECTOR_IP, REPORT_UDP_PORT, "10.0.0.5")
        payload = bytes(ip[UDP].payload)
        [result] = parse_packet(payload)
        assert isinstance(result, ParsedReport), result
        # The inner IPv4 packet follows the 20 bytes of TR v2.0 headers.
        seq = struct.unpack_from("!H", payload, 20 + 4)[0]
        seen.add(seq)
        seqs.append(result.seq)
        original = IP(sent[seq][14:])
        assert result.flow == (int.from_bytes(bytes(original)[12:16], "big"),
                               int.from_bytes(bytes(original)[16:20], "big"),
                               17, original[UDP].sport, original[UDP].dport)
        assert result.node_id == NODE_BASE + 5 and result.int_header["dscp"] == seq % 64
        assert result.hop_count == len(SWITCHES) and result.int_header["e"] == 0
        assert result.int_header["remaining_hop_cnt"] == 8 - len(SWITCHES)
        passages = [recorder.passages[(name, seq)] for name in reversed(SWITCHES)]
        want = {
            "node_id": tuple(NODE_BASE + i for i in range(len(SWITCHES), 0, -1)),
            "l1_ingress_port": tuple(ports[name][0] for name in reversed(SWITCHES)),
            "l1_egress_port": tuple(ports[name][1] for name in reversed(SWITCHES)),
            "hop_latency": tuple(p.out_us - p.in_us for p in passages),
            "queue_id": (0,) * 5,
            "queue_occupancy": tuple(p.enq_qdepth for p in passages),
            "ingress_ts": tuple(p.in_us for p in passages),
            "egress_ts": tuple(p.out_us for p in passages),
            "l2_ingress_port": tuple(ports[name][0] for name in reversed(SWITCHES)),
            "l2_egress_port": tuple(ports[name][1] for name in reversed(SWITCHES)),
            "egress_tx_util": (0xFFFF_FFFF,) * 5,
            "buffer_id": (0xFF,) * 5,
            "buffer_occupancy": (0xFFFFFF,) * 5,
        }
        assert dict(result.hops) == want, seq
        assert [(p.in_port, p.out_port) for p in passages] == [
            ports[name] for name in reversed(SWITCHES)]
    assert seen == set(sent)
    assert seqs == list(range(len(sent)))


def test_queue_values_follow_the_queue_configuration(run) -> None:  # type: ignore[no-untyped-def]
    """Only s3's rate-limited port queues: a packet that finds q packets
    there waits between q and q + 1 sending gaps (1 / 10,000 s); the
    others forward at once (h1's gap is far longer than a frame's
    serialization at 1 Gb/s). The queue fills within a burst and is empty
    when the next one starts."""
    _, sent, _, reports, _ = run
    by_seq = {}
    for data in reports:
        payload = bytes(Ether(data)[UDP].payload)
        [result] = parse_packet(payload)
        assert isinstance(result, ParsedReport)
        by_seq[struct.unpack_from("!H", payload, 24)[0]] = result
    s3 = len(SWITCHES) - 3  # newest first: s5, s4, s3, s2, s1
    for seq, result in by_seq.items():
        latency, occupancy = result.hops["hop_latency"], result.hops["queue_occupancy"]
        for i in range(len(SWITCHES)):
            if i != s3:
                assert (latency[i], occupancy[i]) == (0, 0), seq
        q = occupancy[s3]
        assert 0 <= q < BURST_SIZE
        assert q * LIMIT_GAP_US - 1 <= latency[s3] <= (q + 1) * LIMIT_GAP_US + 1, seq
        for i in range(len(SWITCHES)):
            assert result.hops["egress_ts"][i] - result.hops["ingress_ts"][i] == latency[i]
    firsts = [by_seq[b * BURST_SIZE].hops["queue_occupancy"][s3] for b in range(BURSTS)]
    peaks = [max(by_seq[b * BURST_SIZE + k].hops["queue_occupancy"][s3]
                 for k in range(BURST_SIZE)) for b in range(BURSTS)]
    assert firsts == [0] * BURSTS
    # A burst arrives at 4 times the port's rate: about 3/4 of it queues.
    assert all(BURST_SIZE // 2 < peak < BURST_SIZE for peak in peaks), peaks
