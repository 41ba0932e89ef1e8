"""Telemetry bytes on the wire for network-wide coverage (INT-label's
Fig. 21, INT-path against INT-label), measured in runs on one fat-tree.

- INT-label: ``run_intlabel`` on ``fat_tree(k)`` with every host sending
  1 kB packets to random hosts and labeling interval T; the bytes are the
  INT option and items of every frame a switch transmits on a data link
  (``GroundTruth.int_bytes``), per second of traffic.
- INT-path: GPINT's Euler planner (INT-path's Euler trails,
  ``controller.gpint.planners``) on the same fat-tree, its probes sent by
  the monitor through ``p4src/gpint.p4`` switches as measurement sessions
  (``controller.gpint.monitor``) with no other traffic (a trail longer than
  a probe's 200 SR entries is probed in consecutive pieces); the bytes are every
  frame a switch transmits on a data link, per session. A network-wide
  sweep every T is then ``1 / T`` sessions a second.

Both count each link a frame crosses (bytes on the wire), not the bytes a
sender emits once as the authors' sheet does.
"""

from __future__ import annotations

from dataclasses import dataclass

from orchestration.network import RunEnv
from orchestration.systems.intlabel.config import RunConfig
from orchestration.systems.intlabel.run import run_intlabel
from topologies.generators import fat_tree


@dataclass(frozen=True)
class WireBandwidth:
    """Telemetry bytes per second on every data link for one sweep each T."""

    scheme: str
    k: int
    T_ms: float
    bytes_per_s: float
    extra_packets_per_s: float
    coverage: float | None = None
    """INT-label's mean coverage per telemetry window (None for INT-path,
    whose sessions cover every link by construction)."""
    loss_rate: float = 0.0
    """INT-label: user packets lost (switches past their capacity)."""

    @property
    def mbps(self) -> float:
        return 8 * self.bytes_per_s / 1e6


def intlabel_wire(k: int, T_ms: float, *, rate_mbps: float = 2.0, duration_s: float = 1.0,
                  env: RunEnv | None = None) -> WireBandwidth:
    """INT bytes per second of INT-label on ``fat_tree(k)``, every host a sender."""
    hosts = tuple(sorted(fat_tree(k).hosts, key=lambda h: int(h[1:])))
    # A collector that keeps up (collector_model="free"): this counts bytes on the
    # wire, and a fat-tree's reports come faster than intbed's live collector
    # handles them (about 830 frames/s, docs/measurements/intlabel-collector/).
    cfg = RunConfig(topology="fat-tree", topology_params=(("k", k),), senders=hosts,
                    rate_bps=rate_mbps * 1e6, packets=None, duration_s=duration_s,
                    T_ms=T_ms, Ti_ms=2 * T_ms, warmup_s=min(0.2, duration_s / 4),
                    collector_model="free")
    m = run_intlabel(cfg, env)
    seconds = cfg.traffic_duration_s()
    return WireBandwidth("INT-label", k, T_ms, m.int_bytes / seconds, 0.0, m.mean_coverage,
                         m.loss_rate)


def split_trails(paths: list[list[str]], most: int) -> list[list[str]]:
    """Trails of at most ``most`` switches: a longer one becomes consecutive
    pieces, each starting where the one before ended (a probe carries at
    most ``most`` SR entries), so every link is still crossed once."""
    out = []
    for path in paths:
        start = 0
        while True:
            out.append(path[start:start + most])
            start += most - 1
            if start >= len(path) - 1:
                break
    return out


def int_path_wire(k: int, T_ms: float, *, sessions: int = 10, seed: int = 0,
                  env: RunEnv | None = None) -> WireBandwidth:
    """Probe bytes per second of INT-path's Euler trails on ``fat_tree(k)``,
    one session (a probe per trail) every T."""
    from controller.gpint.monitor import Monitor
    from controller.gpint.planners import plan
    from controller.gpint.probe import MAX_SR
    from orchestration.systems.gpint import PROGRAM, GpintRunConfig, configure_switches

    env = env or RunEnv()
    topo = fat_tree(k)
    paths = split_trails(plan("euler", topo.switch_graph(), seed=seed), MAX_SR)
    wire = {"bytes": 0, "frames": 0}

    def tap(_ns: int, _switch: str, _port: int, frame: bytes) -> None:
        wire["bytes"] += len(frame)
        wire["frames"] += 1

    net = env.open(topo, PROGRAM, label=f"int-path-wire-k{k}")
    with net:
        net.install_routes()
        configure_switches(net, GpintRunConfig(recovery="off"))
        ids = {name: spec.device_id for name, spec in topo.switches.items()}
        monitor = Monitor(topo, paths, net.clock, net.send_to_switch, recovery=None,
                          mea_ranges={name: (0, 0) for name in topo.switches},
                          switch_ids=ids)
        net.attach_collector(monitor.on_frames)
        net.tap_transmitted(tap)
        with net.app_lock:
            monitor.start(sessions)
        net.run(sessions * 0.5 + 1.0)
        with net.app_lock:
            monitor.stop()
        net.finish()
    done = [s for s in monitor.results if s.completed]
    if len(done) != sessions:
        raise RuntimeError(f"INT-path: {len(done)} of {sessions} sessions completed")
    per_s = 1000.0 / T_ms
    return WireBandwidth("INT-path", k, T_ms, wire["bytes"] / sessions * per_s,
                         wire["frames"] / sessions * per_s)
