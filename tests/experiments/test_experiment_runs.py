"""Every INT-label experiment runs (quick), writes its results and lands
its headline figures within physically meaningful bounds; runs are
reproducible; bad input is one clear line. (GPINT's figures, whose quick
runs take minutes, have their own reduced runs in test_gpint_experiments.py.)"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from experiments.framework import load_all, run_experiment
from experiments.stats import VERDICTS
from intbed.cli import cli

NAMES = sorted(name for name in load_all() if name.startswith("intlabel-"))
FILES = ("config.json", "metrics.csv", "figure.png", "figure.svg", "summary.md", "summary.json")


def test_every_intlabel_figure_is_registered() -> None:
    expected = {f"intlabel-fig{n}" for n in range(6, 22)} - {"intlabel-fig22"}
    assert expected <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_quick_run_writes_results(tmp_path: Path, name: str) -> None:
    out = run_experiment(name, quick=True, out=tmp_path / name, jobs=1)
    for f in FILES:
        assert (out / f).stat().st_size > 0, f
    summary = json.loads((out / "summary.json").read_text())
    assert summary["headlines"], "an experiment states its headline numbers"
    for h in summary["headlines"]:
        assert {"name", "ours", "paper", "unit", "verdict"} <= set(h)
        assert h["verdict"] in VERDICTS
    config = json.loads((out / "config.json").read_text())
    assert config["experiment"] == name and config["quick"] is True
    heads = {h["name"]: h for h in summary["headlines"]}
    BOUNDS[name](Run(heads, _read_rows(out / "metrics.csv")))


def test_every_experiment_has_headline_bounds() -> None:
    assert set(BOUNDS) == set(NAMES)


def test_same_seed_same_csv_other_seed_differs(tmp_path: Path) -> None:
    a = run_experiment("intlabel-fig7", quick=True, seed=5, out=tmp_path / "a")
    b = run_experiment("intlabel-fig7", quick=True, seed=5, out=tmp_path / "b")
    c = run_experiment("intlabel-fig7", quick=True, seed=6, out=tmp_path / "c")
    assert (a / "metrics.csv").read_bytes() == (b / "metrics.csv").read_bytes()
    assert (a / "metrics.csv").read_bytes() != (c / "metrics.csv").read_bytes()


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["run", "intlabel-fig99"], "unknown experiment 'intlabel-fig99'"),
        (["run", "intlabel-fig9", "--set", "T_ms=0"], "T must be positive"),
        (["run", "intlabel-fig18", "--set", "ratios=0.5,1.5"], "T1 > T"),
        (["run", "intlabel-fig9", "--set", "max_hop=0"], "MAX_hop"),
        (["run", "intlabel-fig9", "--set", "nosuch=1"], "no parameter 'nosuch'"),
        (["run", "intlabel-fig9", "--set", "T_ms=abc"], "cannot read 'abc'"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], fragment: str) -> None:
    code, output = run_cli(*args, "--quick", "--out", str(tmp_path / "r"))
    assert code == 1
    lines = [ln for ln in output.strip().splitlines() if ln]
    assert len(lines) == 1 and "error" in lines[0] and fragment in lines[0], output
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_results_are_not_overwritten_without_force(tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert run_cli("run", "intlabel-fig20", "--out", str(out))[0] == 0
    before = (out / "metrics.csv").read_bytes()
    code, output = run_cli("run", "intlabel-fig20", "--out", str(out), "--set", "ks=10")
    assert code == 1 and "--force" in output
    assert (out / "metrics.csv").read_bytes() == before
    assert run_cli("run", "intlabel-fig20", "--out", str(out), "--set", "ks=10", "--force")[0] == 0
    assert (out / "metrics.csv").read_bytes() != before


def test_unwritable_output_directory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    code, output = run_cli("run", "intlabel-fig20", "--out", str(blocker / "sub"))
    assert code == 1 and "cannot write results here" in output


# ------------------------------------------------------------ headline bounds
#
# Bounds for the quick runs (seed 0). They are set from what the model must
# do, not from the last run's digits: each says why. The quick runs send
# 2,000 packets per point (or 1-1.5 s of traffic), so sampled figures get
# room for that; closed-form figures (15, 16, 20, 21) are held exactly.


class Run:
    """A quick run's headlines (by name) and metrics.csv rows."""

    def __init__(self, heads: dict[str, dict[str, Any]], rows: list[dict[str, Any]]) -> None:
        self.heads = heads
        self.rows = rows

    def head(self, name: str) -> float:
        assert name in self.heads, f"no headline {name!r}: {sorted(self.heads)}"
        return self.heads[name]["ours"]

    def where(self, **match: Any) -> list[dict[str, Any]]:
        return [r for r in self.rows if all(r[k] == v for k, v in match.items())]

    def one(self, **match: Any) -> dict[str, Any]:
        found = self.where(**match)
        assert len(found) == 1, f"{match}: {len(found)} rows"
        return found[0]

    def column(self, col: str, **match: Any) -> list[Any]:
        return [r[col] for r in self.where(**match)]


