"""One INT-label run, written once for every target.

The fabric runs ``p4src/intlabel.p4`` with shortest-path routes and
INT-label's tables (``controller.intlabel.configure_switch``); every switch
reports to one collector; the Pro loop runs when enabled; the senders play
``sender_schedules``; every data port is tapped for the ground truth the
metrics compare against (``metrics``). What differs per target comes from
the ``Network`` (clock, transport, taps) and the stores it offers (memory
or Redis, ``sinks.intlabel.stores``), never from the target's name.

On a live target a switch process that ends mid-run, or Ctrl-C once the
traffic has started, stops the run: what was gathered so far goes to
``partial_metrics.json`` in the network's run directory, the network is
torn down, and the error (or the interrupt) is raised.
"""

from __future__ import annotations

import bisect
import json
import random
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from common.errors import IntbedError
from common.seeds import derive_seed
from controller.intlabel import CollectorEndpoint, ProLoop, ShiftChange, configure_switch
from orchestration.network import (
    COLLECTOR_IP,
    COLLECTOR_MAC,
    COLLECTOR_PORT,
    Network,
    RunEnv,
)
from orchestration.systems.intlabel.collector_profile import load_collector_profile
from orchestration.systems.intlabel.collector_time import CollectorServer
from orchestration.systems.intlabel.config import (
    EXPIRY_LAG_MAX_MS,
    RunConfig,
    run_topology,
    sender_schedules,
)
from orchestration.systems.intlabel.metrics import (
    GroundTruth,
    RunMetrics,
    assemble,
    report_packet_id,
)
from sinks.intlabel import Collector, LateExpiries
from sinks.intlabel.stores import IntLabelStores, stores_for

PROGRAM = "intlabel"
# Redis keeps TTLs in whole milliseconds and stamps deadlines on its own
# clock: an expiry may come this much before k T after the update.
REACTION_TOLERANCE_S = 0.002

Inspect = Callable[[Network, Any, RunConfig], dict[str, Any]]


@dataclass(frozen=True)
class CollectorBatch:
    """One batch of report frames the collector handled: its frames and INT
    items, the changes of S Pro made while it was handled, the collector's
    busy (wall) seconds, how long its oldest frame had waited, and when it
    was handled, in seconds after the traffic's end (negative during it)."""

    frames: int
    items: int
    changes: int
    busy_s: float
    wait_s: float
    after_traffic_s: float


OnBatch = Callable[[CollectorBatch], None]


def run_label(cfg: RunConfig, seed: int = 0) -> str:
    """A short name for the run (live targets name its directory after it)."""
    pro = f"-pro-{cfg.pro_style}" if cfg.pro else ""
    if cfg.pro and cfg.pro_style == "flag":
        pro += f"{cfg.restore_factor:g}"
    return f"{cfg.mode}{pro}-T{cfg.T_ms:g}ms-seed{seed}"


def run_intlabel(cfg: RunConfig, env: RunEnv | None = None, *,
                 inspect: Inspect | None = None, stores: IntLabelStores | None = None,
                 on_running: Callable[[Network], None] | None = None,
                 on_batch: OnBatch | None = None) -> RunMetrics:
    """Build, configure, run and measure one run of ``cfg`` where ``env``
    says (target, seed, and a live target's ``LiveOptions``: its run
    directory and Redis; the sim and seed 0 without).

    ``inspect(net, topo, cfg)`` runs on the finished network; what it returns
    lands in ``RunMetrics.extra``. ``stores`` overrides the stores the
    network offers; ``on_running(net)`` is called once the traffic has
    started; ``on_batch`` gets every batch the collector handles, timed
    (how the collector's cost is measured: experiments.intlabel.collector_cost)."""
    env = env or RunEnv()
    topo = run_topology(cfg)
    net = env.open(topo, PROGRAM, label=run_label(cfg, env.seed))
    with ExitStack() as stack:
        stack.callback(net.stop)
        return _Run(cfg, env, net, stack, stores, on_batch).execute(inspect, on_running)
    raise AssertionError("unreachable")  # pragma: no cover - ExitStack re-raises


