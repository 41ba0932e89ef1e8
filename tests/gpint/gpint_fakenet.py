"""A small reference network for the monitoring module's tests: a virtual
clock, and switches that follow docs/gpint_format.md and SQR as the paper
describes them, with per-link loss from a seeded RNG, dead links and dead
switches.

A switch receiving a measurement probe that it has not measured in the
probe's session (IPv4 identification) sends a feedback back out of the
ingress port (recovery on), inserts its DLV and values, pops its SR entry
and sends the probe on (or to the monitor after the last entry); with
recovery on it keeps a copy per egress port until the next switch's
feedback releases it, and sends the copy to the monitor as a 0x21 notice
when t_f passes first. A probe it has measured in that session already is
only popped and passed on: no values, DLV, feedback or copy. Links between
switches lose packets; the monitor's links do not (the paper's degraded
links exclude them). Unlike gpint.p4 the copy store is unbounded.
"""

from __future__ import annotations

import heapq
import random
from collections import Counter, deque
from collections.abc import Callable, Iterable
from typing import Any

from controller.gpint.probe import (
    KIND_FEEDBACK,
    KIND_NOTICE,
    KIND_PROBE,
    Dlv,
    Probe,
    encode,
    parse_probe,
)
from topologies.model import Topology

MONITOR_PORT = 500


class VirtualClock:
    """``Clock`` in virtual seconds over a heap; ties run in call order."""

    def __init__(self) -> None:
        self.t = 0.0
        self._heap: list[tuple[float, int, Callable[..., Any], tuple[Any, ...]]] = []
        self._seq = 0

    def now(self) -> float:
        return self.t

    def call_later(self, delay_s: float, fn: Callable[..., Any], *args: Any) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (self.t + delay_s, self._seq, fn, args))

    def run(self, until: float | None = None, stop: Callable[[], bool] | None = None) -> None:
        """Run events in time order up to ``until``, or until ``stop()``."""
        heap = self._heap
        while heap:
            if until is not None and heap[0][0] > until:
                self.t = until
                return
            t, _, fn, args = heapq.heappop(heap)
            self.t = t
            fn(*args)
            if stop is not None and stop():
                return


def counter_value(device_id: int, index: int) -> int:
    """The fake's counter ``index`` on switch ``device_id``."""
    return device_id * 1000 + index


def one_link(a: str, b: str) -> frozenset[str]:
    return frozenset((a, b))


