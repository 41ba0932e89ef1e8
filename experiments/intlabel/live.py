"""One INT-label run on a live target (``mininet``: ``intbed-switch``; ``bmv2``).

The same ``RunConfig`` as the sim (``runs.run_intlabel``): the same
topology, program, switch configuration, sender schedules and controller
apps, but on the wall clock, with real processes and Redis:

- the network is ``orchestration.live.LiveNetwork`` (switch pcaps on, for the
  ground truth); routes and INT-label's tables go in over P4Runtime/gRPC;
- the INT database and Pro's aging store are Redis (``RedisIntDatabase``,
  ``RedisAgingStore``: expiry events plus the deadline backstop), on a
  ``WallClock``; the three share one ``threading.RLock``, which the clock
  holds around every callback, Pro's start and stop included (ProLoop is
  not thread-safe);
- reports are read from the collector host's interfaces by a thread of
  this process (``FrameTap``, with the kernel's receive times) and go
  through the ``Collector``'s parsing and statistics, with the Algorithm 4
  updates of a whole batch of frames in one Redis pipeline
  (``Collector.feed_batch``): one round trip per item cannot keep up with
  Pro labeling every packet (about 4,000 items/s in the quick runs);
- senders and receivers are ``traffic.live`` processes in the hosts, all
  started on one instant, the run's time 0;
- the ground truth (ports that carried traffic per telemetry window, INT
  bytes, labeled packets) is the sim's ``GroundTruth`` fed from every
  switch's ``<iface>_out.pcap`` after the switches stopped.

Times in the metrics count from the senders' start, as the sim's count from
virtual time 0. Link delays are not emulated (no ``netem``): ``extra``
lists such limitations, with the Redis expiry lag, Pro's reaction times,
the switches' packet rates and the senders' lateness.

A switch process that ends mid-run stops the run: what was gathered so far
goes to ``partial_metrics.json`` in the run directory, the network is torn
down, and ``IntbedError("switch NAME (pid N) exited with code C: ...")``
is raised. Ctrl-C does the same and re-raises KeyboardInterrupt.
"""

from __future__ import annotations

import bisect
import json
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from common.errors import IntbedError
from common.seeds import derive_seed
from controller.intlabel import (
    Collector,
    CollectorEndpoint,
    ProLoop,
    configure_switch,
)
from controller.intlabel.redis_store import RedisAgingStore, RedisIntDatabase
from controller.intlabel.wallclock import WallClock
from experiments.intlabel.metrics import (
    GroundTruth,
    RunMetrics,
    assemble,
    report_packet_id,
)
from experiments.intlabel.runs import RunConfig, run_topology, sender_schedules
from orchestration.live.network import LiveNetwork, LiveTargetError, live_available
from orchestration.live.options import LiveOptions, next_run_dir
from orchestration.live.tap import FrameTap
from orchestration.live.traffic import LiveTraffic
from orchestration.sim import COLLECTOR_IP, COLLECTOR_MAC, COLLECTOR_PORT, program_path

SENDER_SLACK_S = 30.0  # beyond the schedule's length before a sender counts as stuck
# Redis keeps TTLs in whole milliseconds and stamps deadlines on its own
# clock: an expiry may come this much before k T after the update.
REACTION_TOLERANCE_S = 0.002


def run_intlabel_live(cfg: RunConfig, target: str = "mininet", *,
                      options: LiveOptions | None = None,
                      on_running: Callable[[LiveNetwork], None] | None = None) -> RunMetrics:
    """Run ``cfg`` on a live ``target``. ``on_running(net)`` is called once
    the traffic has started (a hook for tests and tools)."""
    cfg.validate()
    problem = live_available(target)
    if problem is not None:
        raise LiveTargetError(problem)
    opts = options or LiveOptions()
    with ExitStack() as stack:
        if opts.results_dir is not None:
            root = Path(opts.results_dir)
        else:
            root = Path(stack.enter_context(TemporaryDirectory(prefix="intbed-live-")))
        run = _LiveRun(cfg, target, opts, next_run_dir(root, _label(cfg)))
        stack.callback(run.close)
        return run.execute(on_running)
    raise AssertionError("unreachable")  # pragma: no cover - ExitStack re-raises


def _label(cfg: RunConfig) -> str:
    pro = f"-pro-{cfg.pro_style}" if cfg.pro else ""
    return f"{cfg.mode}{pro}-T{cfg.T_ms:g}ms-seed{cfg.seed}"


