"""The UDP receiver over loopback: a sender in the test sends reports built
with ``report_builders``; the collector must count exactly what was sent,
the events the reports imply, and the same counters as a direct ``feed``
of the same payloads. A port already bound fails with one line."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from report_builders import ReportSpec, build

from common.wallclock import WallClock
from intbed.cli import cli
from sinks.intcollector import mmsg
from sinks.intcollector.pipeline import Collector, CollectorConfig
from sinks.intcollector.receiver import ReceiverError, UdpReceiver, parse_listen
from sinks.intcollector.reports import Rejected, parse_report
from sinks.intcollector.stores import MemoryStore

SWITCHES = (13, 12, 11)  # newest hop first, as on the wire
FIRST_SPORT = 1000
QUEUE_ID = 1
EGRESS_PORT = 2
_MARK = 0xBEEF  # a source port found in the built bytes and replaced per flow


def hop(sw: int, latency: int, occupancy: int) -> dict[str, int]:
    return {"node_id": sw, "l1_ingress_port": 1, "l1_egress_port": EGRESS_PORT,
            "hop_latency": latency, "queue_id": QUEUE_ID, "queue_occupancy": occupancy,
            "ingress_ts": 1000 * sw, "egress_ts": 1000 * sw + latency,
            "l2_ingress_port": 1, "l2_egress_port": EGRESS_PORT, "egress_tx_util": 40,
            "buffer_id": 0, "buffer_occupancy": occupancy}


def flow_reports(count: int, latency: int = 100, occupancy: int = 10,
                 first_sport: int = FIRST_SPORT) -> list[bytes]:
    """TR v2.0 reports of ``count`` UDP flows (source ports from
    ``first_sport``) through SWITCHES, every hop with the same values.
    One report is built with Scapy; the others differ in the inner source
    port only, patched in (the parser checks no inner checksum)."""
    spec = ReportSpec(hops=[hop(sw, latency, occupancy) for sw in SWITCHES], sport=_MARK)
    base = build(spec)
    mark = _MARK.to_bytes(2, "big") + spec.dport.to_bytes(2, "big")
    at = base.index(mark)
    assert base.count(mark) == 1
    assert first_sport + count <= 1 << 16
    return [base[:at] + (first_sport + i).to_bytes(2, "big") + base[at + 2:]
            for i in range(count)]


def first_round_events(flows: int) -> Counter[str]:
    """Events of ``flow_reports(flows)`` into a new collector: every key is new."""
    hops = len(SWITCHES)
    return Counter({"flow_path": flows, "flow_latency": flows, "flow_hop_latency": flows * hops,
                    "queue_occupancy": hops, "link_utilization": hops})


def second_round_events(flows: int) -> Counter[str]:
    """Events of the same flows again with every hop latency and queue
    occupancy 100 higher (T = 50): paths and link utilization unchanged,
    each flow's latencies changed, each queue once."""
    hops = len(SWITCHES)
    return Counter({"flow_latency": flows, "flow_hop_latency": flows * hops,
                    "queue_occupancy": hops})


class Sender:
    """Sends datagrams to a receiver in chunks, waiting after each chunk
    until the receiver has taken it, so the test loses nothing to a full
    socket buffer whatever the machine's load."""

    def __init__(self, receiver: UdpReceiver, chunk: int = 200, timeout_s: float = 20.0) -> None:
        self.receiver = receiver
        self.chunk = chunk
        self.timeout_s = timeout_s
        self.sent = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def send(self, payloads: Sequence[bytes]) -> None:
        address = ("127.0.0.1", self.receiver.port)
        for start in range(0, len(payloads), self.chunk):
            for payload in payloads[start:start + self.chunk]:
                self.sock.sendto(payload, address)
                self.sent += 1
            wait_for(lambda: self.receiver.stats.datagrams >= self.sent, self.timeout_s,
                     f"receiver took {self.receiver.stats.datagrams} of {self.sent}")

    def close(self) -> None:
        self.sock.close()


def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out: {what}")
        time.sleep(0.002)


