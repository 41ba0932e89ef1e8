"""The ``mininet`` target: a Topology as a Mininet network of ``intbed-switch``
processes, traffic processes in host namespaces, and teardown.

The parts that need no privileges (schedule files, pacing, logs read back,
pcaps cut short, include flattening, the watchdog, leftover detection) run
everywhere. The networks need root, Mininet (the Debian package's
``mnexec`` and the ``mininet`` Python package) and ``intbed-switch``;
without them those tests are skipped with the reason. Every network test
compares the machine before and after: no namespace, interface, bridge or
process of the run may remain.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from common.checksum import internet_checksum
from common.errors import IntbedError
from common.paths import PACKAGE_ROOT
from common.pcap import file_header, iter_pcap, record_bytes
from common.rawsock import in_namespace, open_raw_socket
from dataplane.compiler.frontend.preprocess import flatten_includes as flatten
from orchestration.live.network import LiveNetwork, live_available, read_counters
from orchestration.live.snapshot import leftovers
from orchestration.live.traffic import LiveTraffic
from orchestration.live.watchdog import SwitchWatchdog
from p4src import program_path
from topologies.generators import build_topology
from traffic.live import (
    build_frames,
    pace,
    read_receiver,
    read_schedule,
    read_sent_log,
    write_schedule,
)
from traffic.packets import Endpoint
from traffic.receiver import Receiver
from traffic.schedules import flows_to_random_servers

L3 = program_path("l3_forward")

# --------------------------------------------------------------------------- no privileges


def small_schedule(count_us: int = 50_000, seed: int = 3):
    src = Endpoint("h1", "00:00:00:00:00:01", "10.0.1.1")
    servers = [src, Endpoint("h2", "00:00:00:00:00:02", "10.0.2.1"),
               Endpoint("h3", "00:00:00:00:00:03", "10.0.3.1")]
    # 200 packets/s of 250-byte frames for count_us.
    return flows_to_random_servers(src, servers, 400_000, 250, count_us, seed)


def test_schedule_file_round_trip(tmp_path: Path) -> None:
    sched = small_schedule()
    write_schedule(tmp_path / "s.json", sched)
    back = read_schedule(tmp_path / "s.json")
    assert back.dests == sched.dests
    for col in ("times_us", "dest_index", "seqs", "sizes"):
        assert np.array_equal(getattr(back, col), getattr(sched, col))
    assert build_frames(back)[1] == build_frames(sched)[1]
    assert len(sched) == 10 and sched.times_us.tolist()[:3] == [0, 5000, 10000]


def test_pace_sends_on_absolute_deadlines_and_drops_by_loss() -> None:
    sent: list[tuple[int, bytes]] = []
    frames = [bytes([i]) for i in range(20)]
    times = [i * 2000 for i in range(20)]  # every 2 ms
    start = time.monotonic_ns() + 5_000_000
    handled, stats = pace(lambda f: sent.append((time.monotonic_ns(), f)), times, frames,
                          start, loss=0.5, rng=random.Random(7))
    assert handled == 20 and stats.scheduled == 20
    assert stats.sent + stats.host_lost == 20 and stats.sent == len(sent)
    # random.Random(7)'s draws below 0.5 are the frames dropped.
    draws = random.Random(7)
    kept = [f for f in frames if not draws.random() < 0.5]
    assert [f for _, f in sent] == kept
    for t, f in sent:
        assert t >= start + f[0] * 2_000_000  # never early
    assert 0 <= stats.late_p50_us < 20_000


def test_pace_stops_when_asked() -> None:
    calls = []
    handled, stats = pace(calls.append, [0, 10_000_000], [b"a", b"b"], time.monotonic_ns(),
                          stopped=lambda: len(calls) == 1)
    assert (handled, calls, stats.stopped_early) == (1, [b"a"], True)


def test_sent_and_received_logs_read_back(tmp_path: Path) -> None:
    times, frames, log = build_frames(small_schedule())
    log.to_csv(tmp_path / "sent.csv")
    assert read_sent_log(tmp_path / "sent.csv").log_bytes() == log.log_bytes()
    rx = Receiver("h2")
    for t, f in zip(times, frames):
        rx.receive(f, t + 17)
    rx.receive(b"\x01" * 20, 99)  # not IPv4: no flow, no seq
    rx.to_csv(tmp_path / "recv.csv")
    back = read_receiver(tmp_path / "recv.csv", "h2")
    assert back.log_bytes() == rx.log_bytes()
    assert back.stats(log).lost == 0 and back.stats(log).latency_us["max"] == 17


def test_pcap_reader_stops_at_a_cut_record(tmp_path: Path) -> None:
    rec = record_bytes(b"abc", 5_000_007_000)
    cut = record_bytes(b"only a part", 6_000_000_000)[:-7]
    (tmp_path / "x_out.pcap").write_bytes(file_header() + rec + cut)
    tolerant = {"truncated_ok": True, "missing_ok": True}  # as LiveNetwork reads switch pcaps
    assert list(iter_pcap(tmp_path / "x_out.pcap", **tolerant)) == [(5_000_007_000, b"abc")]
    assert list(iter_pcap(tmp_path / "missing.pcap", **tolerant)) == []


def test_flatten_inlines_quoted_includes_with_line_markers(tmp_path: Path) -> None:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "a.p4").write_text('#include "b.p4"\nconst bit<8> A = 1;\n')
    (tmp_path / "inc" / "b.p4").write_text("const bit<8> B = 2;\n")
    (tmp_path / "main.p4").write_text('#include <core.p4>\n#include "inc/a.p4"\nX\n')
    a, b, main = (tmp_path / "inc" / "a.p4", tmp_path / "inc" / "b.p4", tmp_path / "main.p4")
    assert flatten(main) == textwrap.dedent(f"""\
        #include <core.p4>
        #line 1 "{a}"
        #line 1 "{b}"
        const bit<8> B = 2;

        #line 2 "{a}"
        const bit<8> A = 1;

        #line 3 "{main}"
        X
        """)


def test_flattened_intlabel_compiles_to_the_same_p4info(tmp_path: Path) -> None:
    from dataplane.compiler.p4info import build_p4info, to_text
    from dataplane.compiler.pipeline import compile_file

    flat = tmp_path / "intlabel.p4"
    flat.write_text(flatten(program_path("intlabel")))
    original = compile_file(program_path("intlabel"))
    assert to_text(build_p4info(compile_file(flat).schema)) == \
        to_text(build_p4info(original.schema))


class FakeProcess:
    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None


def test_watchdog_names_the_switch_and_quotes_its_log(tmp_path: Path) -> None:
    log = tmp_path / "s2.log"
    log.write_text("line 1\n\nline 2\nline 3\n")
    procs = {"s1": FakeProcess(11), "s2": FakeProcess(22)}
    dog = SwitchWatchdog(procs, logs=lambda name: [tmp_path / "none", tmp_path / f"{name}.log"])
    assert dog.poll() is None
    procs["s2"].returncode = -9
    failure = dog.poll()
    assert failure is not None and dog.failed.is_set()
    assert failure.message() == "switch s2 (pid 22) exited with code -9: line 1 | line 2 | line 3"
    with pytest.raises(IntbedError, match=r"^error: switch s2 \(pid 22\) exited with code -9"):
        dog.check()


def test_switch_counters_from_the_log(tmp_path: Path) -> None:
    log = tmp_path / "s.log"
    log.write_text("[x] [intbed-switch] [I] port 1: interface s1-eth1\n"
                   "[x] [intbed-switch] [I] stopped: {'ports': {1: {'rx': 3, 'tx': 2, "
                   "'tx_errors': 0, 'lost': 1}}, 'queue_drops': {}, 'unconnected': 0, "
                   "'no_pipeline': 0}\n")
    assert read_counters(log) == {"ports": {1: {"rx": 3, "tx": 2, "tx_errors": 0, "lost": 1}},
                                  "queue_drops": {}, "unconnected": 0, "no_pipeline": 0}
    assert read_counters(tmp_path / "missing.log") is None


def test_leftovers_count_the_callers_processes_only() -> None:
    from orchestration.live.snapshot import Snapshot

    me = os.getpid()
    before = Snapshot(frozenset({"a"}), frozenset({"lo"}), frozenset(),
                      {1: ("init", 100, 0), me: ("pytest", 100, 1)})
    after = Snapshot(frozenset({"a", "b"}), frozenset({"lo", "s1-eth1"}), frozenset({"br0"}),
                     {1: ("init", 100, 0), me: ("pytest", 100, 1),
                      7: ("bash --norc -is mininet:h1", 200, 1),  # orphaned host shell
                      8: ("intbed-switch --log-file /run/x/s1.log", 100, 1),  # marked
                      9: ("python -m traffic.live recv", 100, 10),  # grandchild
                      10: ("mnexec -da 7", 100, me),  # child
                      11: ("simple_switch -i 0@pcap0", 100, 1),  # someone else's
                      12: ("bash -is other", 300, 1)})  # someone else's namespace
    assert leftovers(before, after, markers=("/run/x",)) == [
        "namespace b", "interface s1-eth1", "bridge br0",
        "process 7 in a new network namespace: bash --norc -is mininet:h1",
        "process 8: intbed-switch --log-file /run/x/s1.log",
        "process 9: python -m traffic.live recv", "process 10: mnexec -da 7"]


# --------------------------------------------------------------------------- live network

_SKIP = live_available("mininet")
live = pytest.mark.skipif(_SKIP is not None, reason=f"mininet target: {_SKIP}")



def routed(frame: bytes, src_mac: bytes) -> bytes:
    """l3_forward's output on the last hop of a two-switch line: TTL - 2,
    the checksum anew, the last switch's MAC as source (destination: the
    host's own, as the sender already wrote it)."""
    ip = bytearray(frame[14:34])
    ip[8] -= 2
    ip[10:12] = b"\0\0"
    ip[10:12] = struct.pack("!H", internet_checksum(bytes(ip)))
    return frame[:6] + src_mac + frame[12:14] + bytes(ip) + frame[34:]