def _cell(text: str) -> Any:
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _read_rows(path: Path) -> list[dict[str, Any]]:
    with path.open(newline="") as fh:
        return [{k: _cell(v) for k, v in row.items()} for row in csv.DictReader(fh)]


BOUNDS: dict[str, Callable[[Run], None]] = {}


def bounds(name: str) -> Callable[[Callable[[Run], None]], Callable[[Run], None]]:
    def add(fn: Callable[[Run], None]) -> Callable[[Run], None]:
        BOUNDS[name] = fn
        return fn
    return add


def _bools_hold(run: Run) -> None:
    """Every yes/no headline is a claim of the paper (``paper`` 1.0): it must hold."""
    for name, h in run.heads.items():
        if h["unit"] == "bool":
            assert h["ours"] == 1.0, f"{name}: the paper's claim does not hold"


def _no_loss(run: Run) -> None:
    """Unlimited queues: every packet sent arrives (INT-label adds bytes, never packets)."""
    for r in run.rows:
        assert r["loss_rate"] == 0.0 and r["packets_delivered"] == r["packets_sent"], r


@bounds("intlabel-fig6")
def _fig6(run: Run) -> None:
    _bools_hold(run)
    _no_loss(run)
    top = max(run.column("rate_mbps"))
    for mode in ("A", "B"):
        # Fast traffic gives every port a packet to label in every T_i window:
        # the paper's coverage is ~1 at the highest rates.
        assert 0.95 <= run.one(mode=mode, rate_mbps=top)["mean_coverage"] <= 1.0
        # INT is a small share of the traffic: a 32-byte item on a fraction of
        # ~1 kB packets, the paper's point against per-packet INT (well under 5%).
        assert all(0 < x < 0.05 for x in run.column("bandwidth_occupation", mode=mode))
    for rate in run.column("rate_mbps", mode="A"):
        # Base B labels only where INT_num says a packet is worth it: fewer packets.
        a, b = run.one(mode="A", rate_mbps=rate), run.one(mode="B", rate_mbps=rate)
        assert b["labeled_packets"] < a["labeled_packets"], rate


def _t_sweep_labels(run: Run) -> None:
    """A longer labeling interval T labels fewer packets (one chance per port per T);
    Base B labels fewer packets than Base A at every T."""
    ts = sorted(set(run.column("T_ms")))
    for mode in ("A", "B"):
        labeled = [run.one(mode=mode, T_ms=t)["labeled_packets"] for t in ts]
        assert labeled == sorted(labeled, reverse=True) and labeled[0] > labeled[-1], mode
    for t in ts:
        assert (run.one(mode="B", T_ms=t)["labeled_packets"]
                < run.one(mode="A", T_ms=t)["labeled_packets"]), t


@bounds("intlabel-fig7")
def _fig7(run: Run) -> None:
    _no_loss(run)
    _t_sweep_labels(run)
    # The paper: Base B labels 35.2% fewer packets at T = 100 ms. A saving far
    # from a third (under 20% or over 50%) would be a different labeling rule.
    assert 20 <= run.head("Base B labels fewer packets than Base A at T=100 ms") <= 50


