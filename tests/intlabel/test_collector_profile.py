"""Collector profiles: a host's measured collector prices for the sim
(``--collector-profile``), read from a named profile or from what
experiments.intlabel.collector_cost writes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from orchestration.network import RunEnv
from orchestration.systems.intlabel.collector_profile import (
    DEFAULT_COLLECTOR_PROFILE,
    CollectorProfile,
    CollectorProfileError,
    available_profiles,
    load_collector_profile,
)
from orchestration.systems.intlabel.collector_time import CollectorCost
from orchestration.systems.intlabel.config import (
    COLLECTOR_CHANGE_US,
    COLLECTOR_ITEM_IDLE_US,
    COLLECTOR_ITEM_US,
    RunConfig,
)
from orchestration.systems.intlabel.run import run_intlabel

MEASUREMENTS = Path(__file__).resolve().parents[2] / "docs" / "measurements" / "intlabel-collector"


def test_the_default_profile_is_the_default_prices() -> None:
    """The shipped default and the constants RunConfig falls back on are
    one measurement: neither can drift from the other."""
    p = load_collector_profile(None)
    assert p.name == DEFAULT_COLLECTOR_PROFILE
    assert (p.item_us, p.item_idle_us, p.change_us) == (
        COLLECTOR_ITEM_US, COLLECTOR_ITEM_IDLE_US, COLLECTOR_CHANGE_US)
    assert RunConfig().collector_cost(p) == RunConfig().collector_cost()


@pytest.mark.parametrize("name, measurement", [
    ("intel-xeon", "measured_model.yaml"),
    ("amd-epyc", "measured_model-amd-epyc.yaml"),
])
def test_each_shipped_profile_is_its_hosts_measurement(name: str, measurement: str) -> None:
    """A named profile carries the fit of the measurement it cites; the
    measurement file read as a profile gives the same prices."""
    assert name in available_profiles()
    shipped = load_collector_profile(name)
    raw = load_collector_profile(MEASUREMENTS / measurement)
    assert measurement in shipped.source
    assert (shipped.item_us, shipped.item_idle_us, shipped.change_us) == (
        raw.item_us, raw.item_idle_us, raw.change_us)
    data = yaml.safe_load((MEASUREMENTS / measurement).read_text())
    assert raw.change_us == data["measured_model"]["change_us"]
    assert raw.name == f"{Path(measurement).stem} ({data['machine']['cpu']})"


def test_a_profile_sets_the_measured_models_prices() -> None:
    p = CollectorProfile("test", item_us=100.0, item_idle_us=10.0, change_us=2000.0)
    assert RunConfig().collector_cost(p) == CollectorCost(
        item_s=100.0 * 1e-6, item_idle_s=10.0 * 1e-6, change_s=2000.0 * 1e-6)
    # The other models keep their own prices whatever the host.
    assert RunConfig(collector_model="free").collector_cost(p).free
    assert RunConfig(collector_model="per-frame",
                     collector_cost_us=50.0).collector_cost(p) == CollectorCost(frame_s=50.0 * 1e-6)


@pytest.mark.parametrize("text, match", [
    ("item_us: 1\nitem_idle_us: 1\n", r"bad\.yaml: missing change_us"),
    ("item_us: 1\nitem_idle_us: -1\nchange_us: 3\n", "item_idle_us must be a non-negative"),
    ("item_us: fast\nitem_idle_us: 1\nchange_us: 3\n", "item_us must be a non-negative"),
    ("measured_model: 3\n", "measured_model must be a mapping"),
    ("- 1\n- 2\n", "a collector profile is a mapping"),
    ("item_us: 1\n  item_idle_us: [\n", r"bad\.yaml:2: not valid YAML"),
])
def test_a_bad_profile_names_its_file_and_fault(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(CollectorProfileError, match=match):
        load_collector_profile(path)


def test_an_unknown_profile_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(CollectorProfileError, match="profiles: amd-epyc, intel-xeon"):
        load_collector_profile("sparc")
    with pytest.raises(CollectorProfileError, match="no such collector profile"):
        load_collector_profile(tmp_path / "absent.yaml")


def _pro_run(env: RunEnv, **kw: object) -> dict:
    m = run_intlabel(RunConfig(packets=600, pro=True, pro_style="flag", T_ms=100, Ti_ms=100,
                               **kw), env)  # type: ignore[arg-type]
    d = m.comparable()
    d.pop("env")
    d.pop("config")  # collector_model differs between the free run and the zero profile's
    return d


def test_a_run_charges_the_profiles_prices(tmp_path: Path) -> None:
    """The profile reaches the run: the default's own prices under another
    name change nothing, zero prices are the free collector, and the
    default's prices are not free (so the two equalities test something)."""
    same = tmp_path / "same.yaml"
    same.write_text(f"item_us: {COLLECTOR_ITEM_US}\nitem_idle_us: {COLLECTOR_ITEM_IDLE_US}\n"
                    f"change_us: {COLLECTOR_CHANGE_US}\n")
    zero = tmp_path / "zero.yaml"
    zero.write_text("item_us: 0\nitem_idle_us: 0\nchange_us: 0\n")
    default = _pro_run(RunEnv(seed=1))
    assert _pro_run(RunEnv(seed=1, collector_profile=str(same))) == default
    free = _pro_run(RunEnv(seed=1), collector_model="free")
    assert _pro_run(RunEnv(seed=1, collector_profile=str(zero))) == free
    assert free != default


def test_the_run_records_the_profile_it_was_given() -> None:
    assert "collector_profile" not in RunEnv().to_dict()
    assert RunEnv(collector_profile="amd-epyc").to_dict()["collector_profile"] == "amd-epyc"