@live
def test_line_network_forwards_kernel_and_raw_traffic(clean: None, tmp_path: Path) -> None:
    topo = build_topology("line", n=2)
    h1, h2 = topo.hosts["h1"], topo.hosts["h2"]
    with LiveNetwork(topo, L3, run_dir=tmp_path, pcap=True) as net:
        net.install_routes()
        # Hosts: static ARP, IPv6 off, offloads off, links shaped by a token bucket.
        node = net.net["h1"]
        assert "10.0.2.1 dev h1-eth0 lladdr 00:00:00:00:00:02 PERMANENT" in node.cmd("ip neigh")
        assert node.cmd("cat /proc/sys/net/ipv6/conf/h1-eth0/disable_ipv6").strip() == "1"
        assert "tbf" in node.cmd("tc qdisc show dev h1-eth0")
        from orchestration.live.netutil import disable_offloads

        assert disable_offloads("h1-eth0", net.host_pid("h1")) == dict.fromkeys(
            ("gro", "gso", "tso", "sg", "tx", "rx"), 0)
        assert sorted(net.switches["s1"].ports) == [1, 2, 500]

        # The kernel's own UDP, both ways: ARP is static, checksums are complete.
        socks = {}
        for name in ("h1", "h2"):
            with in_namespace(net.host_pid(name)):
                socks[name] = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            socks[name].bind(("0.0.0.0", 5000))
            socks[name].settimeout(3)
        socks["h1"].sendto(b"to h2", (h2.ip, 5000))
        assert socks["h2"].recvfrom(100) == (b"to h2", (h1.ip, 5000))
        socks["h2"].sendto(b"to h1", (h1.ip, 5000))
        assert socks["h1"].recvfrom(100) == (b"to h1", (h2.ip, 5000))

        # A raw frame arrives routed, byte for byte.
        tx = open_raw_socket("h1-eth0", net.host_pid("h1"), receive=False)
        rx = open_raw_socket("h2-eth0", net.host_pid("h2"))
        rx.settimeout(3)
        payload = b"intbed-raw"
        udp = struct.pack("!HHHH", 1234, 5000, 8 + len(payload), 0) + payload
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 7, 0, 64, 17, 0,
                         socket.inet_aton(h1.ip), socket.inet_aton(h2.ip))
        ip = ip[:10] + struct.pack("!H", internet_checksum(ip)) + ip[12:]
        frame = bytes.fromhex(h2.mac.replace(":", "")) + bytes.fromhex(
            h1.mac.replace(":", "")) + b"\x08\x00" + ip + udp
        tx.send(frame)
        got = rx.recv(2048)
        while not got.endswith(payload):
            got = rx.recv(2048)  # the kernel-stack datagram above may still be queued
        s2_mac = bytes.fromhex(topo.switches["s2"].mac.replace(":", ""))
        assert got == routed(frame, s2_mac)
        for s in (*socks.values(), tx, rx):
            s.close()
        counters = net.stop_switches()
    # h1 -> h2: a datagram and the raw frame (sent to a bound port, so h2's
    # kernel answers nothing); h2 -> h1: one datagram. Port 1 faces the host.
    ports = {sw: {p: (c["rx"], c["tx"]) for p, c in counters[sw]["ports"].items()}
             for sw in ("s1", "s2")}
    assert ports == {"s1": {1: (2, 1), 2: (1, 2), 500: (0, 0)},
                     "s2": {1: (1, 2), 2: (2, 1), 500: (0, 0)}}
    assert (tmp_path / "switches" / "s1.log").is_file()
    outs = [f for _, f in iter_pcap(tmp_path / "pcap" / "s2-eth1_out.pcap")]
    assert outs[-1] == routed(frame, s2_mac)


