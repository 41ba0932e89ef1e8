"""Algorithm 3 (Pro): S raised on a port whose labels stop arriving, within
k T, and lowered once they arrive again; section 5's flag style with the
text's k T reset and the authors' repository's 10 k T; and the
same rules checked on a full run with a lossy link."""

from __future__ import annotations

from typing import Any

import pytest

from common.clock import VirtualClock
from controller.intlabel.config import PROTOTYPE_RESTORE_FACTOR, SHIFT_TABLE
from controller.intlabel.pro import LABEL_ALL_SHIFT, ProLoop, shift_steps
from controller.p4rt.errors import P4RuntimeError
from dataplane.targets.sim.events import Simulator
from orchestration.systems.intlabel.config import RunConfig
from orchestration.systems.intlabel.run import run_intlabel
from sinks.intlabel.aging import MemoryAgingStore
from sinks.intlabel.database import MemoryIntDatabase
from sinks.intlabel.report import IntItem

T, K = 0.05, 2.0  # the paper's T = 50 ms; k T = 100 ms


class FakeShiftTable:
    """The shift table of a FakeClient: records its writes in the client's."""

    def __init__(self, client: FakeClient) -> None:
        self.client = client

    def modify(self, match, action, params=None, priority=None):  # type: ignore[no-untyped-def]
        if self.client.missing:
            self.client.missing = False
            raise P4RuntimeError("NOT_FOUND", "no such entry")
        self.client.writes.append(("modify", SHIFT_TABLE, dict(match), action, dict(params)))

    def insert(self, match, action, params=None, priority=None):  # type: ignore[no-untyped-def]
        self.client.writes.append(("insert", SHIFT_TABLE, dict(match), action, dict(params)))


class FakeClient:
    """Records P4Runtime writes; ``missing`` makes MODIFY fail as for an
    entry that does not exist."""

    def __init__(self, device_id: int, missing: bool = False) -> None:
        self.device_id = device_id
        self.missing = missing
        self.writes: list[tuple[str, str, dict[str, Any], str, dict[str, int]]] = []
        self.tables = {SHIFT_TABLE: FakeShiftTable(self)}


def feed(sim: Simulator, db: MemoryIntDatabase, switch_id: int, port: int,
         times: list[float]) -> None:
    """Labels of (switch_id, port) arriving at ``times`` (label time = arrival)."""
    for t in times:
        it = IntItem(switch_id, 1, port, 0, round(t * 1e6), 0, 0, 0, True)
        sim.call_at(t, db.update, it, t)


def grid(start: float, stop: float, step: float = 0.05) -> list[float]:
    n = round((stop - start) / step)
    return [round(start + i * step, 9) for i in range(n + 1)]


def setup(style: str = "shift", **kw: Any) -> tuple[Simulator, MemoryIntDatabase, ProLoop,
                                                    FakeClient]:
    sim = Simulator()
    db = MemoryIntDatabase()
    client = FakeClient(device_id=7)
    pro = ProLoop({"s1": client}, db, MemoryAgingStore(sim), sim, T_s=T, k=K, style=style, **kw)
    pro.start()
    return sim, db, pro, client


def test_steps_halve_the_interval_then_label_all() -> None:
    steps = shift_steps(50_000)
    assert steps[:3] == [0, 1, 2] and steps[-2:] == [15, LABEL_ALL_SHIFT]
    assert 50_000 >> 15 == 1 and 50_000 >> 16 == 0


def test_raises_within_kt_of_the_lost_labels_and_lowers_after() -> None:
    sim, db, pro, client = setup()
    feed(sim, db, 7, 2, grid(0.01, 0.51))   # labels every T, then lost ...
    feed(sim, db, 7, 2, grid(1.51, 3.0))    # ... until 1.51
    sim.run(3_000_000_000)
    changes = [(round(c.time_s, 6), c.switch, c.port, c.shift) for c in pro.changes]
    last = 0.51
    first = changes[0]
    # Not before k T without an update, and at the first check after it
    # (the loop runs every T): within k T of the first missing label.
    assert last + K * T < first[0] <= last + K * T + T
    raises = [(round(0.65 + 0.1 * i, 6), "s1", 2, i + 1) for i in range(9)]
    lowers = [(round(1.55 + 0.1 * i, 6), "s1", 2, 8 - i) for i in range(9)]
    assert changes == raises + lowers
    # Each change is one MODIFY of the port's port_shift entry.
    assert client.writes[0] == ("modify", "MyEgress.port_shift",
                                {"standard_metadata.egress_port": 2}, "MyEgress.set_shift",
                                {"s": 1})
    assert [w[4]["s"] for w in client.writes] == [c[3] for c in changes]
    assert pro.shift("s1", 2) == 0


