"""GPINT on the ``mininet`` target: intbed-switch processes running
gpint.p4, real probes from the monitor (the collector host), a link taken
down mid-session, and SQR recovery completing every session. Needs root,
Mininet and ``intbed-switch``; skipped with the reason otherwise. Nothing
may be left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestration.live.network import live_available
from orchestration.live.options import LiveOptions
from orchestration.network import RunEnv
from orchestration.systems.gpint import GpintRunConfig, run_gpint

_LIVE = live_available("mininet")
live = pytest.mark.skipif(_LIVE is not None, reason=f"live GPINT runs: {_LIVE}")

SMALL = {"n": 6, "hosts": 6, "planner": "gpint-2", "load_pps": 200.0, "duration_s": 6.0,
         "warmup_s": 1.0, "sessions": 2, "mea_count": 2, "recovery": "ft"}


@live
def test_a_link_failed_mid_session_is_recovered(clean: None, tmp_path: Path) -> None:
    path = next(p for p in GpintRunConfig(**SMALL).paths() if len(p) >= 3)
    dead = (path[1], path[2])
    cfg = GpintRunConfig(**{**SMALL, "failed_links": (dead,), "fail_at_s": SMALL["warmup_s"]})
    r = run_gpint(cfg, RunEnv("mininet", live=LiveOptions(results_dir=tmp_path)))
    assert len(r.sessions) == 2, r.sessions
    assert all(row["completed"] for row in r.sessions), r.sessions
    # The link goes down as the first session starts: its probe may still
    # cross it (``ip link set down`` takes a few ms); the second one cannot.
    last = r.sessions[-1]
    assert last["recovery_sent"] >= 1 and last["notices"] >= 1, r.sessions
    assert str(tuple(sorted(dead))) in last["unavailable"], r.sessions
    assert r.malformed_probes == 0 and r.background_sent > 0