class LiveCollector:
    """A collector on the wall clock fed by a receiver thread on loopback."""

    def __init__(self, store: object | None = None, config: CollectorConfig | None = None,
                 **receiver_options: int | bool) -> None:
        self.clock = WallClock()
        self.store = MemoryStore() if store is None else store
        config = config or CollectorConfig(push_period_s=3600.0, event_flush_s=0.05)
        self.collector = Collector(self.store, self.clock, config)  # type: ignore[arg-type]
        self.receiver = UdpReceiver(self.collector, "127.0.0.1", 0, **receiver_options)
        self.collector.start()
        self.receiver.start()
        self.sender = Sender(self.receiver)

    def close(self) -> None:
        self.sender.close()
        self.receiver.close()
        self.collector.stop()
        self.clock.close()


RECEIVE_WAYS = [pytest.param(True, id="recvmmsg", marks=pytest.mark.skipif(
    not mmsg.available(), reason="recvmmsg is Linux only")), pytest.param(False, id="recv_into")]


@pytest.fixture(params=RECEIVE_WAYS)
def live(request: pytest.FixtureRequest) -> Iterator[LiveCollector]:
    running = LiveCollector(use_mmsg=request.param)
    try:
        yield running
    finally:
        running.close()


def direct_counters(rounds: Sequence[Sequence[bytes]]) -> Collector:
    """The same payloads fed straight into a collector, one batch a round."""
    clock = WallClock()
    collector = Collector(MemoryStore(), clock, CollectorConfig(push_period_s=3600.0))
    try:
        for payloads in rounds:
            collector.feed(list(payloads))
        collector.stop()
    finally:
        clock.close()
    return collector


def test_counts_every_report_and_the_expected_events(live: LiveCollector) -> None:
    flows = 3000
    first = flow_reports(flows)
    second = flow_reports(flows, latency=200, occupancy=110)
    garbage = [b"", b"\x20" * 7, first[0][:40]]  # mixed lengths: the copying path
    reasons = Counter(r.reason for r in map(parse_report, garbage) if isinstance(r, Rejected))
    assert sum(reasons.values()) == len(garbage)

    live.sender.send(first)
    counters = live.collector.counters
    assert counters.reports.total == flows
    assert counters.events == first_round_events(flows)
    live.sender.send(second[:1500] + garbage + second[1500:])
    live.close()

    stats = live.receiver.stats
    assert stats.datagrams == 2 * flows + len(garbage)
    assert stats.bytes == sum(map(len, first + second + garbage))
    assert stats.oversize == 0
    assert stats.kernel_drops in (0, None)
    assert counters.reports.total == 2 * flows + len(garbage)
    assert counters.reports.accepted == 2 * flows
    assert counters.reports.rejected == reasons
    assert counters.events == first_round_events(flows) + second_round_events(flows)
    assert counters.values == 2 * flows * (2 + 3 * len(SWITCHES))  # path, latency; 3 per hop
    assert counters.exported_points == sum(counters.events.values()) == len(live.store.points)
    assert counters.queue_drops == 0 and counters.store_errors == 0

    direct = direct_counters([first, second[:1500] + garbage + second[1500:]]).counters
    assert (direct.reports, direct.values, direct.events) == (
        counters.reports, counters.values, counters.events)


@pytest.mark.parametrize("use_mmsg", RECEIVE_WAYS)
def test_a_stop_takes_what_the_socket_holds_and_oversize_is_counted(use_mmsg: bool) -> None:
    clock = WallClock()
    collector = Collector(MemoryStore(), clock)
    small = flow_reports(3)
    big = b"\x00" * 600
    receiver = UdpReceiver(collector, "127.0.0.1", 0, max_datagram=len(small[0]) + 8,
                           batch=4, use_mmsg=use_mmsg)
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as out:
            for payload in (small[0], big, small[1], big, small[2]):
                out.sendto(payload, receiver.address)
        time.sleep(0.05)  # loopback delivery is immediate; leave it a moment anyway
        receiver.stop()  # before run: run only takes what is queued, then returns
        stats = receiver.run()
    finally:
        receiver.close()
        clock.close()
    assert (stats.datagrams, stats.oversize) == (5, 2)
    assert stats.bytes == sum(map(len, small)) + 2 * len(big)
    assert stats.batches == 1  # the 3 reports that fit, fed together
    assert collector.counters.reports.accepted == 3
    assert collector.counters.events == first_round_events(3)


