"""The sim's collector as a single server (``collector_cost_us``): reports
queue behind each other, keep their arrival stamps, and are handed over in
arrival order when the collector would have finished them."""

from __future__ import annotations

import pytest

from common.clock import VirtualClock
from orchestration.systems.intlabel.config import RunConfig, RunConfigError
from orchestration.systems.intlabel.run import _single_server


def test_reports_queue_behind_a_busy_collector() -> None:
    clock = VirtualClock()
    seen: list[tuple[float, list[float]]] = []
    handler = _single_server(clock, 1e-3,
                             lambda frames: seen.append((clock.now(), [a for _, a in frames])))
    handler([(b"a", 0.0), (b"b", 0.0)])      # two frames: busy until 2 ms
    clock.advance_to(0.0005)
    handler([(b"c", 0.0005)])                # waits for them: done at 3 ms
    clock.advance_to(0.010)
    handler([(b"d", 0.010)])                 # an idle collector: 1 ms
    clock.advance_to(0.1)
    assert [t for t, _ in seen] == pytest.approx([0.002, 0.003, 0.011])
    assert [a for _, a in seen] == [[0.0, 0.0], [0.0005], [0.010]]


def test_a_negative_collector_cost_is_refused() -> None:
    with pytest.raises(RunConfigError, match="collector_cost_us"):
        RunConfig(collector_cost_us=-1.0)


def test_the_collector_cost_defaults_to_the_measured_one() -> None:
    from orchestration.systems.intlabel.config import COLLECTOR_COST_US

    assert RunConfig().collector_cost_s() == pytest.approx(COLLECTOR_COST_US * 1e-6)
    assert RunConfig(collector_cost_us=0.0).collector_cost_s() == 0.0
