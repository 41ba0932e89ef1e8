"""Switches, egress queues, wires and hosts in virtual time.

The traffic manager is BMv2's: one FIFO per egress port holding at most
``depth`` packets (tail drop), served no faster than ``rate_pps``
(``set_queue_rate``) and no faster than the link serializes. Queue metadata
is filled as ``simple_switch`` fills it: ``enq_qdepth`` is the number of
packets already queued when the packet arrives, ``deq_qdepth`` the number
left behind when it leaves, ``deq_timedelta`` the time spent queued in
microseconds, ``enq_timestamp`` the switch's clock at enqueue.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from typing import Any

import cython

from common.errors import InvalidValueError
from dataplane.runtime.switch import EgressJob, Switch
from dataplane.targets.sim.events import NS_PER_S, NS_PER_US, Simulator, Target

PORT_LIST_MAX = 4096
"""Ports below this number are also kept in a list indexed by port
(``SimSwitch._by_port``); any other is found in ``ports``."""

RECIRCULATION_NS = 100_000
"""Time one recirculation pass takes on the sim target (100 us). A modelling
choice: BMv2's pass is tens of microseconds of CPU; a coarser pass keeps
programs that recirculate while they wait (GPINT's SQR copy store checks its
timeout once per pass) cheap to simulate, and times such waits to 0.1 ms."""

Tap = Callable[[int, str, int, bytes], None]  # (time_ns, node, port, packet)

SERVE_INPUT = 1 << 40
"""A switch's event kind for serving its input queue (``Target.fire``); a
kind below it is a packet's arrival on that port."""
# Nanoseconds a bit takes at 1 b/s, times 8: a frame's serialization time is
# its length times this over the link's bits per second. Compiled, a machine
# word (network.pxd), so the product and the floor division are C
# arithmetic: a frame of up to a gigabyte stays inside 64 bits.
_BITS_NS = 8 * NS_PER_S


class Wire:
    """One direction of a link: delay, Bernoulli loss, and the far end.
    ``jitter``: per-packet extra delays (``timing.ServiceDraws``, a sending
    switch's delay), which never let a packet overtake the one before it."""

    __slots__ = ("sim", "dst", "dst_port", "delay_ns", "loss", "rng", "bits_ns", "sent", "lost",
                 "bandwidth_bps", "_deliver", "_target", "jitter", "_jitter_times", "_jitter_i",
                 "last_ns")

    def __init__(self, sim: Simulator, dst: Any, dst_port: int, *, bandwidth_bps: int,
                 delay_ns: int, loss: float, rng: random.Random, jitter: Any = None) -> None:
        if bandwidth_bps <= 0:
            raise ValueError("bandwidth must be positive")
        self.sim = sim
        self.dst = dst
        self.dst_port = dst_port
        self.bandwidth_bps = bandwidth_bps
        self.delay_ns = delay_ns
        self.loss = loss
        self.rng = rng
        self.sent = 0
        self.lost = 0
        self.jitter = jitter
        self._jitter_times: list[int] = []
        self._jitter_i = 0
        self.last_ns = 0
        self._deliver = dst.receive
        # Compiled, a sim switch or host takes the arrival as a target event
        # (its port the kind); anything else, and everything in Python
        # (where a target event would be one call more), as a call of its
        # ``receive``.
        self._target = (dst._events if cython.compiled and isinstance(dst, (SimSwitch, SimHost))
                        and 0 <= dst_port < SERVE_INPUT else None)

    def serialization_ns(self, nbytes: int) -> int:
        return nbytes * _BITS_NS // self.bandwidth_bps

    def transmit(self, packet: bytes, ser_ns: int) -> None:
        """Called when serialization starts; the far end receives the packet
        once its last bit has crossed the link."""
        self.sent += 1
        if self.loss and self.rng.random() < self.loss:
            self.lost += 1
            return
        sim = self.sim
        at = sim.now_ns + ser_ns + self.delay_ns
        if self.jitter is not None:
            times = self._jitter_times
            i = self._jitter_i
            if i >= len(times):
                times = self._jitter_times = self.jitter.batch()
                i = 0
            self._jitter_i = i + 1
            at += times[i]
            if at < self.last_ns:
                at = self.last_ns
            self.last_ns = at
        if self._target is not None:
            sim.push_to(at, self._target, self.dst_port, packet)
        else:
            sim.push(at, self._deliver, (self.dst_port, packet))