class _Run:
    """The pieces of one run, so that teardown and metrics can see them all."""

    def __init__(self, cfg: RunConfig, env: RunEnv, net: Network, stack: ExitStack,
                 stores: IntLabelStores | None, on_batch: OnBatch | None = None) -> None:
        self.cfg = cfg
        self.on_batch = on_batch
        self.traffic_end_s = float("inf")
        self.env = env
        self.net = net
        self.stack = stack
        self.stores = stores
        # Networks tap data links only: no collector port to skip.
        self.truth = GroundTruth(round(cfg.Ti_ms * 1e6), cfg.max_hop)
        self.reported: set[bytes] = set()
        self.names: dict[int, str] = {}
        self.collector: Collector | None = None
        self.pro: ProLoop | None = None
        self.aging: Any = None
        self.server: CollectorServer | None = None
        self.t0 = 0.0
        self.build_s = 0.0
        self.wall_s = 0.0
        self.started = False
        if net.run_dir is not None:
            (net.run_dir / "run_config.json").write_text(
                json.dumps({**env.to_dict(), **cfg.to_dict()}, indent=1, default=str)
                + "\n")

    def _setup(self) -> None:
        cfg, net = self.cfg, self.net
        t_build = time.perf_counter()
        net.start()
        net.install_routes()
        endpoint = CollectorEndpoint(COLLECTOR_MAC, COLLECTOR_IP, COLLECTOR_PORT)
        ids = {name: configure_switch(net.clients[name], net.topo, name, cfg,
                                      endpoint).switch_id for name in net.topo.switches}
        self.names = {sid: name for name, sid in ids.items()}

        clock = net.clock
        if self.stores is None:
            self.stores = stores_for(net.redis_url(), net.app_lock)
        self.stack.callback(self.stores.close)
        db = self.stores.int_database()
        self.collector = Collector(db, clock, udp_port=cfg.udp_port, max_hop=cfg.max_hop)
        handler: Callable[[list[tuple[bytes, float]]], None] = (
            self._on_reports if self.on_batch is None else self._timed_reports)
        cost = cfg.collector_cost(None if self.env.collector_profile is None
                                  else load_collector_profile(self.env.collector_profile))
        if not cost.free and self.env.target.models_timing:
            self.server = CollectorServer(clock, cost, handler, self._changes)
            handler = self.server
        net.attach_collector(handler, delay_us=cfg.report_delay_us)
        net.tap_transmitted(self.truth.tap)
        if cfg.pro:
            self.aging = self.stores.aging_store(clock)
            lag_s = cfg.expiry_lag_mean_s()
            if lag_s > 0 and self.env.target.models_timing:
                self.aging = LateExpiries(self.aging, clock, expiry_lag(
                    lag_s, derive_seed(self.env.seed, "expiry-lag")))
            self.pro = ProLoop(net.clients, db, self.aging, clock, T_s=cfg.T_s, k=cfg.k,
                               switch_ids=ids, style=cfg.pro_style,
                               restore_factor=cfg.restore_factor)
        seed = self.env.seed
        schedules = sender_schedules(net.topo, cfg, seed)
        for name, sched in schedules:
            # The stream of the host's wire, so host-side losses match the sim's.
            net.add_sender(name, sched, seed=derive_seed(seed, "loss", name, 0))
        dports = tuple(sorted({f.dport for _, sched in schedules for f in sched.dests}))
        for name in net.topo.hosts:
            net.add_receiver(name, udp_ports=dports)
        self.build_s = time.perf_counter() - t_build

    def _changes(self) -> list[ShiftChange]:
        return self.pro.changes if self.pro is not None else []

    def _timed_reports(self, frames: list[tuple[bytes, float]]) -> None:
        assert self.collector is not None and self.on_batch is not None
        now = self.net.clock.now()
        changes = len(self._changes())
        items = self.collector.stats.items
        t0 = time.perf_counter()
        self._on_reports(frames)
        busy = time.perf_counter() - t0
        self.on_batch(CollectorBatch(
            len(frames), self.collector.stats.items - items,
            len(self._changes()) - changes, busy,
            now - min(t for _, t in frames), now - self.traffic_end_s))

    def _on_reports(self, frames: list[tuple[bytes, float]]) -> None:
        assert self.collector is not None
        reported = self.reported
        for report in self.collector.feed_batch(frames):
            reported.add(report_packet_id(report.src_ip, report.dst_ip, report.ip_id))

    def execute(self, inspect: Inspect | None,
                on_running: Callable[[Network], None] | None) -> RunMetrics:
        net, cfg = self.net, self.cfg
        interrupted: KeyboardInterrupt | None = None
        try:
            self._setup()
            self.t0 = net.start_traffic()
            self.started = True
            traffic_s = cfg.traffic_duration_s()
            self.traffic_end_s = self.t0 + traffic_s
            if self.server is not None:
                self.server.traffic_end_s = self.traffic_end_s
            if self.pro is not None:
                # Pro adapts while traffic flows; afterwards every port looks starved.
                _at(net.clock, self.t0, self.pro.start)
                _at(net.clock, self.t0 + traffic_s, self.pro.stop)
            t0 = time.perf_counter()
            net.run_traffic(traffic_s, cfg.drain_s, on_running)
            self.wall_s = time.perf_counter() - t0
        except KeyboardInterrupt as exc:
            if not self.started:
                raise
            interrupted = exc
        if self.pro is not None:
            with net.app_lock:
                self.pro.stop()
        counters = net.finish()
        extra = dict(counters.extra)
        metrics = self._metrics(counters, extra)
        if inspect is not None and net.failure is None and interrupted is None:
            metrics.extra.update(inspect(net, net.topo, cfg))
        if net.failure is not None or interrupted is not None:
            if net.run_dir is not None:
                (net.run_dir / "partial_metrics.json").write_text(metrics.to_json() + "\n")
            if interrupted is not None:
                raise interrupted
            where = f" (results so far: {net.run_dir})" if net.run_dir is not None else ""
            raise IntbedError(f"{net.failure}{where}")
        if net.run_dir is not None:
            (net.run_dir / "metrics.json").write_text(metrics.to_json() + "\n")
        return metrics

    def _metrics(self, counters: Any, extra: dict[str, Any]) -> RunMetrics:
        assert self.collector is not None
        t0 = self.t0
        names = self.names
        arrivals = [(t - t0, (names.get(k[0], str(k[0])), k[1]), ok)
                    for t, k, ok in self.collector.db.arrivals()]
        changes = [(c.time_s - t0, c.switch, c.port, c.shift)
                   for c in (self.pro.changes if self.pro else [])]
        if self.pro is not None and self.pro.passes and not self.env.target.models_timing:
            # What each pass of Pro's loop took on the wall clock (virtual time: nothing).
            extra["pro_passes_start_s_ms_checked_changes"] = [
                [round(p.start_s - t0, 4), round((p.end_s - p.start_s) * 1e3, 3), p.checked,
                 p.changes] for p in self.pro.passes]
        stats = getattr(self.aging, "stats", None)
        if stats is not None:  # stores that measure their expiry lag (Redis)
            extra["redis_expiry"] = {"lag": stats.lag_summary(), "events": stats.events,
                                     "swept": stats.swept, "superseded": stats.superseded,
                                     "reconnects": stats.reconnects}
            extra["pro_reactions"] = pro_reactions(arrivals, changes,
                                                   self.cfg.k * self.cfg.T_s)
        return assemble(
            self.cfg, self.truth, arrivals, self.collector.stats, self.reported,
            delivered=counters.delivered, sent=counters.sent,
            queue_drops=counters.queue_drops, link_losses=counters.link_losses,
            pro_changes=[tuple(c) for c in changes], sim_time_s=counters.elapsed_s,
            events=counters.events, wall_time_s=self.wall_s or counters.elapsed_s,
            build_time_s=self.build_s, extra=extra, env=self.env.to_dict())


