"""Receiver records, statistics against a sent log, and byte-identical logs."""

from __future__ import annotations

import struct

import pytest
import xxhash
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

from traffic.packets import Endpoint, FlowKey, FlowSpec, PacketFactory
from traffic.receiver import Receiver, parse_frame
from traffic.schedules import constant_rate, flows_to_random_servers
from traffic.sender import Sender, SentLog

HOSTS = [Endpoint(f"h{i}", f"02:00:00:00:00:{i:02x}", f"10.0.0.{i}") for i in range(1, 5)]
FLOW = FlowSpec(
    "02:00:00:00:00:01", "02:00:00:00:00:02", "10.0.0.1", "10.0.0.2", "udp", 1111, 2222, 20
)
KEY = FlowKey("10.0.0.1", "10.0.0.2", 17, 1111, 2222)


def h8(data: bytes) -> bytes:
    """XXH3-64 of ``data``, big-endian, from its integer form (the receiver
    stores the digest)."""
    return xxhash.xxh3_64_intdigest(data).to_bytes(8, "big")


def test_parse_udp_frame() -> None:
    pkt = PacketFactory(FLOW).packet(77)
    key, seq, payload = parse_frame(pkt)
    assert (key, seq, payload) == (KEY, 77, pkt[42:])
    # Any buffer parses as its bytes (the compiled parser reads bytes only).
    assert parse_frame(bytearray(pkt)) == parse_frame(memoryview(pkt)) == (KEY, 77, pkt[42:])


def test_parse_ignores_padding_and_header_rewrites() -> None:
    pkt = bytearray(PacketFactory(FLOW).packet(5))
    pkt[22] = 3  # TTL decremented on the way
    pkt[15] = 0x04  # DSCP rewritten
    padded = bytes(pkt) + b"\xee" * 10
    r = Receiver()
    r.receive(PacketFactory(FLOW).packet(5), 1)
    r.receive(padded, 2)
    assert r.hashes[0] == r.hashes[1] == h8(bytes(pkt[42:]))
    assert r.sizes == [62, 72]


def test_parse_tcp_with_options_and_vlan() -> None:
    pay = struct.pack("!Q", 9) + b"xyz"
    frame = bytes(
        Ether()
        / Dot1Q(vlan=5)
        / IP(src="1.2.3.4", dst="5.6.7.8", options=b"\x01" * 4)
        / TCP(sport=1, dport=2, options=[("NOP", None)] * 4)
        / Raw(pay)
    )
    assert parse_frame(frame) == (FlowKey("1.2.3.4", "5.6.7.8", 6, 1, 2), 9, pay)


@pytest.mark.parametrize(
    "frame",
    [
        bytes(Ether() / IP() / ICMP() / Raw(b"12345678")),
        bytes(Ether(type=0x86DD) / Raw(b"\0" * 60)),
        bytes(Ether() / IP(frag=10, proto=17) / Raw(b"\0" * 30)),
        b"\x01\x02\x03",
    ],
    ids=["icmp", "ipv6", "fragment", "runt"],
)
def test_unparseable_frames_hash_whole_frame(frame: bytes) -> None:
    r = Receiver()
    r(frame, 3)
    assert r.records()[0] == (3, len(frame), h8(frame), None, None)
    st = r.stats()
    assert (st.received, st.unidentified, st.unique) == (1, 1, 0)


def test_short_payload_has_flow_but_no_seq() -> None:
    frame = bytes(Ether() / IP(src="1.1.1.1", dst="2.2.2.2") / UDP(sport=3, dport=4) / b"abc")
    assert parse_frame(frame) == (FlowKey("1.1.1.1", "2.2.2.2", 17, 3, 4), None, b"abc")


