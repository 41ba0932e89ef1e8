"""The simulator's queues, links and randomness against arithmetic."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import pytest

from common.seeds import stream
from dataplane.compiler.pipeline import compile_file
from dataplane.runtime.switch import Switch
from dataplane.targets.sim.events import NS_PER_S, Simulator
from dataplane.targets.sim.network import HostNic, SimHost, SimSwitch, Wire

PROGRAM = Path(__file__).with_name("qmeta.p4")
QM = struct.Struct("!IIII6s6sI")


def two_hosts(seed: int = 0, *, rate_pps: float | None = None, depth: int = 64,
              loss: float = 0.0, bandwidth_bps: int = 10**9, delay_ns: int = 10_000,
              clock_offset_us: int = 0):
    """h1 -- s1 -- h2 with the queue settings on s1's port 2 (toward h2)."""
    sim = Simulator()
    sw = SimSwitch(sim, "s1", Switch(compile_file(PROGRAM), seed=seed,
                                     clock=lambda: sim.now_ns // 1000),
                   clock_offset_us=clock_offset_us)
    h1 = SimHost(sim, "h1", "00:00:00:00:00:01", "10.0.0.1")
    h2 = SimHost(sim, "h2", "00:00:00:00:00:02", "10.0.0.2")
    mk = dict(bandwidth_bps=bandwidth_bps, delay_ns=delay_ns)
    h1.nic = HostNic(sim, Wire(sim, sw, 1, loss=0.0, rng=stream(seed, "h1"), **mk))
    h2.nic = HostNic(sim, Wire(sim, sw, 2, loss=0.0, rng=stream(seed, "h2"), **mk))
    sw.add_port(1, Wire(sim, h1, 0, loss=0.0, rng=stream(seed, "s1", 1), **mk))
    sw.add_port(2, Wire(sim, h2, 0, loss=loss, rng=stream(seed, "s1", 2), **mk),
                depth=depth, rate_pps=rate_pps)
    received: list[tuple[int, bytes]] = []
    h2.handlers.append(lambda host, pkt, t: received.append((t, pkt)))
    return sim, sw, h1, received


def frame(seq: int) -> bytes:
    eth = bytes(6) + bytes.fromhex("000000000001") + b"\x88\xb5"
    return eth + bytes(QM.size) + seq.to_bytes(4, "big") + bytes(60)


def send_at_rate(sim: Simulator, host: SimHost, count: int, rate_pps: float) -> None:
    gap = round(NS_PER_S / rate_pps)
    for i in range(count):
        sim.at_ns(i * gap, host.send, frame(i))


def qmeta(pkt: bytes) -> tuple:
    return QM.unpack_from(pkt, 14)


def test_rate_limited_queue_fills_to_depth_and_drops_the_excess() -> None:
    sim, sw, h1, received = two_hosts(rate_pps=1000, depth=64)
    send_at_rate(sim, h1, 2000, 2000)  # 2,000 packets/s for one second
    sim.run()
    port = sw.ports[2]
    delivered = len(received)
    # Served one per millisecond for the second the sender runs, plus the
    # 64 packets still queued when it stops: 2000 - 1064 dropped (+-1 for
    # which of two events at the same instant runs first).
    assert port.drops == 2000 - delivered
    assert abs(delivered - 1064) <= 1
    metas = [qmeta(p) for _, p in received]
    enq = [m[0] for m in metas]
    # enq_qdepth counts the packets already queued (BMv2), so a queue of 64
    # shows at most 63 to the packet that fills it.
    assert max(enq) == 63
    assert port.max_depth == 64
    # At saturation a packet waits behind 63-64 others served 1 ms apart.
    waits = [m[2] for m in metas]
    assert 63_000 <= max(waits) <= 64_000
    # Departures are paced at exactly 1 ms by the queue rate.
    times = [t for t, _ in received]
    gaps = {b - a for a, b in zip(times[100:200], times[101:201])}
    assert gaps == {1_000_000}
    # deq_qdepth: what is left behind; the last packet leaves an empty queue.
    assert metas[-1][1] == 0


@pytest.mark.parametrize("offset_us", [0, 12_345])
def test_queue_timestamps_are_the_instants_of_ingress_and_departure(offset_us: int) -> None:
    """enq_timestamp is the switch's clock when ingress ran (the packet is
    enqueued that instant), egress_global_timestamp its clock at departure
    (when the frame starts onto the link), deq_timedelta the whole
    microseconds between the two instants."""
    sim, sw, h1, received = two_hosts(rate_pps=1000, depth=64, clock_offset_us=offset_us)
    send_at_rate(sim, h1, 300, 2000)
    sim.run()
    ser = len(frame(0)) * 8 * NS_PER_S // 10**9
    served_at_once = queued = 0
    for t, pkt in received:
        _, _, delta, enq_ts, ingress_ts, egress_ts, _ = qmeta(pkt)
        departure_ns = t - ser - 10_000
        assert enq_ts == int.from_bytes(ingress_ts, "big")
        assert int.from_bytes(egress_ts, "big") == departure_ns // 1000 + offset_us
        arrival_ns = (int.from_bytes(ingress_ts, "big") - offset_us) * 1000
        assert departure_ns - arrival_ns - 1000 < delta * 1000 <= departure_ns - arrival_ns + 1000
        served_at_once += delta == 0 and int.from_bytes(egress_ts, "big") == enq_ts
        queued += delta > 0
    assert served_at_once >= 1 and queued > 100


def test_unloaded_path_delay_is_serialization_plus_propagation() -> None:
    sim, sw, h1, received = two_hosts(bandwidth_bps=10**8, delay_ns=50_000)
    sim.at_ns(0, h1.send, frame(0))
    sim.run()
    (t, pkt), = received
    size = len(frame(0))
    ser = size * 8 * NS_PER_S // 10**8
    assert t == 2 * (ser + 50_000)
    assert qmeta(pkt)[2] == 0  # no queueing


def test_link_loss_is_binomial() -> None:
    n, p = 10_000, 0.2
    sim, sw, h1, received = two_hosts(seed=7, loss=p)
    send_at_rate(sim, h1, n, 100_000)
    sim.run()
    lost = n - len(received)
    sd = math.sqrt(n * p * (1 - p))
    assert abs(lost - n * p) <= 2.576 * sd  # binomial 99% interval
    assert sw.ports[2].wire.lost == lost


def run_log(seed: int) -> bytes:
    sim, sw, h1, received = two_hosts(seed=seed, loss=0.1)
    send_at_rate(sim, h1, 500, 10_000)
    sim.run()
    return b"".join(t.to_bytes(8, "big") + pkt for t, pkt in received)


def test_same_seed_same_bytes_other_seed_differs() -> None:
    a, b, c = run_log(3), run_log(3), run_log(4)
    assert a == b
    assert a != c


def test_the_switch_follows_its_engine_when_it_is_replaced_or_wrapped() -> None:
    """The sim switch holds its engine's ingress and egress instead of
    looking them up per hop; wrapping them on the engine, or giving the
    switch another engine, must still reach every packet."""
    sim, sw, h1, received = two_hosts()
    seen: list[str] = []
    first = sw.engine

    def wrap(engine: Switch, label: str) -> None:
        ingress, egress = engine.ingress, engine.egress

        def recorded_ingress(*args, **kw):  # noqa: ANN002, ANN003, ANN202
            seen.append(f"{label} in")
            return ingress(*args, **kw)

        def recorded_egress(*args, **kw):  # noqa: ANN002, ANN003, ANN202
            seen.append(f"{label} out")
            return egress(*args, **kw)

        engine.ingress = recorded_ingress
        engine.egress = recorded_egress

    sim.at_ns(0, h1.send, frame(0))
    sim.run()
    wrap(first, "first")
    sim.at_ns(sim.now_ns + 1000, h1.send, frame(1))
    sim.run()
    second = Switch(compile_file(PROGRAM), clock=lambda: sim.now_ns // 1000)
    wrap(second, "second")
    sw.engine = second
    sim.at_ns(sim.now_ns + 1000, h1.send, frame(2))
    sim.run()
    assert seen == ["first in", "first out", "second in", "second out"]
    assert len(received) == 3