@bounds("intlabel-fig8")
def _fig8(run: Run) -> None:
    _no_loss(run)
    _t_sweep_labels(run)
    saved = run.head("labeled packets saved by Base B at T=100 ms")
    extra = run.head("extra labeling times of Base B at T=100 ms")
    assert 20 <= saved <= 50  # the paper: 35.2% (as fig 7)
    # Base B stacks more items on fewer packets, so it labels more times, but
    # the paper calls the rise small next to the drop in labeled packets.
    assert 0 < extra < saved


@bounds("intlabel-fig9")
def _fig9(run: Run) -> None:
    _no_loss(run)
    for mode, label in (("A", "Base A"), ("B", "Base B")):
        # The paper: above 0.98 at T_i/T = 1.6 for both bases; 2,000 packets
        # leave a few windows' noise, hence 0.97.
        assert 0.97 <= run.head(f"coverage at T_i/T = 1.6 ({label})") <= 1.0
        # Two labeling intervals per telemetry window: a port that sees traffic
        # labels in every window (the paper: 0.9972 for Base A).
        assert 0.98 <= run.head(f"coverage at T_i/T = 2 ({label})") <= 1.0
        # A longer window can only hold more labels: coverage never falls with T_i/T.
        cov = [r["mean_coverage"] for r in sorted(run.where(mode=mode), key=lambda r: r["ratio"])]
        assert cov == sorted(cov), mode
        # The turning point is where the curve reaches 0.98 for good, read off the rows.
        reached = [r["ratio"] for r in run.where(mode=mode)
                   if all(q["mean_coverage"] >= 0.98 for q in run.where(mode=mode)
                          if q["ratio"] >= r["ratio"])]
        assert run.head(f"turning point: smallest T_i/T with coverage >= 0.98 ({label})") \
            == min(reached)
        # Section 4.2's P_t and the measured share of gaps within T_i are probabilities.
        h = run.heads[f"update gaps within T_i at T_i/T = 1.6 vs section 4.2's P_t ({label})"]
        assert 0 < h["ours"] <= 1 and 0 < h["paper"] <= 1


@bounds("intlabel-fig10")
def _fig10(run: Run) -> None:
    _bools_hold(run)
    _no_loss(run)
    ti = 100.0
    for mode, label in (("A", "Base A"), ("B", "Base B")):
        # T = 60 ms < T_i = 100 ms at 10 Mb/s: still a label in every window,
        # the paper's turning point just before coverage drops.
        assert 0.95 <= run.head(f"coverage at T = 60 ms, T_i = 100 ms ({label})") <= 1.0
        # T = 140 ms > T_i: a port labels at most once per T, so a window holds
        # its label with probability about T_i/T = 0.71. A quick run has few
        # windows, so the bound is wide, but full coverage is impossible.
        t_max = max(run.column("T_ms", mode=mode))
        assert t_max > ti
        assert 0.4 <= run.one(mode=mode, T_ms=t_max)["mean_coverage"] <= 0.9
        # The turning point lies below T_i: past it a window can miss its port's label.
        turn = run.head(f"turning point: largest T with coverage >= 0.98, T_i = 100 ms ({label})")
        assert turn is not None and turn <= ti
        assert run.one(mode=mode, T_ms=turn)["mean_coverage"] >= 0.98


@bounds("intlabel-fig11")
def _fig11(run: Run) -> None:
    # The paper: 100% in every window at T = 20 ms (five labels per T_i = 100 ms).
    assert run.head("lowest window coverage at T=20 ms") >= 0.95
    # T = 80 ms < T_i still gives every port a label in nearly every window;
    # one port missing one window of 23 ports is 0.957.
    assert run.head("lowest window coverage at T=80 ms") >= 0.9
    for r in run.rows:
        assert 0 <= r["updated_ports"] <= r["active_ports"] and 0 <= r["coverage"] <= 1, r
    # The turning point: the longest T up to which every window was fully covered.
    lows = {t: run.head(f"lowest window coverage at T={t:g} ms") for t in set(run.column("T_ms"))}
    full = [t for t in sorted(lows) if all(lows[u] >= 1.0 for u in lows if u <= t)]
    assert run.head("turning point: longest T with every window fully covered") == (
        max(full) if full else None)


