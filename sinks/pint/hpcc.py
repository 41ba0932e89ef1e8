"""HPCC's window law (Li et al., SIGCOMM 2019, Algorithm 1), fed either by
full INT or by PINT's per-packet maximum.

Per link, HPCC's normalised inflight bytes are ``u = qlen/(B*T) + txRate/B``;
the sender takes the path's largest, smooths it over time with weight
``tau/T`` (``tau``: how much time the new sample covers), and sets the window
to ``Wc / (U/eta) + W_AI`` when ``U >= eta`` or after ``max_stage`` rounds of
additive increase, else to ``Wc + W_AI``. The reference window ``Wc`` moves
once per round trip (the first ACK of data sent after the last move); every
ACK recomputes ``W`` from it. Nothing here knows where ``u`` came from: the
sender feeds it (``link_u``) and keeps one ``HpccState`` per flow.
"""

from __future__ import annotations

from dataclasses import dataclass

from common.errors import InvalidValueError

__all__ = ["HpccParams", "HpccState", "link_u", "on_ack"]


@dataclass(frozen=True)
class HpccParams:
    """``base_rtt_s`` is HPCC's ``T``; ``w_init`` (bytes) is the line-rate
    window ``B*T`` every flow starts at and never exceeds."""

    base_rtt_s: float
    w_init: float
    eta: float = 0.95
    max_stage: int = 5
    w_ai: float = 80.0

    def __post_init__(self) -> None:
        if self.base_rtt_s <= 0 or self.w_init <= 0:
            raise InvalidValueError("HPCC needs a positive base RTT and initial window")
        if not 0 < self.eta <= 1:
            raise InvalidValueError(f"target utilization eta={self.eta} must be in (0, 1]")
        if self.max_stage < 0 or self.w_ai < 0:
            raise InvalidValueError("max_stage and W_AI must not be negative")


@dataclass
class HpccState:
    """One flow's controller: current and reference windows, the smoothed
    utilization, the additive-increase stage, and the sequence number past
    which the next ACK moves the reference window."""

    window: float
    reference: float
    u: float = 0.0
    stage: int = 0
    last_update_seq: int = -1

    @classmethod
    def start(cls, params: HpccParams) -> HpccState:
        return cls(params.w_init, params.w_init)


def link_u(queue_delay_s: float, tx_fraction: float, params: HpccParams) -> float:
    """One link's ``qlen/(B*T) + txRate/B`` from its queueing delay (``qlen/B``)
    and its transmitted fraction of line rate (``txRate/B``)."""
    return queue_delay_s / params.base_rtt_s + tx_fraction


def _window(state: HpccState, u: float, update_reference: bool, p: HpccParams) -> float:
    if u >= p.eta or state.stage >= p.max_stage:
        # U == 0 (nothing queued, no rate known) asks for an unbounded window:
        # the line-rate window bounds it, as HPCC bounds the rate by line rate.
        w = p.w_init if u <= 0 else state.reference / (u / p.eta) + p.w_ai
        if update_reference:
            state.stage = 0
            state.reference = min(w, p.w_init)
    else:
        w = state.reference + p.w_ai
        if update_reference:
            state.stage += 1
            state.reference = min(w, p.w_init)
    return min(w, p.w_init)


def on_ack(state: HpccState, u_sample: float, tau_s: float, ack_seq: int, next_seq: int,
           p: HpccParams) -> float:
    """The new window after an ACK whose path's largest link utilization is
    ``u_sample`` over ``tau_s``. ``ack_seq`` is cumulative, as HPCC's (the
    sequence number just past the data acknowledged), ``next_seq`` the next
    one the sender will send: an ACK past the ``next_seq`` of the last
    reference update acknowledges data sent after it, a round trip later."""
    w = min(max(tau_s, 0.0), p.base_rtt_s) / p.base_rtt_s
    state.u = (1.0 - w) * state.u + w * u_sample
    update = ack_seq > state.last_update_seq
    state.window = _window(state, state.u, update, p)
    if update:
        state.last_update_seq = next_seq
    return state.window
