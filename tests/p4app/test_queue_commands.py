"""set_queue_depth / set_queue_rate from a command file change a sim
switch's egress queues as BMv2's commands do: depth in packets (tail drop),
rate in dequeues per second."""

from __future__ import annotations

from pathlib import Path

from controller.bmcli import CommandRunner
from controller.bmcli.parse import parse_commands
from dataplane.compiler.pipeline import compile_file
from dataplane.targets.sim.events import NS_PER_S
from orchestration.sim import SimNetwork
from orchestration.switch_access import SimQueues, TopologyQueues
from topologies.model import Topology

PROGRAM = Path(__file__).resolve().parent / "cli_kinds.p4"


def star() -> Topology:
    topo = Topology("star")
    topo.add_switch("s1")
    for i in (1, 2, 3):
        topo.add_host(f"h{i}", f"00:00:0a:00:00:0{i}", f"10.0.0.{i}")
        topo.add_link(f"h{i}", "s1")
    return topo


def frame(dst: str, src: str, n: int) -> bytes:
    return (bytes.fromhex(dst.replace(":", "")) + bytes.fromhex(src.replace(":", ""))
            + b"\x88\xb5" + n.to_bytes(2, "big") + bytes(46))


def test_depth_and_rate_reach_the_ports_and_shape_a_burst() -> None:
    net = SimNetwork(star(), compile_file(PROGRAM))
    net.start()
    runner = CommandRunner(net.clients["s1"], queues=SimQueues(net, "s1"))
    runner.run(parse_commands(
        "table_add dmac metered_forward 00:00:0a:00:00:02 1 => 2\n"
        "set_queue_rate 1000\n"
        "set_queue_depth 2 2\n", "q.txt"))
    ports = net.switches["s1"].ports
    assert ports[2].depth == 2 and ports[1].depth == ports[3].depth == 64
    assert {p.gap_ns for p in ports.values() if p.port in (1, 2, 3)} == {NS_PER_S // 1000}
    assert net.topo.switches["s1"].port_queue_depth(2) == 2
    sent: list[int] = []
    net.tap_transmitted(lambda t, sw, port, data: sent.append(t) if port == 2 else None)
    for n in range(6):
        net.send_frame("h1", frame("00:00:0a:00:00:02", "00:00:0a:00:00:01", n))
    net.run(0.1)
    # One served at once, two queued, three dropped; 1 ms between departures.
    assert len(sent) == 3
    assert net.queue_drops() == {("s1", 2): 3}
    gaps = [b - a for a, b in zip(sent, sent[1:])]
    assert all(g >= NS_PER_S // 1000 for g in gaps), gaps


def test_topology_queues_record_settings_for_live_targets() -> None:
    topo = star()
    q = TopologyQueues(topo, "s1")
    q.set_queue_depth(10, None)
    q.set_queue_rate(500.0, 3)
    spec = topo.switches["s1"]
    assert [spec.port_queue_depth(p) for p in (1, 2, 3)] == [10, 10, 10]
    assert [spec.port_queue_rate_pps(p) for p in (1, 2, 3)] == [None, None, 500.0]