def run_line(loss_every: int, delay: int) -> tuple[SentLog, Receiver]:
    """Send 100 packets at 1000 pps; drop every ``loss_every``-th, delay by
    ``delay`` plus seq mod 10 microseconds, and deliver seq 3 twice."""
    sender = Sender(constant_rate(rate_pps=1000, duration_us=100_000, packet_size=62), FLOW)
    rx = Receiver("h2")
    for t, frame in sender:
        seq = parse_frame(frame)[1]
        assert seq is not None
        if seq % loss_every == 0:
            continue
        rx.receive(frame, t + delay + seq % 10)
        if seq == 3:
            rx.receive(frame, t + delay + 50)
    return sender.log, rx


def test_a_hosts_handler_records_the_arrival_in_microseconds() -> None:
    """``on_arrival`` (a simulated host's handler, time in nanoseconds)
    records what ``receive`` records for the same time in microseconds,
    floored."""
    frame = PacketFactory(FLOW).packet(7)
    via_handler, direct = Receiver("a"), Receiver("b")
    for ns in (0, 999, 1_000, 12_345_678_999):
        via_handler.on_arrival(object(), frame, ns)
        direct.receive(frame, ns // 1000)
    assert via_handler.times_us == [0, 0, 1, 12_345_678]
    assert via_handler.records() == direct.records()
    assert via_handler.keys[0] == KEY and via_handler.seqs[0] == 7


def test_stats_loss_duplicates_latency() -> None:
    sent, rx = run_line(loss_every=10, delay=100)
    st = rx.stats(sent)
    assert (st.received, st.unique, st.duplicates, st.unidentified) == (91, 90, 1, 0)
    assert (st.sent, st.lost, st.loss_rate, st.unexpected) == (100, 10, 0.1, 0)
    assert st.bytes == 91 * 62
    assert (st.first_us, st.last_us) == (1101, 99_109)
    # Delays: 100 + (seq mod 10) for seq mod 10 in 1..9, ten of each; the 90th
    # percentile interpolates between sorted ranks 80 and 81, both 109.
    assert st.latency_us == {
        "min": 101.0,
        "mean": 105.0,
        "p50": 105.0,
        "p90": 109.0,
        "p99": 109.0,
        "max": 109.0,
    }


def test_stats_unexpected_and_empty() -> None:
    sent, rx = run_line(loss_every=1000, delay=0)  # drops seq 0 only
    st = rx.stats(SentLog())
    assert (st.sent, st.lost, st.unexpected, st.loss_rate, st.latency_us) == (0, 0, 99, 0.0, None)
    empty = Receiver().stats(sent)
    assert (empty.received, empty.lost, empty.loss_rate, empty.first_us) == (0, 100, 1.0, None)


def test_csv_and_log_bytes() -> None:
    sent, rx = run_line(loss_every=2, delay=7)
    text = rx.log_bytes().decode()
    lines = text.splitlines()
    assert lines[0] == "arrival_us,size,hash,src_ip,dst_ip,proto,sport,dport,seq"
    first = PacketFactory(FLOW).packet(1)
    assert lines[1] == f"1008,62,{h8(first[42:]).hex()},10.0.0.1,10.0.0.2,17,1111,2222,1"
    assert len(lines) == 1 + 50 + 1
    assert sent.log_bytes().decode().splitlines()[:2] == [
        "time_us,size,src_ip,dst_ip,proto,sport,dport,seq",
        "0,62,10.0.0.1,10.0.0.2,17,1111,2222,0",
    ]


def test_to_csv_writes_log_bytes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    sent, rx = run_line(loss_every=3, delay=1)
    rx.to_csv(tmp_path / "rx.csv")
    sent.to_csv(tmp_path / "tx.csv")
    assert (tmp_path / "rx.csv").read_bytes() == rx.log_bytes()
    assert (tmp_path / "tx.csv").read_bytes() == sent.log_bytes()


def random_servers_run(seed: int) -> tuple[SentLog, dict[str, Receiver]]:
    sender = Sender(flows_to_random_servers(HOSTS[0], HOSTS, 4e6, 200, 100_000, seed=seed))
    rxs = {h.ip: Receiver(h.name) for h in HOSTS}
    for t, frame in sender:
        key = parse_frame(frame)[0]
        assert key is not None
        rxs[key.dst_ip].receive(frame, t + 20)
    return sender.log, rxs


def test_determinism_byte_identical_logs() -> None:
    sent_a, rx_a = random_servers_run(5)
    sent_b, rx_b = random_servers_run(5)
    sent_c, rx_c = random_servers_run(6)
    assert sent_a.log_bytes() == sent_b.log_bytes()
    assert all(rx_a[ip].log_bytes() == rx_b[ip].log_bytes() for ip in rx_a)
    assert sent_a.log_bytes() != sent_c.log_bytes()
    assert len(rx_a[HOSTS[0].ip]) == 0


def test_per_host_and_merged_stats() -> None:
    sent, rxs = random_servers_run(8)
    assert len(sent) == 250  # 4 Mb/s of 200-byte frames for 0.1 s
    total = 0
    for h in HOSTS[1:]:
        st = rxs[h.ip].stats(sent.to_destination(h.ip))
        assert (st.lost, st.unexpected, st.duplicates) == (0, 0, 0)
        assert st.latency_us is not None and st.latency_us["max"] == 20.0
        total += st.received
    assert total == 250
    merged = Receiver.merged(rxs.values())
    assert merged.times_us == sorted(merged.times_us)
    assert merged.stats(sent).lost == 0
    both = SentLog.merged([sent, sent])
    assert len(both) == 500 and both.times_us == sorted(both.times_us)


def test_flow_keys_are_remembered_per_flow_and_forgotten_when_many(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """parse_frame keeps the FlowKeys of recent flows; a key must stay the
    flow's own, across flows that differ in one field and across a reset of
    what it remembers."""
    import traffic.receiver as receiver

    monkeypatch.setattr(receiver, "_FLOW_KEYS_KEPT", 3)
    monkeypatch.setattr(receiver, "_FLOW_KEYS", {})
    variants = [FLOW, *(FlowSpec(FLOW.src_mac, FLOW.dst_mac, src, dst, proto, sp, dp, 20)
                        for src, dst, proto, sp, dp in (
                            ("10.0.0.2", "10.0.0.1", "udp", 1111, 2222),
                            ("10.0.0.1", "10.0.0.2", "tcp", 1111, 2222),
                            ("10.0.0.1", "10.0.0.2", "udp", 2222, 1111),
                            ("10.0.0.1", "10.0.0.3", "udp", 1111, 2222)))]
    for _ in range(3):
        for flow in variants:
            key, seq, _ = parse_frame(PacketFactory(flow).packet(9))
            assert key == flow.key and seq == 9
            assert len(receiver._FLOW_KEYS) <= 3


def test_a_sender_sizes_and_addresses_each_event_by_its_own_destination() -> None:
    """Events of three flows in two frame sizes, interleaved: each frame
    (parsed by Scapy) is its event's flow at its event's size, and the log
    says so too."""
    import numpy as np

    from traffic.schedules import Schedule

    flows = [FlowSpec(FLOW.src_mac, FLOW.dst_mac, "10.0.0.1", f"10.0.0.{d}", "udp",
                      1000 + d, 2000 + d, 20) for d in (2, 3, 4)]
    dest = np.array([2, 0, 1, 0, 2, 1, 0, 2])
    size = np.array([90, 64, 64, 90, 64, 90, 64, 90])
    sched = Schedule(np.arange(8) * 10, dest, np.arange(8), size, tuple(flows))
    sender = Sender(sched)
    frames = list(sender)
    assert [t for t, _ in frames] == list(range(0, 80, 10))
    for (_, frame), d, z, seq in zip(frames, dest, size, range(8)):
        pkt = Ether(frame)
        assert len(frame) == z
        assert (pkt[IP].dst, pkt[UDP].sport) == (flows[d].dst_ip, flows[d].sport)
        assert parse_frame(frame)[1] == seq
    assert sender.log.sizes == size.tolist()
    assert [k.dst_ip for k in sender.log.keys] == [flows[d].dst_ip for d in dest]
