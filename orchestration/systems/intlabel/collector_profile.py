"""Which host's collector the sim prices (``--collector-profile``).

The INT-label collector's time on a live target is the time of a Python
process on the host's own cores, and hosts differ: the same collector spent
197 us per item and 5.2 ms per change of S on a 2-core AMD EPYC, against
284 us and 3.1 ms on a 2-core Intel Xeon (docs/measurements/
intlabel-collector/). A sim run that is to stand beside a live run on a
given host prices the collector as that host did. A profile is a named
YAML in ``collector_profiles/`` or any YAML with ``item_us``,
``item_idle_us`` and ``change_us``, at its top level or under
``measured_model`` (what ``python -m experiments.intlabel.collector_cost``
writes, so a host's measurement is its profile as it stands).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from common.errors import IntbedError
from common.textfile import read_yaml_mapping

PROFILES_DIR = Path(__file__).resolve().parent / "collector_profiles"
DEFAULT_COLLECTOR_PROFILE = "intel-xeon"
PRICES = ("item_us", "item_idle_us", "change_us")


class CollectorProfileError(IntbedError):
    """A collector profile that cannot be used."""


@dataclass(frozen=True)
class CollectorProfile:
    """The measured collector model's prices, in microseconds: per INT item
    while the traffic runs and after it, and per change of S."""

    name: str
    item_us: float
    item_idle_us: float
    change_us: float
    source: str = ""


def available_profiles() -> list[str]:
    """The names ``load_collector_profile`` takes without a path."""
    return sorted(p.stem for p in PROFILES_DIR.glob("*.yaml"))


def load_collector_profile(spec: str | Path | CollectorProfile | None) -> CollectorProfile:
    """``spec``: a profile, a name (``available_profiles``), a YAML path, or
    None for ``DEFAULT_COLLECTOR_PROFILE``."""
    if isinstance(spec, CollectorProfile):
        return spec
    return _load(str(DEFAULT_COLLECTOR_PROFILE if spec is None else spec))


@lru_cache(maxsize=16)
def _load(text: str) -> CollectorProfile:
    """Read once per process: every run of a sweep asks again."""
    path = Path(text)
    if path.suffix not in (".yaml", ".yml"):
        path = PROFILES_DIR / f"{text}.yaml"
        if not path.is_file():
            raise CollectorProfileError(
                f"unknown collector profile '{text}' (profiles: "
                f"{', '.join(available_profiles())}; or a YAML path, such as "
                "the output of python -m experiments.intlabel.collector_cost)")
    if not path.is_file():
        raise CollectorProfileError(f"{path}: no such collector profile")
    return profile_from_dict(_read_yaml(path), path)


def profile_from_dict(data: dict[str, Any], where: Path | str = "profile") -> CollectorProfile:
    """A profile from a mapping, checked (file and field in errors). A
    collector_cost measurement is named after its machine's CPU."""
    prices = data.get("measured_model", data)
    if not isinstance(prices, dict):
        raise CollectorProfileError(f"{where}: measured_model must be a mapping of "
                                    f"{', '.join(PRICES)}")
    missing = [k for k in PRICES if k not in prices]
    if missing:
        raise CollectorProfileError(
            f"{where}: missing {', '.join(missing)} (a collector profile gives "
            f"{', '.join(PRICES)} in microseconds, at its top level or under "
            "measured_model)")
    values = {}
    for key in PRICES:
        value = prices[key]
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not math.isfinite(value) or value < 0:
            raise CollectorProfileError(f"{where}: {key} must be a non-negative number of "
                                        f"microseconds, not {value!r}")
        values[key] = float(value)
    name = data.get("name")
    if name is None:
        machine = data.get("machine")
        cpu = machine.get("cpu") if isinstance(machine, dict) else None
        name = f"{Path(where).stem} ({cpu})" if cpu else Path(where).stem
    source = data.get("source") or str(where)
    return CollectorProfile(str(name), source=str(source).strip(), **values)


def _read_yaml(path: Path) -> dict[str, Any]:
    return read_yaml_mapping(path, "collector profile", ", ".join(PRICES),
                             CollectorProfileError)
