"""One INT-label run's configuration and setup (paper section 6.1).

The fabric (4 spines, 4 leaves, 4 ToRs, 8 servers) runs
``p4src/intlabel.p4``; the first and last server send 1 kB packets at
5 Mb/s each to random other servers. ``RunConfig`` is INT-label's own
configuration with the run's setup added, checked in one place.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from common.errors import IntbedError
from common.seeds import derive_seed
from controller.intlabel import IntLabelConfig, SpecificFlow
from orchestration.systems.intlabel.collector_profile import (
    DEFAULT_COLLECTOR_PROFILE,
    CollectorProfile,
)
from orchestration.systems.intlabel.collector_time import CollectorCost
from topologies.model import Topology

ARRIVALS = ("constant", "poisson", "onoff")  # traffic.schedules' arrival processes
# The collector's time on targets in virtual time ("measured", the default):
# microseconds per INT item while the traffic runs and after it, and per
# change of S made meanwhile, fitted by least squares to the 630 batches the
# live collector handled in six runs of Pro's flag at T = T_i = 100 ms
# (docs/measurements/intlabel-collector/measured_model.yaml, R^2 0.95;
# made by experiments.intlabel.collector_cost --repeat 3): the
# "intel-xeon" collector profile, the default (collector_profile.py; other
# hosts' prices: --collector-profile).
COLLECTOR_ITEM_US = 284.2
COLLECTOR_ITEM_IDLE_US = 57.1
COLLECTOR_CHANGE_US = 3059.5
DEFAULT_PRICES = CollectorProfile(DEFAULT_COLLECTOR_PROFILE, COLLECTOR_ITEM_US,
                                  COLLECTOR_ITEM_IDLE_US, COLLECTOR_CHANGE_US)
# The earlier model ("per-frame"): microseconds per report frame of the same
# collector, timed on the mininet target (docs/measurements/intlabel-collector/
# collector_cost.yaml: 1,563 frames, 1.87 s busy, at T = 50 and 100 ms).
COLLECTOR_COST_US = 1199.5
COLLECTOR_MODELS = ("measured", "per-frame", "free")
# Milliseconds from an aging key's deadline to its expiry reaching the Pro
# loop through the mininet target's Redis store: the mean of 3,504 expiries
# in the 54 Pro runs of Fig. 12's cross-check (docs/measurements/
# intlabel-collector/README.md, "Expiry lag"): ``expiry_lag_ms``'s default.
# None comes later than the store's backstop, a sweep every 50 ms of
# members 50 ms overdue.
EXPIRY_LAG_MS = 16.7
EXPIRY_LAG_MAX_MS = 100.0


class RunConfigError(IntbedError):
    """A run configuration that cannot run."""


@dataclass(frozen=True)
class RunConfig(IntLabelConfig):
    """Every parameter of one run: INT-label's own (``IntLabelConfig``, the
    fields it declares) and the run's setup below. Checked once, when made.

    Give ``packets`` (the total over all senders; the duration follows from
    the rate) or ``duration_s``. ``queue_rate_pps`` and ``queue_depth`` set
    every switch port's egress queue (BMv2's ``set_queue_rate`` and
    ``set_queue_depth``, to induce loss); ``link_loss`` is the loss
    probability of every switch-to-switch link, or of ``lossy_links`` (pairs
    of node names) when given. ``report_delay_us`` is the one-way delay from
    every switch to the collector. ``collector_model`` is the collector's own time on
    targets in virtual time, where it is a single server that reports queue
    for (``collector_time``): "measured" charges ``COLLECTOR_ITEM_US`` per
    INT item while the traffic runs, ``COLLECTOR_ITEM_IDLE_US`` after it and
    ``COLLECTOR_CHANGE_US`` per change of S, as intbed's collector on Redis
    spends on the mininet target; "per-frame" charges ``collector_cost_us``
    per report frame (None: ``COLLECTOR_COST_US``); "free" nothing. Live
    targets pay their real time. ``expiry_lag_ms``: the mean lag of the
    aging store's expiries on targets in virtual time, each drawn from an
    exponential of that mean, at most ``EXPIRY_LAG_MAX_MS``; default
    ``EXPIRY_LAG_MS``, as measured on the mininet target (Redis reports a
    key's expiry when it deletes the key, which can be later than its
    deadline, and Pro's aging database is Redis in the paper too); 0: on
    the deadline. ``topology_params`` are the topology
    generator's (``(("k", 6),)`` for a 6-ary fat-tree). Where the run happens (target, seed,
    live options) is not part of it: ``run_intlabel`` takes a ``RunEnv``.
    """

    topology: str = "intlabel-fabric"
    topology_params: tuple[tuple[str, Any], ...] = ()
    senders: tuple[str, ...] = ("h1", "h8")
    rate_bps: float = 5e6
    packet_size: int = 1000
    packets: int | None = 10_000
    duration_s: float | None = None
    warmup_s: float = 0.2
    drain_s: float = 0.2
    Ti_ms: float = 100.0
    queue_rate_pps: float | None = None
    queue_depth: int | None = None
    limit_ports: str = "all"
    link_loss: float = 0.0
    lossy_links: tuple[tuple[str, str], ...] = ()
    report_delay_us: float = 100.0
    arrivals: str = "constant"
    collector_model: str = "measured"
    collector_cost_us: float | None = None
    expiry_lag_ms: float = EXPIRY_LAG_MS

    def __post_init__(self) -> None:
        super().__post_init__()  # INT-label's own parameters
        self._validate_run()

    def collector_cost(self, profile: CollectorProfile | None = None) -> CollectorCost:
        """What the collector's work costs in virtual time; ``profile``: the
        host whose prices "measured" charges (None: the defaults above)."""
        if self.collector_model == "free":
            return CollectorCost()
        if self.collector_model == "per-frame":
            us = COLLECTOR_COST_US if self.collector_cost_us is None else self.collector_cost_us
            return CollectorCost(frame_s=us * 1e-6)
        p = DEFAULT_PRICES if profile is None else profile
        return CollectorCost(item_s=p.item_us * 1e-6, item_idle_s=p.item_idle_us * 1e-6,
                             change_s=p.change_us * 1e-6)

    def expiry_lag_mean_s(self) -> float:
        """The mean of the aging store's expiry lag in virtual time."""
        return self.expiry_lag_ms * 1e-3

    def per_sender_packets(self) -> list[int]:
        """Packets each sender sends: ``packets`` split evenly (the first
        senders take the remainder), or the duration times the rate."""
        n = len(self.senders)
        if self.packets is not None:
            base, extra = divmod(self.packets, n)
            return [base + (1 if i < extra else 0) for i in range(n)]
        count = math.ceil(self.duration_s * self.pps_per_sender())  # type: ignore[operator]
        return [count] * n

    def pps_per_sender(self) -> float:
        return self.rate_bps / (8 * self.packet_size)

    def traffic_duration_s(self) -> float:
        if self.duration_s is not None and self.packets is None:
            return self.duration_s
        return max(self.per_sender_packets()) / self.pps_per_sender()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RunConfigError(f"unknown run parameter(s): {', '.join(unknown)}")
        d = dict(data)
        if "senders" in d:
            d["senders"] = tuple(d["senders"])
        if "topology_params" in d:
            d["topology_params"] = tuple(tuple(x) for x in d["topology_params"])
        if "lossy_links" in d:
            d["lossy_links"] = tuple(tuple(x) for x in d["lossy_links"])
        if "specific_flows" in d:
            d["specific_flows"] = tuple(f if isinstance(f, SpecificFlow) else SpecificFlow(**f)
                                        for f in d["specific_flows"])
        return cls(**d)

    def _validate_run(self) -> None:
        def fail(message: str) -> None:
            raise RunConfigError(message)

        if not self.senders:
            fail("a run needs at least one sender")
        if (self.packets is None) == (self.duration_s is None):
            fail("give exactly one of packets and duration_s")
        if self.packets is not None and self.packets < len(self.senders):
            fail(f"packets ({self.packets}) must be at least the number of senders")
        if self.duration_s is not None and not self.duration_s > 0:
            fail(f"duration_s must be positive, not {self.duration_s}")
        if not self.rate_bps > 0:
            fail(f"rate_bps must be positive, not {self.rate_bps}")
        if self.collector_model not in COLLECTOR_MODELS:
            fail(f"collector_model must be one of {', '.join(COLLECTOR_MODELS)}, "
                 f"not {self.collector_model!r}")
        if self.collector_cost_us is not None:
            if not self.collector_cost_us >= 0:
                fail(f"collector_cost_us must not be negative, not {self.collector_cost_us}")
            if self.collector_model != "per-frame":
                fail("collector_cost_us is the per-frame model's price: give it with "
                     "collector_model='per-frame'")
        if not self.expiry_lag_ms >= 0:
            fail(f"expiry_lag_ms must not be negative, not {self.expiry_lag_ms}")
        if self.packet_size < 64:
            fail(f"packet_size must be at least 64 bytes, not {self.packet_size}")
        if not self.Ti_ms > 0:
            fail(f"telemetry interval Ti must be positive, not {self.Ti_ms} ms")
        if self.warmup_s < 0 or self.drain_s < 0:
            fail("warmup_s and drain_s must not be negative")
        if not 0.0 <= self.link_loss <= 1.0:
            fail(f"link_loss must be a probability in [0, 1], not {self.link_loss}")
        if self.queue_depth is not None and self.queue_depth < 1:
            fail(f"queue_depth must be at least 1, not {self.queue_depth}")
        if self.limit_ports not in ("all", "hosts"):
            fail(f"limit_ports must be 'all' or 'hosts', not {self.limit_ports!r}")
        if self.arrivals not in ARRIVALS:
            fail(f"arrivals must be one of {', '.join(ARRIVALS)}, not {self.arrivals!r}")
        if self.queue_rate_pps is not None and not self.queue_rate_pps > 0:
            fail(f"queue_rate_pps must be positive, not {self.queue_rate_pps}")


