"""IntLabelConfig validation, and installing INT-label on a real switch by
P4Runtime; then one packet over two switches, its report parsed and stored."""

from __future__ import annotations

import struct

import pytest

from common.checksum import internet_checksum
from common.errors import IntbedError
from common.paths import PACKAGE_ROOT
from controller.intlabel import (
    CollectorEndpoint,
    IntLabelConfig,
    IntLabelConfigError,
    SpecificFlow,
    configure_switch,
)
from controller.intlabel.config import report_source_ip
from orchestration.sim import COLLECTOR_IP, COLLECTOR_MAC, COLLECTOR_PORT, build
from sinks.intlabel import Collector, MemoryIntDatabase
from topologies.generators import line
from topologies.model import ip_to_int, mac_to_int

ENDPOINT = CollectorEndpoint(COLLECTOR_MAC, COLLECTOR_IP, COLLECTOR_PORT)


@pytest.mark.parametrize("kw, message", [
    ({"T_ms": 0}, "labeling interval T must be positive, not 0 ms"),
    ({"T_ms": -5}, "labeling interval T must be positive, not -5 ms"),
    ({"T_ms": 50, "T1_ms": 60}, "rest time T1 (60 ms) must not exceed the labeling interval T "
                                "(50 ms)"),
    ({"T1_ms": -1}, "rest time T1 must not be negative, not -1 ms"),
    ({"max_hop": 0}, "MAX_hop must be an integer of at least 1, not 0"),
    ({"max_hop": 128}, "MAX_hop must be at most 127 (INT_num's upper half marks specific "
                       "flows), not 128"),
    ({"mode": "B", "f": "F2", "max_hop": 1}, "F2 divides by MAX_hop - 1: MAX_hop must be at "
                                             "least 2, not 1"),
    ({"mode": "C"}, "mode must be 'A' or 'B', not 'C'"),
    ({"f": "F4"}, "probability function f must be 'F1', 'F2' or 'F3', not 'F4'"),
    ({"k": 0}, "Pro's k must be positive, not 0"),
    ({"pro_style": "x"}, "pro_style must be 'shift' or 'flag', not 'x'"),
    ({"T_ms": 0.0001}, "labeling interval T = 0.0001 ms is not 1 .. 2^48 - 1 microseconds"),
])
def test_invalid_parameters_give_one_line_errors(kw: dict, message: str) -> None:
    with pytest.raises(IntLabelConfigError) as info:
        IntLabelConfig(**kw)
    assert isinstance(info.value, IntbedError)
    assert info.value.message == message
    assert str(info.value) == f"error: {message}" and "\n" not in str(info.value)


def test_valid_edges() -> None:
    c = IntLabelConfig(mode="B", f="F3", T_ms=100, T1_ms=100, max_hop=2)
    assert (c.T_us, c.T1_us, c.mode_code, c.f_code, c.T_s) == (100_000, 100_000, 1, 2, 0.1)
    assert IntLabelConfig(max_hop=1).max_hop == 1  # Base A never divides by MAX_hop - 1


def test_configure_switch_writes_the_contract() -> None:
    topo = line(2)  # s1: h1 on port 1, s2 on port 2
    net = build(topo, "intlabel")
    net.collector_host()
    client = net.clients["s1"]
    cfg = IntLabelConfig(mode="B", f="F2", T_ms=20, T1_ms=5, max_hop=4,
                         specific_flows=(SpecificFlow(src_ip="10.0.1.1", dport=20000),
                                         SpecificFlow(src_ip="10.0.2.1")))
    setup = configure_switch(client, topo, "s1", cfg, ENDPOINT)
    assert (setup.switch_id, setup.last_hop_ports, setup.shift_ports) == (0, [1], [1, 2])
    conf = client.tables["MyEgress.int_config"].default.read()
    assert conf["action"] == "MyEgress.set_config"
    assert conf["params"] == {"switch_id": 0, "T": 20_000, "T1": 5_000, "max_hop": 4, "f": 1,
                              "mode": 1}
    rep = client.tables["MyEgress.report_config"].default.read()["params"]
    assert rep == {"src_mac": mac_to_int(topo.switches["s1"].mac),
                   "dst_mac": mac_to_int(COLLECTOR_MAC), "src_ip": ip_to_int("10.254.0.1"),
                   "dst_ip": ip_to_int(COLLECTOR_IP), "udp_port": 32766}
    assert report_source_ip(0) == ip_to_int("10.254.0.1")
    assert client.clone_sessions.read() == {500: [(COLLECTOR_PORT, 0)]}
    last = client.tables["MyEgress.last_hop"].read()
    assert [(e["match"], e["action"]) for e in last] == [
        ({"standard_metadata.egress_port": 1}, "MyEgress.set_last_hop")]
    shifts = sorted((e["match"]["standard_metadata.egress_port"], e["params"]["s"])
                    for e in client.tables["MyEgress.port_shift"].read())
    assert shifts == [(1, 0), (2, 0)]
    # Only the flow whose source hangs off s1 is marked on s1.
    (spec,) = client.tables["MyIngress.specific_flow"].read()
    assert spec["match"] == {"hdr.ipv4.srcAddr": (ip_to_int("10.0.1.1"), 0xFFFFFFFF),
                             "meta.l4_dport": (20000, 0xFFFF)}
    assert spec["action"] == "MyIngress.mark_specific" and spec["priority"] == 1
    # Pro's MODIFY works on the installed entry.
    client.tables["MyEgress.port_shift"].modify({"standard_metadata.egress_port": 2},
                                                "MyEgress.set_shift", {"s": 3})


