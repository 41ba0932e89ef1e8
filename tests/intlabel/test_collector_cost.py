"""The sim's collector as a single server (``collector_time``): reports queue
behind each other, keep their arrival stamps and are handed over in arrival
order when the collector would have finished them; the measured model
prices INT items (dearer while the traffic runs) and Pro's changes of S."""

from __future__ import annotations

import pytest
from intlabel_frames import item_bytes, report_frame

from common.clock import VirtualClock
from controller.intlabel import ShiftChange
from orchestration.systems.intlabel.collector_time import (
    CollectorCost,
    CollectorServer,
    report_items,
)
from orchestration.systems.intlabel.config import (
    COLLECTOR_CHANGE_US,
    COLLECTOR_COST_US,
    COLLECTOR_ITEM_IDLE_US,
    COLLECTOR_ITEM_US,
    RunConfig,
    RunConfigError,
)
from sinks.intlabel.report import parse_report


def frame(n: int) -> bytes:
    items = [item_bytes(i + 1, 1, 2, 10 * i, 10 * i + 5, 3, 0, 0, bottom=i == n - 1)
             for i in range(n)]
    return report_frame(items, max_hop=8)


def write(t: float) -> ShiftChange:
    return ShiftChange(t, "s1", 1, 0)


def recorder(clock: VirtualClock) -> tuple[list[tuple[float, list[float]]], object]:
    seen: list[tuple[float, list[float]]] = []
    return seen, lambda frames: seen.append((clock.now(), [a for _, a in frames]))


@pytest.mark.parametrize("n", [1, 3, 8])
def test_items_are_counted_as_the_parser_counts_them(n: int) -> None:
    f = frame(n)
    assert report_items(f) == len(parse_report(f).items) == n


def test_reports_queue_behind_a_busy_collector() -> None:
    clock = VirtualClock()
    seen, handler = recorder(clock)
    server = CollectorServer(clock, CollectorCost(frame_s=1e-3), handler)
    server([(b"a", 0.0), (b"b", 0.0)])       # two frames: busy until 2 ms
    clock.advance_to(0.0005)
    server([(b"c", 0.0005)])                 # waits for them: done at 3 ms
    clock.advance_to(0.010)
    server([(b"d", 0.010)])                  # an idle collector: 1 ms
    clock.advance_to(0.1)
    assert [t for t, _ in seen] == pytest.approx([0.002, 0.003, 0.011])
    assert [a for _, a in seen] == [[0.0, 0.0], [0.0005], [0.010]]
    assert server.busy_s == pytest.approx(0.004)


def test_items_cost_more_while_the_traffic_runs() -> None:
    clock = VirtualClock()
    seen, handler = recorder(clock)
    server = CollectorServer(clock, CollectorCost(item_s=1e-3, item_idle_s=1e-4), handler)
    server.traffic_end_s = 0.05
    server([(frame(3), 0.0), (frame(2), 0.0)])   # 5 items at 1 ms
    clock.advance_to(0.1)
    server([(frame(4), 0.1)])                    # 4 items at 0.1 ms, after the end
    clock.advance_to(0.2)
    assert [t for t, _ in seen] == pytest.approx([0.005, 0.1004])


def test_changes_of_s_keep_the_collector_busy() -> None:
    clock = VirtualClock()
    seen, handler = recorder(clock)
    changes: list[ShiftChange] = []
    server = CollectorServer(clock, CollectorCost(item_s=1e-3, change_s=0.01), handler,
                             lambda: changes)
    changes.extend([write(0.0), write(0.002)])   # two writes: busy 0-10 ms, 10-20 ms
    clock.advance_to(0.004)
    server([(frame(1), 0.004)])                  # starts when they are done
    clock.advance_to(0.05)
    changes.append(write(0.05))                  # an idle collector's write: until 60 ms
    clock.advance_to(0.055)
    server([(frame(2), 0.055)])
    clock.advance_to(0.2)
    assert [t for t, _ in seen] == pytest.approx([0.021, 0.062])
    assert server.busy_s == pytest.approx(0.033)


def test_a_free_collector_costs_nothing() -> None:
    assert CollectorCost().free
    assert RunConfig(collector_model="free").collector_cost().free


def test_the_collector_model_defaults_to_the_measured_one() -> None:
    cost = RunConfig().collector_cost()
    assert cost == CollectorCost(item_s=COLLECTOR_ITEM_US * 1e-6,
                                 item_idle_s=COLLECTOR_ITEM_IDLE_US * 1e-6,
                                 change_s=COLLECTOR_CHANGE_US * 1e-6)
    # What a batch costs while the traffic runs exceeds what it costs after.
    assert COLLECTOR_ITEM_US > COLLECTOR_ITEM_IDLE_US > 0


def test_the_per_frame_model_keeps_its_price() -> None:
    assert RunConfig(collector_model="per-frame").collector_cost() == CollectorCost(
        frame_s=COLLECTOR_COST_US * 1e-6)
    assert RunConfig(collector_model="per-frame",
                     collector_cost_us=500.0).collector_cost().frame_s == pytest.approx(5e-4)


@pytest.mark.parametrize("kwargs, match", [
    ({"collector_model": "per-frame", "collector_cost_us": -1.0}, "must not be negative"),
    ({"collector_cost_us": 100.0}, "per-frame model"),
    ({"collector_model": "fast"}, "collector_model must be one of"),
])
def test_bad_collector_settings_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(RunConfigError, match=match):
        RunConfig(**kwargs)
