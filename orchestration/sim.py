"""The ``sim`` target: a Topology built as switches, wires and hosts in one
process and run in virtual time (``orchestration.network.Network``).

Lifecycle as in Mininet: ``SimNetwork(topo, programs, seed)`` builds,
``start()`` connects the control plane, ``run(seconds)`` advances virtual
time, ``stop()`` tears down. Every random stream derives from the one run
seed (see ``common.seeds``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.errors import InvalidValueError
from common.seeds import derive_seed, stream
from dataplane.compiler.pipeline import CompiledProgram, compile_file
from dataplane.runtime.switch import Switch
from dataplane.targets.sim.events import NS_PER_S, NS_PER_US, Simulator
from dataplane.targets.sim.network import HostNic, SimHost, SimSwitch, Wire
from dataplane.targets.sim.timing import load_model
from orchestration.network import (
    COLLECTOR_IP,
    COLLECTOR_MAC,
    COLLECTOR_PORT,
    FrameHandler,
    Network,
    Tap,
    TargetError,
    TrafficCounters,
)
from orchestration.switch_access import EngineRegisters, SimQueues
from p4src import program_path
from topologies.model import Topology
from traffic.receiver import Receiver
from traffic.sender import Sender, SentLog

__all__ = ["COLLECTOR_IP", "COLLECTOR_MAC", "COLLECTOR_PORT", "SimNetwork", "build"]


@dataclass
class LinkStats:
    a: str
    b: str
    sent: int = 0
    lost: int = 0


@dataclass
class SimNetwork:
    """A built network. ``programs`` maps switch names to compiled programs;
    switches not named run ``default_program``."""

    topo: Topology
    default_program: CompiledProgram | None = None
    programs: Mapping[str, CompiledProgram] = field(default_factory=dict)
    seed: int = 0
    sim: Simulator = field(default_factory=Simulator)
    switches: dict[str, SimSwitch] = field(default_factory=dict)
    hosts: dict[str, SimHost] = field(default_factory=dict)
    services: dict[str, Any] = field(default_factory=dict)
    clients: dict[str, Any] = field(default_factory=dict)
    started: bool = False
    collector: SimHost | None = None
    target: str = "sim"
    limitations: list[str] = field(default_factory=list)
    _senders: list[tuple[str, Sender]] = field(default_factory=list)
    _receivers: dict[str, Receiver] = field(default_factory=dict)
    pcap_dir: Path | None = None
    _collector_nics: dict[str, HostNic] = field(default_factory=dict)
    _pcap_writers: dict[tuple[str, int], Any] = field(default_factory=dict)
    _all_port_taps: list[Tap] = field(default_factory=list)
    _playbacks: list[Any] = field(default_factory=list)
    _ended_early: bool = False
    switch_model: Any = None
    """The switches' timing model (``dataplane.targets.sim.timing``): a
    ``SwitchModel``, a profile's name or path; None, the default model."""

    def __post_init__(self) -> None:
        self.topo.validate()
        self.switch_model = load_model(self.switch_model)
        self._build()

    @classmethod
    def for_run(cls, topo: Topology, program: str | CompiledProgram, *, seed: int = 0,
                pcap_dir: str | Path | None = None, **options: Any) -> SimNetwork:
        """The registry's constructor: ``program`` by name, path or compiled;
        ``pcap_dir``: record every port's transmitted frames there. The live
        targets' ``live`` and ``label`` mean nothing here and are ignored;
        any other option is an error, not silently dropped."""
        switch_model = options.pop("switch_model", None)
        unknown = sorted(set(options) - {"live", "label"})
        if unknown:
            raise TargetError(f"the sim target has no option {', '.join(unknown)} "
                              "(it takes: pcap_dir, switch_model)")
        net = cls(topo, _compiled(program), seed=seed, switch_model=switch_model)
        if pcap_dir is not None:
            net.record_pcaps(pcap_dir)
        return net

    def record_pcaps(self, directory: str | Path) -> None:
        """Write every frame a switch port transmits to
        ``directory/<switch>-eth<port>_out.pcap`` (BMv2's file names), stamped
        with virtual time."""
        from common.pcap import PcapWriter

        self.pcap_dir = Path(directory)
        self.pcap_dir.mkdir(parents=True, exist_ok=True)
        writers = self._pcap_writers

        def write(t_ns: int, switch: str, port: int, frame: bytes) -> None:
            w = writers.get((switch, port))
            if w is None:
                w = writers[(switch, port)] = PcapWriter(
                    self.pcap_dir / f"{switch}-eth{port}_out.pcap")  # type: ignore[operator]
            w.write(frame, t_ns)

        self._all_port_taps.append(write)
        for sw in self.switches.values():
            sw.taps.append(write)
            for ep in sw.ports.values():
                if ep.taps is not sw.taps:  # the collector port's reports too
                    ep.taps.append(write)

    def __enter__(self) -> SimNetwork:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def clock(self) -> Simulator:
        return self.sim

    @property
    def app_lock(self) -> AbstractContextManager[Any]:
        return nullcontext()

    @property
    def failure(self) -> str | None:
        return None

    @property
    def run_dir(self) -> None:
        return None

    def redis_url(self) -> None:
        return None

    # ------------------------------------------------------------ building

    def switch_queues(self, switch: str) -> SimQueues:
        """The running switch's egress ports, set at once (and recorded in the Topology)."""
        return SimQueues(self, switch)

    def switch_registers(self, switch: str) -> EngineRegisters:
        """The engine's register cells: the sim's P4Runtime service refuses
        register writes, as BMv2's does."""
        return EngineRegisters(self.switches[switch].engine)

    def program_of(self, switch: str) -> CompiledProgram:
        spec = self.topo.switches[switch]
        if switch in self.programs:
            return self.programs[switch]
        if spec.program is not None:
            return compile_file(program_path(spec.program))
        if self.default_program is None:
            raise InvalidValueError(f"no program for switch '{switch}'")
        return self.default_program

    def _build(self) -> None:
        sim = self.sim
        model = self.switch_model
        for name, spec in self.topo.switches.items():
            offset = spec.clock_offset_us
            engine = Switch(self.program_of(name), device_id=spec.device_id,
                            seed=derive_seed(self.seed, "p4-random", name),
                            clock=_switch_clock(sim, offset))
            rate = spec.processing_rate_pps
            service = model.draws(derive_seed(self.seed, "service", name),
                                  1e9 / rate if rate else None)
            self.switches[name] = SimSwitch(sim, name, engine, processing_rate_pps=rate,
                                            input_depth=model.input_depth,
                                            clock_offset_us=offset, service=service)
        for name, spec in self.topo.hosts.items():
            self.hosts[name] = SimHost(sim, name, spec.mac, spec.ip)
        for link in self.topo.links:
            for src, sport, dst, dport in ((link.a, link.a_port, link.b, link.b_port),
                                           (link.b, link.b_port, link.a, link.a_port)):
                # A switch's pipeline delay rides on the links it sends on:
                # every packet takes it, and it limits no rate.
                by_switch = src in self.topo.switches
                extra = model.pipeline_delay_ns if by_switch else 0
                jitter = (model.delay_draws(derive_seed(self.seed, "delay", src, sport))
                          if by_switch else None)
                wire = Wire(sim, self.node(dst), dport,
                            bandwidth_bps=round(link.bandwidth_mbps * 1_000_000),
                            delay_ns=round(link.delay_us * NS_PER_US) + extra, loss=link.loss,
                            rng=stream(self.seed, "loss", src, sport), jitter=jitter)
                if src in self.switches:
                    sspec = self.topo.switches[src]
                    self.switches[src].add_port(sport, wire,
                                                depth=sspec.port_queue_depth(sport),
                                                rate_pps=sspec.port_queue_rate_pps(sport))
                else:
                    self.hosts[src].nic = HostNic(sim, wire)

    def attach_collector(self, handler: FrameHandler, *, delay_us: float = 100.0) -> None:
        host = self.collector_host(delay_us=delay_us)
        host.handlers.append(lambda _host, frame, now_ns: handler([(frame, now_ns / 1e9)]))

    def tap_transmitted(self, tap: Tap) -> None:
        """Every frame a switch transmits on a data link: the collector port
        has taps of its own (``collector_host``), so reports are not seen."""
        for sw in self.switches.values():
            sw.taps.append(tap)

    def collector_host(self, *, bandwidth_mbps: float = 10_000.0, delay_us: float = 100.0,
                       delays_us: Mapping[str, float] | None = None) -> SimHost:
        """A collector host wired to port ``COLLECTOR_PORT`` of every switch
        (the report path; ``delays_us`` sets it per switch)."""
        if getattr(self, "collector", None) is not None:
            return self.collector
        host = SimHost(self.sim, "collector", COLLECTOR_MAC, COLLECTOR_IP)
        for name, sw in self.switches.items():
            d = (delays_us or {}).get(name, delay_us)
            model = self.switch_model
            wire = Wire(self.sim, host, 0, bandwidth_bps=round(bandwidth_mbps * 1_000_000),
                        delay_ns=round(d * NS_PER_US) + model.pipeline_delay_ns,
                        loss=0.0, rng=stream(self.seed, "collector", name),
                        jitter=model.delay_draws(derive_seed(self.seed, "delay", name,
                                                             COLLECTOR_PORT)))
            ep = sw.add_port(COLLECTOR_PORT, wire, depth=1024)
            # Reports are not data-link traffic: only all-port taps (pcaps) see them.
            ep.taps = list(self._all_port_taps)
            # The way back: what the collector (a monitor) sends to this switch.
            up = Wire(self.sim, sw, COLLECTOR_PORT,
                      bandwidth_bps=round(bandwidth_mbps * 1_000_000),
                      delay_ns=round(d * NS_PER_US), loss=0.0,
                      rng=stream(self.seed, "collector-up", name))
            self._collector_nics[name] = HostNic(self.sim, up)
        self.collector = host
        return host

    def send_to_switch(self, switch: str, frame: bytes) -> None:
        """From the collector host over its own link into ``switch``'s port
        ``COLLECTOR_PORT`` (a monitor starting a probe there)."""
        nic = self._collector_nics.get(switch)
        if nic is None:
            raise TargetError(f"no collector link to switch '{switch}': attach_collector() first"
                              if self.collector is None else f"no switch '{switch}'")
        nic.send(frame)

    def node(self, name: str) -> SimSwitch | SimHost:
        return self.switches.get(name) or self.hosts[name]

    # ----------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Attach a P4Runtime service and client to every switch."""
        from controller.p4rt.client import P4RuntimeClient
        from controller.p4rt.transport import InProcessTransport
        from dataplane.control.service import RuntimeService

        for name, sw in self.switches.items():
            service = RuntimeService(sw.engine)
            self.services[name] = service
            self.clients[name] = P4RuntimeClient(InProcessTransport(service), service.p4info,
                                                 device_id=sw.engine.device_id)
        self.started = True

    def install_routes(self) -> None:
        from controller.routing import compute_routes, install_routes

        if not self.started:
            self.start()
        routes = compute_routes(self.topo)
        for name in self.switches:
            install_routes(self.clients[name], self.topo, name, routes)

    def run(self, seconds: float | None = None,
            progress: Callable[[float], None] | None = None) -> None:
        until = None if seconds is None else self.sim.now_ns + round(seconds * NS_PER_S)
        cb = None if progress is None else (lambda ns: progress(ns / NS_PER_S))
        self.sim.run(until, cb)

    def stop(self) -> None:
        self.services.clear()
        self.clients.clear()
        self.started = False
        for w in self._pcap_writers.values():
            w.close()
        self._pcap_writers.clear()

    # ------------------------------------------------------------- traffic

    def add_sender(self, host: str, schedule: Any, *, seed: int = 0) -> None:
        """Host-side loss is the wire's own stream here; ``seed`` is unused."""
        self._senders.append((host, Sender(schedule)))

    def add_receiver(self, host: str, udp_ports: Sequence[int] = ()) -> None:
        from orchestration.apps.traffic import record

        self._receivers[host] = record(self.hosts[host])

    host_kernels = False

    def listen(self, host: str, handler: FrameHandler) -> None:
        self.hosts[host].handlers.append(
            lambda _host, frame, now_ns: handler([(frame, now_ns / 1e9)]))

    def send_frame(self, host: str, frame: bytes) -> None:
        """Send one ``frame`` from ``host`` now."""
        self.hosts[host].send(frame)

    def start_traffic(self) -> float:
        from orchestration.apps.traffic import play

        self._playbacks = [play(self.sim, self.hosts[host], sender)
                           for host, sender in self._senders]
        return self.sim.now()

    def run_traffic(self, duration_s: float, drain_s: float,
                    on_running: Callable[[Network], None] | None = None) -> None:
        if on_running is not None:
            on_running(self)
        end = self.sim.now_ns + round((duration_s + drain_s) * NS_PER_S)
        self.run(duration_s + drain_s)
        if self._ended_early and self.sim.now_ns < end:
            self.run(drain_s)

    def end_traffic(self) -> None:
        """Senders stop now; ``run_traffic`` drains and returns."""
        if self._ended_early or not self._playbacks:
            return
        self._ended_early = True
        for p in self._playbacks:
            p.cancel()
        self.sim.stop()

    def finish(self) -> TrafficCounters:
        return TrafficCounters(
            sent=(sum(p.sent for p in self._playbacks) if self._ended_early
                  else sum(len(s.schedule) for _, s in self._senders)),
            delivered=sum(h.rx_packets for h in self.hosts.values()),
            queue_drops=sum(self.queue_drops().values()),
            input_drops=sum(sw.input_drops for sw in self.switches.values()),
            link_losses=sum(ls.lost for ls in self.link_stats()),
            elapsed_s=self.sim.now(), events=self.sim.events_run,
            port_tx=self.port_tx_packets())

    def sent_logs(self) -> dict[str, SentLog]:
        return {host: s.log for host, s in self._senders}

    def received(self) -> dict[str, Receiver]:
        return dict(self._receivers)

    def port_tx_packets(self) -> dict[tuple[str, int], int]:
        """Frames each data port transmitted."""
        return {(name, port): ep.tx_packets for name, sw in self.switches.items()
                for port, ep in sw.ports.items() if port in self.topo.switches[name].ports}

    def fail_link(self, a: str, b: str) -> None:
        """Both wires of the link lose every packet from now on."""
        self._link_loss(a, b, 1.0)

    def restore_link(self, a: str, b: str) -> None:
        """Undo ``fail_link``: both wires lose what the topology says again."""
        self._link_loss(a, b, None)

    def _link_loss(self, a: str, b: str, loss: float | None) -> None:
        links = [ln for ln in self.topo.links if {ln.a, ln.b} == {a, b}]
        if not links:
            raise TargetError(f"no link between {a} and {b}")
        for ln in links:
            for node, port in ((ln.a, ln.a_port), (ln.b, ln.b_port)):
                if node in self.switches:
                    wire = self.switches[node].ports[port].wire
                else:
                    nic = self.hosts[node].nic
                    wire = nic.wire if nic is not None else None
                if wire is not None:
                    wire.loss = ln.loss if loss is None else loss

    # --------------------------------------------------------------- stats

    def link_stats(self) -> list[LinkStats]:
        out = []
        for link in self.topo.links:
            st = LinkStats(link.a, link.b)
            for node, port in ((link.a, link.a_port), (link.b, link.b_port)):
                if node in self.switches:
                    ep = self.switches[node].ports.get(port)
                    wire = ep.wire if ep is not None else None
                else:
                    nic = self.hosts[node].nic
                    wire = nic.wire if nic is not None else None
                if wire is not None:
                    st.sent += wire.sent
                    st.lost += wire.lost
            out.append(st)
        return out

    def queue_drops(self) -> dict[tuple[str, int], int]:
        return {(name, port): ep.drops for name, sw in self.switches.items()
                for port, ep in sw.ports.items() if ep.drops}


def _switch_clock(sim: Simulator, offset_us: int) -> Callable[[], int]:
    def now() -> int:
        return sim.now_ns // NS_PER_US + offset_us
    return now


def build(topo: Topology, program: str | CompiledProgram = "l3_forward", *, seed: int = 0,
          routes: bool = True, switch_model: Any = None) -> SimNetwork:
    """Build a network where every switch runs ``program`` (timed by
    ``switch_model``, the default model when None), start its control plane
    and (by default) install shortest-path routes."""
    net = SimNetwork(topo, _compiled(program), seed=seed, switch_model=switch_model)
    net.start()
    if routes:
        net.install_routes()
    return net


def _compiled(program: str | CompiledProgram) -> CompiledProgram:
    if isinstance(program, CompiledProgram):
        return program
    return compile_file(program_path(program))
