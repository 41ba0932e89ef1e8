"""One GPINT run, written once for every target (Simsek et al., section V-A).

A connected Watts-Strogatz network (``topologies`` generator ``gpint-ws``)
runs ``p4src/gpint.p4`` with shortest-path routes; hosts send UDP background
traffic to random other hosts at an aggregate ``load_pps``; the monitor (the
collector host, wired to port 500 of every switch) probes the INT paths of
one planner (GPINT-k, Euler, SNMP) in ``sessions`` measurement sessions,
with or without SQR recovery. Every number a figure needs comes back in a
``GpintRunResult``.

Switch processing capacity (``capacity_pps``, the sim target's
``processing_rate_pps``; ``intbed-switch`` enforces the same through the
topology): the paper sets none explicitly; it reports that 14,000
packets/s saturate its switches while 10,000 leave them at 85-92 % (Fig.
8), and that all switches are identical (section V-A). By default
(``capacity_model`` 'identical') every switch therefore gets one capacity:
the busiest switch's load at 10,000 packets/s over 0.885, where a switch's
load is the background packets per second crossing it on the shortest
paths between uniformly random host pairs of this very topology. At
10,000 packets/s the busiest switch is 88.5 % busy, at 14,000 it is at
124 %, saturated, and the switches around it lose packets. The model
'per-switch' instead gives each switch its own load at 10,000 packets/s
over 0.885 (every switch 88.5 % busy, all saturate together at 14,000;
lightly loaded switches become slow ones). ``derived_capacities`` computes
both; ``capacity_pps`` gives every switch a fixed capacity. The model
'measured' sets no processing rate: each switch serves what the switch
timing model measured (``--switch-model``; BMv2 simple_switch here:
22,300 packets/s), which is how fast a BMv2 switch on this machine is,
whatever the paper's were.

The 0.885 is ``reference_utilisation``: the paper's two statements do not
fit one linear capacity (88.5 % at 10,000 is 124 % at 14,000; "reach 100
%" at 14,000 is 71 % at 10,000), so a run may set the busiest switch's
utilisation at 10,000 packets/s anywhere in that range (docs/gpint.md,
"Failed probes at 14,000 packets/s", sweeps it).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import networkx as nx

from common.errors import IntbedError
from common.seeds import derive_seed
from controller.gpint.cost import MEASURED, MonitorCost
from controller.gpint.monitor import Monitor, SessionResult
from controller.gpint.planners import plan
from controller.gpint.recovery import FINE_TUNED, PAPER
from orchestration.network import COLLECTOR_PORT, Network, RunEnv
from topologies.model import Topology

PROGRAM = "gpint"
CONFIG_TABLE = "MyIngress.gpint_config"
CONFIG_ACTION = "MyIngress.set_config"
SESSION_BASE = 100  # gpint.p4's GPINT_SESSION_BASE: clone session 100 + p sends to port p
RECOVERY = {"off": None, "paper": PAPER, "ft": FINE_TUNED}
REFERENCE_LOAD_PPS = 10_000.0
REFERENCE_UTILISATION = 0.885  # the middle of the paper's 85-92 %
CAPACITY_MODELS = ("identical", "per-switch", "measured")


class GpintRunError(IntbedError):
    """A GPINT run configuration that cannot run."""


@dataclass(frozen=True)
class GpintRunConfig:
    """Every parameter of one run. ``recovery``: 'off', 'paper' (t_f 1.5 s,
    r_a 10) or 'ft' (GPINT-FT: 0.4 s, 2). ``mea_count``: counter values each
    switch inserts besides its DLV entry (switch id, queue depth); 1 by
    default, the paper's probe sizing: its 2,200-byte limit for Euler's
    195-switch paths (section V-A) is what full stacks of Fig. 4's headers
    with one 32-bit measurement per switch come to (42 + 195 x (3 + 4 + 4)
    = 2,187 bytes). A probe carries at most 128 values, so a longer path
    gets fewer (the figures lower it per run). ``capacity_pps`` None: ``derived_capacities``.
    ``failed_links``: switch pairs whose link drops every packet (a failure
    in the middle of the network, both directions), from the start or, with
    ``fail_at_s``, from that many seconds after the traffic starts (a
    failure mid-session: ``Network.fail_link``). ``probe_timeout_s``:
    without recovery, how long the monitor waits for a probe before the
    session counts as failed. A session still running when the traffic ends
    is not counted. ``end_when_done``: the traffic ends (after ``drain_s``)
    once the monitor has run its sessions instead of at ``duration_s``,
    which then only bounds the run; the background loss is measured over
    the traffic that was sent. ``monitor_cost_us``: the monitor's own
    processing time per request on a target in virtual time (None: as
    measured, ``controller.gpint.cost.MEASURED``; a number: that many
    microseconds per request whatever its path; 0: free). A live target's
    monitor takes its real time instead."""

    n: int = 20
    hosts: int = 60
    ws_k: int = 4
    ws_p: float = 0.1
    planner: str = "gpint-3"
    recovery: str = "off"
    load_pps: float = 10_000.0
    capacity_pps: float | None = None
    capacity_model: str = "identical"
    reference_utilisation: float = REFERENCE_UTILISATION
    link_loss: float = 0.0
    failed_links: tuple[tuple[str, str], ...] = ()
    fail_at_s: float | None = None
    queue_depth: int = 1000
    packet_size: int = 100
    sessions: int = 10
    probe_timeout_s: float = 1.0
    warmup_s: float = 2.0
    duration_s: float = 10.0
    drain_s: float = 0.5
    mea_count: int = 1
    request_type: int = 0
    end_when_done: bool = True
    monitor_cost_us: float | None = None

    def __post_init__(self) -> None:
        def fail(message: str) -> None:
            raise GpintRunError(message)

        if self.recovery not in RECOVERY:
            fail(f"recovery must be one of {', '.join(RECOVERY)}, not {self.recovery!r}")
        if not self.load_pps >= 0:
            fail(f"load_pps must not be negative, not {self.load_pps}")
        if self.capacity_model not in CAPACITY_MODELS:
            fail(f"capacity_model must be one of {', '.join(CAPACITY_MODELS)}, "
                 f"not {self.capacity_model!r}")
        if not 0 < self.reference_utilisation <= 1:
            fail(f"reference_utilisation must be in (0, 1], not {self.reference_utilisation}")
        if self.capacity_pps is not None and not self.capacity_pps > 0:
            fail(f"capacity_pps must be positive, not {self.capacity_pps}")
        if self.sessions < 1:
            fail(f"sessions must be at least 1, not {self.sessions}")
        if not self.probe_timeout_s > 0:
            fail(f"probe_timeout_s must be positive, not {self.probe_timeout_s}")
        if not 0 <= self.mea_count <= 32:
            fail(f"mea_count must be in [0, 32] values per switch, not {self.mea_count}")
        if self.queue_depth < 1:
            fail(f"queue_depth must be at least 1 packet, not {self.queue_depth}")
        if self.packet_size < 64:
            fail(f"packet_size must be at least 64 bytes, not {self.packet_size}")
        if self.fail_at_s is not None and not 0 <= self.fail_at_s < self.duration_s:
            fail(f"fail_at_s must be within the traffic's duration, not {self.fail_at_s}")
        if self.monitor_cost_us is not None and not self.monitor_cost_us >= 0:
            fail(f"monitor_cost_us must not be negative, not {self.monitor_cost_us}")
        if not self.duration_s > self.warmup_s >= 0:
            fail("duration_s must be longer than warmup_s, and warmup_s not negative")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def monitor_cost(self) -> MonitorCost:
        """The monitor's cost model in virtual time."""
        if self.monitor_cost_us is None:
            return MEASURED
        return MonitorCost.flat(self.monitor_cost_us)

    def paths(self, seed: int = 0, topo: Topology | None = None) -> list[list[str]]:
        """The planner's INT paths for the run of ``seed`` (its topology, or
        ``topo`` when already built)."""
        graph = (topo or run_topology(self, seed)).switch_graph()
        return plan(self.planner, graph, seed=derive_seed(seed, "planner"))