class EgressPort(Target):
    """A switch port's egress FIFO and transmitter; its one event (a target
    event) is the head of the line's turn."""

    __slots__ = ("sim", "switch", "port", "queue", "depth", "gap_ns", "wire", "busy", "free_at",
                 "drops", "tx_packets", "tx_bytes", "max_depth", "taps", "_append", "_popleft")

    def __init__(self, sim: Simulator, switch: SimSwitch, port: int, wire: Wire | None, *,
                 depth: int = 64, rate_pps: float | None = None) -> None:
        self.sim = sim
        self.switch = switch
        self.port = port
        self.wire = wire
        # Waiting jobs, each with its enqueue time and depth (enq_ns, enq_depth).
        self.queue: deque[EgressJob] = deque()
        # The queue's methods bound once: compiled, a call of a bound method
        # skips the lookup by name that calling ``queue.append`` makes.
        self._append = self.queue.append
        self._popleft = self.queue.popleft
        self.depth = depth
        self.gap_ns = 0
        self.set_rate(rate_pps)
        self.busy = False
        self.free_at = 0
        self.drops = 0
        self.tx_packets = 0
        self.tx_bytes = 0
        self.max_depth = 0
        # Who sees what this port transmits: the switch's data-port taps (one
        # list shared by its ports) unless the owner gives the port its own.
        self.taps: list[Tap] = switch.taps

    def set_rate(self, rate_pps: float | None) -> None:
        """BMv2 ``set_queue_rate``: at most ``rate_pps`` dequeues per second
        (None: line rate only)."""
        self.gap_ns = 0 if not rate_pps else round(NS_PER_S / rate_pps)

    def enqueue(self, job: EgressJob) -> None:
        q = self.queue
        depth = len(q)
        if depth >= self.depth:
            self.drops += 1
            return
        if depth + 1 > self.max_depth:
            self.max_depth = depth + 1
        now = self.sim.now_ns
        if self.busy:
            job.enq_ns = now
            job.enq_depth = depth
            self._append(job)
            return
        self.busy = True
        if self.free_at <= now:
            # An idle port serves at once, as BMv2's egress thread does: no
            # event, and the packet never sits in the (empty) queue.
            self._serve(job, now, 0)
        else:
            job.enq_ns = now
            job.enq_depth = depth
            self._append(job)
            self.sim.push_to(self.free_at, self, 0, None)

    def fire(self, kind: int, arg: Any) -> None:
        """The head of the line's turn (the port's one event)."""
        job = self._popleft()
        self._serve(job, job.enq_ns, job.enq_depth)

    def _serve(self, job: EgressJob, enq_ns: int, enq_depth: int) -> None:
        """Egress and transmission of the packet at the head of the line;
        the port stays busy until ``free_at``."""
        sim = self.sim
        now = sim.now_ns
        sw = self.switch
        offset = sw.offset_us
        us = NS_PER_US
        if sw.engine is not sw._bound_engine:
            sw._bind_engine()
        # The timestamps as integer objects: the one ingress made for the
        # job's instant when it has it (no new object), and the same again
        # for now when the job is served the instant it was enqueued.
        enq_us = job.enq_us
        if enq_us is None:
            enq_us = enq_ns // us + offset
        delta_us = (now - enq_ns) // us
        now_us = enq_us if now == enq_ns else now // us + offset
        hop = sw._egress_hop
        if hop is not None:
            r = hop(job, enq_us, enq_depth, delta_us, len(self.queue), now_us)
        else:
            r = sw._engine_egress(job, enq_us, enq_depth, delta_us, len(self.queue), now_us)
        gap = self.gap_ns
        if type(r) is bytes:  # the hop form's common case: one packet out of this port
            ser = self._emit(r, now)
            if ser > gap:
                gap = ser
        else:
            out, clones, recirc = r
            for _port, packet in out:
                ser = self._emit(packet, now)
                if ser > gap:
                    gap = ser
            for c in clones:
                sw.enqueue(c)
            for item in recirc:
                sw.recirculate(item)
        self.free_at = now + gap
        if self.queue:
            sim.push_to(self.free_at, self, 0, None)
        else:
            self.busy = False

    def _emit(self, packet: bytes, now: int) -> int:
        """Count, tap and put on the wire one packet leaving this port;
        returns its serialization time (0 with no wire)."""
        self.tx_packets += 1
        self.tx_bytes += len(packet)
        taps = self.taps
        if taps:
            name = self.switch.name
            for tap in taps:
                tap(now, name, self.port, packet)
        wire = self.wire
        if wire is None:
            return 0
        ser = wire.serialization_ns(len(packet))
        wire.transmit(packet, ser)
        return ser


