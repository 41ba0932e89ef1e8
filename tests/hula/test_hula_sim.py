"""HULA probing and the figure-14 loss run (orchestration/systems/hula.py) with
controller/hula.py's probe frames, on the sim target (INT-label section 6, figure 14)."""

from __future__ import annotations

import pytest

from controller.hula import (
    PROBE_FRAME_BYTES,
    ProbeOrigin,
    copies_per_probe,
    is_probe,
    parse_probe,
    probe_frame,
    probe_origins,
)
from orchestration.network import RunEnv
from orchestration.systems.hula import (
    HulaProber,
    background_rate_limit,
    build_hula_network,
    run_hula_loss,
)
from topologies.generators import build_topology, fat_tree


def test_probe_frame_bytes() -> None:
    frame = probe_frame(0x0A0B0C0D, 7, "02:00:00:00:00:08", "00:00:00:00:00:01", max_util=300)
    assert frame == bytes.fromhex(
        "020000000008" "000000000001" "2345" "0a0b0c0d" "0000012c" "00000007") + bytes(38)
    assert len(frame) == PROBE_FRAME_BYTES == 64
    assert parse_probe(frame) == (0x0A0B0C0D, 300, 7) and is_probe(frame)
    assert parse_probe(bytes(12) + b"\x08\x00" + bytes(50)) is None


def test_origins_are_the_first_host_of_each_tor() -> None:
    assert probe_origins(build_topology("intlabel-fabric")) == [
        ProbeOrigin("tor1", 8, "h1"), ProbeOrigin("tor2", 9, "h3"),
        ProbeOrigin("tor3", 10, "h5"), ProbeOrigin("tor4", 11, "h7")]
    assert len(probe_origins(fat_tree(4))) == 8


def probe_run(seed: int, interval_s: float, run_s: float) -> dict:
    """Probes only: when each stand-in host sent which probe, how many probe
    copies switches transmitted, how many probes reached hosts."""
    net = build_hula_network(build_topology("intlabel-fabric"), RunEnv(seed=seed))
    sent_at: list[tuple[int, str, int]] = []
    for host in net.hosts.values():
        def spy(packet: bytes, host=host, send=host.send) -> None:
            if is_probe(packet):
                sent_at.append((net.sim.now_ns, host.name, parse_probe(packet)[2]))
            send(packet)
        host.send = spy
    tx = [0]
    for sw in net.switches.values():
        sw.taps.append(lambda t, node, port, pkt: tx.__setitem__(0, tx[0] + is_probe(pkt)))
    at_hosts = [0]
    for host in net.hosts.values():
        host.handlers.append(lambda h, pkt, t: at_hosts.__setitem__(0, at_hosts[0]
                                                                    + is_probe(pkt)))
    prober = HulaProber(net, interval_s, seed)
    prober.start()
    net.run(run_s)
    return {"sent": prober.sent, "sent_at": sent_at, "tx": tx[0], "at_hosts": at_hosts[0]}


def test_prober_phases_interval_and_flood() -> None:
    run = probe_run(seed=3, interval_s=0.010, run_s=0.0505)
    by_host: dict[str, list[int]] = {}
    for t, host, _ in run["sent_at"]:
        by_host.setdefault(host, []).append(t)
    # The first host of each ToR sends, first at a phase in [0, 10 ms), then
    # every 10 ms, numbering its probes 0, 1, ...
    assert sorted(by_host) == ["h1", "h3", "h5", "h7"]
    for times in by_host.values():
        assert 0 <= times[0] < 10_000_000
        assert all(b - a == 10_000_000 for a, b in zip(times, times[1:]))
        assert len(times) in (5, 6)
    for host in by_host:
        assert [seq for _, h, seq in run["sent_at"] if h == host] == list(
            range(len(by_host[host])))
    assert run["sent"] == {"tor1": len(by_host["h1"]), "tor2": len(by_host["h3"]),
                           "tor3": len(by_host["h5"]), "tor4": len(by_host["h7"])}
    # Phases differ per ToR and come from the seed.
    assert len({times[0] for times in by_host.values()}) == 4
    assert run["sent_at"] == probe_run(seed=3, interval_s=0.010, run_s=0.0505)["sent_at"]
    assert run["sent_at"] != probe_run(seed=4, interval_s=0.010, run_s=0.0505)["sent_at"]
    # Every probe is copied 20 times (copies_per_probe) and none reaches a
    # host: ToRs consume them. The run lasts at least 0.5 ms past the last
    # send; a probe crosses the fabric in about 0.1 ms.
    last = max(t for t, _, _ in run["sent_at"])
    assert last < 50_000_000
    assert run["tx"] == 20 * sum(run["sent"].values())
    assert run["at_hosts"] == 0


