"""Flow cache configuration: sizes from the paper by default, thresholds and
histogram bins from the deployment; checked once, when made."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from common.errors import InvalidValueError
from sinks.flowcache.layout import (
    ALL_EVENTS,
    CLASSES,
    DISABLED,
    EVENT_BITS,
    MEASURED,
    THRESHOLD_METRICS,
)

PAPER_ROWS = 1 << 19
PAPER_BUCKETS = 12
PAPER_RING_ENTRIES = 1 << 16
PAPER_RINGS = 8


def default_edges() -> dict[str, tuple[int, ...]]:
    """32 bins of width 10 per metric: queue occupancy 0-300 (the paper's
    trace) falls in the first 31, anything larger in the last."""
    return {name: tuple(range(0, 320, 10)) for name in MEASURED}


@dataclass(frozen=True)
class FlowCacheConfig:
    """H_P of ``rows`` x ``buckets``; ``rings`` general rings R_G and as many
    event rings R_I of ``ring_entries`` each; per-hop values for up to
    ``max_hops`` hops. ``aging_period_ns`` 0 turns aging off; otherwise
    buckets idle longer than it are evicted by a sweep every
    ``aging_interval_ns`` of packet time. ``thresholds[cls][metric]`` is an
    integer or None (off), cls in CLASSES, metric in THRESHOLD_METRICS.
    ``edges[metric]`` are the bins' lower bounds (strictly increasing, the
    last bin open above). ``shard``/``shards`` pick this cache's part of a
    table split over worker processes."""

    rows: int = PAPER_ROWS
    buckets: int = PAPER_BUCKETS
    max_hops: int = 5
    rings: int = PAPER_RINGS
    ring_entries: int = PAPER_RING_ENTRIES
    aging_period_ns: int = 0
    aging_interval_ns: int = 1_000_000_000
    thresholds: Mapping[str, Mapping[str, int | None]] = field(default_factory=dict)
    events: Sequence[str] | None = None
    edges: Mapping[str, Sequence[int]] = field(default_factory=default_edges)
    max_switches: int = 1024
    shard: int = 0
    shards: int = 1

    def __post_init__(self) -> None:
        for name, low in (("rows", 1), ("buckets", 1), ("max_hops", 1), ("rings", 1),
                          ("ring_entries", 1), ("aging_interval_ns", 1), ("max_switches", 1),
                          ("shards", 1), ("aging_period_ns", 0)):
            value = getattr(self, name)
            if not isinstance(value, int) or value < low:
                raise InvalidValueError(f"flow cache {name} must be an integer >= {low}, "
                                        f"not {value!r}")
        if self.max_hops > 254:
            raise InvalidValueError(f"flow cache max_hops must be <= 254, not {self.max_hops}")
        if not 0 <= self.shard < self.shards:
            raise InvalidValueError(f"flow cache shard {self.shard} is not in 0..{self.shards - 1}")
        for cls, per_metric in self.thresholds.items():
            if cls not in CLASSES:
                raise InvalidValueError(f"unknown event class {cls!r}: use one of "
                                        + ", ".join(CLASSES))
            for metric, value in per_metric.items():
                check_threshold(cls, metric, value)
        unknown = set(self.edges) - set(MEASURED)
        if unknown:
            raise InvalidValueError(f"histogram bins for unknown metric {sorted(unknown)[0]!r}: "
                                    "use " + ", ".join(MEASURED))
        for metric in MEASURED:
            edges = list(self.edges.get(metric, (0,)))
            if not edges or any(b <= a for a, b in zip(edges, edges[1:])) or edges[0] < 0:
                raise InvalidValueError(f"histogram bins of {metric} must be non-negative, "
                                        f"strictly increasing lower bounds, not {edges}")
        event_mask(self.events)

    def threshold(self, cls: str, metric: str) -> int:
        """The threshold as the kernel holds it (DISABLED for off)."""
        value = self.thresholds.get(cls, {}).get(metric)
        return DISABLED if value is None else value


def check_threshold(cls: str, metric: str, value: int | None) -> None:
    if cls not in CLASSES:
        raise InvalidValueError(f"unknown event class {cls!r}: use one of " + ", ".join(CLASSES))
    if metric not in THRESHOLD_METRICS:
        raise InvalidValueError(f"unknown threshold metric {metric!r}: use one of "
                                + ", ".join(THRESHOLD_METRICS))
    if value is not None and (not isinstance(value, int) or not 0 <= value < DISABLED):
        raise InvalidValueError(f"{cls} threshold of {metric} must be a non-negative integer "
                                f"or None (off), not {value!r}")


def event_mask(names: Sequence[str] | None) -> int:
    """The event-type bits to emit: every one for None, else the named ones."""
    if names is None:
        return ALL_EVENTS
    for name in names:
        if name not in EVENT_BITS:
            raise InvalidValueError(f"unknown event {name!r}: use " + ", ".join(EVENT_BITS))
    return sum(EVENT_BITS[name] for name in set(names))