def run_topology(cfg: RunConfig) -> Topology:
    """The run's topology with its queue and loss settings applied."""
    from topologies.generators import build_topology

    topo = build_topology(cfg.topology, **dict(cfg.topology_params))
    for name in cfg.senders:
        if name not in topo.hosts:
            raise RunConfigError(f"sender '{name}' is not a host of {cfg.topology}")
    for name, spec in topo.switches.items():
        if cfg.limit_ports == "all":
            if cfg.queue_depth is not None:
                spec.queue_depth = cfg.queue_depth
            if cfg.queue_rate_pps is not None:
                spec.queue_rate_pps = cfg.queue_rate_pps
            continue
        # "hosts": only the queues toward end hosts, so a drop there loses
        # every label the packet collected on its way (the loss that hurts
        # coverage); the other ports keep their defaults.
        for port, peer, _ in topo.port_peers(name):
            if peer in topo.hosts:
                ps = spec.ports[port]
                if cfg.queue_depth is not None:
                    ps.queue_depth = cfg.queue_depth
                if cfg.queue_rate_pps is not None:
                    ps.queue_rate_pps = cfg.queue_rate_pps
    if cfg.link_loss:
        wanted = {frozenset(pair) for pair in cfg.lossy_links}
        for pair in wanted:
            if not any(frozenset((ln.a, ln.b)) == pair for ln in topo.links):
                raise RunConfigError(f"no link between {' and '.join(sorted(pair))}")
        for link in topo.links:
            between_switches = link.a in topo.switches and link.b in topo.switches
            if (frozenset((link.a, link.b)) in wanted) if wanted else between_switches:
                link.loss = cfg.link_loss
    return topo


def sender_schedules(topo: Topology, cfg: RunConfig, seed: int = 0) -> list[tuple[str, Any]]:
    """``(sender, Schedule)`` per sender, drawn from the run's ``seed``:
    every target plays these."""
    from traffic.schedules import Schedule, flows_to_random_servers

    hosts = list(topo.hosts.values())
    pps = cfg.pps_per_sender()
    out = []
    for name, count in zip(cfg.senders, cfg.per_sender_packets()):
        duration_us = math.ceil(count * 1e6 / pps) + 1
        sched = flows_to_random_servers(topo.hosts[name], hosts, cfg.rate_bps,
                                        cfg.packet_size, duration_us,
                                        derive_seed(seed, "traffic", name),
                                        arrivals=cfg.arrivals)
        if len(sched) > count:
            sched = Schedule(sched.times_us[:count], sched.dest_index[:count],
                             sched.seqs[:count], sched.sizes[:count], sched.dests)
        out.append((name, sched))
    return out
