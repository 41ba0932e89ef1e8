"""The data recovery module line by line (Algorithms 1 and 2 as
controller/gpint/recovery.py reads them), then on the reference network:
r_a exceeded marks a switch unavailable, and Fig. 7's delayed feedback
turns an unavailable link into a congested one."""

from __future__ import annotations

import pytest
from gpint_fakenet import FakeNet, VirtualClock, line_topology, one_link

from controller.gpint.monitor import Monitor
from controller.gpint.probe import KIND_FEEDBACK, KIND_NOTICE, KIND_PROBE, Dlv, Probe, SrEntry
from controller.gpint.recovery import (
    CONGESTED,
    FINE_TUNED,
    MONITOR,
    UNAVAILABLE,
    GpintConfigError,
    ProbeRecord,
    Recovery,
    RecoveryParams,
    dlv_positions,
    link,
)

PATH = ("a", "b", "c", "d", "e")
# t_ro a power of two: check times are exact, so the timeline below is too.
PARAMS = RecoveryParams(t_f=1.0, r_a=2, t_ro=0.125, deadline_s=2.0)


class Rig:
    """A Recovery on a virtual clock whose sends are recorded."""

    def __init__(self, params: RecoveryParams = PARAMS) -> None:
        self.clock = VirtualClock()
        self.sent: list[tuple[float, int, int]] = []
        self.finished: list[int] = []
        self.rec = Recovery(self.clock, self._send, params,
                            on_finish=lambda r: self.finished.append(r.id))
        self.rec.start()

    def _send(self, record: ProbeRecord, index: int) -> None:
        self.sent.append((self.clock.now(), record.id, index))

    def add(self, rid: int = 1, path: tuple[str, ...] = PATH) -> ProbeRecord:
        r = ProbeRecord(rid, path)
        self.rec.add(r)
        return r

    def at(self, t: float, probe: Probe | None = None) -> None:
        """Run to ``t``; then hand ``probe`` in."""
        self.clock.run(until=t)
        if probe is not None:
            self.rec.on_probe(probe)

    def sends(self, index: int | None = None) -> list[float]:
        return [t for t, _, i in self.sent if index is None or i == index]


def feedback(rid: int = 1) -> Probe:
    return Probe(KIND_FEEDBACK, rid)


def delivered(first: int, rid: int = 1, n: int = len(PATH)) -> Probe:
    """A 0x17 that started at path position ``first``."""
    return Probe(KIND_PROBE, rid, 0, [], [Dlv(j, 0, 0) for j in range(first, n)], [])


def notice(last: int, first: int = 0, rid: int = 1, n: int = len(PATH)) -> Probe:
    """A 0x21 from the switch at position ``last`` (started at ``first``)."""
    return Probe(KIND_NOTICE, rid, 0, [SrEntry(1)] * (n - last - 1),
                 [Dlv(j, 0, 0) for j in range(first, last + 1)], [])


def test_delivered_probe_finishes_once() -> None:
    rig = Rig()
    r = rig.add()
    rig.at(0.01, feedback())
    assert 1 not in rig.rec.F and 1 in rig.rec.Q  # lines 19, 25-26
    rig.at(0.02, delivered(0))
    rig.at(0.03, delivered(0))
    rig.at(10.0)
    assert r.finished and rig.finished == [1]
    assert rig.sends() == [0.0] and rig.rec.recovery_sent == 0
    assert not rig.rec.Q and not rig.rec.F
    assert rig.rec.A.snapshot() == {}


def test_no_feedback_retries_then_skips_the_switch() -> None:
    """Lines 5-12 and Algorithm 2 with r_a = 2: attempts count once per
    timeout (line 6 keeps a queued probe from counting again), the first
    switch gets r_a + 2 sends, then A names it and the index moves on."""
    rig = Rig()
    r = rig.add()
    rig.at(1.05)
    assert r.attempts == 0 and 1 not in rig.rec.Q
    rig.at(1.95)  # timed out at 1.125, waiting in Q for its deadline (2.0)
    assert r.attempts == 1 and 1 in rig.rec.Q and rig.sends() == [0.0]
    rig.at(7.05)
    assert rig.sends(0) == [0.0, 2.0, 4.0, 6.0]
    assert r.attempts == 3 and rig.rec.A.status("a") is None
    rig.at(7.15)  # the timeout at 7.125 finds attempts 3 > r_a
    assert rig.rec.A.status("a") == UNAVAILABLE
    assert (r.index, r.attempts) == (1, 1)  # line 10 cleared them, line 12 counted one
    rig.at(8.05)
    assert rig.sent[-1][2] == 1 and rig.sends(1) == [8.0]
    assert rig.rec.recovery_sent == 4
    # The next switch is given up after r_a + 1 recovery probes of its own.
    rig.at(14.15)
    assert rig.rec.A.status("b") == UNAVAILABLE
    assert len(rig.sends(1)) == PARAMS.r_a + 1 and r.index == 2


