"""The same runs on every target behind ``orchestration.network.Network``:
all-pairs ping and an INT-label run, each written once, parametrised over
``sim`` and ``mininet`` (the latter as root with Mininet, ``intbed-switch``
and ``redis-server``; skipped with the reason otherwise). Every live run
must leave nothing behind."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest

from common.errors import IntbedError
from orchestration.apps.ping import PAYLOAD, all_pairs, expected_rtt_us
from orchestration.live.options import LiveOptions
from orchestration.network import (
    TARGETS,
    Network,
    RunEnv,
    check_available,
    get_target,
    open_network,
)
from orchestration.redis_server import redis_available
from orchestration.systems.intlabel.config import RunConfig
from orchestration.systems.intlabel.run import run_intlabel
from tests.test_layers import PACKAGES
from topologies.generators import build_topology


def _unavailable(target: str) -> str | None:
    problem = get_target(target).available()
    if problem is None and get_target(target).live and not redis_available():
        problem = "redis-server not installed: run make install as root"
    return problem


TARGET_PARAMS = [
    pytest.param(name, marks=pytest.mark.skipif(
        _unavailable(name) is not None, reason=f"{name}: {_unavailable(name)}"))
    for name in ("sim", "mininet")
]



def test_one_registry_names_every_target() -> None:
    assert list(TARGETS) == ["sim", "mininet", "bmv2"]
    with pytest.raises(IntbedError, match=r"unknown target 'tofino' \(targets: sim, mininet, "
                                          r"bmv2\)"):
        get_target("tofino")
    check_available("sim")  # nothing to install


@pytest.mark.parametrize("target", TARGET_PARAMS)
def test_all_pairs_ping(target: str, clean: None, tmp_path: Path) -> None:
    topo = build_topology("line", n=3)
    # On the sim, switches that take no time: round trips are the links' alone.
    net = RunEnv(target, live=LiveOptions(results_dir=tmp_path),
                 switch_model="ideal").open(topo, "l3_forward", label="ping")
    assert isinstance(net, Network)
    with net:
        net.install_routes()
        results = all_pairs(net, spacing_s=0.002 if net.host_kernels else 0.001)
    assert len(results) == 6
    assert all(r.rtt_us is not None for r in results), results
    size = 14 + 20 + 8 + len(PAYLOAD)
    for r in results:
        expected = expected_rtt_us(topo, r.src, r.dst, size)
        if target == "sim":  # virtual time: exactly the links' serialization + propagation
            assert r.rtt_us == pytest.approx(expected, abs=0.001)
        else:  # wall clock: no netem, so no less than zero and well under a second
            assert 0 < r.rtt_us < 1e6


@pytest.mark.parametrize("target", TARGET_PARAMS)
def test_intlabel_run(target: str, clean: None, tmp_path: Path) -> None:
    cfg = RunConfig(topology="line", senders=("h1", "h3"), packets=600, T_ms=50.0)
    m = run_intlabel(cfg, RunEnv(target, live=LiveOptions(results_dir=tmp_path)))
    assert m.packets_sent == 600
    assert m.packets_delivered >= 0.95 * m.packets_sent
    # Every user packet on a 3-switch line crosses 2 or 3 labeling hops and
    # Base A labels each egress port at least every T: reports arrive, the
    # ground truth saw the active ports and coverage is high.
    assert m.reports > 0 and m.active_ports >= 4
    assert m.mean_coverage > 0.9, m.windows
    if target != "sim":
        [run_dir] = tmp_path.iterdir()
        assert (run_dir / "metrics.json").is_file()


def test_sim_records_pcaps_as_bmv2_names_them(tmp_path: Path) -> None:
    from common.pcap import iter_pcap

    topo = build_topology("line", n=2)
    with open_network("sim", topo, "l3_forward", pcap_dir=tmp_path) as net:
        net.install_routes()
        results = all_pairs(net)
        counters = net.finish()
    assert all(r.rtt_us is not None for r in results)
    files = sorted(p.name for p in tmp_path.glob("*_out.pcap"))
    assert files == ["s1-eth1_out.pcap", "s1-eth2_out.pcap", "s2-eth1_out.pcap",
                     "s2-eth2_out.pcap"]
    for (switch, port), tx in counters.port_tx.items():
        records = list(iter_pcap(tmp_path / f"{switch}-eth{port}_out.pcap"))
        assert len(records) == tx > 0
        times = [t for t, _ in records]
        assert times == sorted(times) and times[-1] <= net.clock.now_ns


@pytest.mark.parametrize("target", TARGET_PARAMS)
def test_the_collector_host_reaches_every_switch(target: str, clean: None,
                                                 tmp_path: Path) -> None:
    """A frame the collector host sends into port 500 of a switch is routed
    like any other: an echo request sent into s1 and one into s2 both reach h2."""
    from orchestration.apps.ping import icmp_echo, parse_echo
    from orchestration.network import COLLECTOR_IP, COLLECTOR_MAC

    topo = build_topology("line", n=2)
    net = open_network(target, topo, "l3_forward", live=LiveOptions(results_dir=tmp_path),
                       label="collector")
    got: list[bytes] = []
    with net:
        net.install_routes()
        net.attach_collector(lambda frames: None)
        dst = topo.hosts["h2"]
        net.listen("h2", lambda frames: got.extend(f for f, _ in frames))
        frame = icmp_echo(COLLECTOR_MAC, "00:00:00:00:00:00", COLLECTOR_IP, dst.ip, 7, 1)
        for switch in ("s1", "s2"):
            net.send_to_switch(switch, frame)
        net.run(0.5 if net.host_kernels else 0.01)
    echoes = [e for e in map(parse_echo, got) if e is not None and e[0] == 8 and e[1] == 7]
    assert len(echoes) == 2  # one through s1 then s2, one through s2 alone


def test_an_option_the_sim_target_does_not_have_is_refused() -> None:
    with pytest.raises(IntbedError, match=r"the sim target has no option pcap \(it takes: "
                                          r"pcap_dir, switch_model\)"):
        open_network("sim", build_topology("line", n=2), "l3_forward", pcap=True)


@pytest.mark.parametrize("target", TARGET_PARAMS)
def test_end_traffic_stops_the_senders_early(target: str, clean: None, tmp_path: Path) -> None:
    """An app done before the duration ends the traffic: the run drains and
    returns early, and ``sent`` counts only the packets that left."""
    from traffic.schedules import flows_to_random_servers

    topo = build_topology("line", n=3)
    net = open_network(target, topo, "l3_forward", live=LiveOptions(results_dir=tmp_path),
                       label="end-traffic")
    hosts = list(topo.hosts.values())
    duration, end_at, drain = 6.0, 1.0, 0.5
    scheduled = 0
    with net:
        net.install_routes()
        for h in hosts:
            others = [o for o in hosts if o.name != h.name]
            sched = flows_to_random_servers(h, others, 100 * 200 * 8, 200,
                                            round(duration * 1e6), 7)
            scheduled += len(sched)
            net.add_sender(h.name, sched, seed=1)
            net.add_receiver(h.name)
        t0 = net.start_traffic()
        clock = net.clock
        clock.call_later(t0 + end_at - clock.now(), net.end_traffic)
        net.run_traffic(duration, drain)
        counters = net.finish()
    assert 0 < counters.sent < scheduled / 2, (counters.sent, scheduled)
    assert counters.elapsed_s < duration / 2, counters.elapsed_s
    assert counters.delivered <= counters.sent
    assert counters.delivered >= 0.9 * counters.sent, counters
    if target == "sim":  # exact in virtual time: every packet sent before 1 s arrives
        assert counters.delivered == counters.sent
        sim_hosts = net.hosts  # type: ignore[attr-defined]
        assert counters.sent == sum(sim_hosts[h.name].tx_packets for h in hosts)


def _name_comparisons(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, code) of each comparison of a string with a target's name."""
    names = set(TARGETS)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        literal = [c for c in sides if isinstance(c, ast.Constant) and c.value in names]
        within = [c for c in sides if isinstance(c, ast.Tuple | ast.List | ast.Set)
                  and any(isinstance(e, ast.Constant) and e.value in names for e in c.elts)]
        if literal or within:
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_code_outside_the_registry_compares_a_targets_name() -> None:
    """What differs between targets is asked of the ``Target`` (``live``,
    ``queues_while_running``, its binary's ``emulates_loss``...), so adding
    one is adding a registry entry."""
    root = Path(__file__).resolve().parents[1]
    found = []
    for package in sorted(PACKAGES):
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel != "orchestration/network.py":
                found += [f"{rel}:{line}: {code}"
                          for line, code in _name_comparisons(ast.parse(path.read_text()))]
    assert found == []
    probe = "if target == 'sim':\n    pass\nok = t.live\nx = name in ('mininet', 'bmv2')\n"
    assert [line for line, _ in _name_comparisons(ast.parse(probe))] == [1, 4]