def test_s_caps_at_label_all() -> None:
    sim, db, pro, _ = setup()
    feed(sim, db, 7, 4, [0.0])
    sim.run(5_000_000_000)
    shifts = [c.shift for c in pro.changes]
    assert shifts == shift_steps(50_000)[1:]  # one step per k T, then no more
    assert pro.shift("s1", 4) == LABEL_ALL_SHIFT


def test_explicit_ports_are_watched_from_the_start() -> None:
    sim, db, pro, _ = setup(ports=[("s1", 3)])
    feed(sim, db, 9, 1, [0.01])    # a switch Pro has no client for: ignored
    feed(sim, db, 7, 5, [0.02])    # not in the given ports: ignored
    sim.run(150_000_000)
    assert [(round(c.time_s, 6), c.port, c.shift) for c in pro.changes] == [(0.1, 3, 1)]
    assert pro.watched() == [("s1", 3)]


def test_passes_record_the_ports_read_and_the_changes_made() -> None:
    sim, db, pro, _ = setup(ports=[("s1", 3), ("s1", 4)])
    feed(sim, db, 7, 3, grid(0.01, 1.0, 0.02))  # port 3 updated throughout; 4 never
    sim.run(420_000_000)
    # Checks every T from T on; a port is read once k T has passed since its
    # last change: both from 2 T (armed at 0), port 4 then after each raise.
    got = [(round(p.start_s, 6), p.checked, p.changes) for p in pro.passes]
    assert got == [(0.05, 0, 0), (0.1, 2, 1), (0.15, 1, 0), (0.2, 2, 1), (0.25, 1, 0),
                   (0.3, 2, 1), (0.35, 1, 0), (0.4, 2, 1)]
    assert sum(p.changes for p in pro.passes) == len(pro.changes)
    assert all(p.end_s == p.start_s for p in pro.passes)  # virtual time stands still


def test_a_pass_ends_when_its_writes_are_done() -> None:
    """On a clock that moves while the pass writes (as a wall clock does,
    here each write moves it 3 ms) a pass lasts as long as its writes: what
    the live loop's period stretches by."""
    clock = VirtualClock()

    class SlowTable(FakeShiftTable):
        def modify(self, match, action, params=None, priority=None):  # type: ignore[no-untyped-def]
            clock.t += 0.003
            return super().modify(match, action, params, priority)

    client = FakeClient(device_id=7)
    client.tables = {SHIFT_TABLE: SlowTable(client)}
    db = MemoryIntDatabase()
    pro = ProLoop({"s1": client}, db, MemoryAgingStore(clock), clock, T_s=T, k=0.5,
                  ports=[("s1", 1), ("s1", 2)])
    pro.start()
    clock.advance_to(T)  # the first pass, both keys expired by then
    (p,) = pro.passes
    assert (p.checked, p.changes) == (2, 2)
    assert p.end_s - p.start_s == pytest.approx(0.006)
    assert clock.next_due() == pytest.approx(p.end_s + T)  # the next pass: T after


def test_missing_entry_falls_back_to_insert() -> None:
    sim = Simulator()
    db = MemoryIntDatabase()
    client = FakeClient(device_id=7, missing=True)
    pro = ProLoop({"s1": client}, db, MemoryAgingStore(sim), sim, T_s=T, k=K)
    pro.start()
    feed(sim, db, 7, 2, [0.0])
    sim.run(250_000_000)
    assert [w[0] for w in client.writes] == ["insert", "modify"]
    assert [c.shift for c in pro.changes] == [1, 2]


