"""The data recovery module (paper section IV-B/IV-C, Algorithms 1 and 2).

State, with the paper's names:

- ``P`` (P_INT): a ``ProbeRecord`` per INT path: id, ``init``, ``index``,
  ``path``, ``deadline``, ``attempts``, ``finished``;
- ``F``: the probes sent whose feedback (0x19) is pending;
- ``Q``: the recovery queue, processed in order of initiation time;
- ``A``: the ``StatusList`` of deduced component states.

Driven by a ``Clock``: ``on_probe(parsed)`` for every 0x17/0x19/0x21
(Algorithm 1, lines 18-34) and ``check()`` every ``t_ro`` (lines 2-16, then
Algorithm 2). It (re)sends through an injected ``send(record, start_index)``:
the monitor is linked to every switch, so a probe can start anywhere on its
path. Line numbers below are Algorithm 1's unless said otherwise.

Where the pseudo-code and the text disagree or say nothing:

1. Line 6 ("if p not in Q") against the text ("if the probe is already in
   the Q ... then it is added"): the pseudo-code. A timed-out probe is
   queued once; while it waits in Q for its deadline, further checks
   neither queue it again nor count another attempt. Queueing a probe
   that is already queued cannot be what the sentence means.
2. Attempts: line 12 follows lines 8-10 inside line 6's branch, so the
   timeout that moves the index (line 10) is the first attempt counted on
   the next switch. Moving the index (line 10 or line 30) clears the count
   ("clears the r_a"). With line 8's strict ``>``, a switch reached by
   line 10 is declared unavailable at the timeout after r_a + 1 unanswered
   probes to it; the first switch of a path and one reached by a notice
   start from 0 and get r_a + 2 (for the first: the original and r_a + 1
   recovery probes).
3. ``init`` is the time of the probe's latest send (the orchestrator's
   start, or Algorithm 2 line 7): line 5 measures t_f from it. ``deadline``
   is ``init + deadline_s`` (default 2 t_f): a notice arrives t_f after a
   loss plus the path's latency, and the 0x17 sooner, so resending earlier
   would only duplicate probes. Q is ordered by ``init`` (ties by id).
4. Line 30 (0x21 from switch i): every switch pops its own SR entry and a
   recovery probe carries only its path's tail, so the entries left, r,
   give the sender's position k = n - r - 1 in the full path whatever the
   start. The index becomes the first position after k whose switch A
   does not hold unavailable (the text's "next available switch"), and
   never moves backwards. When it moves, ``init`` and ``deadline`` become
   now (the text: "added to the recovery queue with an updated initiation
   time"), so Algorithm 2 resends at the next check. A stale notice (from
   an instance already overtaken) only queues the probe, which is then
   resent at its old deadline if still unfinished.
5. Line 31 records the link (path[k], path[k + 1]), or (path[k], monitor)
   for the path's last switch, not a switch: the notice proves switch k
   worked and says only that its next hop did not acknowledge. Line 9
   records a switch: the monitor sent to path[index] itself and heard
   nothing.
6. Unavailable or congested: A keeps evidence. A 0x17 or 0x21 shows the
   switches of its DLVs and the links between them working (a 0x17 also
   the last switch's link to the monitor); a 0x19 shows path[index]
   responsive (the text: "deduces that s1 is responsive and marks it
   so"). A component with evidence is recorded congested, not
   unavailable, whichever came first (Fig. 7: the first probe still
   completes the path, so the link was slow, not broken).
7. An index past the path's end (line 10 or 30 at the last switch)
   leaves nothing to send: the probe is finished with what arrived, and
   leaves F (as line 19 takes a finished probe out).
8. The timeout sequence runs every t_ro rather than after t_ro without a
   probe (line 1's text): steady feedback could otherwise starve it; the
   lines it runs are the same.

Which switch inserted which DLV: a switch that already measured a request
in the running session (IPv4 identification) adds nothing when it sees it
again (docs/gpint_format.md, the loop check), so a recovery probe through
switches the first probe passed carries fewer DLVs than hops, and a path
that visits a switch twice gets one DLV from it. ``dlv_positions`` matches
DLVs to path positions by switch id, backwards from the sender (known from
the SR entries left); a record without ids falls back to consecutive
switches ending at the sender.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from common.clock import Clock
from common.errors import IntbedError
from controller.gpint.probe import KIND_FEEDBACK, KIND_NOTICE, KIND_PROBE, Probe

UNAVAILABLE = "unavailable"
CONGESTED = "congested"
# The other end of a path's last link: the monitor port.
MONITOR = "monitor"

# A switch name, or a link as its two end names in sorted order.
Component = str | tuple[str, str]


class GpintConfigError(IntbedError):
    """Monitoring parameters or paths the module cannot work with."""


def link(a: str, b: str) -> tuple[str, str]:
    """The key A uses for the link between ``a`` and ``b`` (either direction)."""
    return (a, b) if a <= b else (b, a)


@dataclass(frozen=True, slots=True)
class RecoveryParams:
    """t_f (feedback timeout), r_a (recovery attempts per switch), t_ro
    (resolution time: the timeout check's period) and the deadline after a
    send before Q may resend (default 2 t_f), all in seconds."""

    t_f: float = 1.5
    r_a: int = 10
    t_ro: float = 0.1
    deadline_s: float | None = None

    def __post_init__(self) -> None:
        if not self.t_f > 0 or not self.t_ro > 0:
            raise GpintConfigError(f"t_f ({self.t_f}) and t_ro ({self.t_ro}) must be positive")
        if self.r_a < 0:
            raise GpintConfigError(f"r_a ({self.r_a}) must be 0 or more")
        if self.deadline_s is not None and not self.deadline_s > 0:
            raise GpintConfigError(f"deadline_s ({self.deadline_s}) must be positive")

    @property
    def deadline(self) -> float:
        return 2 * self.t_f if self.deadline_s is None else self.deadline_s


# The paper's settings (section IV-C) and GPINT-FT's (section V-B3).
PAPER = RecoveryParams(t_f=1.5, r_a=10)
FINE_TUNED = RecoveryParams(t_f=0.4, r_a=2)


@dataclass(slots=True, eq=False)
class ProbeRecord:
    """One P_INT entry. ``sends`` counts every send of it; ``ids`` are the
    path's switch ids (the DLVs' ``switch_id``), if known; ``data`` is the
    caller's (the monitor keeps the path's SR entries there)."""

    id: int
    path: tuple[str, ...]
    init: float = 0.0
    index: int = 0
    deadline: float = 0.0
    attempts: int = 0
    finished: bool = False
    sends: int = 0
    ids: tuple[int, ...] = ()
    data: Any = None


def dlv_positions(record: ProbeRecord, probe: Probe) -> list[int] | None:
    """The path positions of ``probe``'s DLV entries, in order, or None when
    they cannot be the record's (too many, unknown ids, or more SR entries
    left than the path has). Each DLV goes to the latest position before
    the next one's whose switch id matches."""
    n = len(record.path)
    last = probe.last_position(n)
    if last < 0:
        return None
    dlv = probe.dlv
    ids = record.ids
    if not ids:
        first = last - len(dlv) + 1
        return list(range(first, last + 1)) if first >= 0 else None
    out: list[int] = []
    j = last
    for d in reversed(dlv):
        sid = d.switch_id
        while j >= 0 and ids[j] != sid:
            j -= 1
        if j < 0:
            return None
        out.append(j)
        j -= 1
    out.reverse()
    return out