class FakeNet:
    """Switches of ``topo`` on ``clock``; ``attach(monitor.on_frame)`` and
    pass ``send_frame`` to the monitor.

    ``slow_links``: links every packet takes ``slow_s`` to cross (Fig. 7's
    congested link). ``sent_to``: how many probes the monitor sent to each
    (switch, request id).
    """

    def __init__(self, topo: Topology, clock: VirtualClock, *, recovery: bool = True,
                 t_f: float = 1.5, loss: float = 0.0, seed: int = 1,
                 dead_links: Iterable[frozenset[str]] = (), dead_switches: Iterable[str] = (),
                 slow_links: Iterable[frozenset[str]] = (), slow_s: float = 0.0,
                 link_delay_s: float = 1e-4, monitor_delay_s: float = 5e-5) -> None:
        self.topo = topo
        self.clock = clock
        self.recovery = recovery
        self.t_f = t_f
        self.loss = loss
        self.rng = random.Random(seed)
        self.dead_links = set(dead_links)
        self.dead_switches = set(dead_switches)
        self.slow_links = set(slow_links)
        self.slow_s = slow_s
        self.link_delay_s = link_delay_s
        self.monitor_delay_s = monitor_delay_s
        self.peers = {s: {p: (peer, pp) for p, peer, pp in topo.port_peers(s)}
                      for s in topo.switches}
        self.ids = {s: spec.device_id for s, spec in topo.switches.items()}
        # The loop check: (switch, request id) -> session it was last measured in.
        self.seen: dict[tuple[str, int], int] = {}
        self.repeats = 0
        self.deliver: Callable[[bytes, float], None] | None = None
        # SQR copies: (switch, request id, egress port) -> pending copies' tokens.
        self.copies: dict[tuple[str, int, int], deque[int]] = {}
        self._token = 0
        self.sent_to: Counter[tuple[str, int]] = Counter()
        self.dropped = 0
        self.outstanding: set[int] = set()  # ids sent by the monitor, no 0x17 back yet
        self.peak_outstanding = 0

    def attach(self, deliver: Callable[[bytes, float], None]) -> None:
        self.deliver = deliver

    # ----------------------------------------------------------- monitor side

    def send_frame(self, switch: str, frame: bytes) -> None:
        p = parse_probe(frame)
        self.sent_to[(switch, p.request_id)] += 1
        if p.kind == KIND_PROBE:
            self.outstanding.add(p.request_id)
            self.peak_outstanding = max(self.peak_outstanding, len(self.outstanding))
        self.clock.call_later(self.monitor_delay_s, self._arrive, switch, MONITOR_PORT, frame)

    def _to_monitor(self, frame: bytes) -> None:
        p = parse_probe(frame)
        if p.kind == KIND_PROBE:
            self.outstanding.discard(p.request_id)
        self.clock.call_later(self.monitor_delay_s, self._deliver, frame)

    def _deliver(self, frame: bytes) -> None:
        assert self.deliver is not None
        self.deliver(frame, self.clock.now())

    # ------------------------------------------------------------ switch side

    def _transmit(self, switch: str, port: int, frame: bytes) -> None:
        if port == MONITOR_PORT:
            self._to_monitor(frame)
            return
        peer, peer_port = self.peers[switch][port]
        key = one_link(switch, peer)
        if key in self.dead_links or (self.loss and self.rng.random() < self.loss):
            self.dropped += 1
            return
        delay = self.slow_s if key in self.slow_links else self.link_delay_s
        self.clock.call_later(delay, self._arrive, peer, peer_port, frame)

    def _arrive(self, switch: str, in_port: int, frame: bytes) -> None:
        if switch in self.dead_switches:
            return
        p = parse_probe(frame)
        if p.kind == KIND_FEEDBACK:
            pending = self.copies.get((switch, p.request_id, in_port))
            if pending:
                pending.popleft()
            return
        if p.kind != KIND_PROBE or not p.sr:
            return
        if self.seen.get((switch, p.request_id)) == p.addrs.ident:
            self.repeats += 1
            entry = p.sr.pop(0)
            self._transmit(switch, entry.next_port if p.sr else MONITOR_PORT, encode(p))
            return
        self.seen[(switch, p.request_id)] = p.addrs.ident
        if self.recovery:
            fb = encode(Probe(KIND_FEEDBACK, p.request_id, p.request_type, addrs=p.addrs))
            self._transmit(switch, in_port, fb)
        entry = p.sr.pop(0)
        sid = self.ids[switch]
        device = self.topo.switches[switch].device_id
        values = [counter_value(device, i)
                  for i in range(entry.mea_start, entry.mea_start + entry.mea_count)]
        p.dlv.append(Dlv(sid, 0, len(values)))
        p.values.extend(values)
        if not p.sr:
            self._transmit(switch, MONITOR_PORT, encode(p))
            return
        if self.recovery:
            self._token += 1
            key = (switch, p.request_id, entry.next_port)
            self.copies.setdefault(key, deque()).append(self._token)
            notice = encode(Probe(KIND_NOTICE, p.request_id, p.request_type, list(p.sr),
                                  list(p.dlv), list(p.values), p.addrs))
            self.clock.call_later(self.t_f, self._copy_timeout, key, self._token, notice)
        self._transmit(switch, entry.next_port, encode(p))

    def _copy_timeout(self, key: tuple[str, int, int], token: int, notice: bytes) -> None:
        pending = self.copies.get(key)
        if pending and token in pending:
            pending.remove(token)
            self._to_monitor(notice)


def line_topology(n: int, *, name: str = "line") -> Topology:
    """Switches s1..sn in a line (s1 port 1 toward s2, and so on)."""
    topo = Topology(name)
    for i in range(1, n + 1):
        topo.add_switch(f"s{i}", i)
    for i in range(1, n):
        topo.add_link(f"s{i}", f"s{i + 1}")
    return topo


def grid_topology(rows: int, cols: int) -> Topology:
    """A rows x cols grid of switches named g<row>_<col>."""
    topo = Topology("grid")
    for r in range(rows):
        for c in range(cols):
            topo.add_switch(f"g{r}_{c}", r * cols + c + 1)
    for r in range(rows):
        for c in range(cols):
            if c + 1 < cols:
                topo.add_link(f"g{r}_{c}", f"g{r}_{c + 1}")
            if r + 1 < rows:
                topo.add_link(f"g{r}_{c}", f"g{r + 1}_{c}")
    return topo
