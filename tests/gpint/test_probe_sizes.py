"""Probe sizes on the wire against the paper's probe layout (Simsek et al.,
Fig. 4 and section III-B), computed here from the header widths the paper
gives, not from controller.gpint.probe."""

from __future__ import annotations

from collections import Counter

import pytest

from controller.gpint.monitor import Monitor
from orchestration.systems.gpint import GpintRunConfig, run_gpint

# Section III-B, in bits: Req META (request id 15 + type 1); the SR stack's
# count (16) and per SR header next port (8) + MEA range (16); the DLV
# stack's count (16) and per DLV switch id (8) + queue depth (8) + #MEA
# (16); the measurements' count (16) and, per value, a 32-bit register
# cell (the paper's counters). Ethernet (14 bytes) and IPv4 (20) carry it.
ETH_IP_BITS = (14 + 20) * 8
REQ_META_BITS = 15 + 1
SR_COUNT_BITS, SR_BITS = 16, 8 + 16
DLV_COUNT_BITS, DLV_BITS = 16, 8 + 8 + 16
MEA_COUNT_BITS, VALUE_BITS = 16, 32


def paper_bytes(sr: int, dlv: int, values: int) -> int:
    bits = (ETH_IP_BITS + REQ_META_BITS + SR_COUNT_BITS + SR_BITS * sr + DLV_COUNT_BITS
            + DLV_BITS * dlv + MEA_COUNT_BITS + VALUE_BITS * values)
    assert bits % 8 == 0
    return bits // 8


def test_the_paper_limit_is_its_layout_at_195_hops_with_one_value_each() -> None:
    """Section V-A: 2,200 bytes at most, sized for Euler's 195-switch paths;
    its stacks full with one measurement per switch come within 1 % of it."""
    assert paper_bytes(195, 195, 195) == pytest.approx(2200, rel=0.01)
    assert paper_bytes(195, 195, 195) <= 2200


@pytest.mark.parametrize("planner", ["euler", "gpint-3"])
def test_probes_at_the_monitor_have_the_paper_layouts_size(
        planner: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every probe back at the monitor has popped all its SR headers and
    carries one DLV and ``mea_count`` values per distinct switch of its path
    (a switch measures a request once per session); with no background
    load none is lost, so the sizes are exactly the plan's."""
    sizes: list[int] = []
    receive = Monitor.on_frame

    def spy(self: Monitor, frame: bytes, t: float | None = None) -> None:
        sizes.append(len(frame))
        receive(self, frame, t)

    monkeypatch.setattr(Monitor, "on_frame", spy)
    cfg = GpintRunConfig(n=20, hosts=20, planner=planner, load_pps=0.0, sessions=2,
                         warmup_s=0.1, duration_s=2.0)
    assert cfg.mea_count >= 1  # probes carry measurement values by default
    result = run_gpint(cfg)
    assert result.summary()["failed_probe_ratio"] == 0
    want = Counter()
    for path in cfg.paths():
        switches = len(set(path))
        want[paper_bytes(0, switches, cfg.mea_count * switches)] += cfg.sessions
    assert Counter(sizes) == want
    assert max(sizes) <= 2200
    if planner == "euler":  # a trail over every link: some switches twice
        assert any(len(set(p)) < len(p) for p in cfg.paths())
