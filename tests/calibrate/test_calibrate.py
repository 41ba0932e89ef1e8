"""``intbed calibrate``: the fit recovers a model it is given, the shipped
profiles come back from their raw measurements, and a short sweep of
intbed-switch on veth pairs runs end to end (as root)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from dataplane.targets.sim.timing import PROFILES_DIR, load_model
from intbed.cli import cli
from orchestration.calibrate import fit
from orchestration.calibrate.sweep import Point, switch_command

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT / "docs" / "measurements" / "switch-timing"


def synthetic(rate_pps: float, n: int, service_ns: np.ndarray, delay_ns: np.ndarray,
              seed: int) -> Point:
    """Poisson sends through a FIFO server whose service times and delays
    are drawn from the given quantiles: a switch whose model is known."""
    rng = np.random.default_rng(seed)
    tx = np.cumsum(rng.exponential(1e9 / rate_pps, n)).astype(np.int64)
    p = Point(rate_pps, tx - tx[0], np.zeros(n, dtype=np.int64))
    lat, loss = fit.replay(p, service_ns, delay_ns, seed=seed + 100, depth=10**9)
    assert loss == 0
    return Point(rate_pps, p.tx_ns, np.rint(lat).astype(np.int64))


def test_the_fit_recovers_the_capacity_and_the_spread_it_was_given() -> None:
    true_mean, true_cv = 40_000.0, 1.0  # 25,000 packets/s
    service = fit.gamma_quantiles(true_mean, true_cv)
    delay = np.linspace(50_000, 150_000, fit.QUANTILES)
    points = [synthetic(r, 20_000, service, delay, i)
              for i, r in enumerate((500.0, 8_000.0, 15_000.0, 20_000.0))]
    # Saturation: the server delivers one packet per service time.
    tx = np.arange(20_000, dtype=np.int64) * 25_000  # 40,000 offered packets/s
    served = np.full(20_000, -1, dtype=np.int64)
    served[np.arange(20_000) % 8 < 5] = 1_000_000  # 5 in 8: 25,000 packets/s delivered
    points.append(Point(40_000.0, tx, served))
    numbers = fit.fit(points)
    assert numbers["capacity_measured"]
    assert numbers["capacity_pps"] == pytest.approx(25_000, rel=0.02)
    assert numbers["service_cv"] == true_cv
    mean_delay = float(((np.asarray(numbers["delay_quantiles_ns"])[1:]
                         + np.asarray(numbers["delay_quantiles_ns"])[:-1]) / 2).mean())
    assert mean_delay == pytest.approx(100_000, rel=0.1)


def test_without_a_saturated_rate_the_capacity_is_a_stated_lower_bound() -> None:
    service = fit.gamma_quantiles(10_000.0, 0.5)
    delay = np.full(fit.QUANTILES, 20_000.0)
    points = [synthetic(r, 5_000, service, delay, i) for i, r in enumerate((500.0, 5_000.0))]
    numbers = fit.fit(points)
    assert not numbers["capacity_measured"]
    assert numbers["capacity_pps"] == pytest.approx(max(p.delivered_pps for p in points))


@pytest.mark.parametrize("profile, raw", [("bmv2", "bmv2-simple_switch.npz"),
                                          ("intbed-switch", "intbed-switch.npz")])
def test_a_shipped_profile_is_what_its_raw_measurements_give(profile: str, raw: str,
                                                             tmp_path: Path) -> None:
    out = tmp_path / "p.yaml"
    result = CliRunner().invoke(cli, ["calibrate", "--from-raw", str(RAW / raw), "--name",
                                      profile, "--out", str(out)])
    assert result.exit_code == 0, result.output
    shipped, again = load_model(PROFILES_DIR / f"{profile}.yaml"), load_model(out)
    assert again.service_quantiles_ns == shipped.service_quantiles_ns
    assert again.delay_quantiles_ns == shipped.delay_quantiles_ns
    assert again.source["fit"] == shipped.source["fit"]


def test_a_switch_command_needs_its_two_ports() -> None:
    from orchestration.calibrate.netns import CalibrationError

    with pytest.raises(CalibrationError, match=r"use \{port1\} and \{port2\}"):
        switch_command("intbed", "simple_switch -i 1@{eth1} x.json")
    with pytest.raises(CalibrationError, match="--switch-cmd for another switch"):
        switch_command("bmv2", None)
    argv = switch_command("intbed", "sw -i 1@{port1} -i 2@{port2} 'a b.json'")
    assert argv == ["sw", "-i", "1@intbed-cal-s1", "-i", "2@intbed-cal-s2", "a b.json"]


_WHY = ("calibration needs root" if os.geteuid() != 0 else
        "calibration needs tcpdump" if shutil.which("tcpdump") is None else None)


@pytest.mark.skipif(_WHY is not None, reason=str(_WHY))
def test_a_short_sweep_of_intbed_switch_on_veth_pairs(tmp_path: Path) -> None:
    from orchestration.calibrate.netns import PREFIX
    from orchestration.calibrate.sweep import sweep

    points = sweep(switch_command("intbed", None), [300.0, 1500.0], seconds=0.5, size=100)
    assert [p.rate_pps for p in points] == [300.0, 1500.0]
    for p in points:
        assert len(p.tx_ns) > 50 and p.loss == 0.0
        lat = p.latency_ns[p.delivered]
        assert (lat > 0).all() and np.median(lat) < 5_000_000
    # Nothing is left behind.
    links = Path("/sys/class/net")
    assert not [d.name for d in links.iterdir() if d.name.startswith(PREFIX)]
    assert not [n for n in os.listdir("/run/netns") if n.startswith(PREFIX)] \
        if os.path.isdir("/run/netns") else True