def test_flag_style_resets_at_the_kt_time_out_by_default() -> None:
    """Section 5: the aging entry is deleted after k T and Reg2 goes back to 0."""
    sim, db, pro, client = setup(style="flag")
    feed(sim, db, 7, 2, grid(0.01, 0.51))
    feed(sim, db, 7, 2, grid(1.51, 3.0))
    sim.run(3_000_000_000)
    changes = [(round(c.time_s, 6), c.shift) for c in pro.changes]
    # Expiry k T after the last label, reset k T after that.
    assert changes == [(0.61, LABEL_ALL_SHIFT), (0.71, 0)]
    assert [w[4]["s"] for w in client.writes] == [LABEL_ALL_SHIFT, 0]


def test_flag_style_prototype_restores_after_ten_timeouts() -> None:
    sim, db, pro, client = setup(style="flag", restore_factor=PROTOTYPE_RESTORE_FACTOR)
    feed(sim, db, 7, 2, grid(0.01, 0.51))
    feed(sim, db, 7, 2, grid(1.51, 3.0))
    sim.run(3_000_000_000)
    changes = [(round(c.time_s, 6), c.shift) for c in pro.changes]
    # Expiry k T after the last label; restore key of 10 k T.
    assert changes == [(0.61, LABEL_ALL_SHIFT), (1.61, 0)]
    assert [w[4]["s"] for w in client.writes] == [LABEL_ALL_SHIFT, 0]


def test_flag_style_refreshes_while_still_starved() -> None:
    sim, db, pro, _ = setup(style="flag", restore_factor=PROTOTYPE_RESTORE_FACTOR)
    feed(sim, db, 7, 2, grid(0.01, 0.51))
    feed(sim, db, 7, 2, [0.8])  # one label gets through, then silence again
    sim.run(3_000_000_000)
    # The second expiry (0.9) re-arms the restore key: back to 0 at 1.9.
    assert [(round(c.time_s, 6), c.shift) for c in pro.changes] == [
        (0.61, LABEL_ALL_SHIFT), (1.9, 0)]


def test_flag_style_with_the_kt_reset_flags_again_after_a_lone_label() -> None:
    sim, db, pro, _ = setup(style="flag")
    feed(sim, db, 7, 2, grid(0.01, 0.51))
    feed(sim, db, 7, 2, [0.8])
    sim.run(3_000_000_000)
    # Reset at 0.71; the label at 0.8 ages out at 0.9 and flags the port anew.
    assert [(round(c.time_s, 6), c.shift) for c in pro.changes] == [
        (0.61, LABEL_ALL_SHIFT), (0.71, 0), (0.9, LABEL_ALL_SHIFT), (1.0, 0)]


def test_stop_ends_adaptation() -> None:
    sim, db, pro, _ = setup()
    feed(sim, db, 7, 2, [0.0])
    sim.call_at(0.25, pro.stop)
    sim.run(2_000_000_000)
    assert [c.shift for c in pro.changes] == [1, 2]


def test_bad_parameters() -> None:
    sim = Simulator()
    with pytest.raises(ValueError):
        ProLoop({}, MemoryIntDatabase(), MemoryAgingStore(sim), sim, T_s=T, k=K, style="x")
    with pytest.raises(ValueError):
        ProLoop({}, MemoryIntDatabase(), MemoryAgingStore(sim), sim, T_s=0, k=K)


def test_lossy_link_on_the_fabric() -> None:
    """Base A + Pro with 80% loss on tor1 - leaf1 (tor1's port 3): the
    starved port is raised, lowered again once labels get through, and
    coverage is better than without Pro."""
    cfg = RunConfig(packets=2000, pro=True, lossy_links=(("tor1", "leaf1"),),
                    link_loss=0.8)
    m = run_intlabel(cfg)
    port = [(t, s) for t, sw, p, s in m.pro_changes if (sw, p) == ("tor1", 3)]
    shifts = [s for _, s in port]
    assert shifts and shifts[0] == 1
    assert any(b < a for a, b in zip(shifts, shifts[1:])), "S never lowered"
    base = run_intlabel(RunConfig(packets=2000, lossy_links=(("tor1", "leaf1"),),
                                  link_loss=0.8))
    assert m.mean_coverage > base.mean_coverage
    assert base.pro_changes == []