def test_feedback_then_resend_at_deadline() -> None:
    """Line 25: a probe whose measurements never come is resent from the
    same switch once its deadline has passed; attempts are untouched."""
    rig = Rig()
    r = rig.add()
    rig.at(0.01, feedback())
    rig.at(1.95)
    assert rig.sends() == [0.0]
    rig.at(2.05)
    assert rig.sends(0) == [0.0, 2.0] and r.attempts == 0
    assert rig.rec.recovery_sent == 1


def test_notice_moves_the_index_and_names_the_link() -> None:
    rig = Rig()
    r = rig.add()
    rig.at(0.01, feedback())
    rig.at(1.03, notice(last=2))  # switch c's copy saw no feedback from d
    assert (r.index, r.attempts) == (3, 0)
    assert rig.rec.A.status(link("c", "d")) == UNAVAILABLE
    rig.at(1.15)  # resent from d at the next check, not at the old deadline
    assert rig.sent[-1] == (1.125, 1, 3)
    rig.at(1.2, delivered(first=3))
    assert r.finished and rig.finished == [1]
    # The recovery probe started after c-d: no evidence about that link.
    assert rig.rec.A.status(link("c", "d")) == UNAVAILABLE
    assert rig.rec.A.status("d") is None


def test_notice_skips_switches_a_holds_unavailable() -> None:
    rig = Rig()
    r = rig.add()
    rig.rec.A.insert_unavailable("d", 0.0, 99)
    rig.at(1.03, notice(last=2))
    assert r.index == 4


def test_notice_from_the_last_switch_finishes() -> None:
    rig = Rig()
    r = rig.add()
    rig.at(1.5, notice(last=4))
    assert r.finished and r.index == 5 and rig.finished == [1]
    assert rig.rec.A.status(link("e", MONITOR)) == UNAVAILABLE
    rig.at(10.0)
    assert rig.sends() == [0.0]


def test_stale_notice_does_not_resend_early() -> None:
    rig = Rig()
    r = rig.add()
    rig.at(1.03, notice(last=2))
    rig.at(1.15)
    assert r.index == 3 and len(rig.sends()) == 2
    rig.at(1.2, notice(last=1))  # an older instance, overtaken
    assert r.index == 3
    rig.at(3.05)
    assert len(rig.sends()) == 2  # waits for the resend's deadline (3.125)
    rig.at(3.15)
    assert len(rig.sends()) == 3 and rig.sent[-1][2] == 3


@pytest.mark.parametrize("notice_first", [True, False])
def test_probe_through_the_link_makes_it_congested(notice_first: bool) -> None:
    """Fig. 7: c's notice names c-d, but the first probe still completes
    the path, so c-d is congested, not unavailable (either order)."""
    rig = Rig()
    r = rig.add()
    events = [(1.03, notice(last=2)), (1.04, delivered(first=0))]
    if not notice_first:
        events.reverse()
    for t, probe in events:
        rig.at(t, probe)
    assert r.finished
    assert rig.rec.A.status(link("c", "d")) == CONGESTED
    if notice_first:
        assert [e.status for e in rig.rec.A.events] == [UNAVAILABLE, CONGESTED]
    else:
        assert [e.status for e in rig.rec.A.events] == [CONGESTED]


def test_feedback_clears_an_unavailable_switch() -> None:
    rig = Rig()
    rig.add()
    rig.rec.A.insert_unavailable("a", 0.0, 1)
    rig.at(0.5, feedback())
    assert rig.rec.A.status("a") == CONGESTED


def test_queue_goes_by_initiation_time() -> None:
    rig = Rig(RecoveryParams(t_f=1.0, r_a=2, t_ro=5.0, deadline_s=2.0))
    rig.add(rid=9)
    rig.at(0.5)
    rig.add(rid=3)
    rig.at(5.0)
    assert [rid for _, rid, _ in rig.sent] == [9, 3, 9, 3]


def test_unknown_packets_change_nothing() -> None:
    rig = Rig()
    r = rig.add()
    for probe in (feedback(rid=2), delivered(0, rid=2), notice(last=7, n=9),
                  Probe(KIND_PROBE, 1, 0, [SrEntry(1)], [Dlv(0, 0, 0)], []),
                  delivered(0, n=7)):
        rig.at(0.5, probe)
    assert rig.rec.unknown == 5
    assert 1 in rig.rec.F and not r.finished and rig.rec.A.snapshot() == {}