PRO_VARIANTS = ("Pro", "Pro-flag", "Pro-prototype")


@bounds("intlabel-fig12")
def _fig12(run: Run) -> None:
    _no_loss(run)
    for label in ("Base A", "Base B"):
        # T = T_i: some windows miss their port's label (fig 9 at T_i/T = 1: ~0.9).
        assert 0.9 <= run.head(f"{label} coverage at T=100 ms") <= 1.0
    for t in run.column("T_ms", mode="A"):
        base = run.one(mode="A", T_ms=t)
        for mode in ("Pro-flag", "Pro-prototype"):
            # A flagged port labels every packet, on top of Base A's labels
            # elsewhere: never fewer labels, never fewer INT bytes.
            pro = run.one(mode=mode, T_ms=t)
            assert pro["labeled_packets"] >= base["labeled_packets"], (mode, t)
            assert pro["bandwidth_occupation"] >= base["bandwidth_occupation"], (mode, t)
        # A flagged port labels every packet until its reset: a later reset, more bytes.
        flag, proto = run.one(mode="Pro-flag", T_ms=t), run.one(mode="Pro-prototype", T_ms=t)
        assert proto["bandwidth_occupation"] >= flag["bandwidth_occupation"], t
    # Two labeling intervals per window (T = 50 ms): nothing starves, Pro never acts
    # in Algorithm 3's form, which needs a port to miss k T = T_i.
    assert run.one(mode="Pro", T_ms=50.0)["pro_changes"] == 0


@bounds("intlabel-fig13")
def _fig13(run: Run) -> None:
    lo, hi = min(run.column("rate_mbps")), max(run.column("rate_mbps"))
    for rate in (lo, hi):
        # The queues limit packets/s and INT-label adds bytes, not packets, so
        # every mode loses exactly the same packets at the same offered rate.
        same = {(r["loss_rate"], r["packets_delivered"]) for r in run.where(rate_mbps=rate)}
        assert len(same) == 1, (rate, same)
    # Below the limit only bursts overflow the 16-packet queues.
    assert run.one(mode="A", rate_mbps=lo)["loss_rate"] < 0.02
    # Far above it most packets drop: the paper compares the modes near 60% loss.
    assert 0.45 <= run.one(mode="A", rate_mbps=hi)["loss_rate"] <= 0.75
    base = run.one(mode="A", rate_mbps=hi)["mean_coverage"]
    assert 0.5 <= base < 1.0
    for mode in PRO_VARIANTS:
        # Pro only adds labels where a port's data are missing: it never covers less.
        assert run.one(mode=mode, rate_mbps=hi)["mean_coverage"] >= base, mode
    # Labeling every packet of a starved port beats a halved interval, and the
    # longer the flag stays, the more labels survive the loss.
    cov = [run.one(mode=m, rate_mbps=hi)["mean_coverage"] for m in PRO_VARIANTS]
    assert cov[0] <= cov[1] <= cov[2], cov


@bounds("intlabel-fig14")
def _fig14(run: Run) -> None:
    # Each port is limited just above its busiest background rate, so a
    # positive limit in packets/s (a few hundred for 1 kB packets at these rates).
    assert 100 < run.head("rate limit (busiest port's background rate x margin)") < 5000
    # INT-label adds bytes, not packets: under a packets/s limit it loses nothing
    # (the paper: 0 for Base A and B).
    assert run.head("highest loss, Base A/B") == 0.0
    lo = run.head("HULA loss at 10 ms")
    hi = run.head("HULA loss at 100 ms")
    # HULA's flooded probes are extra packets: at 10 ms they overflow the
    # limit (the paper: 12%), at 100 ms ten times fewer probes lose little
    # (the paper: 5%; constant-rate background here has no bursts).
    assert 0.02 <= lo <= 0.25
    assert 0.0 <= hi <= 0.05 and hi < lo
    probes = {r["interval_ms"]: r["probes_sent"] for r in run.where(mode="HULA")}
    # One probe round per interval: ten times the interval, a tenth the probes.
    assert probes[10.0] == 10 * probes[100.0]