def test_copies_per_probe() -> None:
    topo = build_topology("intlabel-fabric")
    assert [copies_per_probe(topo, o) for o in probe_origins(topo)] == [20, 20, 20, 20]
    assert copies_per_probe(fat_tree(4), probe_origins(fat_tree(4))[0]) == 44


def test_prober_rejects_a_zero_interval() -> None:
    net = build_hula_network(build_topology("intlabel-fabric"))
    with pytest.raises(ValueError):
        HulaProber(net, 0.0)


# Figure 14's setting: the paper's workload (h1 and h8, 5 Mb/s each of 1 kB
# frames to random servers), queues of 16 packets, every data port limited
# to the busiest port's background rate plus 2%.
FIG14 = {"background": 5e6, "packet_size": 1000, "senders": ("h1", "h8"),
         "duration_s": 3.0, "env": RunEnv(seed=0, switch_model="ideal")}
DEPTH = 16


def test_figure_14_probes_cause_loss_that_falls_with_the_interval() -> None:
    """INT-label section 6: "We limit the bandwidth and queue depth of BMv2
    so that there is no packet loss while sending background traffic alone
    ... HULA induces packet loss, which decreases from 12% to 5% as the
    probing interval increases from 10ms to 100ms". Here (seed 0): 0%
    alone, 9.1% at 10 ms, 0.08% at 100 ms."""
    limit = background_rate_limit(1.02, **FIG14)
    assert limit == pytest.approx(536.0 * 1.02)  # tor1 -> leaf1 carries 536 pkt/s
    alone = run_hula_loss(None, rate_limit_pps=limit, queue_depth=DEPTH, **FIG14)
    assert alone["background_sent"] == 3750
    assert alone["background_lost"] == 0 and alone["queue_drops"] == 0
    fast = run_hula_loss(10, rate_limit_pps=limit, queue_depth=DEPTH, **FIG14)
    slow = run_hula_loss(100, rate_limit_pps=limit, queue_depth=DEPTH, **FIG14)
    assert fast["probes_sent"] == 4 * 300 and slow["probes_sent"] == 4 * 30
    assert fast["probe_copies_expected"] == 20 * 1200
    assert fast["background_loss_rate"] == pytest.approx(0.0912, abs=0.0001)
    assert slow["background_loss_rate"] == pytest.approx(0.0008, abs=0.0001)
    assert fast["background_loss_rate"] > 0.05 > slow["background_loss_rate"] > 0
    assert fast["probe_copies_lost"] > slow["probe_copies_lost"] > 0


def test_figure_14_with_bmv2s_timing_still_loses_less_as_probes_slow_down() -> None:
    """The same setting with the measured BMv2 switch model (the sim's
    default): the loss still comes from the rate-limited queues, so it
    still falls with the probing interval."""
    setting = {**FIG14, "env": RunEnv(seed=0, switch_model="bmv2")}
    limit = background_rate_limit(1.02, **setting)
    fast = run_hula_loss(10, rate_limit_pps=limit, queue_depth=DEPTH, **setting)
    slow = run_hula_loss(100, rate_limit_pps=limit, queue_depth=DEPTH, **setting)
    assert fast["background_loss_rate"] > 0.05 > slow["background_loss_rate"]
    assert fast["probe_copies_lost"] > slow["probe_copies_lost"]