def test_a_target_is_resolved_once_and_travels_as_its_name() -> None:
    sim = get_target("sim")
    assert get_target(sim) is sim and str(sim) == "sim" and repr(sim) == "Target('sim')"
    assert pickle.loads(pickle.dumps(TARGETS["bmv2"])) is TARGETS["bmv2"]
    env = RunEnv("mininet", seed=7)
    assert env.target is TARGETS["mininet"] and env.seed == 7
    assert pickle.loads(pickle.dumps(env)) == env
    assert repr(RunEnv()) == ("RunEnv(target=Target('sim'), seed=0, live=None, "
                              "switch_model=None, collector_profile=None)")
    with pytest.raises(IntbedError, match="unknown target 'tofino'"):
        RunEnv("tofino")


def test_the_command_line_resolves_target_into_the_registrys_entry() -> None:
    import click

    from intbed.commands.targets import TargetChoice

    choice = TargetChoice()
    assert choice.convert("bmv2", None, None) is TARGETS["bmv2"]
    assert choice.convert(TARGETS["sim"], None, None) is TARGETS["sim"]
    with pytest.raises(click.BadParameter):
        choice.convert("tofino", None, None)


def test_switch_binaries_declare_what_they_can_do() -> None:
    from orchestration.binaries.switches import get_binary

    intbed, bmv2 = get_binary("intbed"), get_binary("bmv2")
    assert intbed.emulates_loss and intbed.seeds_random
    assert not bmv2.emulates_loss and not bmv2.seeds_random
    assert intbed.extra_args(seed=5, losses={3: 0.25, 1: 0.5}) == [
        "--seed", "5", "--loss", "1:0.5", "--loss", "3:0.25"]
    assert bmv2.extra_args(seed=5, losses={}) == []
    with pytest.raises(IntbedError, match="cannot emulate link loss"):
        bmv2.extra_args(seed=5, losses={1: 0.5})
    assert TARGETS["sim"].queues_while_running and not TARGETS["mininet"].queues_while_running
    assert [t.binary for t in TARGETS.values()] == [None, "intbed", "bmv2"]