def test_dlv_positions_follow_switch_ids() -> None:
    r = ProbeRecord(1, ("a", "b", "c", "b", "d"), ids=(1, 2, 3, 2, 4))
    ids = [Dlv(i, 0, 0) for i in (1, 2, 3, 4)]
    # b is measured at its first visit only: 4 DLVs over 5 hops.
    assert dlv_positions(r, Probe(KIND_PROBE, 1, 0, [], ids, [])) == [0, 1, 2, 4]
    # A recovery probe from c through switches that measured before: only d.
    assert dlv_positions(r, Probe(KIND_PROBE, 1, 0, [], ids[3:], [])) == [4]
    # A notice from position 2 (two entries left) with a, b, c.
    assert dlv_positions(r, Probe(KIND_NOTICE, 1, 0, [SrEntry(1)] * 2, ids[:3], [])) == [0, 1, 2]
    # An id after the sender, an unknown id, more entries left than hops.
    assert dlv_positions(r, Probe(KIND_NOTICE, 1, 0, [SrEntry(1)] * 2, ids[3:], [])) is None
    assert dlv_positions(r, Probe(KIND_PROBE, 1, 0, [], [Dlv(9, 0, 0)], [])) is None
    assert dlv_positions(r, Probe(KIND_PROBE, 1, 0, [SrEntry(1)] * 5, [], [])) is None
    # Without ids: consecutive switches ending at the sender.
    bare = ProbeRecord(1, r.path)
    assert dlv_positions(bare, Probe(KIND_PROBE, 1, 0, [], ids[:2], [])) == [3, 4]


def test_recovery_probe_of_repeats_is_evidence_from_the_sender() -> None:
    """A 0x17 without DLVs (every switch had measured the request) still
    shows the last switch and its monitor link working."""
    rig = Rig()
    r = rig.add()
    r.ids = (1, 2, 3, 4, 5)
    rig.at(0.5, Probe(KIND_PROBE, 1, 0, [], [], []))
    assert r.finished
    A = rig.rec.A
    assert A.insert_unavailable(link("e", MONITOR), 0.6, 1) == CONGESTED
    assert A.insert_unavailable("e", 0.6, 1) == CONGESTED
    assert A.insert_unavailable("d", 0.6, 1) == UNAVAILABLE


def test_params_are_checked() -> None:
    assert (FINE_TUNED.t_f, FINE_TUNED.r_a, FINE_TUNED.deadline) == (0.4, 2, 0.8)
    for bad in ({"t_f": 0}, {"r_a": -1}, {"t_ro": 0}, {"deadline_s": -1.0}):
        with pytest.raises(GpintConfigError):
            RecoveryParams(**bad)  # type: ignore[arg-type]


# ------------------------------------------------------ reference network


def run_line(paths: list[list[str]] | None = None, n: int = 5,
             **net: object) -> tuple[Monitor, FakeNet]:
    topo = line_topology(n)
    clock = VirtualClock()
    fake = FakeNet(topo, clock, t_f=FINE_TUNED.t_f, **net)  # type: ignore[arg-type]
    mon = Monitor(topo, paths or [["s1", "s2", "s3", "s4", "s5"]], clock, fake.send_frame,
                  recovery=FINE_TUNED, mea_ranges={s: (0, 2) for s in topo.switches})
    fake.attach(mon.on_frame)
    mon.start(sessions=1)
    clock.run(until=300.0, stop=lambda: not mon.running)
    return mon, fake


def test_dead_first_switch_exceeds_r_a() -> None:
    mon, fake = run_line(dead_switches=["s1"])
    (res,) = mon.results
    assert res.completed
    assert res.status["s1"] == UNAVAILABLE
    assert fake.sent_to[("s1", 0)] == FINE_TUNED.r_a + 2
    assert res.missing == [(0, 0, "s1")]
    assert [r.values for r in res.readings[0][1:]] == [  # type: ignore[union-attr]
        (d * 1000, d * 1000 + 1) for d in (2, 3, 4, 5)]


def test_dead_middle_switch_exceeds_r_a() -> None:
    """s2's notice names s2-s3; the probes sent to s3 itself go unanswered
    until r_a is exceeded; then s3 is unavailable and s4 carries on."""
    mon, fake = run_line(dead_switches=["s3"])
    (res,) = mon.results
    assert res.completed
    assert res.status == {link("s2", "s3"): UNAVAILABLE, "s3": UNAVAILABLE}
    assert fake.sent_to[("s3", 0)] == FINE_TUNED.r_a + 2
    assert fake.sent_to[("s4", 0)] == 1
    assert res.missing == [(0, 2, "s3")]


def test_slow_link_is_congestion() -> None:
    """Fig. 7: s2-s3 takes longer than t_f, so s2 sends its notice and the
    module resends from s3, but the first probe still completes the path.
    (A second path, on a dead switch, keeps the session open meanwhile.)"""
    mon, _ = run_line([["s1", "s2", "s3", "s4", "s5"], ["s6"]], n=6,
                      slow_links=[one_link("s2", "s3")], slow_s=1.0, dead_switches=["s6"])
    (res,) = mon.results
    assert res.completed and res.missing == [(1, 0, "s6")]
    assert res.status == {link("s2", "s3"): CONGESTED, "s6": UNAVAILABLE}
    assert [(e.component, e.status) for e in res.status_events[:2]] == [
        (link("s2", "s3"), UNAVAILABLE), (link("s2", "s3"), CONGESTED)]
    assert res.notices == 1