@live
def test_traffic_processes_replay_a_schedule(clean: None, tmp_path: Path) -> None:
    topo = build_topology("line", n=3)
    hosts = list(topo.hosts.values())
    sched = flows_to_random_servers(hosts[0], hosts, 800_000, 500, 500_000, 11)  # 200 pps
    with LiveNetwork(topo, L3, run_dir=tmp_path) as net:
        net.install_routes()
        traffic = LiveTraffic(net, tmp_path / "traffic")
        traffic.add_sender("h1", sched)
        for name in topo.hosts:
            traffic.add_receiver(name, udp_ports=(20000,))
        t0 = traffic.start()
        assert traffic.wait_senders(10.0)
        time.sleep(0.2)
        traffic.stop()
        assert time.monotonic_ns() - t0 >= 500_000_000
        sent = traffic.sent_logs()["h1"]
        received = traffic.received()
        stats = traffic.send_stats()["h1"]
    assert sent.log_bytes() == build_frames(sched)[2].log_bytes()
    assert stats.sent == len(sched) == 100 and stats.host_lost == 0
    assert received["h1"].stats().received == 0  # the sender sees nothing of its own
    rx = Receiver.merged(received.values())
    st = rx.stats(sent)
    assert (st.lost, st.unexpected, st.duplicates, st.unidentified) == (0, 0, 0, 0)
    # Arrivals follow the schedule: first at about 0 µs, the last near 495 ms.
    assert 0 <= st.first_us < 20_000 and 495_000 <= st.last_us < 560_000
    print(f"\nlive traffic: {stats.sent} frames, lateness p50 {stats.late_p50_us:.0f} us, "
          f"p99 {stats.late_p99_us:.0f} us; latency p50 {st.latency_us['p50']:.0f} us")