class StatusEntry(NamedTuple):
    """A change in A: ``component`` became ``status`` at ``time`` (seen
    through probe ``request_id``)."""

    time: float
    component: Component
    status: str
    request_id: int


class StatusList:
    """A: components deduced unavailable or congested, with the changes in
    order. A component seen working is never unavailable (decision 6)."""

    def __init__(self) -> None:
        self.events: list[StatusEntry] = []
        self._status: dict[Component, str] = {}
        self._working: set[Component] = set()

    def insert_unavailable(self, component: Component, now: float, request_id: int) -> str:
        status = CONGESTED if component in self._working else UNAVAILABLE
        if self._status.get(component) != status:
            self._status[component] = status
            self.events.append(StatusEntry(now, component, status, request_id))
        return status

    def saw_working(self, component: Component, now: float, request_id: int) -> None:
        self._working.add(component)
        if self._status.get(component) == UNAVAILABLE:
            self._status[component] = CONGESTED
            self.events.append(StatusEntry(now, component, CONGESTED, request_id))

    def status(self, component: Component) -> str | None:
        return self._status.get(component)

    def is_unavailable(self, component: Component) -> bool:
        return self._status.get(component) == UNAVAILABLE

    def unavailable(self) -> list[Component]:
        return [c for c, s in self._status.items() if s == UNAVAILABLE]

    def congested(self) -> list[Component]:
        return [c for c, s in self._status.items() if s == CONGESTED]

    def snapshot(self) -> dict[Component, str]:
        return dict(self._status)


SendFn = Callable[[ProbeRecord, int], None]