class SimSwitch:
    """An engine Switch attached to ports and wires. Its events (``_events``,
    a target): a packet's arrival (the kind its port) and serving the
    input queue (``SERVE_INPUT``)."""

    def __init__(self, sim: Simulator, name: str, engine: Switch, *,
                 processing_rate_pps: float | None = None, input_depth: int = 1024,
                 clock_offset_us: int = 0, recirculation_ns: int = RECIRCULATION_NS,
                 service: Any = None) -> None:
        if recirculation_ns <= 0:
            raise InvalidValueError("a recirculation pass must take time (or a loop never ends)")
        self.sim = sim
        self.recirculation_ns = recirculation_ns
        self.recirculated = 0
        self.name = name
        self.engine = engine
        self.ports: dict[int, EgressPort] = {}
        # The same ports as a list indexed by port number (None: no port), so
        # a packet finds its port by one item read instead of a probe of a
        # dictionary that a hundred switches keep cold. A port missing from
        # it is looked up in ``ports`` (``enqueue``).
        self._by_port: list[EgressPort | None] = []
        self.offset_us = clock_offset_us
        self.proc_gap_ns = round(NS_PER_S / processing_rate_pps) if processing_rate_pps else 0
        # Per-packet service times (``timing.ServiceDraws``) instead of the
        # constant proc_gap_ns: drawn in batches, read one per packet.
        self._draws = service
        self._service_times: list[int] = []
        self._service_i = 0
        if service is not None and not self.proc_gap_ns:
            self.proc_gap_ns = 1  # served through the input queue, as with a rate
        self.input: deque[tuple[Any, ...]] = deque()
        self._input_append = self.input.append  # bound once, as EgressPort's
        self._input_popleft = self.input.popleft
        self.input_depth = input_depth
        self.input_busy = False
        self.input_drops = 0
        self.rx_packets = 0
        self.taps: list[Tap] = []
        # Packets the pipeline sends to a port with no link (e.g. the CPU
        # port): ``(port, packet)``; the default drops them.
        self.unconnected: Callable[[int, bytes], None] | None = None
        self.unconnected_drops = 0
        self._events = _SwitchEvents(self)
        # The engine's ingress and egress, held here so that a packet-hop
        # does not look them up on the engine (whose attributes a hundred
        # switches keep cold); read again when the engine replaces one, or
        # when this switch is given another engine.
        self._bound_engine: Switch | None = None
        self._bind_engine()

    def _bind_engine(self) -> None:
        engine = self.engine
        if engine is not self._bound_engine:
            engine.watch_data_plane(self._bind_engine)
            self._bound_engine = engine
        self._engine_ingress = engine.ingress
        self._engine_egress = engine.egress
        # The engine's hop forms (no list or tuple per packet), used while
        # its halves are its own; None when something has wrapped them.
        halves = getattr(engine, "hop_halves", None)
        self._ingress_hop = engine.ingress_hop if (
            halves is not None and halves[0] is engine.ingress) else None
        self._egress_hop = engine.egress_hop if (
            halves is not None and halves[1] is engine.egress) else None

    def ts_us(self, ns: int) -> int:
        """This switch's timestamp for virtual time ``ns`` (BMv2:
        microseconds since the switch started, plus a configured offset)."""
        return ns // NS_PER_US + self.offset_us

    def now_us(self) -> int:
        return self.sim.now_ns // NS_PER_US + self.offset_us

    def add_port(self, port: int, wire: Wire | None, *, depth: int = 64,
                 rate_pps: float | None = None) -> EgressPort:
        ep = EgressPort(self.sim, self, port, wire, depth=depth, rate_pps=rate_pps)
        self.ports[port] = ep
        if 0 <= port < PORT_LIST_MAX:
            by_port = self._by_port
            by_port.extend([None] * (port + 1 - len(by_port)))
            by_port[port] = ep
        return ep

    def receive(self, port: int, packet: bytes) -> None:
        self.rx_packets += 1
        if not self.proc_gap_ns:
            self.ingress(port, packet)
            return
        self._queue_input((port, packet))

    def _queue_input(self, item: tuple[Any, ...]) -> None:
        """The processing-limited input buffer: ``ingress(*item)`` in turn,
        one every ``proc_gap_ns``; tail drop when full."""
        if len(self.input) >= self.input_depth:
            self.input_drops += 1
            return
        self._input_append(item)
        if not self.input_busy:
            self.input_busy = True
            self._schedule_input()

    def _schedule_input(self) -> None:
        """The input queue's next service, one service time from now."""
        sim = self.sim
        if self._draws is None:
            gap = self.proc_gap_ns
        else:  # the next packet's service time, from the batch drawn last
            times = self._service_times
            i = self._service_i
            if i >= len(times):
                times = self._service_times = self._draws.batch()
                i = 0
            self._service_i = i + 1
            gap = times[i]
        if cython.compiled:  # a target event: the loop calls fire in C
            sim.push_to(sim.now_ns + gap, self._events, SERVE_INPUT, None)
        else:  # in Python, one call fewer than through fire
            sim.push(sim.now_ns + gap, self._serve_input, ())

    def recirculate(self, item: tuple[Any, ...]) -> None:
        """BMv2 hands a recirculated packet back to its ingress buffer: here it
        re-enters after ``recirculation_ns`` and, under a processing limit,
        through the same input queue as arriving packets (a loop costs
        capacity). Without that delay a packet that recirculates until a
        timestamp moves (a stored copy waiting for its timeout) would loop
        forever at one instant of virtual time."""
        self.recirculated += 1
        self.sim.after_ns(self.recirculation_ns, self._reenter, item)

    def _reenter(self, item: tuple[Any, ...]) -> None:
        if self.proc_gap_ns:
            self._queue_input(item)
        else:
            self.ingress(*item)

    def _serve_input(self) -> None:
        item = self._input_popleft()
        if len(item) == 2:  # an arrival; compiled, a C call (no *args)
            self.ingress(item[0], item[1])
        else:
            self.ingress(*item)
        if self.input:
            self._schedule_input()
        else:
            self.input_busy = False

    def ingress(self, port: int, packet: bytes, instance_type: int = 0,
                preserved: Any = None) -> None:
        us = NS_PER_US
        if self.engine is not self._bound_engine:
            self._bind_engine()
        ts = self.sim.now_ns // us + self.offset_us  # an object: it goes on with the job
        hop = self._ingress_hop
        if hop is not None:
            r = hop(port, packet, instance_type, preserved, ts)
        else:
            r = self._engine_ingress(port, packet, instance_type, preserved, ts)
        if r is None:
            return
        if type(r) is EgressJob:  # the hop form's common case: one job
            job = r
            job.enq_us = ts  # enqueued now: egress's enqueue timestamp
            self.enqueue(job)
            return
        jobs, again = r
        for job in jobs:
            self.enqueue(job)
        for item in again:
            self.ingress(*item)

    def enqueue(self, job: EgressJob) -> None:
        by_port = self._by_port
        p = job.port
        ep = by_port[p] if 0 <= p < len(by_port) else None
        if ep is None:
            ep = self.ports.get(p)
        if ep is not None:
            ep.enqueue(job)
            return
        # No link on this port: run egress at once and hand the packet over.
        now_us = self.now_us()
        out, clones, recirc = self.engine.egress(job, now_us, 0, 0, 0, now_us)
        for port, packet in out:
            if self.unconnected is not None:
                self.unconnected(port, packet)
            else:
                self.unconnected_drops += 1
        for c in clones:
            self.enqueue(c)
        for r in recirc:
            self.recirculate(r)


