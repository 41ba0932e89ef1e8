"""The monitoring module on the reference network of gpint_fakenet: probe
generation from a topology, the 12-in-flight limit, sessions with and
without recovery under loss and dead links, and the receiver's counts."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from gpint_fakenet import (
    FakeNet,
    VirtualClock,
    counter_value,
    grid_topology,
    line_topology,
    one_link,
)

from controller.gpint.monitor import MAX_IN_FLIGHT, Monitor, SessionResult, path_hops
from controller.gpint.probe import (
    KIND_FEEDBACK,
    KIND_NOTICE,
    KIND_PROBE,
    Dlv,
    Probe,
    ProbeBuildError,
    SrEntry,
    encode,
    parse_probe,
)
from controller.gpint.recovery import (
    PAPER,
    UNAVAILABLE,
    GpintConfigError,
    RecoveryParams,
    link,
)
from topologies.model import Topology

# Two paths covering a 3 x 3 grid, GPINT-style: 4 and 3 switch-to-switch links.
GRID_PATHS = [["g0_0", "g0_1", "g0_2", "g1_2", "g2_2"],
              ["g1_0", "g1_1", "g2_1", "g2_0"]]
MEA = (0, 3)


def run(topo: Topology, paths: Sequence[Sequence[str]], sessions: int, *,
        recovery: RecoveryParams | None = PAPER, until: float = 1e6,
        net: dict[str, object] | None = None, **mon_args: object) -> tuple[Monitor, FakeNet]:
    clock = VirtualClock()
    t_f = recovery.t_f if recovery is not None else PAPER.t_f
    fake = FakeNet(topo, clock, recovery=recovery is not None, t_f=t_f,
                   **(net or {}))  # type: ignore[arg-type]
    mon = Monitor(topo, paths, clock, fake.send_frame, recovery=recovery,
                  mea_ranges={s: MEA for s in topo.switches}, **mon_args)  # type: ignore[arg-type]
    fake.attach(mon.on_frame)
    mon.start(sessions=sessions)
    clock.run(until=until, stop=lambda: not mon.running)
    return mon, fake


def assert_readings_right(topo: Topology, res: SessionResult) -> None:
    for path, row in zip(res.paths, res.readings):
        for name, reading in zip(path, row):
            assert reading is not None, name
            dev = topo.switches[name].device_id
            assert reading.switch_id == dev
            assert reading.values == tuple(counter_value(dev, i) for i in range(MEA[0], MEA[1]))


def binomial_99(n: int, p: float) -> tuple[int, int]:
    """The central 99% interval of Binomial(n, p), from its exact CDF."""
    cdf, lo, hi = 0.0, None, n
    for k in range(n + 1):
        cdf += math.comb(n, k) * p ** k * (1 - p) ** (n - k)
        if lo is None and cdf > 0.005:
            lo = k
        if cdf >= 0.995:
            hi = k
            break
    assert lo is not None
    return lo, hi


# -------------------------------------------------------------- generator


def test_path_hops_take_ports_from_the_topology() -> None:
    topo = grid_topology(3, 3)
    hops = path_hops(topo, GRID_PATHS[0], {"g0_1": (4, 2)})
    want_ports = [topo.switch_port_to(a, b) for a, b in zip(GRID_PATHS[0], GRID_PATHS[0][1:])]
    assert [h.next_port for h in hops] == [*want_ports, 0]
    assert hops[1] == SrEntry(want_ports[1], 4, 2) and hops[0][1:] == (0, 0)


def test_path_hops_pick_the_lowest_parallel_port() -> None:
    topo = line_topology(2)
    topo.add_link("s1", "s2", 7, 9)
    assert path_hops(topo, ["s2", "s1"])[0].next_port == 1


@pytest.mark.parametrize(("path", "words"), [
    ([], "at least one switch"),
    (["g0_0", "nope"], "'nope' is no switch"),
    (["g0_0", "g1_1"], "no link from 'g0_0' to 'g1_1'"),
])
def test_bad_paths_are_refused(path: list[str], words: str) -> None:
    with pytest.raises(GpintConfigError, match=words):
        path_hops(grid_topology(3, 3), path)


def test_port_over_8_bits_is_refused() -> None:
    topo = line_topology(2)
    topo.add_switch("s3", 3)
    topo.add_link("s2", "s3", 300, 1)
    with pytest.raises(GpintConfigError, match="port 300 of 's2'"):
        path_hops(topo, ["s2", "s3"])


def test_probes_too_big_are_refused_at_construction() -> None:
    topo = line_topology(201)
    clock = VirtualClock()
    names = [f"s{i}" for i in range(1, 202)]
    with pytest.raises(ProbeBuildError, match="201 hops"):
        Monitor(topo, [names], clock, lambda s, f: None)
    with pytest.raises(ProbeBuildError, match="140 values"):
        Monitor(topo, [names[:10]], clock, lambda s, f: None,
                mea_ranges={n: (0, 14) for n in names})


def test_sent_probes_carry_the_path_and_rolling_ids() -> None:
    topo = grid_topology(3, 3)
    clock = VirtualClock()
    sent: list[tuple[str, Probe]] = []
    mon = Monitor(topo, GRID_PATHS, clock, lambda s, f: sent.append((s, parse_probe(f))),
                  recovery=None, mea_ranges={"g0_1": (1, 2)}, request_type=1,
                  probe_timeout_s=1.0)
    mon.start(sessions=2)
    clock.run(stop=lambda: not mon.running)
    assert [(s, p.request_id, p.addrs.ident) for s, p in sent] == [
        ("g0_0", 0, 1), ("g1_0", 1, 1), ("g0_0", 2, 2), ("g1_0", 3, 2)]
    p = sent[0][1]
    assert (p.kind, p.request_type, p.dlv, p.values) == (KIND_PROBE, 1, [], [])
    assert p.sr == path_hops(topo, GRID_PATHS[0], {"g0_1": (1, 2)})
    assert [r.completed for r in mon.results] == [False, False]
    assert [r.failed_probes for r in mon.results] == [2, 2]


# ------------------------------------------------------- sessions, no loss


def test_clean_session_latency_is_the_path_time() -> None:
    topo = line_topology(3)
    mon, _ = run(topo, [["s1", "s2", "s3"]], 1)
    (res,) = mon.results
    assert res.completed and res.missing == [] and res.status == {}
    # monitor -> s1, s1 -> s2, s2 -> s3, s3 -> monitor
    assert res.latency == pytest.approx(5e-5 + 1e-4 + 1e-4 + 5e-5)
    assert (res.probes_sent, res.recovery_sent, res.feedbacks, res.notices) == (1, 0, 1, 0)
    assert_readings_right(topo, res)


def test_sessions_loop_with_a_gap() -> None:
    topo = grid_topology(3, 3)
    seen: list[int] = []
    mon, _ = run(topo, GRID_PATHS, 4, gap_s=0.5, on_session=lambda r: seen.append(r.number))
    assert seen == [1, 2, 3, 4] and not mon.running
    for a, b in zip(mon.results, mon.results[1:]):
        assert b.start == pytest.approx(a.end + 0.5)
    for res in mon.results:  # each session measured anew: a new identification
        assert res.completed
        assert_readings_right(topo, res)


def test_stop_ends_the_loop() -> None:
    topo = grid_topology(3, 3)
    clock = VirtualClock()
    fake = FakeNet(topo, clock)
    mon = Monitor(topo, GRID_PATHS, clock, fake.send_frame,
                  on_session=lambda r: mon.stop() if r.number == 2 else None)
    fake.attach(mon.on_frame)
    mon.start()
    clock.run(until=100.0)
    assert [r.number for r in mon.results] == [1, 2] and not mon.running


def test_a_switch_visited_twice_reports_once() -> None:
    """The path s1 s2 s3 s2 s4 (a star around s2): s2 measures at its first
    visit only, and its reading stands at both positions."""
    topo = line_topology(3)
    topo.add_switch("s4", 4)
    topo.add_link("s2", "s4")
    mon, fake = run(topo, [["s1", "s2", "s3", "s2", "s4"]], 2)
    assert fake.repeats == 2
    for res in mon.results:
        assert res.completed and res.missing == []
        row = res.readings[0]
        assert row[1] is row[3] and row[1] is not None and row[1].switch_id == 2
        assert_readings_right(topo, res)


def test_switch_ids_are_checked() -> None:
    topo = line_topology(3)
    topo.add_switch("big", 300)
    topo.add_link("s3", "big")
    clock = VirtualClock()
    with pytest.raises(GpintConfigError, match="'big' has switch_id 300"):
        Monitor(topo, [["s3", "big"]], clock, lambda s, f: None)
    with pytest.raises(GpintConfigError, match="share switch_id 7"):
        Monitor(topo, [["s1", "s2"]], clock, lambda s, f: None,
                switch_ids={"s1": 7, "s2": 7})
    mon = Monitor(topo, [["s3", "big"]], clock, lambda s, f: None,
                  switch_ids={"s3": 3, "big": 44})
    assert mon.ids == [(3, 44)]


# ------------------------------------------------------------ in flight


def test_at_most_12_paths_in_flight() -> None:
    topo = line_topology(31)
    paths = [[f"s{i}", f"s{i + 1}"] for i in range(1, 31)]
    mon, fake = run(topo, paths, 2)
    assert [r.peak_in_flight for r in mon.results] == [MAX_IN_FLIGHT] * 2
    assert fake.peak_outstanding == MAX_IN_FLIGHT
    assert all(r.completed and r.probes_sent == 30 for r in mon.results)


def test_in_flight_limit_holds_under_loss_and_recovery() -> None:
    topo = line_topology(31)
    paths = [[f"s{i}", f"s{i + 1}", f"s{i + 2}"] for i in range(1, 30)]
    clock = VirtualClock()
    fake = FakeNet(topo, clock, loss=0.2, seed=7)
    peak = 0

    def send(switch: str, frame: bytes) -> None:
        nonlocal peak
        peak = max(peak, mon.in_flight)
        fake.send_frame(switch, frame)

    mon = Monitor(topo, paths, clock, send, max_in_flight=5)
    fake.attach(mon.on_frame)
    mon.start(sessions=3)
    clock.run(stop=lambda: not mon.running)
    assert peak == 5 and fake.peak_outstanding <= 5
    assert all(r.completed for r in mon.results)
    assert sum(r.recovery_sent for r in mon.results) > 0


# ------------------------------------------------------ loss and recovery


def test_dead_link_completes_through_recovery() -> None:
    topo = grid_topology(3, 3)
    dead = one_link("g0_2", "g1_2")
    mon, fake = run(topo, GRID_PATHS, 3, net={"dead_links": [dead]})
    for res in mon.results:
        assert res.completed and res.missing == []
        assert res.status == {link("g0_2", "g1_2"): UNAVAILABLE}
        assert (res.recovery_sent, res.notices, res.probes_sent) == (1, 1, 3)
        assert PAPER.t_f < res.latency < PAPER.t_f + PAPER.t_ro + 0.01
        assert_readings_right(topo, res)
    assert fake.dropped == 3


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_20_percent_loss_every_session_completes(seed: int) -> None:
    topo = grid_topology(3, 3)
    mon, fake = run(topo, GRID_PATHS, 40, net={"loss": 0.2, "seed": seed})
    assert len(mon.results) == 40
    for res in mon.results:
        assert res.completed and res.failed_probes == 0
        assert_readings_right(topo, res)
        # Monitor links do not lose: only links can be deduced, no switch.
        assert all(isinstance(c, tuple) for c in res.status)
    assert sum(r.recovery_sent for r in mon.results) > 10
    assert fake.dropped > 0 and mon.stats.malformed_total == 0


def test_without_recovery_failed_sessions_match_the_loss() -> None:
    """A session fails when any probe loses any of its hops:
    1 - prod over paths of (1 - p)^(links on the path)."""
    p, n = 0.1, 400
    topo = grid_topology(3, 3)
    mon, _ = run(topo, GRID_PATHS, n, recovery=None, net={"loss": p, "seed": 3})
    assert len(mon.results) == n
    expect = 1 - math.prod((1 - p) ** (len(path) - 1) for path in GRID_PATHS)
    failed = sum(not r.completed for r in mon.results)
    lo, hi = binomial_99(n, expect)
    assert lo <= failed <= hi, (failed, n * expect, (lo, hi))
    lost = sum(r.failed_probes for r in mon.results)
    assert all(r.recovery_sent == 0 and r.status == {} for r in mon.results)
    assert failed <= lost <= 2 * failed


def test_session_timeout_fails_a_session() -> None:
    topo = line_topology(3)
    mon, _ = run(topo, [["s1", "s2", "s3"]], 1, session_timeout_s=1.0,
                 net={"dead_links": [one_link("s2", "s3")]})
    (res,) = mon.results
    assert not res.completed and res.failed_probes == 1
    assert res.end == pytest.approx(1.0)


# --------------------------------------------------------------- receiver


def test_receiver_counts_what_it_cannot_use() -> None:
    topo = line_topology(3)
    clock = VirtualClock()
    fake = FakeNet(topo, clock)
    mon = Monitor(topo, [["s1", "s2", "s3"]], clock, fake.send_frame)
    fake.attach(mon.on_frame)
    mon.start(sessions=1)
    good = encode(Probe(KIND_FEEDBACK, 0))
    bad_dscp = good[:15] + bytes([0x18 << 2]) + good[16:]
    junk = [
        b"",  # short
        bad_dscp,  # the checksum no longer matches
        encode(Probe(KIND_PROBE, 0, 0, [SrEntry(1)], [Dlv(1, 0, 0)], [])),  # SR left
        encode(Probe(KIND_NOTICE, 0, 0, [], [Dlv(1, 0, 0)] * 4, [])),  # 4 DLVs, 3 switches
        encode(Probe(KIND_PROBE, 77, 0, [], [Dlv(1, 0, 0)], [])),  # no such probe
    ]
    for frame in junk:
        mon.on_frame(frame, 0.0)
    assert mon.stats.malformed == {"short": 1, "ipv4-checksum": 1, "path": 2}
    assert mon.stats.stale == 1
    clock.run(stop=lambda: not mon.running)
    (res,) = mon.results
    assert res.completed and res.missing == []
    mon.on_frame(encode(Probe(KIND_PROBE, 0, 0, [], [Dlv(1, 0, 0)] * 3, [])), clock.now())
    assert mon.stats.stale == 2  # its session is over


def test_without_recovery_feedback_and_notices_are_ignored() -> None:
    topo = line_topology(3)
    clock = VirtualClock()
    fake = FakeNet(topo, clock, recovery=False)
    mon = Monitor(topo, [["s1", "s2", "s3"]], clock, fake.send_frame, recovery=None)
    fake.attach(mon.on_frame)
    mon.start(sessions=1)
    mon.on_frames([(encode(Probe(KIND_FEEDBACK, 0)), 0.0),
                   (encode(Probe(KIND_NOTICE, 0, 0, [SrEntry(1)], [Dlv(1, 0, 0), Dlv(2, 0, 0)],
                                 [])), 0.0)])
    clock.run(stop=lambda: not mon.running)
    assert mon.stats.ignored == 2
    (res,) = mon.results
    assert res.completed and (res.feedbacks, res.notices) == (1, 1)


@pytest.mark.parametrize("kwargs", [
    {"max_in_flight": 0}, {"request_type": 2}, {"probe_timeout_s": 0.0},
    {"session_timeout_s": -1.0}, {"gap_s": -0.1},
])
def test_monitor_settings_are_checked(kwargs: dict[str, object]) -> None:
    with pytest.raises(GpintConfigError):
        Monitor(line_topology(2), [["s1", "s2"]], VirtualClock(), lambda s, f: None,
                **kwargs)  # type: ignore[arg-type]