class Recovery:
    """Algorithms 1 and 2 over the probes ``add``ed to it. ``send(record,
    start_index)`` transmits; ``on_finish(record)`` is called once per
    probe when it finishes (measurements in, or nothing left to send)."""

    def __init__(self, clock: Clock, send: SendFn, params: RecoveryParams = PAPER, *,
                 on_finish: Callable[[ProbeRecord], None] | None = None) -> None:
        self.clock = clock
        self.send = send
        self.params = params
        self.on_finish = on_finish
        self.P: dict[int, ProbeRecord] = {}
        self.F: dict[int, ProbeRecord] = {}
        self.Q: dict[int, ProbeRecord] = {}
        self.A = StatusList()
        self.recovery_sent = 0  # |P_R|
        self.unknown = 0  # packets naming no probe of P, or positions off their path
        self.running = False
        self._gen = 0

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Start the periodic timeout check (every t_ro)."""
        self._gen += 1
        self.running = True
        self.clock.call_later(self.params.t_ro, self._tick, self._gen)

    def stop(self) -> None:
        self.running = False
        self._gen += 1

    def _tick(self, gen: int) -> None:
        if gen != self._gen:
            return
        self.check()
        self.clock.call_later(self.params.t_ro, self._tick, gen)

    def add(self, record: ProbeRecord) -> None:
        """The orchestrator initiates ``record``: it joins P_INT and F and is
        sent from its index (not a recovery probe)."""
        self.P[record.id] = record
        self.F[record.id] = record
        self._send(record, recovery=False)

    # ---------------------------------------------------------- Algorithm 1

    def check(self) -> None:
        """Lines 2-16: the timeout sequence, then Algorithm 2."""
        now = self.clock.now()
        t_f, r_a = self.params.t_f, self.params.r_a
        for p in list(self.F.values()):  # line 3
            if now - p.init <= t_f:  # line 5
                continue
            if p.id not in self.Q:  # line 6
                self.Q[p.id] = p  # line 7
                if p.attempts > r_a:  # line 8
                    self.A.insert_unavailable(p.path[p.index], now, p.id)  # line 9
                    self._move_index(p, p.index + 1)  # line 10
                p.attempts += 1  # line 12
        self.process_recovery_queue()  # line 16

    def on_probe(self, probe: Probe) -> ProbeRecord | None:
        """Lines 18-34 for one received packet; the record it concerns, or
        None when it names none (counted in ``unknown``)."""
        p = self.P.get(probe.request_id)
        if p is None:
            self.unknown += 1
            return None
        n = len(p.path)
        kind = probe.kind
        if kind != KIND_FEEDBACK:
            positions = dlv_positions(p, probe)
            last = probe.last_position(n)
            if positions is None or (kind == KIND_PROBE and last != n - 1):
                self.unknown += 1
                return None
            first = positions[0] if positions else last
        now = self.clock.now()
        self.F.pop(p.id, None)  # line 19
        if kind == KIND_PROBE:  # line 21
            self._saw_path(p, first, last, now, delivered=True)
            self._finish(p)  # line 22
        elif kind == KIND_FEEDBACK:  # line 24
            if p.index < n:
                self.A.saw_working(p.path[p.index], now, p.id)
            if p.id not in self.Q:  # line 25
                self.Q[p.id] = p  # line 26
        elif kind == KIND_NOTICE:  # line 29
            self._saw_path(p, first, last, now, delivered=False)
            if self._move_index(p, self._next_available(p, last + 1)):  # line 30
                p.init = p.deadline = now
            after = p.path[last + 1] if last + 1 < n else MONITOR
            self.A.insert_unavailable(link(p.path[last], after), now, p.id)  # line 31
            if p.id not in self.Q:  # line 32
                self.Q[p.id] = p  # line 33
        return p

    # ---------------------------------------------------------- Algorithm 2

    def process_recovery_queue(self) -> None:
        """Algorithm 2: resend every queued, unfinished probe whose deadline
        has come, oldest initiation first."""
        now = self.clock.now()
        for p in sorted(self.Q.values(), key=lambda r: (r.init, r.id)):  # line 1
            if now < p.deadline:  # lines 2-3
                continue
            del self.Q[p.id]  # line 4
            if not p.finished:  # line 5
                self.F[p.id] = p  # line 6
                self._send(p, recovery=True)  # line 7

    # -------------------------------------------------------------- helpers

    def _send(self, p: ProbeRecord, *, recovery: bool) -> None:
        now = self.clock.now()
        p.init = now
        p.deadline = now + self.params.deadline
        p.sends += 1
        if recovery:
            self.recovery_sent += 1
        self.send(p, p.index)

    def _next_available(self, p: ProbeRecord, index: int) -> int:
        path = p.path
        while index < len(path) and self.A.is_unavailable(path[index]):
            index += 1
        return index

    def _move_index(self, p: ProbeRecord, index: int) -> bool:
        """Set the index forward (never back), clearing the attempts; past
        the end the probe is finished. True if it moved."""
        if index <= p.index:
            return False
        p.index = index
        p.attempts = 0
        if index >= len(p.path):
            self._finish(p)
        return True

    def _finish(self, p: ProbeRecord) -> None:
        self.F.pop(p.id, None)
        if p.finished:
            return
        p.finished = True
        if self.on_finish is not None:
            self.on_finish(p)

    def _saw_path(self, p: ProbeRecord, first: int, last: int, now: float, *,
                  delivered: bool) -> None:
        """Evidence from a probe that visited path[first..last]."""
        path, seen = p.path, self.A.saw_working
        for j in range(first, last + 1):
            seen(path[j], now, p.id)
            if j < last:
                seen(link(path[j], path[j + 1]), now, p.id)
        if delivered:
            seen(link(path[last], MONITOR), now, p.id)
