"""``intbed-switch``: its command line, queues and pcap files, then the real
process on veth pairs between network namespaces, driven over P4Runtime/gRPC.

The live tests need root (namespaces, veths, AF_PACKET); without it they are
skipped with that reason. Each one starts ``python -m
dataplane.targets.softswitch.main`` as simple_switch_grpc is started, sends raw
frames from one namespace and reads them in another, and checks that
teardown leaves no namespace, link or process behind.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from common.checksum import internet_checksum
from common.paths import PACKAGE_ROOT
from common.pcap import LINKTYPE_ETHERNET, PcapWriter, read_pcap
from common.rawsock import PACKET_IGNORE_OUTGOING, SOL_PACKET, open_raw_socket
from dataplane.targets.softswitch.cli import SwitchConfigError, SwitchOptions, parse_args
from dataplane.targets.softswitch.main import main
from dataplane.targets.softswitch.ports import PCAP_SNAPLEN
from dataplane.targets.softswitch.tm import EgressQueue, TrafficManager
from dataplane.testing.netns import (
    VethHost,
    can_create_namespaces,
    link_exists,
    namespace_exists,
    ns_socket,
    veth_hosts,
)
from p4src import program_path

L3 = program_path("l3_forward")
PACKET_IO = PACKAGE_ROOT / "tests" / "p4rt" / "packet_io.p4"
ROUTER_MAC = bytes.fromhex("02000000aaaa")  # what hosts send to; l3_forward makes it the source

# --------------------------------------------------------------------------- command line


def test_simple_switch_grpc_command_line(tmp_path: Path) -> None:
    opts = parse_args([
        "-i", "1@veth1", "--interface", "2@veth2", "--device-id", "7", "--pcap", str(tmp_path),
        "--log-console", "--log-file", "/tmp/sw.log", "-L", "debug", "--thrift-port", "9090",
        str(L3), "--", "--grpc-server-addr", "127.0.0.1:50051", "--cpu-port", "255",
    ])
    assert opts.program == L3
    assert opts.interfaces == {1: "veth1", 2: "veth2"}
    assert (opts.device_id, opts.cpu_port, opts.grpc_addr) == (7, 255, "127.0.0.1:50051")
    assert opts.pcap_dir == tmp_path and opts.log_console and opts.log_level == "debug"
    assert opts.log_file == Path("/tmp/sw.log") and opts.thrift_port == 9090


def test_defaults_are_simple_switch_grpc_ones() -> None:
    opts = parse_args([])
    assert opts == SwitchOptions()
    assert (opts.program, opts.grpc_addr, opts.cpu_port) == (None, "0.0.0.0:9559", None)
    assert opts.depth_of(3) == 64 and opts.rate_of(3) is None and opts.loss_of(3) == 0.0


def test_queue_and_loss_options_per_port_on_either_side_of_the_separator() -> None:
    opts = parse_args(["--queue-depth", "16", "--queue-depth", "2:4", "--queue-rate", "2:50",
                       "--", "--queue-rate", "1000", "--loss", "3:0.25", "--seed", "9"])
    assert [opts.depth_of(p) for p in (1, 2)] == [16, 4]
    assert [opts.rate_of(p) for p in (1, 2)] == [1000.0, 50.0]
    assert [opts.loss_of(p) for p in (1, 3)] == [0.0, 0.25]
    assert opts.seed == 9
    # BMv2's set_queue_rate 0 means "no limit".
    assert parse_args(["--queue-rate", "1:0"]).rate_of(1) is None


def test_no_p4_ignores_the_program() -> None:
    assert parse_args(["--no-p4", str(L3)]).program is None


@pytest.mark.parametrize(("argv", "message"), [
    (["--bogus"], "error: unrecognized arguments: --bogus"),
    (["-i", "veth1"], "error: -i veth1: expected PORT@INTERFACE, e.g. 1@veth1"),
    (["-i", "511@veth1"], "error: -i 511@veth1: port 511 is outside 0..510"),
    (["-i", "1@a", "-i", "1@b"], "error: -i 1@b: port 1 is already a"),
    (["prog.json"], "error: prog.json: intbed-switch runs P4-16 source; give the .p4 file "
                    "instead of BMv2's JSON"),
    (["missing.p4"], "error: missing.p4: no such file"),
    (["--loss", "2:1.5"], "error: --loss 2:1.5: 1.5 must be between 0.0 and 1.0"),
    (["--queue-depth", "0"], "error: --queue-depth 0: 0 must be at least 1"),
    (["--", "--grpc-server-addr", "9559"],
     "error: --grpc-server-addr 9559: expected HOST:PORT"),
    (["-i", "1@a", "--", "--cpu-port", "1"], "error: --cpu-port 1: port is already a"),
    (["--", "--thrift-port", "1"], "error: unrecognized arguments: --thrift-port 1"),
])
def test_bad_flags(argv: list[str], message: str) -> None:
    with pytest.raises(SwitchConfigError) as info:
        parse_args(argv)
    assert str(info.value) == message


def test_a_bad_flag_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--queue-rate", "fast"]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", "error: --queue-rate fast: 'fast' is not a number\n")


def test_a_missing_interface_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-i", "1@nosuchif0", str(L3), "--", "--grpc-server-addr", "127.0.0.1:0"]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", "error: no such interface 'nosuchif0'\n")


# --------------------------------------------------------------------------- traffic manager

MS = 1_000_000


def test_queue_departures_follow_bmv2_rate_rule() -> None:
    """send = max(now, last_send + 1/rate), decided at enqueue; a full queue drops."""
    q = EgressQueue(2, depth=3, rate_pps=1000)
    assert q.gap_ns == MS
    for job in "abcd":
        q.push(job, 10 * MS)
    assert list(q.fifo) == [("a", 10 * MS, 0, 10 * MS), ("b", 10 * MS, 1, 11 * MS),
                            ("c", 10 * MS, 2, 12 * MS)]
    assert (q.drops, q.enqueued, q.max_depth) == (1, 3, 3)
    assert q.next_send() == 10 * MS and q.due(10 * MS) and not q.due(10 * MS - 1)
    q.fifo.clear()
    # After an idle spell the next packet may leave at once.
    q.push("e", 20 * MS)
    assert q.fifo[0][3] == 20 * MS
    q.push("f", 20 * MS + 1)
    assert q.fifo[1][3] == 21 * MS


def test_unlimited_queue_and_rate_changes() -> None:
    q = EgressQueue(1, depth=64)
    assert q.gap_ns == 0
    q.push("a", 5)
    q.push("b", 5)
    assert [e[3] for e in q.fifo] == [5, 5]
    q.set_rate(4)
    assert q.gap_ns == 250 * MS
    q.set_rate(None)
    assert q.gap_ns == 0


def test_traffic_manager_makes_queues_with_port_settings() -> None:
    opts = parse_args(["--queue-depth", "2:4", "--queue-rate", "2:50"])
    tm = TrafficManager(opts.depth_of, opts.rate_of)
    q1, q2 = tm.queue(1), tm.queue(2)
    assert (q1.depth, q1.gap_ns, q2.depth, q2.gap_ns) == (64, 0, 4, 20 * MS)
    assert tm.queue(2) is q2 and tm.next_send() is None
    q2.push("x", 50 * MS)
    q2.push("y", 50 * MS)
    tm.busy.add(q2)
    assert tm.next_send() == 50 * MS and tm.pending() == 2


# --------------------------------------------------------------------------- pcap


def test_port_pcaps_are_libpcap_microsecond_ethernet(tmp_path: Path) -> None:
    """BMv2's format: what ``SwitchPort`` asks of ``common.pcap``."""
    w = PcapWriter(tmp_path / "x.pcap", LINKTYPE_ETHERNET, PCAP_SNAPLEN)
    w.write(b"\x01\x02\x03", 1_700_000_000_123_456_789)
    w.write(b"\xff" * 60, 1_700_000_001_000_000_000)
    w.close()
    data = (tmp_path / "x.pcap").read_bytes()
    assert data[:24].hex() == "d4c3b2a1" "0200" "0400" "00000000" "00000000" "00000400" "01000000"
    assert data[24:40] == struct.pack("<IIII", 1_700_000_000, 123_456, 3, 3)
    assert read_pcap(tmp_path / "x.pcap") == [(1_700_000_000_123_456_000, b"\x01\x02\x03"),
                                             (1_700_000_001_000_000_000, b"\xff" * 60)]