@dataclass
class GpintRunResult:
    """What one run measured (the paper's metrics, section V-B)."""

    config: dict[str, Any]
    paths: int
    path_lengths: list[int]
    capacities_pps: dict[str, float]
    sessions: list[dict[str, Any]]
    background_sent: int
    background_delivered: int
    queue_drops: int
    input_drops: int
    link_losses: int
    malformed_probes: int
    wall_time_s: float
    late_probes: int = 0
    late_after_s: list[float] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def background_loss(self) -> float:
        """The paper's packet loss ratio of the background traffic."""
        sent = self.background_sent
        return 1.0 - self.background_delivered / sent if sent else 0.0

    def summary(self) -> dict[str, float]:
        """Per-run means: failed probes over generated probes, failed
        sessions, session latency (completed sessions), the recovery path
        ratio 100 |P_R| / |P|, and the probes counted failed that came
        back after their timeout over generated probes (the rest of the
        failed ones were dropped)."""
        done = [s for s in self.sessions if s["completed"]]
        probes = sum(s["probes"] for s in self.sessions)
        return {
            "background_loss": self.background_loss,
            "failed_probe_ratio": (sum(s["failed_probes"] for s in self.sessions) / probes
                                   if probes else math.nan),
            "failed_session_ratio": (1 - len(done) / len(self.sessions)
                                     if self.sessions else math.nan),
            "latency_s": (sum(s["latency_s"] for s in done) / len(done)) if done else math.nan,
            "recovery_path_ratio": (100.0 * sum(s["recovery_sent"] for s in self.sessions)
                                    / probes if probes else math.nan),
            "sessions": len(self.sessions),
            "late_probe_ratio": self.late_probes / probes if probes else math.nan,
        }