def _hops(k: int) -> dict[int, float]:
    """Section 4.3: host1 sends to every other host of a k-ary fat-tree; 1 hop
    to its edge's k/2 - 1 neighbours, 3 within its pod, 5 beyond it."""
    n = k**3 / 4 - 1
    return {1: (k / 2 - 1) / n, 3: (k / 2 - 1) * k / 2 / n, 5: (k - 1) * (k / 2) ** 2 / n}


def _expected_b(k: int, r: float) -> float:
    """Section 4.3's W_n recursion, written here as the paper prints it, with
    f(i) = i/5 and p_B = g(f) = (T_s/T)(1 - f) (g(0) = T_s/T, g(1) = 0)."""
    def f(i: int) -> float:
        return min(i / 5, 1.0)

    def label(i: int) -> float:
        return f(i) + r * (1 - f(i))

    total = 0.0
    for hops, ph in _hops(k).items():
        w = [1.0 - r, r]  # W_1: the first hop labels by the interval only
        for _ in range(hops - 1):  # P(W_n+1 = i) from P(W_n = i) and P(W_n = i - 1)
            nxt = [0.0] * (len(w) + 1)
            for i, x in enumerate(w):
                nxt[i] += x * (1 - label(i))
                nxt[i + 1] += x * label(i)
            w = nxt
        total += ph * sum(i * x for i, x in enumerate(w))
    return total


@bounds("intlabel-fig15")
def _fig15(run: Run) -> None:
    _bools_hold(run)
    r = 0.01
    # Base A labels each hop independently with probability T_s/T: E = (T_s/T) E[H].
    expect_a = r * sum(h * p for h, p in _hops(20).items())
    assert run.head("E[labels] Base A, k=20") == pytest.approx(expect_a, rel=1e-9)
    assert run.head("E[labels] Base B (paper's recursion), k=20") == pytest.approx(
        _expected_b(20, r), rel=1e-9)
    # The per-port model lies between: more labels than Base A (F1's redundancy),
    # fewer than the paper's recursion, which adds g to f for every packet.
    assert expect_a < run.head("E[labels] Base B (per-port model), k=20") \
        < run.head("E[labels] Base B (paper's recursion), k=20")
    # More hops per path with k: expected labels grow with k for every model.
    for col in ("base_a", "base_b_paper", "base_b"):
        values = [r[col] for r in sorted(run.rows, key=lambda r: r["k"])]
        assert values == sorted(values), col


@bounds("intlabel-fig16")
def _fig16(run: Run) -> None:
    _bools_hold(run)
    top = max(run.column("ts_over_t"))
    assert run.head("E[labels] Base A at the largest T_s/T") == pytest.approx(
        top * sum(h * p for h, p in _hops(20).items()), rel=1e-6)
    assert run.head("E[labels] Base B at the largest T_s/T") == pytest.approx(
        _expected_b(20, top), rel=1e-6)
    # For T_s << T the chance to label at a hop is proportional to T_s/T, so
    # Base A's expectation is linear in T_s/T.
    slopes = [r["base_a"] / r["ts_over_t"] for r in run.rows]
    assert slopes == pytest.approx([slopes[0]] * len(slopes), rel=1e-5), slopes


@bounds("intlabel-fig17")
def _fig17(run: Run) -> None:
    _bools_hold(run)
    for traffic in ("paper", "mixed"):
        for mode in ("A", "B"):
            # The simulated label counts follow the section 4.3 model: a total
            # variation of 0.2 would mean a fifth of the packets moved between counts.
            tvd = run.head(f"total variation vs section 4.3 model, Base {mode}, "
                           f"{traffic} traffic")
            assert 0 <= tvd < 0.2, (traffic, mode)
            fractions = run.column("fraction", traffic=traffic, mode=mode)
            assert sum(fractions) == pytest.approx(1.0, abs=1e-6), (traffic, mode)


@bounds("intlabel-fig18")
def _fig18(run: Run) -> None:
    _bools_hold(run)
    _no_loss(run)
    # The rest time only delays Base B's labels: coverage stays ~1 at T = 50 ms.
    assert all(0.95 <= c <= 1.0 for c in run.column("mean_coverage"))