# --------------------------------------------------------------------------- live rig

_SKIP = can_create_namespaces()
live = pytest.mark.skipif(_SKIP is not None, reason=f"live switch tests: {_SKIP}")


def ipv4_frame(dst_mac: bytes, src_mac: bytes, src: str, dst: str, ttl: int,
               payload: bytes = b"intbed") -> bytes:
    """Ethernet + IPv4 (valid checksum) + UDP 1234 -> 5678 + payload."""
    udp = struct.pack("!HHHH", 1234, 5678, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0x1234, 0, ttl, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", internet_checksum(ip)) + ip[12:]
    return dst_mac + src_mac + b"\x08\x00" + ip + udp


def host_socket(host: VethHost) -> socket.socket:
    sock = ns_socket(host.ns, host.iface)  # frames it sends hidden from it
    sock.settimeout(2.0)
    return sock


def receive(sock: socket.socket, count: int, timeout: float = 2.0) -> list[tuple[float, bytes]]:
    """Up to ``count`` frames as (monotonic time, bytes), waiting at most ``timeout`` s
    after the last one."""
    out: list[tuple[float, bytes]] = []
    sock.settimeout(timeout)
    while len(out) < count:
        try:
            data = sock.recv(65536)
        except TimeoutError:
            break
        out.append((time.monotonic(), data))
    return out


def nothing_more(sock: socket.socket, wait: float = 0.3) -> bool:
    sock.settimeout(wait)
    try:
        sock.recv(65536)
    except TimeoutError:
        return True
    return False


_seq = iter(range(1000))


@pytest.fixture
def hosts() -> Iterator[list[VethHost]]:
    """Two namespaces on veth pairs; afterwards nothing of them may remain."""
    prefix = f"it{os.getpid() % 10000}{next(_seq)}"
    with veth_hosts(prefix, 2) as made:
        yield made
    for h in made:
        assert not namespace_exists(h.ns)
        assert not link_exists(h.switch_iface)


@pytest.fixture
def switches() -> Iterator[list]:
    """Switch processes started by a test; each is stopped and must be gone."""
    started: list = []
    yield started
    for sw in started:
        sw.close()
        assert sw.proc.poll() is not None
        with pytest.raises(ProcessLookupError):
            os.kill(sw.pid, 0)


def start(switches: list, hosts: list[VethHost], *args: str, program: Path | None = L3,
          target: tuple[str, ...] = ()):
    from benchmarks.switch import SwitchProcess

    ports = [a for i, h in enumerate(hosts, 1) for a in ("-i", f"{i}@{h.switch_iface}")]
    prog = [str(program)] if program is not None else []
    sw = SwitchProcess([*ports, *args, *prog, "--", "--grpc-server-addr", "127.0.0.1:0",
                        *target])
    switches.append(sw)
    return sw


def connect(sw, device_id: int = 0):
    from controller.p4rt.client import P4RuntimeClient
    from controller.p4rt.grpc_transport import GrpcTransport

    transport = GrpcTransport(sw.address, device_id, timeout=10)
    return transport, P4RuntimeClient(transport, device_id=device_id)


def l3_routes(client, hosts: list[VethHost]) -> None:
    for i, h in enumerate(hosts, 1):
        client.tables["ipv4_lpm"].insert({"hdr.ipv4.dstAddr": (f"10.0.{i}.0", 24)},
                                         "ipv4_forward", {"dstAddr": h.mac, "port": i})


def routed(frame: bytes, next_hop: bytes) -> bytes:
    """What l3_forward makes of ``frame``: MACs rewritten, TTL - 1, checksum anew."""
    ip = bytearray(frame[14:34])
    ip[8] -= 1
    ip[10:12] = b"\0\0"
    ip[10:12] = struct.pack("!H", internet_checksum(bytes(ip)))
    return next_hop + frame[:6] + frame[12:14] + bytes(ip) + frame[34:]


def stopped_counters(sw) -> str:
    lines = [ln for ln in sw.output().splitlines() if "stopped:" in ln]
    assert len(lines) == 1, sw.output()
    return lines[0]


# --------------------------------------------------------------------------- live tests


@live
def test_routes_between_namespaces_and_writes_pcaps(hosts, switches, tmp_path: Path) -> None:
    h1, h2 = hosts
    sw = start(switches, hosts, "--device-id", "3", "--pcap", str(tmp_path), "--log-console",
               "--thrift-port", "9090", target=("--cpu-port", "255"))
    transport, client = connect(sw, device_id=3)
    try:
        l3_routes(client, hosts)
        s1, s2 = host_socket(h1), host_socket(h2)
        there = ipv4_frame(ROUTER_MAC, h1.mac, "10.0.1.5", "10.0.2.7", 64, b"hello, h2")
        back = ipv4_frame(ROUTER_MAC, h2.mac, "10.0.2.7", "10.0.1.5", 9, b"hi")
        expired = ipv4_frame(ROUTER_MAC, h1.mac, "10.0.1.5", "10.0.2.7", 1)
        arp = b"\xff" * 6 + h1.mac + b"\x08\x06" + bytes(28)
        s1.send(there)
        [(_, got)] = receive(s2, 1)
        assert got == routed(there, h2.mac)
        assert got[22] == 63 and got[24:26] != there[24:26]
        s2.send(back)
        [(_, got_back)] = receive(s1, 1)
        assert got_back == routed(back, h1.mac)
        s1.send(expired)
        s1.send(arp)
        assert nothing_more(s2)
        s1.close()
        s2.close()
    finally:
        client.close()
        transport.close()
    assert sw.stop() == 0
    i1, i2 = h1.switch_iface, h2.switch_iface
    pcaps = {p.name: [f for _, f in read_pcap(p)] for p in tmp_path.glob("*.pcap")}
    assert pcaps == {
        f"{i1}_in.pcap": [there, expired, arp], f"{i1}_out.pcap": [routed(back, h1.mac)],
        f"{i2}_in.pcap": [back], f"{i2}_out.pcap": [routed(there, h2.mac)],
    }
    assert "'rx': 3, 'tx': 1" in stopped_counters(sw)


@live
def test_queue_rate_limit_drops_the_excess(hosts, switches) -> None:
    h1, h2 = hosts
    sw = start(switches, hosts, "--queue-rate", "2:25", "--queue-depth", "2:4", "--log-console")
    transport, client = connect(sw)
    try:
        l3_routes(client, hosts)
        s1, s2 = host_socket(h1), host_socket(h2)
        frames = [ipv4_frame(ROUTER_MAC, h1.mac, "10.0.1.5", "10.0.2.7", 64, bytes([i]) * 20)
                  for i in range(40)]
        for f in frames:
            s1.send(f)
        got = receive(s2, 40, timeout=0.5)
    finally:
        client.close()
        transport.close()
    # One frame leaves at once, four wait in the queue, the rest find it full
    # (a sixth gets in only if the burst itself took longer than 40 ms).
    assert 5 <= len(got) <= 6
    assert [f for _, f in got] == [routed(f, h2.mac) for f in frames[:len(got)]]
    span = got[-1][0] - got[0][0]
    assert (len(got) - 1) * 0.040 - 0.005 < span < (len(got) - 1) * 0.040 + 0.060, span
    assert sw.stop() == 0
    drops = int(re.search(r"'queue_drops': \{2: (\d+)\}", stopped_counters(sw)).group(1))
    assert drops + len(got) == 40


QUEUE_PROGRAM = """
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
/// Queue metadata as egress saw it, written into the frame.
header qmeta_t {
    bit<32> enq_timestamp;
    bit<32> enq_qdepth;
    bit<32> deq_timedelta;
    bit<32> deq_qdepth;
    bit<48> ingress_ts;
    bit<48> egress_ts;
}
struct headers_t { ethernet_t ethernet; qmeta_t q; }
struct meta_t { }

parser QParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
               inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) { 0x88b5: parse_q; default: accept; }
    }
    state parse_q { pkt.extract(hdr.q); transition accept; }
}
control QVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control QIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = sm.ingress_port == 1 ? 9w2 : 9w1; }
}
control QEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.q.isValid()) {
            hdr.q.enq_timestamp = sm.enq_timestamp;
            hdr.q.enq_qdepth = (bit<32>) sm.enq_qdepth;
            hdr.q.deq_timedelta = sm.deq_timedelta;
            hdr.q.deq_qdepth = (bit<32>) sm.deq_qdepth;
            hdr.q.ingress_ts = sm.ingress_global_timestamp;
            hdr.q.egress_ts = sm.egress_global_timestamp;
        }
    }
}
control QCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control QDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.q); }
}
V1Switch(QParser(), QVerify(), QIngress(), QEgress(), QCompute(), QDeparser()) main;
"""


@live
def test_queue_metadata_and_timestamps_on_the_wall_clock(hosts, switches,
                                                          tmp_path: Path) -> None:
    h1, h2 = hosts
    program = tmp_path / "qmeta.p4"
    program.write_text(QUEUE_PROGRAM)
    t_start = time.monotonic()
    start(switches, hosts, "--queue-rate", "2:25", program=program)
    s1, s2 = host_socket(h1), host_socket(h2)
    for i in range(6):
        s1.send(h2.mac + h1.mac + b"\x88\xb5" + bytes(28) + bytes([i]) * 8)
    got = [f for _, f in receive(s2, 6)]
    uptime_us = (time.monotonic() - t_start) * 1e6
    assert [f[-1] for f in got] == list(range(6))
    fields = [struct.unpack("!IIII6s6s", f[14:42]) for f in got]
    enq_ts, enq_depth, delta, deq_depth = (list(c) for c in list(zip(*fields))[:4])
    ingress_ts = [int.from_bytes(x[4], "big") for x in fields]
    egress_ts = [int.from_bytes(x[5], "big") for x in fields]
    # The first frame goes straight through; the others queue behind the
    # 25 pps limit and leave 40 ms apart (later, never earlier, on a busy host).
    assert enq_depth == [0, 0, 1, 2, 3, 4]
    assert deq_depth == [0, 4, 3, 2, 1, 0]
    assert delta[0] == 0
    for k in range(1, 6):
        assert k * 40_000 - 5_000 <= delta[k] <= k * 40_000 + 60_000, delta
    for k in range(6):
        assert 0 < ingress_ts[k] <= enq_ts[k] < uptime_us
        assert 0 <= egress_ts[k] - enq_ts[k] - delta[k] <= 10_000
    assert ingress_ts == sorted(ingress_ts) and egress_ts == sorted(egress_ts)


@live
def test_loss_emulation_is_bernoulli_per_port(hosts, switches) -> None:
    h1, h2 = hosts
    sw = start(switches, hosts, "--loss", "2:0.5", "--seed", "7", "--log-console")
    transport, client = connect(sw)
    try:
        l3_routes(client, hosts)
        s1, s2 = host_socket(h1), host_socket(h2)
        for i in range(400):
            s1.send(ipv4_frame(ROUTER_MAC, h1.mac, "10.0.1.5", "10.0.2.7", 64,
                               i.to_bytes(2, "big")))
            if i % 50 == 49:
                time.sleep(0.005)
        got = receive(s2, 400, timeout=0.5)
    finally:
        client.close()
        transport.close()
    # Binomial(400, 0.5): mean 200, sd 10; +-4.5 sd.
    assert 155 <= len(got) <= 245
    assert sw.stop() == 0
    line = stopped_counters(sw)
    assert f"2: {{'rx': 0, 'tx': {len(got)}, 'tx_errors': 0, 'lost': {400 - len(got)}}}" in line


@live
def test_pipeline_over_grpc_then_packet_out_packet_in_and_digests(hosts, switches) -> None:
    """Started without a program, as simple_switch_grpc --no-p4: the pipeline
    arrives by SetForwardingPipelineConfig; packet-outs leave by the port
    their header names, misses come to the controller, digests are reported."""
    from controller.p4rt.client import P4RuntimeClient
    from controller.p4rt.grpc_transport import GrpcTransport, device_config

    h1, h2 = hosts
    sw = start(switches, hosts, "--no-p4", program=None, target=("--cpu-port", "64"))
    transport = GrpcTransport(sw.address, timeout=10)
    try:
        transport.arbitrate()
        transport.set_pipeline(config=device_config("packet_io", PACKET_IO.read_text()))
        client = P4RuntimeClient(transport)
        packet_ins: queue.Queue = queue.Queue()
        digests: queue.Queue = queue.Queue()
        client.on_packet_in(packet_ins.put)
        client.on_digest(digests.put)
        client.digests["learn_t"].insert()
        s1, s2 = host_socket(h1), host_socket(h2)

        frame = b"\x02\x00\x00\x00\x00\x99" + h1.mac + b"\x88\xb6" + b"to the cpu"
        s1.send(frame)
        pin = packet_ins.get(timeout=5)
        assert pin.payload == frame
        assert pin.metadata == {"ingress_port": 1, "reason": 1}
        learned = digests.get(timeout=5)
        assert learned.name == "learn_t"
        assert learned.data == [{"srcAddr": int.from_bytes(h1.mac, "big"), "port": 1}]

        out = h2.mac + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb6" + b"from the controller"
        client.packet_out(out, {"egress_port": 2})
        [(_, got)] = receive(s2, 1)
        assert got == out
        client.close()
    finally:
        transport.close()
    assert sw.stop() == 0


@live
def test_in_process_switch_ignores_frames_others_send_out_of_its_ports(hosts) -> None:
    """The data plane as a function, without gRPC. A port's socket also sees
    frames others send out of its interface (the kernel's own, here a second
    raw socket); with PACKET_IGNORE_OUTGOING off, the receive loop itself
    must skip them (sll_pkttype PACKET_OUTGOING) instead of taking them
    for arrivals."""
    from dataplane.compiler.pipeline import compile_file
    from dataplane.runtime.tables import Lpm
    from dataplane.targets.softswitch.main import SoftSwitch

    h1, h2 = hosts
    opts = parse_args(["-i", f"1@{h1.switch_iface}", "-i", f"2@{h2.switch_iface}", str(L3)])
    sw = SoftSwitch(opts)
    sw.device.set_pipeline(compile_file(L3))
    for i, h in enumerate(hosts, 1):
        sw.device.switch.table_add("ipv4_lpm", {"hdr.ipv4.dstAddr": Lpm(0x0A000000 | i << 8, 24)},
                                   "ipv4_forward", {"dstAddr": int.from_bytes(h.mac, "big"),
                                                    "port": i})
    sw.open()
    for p in sw.ports.values():
        p.ignores_outgoing = False
        p.sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 0)
    thread = threading.Thread(target=sw.run)
    thread.start()
    try:
        s1, s2 = host_socket(h1), host_socket(h2)
        frames = [ipv4_frame(ROUTER_MAC, h1.mac, "10.0.1.5", "10.0.2.7", 64, bytes([i]))
                  for i in range(10)]
        for f in frames:
            s1.send(f)
        got = [f for _, f in receive(s2, 10)]
        assert got == [routed(f, h2.mac) for f in frames]
        # Leaves by the switch's port-2 interface, towards h2, without the switch.
        bystander = open_raw_socket(h2.switch_iface, receive=False)
        passing = ipv4_frame(ROUTER_MAC, h2.mac, "10.0.2.7", "10.0.1.5", 64, b"not for you")
        bystander.send(passing)
        bystander.close()
        assert [f for _, f in receive(s2, 1)] == [passing]
        assert nothing_more(s1) and nothing_more(s2, 0.05)
    finally:
        sw.stop()
        thread.join(10)
        sw.close()
    assert sw.counters()["ports"] == {
        1: {"rx": 10, "tx": 0, "tx_errors": 0, "lost": 0},
        2: {"rx": 0, "tx": 10, "tx_errors": 0, "lost": 0},
    }


@live
def test_sigint_stops_cleanly(hosts, switches, tmp_path: Path) -> None:
    log = tmp_path / "switch.log"
    sw = start(switches, hosts, "--pcap", str(tmp_path), "--log-file", str(log))
    sw.proc.send_signal(signal.SIGINT)
    assert sw.proc.wait(10) == 0
    assert sw.errors() == ""
    assert "[intbed-switch] [I] stopped: {'ports': {1: {'rx': 0" in log.read_text()
    for h in hosts:
        for side in ("in", "out"):
            assert read_pcap(tmp_path / f"{h.switch_iface}_{side}.pcap") == []
