"""When packets are sent: constant-rate, Poisson and on-off schedules,
packet-size mixes, destinations.

A ``Schedule`` is a precomputed, time-ordered list of send events held as
flat numpy arrays, so it can be iterated again and again, merged with other
schedules and handed to the simulator cheaply. Every random choice comes
from a ``numpy.random.Generator`` seeded by the caller (a run derives one
seed per stream, and a schedule numbered children of it, see
``common.seeds``); nothing global is touched, so the same seed gives the
same events bit for bit.

Times are integer microseconds; an event's ``size`` is its Ethernet frame
length in bytes (what a link serializes), and its ``dest`` is whatever the
schedule was given: a host name, a ``FlowSpec``, an index.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from fractions import Fraction
from itertools import repeat
from typing import NamedTuple

import numpy as np

from common.seeds import child_seed
from traffic.errors import TrafficError
from traffic.packets import FlowSpec, HostAddr, header_len

US_PER_S = 1_000_000
Seed = int | np.random.SeedSequence


class SendEvent(NamedTuple):
    """One packet to send: when, to whom, its sequence number and size."""

    time_us: int
    dest: object
    seq: int
    size: int


class Schedule:
    """Send events sorted by time (ties keep their construction order)."""

    __slots__ = ("times_us", "dest_index", "seqs", "sizes", "dests")

    def __init__(
        self,
        times_us: np.ndarray,
        dest_index: np.ndarray,
        seqs: np.ndarray,
        sizes: np.ndarray,
        dests: tuple[object, ...],
    ) -> None:
        n = len(times_us)
        if not len(dest_index) == len(seqs) == len(sizes) == n:
            raise TrafficError("schedule columns differ in length")
        self.times_us = np.asarray(times_us, dtype=np.int64)
        self.dest_index = np.asarray(dest_index, dtype=np.int64)
        self.seqs = np.asarray(seqs, dtype=np.int64)
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.dests = tuple(dests)

    @classmethod
    def from_times(
        cls, times_us: np.ndarray, size: int, dest: object = None, seq_start: int = 0
    ) -> Schedule:
        """Events at ``times_us``, all of ``size`` bytes, sequence numbers
        counting from ``seq_start``; ``dest`` is one destination or a
        ``RandomDestinations`` that picks one per event."""
        n = len(times_us)
        seqs = np.arange(seq_start, seq_start + n, dtype=np.int64)
        sizes = np.full(n, size, dtype=np.int64)
        if isinstance(dest, RandomDestinations):
            return cls(times_us, dest.pick(n), seqs, sizes, dest.dests)
        return cls(times_us, np.zeros(n, dtype=np.int64), seqs, sizes, (dest,))

    def __len__(self) -> int:
        return len(self.times_us)

    def __iter__(self) -> Iterator[SendEvent]:
        dests = self.dests
        if len(dests) == 1:
            dest_col: Iterator[object] = repeat(dests[0])
        else:
            dest_col = map(dests.__getitem__, self.dest_index.tolist())
        return map(
            SendEvent,
            self.times_us.tolist(),
            dest_col,
            self.seqs.tolist(),
            self.sizes.tolist(),
        )

    @property
    def total_bytes(self) -> int:
        return int(self.sizes.sum())

    def rate_pps(self, duration_us: int) -> float:
        return len(self) * US_PER_S / duration_us

    def rate_bps(self, duration_us: int) -> float:
        return self.total_bytes * 8 * US_PER_S / duration_us


def merge(*schedules: Schedule) -> Schedule:
    """All events of ``schedules`` in time order; events at the same time
    keep the order of the arguments, then their own order."""
    if not schedules:
        return Schedule(*(np.zeros(0, dtype=np.int64),) * 4, ())
    dests: list[object] = []
    index_parts = []
    for s in schedules:
        index_parts.append(s.dest_index + len(dests))
        dests.extend(s.dests)
    times = np.concatenate([s.times_us for s in schedules])
    order = np.argsort(times, kind="stable")
    return Schedule(
        times[order],
        np.concatenate(index_parts)[order],
        np.concatenate([s.seqs for s in schedules])[order],
        np.concatenate([s.sizes for s in schedules])[order],
        tuple(dests),
    )


def _exact(value: float | int | Fraction, what: str) -> Fraction:
    """``value`` as an exact fraction: floats by their decimal text, so a
    rate of 0.1 is one tenth, not the nearest binary fraction."""
    frac = Fraction(str(value)) if isinstance(value, float) else Fraction(value)
    if frac <= 0:
        raise TrafficError(f"{what} must be positive, not {value!r}")
    return frac


def _check_window(start_us: int, duration_us: int) -> None:
    if start_us < 0 or duration_us < 0:
        raise TrafficError("start and duration must not be negative")


def constant_rate(
    *,
    duration_us: int,
    packet_size: int,
    rate_pps: float | None = None,
    bitrate_bps: float | None = None,
    start_us: int = 0,
    dest: object = None,
    seq_start: int = 0,
) -> Schedule:
    """Packets evenly spaced over ``[start_us, start_us + duration_us)``.

    Give ``rate_pps`` or ``bitrate_bps`` (with ``packet_size`` in frame
    bytes, the rate is ``bitrate / (8 * packet_size)``). Packet i leaves at
    ``start + floor(i * 1e6 / rate)`` computed exactly, so the count is
    exactly ``ceil(duration * rate / 1e6)``.
    """
    _check_window(start_us, duration_us)
    if packet_size <= 0:
        raise TrafficError(f"packet size must be positive, not {packet_size!r}")
    if (rate_pps is None) == (bitrate_bps is None):
        raise TrafficError("give exactly one of rate_pps and bitrate_bps")
    if rate_pps is not None:
        rate = _exact(rate_pps, "packet rate")
    else:
        rate = _exact(bitrate_bps, "bit rate") / (8 * packet_size)  # type: ignore[arg-type]
    # t_i = start + floor(i * a / b), with a / b = 1e6 / rate, the period.
    period = US_PER_S / rate
    a, b = period.numerator, period.denominator
    count = math.ceil(duration_us / period)
    if a < (1 << 62) // max(count, 1):
        times = np.arange(count, dtype=np.int64) * a // b + start_us
    else:
        times = np.array([start_us + i * a // b for i in range(count)], dtype=np.int64)
    return Schedule.from_times(times, packet_size, dest, seq_start)


def poisson(
    *,
    rate_pps: float,
    duration_us: int,
    seed: Seed,
    packet_size: int,
    start_us: int = 0,
    dest: object = None,
    seq_start: int = 0,
) -> Schedule:
    """Poisson arrivals of mean ``rate_pps`` over ``[start_us, start_us +
    duration_us)``: exponential gaps, times truncated to whole microseconds
    (truncation keeps exactly the arrivals before the end)."""
    _check_window(start_us, duration_us)
    if packet_size <= 0:
        raise TrafficError(f"packet size must be positive, not {packet_size!r}")
    if not rate_pps > 0:
        raise TrafficError(f"packet rate must be positive, not {rate_pps!r}")
    rng = np.random.default_rng(seed)
    arrivals = _poisson_arrivals(rng, US_PER_S / rate_pps, 0.0, float(duration_us))
    times = np.floor(arrivals).astype(np.int64) + start_us
    return Schedule.from_times(times, packet_size, dest, seq_start)


def _poisson_arrivals(rng: np.random.Generator, mean_gap: float, start: float,
                      end: float) -> np.ndarray:
    """Poisson arrival times in ``[start, end)``: exponential gaps drawn in
    chunks sized to hold them all but rarely (six sigma over the mean)."""
    expected = (end - start) / mean_gap
    chunk = int(expected + 6 * math.sqrt(expected) + 16)
    parts: list[np.ndarray] = []
    last = start
    while True:
        arrivals = last + np.cumsum(rng.exponential(mean_gap, chunk))
        inside = arrivals[arrivals < end]
        parts.append(inside)
        if len(inside) < chunk:
            return np.concatenate(parts)
        last = float(arrivals[-1])


def on_off(
    *,
    rate_pps: float,
    mean_on_us: float,
    mean_off_us: float,
    duration_us: int,
    seed: Seed,
    packet_size: int,
    start_us: int = 0,
    dest: object = None,
    seq_start: int = 0,
) -> Schedule:
    """A source that alternates between on and off periods, each drawn
    exponential with its mean (the classic model of bursty traffic, e.g.
    an application that talks in bursts); during an on period packets are
    Poisson at ``rate_pps``, off periods send nothing. The source starts in
    a period drawn by the stationary chance of being on. The mean rate is
    ``rate_pps * mean_on / (mean_on + mean_off)``."""
    _check_window(start_us, duration_us)
    if packet_size <= 0:
        raise TrafficError(f"packet size must be positive, not {packet_size!r}")
    if not rate_pps > 0 or not mean_on_us > 0 or not mean_off_us >= 0:
        raise TrafficError("on-off needs a positive rate and on period, and an off period "
                           "of at least 0")
    if mean_off_us == 0:  # always on: plain Poisson
        return poisson(rate_pps=rate_pps, duration_us=duration_us, seed=seed,
                       packet_size=packet_size, start_us=start_us, dest=dest,
                       seq_start=seq_start)
    rng = np.random.default_rng(seed)
    on = bool(rng.random() < mean_on_us / (mean_on_us + mean_off_us))
    t = 0.0
    parts: list[np.ndarray] = []
    gap = US_PER_S / rate_pps
    while t < duration_us:
        end = min(t + rng.exponential(mean_on_us if on else mean_off_us), float(duration_us))
        if on:
            parts.append(_poisson_arrivals(rng, gap, t, end))
        t = end
        on = not on
    times_us = (np.floor(np.concatenate(parts)).astype(np.int64) if parts
                else np.zeros(0, dtype=np.int64)) + start_us
    return Schedule.from_times(times_us, packet_size, dest, seq_start)


def with_sizes(schedule: Schedule, mix: Sequence[tuple[int, float]], seed: Seed) -> Schedule:
    """``schedule`` with each packet's frame size drawn from ``mix``, pairs
    of (bytes, weight), e.g. the simple IMIX ((64, 7), (576, 4), (1500, 1))."""
    if not mix or any(size < 64 or not weight > 0 for size, weight in mix):
        raise TrafficError("a size mix is (bytes >= 64, weight > 0) pairs")
    sizes = np.asarray([s for s, _ in mix], dtype=np.int64)
    weights = np.asarray([w for _, w in mix], dtype=np.float64)
    pick = np.random.default_rng(seed).choice(len(sizes), size=len(schedule),
                                              p=weights / weights.sum())
    return Schedule(schedule.times_us, schedule.dest_index, schedule.seqs, sizes[pick],
                    schedule.dests)


def mean_size(mix: Sequence[tuple[int, float]]) -> float:
    total = sum(w for _, w in mix)
    return sum(s * w for s, w in mix) / total


class RandomDestinations:
    """Picks a destination per packet, uniformly from ``dests``, from its own
    seeded stream (successive picks continue the stream)."""

    __slots__ = ("dests", "_rng")

    def __init__(self, dests: Sequence[object], seed: Seed) -> None:
        if not dests:
            raise TrafficError("random destinations need at least one destination")
        self.dests = tuple(dests)
        self._rng = np.random.default_rng(seed)

    def pick(self, n: int) -> np.ndarray:
        """Indices into ``dests`` for the next ``n`` packets."""
        return self._rng.integers(0, len(self.dests), size=n, dtype=np.int64)


def random_destinations(dests: Sequence[object], seed: Seed) -> RandomDestinations:
    return RandomDestinations(dests, seed)


def flows_to_random_servers(
    src_host: HostAddr,
    servers: Sequence[HostAddr],
    rate_bps: float,
    packet_size: int,
    duration_us: int,
    seed: Seed,
    *,
    proto: str = "udp",
    sport: int = 10000,
    dport: int = 20000,
    start_us: int = 0,
    arrivals: str = "constant",
    gateway_mac: str | None = None,
    dscp: int = 0,
    ttl: int = 64,
    size_mix: Sequence[tuple[int, float]] | None = None,
    on_off_us: tuple[float, float] = (10_000.0, 10_000.0),
) -> Schedule:
    """INT-label's workload: a sender at ``rate_bps`` picking a random server
    for every packet. Events carry the ``FlowSpec`` of their (sender,
    server) flow as ``dest``; a ``Sender`` turns them into frames.

    ``packet_size`` is the frame length, or ``size_mix`` gives each frame
    its length from (bytes, weight) pairs (``rate_bps`` is then met on
    average); ``arrivals`` is ``"constant"``, ``"poisson"`` or
    ``"onoff"`` (bursts: exponential on and off periods of the means in
    ``on_off_us``, at the rate that makes ``rate_bps`` on average); the
    sender itself is never a destination. Frames go to the server's MAC
    unless ``gateway_mac`` is given (a routed first hop).
    """
    targets = [s for s in servers if s.ip != src_host.ip]
    if not targets:
        raise TrafficError(f"no server other than the sender {src_host.ip}")
    payload = packet_size - header_len(proto)
    flows = [
        FlowSpec(
            src_host.mac,
            gateway_mac or s.mac,
            src_host.ip,
            s.ip,
            proto,
            sport,
            dport,
            payload,
            dscp=dscp,
            ttl=ttl,
        )
        for s in targets
    ]
    chooser = RandomDestinations(flows, child_seed(seed, 0))
    if size_mix is not None:
        # The arrivals are those of the mix's mean size; sizes come after.
        packet_size = round(mean_size(size_mix))
    if arrivals == "constant":
        sched = constant_rate(
            duration_us=duration_us,
            packet_size=packet_size,
            bitrate_bps=rate_bps,
            start_us=start_us,
            dest=chooser,
        )
    elif arrivals == "poisson":
        pps = float(_exact(rate_bps, "bit rate") / (8 * packet_size))
        sched = poisson(
            rate_pps=pps,
            duration_us=duration_us,
            seed=child_seed(seed, 1),
            packet_size=packet_size,
            start_us=start_us,
            dest=chooser,
        )
    elif arrivals == "onoff":
        on_us, off_us = on_off_us
        pps = float(_exact(rate_bps, "bit rate") / (8 * packet_size))
        sched = on_off(
            rate_pps=pps * (on_us + off_us) / on_us,
            mean_on_us=on_us,
            mean_off_us=off_us,
            duration_us=duration_us,
            seed=child_seed(seed, 1),
            packet_size=packet_size,
            start_us=start_us,
            dest=chooser,
        )
    else:
        raise TrafficError(f"arrivals {arrivals!r} is not 'constant', 'poisson' or 'onoff'")
    if size_mix is not None:
        sched = with_sizes(sched, size_mix, child_seed(seed, 2))
    return sched
