"""The INT database (Algorithm 4) and the aging store in virtual time."""

from __future__ import annotations

import pytest

from dataplane.targets.sim.events import Simulator
from sinks.intlabel.aging import MemoryAgingStore
from sinks.intlabel.database import IntRecord, MemoryIntDatabase
from sinks.intlabel.report import IntItem


def item(switch: int, port: int, label_time: int, latency: int = 0) -> IntItem:
    return IntItem(switch, 1, port, label_time - 3, label_time, latency, 2, 1, False)


# --- Algorithm 4 --------------------------------------------------------------------------


def test_newest_label_time_wins_whatever_the_arrival_order() -> None:
    db = MemoryIntDatabase()
    assert db.update(item(1, 2, 1000, latency=10), 0.010) is True   # new key
    assert db.update(item(1, 2, 3000, latency=30), 0.011) is True   # newer
    assert db.update(item(1, 2, 2000, latency=20), 0.012) is False  # late arrival, older
    assert db.update(item(1, 2, 3000, latency=99), 0.013) is False  # same time: not newer
    assert db.get((1, 2)) == IntRecord(3000, 30, 2, 1, 1, 0.011)
    # Another port of the same switch is another key.
    assert db.update(item(1, 3, 500), 0.014) is True
    assert sorted(db.keys()) == [(1, 2), (1, 3)]
    assert (db.arrived, db.accepted) == (5, 3)
    assert list(db.arrivals()) == [(0.010, (1, 2), True), (0.011, (1, 2), True),
                                   (0.012, (1, 2), False), (0.013, (1, 2), False),
                                   (0.014, (1, 3), True)]


def test_listeners_see_accepted_updates_only() -> None:
    db = MemoryIntDatabase(keep_log=False)
    seen: list[tuple[tuple[int, int], int]] = []
    db.on_update(lambda key, rec: seen.append((key, rec.label_time)))
    for t in (5, 4, 7, 7, 6):
        db.update(item(2, 1, t), 0.0)
    assert seen == [((2, 1), 5), ((2, 1), 7)]
    assert list(db.arrivals()) == []


# --- aging store ---------------------------------------------------------------------------


@pytest.fixture()
def sim() -> Simulator:
    return Simulator()


def expiries(store: MemoryAgingStore, sim: Simulator) -> list[tuple[object, float]]:
    out: list[tuple[object, float]] = []
    store.on_expire(lambda key: out.append((key, sim.now())))
    return out


def test_key_expires_after_its_ttl(sim: Simulator) -> None:
    store = MemoryAgingStore(sim)
    log = expiries(store, sim)
    store.set("a", 0.1)
    sim.run(99_999_999)
    assert store.exists("a") and log == []
    assert store.ttl("a") == pytest.approx(1e-9)
    sim.run()
    assert log == [("a", 0.1)] and not store.exists("a") and store.ttl("a") is None


def test_refresh_moves_the_deadline_with_one_timer(sim: Simulator) -> None:
    store = MemoryAgingStore(sim)
    log = expiries(store, sim)
    store.set("a", 0.1)
    for i in range(1, 10):  # refreshed every 50 ms up to 0.45 s
        sim.call_at(0.05 * i, store.set, "a", 0.1)
    sim.run()
    assert log == [("a", pytest.approx(0.55))]
    # The refreshes did not schedule a timer each: one arm, re-armed per TTL.
    assert sim.events_run < 9 + 9


def test_touch_keeps_the_ttl_and_fails_on_missing_keys(sim: Simulator) -> None:
    store = MemoryAgingStore(sim)
    log = expiries(store, sim)
    assert store.touch("a") is False
    store.set("a", 0.2)
    sim.call_at(0.15, store.touch, "a")
    sim.run()
    assert log == [("a", pytest.approx(0.35))]


def test_delete_cancels_and_a_new_set_starts_afresh(sim: Simulator) -> None:
    store = MemoryAgingStore(sim)
    log = expiries(store, sim)
    store.set("a", 0.1)
    sim.call_at(0.05, store.delete, "a")
    sim.call_at(0.06, store.set, "a", 0.3)  # the old timer at 0.1 must not fire it
    store.set("b", 0.2)
    sim.call_at(0.1, store.delete, "b")
    sim.run()
    assert log == [("a", pytest.approx(0.36))]
    assert store.delete("a") is False


def test_shorter_ttl_takes_effect(sim: Simulator) -> None:
    store = MemoryAgingStore(sim)
    log = expiries(store, sim)
    store.set("a", 1.0)
    sim.call_at(0.1, store.set, "a", 0.05)
    sim.run()
    assert log == [("a", pytest.approx(0.15))]


def test_expiry_callback_may_set_keys_again(sim: Simulator) -> None:
    store = MemoryAgingStore(sim)
    log = expiries(store, sim)
    count = [0]

    def again(key: object) -> None:
        count[0] += 1
        if count[0] < 3:
            store.set(key, 0.1)

    store.on_expire(again)
    store.set("w", 0.1)
    sim.run()
    assert [t for _, t in log] == [pytest.approx(0.1), pytest.approx(0.2), pytest.approx(0.3)]


def test_sweep_is_the_backstop_for_missed_notifications() -> None:
    class FrozenTimers:
        """A clock whose timers never fire (notifications lost)."""

        t = 0.0

        def now(self) -> float:
            return self.t

        def call_later(self, delay_s: float, fn, *args) -> None:  # type: ignore[no-untyped-def]
            pass

    clock = FrozenTimers()
    store = MemoryAgingStore(clock)
    got: list[object] = []
    store.on_expire(got.append)
    store.set("late", 0.2)
    store.set("early", 0.1)
    store.set("live", 1.0)
    assert store.deadlines() == {"late": 0.2, "early": 0.1, "live": 1.0}
    clock.t = 0.5
    assert not store.exists("early")  # past its deadline even before the sweep
    assert store.sweep() == ["early", "late"]
    assert got == ["early", "late"] and list(store.deadlines()) == ["live"]


def test_ttl_must_be_positive(sim: Simulator) -> None:
    with pytest.raises(ValueError):
        MemoryAgingStore(sim).set("a", 0)
