"""The p4-learning exercises, unchanged, on the sim target, from their
p4app.json and from their network.py: what each exercise's README says
must happen.

03-L2_Basic_forwarding: ``pingall`` reaches every host from every host.
05-ECMP: ``pingall`` works, and packets with random TCP ports (``send.py``)
spread over the four paths through s2..s5, each flow keeping one path.
"""

from __future__ import annotations

import random
import struct
from collections import Counter, defaultdict
from math import sqrt
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from common.checksum import internet_checksum
from common.paths import shared_dir
from orchestration.apps.ping import expected_rtt_us
from orchestration.p4app.load import load_app
from orchestration.p4app.run import open_app, run_app
from tests.crc_reference import crc16_arc

EXERCISES = shared_dir() / "third-party" / "p4-learning"
L2 = EXERCISES / "03-L2_Basic_forwarding"
ECMP = EXERCISES / "05-ECMP"
ECHO_FRAME = 98  # bytes: Ethernet + IPv4 + ICMP with 56 bytes of data

pytestmark = pytest.mark.skipif(not EXERCISES.is_dir(),
                                reason=f"the p4-learning exercises are not at {EXERCISES}")


@pytest.mark.parametrize("file", ["p4app.json", "network.py"])
def test_l2_basic_forwarding_pingall(file: str) -> None:
    app = load_app(L2 / file)
    result = run_app(app, "sim", switch_model="ideal")  # round trips: the links' time
    assert result.commands == {"s1": 4}
    assert len(result.pings) == 12 and not result.lost
    for p in result.pings:
        assert p.rtt_us == pytest.approx(expected_rtt_us(app.topo, p.src, p.dst, ECHO_FRAME))


def test_l2_frames_to_an_unknown_mac_are_not_forwarded() -> None:
    app = load_app(L2 / "p4app.json")
    net = open_app(app, "sim")
    got: list[bytes] = []
    for h in ("h2", "h3", "h4"):
        net.listen(h, lambda frames: got.extend(f for f, _ in frames))
    net.send_frame("h1", bytes(Ether(src="00:00:0a:00:00:01", dst="00:00:0a:00:00:09")
                               / IP(src="10.0.0.1", dst="10.0.0.9")))
    net.send_frame("h1", bytes(Ether(src="00:00:0a:00:00:01", dst="00:00:0a:00:00:03")
                               / IP(src="10.0.0.1", dst="10.0.0.3")))
    net.run(0.01)
    assert len(got) == 1 and Ether(got[0])[IP].dst == "10.0.0.3"


def tcp_syn(src_mac: str, src_ip: str, dst_ip: str, sport: int, dport: int) -> bytes:
    """send.py's frame (Scapy's defaults: a SYN, window 8192, TTL 64, id 1),
    built by hand because Scapy takes milliseconds per frame; checked
    against Scapy in the test."""
    src, dst = bytes(map(int, src_ip.split("."))), bytes(map(int, dst_ip.split(".")))
    tcp = struct.pack("!HHIIBBHHH", sport, dport, 0, 0, 5 << 4, 0x02, 8192, 0, 0)
    pseudo = src + dst + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + internet_checksum(pseudo + tcp).to_bytes(2, "big") + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0, 64, 6, 0, src, dst)
    ip = ip[:10] + internet_checksum(ip).to_bytes(2, "big") + ip[12:]
    return b"\xff" * 6 + bytes.fromhex(src_mac.replace(":", "")) + b"\x08\x00" + ip + tcp


@pytest.mark.parametrize("file", ["p4app.json", "network.py"])
def test_ecmp_pingall_and_flows_spread_over_four_paths(file: str) -> None:
    app = load_app(ECMP / file)
    assert not run_app(app, "sim").lost

    # 50,000 frames/s below: more than a BMv2 switch serves (the default
    # model would drop some, as simple_switch does); this test is about
    # where they go, so its switches take no time.
    net = open_app(app, "sim", switch_model="ideal")
    h1, h2 = app.topo.hosts["h1"], app.topo.hosts["h2"]
    s1_port: dict[tuple[int, int], set[int]] = defaultdict(set)

    def tap(_t: int, switch: str, port: int, frame: bytes) -> None:
        if switch == "s1" and port != 1:
            s1_port[struct.unpack_from("!HH", frame, 34)].add(port)

    net.tap_transmitted(tap)
    delivered: list[bytes] = []
    net.listen("h2", lambda frames: delivered.extend(f for f, _ in frames))
    rng = random.Random(5)
    flows = [(rng.randint(49152, 65535), rng.randint(5000, 60000)) for _ in range(1000)]
    # As send.py: TCP SYNs with random ports to h2, broadcast destination MAC.
    for sport, dport in flows[:5]:
        assert tcp_syn(h1.mac, h1.ip, h2.ip, sport, dport) == bytes(
            Ether(src=h1.mac, dst="ff:ff:ff:ff:ff:ff") / IP(src=h1.ip, dst=h2.ip)
            / TCP(sport=sport, dport=dport))
    for i, (sport, dport) in enumerate(flows * 2):  # every flow twice
        frame = tcp_syn(h1.mac, h1.ip, h2.ip, sport, dport)
        net.clock.call_later(i * 20e-6, net.send_frame, "h1", frame)
    net.run(0.2)
    net.stop()

    assert len(delivered) == 2 * len(flows)
    assert {f[22] for f in delivered} == {64 - 3}  # TTL: s1, a middle switch, s6
    # Each flow keeps one path, the one BMv2's crc16 of its 5-tuple picks.
    distinct = set(flows)
    assert all(len(s1_port[f]) == 1 for f in distinct)
    for sport, dport in distinct:
        five = (bytes(map(int, h1.ip.split("."))) + bytes(map(int, h2.ip.split(".")))
                + sport.to_bytes(2, "big") + dport.to_bytes(2, "big") + bytes([6]))
        assert s1_port[(sport, dport)] == {2 + crc16_arc(five) % 4}
    # The four middle switches share the flows: binomial(n, 1/4) within 5 sigma.
    per_switch = Counter(next(iter(s1_port[f])) for f in distinct)
    tx = {s: sum(n for (sw, port), n in net.port_tx_packets().items()
                 if sw == s and port == 2) for s in ("s2", "s3", "s4", "s5")}
    assert sum(tx.values()) == 2 * len(flows) and all(tx.values())
    n = len(distinct)
    mean, sd = n / 4, sqrt(n * 0.25 * 0.75)
    assert sorted(per_switch) == [2, 3, 4, 5]
    for port, count in per_switch.items():
        assert abs(count - mean) < 5 * sd, (port, count, per_switch)
        middle = f"s{port}"
        assert tx[middle] == 2 * count  # what left s1 on that port crossed that switch


def test_exercise_paths_resolve_against_the_exercise_folder(tmp_path: Path) -> None:
    """Run from another working directory: relative paths in the exercise are
    the exercise folder's, as with ``cd exercise && p4run``."""
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        app = load_app(ECMP / "network.py")
    finally:
        os.chdir(cwd)
    assert app.cli_inputs["s3"] == (ECMP / "sw-commands" / "s3-commands.txt").resolve()