def expiry_lag(mean_s: float, seed: int) -> Callable[[], float]:
    """Lags drawn from an exponential of ``mean_s``, cut at the live
    store's backstop (``EXPIRY_LAG_MAX_MS``); their own stream of ``seed``."""
    rng = random.Random(seed)
    rate, cap = 1.0 / mean_s, EXPIRY_LAG_MAX_MS * 1e-3
    return lambda: min(rng.expovariate(rate), cap)


def _at(clock: Any, when_s: float, fn: Callable[[], Any]) -> None:
    """``fn()`` at clock time ``when_s``: now if that time has come."""
    delay = when_s - clock.now()
    if delay <= 0:
        fn()
    else:
        clock.call_later(delay, fn)


def pro_reactions(arrivals: list[tuple[float, tuple[str, int], bool]],
                  changes: list[tuple[float, str, int, int]], timeout_s: float
                  ) -> list[dict[str, Any]]:
    """For every change that raised a port's S: how long after the update
    whose aging key expired it came (None when the port had none before).

    That update is the port's last accepted one at least ``timeout_s`` (k T)
    before the change, within ``REACTION_TOLERANCE_S``: a key refreshed
    later was still alive. (An expiry claimed by the ``set`` of a late
    update fires just after that update: the silence before it counts.)"""
    updates: dict[tuple[str, int], list[float]] = {}
    for t, key, ok in arrivals:
        if ok:
            updates.setdefault(key, []).append(t)
    for times in updates.values():
        times.sort()
    last_shift: dict[tuple[str, int], int] = {}
    out = []
    for t, switch, port, shift in changes:
        key = (switch, port)
        before = last_shift.get(key, 0)
        last_shift[key] = shift
        if shift <= before:
            continue
        times = updates.get(key, [])
        i = bisect.bisect_right(times, t - timeout_s + REACTION_TOLERANCE_S)
        since = t - times[i - 1] if i else None
        out.append({"switch": switch, "port": port, "time_s": t, "shift": shift,
                    "since_update_s": since})
    return out