def run_topology(cfg: GpintRunConfig, seed: int = 0) -> Topology:
    """The network of the run of ``seed`` (the seed draws the
    Watts-Strogatz graph) with every switch's processing capacity set."""
    from topologies.generators import gpint_ws

    topo = gpint_ws(n=cfg.n, k=cfg.ws_k, p=cfg.ws_p, seed=seed, hosts=cfg.hosts,
                    link_loss=cfg.link_loss, queue_depth=cfg.queue_depth)
    caps: dict[str, float | None]
    if cfg.capacity_pps is not None:
        caps = {name: cfg.capacity_pps for name in topo.switches}
    elif cfg.capacity_model == "measured":
        caps = {name: None for name in topo.switches}  # the switch model's own
    else:
        caps = dict(derived_capacities(topo, utilisation=cfg.reference_utilisation,
                                       model=cfg.capacity_model))
    for a, b in cfg.failed_links:
        links = [ln for ln in topo.links if {ln.a, ln.b} == {a, b}]
        if not links:
            raise GpintRunError(f"failed_links: no link between {a} and {b} in {topo.name}")
        if cfg.fail_at_s is None:
            for ln in links:
                ln.loss = 1.0
    for name, spec in topo.switches.items():
        spec.processing_rate_pps = caps[name]
    return topo


def switch_loads(topo: Topology, load_pps: float) -> dict[str, float]:
    """Background packets/s crossing each switch when ``load_pps`` flow
    between uniformly random host pairs, split evenly over equal-cost next
    hops at every switch as the routes' ECMP groups split flows
    (``controller.routing``: every neighbour one hop closer)."""
    graph = topo.switch_graph()
    count: Counter[str] = Counter(topo.host_switch(h)[0] for h in topo.hosts)
    hosts = sum(count.values())
    if hosts < 2:
        raise GpintRunError("the background traffic needs at least two hosts")
    visits: Counter[str] = Counter()
    for dst, h_dst in count.items():
        dist = nx.single_source_shortest_path_length(graph, dst)
        mass = {s: h * (h_dst - (1 if s == dst else 0)) for s, h in count.items()}
        for u in sorted(dist, key=dist.__getitem__, reverse=True):
            m = mass.get(u, 0.0)
            if not m:
                continue
            visits[u] += m
            nexts = [v for v in graph[u] if dist.get(v) == dist[u] - 1]
            for v in nexts:
                mass[v] = mass.get(v, 0.0) + m / len(nexts)
    pairs = hosts * (hosts - 1)
    return {name: load_pps * visits[name] / pairs for name in topo.switches}


def derived_capacities(topo: Topology, load_pps: float = REFERENCE_LOAD_PPS,
                       utilisation: float = REFERENCE_UTILISATION, *,
                       model: str = "identical") -> dict[str, float]:
    """Each switch's capacity (module docstring): 'identical', the busiest
    switch's load at ``load_pps`` over ``utilisation`` for every switch;
    'per-switch', each its own."""
    caps = {name: load / utilisation
            for name, load in switch_loads(topo, load_pps).items()}
    if model == "identical":
        top = max(caps.values(), default=0.0) or load_pps
        return {name: top for name in caps}
    floor = min((c for c in caps.values() if c > 0), default=load_pps)
    return {name: c if c > 0 else floor for name, c in caps.items()}


def configure_switches(net: Network, cfg: GpintRunConfig) -> None:
    """gpint.p4's contract: switch id, monitor port, recovery and t_f per
    switch; clone session 100 + p to port p for every port that may carry a
    probe, a feedback or a copy (every linked port and the monitor's)."""
    params = RECOVERY[cfg.recovery]
    t_f_us = round((params or PAPER).t_f * 1e6)
    for name, spec in net.topo.switches.items():
        client = net.clients[name]
        client.tables[CONFIG_TABLE].default.modify(CONFIG_ACTION, {
            "switch_id": spec.device_id, "monitor_port": COLLECTOR_PORT,
            "recovery": 1 if params is not None else 0, "t_f_us": t_f_us})
        for port in [*spec.ports, COLLECTOR_PORT]:
            client.clone_sessions.insert(SESSION_BASE + port, [port])