@bounds("intlabel-fig19")
def _fig19(run: Run) -> None:
    _bools_hold(run)
    _no_loss(run)
    assert all(0.95 <= c <= 1.0 for c in run.column("mean_coverage"))
    for f in ("F1", "F2", "F3"):
        # Each exported packet carries at least one label, and a report is one
        # exported packet: never more reports than labeling times.
        assert 0 < run.head(f"exported packets ({f})") <= run.head(f"labeling times ({f})")


def _fat_tree_counts(k: int) -> tuple[int, int, bool]:
    """Hosts, ToR (edge) switches, and whether every switch has an even
    degree (one Euler circuit covers the links), of the generator's fat-tree."""
    from topologies.generators import fat_tree

    topo = fat_tree(k)
    graph = topo.switch_graph()
    tors = {topo.host_switch(h)[0] for h in topo.hosts}
    return len(topo.hosts), len(tors), all(d % 2 == 0 for _, d in graph.degree())


@bounds("intlabel-fig20")
def _fig20(run: Run) -> None:
    # The text's terms, counted on the fat-tree the generator builds (k = 10):
    # Pingmesh "the sum of the number of hosts and ToR switches", HULA "the number
    # of ToR switches", INT-label none ("probeless").
    hosts, tors, even = _fat_tree_counts(10)
    for variant in ("sheet", "corrected"):
        row = run.one(variant=variant, k=10)
        assert row["Pingmesh"] == hosts + tors and row["HULA"] == tors, row
        assert row["INT-label"] == 0
    assert run.one(variant="sheet", k=10)["INT-path"] == hosts  # the sheet's one per host
    # INT-path's own claim: one trail when an Euler circuit exists, more otherwise.
    assert (run.one(variant="corrected", k=10)["INT-path"] == 1) is even


@bounds("intlabel-fig21")
def _fig21(run: Run) -> None:
    for k in (10, 20, 30):
        sheet, fixed = run.one(variant="sheet", k=k), run.one(variant="corrected", k=k)
        # 'corrected' adds the x8 the sheet's Pingmesh term lacks, nothing else.
        assert fixed["Pingmesh"] == pytest.approx(8 * sheet["Pingmesh"]), k
        assert all(fixed[s] == sheet[s] for s in ("INT-path", "INT-label", "HULA")), k
    row = run.one(variant="measured", k=4)
    # Euler trails cross every switch-to-switch link exactly once (k^3/2 of them
    # in a k-ary fat-tree), one session per T = 10 ms.
    assert row["INT-path probe frames/s"] == 4**3 / 2 * 100
    # Two labeling intervals per telemetry window cover the ports (Fig. 9 at
    # T_i/T = 2), and INT-path's probes cost more than INT-label's labels.
    assert row["INT-label coverage"] >= 0.95 and row["INT-label loss"] == 0.0
    assert row["INT-path"] > row["INT-label"] > 0


@bounds("intlabel-fig22")
def _fig22(run: Run) -> None:
    # checked in detail by test_intlabel_fig22.py
    for r in run.rows:
        # one packet only where the first report decoded to the path the taps saw
        assert (r["int_packets"] == 1) == (r["int_first_report_traces"] == "True"), r
        # INT-label's stack holds 8 items: longer paths are never traced
        assert (r["intlabel_packets"] is None) == (r["hops"] > 8), r


def test_progress_is_plain_lines_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    """A batch job's log gets completed/total lines (first, every tenth,
    last) instead of a terminal progress bar, and an error starts at once."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "intbed.cli", "run", "gpint-fig10", "--quick", "--out",
           str(tmp_path / "r"), "--set", "sizes=20", "--set", "planners=gpint-3,snmp",
           "--set", "sessions=1", "--set", "warmup_s=0.5", "--set", "duration_s=2.0"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if " done" in ln]
    assert lines, done.stderr
    label, _, count = lines[0].partition(": ")
    total = int(count.split("/")[1].split()[0])
    assert count.startswith(f"0/{total} done")
    assert lines[-1] == f"{label}: {total}/{total} done"
    assert len(lines) <= 12  # at most about one per tenth
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert again.returncode == 1 and again.stderr.startswith("error: "), again.stderr
