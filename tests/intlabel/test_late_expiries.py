"""The aging store with late expiries (``LateExpiries``, ``expiry_lag_ms``):
the key is gone at its deadline, the notification comes a lag later, a set
or a delete in between claims it as the live Redis store does, and the
lags drawn follow the cut exponential's mean."""

from __future__ import annotations

import math
import statistics

import pytest

from common.clock import VirtualClock
from orchestration.systems.intlabel.config import EXPIRY_LAG_MAX_MS, RunConfig, RunConfigError
from orchestration.systems.intlabel.run import expiry_lag
from sinks.intlabel import LateExpiries, MemoryAgingStore


def _store(lag: float) -> tuple[VirtualClock, LateExpiries, list[tuple[float, object]]]:
    clock = VirtualClock()
    store = LateExpiries(MemoryAgingStore(clock), clock, lambda: lag)
    seen: list[tuple[float, object]] = []
    store.on_expire(lambda key: seen.append((clock.now(), key)))
    return clock, store, seen


def test_the_key_is_gone_at_its_deadline_and_its_expiry_comes_a_lag_later() -> None:
    clock, store, seen = _store(0.02)
    store.set("a", 0.1)
    clock.advance_to(0.1 + 1e-6)
    assert not store.exists("a")
    assert seen == []
    clock.advance_to(0.2)
    assert seen == [(pytest.approx(0.12), "a")]


def test_a_set_of_a_key_whose_expiry_is_on_its_way_delivers_it_first() -> None:
    clock, store, seen = _store(0.05)
    store.set("a", 0.1)
    clock.advance_to(0.11)
    store.set("a", 0.1)          # claims the overdue expiry now, then sets anew
    assert seen == [(pytest.approx(0.11), "a")]
    clock.advance_to(0.15)       # the claimed expiry's own delivery does nothing
    assert seen == [(pytest.approx(0.11), "a")]
    assert store.exists("a")
    clock.advance_to(0.3)        # the new key's deadline 0.21, delivered at 0.26
    assert [t for t, _ in seen] == pytest.approx([0.11, 0.26])


def test_a_delete_drops_an_expiry_on_its_way_and_a_sweep_delivers_it_now() -> None:
    clock, store, seen = _store(0.05)
    store.set("a", 0.1)
    store.set("b", 0.1)
    clock.advance_to(0.11)
    assert store.delete("a")
    assert store.sweep() == ["b"]
    assert seen == [(pytest.approx(0.11), "b")]
    clock.advance_to(0.3)
    assert seen == [(pytest.approx(0.11), "b")]


def test_lags_follow_the_cut_exponential() -> None:
    mean, cap = 0.0167, EXPIRY_LAG_MAX_MS * 1e-3
    draw = expiry_lag(mean, seed=7)
    lags = [draw() for _ in range(20_000)]
    assert max(lags) <= cap
    expected = mean * (1 - math.exp(-cap / mean))   # E[min(X, cap)], X exponential
    sd = mean  # an exponential's; min(X, cap)'s is smaller
    assert abs(statistics.fmean(lags) - expected) < 4 * sd / math.sqrt(len(lags))
    assert expiry_lag(mean, seed=7)() == lags[0]    # one stream per seed


def test_the_expiry_lag_defaults_to_the_measured_one_and_is_never_negative() -> None:
    from orchestration.systems.intlabel.config import EXPIRY_LAG_MS

    assert RunConfig().expiry_lag_mean_s() == pytest.approx(EXPIRY_LAG_MS * 1e-3)
    assert RunConfig(expiry_lag_ms=0.0).expiry_lag_mean_s() == 0.0
    with pytest.raises(RunConfigError, match="expiry_lag_ms"):
        RunConfig(expiry_lag_ms=-1.0)


def test_a_pro_flag_run_holds_its_flags_longer_with_the_lag() -> None:
    """With restore at k T the flag lasts exactly k T without a lag, and k T
    plus the restore key's lag (a re-arm only lengthens it) with one."""
    from orchestration.network import RunEnv
    from orchestration.systems.intlabel.run import run_intlabel

    def durations(lag_ms: float) -> list[float]:
        cfg = RunConfig(packets=600, T_ms=100.0, Ti_ms=100.0, k=1.0, mode="A", pro=True,
                        pro_style="flag", restore_factor=1.0, expiry_lag_ms=lag_ms)
        on: dict[tuple[str, int], float] = {}
        out = []
        for t, sw, port, s in run_intlabel(cfg, RunEnv(target="sim", seed=1)).pro_changes:
            if s:
                on[(sw, port)] = t
            elif (sw, port) in on:
                out.append(t - on.pop((sw, port)))
        return out

    exact, late = durations(0.0), durations(16.7)
    assert exact and late
    assert all(d == pytest.approx(0.1, abs=1e-6) for d in exact)
    assert min(late) >= 0.1 - 1e-6
    assert statistics.fmean(late) > 0.1 + 0.003