@pytest.mark.skipif(not mmsg.available(), reason="sendmmsg/recvmmsg are Linux only")
def test_sendmmsg_to_recvmmsg_moves_every_payload_byte_for_byte() -> None:
    """Payloads of different lengths, sent cyclically from the sender's
    block across its end, arrive whole and in order, lengths included; one
    longer than a slot is marked truncated."""
    rng = np.random.default_rng(8)
    payloads = [rng.integers(0, 256, int(n), dtype=np.uint8).tobytes()
                for n in rng.integers(1, 300, 50)] + [bytes(700)]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
        rx.bind(("127.0.0.1", 0))
        rx.setblocking(False)
        tx.connect(rx.getsockname())
        receiver = mmsg.MmsgReceiver(rx, 128, 512)
        sender = mmsg.MmsgSender(tx, payloads)
        assert sender.send(40, len(payloads)) == len(payloads)  # 40..50, then 0..39
        time.sleep(0.05)
        got = receiver.receive(3)
        assert got == len(payloads)
        assert receiver.receive(3 + got) == 0  # drained
    order = payloads[40:] + payloads[:40]
    lengths = receiver.lengths[3:3 + got].tolist()
    assert lengths == [len(p) for p in order]
    cut = receiver.truncated[3:3 + got]
    assert cut.tolist() == [len(p) > 512 for p in order]
    for i, payload in enumerate(order):
        if len(payload) <= 512:
            assert receiver.rows[3 + i, :len(payload)].tobytes() == payload


def test_a_port_already_bound_is_one_clear_error() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        clock = WallClock()
        try:
            with pytest.raises(ReceiverError, match=f"127.0.0.1:{port}: the port is in use"):
                UdpReceiver(Collector(MemoryStore(), clock), "127.0.0.1", port)
        finally:
            clock.close()
        result = CliRunner().invoke(cli, ["collector", "run", "--listen", f"127.0.0.1:{port}",
                                          "--seconds", "1"])
    assert result.exit_code == 1
    assert result.stderr == f"error: cannot listen on UDP 127.0.0.1:{port}: the port is in use\n"
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("text", "expected"), [
    ("127.0.0.1:32766", ("127.0.0.1", 32766)), (":9", ("0.0.0.0", 9)), ("9", ("0.0.0.0", 9)),
    ("[::1]:7", ("::1", 7))])
def test_parse_listen(text: str, expected: tuple[str, int]) -> None:
    assert parse_listen(text) == expected


@pytest.mark.parametrize("text", ["host:", "a:b", "1.2.3.4:70000"])
def test_parse_listen_refuses(text: str) -> None:
    with pytest.raises(ReceiverError, match="listen address"):
        parse_listen(text)


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def udp_bound(port: int) -> bool:
    suffix = f":{port:04X}"
    lines = Path("/proc/net/udp").read_text().splitlines()[1:]
    return any(line.split()[1].endswith(suffix) for line in lines)


def send_when_bound(port: int, payloads: Sequence[bytes], gap_every: int = 100) -> threading.Thread:
    """A thread that waits until a socket is bound to UDP ``port`` (as
    /proc/net/udp lists them: a probe bind could take the port itself),
    then sends ``payloads`` with a short pause every ``gap_every``."""

    def work() -> None:
        wait_for(lambda: udp_bound(port), 20, f"nothing listens on UDP {port}")
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as out:
            for i, payload in enumerate(payloads):
                out.sendto(payload, ("127.0.0.1", port))
                if i % gap_every == gap_every - 1:
                    time.sleep(0.002)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread


def test_cli_run_counts_the_reports_sent() -> None:
    port = free_udp_port()
    payloads = flow_reports(500)
    sender = send_when_bound(port, payloads)
    result = CliRunner().invoke(cli, ["collector", "run", "--listen", f"127.0.0.1:{port}",
                                      "--seconds", "3", "--period", "3600", "--json"])
    sender.join()
    assert (result.exit_code, result.stderr) == (0, "")
    out = json.loads(result.stdout)
    assert out["receiver"]["datagrams"] == 500
    assert out["counters"]["reports"] == out["counters"]["accepted"] == 500
    assert out["counters"]["events_by_metric"] == dict(first_round_events(500))
    assert out["counters"]["exported_points"] == out["counters"]["events"]


SENDER = """
import socket, sys, time
count, port, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
payloads = open(path, "rb").read().split(b"\\n--\\n")
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(("127.0.0.1", port))
send, n = s.send, len(payloads)
start = time.perf_counter()
for i in range(count):
    send(payloads[i % n])
print(time.perf_counter() - start)
"""


def test_live_rate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A sender process floods loopback; every datagram is either taken by
    the receiver or counted as dropped by the kernel. Prints reports/s."""
    count = 100_000
    payloads = flow_reports(5000)
    data = tmp_path / "payloads"
    data.write_bytes(b"\n--\n".join(payloads))
    assert all(b"\n--\n" not in p for p in payloads)
    running = LiveCollector()
    try:
        start = time.perf_counter()
        sender = subprocess.run([sys.executable, "-c", SENDER, str(count),
                                 str(running.receiver.port), str(data)],
                                capture_output=True, text=True, check=True, timeout=120)
        send_s = float(sender.stdout)
        last = -1
        while running.receiver.stats.datagrams != last:  # until the receiver is idle
            last = running.receiver.stats.datagrams
            time.sleep(0.2)
        elapsed = time.perf_counter() - start - 0.2
    finally:
        running.close()
    stats = running.receiver.stats
    counters = running.collector.counters
    with capsys.disabled():
        print(f"\n  live UDP on loopback: sent {count} in {send_s:.2f} s "
              f"({count / send_s:,.0f}/s); received {stats.datagrams} in {elapsed:.2f} s "
              f"({stats.datagrams / elapsed:,.0f} reports/s), kernel drops "
              f"{stats.kernel_drops}, {stats.batches} batches "
              f"(mean {stats.datagrams / max(stats.batches, 1):.0f} reports); "
              f"{stats.cpu_capacity:,.0f} reports per CPU second")
    assert counters.reports.total == counters.reports.accepted == stats.datagrams
    if stats.kernel_drops is not None:
        assert stats.datagrams + stats.kernel_drops == count
    assert stats.datagrams > count // 10


def _gso_supported() -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.setsockopt(mmsg.SOL_UDP, mmsg.UDP_SEGMENT, 100)
        except OSError:
            return False
    return True


@pytest.mark.skipif(not _gso_supported(), reason="this kernel has no UDP_SEGMENT (Linux < 4.18)")
def test_segmented_sends_arrive_as_every_report_through_coalesced_receive() -> None:
    """Runs of 64 reports sent with UDP_SEGMENT reach a UDP_GRO socket as one
    buffer each; the receiver splits them into slots: every report counted
    and fed, with the events they imply, and a shorter datagram after them
    still taken whole."""
    clock = WallClock()
    collector = Collector(MemoryStore(), clock)
    reports = flow_reports(300)
    odd = flow_reports(1, first_sport=FIRST_SPORT + 300)[0] + b"\x00"  # one byte longer
    receiver = UdpReceiver(collector, "127.0.0.1", 0, max_datagram=len(odd) + 8, batch=1024)
    try:
        assert receiver.gro
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as out:
            out.connect(receiver.address)
            assert mmsg.GsoSender(out, reports).send(0, len(reports)) == len(reports)
            out.setsockopt(mmsg.SOL_UDP, mmsg.UDP_SEGMENT, 0)
            out.send(odd)
        time.sleep(0.05)
        receiver.stop()
        stats = receiver.run()
    finally:
        receiver.close()
        clock.close()
    assert (stats.datagrams, stats.oversize, stats.kernel_drops) == (301, 0, 0)
    assert stats.bytes == sum(map(len, reports)) + len(odd)
    assert collector.counters.reports.accepted == 300  # the odd one: a byte too many
    assert collector.counters.events == first_round_events(300)
