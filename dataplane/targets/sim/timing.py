"""How long a sim switch takes per packet: its timing model.

A BMv2 ``simple_switch`` takes packets from its ports into one input buffer
(1,024 packets), runs them through the ingress pipeline on a single thread,
one after another, and hands them to per-port egress queues, egress
threads and transmit. Two things follow for a model in virtual time:

* the ingress thread is a single server whose per-packet **service time**
  varies from packet to packet: it bounds the switch's packets per second
  and, below that bound, makes packets wait behind one another (queueing
  delay with variance, the cause of INT-label's coverage below 100 %);
* the hand-offs between threads (and, at low load, waking a sleeping
  thread) add a **delay** that every packet takes, without limiting the
  rate; it varies from packet to packet too, but never reorders them.

A ``SwitchModel`` holds both as quantiles of their distributions (drawn by
inverse transform, linear between quantiles), and a constant pipeline
delay besides. The delay rides on the link a packet leaves on (its
arrival there no earlier than the packet before it), so it costs no
event. ``ideal`` is the model without either (the switch takes no
time unless the topology gives it a processing rate, and then exactly
1 / rate per packet). Profiles are YAML files (``profiles/NAME.yaml``,
written by ``intbed calibrate`` from measurements); ``load_model`` takes
a profile's name or a path.

Where a topology sets a switch's ``processing_rate_pps`` (GPINT's
capacities), the profile keeps its shape and the rate sets its mean: the
service times are the profile's, scaled so that their mean is 1 / rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from common.errors import IntbedError
from common.textfile import read_yaml_mapping

PROFILES_DIR = Path(__file__).resolve().parent / "profiles"
IDEAL = "ideal"
DEFAULT_MODEL = "bmv2"
"""The model a sim network gets when none is named."""
DRAWS_PER_REFILL = 4096
FIRST_BATCH = 256


class SwitchModelError(IntbedError):
    """A switch model that cannot be loaded or makes no sense."""


@dataclass(frozen=True)
class SwitchModel:
    """One timing model (module docstring). ``service_quantiles_ns``: the
    service time at evenly spaced probabilities 0, 1/(n-1), ..., 1;
    empty for a constant service time (``ideal``)."""

    name: str
    service_quantiles_ns: tuple[float, ...] = ()
    pipeline_delay_ns: int = 0
    delay_quantiles_ns: tuple[float, ...] = ()
    input_depth: int = 1024
    source: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def ideal(self) -> bool:
        return not (self.service_quantiles_ns or self.pipeline_delay_ns
                    or self.delay_quantiles_ns)

    @property
    def mean_service_ns(self) -> float:
        return quantile_mean(self.service_quantiles_ns)

    @property
    def mean_delay_ns(self) -> float:
        """The delay's mean, its constant part included."""
        return self.pipeline_delay_ns + quantile_mean(self.delay_quantiles_ns)

    @property
    def capacity_pps(self) -> float | None:
        """Packets per second the ingress thread serves at most."""
        mean = self.mean_service_ns
        return 1e9 / mean if mean > 0 else None

    def draws(self, seed: int, mean_ns: float | None = None) -> ServiceDraws | None:
        """The per-packet service times of one switch (None: constant, the
        ``ideal`` model). ``mean_ns`` rescales the profile to that mean (a
        topology's processing rate)."""
        if not self.service_quantiles_ns:
            return None
        scale = 1.0 if mean_ns is None else mean_ns / self.mean_service_ns
        return ServiceDraws(np.asarray(self.service_quantiles_ns, dtype=np.float64) * scale,
                            seed)

    def delay_draws(self, seed: int) -> ServiceDraws | None:
        """The per-packet delays of one switch port (None: none, or only
        the constant ``pipeline_delay_ns``)."""
        if not self.delay_quantiles_ns:
            return None
        return ServiceDraws(np.asarray(self.delay_quantiles_ns, dtype=np.float64), seed,
                            minimum=0)

    def describe(self) -> str:
        if self.ideal:
            return "ideal (no service time unless a processing rate is set; no delay)"
        cap = self.capacity_pps
        service = (f"mean service {self.mean_service_ns / 1000:.1f} us (at most "
                   f"{cap:,.0f} packets/s)" if cap else "no service time")
        return f"{self.name}: {service}, mean delay {self.mean_delay_ns / 1000:.1f} us"