class _LiveRun:
    """The pieces of one run, so that teardown and metrics can see them all."""

    def __init__(self, cfg: RunConfig, target: str, opts: LiveOptions, run_dir: Path) -> None:
        self.cfg = cfg
        self.ic = cfg.intlabel()
        self.target = target
        self.opts = opts
        self.run_dir = run_dir
        self.topo = run_topology(cfg)
        self.stack = ExitStack()
        self.lock = threading.RLock()
        self.net: LiveNetwork | None = None
        self.clock: WallClock | None = None
        self.db: RedisIntDatabase | None = None
        self.store: RedisAgingStore | None = None
        self.pro: ProLoop | None = None
        self.tap: FrameTap | None = None
        self.traffic: LiveTraffic | None = None
        self.collector: Collector | None = None
        self.reported: set[bytes] = set()
        self.names: dict[int, str] = {}
        self.origin_mono = 0.0  # time.monotonic() at the clock's zero
        self.t0_clock = 0.0  # clock time of the senders' start
        self.wall_start_ns = 0  # time.time_ns() of the senders' start
        self.build_s = 0.0
        self.elapsed_s = 0.0
        (run_dir / "run_config.json").write_text(
            json.dumps({"target": target, **cfg.to_dict()}, indent=1) + "\n")

    # ------------------------------------------------------------------ setup

    def _redis_url(self) -> str:
        if self.opts.redis_url is not None:
            return self.opts.redis_url
        from orchestration.redis_server import RedisServer

        return self.stack.enter_context(RedisServer()).url

    def _setup(self) -> None:
        cfg, ic, topo = self.cfg, self.ic, self.topo
        t_build = time.perf_counter()
        url = self._redis_url()
        self.net = net = LiveNetwork(topo, program_path("int_label"), run_dir=self.run_dir,
                                     target=self.target, pcap=True, seed=cfg.seed)
        self.stack.callback(net.stop)
        net.start()
        net.install_routes()
        endpoint = CollectorEndpoint(COLLECTOR_MAC, COLLECTOR_IP, COLLECTOR_PORT)
        ids = {name: configure_switch(net.clients[name], topo, name, ic, endpoint).switch_id
               for name in topo.switches}
        self.names = {sid: name for name, sid in ids.items()}

        prefix = f"intbed:{uuid.uuid4().hex[:12]}:"
        self.clock = clock = WallClock(lock=self.lock)
        self.origin_mono = time.monotonic() - clock.now()
        self.db = RedisIntDatabase(url, prefix=prefix + "int:", lock=self.lock)
        self.collector = Collector(self.db, clock, udp_port=ic.udp_port, max_hop=ic.max_hop)
        if ic.pro:
            self.store = RedisAgingStore(url, clock, prefix=prefix + "age:", lock=self.lock)
            self.pro = ProLoop(net.clients, self.db, self.store, clock, T_s=ic.T_s, k=ic.k,
                               switch_ids=ids, style=ic.pro_style,
                               restore_factor=ic.restore_factor)

        self.traffic = LiveTraffic(net, self.run_dir / "traffic")
        schedules = sender_schedules(topo, cfg)
        for name, sched in schedules:
            # The sim's stream for the host's wire, so host-side losses match it.
            self.traffic.add_sender(name, sched, loss=net.host_loss(name),
                                    seed=derive_seed(cfg.seed, "loss", name, 0))
        dports = tuple(sorted({f.dport for _, sched in schedules for f in sched.dests}))
        for name in topo.hosts:
            self.traffic.add_receiver(name, udp_ports=dports)
        ifaces = [net.collector_ifaces[n] for n in sorted(net.collector_ifaces)]
        self.tap = FrameTap(ifaces, net.host_pid("collector"), self._on_reports)
        self.tap.start()
        self.build_s = time.perf_counter() - t_build

    def _on_reports(self, frames: list[tuple[bytes, int, int]]) -> None:
        assert self.collector is not None and self.db is not None
        origin = self.origin_mono
        for report in self.collector.feed_batch(
                [(f, t_ns / 1e9 - origin) for f, t_ns, _ in frames]):
            self.reported.add(report_packet_id(report.src_ip, report.dst_ip, report.ip_id))

    # ------------------------------------------------------------------ running

    def execute(self, on_running: Callable[[LiveNetwork], None] | None) -> RunMetrics:
        interrupted: BaseException | None = None
        try:
            self._setup()
            self._traffic_phase(on_running)
        except KeyboardInterrupt as exc:
            if self.traffic is None or self.traffic.start_ns is None:
                raise
            interrupted = exc
        self._stop_apps()
        assert self.net is not None
        counters = self.net.stop_switches()
        failure = self.net.failure
        metrics = self._metrics(counters)
        if not self.opts.keep_pcaps and self.net.pcap_dir is not None:
            shutil.rmtree(self.net.pcap_dir, ignore_errors=True)
        if failure is not None or interrupted is not None:
            (self.run_dir / "partial_metrics.json").write_text(metrics.to_json() + "\n")
            if interrupted is not None:
                raise interrupted
            assert failure is not None
            raise IntbedError(f"{failure.message()} (results so far: {self.run_dir})")
        (self.run_dir / "metrics.json").write_text(metrics.to_json() + "\n")
        return metrics

    def _traffic_phase(self, on_running: Callable[[LiveNetwork], None] | None) -> None:
        net, traffic, clock = self.net, self.traffic, self.clock
        assert net is not None and traffic is not None and clock is not None
        net.check()
        start_ns = traffic.start(self.opts.lead_s)
        self.wall_start_ns = start_ns + (time.time_ns() - time.monotonic_ns())
        self.t0_clock = start_ns / 1e9 - self.origin_mono
        traffic_s = self.cfg.traffic_duration_s()
        if self.pro is not None:
            # Pro adapts while traffic flows; afterwards every port looks starved.
            clock.call_later(self.t0_clock - clock.now(), self.pro.start)
            clock.call_later(self.t0_clock + traffic_s - clock.now(), self.pro.stop)
        if on_running is not None:
            on_running(net)
        if traffic.wait_senders(traffic_s + self.opts.lead_s + SENDER_SLACK_S, net.failed):
            net.failed.wait(self.cfg.drain_s)
        self.elapsed_s = time.monotonic() - start_ns / 1e9

    def _stop_apps(self) -> None:
        """Everything but the switches and the network, in dependency order."""
        if self.traffic is not None:
            self.traffic.stop()
        if self.tap is not None:
            self.tap.stop()
        if self.pro is not None:
            with self.lock:
                self.pro.stop()
        if self.clock is not None:
            self.clock.close()

    def close(self) -> None:
        """Tear down whatever is still up (idempotent), Redis keys included."""
        try:
            self._stop_apps()
        finally:
            for store in (self.db, self.store):
                if store is not None:
                    try:
                        store.clear()
                        store.close()
                    except Exception:  # Redis may be gone already
                        pass
            self.stack.close()

    # ------------------------------------------------------------------ metrics

    def _truth(self) -> GroundTruth:
        assert self.net is not None
        window_ns = round(self.cfg.Ti_ms * 1e6)
        truth = GroundTruth(window_ns, self.ic.max_hop, skip_ports=(COLLECTOR_PORT,))
        start = self.wall_start_ns
        tap = truth.tap
        for t_ns, switch, port, frame in self.net.transmitted(skip_ports=(COLLECTOR_PORT,)):
            if t_ns >= start:
                tap(t_ns - start, switch, port, frame)
        return truth

    def _metrics(self, counters: dict[str, dict[str, Any] | None]) -> RunMetrics:
        cfg = self.cfg
        assert self.collector is not None and self.db is not None and self.traffic is not None
        truth = self._truth()
        t0 = self.t0_clock
        arrivals = [(t - t0, (self.names.get(k[0], str(k[0])), k[1]), ok)
                    for t, k, ok in self.db.arrivals()]
        received = self.traffic.received()
        send_stats = self.traffic.send_stats()
        ports = [p for c in counters.values() if c for p in c.get("ports", {}).values()]
        changes = [(c.time_s - t0, c.switch, c.port, c.shift)
                   for c in (self.pro.changes if self.pro else [])]
        return assemble(
            cfg, truth, arrivals, self.collector.stats, self.reported,
            delivered=sum(1 for rx in received.values() for k in rx.keys if k is not None),
            sent=sum(len(log) for log in self.traffic.sent_logs().values()),
            queue_drops=sum(sum(c.get("queue_drops", {}).values())
                            for c in counters.values() if c),
            link_losses=sum(p.get("lost", 0) for p in ports) + sum(
                s.host_lost for s in send_stats.values()),
            pro_changes=changes, sim_time_s=self.elapsed_s, events=0,
            wall_time_s=self.elapsed_s, build_time_s=self.build_s,
            extra=self._extra(counters, arrivals, changes, send_stats))

    def _extra(self, counters: dict[str, dict[str, Any] | None],
               arrivals: list[tuple[float, tuple[str, int], bool]],
               changes: list[tuple[float, str, int, int]],
               send_stats: dict[str, Any]) -> dict[str, Any]:
        assert self.net is not None
        duration = max(self.elapsed_s, 1e-9)
        rates = {}
        for name, c in counters.items():
            if not c:
                continue
            data = [p for port, p in c.get("ports", {}).items() if port != COLLECTOR_PORT]
            rates[name] = {"rx_pps": sum(p.get("rx", 0) for p in data) / duration,
                           "tx_pps": sum(p.get("tx", 0) for p in data) / duration}
        out: dict[str, Any] = {
            "target": self.target,
            "run_dir": str(self.run_dir),
            "limitations": list(self.net.limitations),
            "switch_rates": rates,
            "senders": {h: {"sent": s.sent, "host_lost": s.host_lost,
                            "late_p50_us": s.late_p50_us, "late_p99_us": s.late_p99_us,
                            "late_max_us": s.late_max_us} for h, s in send_stats.items()},
            "collector_frames": self.tap.frames if self.tap is not None else 0,
            "collector_errors": [repr(e) for e in self.tap.errors] if self.tap else [],
            "failure": self.net.failure.message() if self.net.failure else None,
        }
        if self.store is not None:
            s = self.store.stats
            out["redis_expiry"] = {"lag": s.lag_summary(), "events": s.events,
                                   "swept": s.swept, "superseded": s.superseded,
                                   "reconnects": s.reconnects}
            out["pro_reactions"] = pro_reactions(arrivals, changes, self.ic.k * self.ic.T_s)
        return out


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