def run_gpint(cfg: GpintRunConfig, env: RunEnv | None = None, *,
              on_session: Callable[[SessionResult], None] | None = None,
              before_finish: Callable[[Network], None] | None = None) -> GpintRunResult:
    """Build, configure, run and measure one run of ``cfg`` where ``env``
    says (its target, seed and live options; the sim and seed 0 without).
    ``before_finish(net)`` sees the network once its traffic has run (a
    diagnosis reading the target's own counters)."""
    env = env or RunEnv()
    topo = run_topology(cfg, env.seed)
    capacities = {name: spec.processing_rate_pps or 0.0 for name, spec in topo.switches.items()}
    if cfg.capacity_model == "measured" and cfg.capacity_pps is None and \
            env.target.models_timing:
        from dataplane.targets.sim.timing import load_model

        measured = load_model(env.switch_model).capacity_pps or 0.0
        capacities = dict.fromkeys(capacities, measured)
    paths = cfg.paths(env.seed, topo)
    label = f"gpint-{cfg.planner}-{cfg.recovery}-n{cfg.n}-seed{env.seed}"
    net = env.open(topo, PROGRAM, label=label)
    t_wall = time.perf_counter()
    with net:
        net.install_routes()
        configure_switches(net, cfg)
        ids = {name: spec.device_id for name, spec in topo.switches.items()}
        def session_done(result: SessionResult) -> None:
            if on_session is not None:
                on_session(result)
            if cfg.end_when_done and len(monitor.results) >= cfg.sessions:
                net.end_traffic()

        monitor = Monitor(topo, paths, net.clock, net.send_to_switch,
                          recovery=RECOVERY[cfg.recovery], request_type=cfg.request_type,
                          mea_ranges={name: (0, cfg.mea_count) for name in topo.switches},
                          switch_ids=ids, probe_timeout_s=cfg.probe_timeout_s,
                          on_session=session_done,
                          cost=cfg.monitor_cost() if env.target.models_timing else None)
        net.attach_collector(monitor.on_frames)
        background(net, cfg, env.seed)
        t0 = net.start_traffic()
        clock = net.clock

        def begin() -> None:
            with net.app_lock:
                monitor.start(cfg.sessions)

        clock.call_later(t0 + cfg.warmup_s - clock.now(), begin)
        if cfg.fail_at_s is not None:
            for a, b in cfg.failed_links:
                clock.call_later(t0 + cfg.fail_at_s - clock.now(), net.fail_link, a, b)
        clock.call_later(t0 + cfg.duration_s - clock.now(), monitor.stop)
        net.run_traffic(cfg.duration_s, cfg.drain_s)
        with net.app_lock:
            monitor.stop()
        if before_finish is not None:
            before_finish(net)
        counters = net.finish()
    return GpintRunResult(
        config={**cfg.to_dict(), **env.to_dict()}, paths=len(paths),
        path_lengths=[len(p) for p in paths],
        capacities_pps=capacities,
        sessions=[_session_row(s) for s in monitor.results],
        background_sent=counters.sent, background_delivered=counters.delivered,
        queue_drops=counters.queue_drops, input_drops=counters.input_drops,
        link_losses=counters.link_losses,
        malformed_probes=monitor.stats.malformed_total,
        late_probes=monitor.stats.late, late_after_s=list(monitor.stats.late_after_s),
        wall_time_s=time.perf_counter() - t_wall, extra=dict(counters.extra))


def background(net: Network, cfg: GpintRunConfig, seed: int = 0) -> None:
    """Every host sends ``load_pps / hosts`` UDP packets/s to random others,
    drawn from the run's ``seed``."""
    from traffic.schedules import flows_to_random_servers

    hosts = list(net.topo.hosts.values())
    if not hosts or not cfg.load_pps:
        return
    pps = cfg.load_pps / len(hosts)
    duration_us = round(cfg.duration_s * 1e6)
    for h in hosts:
        others = [o for o in hosts if o.name != h.name]
        sched = flows_to_random_servers(h, others, pps * cfg.packet_size * 8, cfg.packet_size,
                                        duration_us, derive_seed(seed, "traffic", h.name),
                                        arrivals="poisson")
        net.add_sender(h.name, sched, seed=derive_seed(seed, "loss", h.name, 0))
        net.add_receiver(h.name)


def _session_row(s: SessionResult) -> dict[str, Any]:
    return {"session": s.number, "completed": s.completed, "latency_s": s.latency,
            "probes": len(s.paths), "probes_sent": s.probes_sent,
            "recovery_sent": s.recovery_sent, "failed_probes": s.failed_probes,
            "feedbacks": s.feedbacks, "notices": s.notices,
            "unavailable": sorted(str(c) for c, v in s.status.items() if v == "unavailable")}
