"""INT-label on the ``mininet`` target: coverage beside the sim's, Pro's
reaction to a port losing its labels, a switch killed mid-run, Ctrl-C.

The runs need root, Mininet, ``intbed-switch`` and ``redis-server``; without
them they are skipped with the reason. The batched report path and the
reaction-time bookkeeping are checked without a network (the former
against a private redis-server). Every live run must leave nothing behind.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import sys
import threading
from pathlib import Path

import pytest

from common.errors import IntbedError
from experiments.framework import ExperimentError, run_experiment
from orchestration.live.network import live_available
from orchestration.live.options import LiveOptions
from orchestration.network import RunEnv
from orchestration.redis_server import RedisServer, redis_available
from orchestration.systems.intlabel.config import RunConfig
from orchestration.systems.intlabel.run import pro_reactions, run_intlabel
from sinks.intlabel import Collector, MemoryIntDatabase
from sinks.intlabel.redis_store import RedisIntDatabase
from topologies.generators import build_topology

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "intlabel"))
from intlabel_frames import item_bytes, report_frame  # noqa: E402

_LIVE = live_available("mininet")
_REDIS = None if redis_available() else "redis-server not installed: run make install as root"
_SKIP = _LIVE or _REDIS
live = pytest.mark.skipif(_SKIP is not None, reason=f"live INT-label runs: {_SKIP}")
needs_redis = pytest.mark.skipif(_REDIS is not None, reason=_REDIS or "")
MAX_DIFF = 0.05  # acceptance: coverage within 5 percentage points of the sim's



# --------------------------------------------------------------------------- no network


def test_pro_reactions_measure_from_the_update_whose_key_expired() -> None:
    k_t = 0.1
    arrivals = [(0.00, ("s1", 2), True), (0.05, ("s1", 2), True), (0.06, ("s1", 2), False),
                (0.30, ("s1", 2), True), (0.10, ("s2", 1), True)]
    changes = [(0.158, "s1", 2, 48),  # key of the update at 0.05 expired
               (0.301, "s1", 2, 48),  # no raise: S is already 48
               (0.40, "s1", 2, 0),  # a restore is no raise
               (0.45, "s1", 2, 48),  # the update at 0.30 is the one that expired
               (0.31, "s2", 1, 48),  # claimed by the set() of a late update at 0.30
               (0.50, "s3", 1, 48)]  # never updated
    got = [(r["switch"], r["time_s"], None if r["since_update_s"] is None
            else round(r["since_update_s"], 3))
           for r in pro_reactions(arrivals + [(0.30, ("s2", 1), True)], changes, k_t)]
    assert got == [("s1", 0.158, 0.108), ("s1", 0.45, 0.15), ("s2", 0.31, 0.21),
                   ("s3", 0.5, None)]


def test_live_targets_only_for_experiments_that_have_them(tmp_path: Path) -> None:
    with pytest.raises(ExperimentError, match="target 'mininet' is not available for this "
                                              r"experiment \(targets: sim\)"):
        run_experiment("intlabel-fig14", quick=True, target="mininet", out=tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_a_run_environment_knows_its_targets() -> None:
    assert RunEnv("mininet").to_dict()["target"] == "mininet"
    with pytest.raises(IntbedError, match="unknown target 'tofino'"):
        RunEnv("tofino")  # type: ignore[arg-type]


@needs_redis
def test_batched_reports_update_redis_as_the_collector_does_one_by_one() -> None:
    frames = []
    for n in range(40):
        items = [item_bytes(sid, 1, 2 + n % 3, 5, 1000 + (n * 7919) % 97, 3, n, 0,
                            bottom=(i == 0))
                 for i, sid in enumerate((8, 4, 0)[: 1 + n % 3])]
        frames.append(report_frame(items, ip_id=n))
    frames.insert(5, b"\x00" * 30)  # malformed
    mem = MemoryIntDatabase()
    one = Collector(mem, clock=None, max_hop=5)  # type: ignore[arg-type]
    for i, f in enumerate(frames):
        one.feed(f, i * 0.001)
    with RedisServer() as srv:
        db = RedisIntDatabase(srv.url, prefix="t:int:")
        seen: list[tuple[tuple[int, int], int]] = []
        db.on_update(lambda key, rec: seen.append((key, rec.label_time)))
        batched = Collector(db, clock=None, max_hop=5)  # type: ignore[arg-type]
        reports = batched.feed_batch([(f, i * 0.001) for i, f in enumerate(frames[:20])])
        reports += batched.feed_batch([(f, (20 + i) * 0.001) for i, f in enumerate(frames[20:])])
        assert [r.ip_id for r in reports] == list(range(40))
        assert batched.stats == one.stats
        assert list(db.arrivals()) == list(mem.arrivals())
        stored, expected = db.keys(), mem.keys()
        assert {k: db.get(k).label_time for k in stored} == {
            k: mem.get(k).label_time for k in expected}
        assert len(seen) == one.stats.accepted_items
        db.clear()
        db.close()


# --------------------------------------------------------------------------- live runs


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with open(path / "metrics.csv", newline="") as f:
        return {r["mode"]: r for r in csv.DictReader(f)}


@live
def test_fig12_quick_on_mininet_gives_the_sims_coverage(clean: None, tmp_path: Path) -> None:
    """Base A, Base B and Pro at T = T_i = 100 ms (where coverage drops below
    1), 2,000 packets on the INT-label fabric, on both targets."""
    overrides = {"Ts_ms": "100"}
    sim = run_experiment("intlabel-fig12", overrides, quick=True, out=tmp_path / "sim")
    mn = run_experiment("intlabel-fig12", overrides, quick=True, target="mininet",
                        out=tmp_path / "mininet")
    sim_rows, mn_rows = _rows(sim), _rows(mn)
    report = []
    for mode in ("A", "B", "Pro", "Pro-flag", "Pro-prototype"):
        a, b = float(sim_rows[mode]["mean_coverage"]), float(mn_rows[mode]["mean_coverage"])
        report.append(f"{mode}: sim {a:.4f} mininet {b:.4f}")
        assert abs(a - b) <= MAX_DIFF, report
        assert mn_rows[mode]["packets_sent"] == sim_rows[mode]["packets_sent"] == "2000"
    print("\ncoverage, fig12 quick at T = 100 ms: " + "; ".join(report))
    assert json.loads((mn / "config.json").read_text())["target"] == "mininet"
    runs = sorted((mn / "live").iterdir())
    assert [r.name.split("-", 1)[1] for r in runs] == [
        "A-T100ms-seed0", "B-T100ms-seed0", "A-pro-shift-T100ms-seed0",
        "A-pro-flag1-T100ms-seed0", "A-pro-flag10-T100ms-seed0"]
    for run in runs:
        assert (run / "metrics.json").is_file() and not (run / "pcap").exists()
        assert len(list((run / "switches").glob("*.log"))) == 12
        assert sorted(p.name for p in (run / "traffic").glob("*.sent.csv")) == [
            "h1.sent.csv", "h8.sent.csv"]
        assert len(list((run / "traffic").glob("*.recv.csv"))) == 8
    # Algorithm 3's run times its loop's passes on the wall clock: each
    # pass's changes are the run's, and the next pass starts T after its end.
    shift = json.loads((runs[2] / "metrics.json").read_text())
    passes = shift["extra"]["pro_passes_start_s_ms_checked_changes"]
    assert sum(p[3] for p in passes) == len(shift["pro_changes"])
    assert all(p[1] >= 0 and p[2] >= 0 for p in passes)
    starts = [p[0] for p in passes]
    assert all(b - a >= 0.0999 for a, b in zip(starts, starts[1:]))  # T after the last end
    m = json.loads((runs[4] / "metrics.json").read_text())
    rates = {k: round(v["rx_pps"]) for k, v in m["extra"]["switch_rates"].items()}
    print(f"Pro run: {m['reports']} reports, switch rx rates (packets/s): {rates}, "
          f"Redis expiry lag {m['extra']['redis_expiry']['lag']}")


@live
def test_pro_raises_s_on_a_port_whose_labels_are_lost(clean: None, tmp_path: Path) -> None:
    """90% loss on the s1-s2 link of a three-switch line: both directions'
    labels mostly die there. Pro (section 5's flag style) must raise S on
    the two ports within k T plus Redis's measured expiry lag after their
    last update (plus the P4Runtime write and this busy machine's slack)."""
    cfg = RunConfig(topology="line", senders=("h1", "h3"), packets=1500, T_ms=50.0, k=2.0,
                    pro=True, pro_style="flag", link_loss=0.9, lossy_links=(("s1", "s2"),))
    m = run_intlabel(cfg, RunEnv("mininet", live=LiveOptions(results_dir=tmp_path)))
    topo = build_topology("line")
    lossy = {("s1", topo.switch_port_to("s1", "s2")), ("s2", topo.switch_port_to("s2", "s1"))}
    k_t = cfg.k * cfg.T_ms / 1000
    expiry = m.extra["redis_expiry"]
    lag = expiry["lag"]["max"]
    slack = 0.05
    reactions = [r for r in m.extra["pro_reactions"] if r["since_update_s"] is not None]
    on_lossy = [r for r in reactions if (r["switch"], r["port"]) in lossy]
    assert {(r["switch"], r["port"]) for r in on_lossy} == lossy, m.extra["pro_reactions"]
    worst = max(r["since_update_s"] for r in on_lossy)
    print(f"\nPro on the lossy ports: {len(on_lossy)} raises, slowest {worst * 1000:.1f} ms "
          f"after the last update; k T = {k_t * 1000:.0f} ms, Redis expiry lag max "
          f"{lag * 1000:.1f} ms (p50 {expiry['lag']['p50'] * 1000:.1f} ms, "
          f"{expiry['events']} events, {expiry['swept']} by sweep); link losses "
          f"{m.link_losses}")
    for r in on_lossy:
        assert k_t - 0.002 <= r["since_update_s"] <= k_t + lag + slack, r
    assert expiry["events"] > 0
    assert m.link_losses > 0 and m.pro_changes


@live
def test_killing_a_switch_stops_the_run_and_keeps_what_was_gathered(
        clean: None, tmp_path: Path) -> None:
    cfg = RunConfig(topology="line", senders=("h1", "h3"), packets=3000)
    killed: dict[str, int] = {}

    def kill_s2(net) -> None:  # type: ignore[no-untyped-def]
        def kill() -> None:
            pid = net.switches["s2"].process.pid
            killed["pid"] = pid
            os.kill(pid, signal.SIGKILL)
        threading.Timer(0.8, kill).start()

    with pytest.raises(IntbedError) as info:
        run_intlabel(cfg, RunEnv("mininet", live=LiveOptions(results_dir=tmp_path)),
                     on_running=kill_s2)
    message = str(info.value)
    assert message.startswith(f"error: switch s2 (pid {killed['pid']}) exited with code -9")
    [run_dir] = tmp_path.iterdir()
    assert f"(results so far: {run_dir})" in message
    partial = json.loads((run_dir / "partial_metrics.json").read_text())
    assert 0 < partial["packets_sent"] < 3000
    assert partial["extra"]["failure"].startswith("switch s2")
    assert partial["reports"] > 0
    assert (run_dir / "switches" / "s2.log").is_file()
    assert (run_dir / "traffic" / "h1.sent.csv").is_file()


@live
def test_ctrl_c_mid_run_tears_down_and_keeps_what_was_gathered(
        clean: None, tmp_path: Path) -> None:
    cfg = RunConfig(topology="line", senders=("h1", "h3"), packets=400)

    def interrupt(net) -> None:  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_intlabel(cfg, RunEnv("mininet", live=LiveOptions(results_dir=tmp_path)),
                     on_running=interrupt)
    [run_dir] = tmp_path.iterdir()
    partial = json.loads((run_dir / "partial_metrics.json").read_text())
    assert partial["config"]["packets"] == 400 and partial["extra"]["failure"] is None


@live
def test_cli_refuses_an_unreachable_redis(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from intbed.cli import cli

    result = CliRunner().invoke(cli, ["run", "intlabel-fig12", "--quick", "--target", "mininet",
                                      "--redis", "redis://127.0.0.1:1/0",
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "cannot reach Redis at redis://127.0.0.1:1/0" in result.stderr
    assert not (tmp_path / "out").exists()