def test_a_live_target_whose_binary_cannot_drop_frames_refuses_a_lossy_topology(
        tmp_path: Path) -> None:
    from orchestration.live.network import LiveNetwork, LiveTargetError

    topo = build_topology("line", n=2)
    topo.links[0].loss = 0.1
    with pytest.raises(LiveTargetError, match="bmv2 target cannot emulate link loss .*"
                                              "use --target mininet"):
        LiveNetwork(topo, "l3_forward", run_dir=tmp_path, target="bmv2")
    LiveNetwork(topo, "l3_forward", run_dir=tmp_path, target="mininet")  # built, not started
    with pytest.raises(LiveTargetError, match="'sim' is not a live target"):
        LiveNetwork(topo, "l3_forward", run_dir=tmp_path, target="sim")


def test_the_sim_network_gives_queues_and_registers_a_live_one_does_not(
        tmp_path: Path) -> None:
    from orchestration.live.network import LiveNetwork

    net = open_network("sim", build_topology("line", n=2), "l3_forward")
    queues = net.switch_queues("s1")
    queues.set_queue_depth(7, None)
    assert all(p.depth == 7 for p in net.switches["s1"].ports.values())
    assert net.switch_registers("s1") is not None
    live = LiveNetwork(build_topology("line", n=2), "l3_forward", run_dir=tmp_path)
    assert live.switch_queues("s1") is None and live.switch_registers("s1") is None