class ServiceDraws:
    """Service times in integer nanoseconds, drawn in batches (numpy's
    PCG64 from the switch's own seed, so a run is reproducible and the
    draws do not depend on other switches)."""

    __slots__ = ("quantiles", "probs", "rng", "minimum", "size")

    def __init__(self, quantiles_ns: np.ndarray, seed: int, *, minimum: int = 1) -> None:
        self.quantiles = quantiles_ns
        self.probs = np.linspace(0.0, 1.0, len(quantiles_ns))
        self.rng = np.random.Generator(np.random.PCG64(seed))
        # Service times at least 1 ns: a zero one would serve two packets
        # at one instant.
        self.minimum = minimum
        # Batches grow from a few draws to DRAWS_PER_REFILL: a network of
        # hundreds of ports, most of them quiet in a short run, does not
        # draw thousands for each. The values do not depend on the sizes.
        self.size = FIRST_BATCH

    def batch(self, n: int | None = None) -> list[int]:
        if n is None:
            n = self.size
            self.size = min(2 * n, DRAWS_PER_REFILL)
        u = self.rng.random(n)
        values = np.interp(u, self.probs, self.quantiles)
        return np.maximum(np.rint(values), self.minimum).astype(  # type: ignore[no-any-return]
            np.int64).tolist()


def quantile_mean(q: tuple[float, ...] | list[float]) -> float:
    """The mean of the piecewise-linear inverse CDF through ``q`` (evenly
    spaced probabilities): the trapezoid rule, exact here."""
    if not q:
        return 0.0
    if len(q) == 1:
        return float(q[0])
    return float(sum((a + b) / 2 for a, b in zip(q, q[1:])) / (len(q) - 1))


IDEAL_MODEL = SwitchModel(IDEAL)


def available_models() -> list[str]:
    """The names ``load_model`` takes without a path."""
    return [IDEAL, *sorted(p.stem for p in PROFILES_DIR.glob("*.yaml"))]


def load_model(spec: str | Path | SwitchModel | None) -> SwitchModel:
    """``spec``: a model, a profile name (``available_models``), a path to a
    profile, or None for ``DEFAULT_MODEL``."""
    if isinstance(spec, SwitchModel):
        return spec
    if spec is None:
        spec = DEFAULT_MODEL
    text = str(spec)
    if text == IDEAL:
        return IDEAL_MODEL
    path = Path(text)
    if path.suffix not in (".yaml", ".yml"):
        path = PROFILES_DIR / f"{text}.yaml"
        if not path.is_file():
            raise SwitchModelError(f"unknown switch model '{text}' (models: "
                                   f"{', '.join(available_models())}; or a profile's path)")
    if not path.is_file():
        raise SwitchModelError(f"{path}: no such switch profile")
    return model_from_dict(_read_yaml(path), path)


def _read_yaml(path: Path) -> dict[str, Any]:
    return read_yaml_mapping(path, "switch profile",
                             "name, service_quantiles_us, pipeline_delay_us", SwitchModelError)


def model_from_dict(data: dict[str, Any], where: Path | str = "profile") -> SwitchModel:
    """A model from a profile's mapping, checked (file and field in errors)."""
    def fail(message: str) -> SwitchModelError:
        return SwitchModelError(f"{where}: {message}")

    known = {"name", "service_quantiles_us", "pipeline_delay_us", "delay_quantiles_us",
             "input_depth", "source", "fit"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise fail(f"unknown field(s) {', '.join(unknown)} (fields: {', '.join(sorted(known))})")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise fail("'name' must be a non-empty string")
    raw = _quantiles(data, "service_quantiles_us", fail, positive=True)
    delays = _quantiles(data, "delay_quantiles_us", fail, positive=False)
    delay = data.get("pipeline_delay_us", 0.0)
    if not isinstance(delay, int | float) or not delay >= 0:
        raise fail("'pipeline_delay_us' must be a non-negative number of microseconds")
    depth = data.get("input_depth", 1024)
    if not isinstance(depth, int) or depth < 1:
        raise fail("'input_depth' must be a positive number of packets")
    source = data.get("source", {})
    if not isinstance(source, dict):
        raise fail("'source' must be a mapping (how the profile was measured)")
    return SwitchModel(name, tuple(float(v) * 1000 for v in raw), round(delay * 1000),
                       tuple(float(v) * 1000 for v in delays), depth,
                       {**source, **({"fit": data["fit"]} if "fit" in data else {})})


def _quantiles(data: dict[str, Any], key: str, fail: Any, *, positive: bool) -> list[float]:
    raw = data.get(key, [])
    sign = "positive" if positive else "non-negative"
    if not isinstance(raw, list) or len(raw) == 1 or not all(
            isinstance(v, int | float) and math.isfinite(v) and (v > 0 if positive else v >= 0)
            for v in raw):
        raise fail(f"'{key}' must be a list of two or more {sign} microseconds (the "
                   "quantiles at evenly spaced probabilities 0..1)")
    if any(b < a for a, b in zip(raw, raw[1:])):
        raise fail(f"'{key}' must not decrease (they are quantiles)")
    return [float(v) for v in raw]