SIGNAL_SCRIPT = """
import faulthandler, sys, time
sys.path.insert(0, {repo!r})
from orchestration.live.network import LiveNetwork
from topologies.generators import build_topology
net = LiveNetwork(build_topology("line", n=2), {prog!r}, run_dir={run!r})
try:
    net.start()
    print("up", flush=True)  # inside try: a signal right after it still tears down
    time.sleep(60)
finally:
    faulthandler.dump_traceback_later(25)  # where a slow teardown waits, on stderr
    net.stop()
    print("down", flush=True)
"""


@live
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_tears_the_network_down(clean: None, tmp_path: Path, sig: int) -> None:
    script = SIGNAL_SCRIPT.format(repo=str(PACKAGE_ROOT), prog=str(L3), run=str(tmp_path))
    # The script gets SIGINT's default disposition whatever the runner's is
    # (a background job of a non-interactive shell ignores SIGINT, and a
    # Python started so never turns it into KeyboardInterrupt).
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "up"
        proc.send_signal(sig)
        # The teardown bounds each of its steps (110 s in all, LiveNetwork.stop);
        # waiting less fails a slow but complete teardown on a loaded machine,
        # and a stop that leaves anything behind still fails below.
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    steps = tmp_path / "teardown.log"
    assert out.strip() == "down", (err, steps.read_text() if steps.exists() else "no log")
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    # Every step finished, each one named with its time.
    assert "stop switches: " in steps.read_text() and "left behind" not in steps.read_text()


def test_live_available_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "unknown live target 'nope'" in live_available("nope")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert live_available("mininet") == ("the mininet target needs root (network namespaces, "
                                         "veth pairs): use sudo")
