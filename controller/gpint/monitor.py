"""The monitoring module of the paper's Fig. 2: probe generator, probe
sender, probe receiver and the data recovery module, run as measurement
sessions in a loop.

- Generator: a planner's paths (lists of switch names) become SR entries
  through the ``Topology``: the egress port between consecutive switches
  (the lowest one, from ``port_peers``) and each switch's MEA range.
  Everything a probe could not carry is refused at construction.
- Sender: at most ``max_in_flight`` paths (the paper's 12 concurrent
  probes) are being collected at a time; the rest wait in order. A path
  holds its slot from its first send until its measurements are in (or it
  fails), so recovery probes never wait for a slot.
- Receiver: ``on_frame(frame, t)`` parses; a malformed frame is counted
  by reason in ``stats.malformed``, never raised.
- Recovery (``recovery.Recovery``) when given parameters; without it a
  probe whose measurements miss ``probe_timeout_s`` is lost and its
  session fails.

A session sends a probe per path and collects them all; it completes when
every path is finished and fails when a probe is lost (recovery off) or
``session_timeout_s`` passes. The next one starts ``gap_s`` after. Every
probe of a session carries the session number as its IPv4 identification
(the switches measure a request once per session: docs/gpint_format.md),
and request ids roll on from session to session, so a late probe of a
previous session is counted stale instead of being taken for a current one.
DLVs are matched to path positions by switch id (``switch_ids``, default
the topology's device ids): a switch reports once per request and session
however often the path visits it.

Written against ``Clock`` and an injected ``send_frame(switch, frame)``
(the monitor host's link to that switch, e.g. ``Network.send_to_switch``);
frames come back through ``on_frame`` (or ``on_frames``, a collector
handler). It imports no target.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from common.clock import Clock
from controller.gpint.cost import MonitorCost
from controller.gpint.probe import (
    DEFAULT_ADDRESSES,
    KIND_FEEDBACK,
    KIND_NOTICE,
    KIND_PROBE,
    MAX_REQUEST_ID,
    REQ_RULE_HITS,
    Addresses,
    Probe,
    ProbeBuildError,
    ProbeError,
    SrEntry,
    SwitchReading,
    build_probe,
    parse_probe,
)
from controller.gpint.recovery import (
    PAPER,
    Component,
    GpintConfigError,
    ProbeRecord,
    Recovery,
    RecoveryParams,
    StatusEntry,
    dlv_positions,
)
from topologies.model import Topology

# The paper's orchestrator deploys at most 12 probes at once (section V-A).
MAX_IN_FLIGHT = 12
# Without recovery a probe is lost when its measurements take longer than
# this: the recovery module's own deadline at the paper's t_f.
DEFAULT_PROBE_TIMEOUT_S = 2 * PAPER.t_f
# Two consecutive sessions must not share a request id (15 bits).
MAX_PATHS = (MAX_REQUEST_ID + 1) // 2

SendFrame = Callable[[str, bytes], None]


def _switch_ids(topo: Topology, given: Mapping[str, int] | None,
                path: Sequence[str]) -> list[int]:
    ids = []
    for name in path:
        sid = given.get(name) if given is not None else topo.switches[name].device_id
        if sid is None or not 0 <= sid <= 0xFF:
            raise GpintConfigError(f"switch '{name}' has switch_id {sid}: DLVs carry 8 bits; "
                                   f"pass switch_ids with one of 0..255 for every switch")
        ids.append(sid)
    return ids


def path_hops(topo: Topology, path: Sequence[str],
              mea_ranges: Mapping[str, tuple[int, int]] | None = None) -> list[SrEntry]:
    """The SR entries of ``path``: per switch, the port toward the next one
    (0 for the last, whose port the data plane ignores) and its MEA range
    (default (0, 0): the device-level entry only)."""
    if not path:
        raise GpintConfigError("an INT path needs at least one switch")
    for name in path:
        if name not in topo.switches:
            raise GpintConfigError(f"'{name}' is no switch of topology '{topo.name}'")
    ranges = mea_ranges or {}
    hops: list[SrEntry] = []
    for i, name in enumerate(path):
        port = 0
        if i + 1 < len(path):
            nxt = path[i + 1]
            ports = [p for p, peer, _ in topo.port_peers(name) if peer == nxt]
            if not ports:
                raise GpintConfigError(f"no link from '{name}' to '{nxt}' (switches {i} and "
                                       f"{i + 1} of the path)")
            port = ports[0]
            if port > 0xFF:
                raise GpintConfigError(f"port {port} of '{name}' toward '{nxt}' does not fit "
                                       f"the SR entry's 8-bit next_port")
        start, count = ranges.get(name, (0, 0))
        hops.append(SrEntry(port, start, count))
    return hops


@dataclass
class MonitorStats:
    """Counts since the monitor was made. ``malformed`` by reason: the
    parser's (``ProbeError.kind``) and ``path`` for a probe whose stacks do
    not fit its path; ``stale`` names no probe of the running session;
    ``ignored`` are feedbacks and notices when recovery is off. ``late``:
    probes that arrived after ``probe_timeout_s`` had counted them lost
    (recovery off), with how long after their send (``late_after_s``):
    what tells a probe that was slow from one that was dropped."""

    frames: int = 0
    malformed: Counter[str] = field(default_factory=Counter)
    stale: int = 0
    ignored: int = 0
    late: int = 0
    late_after_s: list[float] = field(default_factory=list)

    @property
    def malformed_total(self) -> int:
        return sum(self.malformed.values())


@dataclass
class SessionResult:
    """One measurement session. ``start``: first probe sent; ``end``: the
    last path finished (its measurements received) or the failure decided.
    ``readings[i][j]``: what switch j of path i reported (None: nothing
    arrived; a switch the path visits twice has its one reading at both).
    ``status``: A at the end, with its ``status_events``."""

    number: int
    start: float
    end: float
    completed: bool
    probes_sent: int
    recovery_sent: int
    failed_probes: int
    feedbacks: int
    notices: int
    peak_in_flight: int
    status: dict[Component, str]
    status_events: list[StatusEntry]
    paths: list[tuple[str, ...]]
    readings: list[list[SwitchReading | None]]

    @property
    def latency(self) -> float:
        """First probe sent to last received (the paper's elapsed time)."""
        return self.end - self.start

    @property
    def missing(self) -> list[tuple[int, int, str]]:
        """(path, position, switch) of every switch whose reading never came."""
        return [(i, j, self.paths[i][j]) for i, row in enumerate(self.readings)
                for j, r in enumerate(row) if r is None]


class _Session:
    __slots__ = ("number", "addrs", "records", "by_id", "rows", "waiting", "active", "readings",
                 "start", "end", "sent", "failed", "concluded", "feedbacks", "notices", "peak",
                 "recovery", "over")

    def __init__(self, number: int, addrs: Addresses, records: list[ProbeRecord],
                 recovery: Recovery | None) -> None:
        self.number = number
        self.addrs = addrs
        self.records = records
        self.by_id = {r.id: r for r in records}
        self.rows = {r.id: i for i, r in enumerate(records)}
        self.waiting = deque(records)
        self.active: set[int] = set()
        self.readings: list[list[SwitchReading | None]] = [[None] * len(r.path)
                                                           for r in records]
        self.start: float | None = None
        self.end = 0.0
        self.sent = 0
        self.failed = 0
        self.concluded = 0
        self.feedbacks = 0
        self.notices = 0
        self.peak = 0
        self.recovery = recovery
        self.over = False


class Monitor:
    """Measurement sessions over ``paths`` of ``topo``.

    ``recovery``: the data recovery module's parameters, or None to run
    without it. ``mea_ranges``: switch name -> (start, count) of the
    counters of ``request_type`` to collect. ``switch_ids``: the 8-bit
    ``switch_id`` each switch was configured with (default: its device id).
    ``addrs``: the probes' addresses (the identification is set per
    session). ``on_session(result)`` is called as each session ends;
    ``results`` keeps them all. ``cost``: the monitor's own time per
    probe sent and per frame received (``controller.gpint.cost``; None:
    none, as on a live target, where the monitor takes its real time).
    """

    def __init__(self, topo: Topology, paths: Sequence[Sequence[str]], clock: Clock,
                 send_frame: SendFrame, *, recovery: RecoveryParams | None = PAPER,
                 max_in_flight: int = MAX_IN_FLIGHT, request_type: int = REQ_RULE_HITS,
                 mea_ranges: Mapping[str, tuple[int, int]] | None = None,
                 switch_ids: Mapping[str, int] | None = None,
                 addrs: Addresses = DEFAULT_ADDRESSES,
                 probe_timeout_s: float = DEFAULT_PROBE_TIMEOUT_S,
                 session_timeout_s: float | None = None, gap_s: float = 0.0,
                 on_session: Callable[[SessionResult], None] | None = None,
                 cost: MonitorCost | None = None) -> None:
        if not paths:
            raise GpintConfigError("no INT paths to probe")
        if len(paths) > MAX_PATHS:
            raise GpintConfigError(f"{len(paths)} INT paths, at most {MAX_PATHS} (request ids "
                                   f"are 15 bits and consecutive sessions must not share one)")
        if max_in_flight < 1:
            raise GpintConfigError(f"max_in_flight {max_in_flight}: at least 1 probe")
        if request_type not in (0, 1):
            raise GpintConfigError(f"request_type {request_type}: 0 (rule hits) or 1 (port "
                                   f"counters)")
        if not probe_timeout_s > 0 or (session_timeout_s is not None
                                       and not session_timeout_s > 0) or gap_s < 0:
            raise GpintConfigError("probe and session timeouts must be positive, the gap not "
                                   "negative")
        self.paths = [tuple(p) for p in paths]
        self.hops: list[list[SrEntry]] = []
        for k, path in enumerate(self.paths):
            try:
                hops = path_hops(topo, path, mea_ranges)
                build_probe(0, hops, request_type=request_type, addrs=addrs)  # refuses early
            except (GpintConfigError, ProbeBuildError) as exc:
                raise type(exc)(f"INT path {k}: {exc.message}") from None
            self.hops.append(hops)
        self.ids = [tuple(_switch_ids(topo, switch_ids, p)) for p in self.paths]
        owner: dict[int, str] = {}
        for path, ids in zip(self.paths, self.ids):
            for name, sid in zip(path, ids):
                if owner.setdefault(sid, name) != name:
                    raise GpintConfigError(f"switches '{owner[sid]}' and '{name}' share "
                                           f"switch_id {sid}: their DLVs could not be told apart")
        self.clock = clock
        self.send_frame = send_frame
        self.recovery_params = recovery
        self.max_in_flight = max_in_flight
        self.request_type = request_type
        self.addrs = addrs
        self.probe_timeout_s = probe_timeout_s
        self.session_timeout_s = session_timeout_s
        self.gap_s = gap_s
        self.on_session = on_session
        self.results: list[SessionResult] = []
        self.stats = MonitorStats()
        self.running = False
        self._session: _Session | None = None
        self._remaining: int | None = None
        self._number = 0
        self._next_id = 0
        self._rx_time: float | None = None
        self.cost = cost
        self._busy = 0.0  # the monitor is busy until then (with a cost)
        self._timed_out: dict[int, float] = {}  # request id -> send, lost by timeout

    # ------------------------------------------------------------ lifecycle

    def start(self, sessions: int | None = None) -> None:
        """Run ``sessions`` sessions one after another (None: until stopped)."""
        if sessions is not None and sessions < 1:
            raise GpintConfigError(f"sessions {sessions}: at least 1")
        self.running = True
        self._remaining = sessions
        self._begin()

    def stop(self) -> None:
        """Stop after nothing more: the running session is dropped unrecorded."""
        self.running = False
        s = self._session
        if s is not None:
            s.over = True
            if s.recovery is not None:
                s.recovery.stop()
        self._session = None

    @property
    def in_flight(self) -> int:
        """Paths of the running session being collected now."""
        return 0 if self._session is None else len(self._session.active)

    # --------------------------------------------------------------- sender

    def _begin(self) -> None:
        if not self.running:
            return
        self._number += 1
        records = []
        for path, hops, ids in zip(self.paths, self.hops, self.ids):
            records.append(ProbeRecord(self._next_id, path, ids=ids, data=hops))
            self._next_id = (self._next_id + 1) & MAX_REQUEST_ID
        rec = None
        if self.recovery_params is not None:
            rec = Recovery(self.clock, self._send, self.recovery_params,
                           on_finish=self._path_done)
        addrs = self.addrs._replace(ident=self._number & 0xFFFF)
        s = self._session = _Session(self._number, addrs, records, rec)
        if rec is not None:
            rec.start()
        if self.session_timeout_s is not None:
            self.clock.call_later(self.session_timeout_s, self._session_timeout, s)
        self._fill(s)

    def _fill(self, s: _Session) -> None:
        while s.waiting and len(s.active) < self.max_in_flight and not s.over:
            r = s.waiting.popleft()
            s.active.add(r.id)
            s.peak = max(s.peak, len(s.active))
            if s.recovery is not None:
                s.recovery.add(r)
            else:
                r.sends += 1
                r.init = self.clock.now()
                self._timed_out.pop(r.id, None)
                self._send(r, 0)
                self.clock.call_later(self.probe_timeout_s, self._probe_timeout, s, r)

    def _send(self, record: ProbeRecord, index: int) -> None:
        s = self._session
        if s is None or record.id not in s.by_id:
            return
        frame = build_probe(record.id, record.data[index:], request_type=self.request_type,
                            addrs=s.addrs)
        switch = record.path[index]
        if self.cost is None:
            self._emit(s, switch, frame)
            return
        now = self.clock.now()
        done = max(now, self._busy) + self.cost.send_s(len(record.path) - index)
        self._busy = done
        self.clock.call_later(done - now, self._emit, s, switch, frame)

    def _emit(self, s: _Session, switch: str, frame: bytes) -> None:
        if s.over:
            return  # built for a session that ended while the monitor was busy
        if s.start is None:
            s.start = self.clock.now()
        s.sent += 1
        self.send_frame(switch, frame)

    # ------------------------------------------------------------- receiver

    def on_frames(self, batch: list[tuple[bytes, float]]) -> None:
        """``on_frame`` for a batch of (frame, arrival) pairs: the shape of a
        network's collector handler (``Network.attach_collector``)."""
        for frame, t in batch:
            self.on_frame(frame, t)

    def on_frame(self, frame: bytes, t: float | None = None) -> None:
        """One frame from a switch, received at ``t`` (default: now)."""
        st = self.stats
        st.frames += 1
        try:
            probe = parse_probe(frame)
        except ProbeError as exc:
            st.malformed[exc.kind] += 1
            return
        now = self.clock.now() if t is None else t
        if self.cost is None:
            self._handle(probe, now)
            return
        done = max(now, self._busy) + self.cost.receive_s(len(probe.dlv))
        self._busy = done
        self.clock.call_later(done - self.clock.now(), self._handle, probe, done)

    def _handle(self, probe: Probe, now: float) -> None:
        """What a parsed frame does, handled at ``now``."""
        st = self.stats
        kind = probe.kind
        sent = self._timed_out.pop(probe.request_id, None)
        if sent is not None and kind == KIND_PROBE:
            st.late += 1
            st.late_after_s.append(now - sent)
        s = self._session
        record = None if s is None else s.by_id.get(probe.request_id)
        if s is None or record is None:
            st.stale += 1
            return
        if kind != KIND_FEEDBACK and not self._keep_readings(s, record, probe):
            st.malformed["path"] += 1
            return
        if kind == KIND_FEEDBACK:
            s.feedbacks += 1
        elif kind == KIND_NOTICE:
            s.notices += 1
        self._rx_time = now
        try:
            if s.recovery is not None:
                s.recovery.on_probe(probe)
            elif kind == KIND_PROBE:
                if not record.finished:
                    record.finished = True
                    self._path_done(record)
            else:
                st.ignored += 1
        finally:
            self._rx_time = None

    def _keep_readings(self, s: _Session, record: ProbeRecord, probe: Probe) -> bool:
        """Store what ``probe`` carries by path position (the first reading
        of a switch wins); False if its stacks do not fit the path."""
        positions = dlv_positions(record, probe)
        if positions is None or (probe.kind == KIND_PROBE and probe.sr):
            return False
        row = s.readings[s.rows[record.id]]
        ids = record.ids
        for reading in probe.readings():
            sid = reading.switch_id
            for j, other in enumerate(ids):
                if other == sid and row[j] is None:
                    row[j] = reading
        return True

    # ------------------------------------------------------------- sessions

    def _path_done(self, record: ProbeRecord) -> None:
        s = self._session
        if s is None or s.over or record.id not in s.active:
            return
        s.active.discard(record.id)
        s.concluded += 1
        s.end = self.clock.now() if self._rx_time is None else self._rx_time
        if s.concluded == len(s.records):
            self._end(s)
        else:
            self._fill(s)

    def _probe_timeout(self, s: _Session, record: ProbeRecord) -> None:
        if s.over or record.finished:
            return
        s.failed += 1
        self._timed_out[record.id] = record.init
        self._path_done(record)

    def _session_timeout(self, s: _Session) -> None:
        if s.over:
            return
        unfinished = [r for r in s.records if not r.finished]
        s.failed += len(unfinished)
        s.end = self.clock.now()
        self._end(s)

    def _end(self, s: _Session) -> None:
        s.over = True
        rec = s.recovery
        if rec is not None:
            rec.stop()
        start = s.end if s.start is None else s.start
        result = SessionResult(
            number=s.number, start=start, end=max(s.end, start),
            completed=s.failed == 0 and all(r.finished for r in s.records),
            probes_sent=s.sent, recovery_sent=0 if rec is None else rec.recovery_sent,
            failed_probes=s.failed, feedbacks=s.feedbacks, notices=s.notices,
            peak_in_flight=s.peak,
            status={} if rec is None else rec.A.snapshot(),
            status_events=[] if rec is None else list(rec.A.events),
            paths=list(self.paths), readings=s.readings)
        self.results.append(result)
        if self._session is s:
            self._session = None
        if self._remaining is not None:
            self._remaining -= 1
            if self._remaining <= 0:
                self.running = False
        if self.on_session is not None:
            self.on_session(result)
        if self.running:
            self.clock.call_later(self.gap_s, self._begin)
