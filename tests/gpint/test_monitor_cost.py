"""The monitor's processing cost in virtual time (controller.gpint.cost)
and its count of late probes, on the reference network of gpint_fakenet."""

from __future__ import annotations

import math

import pytest
from gpint_fakenet import FakeNet, VirtualClock, line_topology

from controller.gpint.cost import MEASURED, MonitorCost
from controller.gpint.monitor import Monitor


def snmp_session(n: int, cost: MonitorCost | None, *, delay_s: float = 0.0,
                 timeout_s: float = 10.0) -> Monitor:
    """One session of SNMP-style requests (one switch per path) to ``n``
    switches, the monitor's links taking ``delay_s`` each way."""
    topo = line_topology(n)
    clock = VirtualClock()
    fake = FakeNet(topo, clock, recovery=False, monitor_delay_s=delay_s)
    mon = Monitor(topo, [[s] for s in topo.switches], clock, fake.send_frame, recovery=None,
                  probe_timeout_s=timeout_s, cost=cost)
    fake.attach(mon.on_frame)
    mon.start(1)
    clock.run()
    return mon


@pytest.mark.parametrize("n", [1, 12, 40])
def test_a_busy_monitor_is_a_single_server(n: int) -> None:
    """With instant links the monitor never waits for the network: its n
    requests of c each (c/2 to send, c/2 to receive) end at n c, and the
    session counts from the first probe's send, at c/2."""
    c = 1e-3
    mon = snmp_session(n, MonitorCost.flat(c * 1e6))
    result = mon.results[0]
    assert result.completed
    assert result.latency == pytest.approx(n * c - c / 2)


def test_round_trips_hide_a_cost_smaller_than_their_share() -> None:
    """40 requests, 12 at a time, round trip r = 2 ms: without cost the
    session takes ceil(40 / 12) round trips; a cost under r / 12 per request
    adds only the last replies' handling, at most 12 costs."""
    r, n = 2e-3, 40
    free = snmp_session(n, None, delay_s=r / 2).results[0].latency
    assert free == pytest.approx(math.ceil(n / 12) * r)
    c = r / 24
    paid = snmp_session(n, MonitorCost.flat(c * 1e6), delay_s=r / 2).results[0].latency
    assert free < paid <= free + 12 * c + 1e-12


def test_the_measured_cost_grows_with_the_probe() -> None:
    """A probe over more switches takes longer to build and to parse."""
    sizes = [1, 2, 5, 10, 50, 128, 195]
    for side in (MEASURED.send_s, MEASURED.receive_s):
        times = [side(h) for h in sizes]
        assert all(0 < a < b for a, b in zip(times, times[1:]))


def test_probes_after_their_timeout_are_counted_late() -> None:
    """Links of 2 s each way against a 1 s timeout: every probe fails, and
    every one comes back 4 s after its send."""
    mon = snmp_session(5, None, delay_s=2.0, timeout_s=1.0)
    assert mon.results[0].failed_probes == 5 and not mon.results[0].completed
    assert mon.stats.late == 5
    assert mon.stats.late_after_s == pytest.approx([4.0] * 5)