def test_switch_ids_map_overrides_device_ids() -> None:
    topo = line(2)
    net = build(topo, "intlabel")
    cfg = IntLabelConfig(switch_ids={"s2": 0xA0B0C0D0})
    setup = configure_switch(net.clients["s2"], topo, "s2", cfg, ENDPOINT)
    assert setup.switch_id == 0xA0B0C0D0
    params = net.clients["s2"].tables["MyEgress.int_config"].default.read()["params"]
    assert params["switch_id"] == 0xA0B0C0D0


def udp_frame(src_mac: str, dst_mac: str, src: str, dst: str, ip_id: int) -> bytes:
    payload = bytes(range(20))
    udp = struct.pack("!HHHH", 10000, 20000, 8 + len(payload), 0) + payload
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), ip_id, 0, 64, 17, 0,
                               bytes(map(int, src.split("."))), bytes(map(int, dst.split(".")))))
    ip[10:12] = struct.pack("!H", internet_checksum(bytes(ip)))
    return (bytes.fromhex(dst_mac.replace(":", "")) + bytes.fromhex(src_mac.replace(":", ""))
            + b"\x08\x00" + bytes(ip) + udp)


def test_one_packet_two_labels_one_report() -> None:
    """h1 -> s1 -> s2 -> h2: both ports label their first packet, s2 reports
    two items (its own first) and h2 gets the packet without INT."""
    topo = line(2)
    net = build(topo, "intlabel")
    col = net.collector_host(delay_us=50)
    cfg = IntLabelConfig()
    for name in net.switches:
        configure_switch(net.clients[name], topo, name, cfg, ENDPOINT)
    db = MemoryIntDatabase()
    collector = Collector(db, net.sim, keep_reports=True)
    col.handlers.append(collector.host_handler)
    got: list[bytes] = []
    net.hosts["h2"].handlers.append(lambda h, frame, t: got.append(frame))
    h1, h2 = topo.hosts["h1"], topo.hosts["h2"]
    sent = udp_frame(h1.mac, h2.mac, h1.ip, h2.ip, 77)
    net.hosts["h1"].send(sent)
    net.run(0.01)
    assert len(got) == 1 and got[0][23] == 17 and len(got[0]) == len(sent)
    assert got[0][34:] == sent[34:]  # L4 and payload untouched
    assert collector.stats.reports == 1 and collector.stats.malformed_total == 0
    assert collector.stats.items_per_report[2] == 1
    _, report = collector.reports[0]
    assert (report.sink_switch, report.int_num, report.specific) == (1, 2, False)
    assert [(i.switch_id, i.ingress_port, i.egress_port, i.bottom) for i in report.items] == [
        (1, 2, 1, False), (0, 1, 2, True)]
    assert report.items[0].label_time > report.items[1].label_time
    assert report.flow == (ip_to_int(h1.ip), ip_to_int(h2.ip), 17, 10000, 20000)
    assert (report.ip_id, report.ttl) == (77, 62)
    assert sorted(db.keys()) == [(0, 2), (1, 1)]
    assert db.get((1, 1)).arrival_s == pytest.approx(collector.reports[0][0])


def test_controller_needs_no_data_plane() -> None:
    """The controller runs unchanged against live switches: of ``dataplane``
    it loads the exception base only."""
    import subprocess
    import sys

    code = ("import sys, controller.intlabel; "
            "print(sorted(m for m in sys.modules if m.startswith('dataplane')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=str(PACKAGE_ROOT))
    assert out.stdout.strip() == "[]"
