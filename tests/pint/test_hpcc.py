"""HPCC's window law against a reference written here from the HPCC
paper's Algorithm 1 (MeasureInflight, ComputeWind, NewAck), line by line,
on random ACK sequences; and its behaviour on cases worked out by hand."""

from __future__ import annotations

import random

import pytest

from common.errors import InvalidValueError
from sinks.pint.hpcc import HpccParams, HpccState, link_u, on_ack

P = HpccParams(base_rtt_s=100e-6, w_init=12_500.0, eta=0.95, max_stage=5, w_ai=40.0)


class Reference:
    """Algorithm 1 with the line-rate window as both start and ceiling."""

    def __init__(self, p: HpccParams) -> None:
        self.p = p
        self.W = self.Wc = p.w_init
        self.U = 0.0
        self.inc_stage = 0
        self.last_update_seq = -1

    def measure_inflight(self, u: float, tau: float) -> float:
        tau = min(max(tau, 0.0), self.p.base_rtt_s)
        self.U = (1 - tau / self.p.base_rtt_s) * self.U + tau / self.p.base_rtt_s * u
        return self.U

    def compute_wind(self, util: float, update_wc: bool) -> float:
        p = self.p
        if util >= p.eta or self.inc_stage >= p.max_stage:
            W = p.w_init if util == 0 else self.Wc / (util / p.eta) + p.w_ai
            if update_wc:
                self.inc_stage = 0
                self.Wc = min(W, p.w_init)
        else:
            W = self.Wc + p.w_ai
            if update_wc:
                self.inc_stage += 1
                self.Wc = min(W, p.w_init)
        return min(W, p.w_init)

    def new_ack(self, u: float, tau: float, seq: int, snd_nxt: int) -> float:
        if seq > self.last_update_seq:
            self.W = self.compute_wind(self.measure_inflight(u, tau), True)
            self.last_update_seq = snd_nxt
        else:
            self.W = self.compute_wind(self.measure_inflight(u, tau), False)
        return self.W


@pytest.mark.parametrize("seed", range(20))
def test_matches_algorithm_1_on_random_acks(seed: int) -> None:
    rng = random.Random(seed)
    p = HpccParams(rng.uniform(10e-6, 500e-6), rng.uniform(5e3, 1e6), rng.uniform(0.5, 1.0),
                   rng.randrange(0, 8), rng.uniform(0, 500))
    ref, state = Reference(p), HpccState.start(p)
    seq = 0
    for _ in range(2000):
        u = 0.0 if rng.random() < 0.2 else rng.uniform(0.0, 3.0)
        tau = rng.uniform(-1e-6, 2 * p.base_rtt_s)
        snd_nxt = seq + rng.randrange(1, 30)
        assert on_ack(state, u, tau, seq, snd_nxt, p) == pytest.approx(
            ref.new_ack(u, tau, seq, snd_nxt), rel=1e-12)
        assert state.reference == pytest.approx(ref.Wc, rel=1e-12)
        assert state.stage == ref.inc_stage
        seq += rng.randrange(1, 4)


def test_congested_link_cuts_window_by_eta_over_u() -> None:
    state = HpccState.start(P)
    # tau = T: the sample replaces U; U = 1.9 -> W = W_init * 0.95 / 1.9 + W_AI.
    w = on_ack(state, 1.9, P.base_rtt_s, 0, 10, P)
    assert w == pytest.approx(P.w_init / 2 + P.w_ai)
    assert state.reference == w and state.stage == 0


def test_additive_increase_for_max_stage_rounds_then_multiplicative() -> None:
    state = HpccState.start(P)
    on_ack(state, 1.9, P.base_rtt_s, 0, 10, P)  # reference down to W_init/2 + W_AI
    base = state.reference
    seq = 11  # the first ACK past what was sent at the last update (10)
    for stage in range(1, P.max_stage + 1):
        # Half the link (U = 0.5 < eta): one W_AI per round trip.
        w = on_ack(state, 0.5, P.base_rtt_s, seq, seq + 9, P)
        assert w == pytest.approx(base + stage * P.w_ai)
        assert state.stage == stage
        # ACKs within the round set W from the reference but leave it and the
        # stage (in the last stage they already take the multiplicative step).
        assert state.reference == pytest.approx(w)
        if stage < P.max_stage:
            assert on_ack(state, 0.5, P.base_rtt_s, seq + 9, seq + 9, P) == pytest.approx(
                w + P.w_ai)
        assert state.reference == pytest.approx(w) and state.stage == stage
        seq += 10
    # maxStage reached: the multiplicative step, W = Wc * eta / U + W_AI.
    reference = state.reference
    w = on_ack(state, 0.5, P.base_rtt_s, seq, seq + 9, P)
    assert w == pytest.approx(min(reference * P.eta / 0.5 + P.w_ai, P.w_init))
    assert state.stage == 0


def test_tau_weights_the_new_sample() -> None:
    state = HpccState.start(P)
    on_ack(state, 2.0, P.base_rtt_s, 0, 1, P)
    on_ack(state, 0.0, P.base_rtt_s / 4, 1, 2, P)
    assert state.u == pytest.approx(0.75 * 2.0)
    on_ack(state, 1.0, 10 * P.base_rtt_s, 2, 3, P)  # tau is capped at T
    assert state.u == pytest.approx(1.0)


def test_window_never_exceeds_line_rate_and_idle_path_returns_to_it() -> None:
    state = HpccState.start(P)
    on_ack(state, 1.9, P.base_rtt_s, 0, 10, P)
    seq = 11
    for _ in range(P.max_stage + 1):
        w = on_ack(state, 0.0, P.base_rtt_s, seq, seq + 9, P)
        assert w <= P.w_init
        seq += 10
    assert w == P.w_init


def test_link_u_is_qlen_over_bt_plus_rate_fraction() -> None:
    # 50 KB queued at 10 Gb/s drains in 40 us: 0.4 of T = 100 us, plus a full link.
    assert link_u(50_000 * 8 / 10e9, 1.0, P) == pytest.approx(1.4)
    assert link_u(0.0, 0.0, P) == 0.0


@pytest.mark.parametrize("kwargs, match", [
    ({"base_rtt_s": 0.0, "w_init": 1.0}, "positive base RTT"),
    ({"base_rtt_s": 1e-4, "w_init": 1.0, "eta": 1.5}, "eta=1.5"),
    ({"base_rtt_s": 1e-4, "w_init": 1.0, "w_ai": -1.0}, "must not be negative"),
])
def test_bad_parameters_are_refused(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(InvalidValueError, match=match):
        HpccParams(**kwargs)  # type: ignore[arg-type]