class HostNic(Target):
    """A host's transmit FIFO (unbounded) at line rate; its one event is the
    end of a packet's serialization."""

    __slots__ = ("sim", "wire", "queue", "busy", "_append", "_popleft")

    def __init__(self, sim: Simulator, wire: Wire) -> None:
        self.sim = sim
        self.wire = wire
        self.queue: deque[bytes] = deque()
        self._append = self.queue.append  # bound once, as EgressPort's
        self._popleft = self.queue.popleft
        self.busy = False

    def send(self, packet: bytes) -> None:
        self._append(packet)
        if not self.busy:
            self.busy = True
            self.fire(0, None)

    def fire(self, kind: int, arg: Any) -> None:
        """The end of a packet's serialization (the NIC's one event): the
        next packet's turn."""
        if not self.queue:
            self.busy = False
            return
        packet = self._popleft()
        wire = self.wire
        ser = wire.serialization_ns(len(packet))
        wire.transmit(packet, ser)
        sim = self.sim
        sim.push_to(sim.now_ns + ser, self, 0, None)


Handler = Callable[["SimHost", bytes, int], None]  # (host, packet, time_ns)


class SimHost:
    """An end host: sends bytes, records or answers what it receives (its
    event, ``_events``: a packet's arrival, the kind its port)."""

    def __init__(self, sim: Simulator, name: str, mac: str, ip: str) -> None:
        self.sim = sim
        self.name = name
        self.mac = mac
        self.ip = ip
        self.nic: HostNic | None = None
        self.handlers: list[Handler] = []
        self.rx_packets = 0
        self.tx_packets = 0
        self._events = _HostEvents(self)

    def send(self, packet: bytes) -> None:
        if self.nic is None:
            raise RuntimeError(f"host {self.name} has no link")
        self.tx_packets += 1
        self.nic.send(packet)

    def receive(self, port: int, packet: bytes) -> None:
        self.rx_packets += 1
        now = self.sim.now_ns
        for handler in self.handlers:
            handler(self, packet, now)


# SimSwitch and SimHost are final (network.pxd), and a final extension type
# cannot override a method of its base: their events go to a small target
# each, which calls them in C.

class _SwitchEvents(Target):
    __slots__ = ("switch",)

    def __init__(self, switch: SimSwitch) -> None:
        self.switch = switch

    def fire(self, kind: int, arg: Any) -> None:
        if kind == SERVE_INPUT:
            self.switch._serve_input()
        else:
            self.switch.receive(kind, arg)


class _HostEvents(Target):
    __slots__ = ("host",)

    def __init__(self, host: SimHost) -> None:
        self.host = host

    def fire(self, kind: int, arg: Any) -> None:
        self.host.receive(kind, arg)
