"""The one network interface every target implements, and the target registry.

A system's run is written once against ``Network``: it builds the network
from a ``Topology`` and a program, talks to switches through P4Runtime
clients by name, sends and receives through host endpoints, hears the
collector, and schedules its apps on the network's clock. Which target runs
underneath (``sim``: virtual time in this process; ``mininet``:
``intbed-switch`` processes; ``bmv2``: ``simple_switch_grpc``) is chosen
once, by name, from ``TARGETS``, as Mininet maps command-line names to
classes; what differs between them is asked of the ``Target`` (``live``,
``queues_while_running``, its switch binary's capabilities), never
decided by comparing names, and a run gets its target, seed and live
options together (``RunEnv``).

Target settings travel in the ``Topology``: per-port queue depth and rate
(BMv2's ``set_queue_depth``/``set_queue_rate``), link bandwidth, delay and
loss, per-switch processing capacity and clock offset. Each target applies
what it can and lists the rest in ``limitations``.

The lifecycle is Mininet's: construct (nothing runs), ``start()``
(switches up, pipelines pushed, P4Runtime clients connected), the run,
``stop()`` (idempotent; also from ``with``). Traffic has a phase of its
own: ``add_sender``/``add_receiver``, ``start_traffic()`` (the common time
0 of every schedule, on the network's clock), ``run_traffic()``, then
``finish()`` (switches stopped, taps replayed, counters read).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from common.errors import IntbedError
from topologies.model import Topology

# Switch port wired to the telemetry collector (out of band: reports never
# share a link with user traffic), the port of the P4Runtime CPU, and the
# collector's addresses as switches write them into reports.
COLLECTOR_PORT = 500
CPU_PORT = 510
COLLECTOR_MAC = "00:00:00:ff:ff:fe"
COLLECTOR_IP = "10.255.255.254"
COLLECTOR_HOST = "collector"

Tap = Callable[[int, str, int, bytes], None]
"""``(time_ns since the traffic's time 0, switch, port, frame)`` of a frame a
switch transmits."""
FrameHandler = Callable[[list[tuple[bytes, float]]], None]
"""A batch of ``(frame, arrival time on the network's clock)``."""


class TargetError(IntbedError):
    """A target name intbed does not know, or one that cannot run here."""


@dataclass
class TrafficCounters:
    """What the hosts and switches counted over a traffic phase."""

    sent: int = 0
    delivered: int = 0
    queue_drops: int = 0
    input_drops: int = 0
    """Packets a switch could not take in: its processing input was full."""
    link_losses: int = 0
    elapsed_s: float = 0.0
    events: int = 0
    port_tx: dict[tuple[str, int], int] = field(default_factory=dict)
    """Frames each data port (switch, port) transmitted."""
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Network(Protocol):
    """A built network of ``topo`` on one target."""

    topo: Topology
    target: str
    limitations: list[str]

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Bring every switch up and connect a P4Runtime client to each."""

    def stop(self) -> None:
        """Tear everything down; safe to call twice and after a failed start."""

    def __enter__(self) -> Network: ...

    def __exit__(self, *exc: object) -> None: ...

    # -------------------------------------------------------- control plane
    @property
    def clients(self) -> Mapping[str, Any]:
        """``controller.p4rt.P4RuntimeClient`` by switch name."""

    @property
    def clock(self) -> Any:
        """The clock apps schedule on (``common.clock.Clock``)."""

    @property
    def app_lock(self) -> AbstractContextManager[Any]:
        """Held around every clock callback; apps whose inputs arrive on other
        threads (store listeners, the collector) take it too."""

    def install_routes(self) -> None:
        """Shortest-path (ECMP) routes on every switch (``controller.routing``)."""

    def redis_url(self) -> str | None:
        """A Redis the run's stores may use (started on first call), or None
        where apps keep their state in memory."""

    # ------------------------------------------------------------ endpoints
    def attach_collector(self, handler: FrameHandler, *, delay_us: float = 100.0) -> None:
        """Wire port ``COLLECTOR_PORT`` of every switch to a collector host
        and hand it every frame that arrives there. Call before ``start()``."""

    def send_to_switch(self, switch: str, frame: bytes) -> None:
        """Send ``frame`` from the collector host over its link into port
        ``COLLECTOR_PORT`` of ``switch`` (a monitor starting a probe there).
        Needs ``attach_collector`` first."""

    def fail_link(self, a: str, b: str) -> None:
        """From now on the link between switches ``a`` and ``b`` carries
        nothing, in both directions (a link failure mid-run)."""

    def tap_transmitted(self, tap: Tap) -> None:
        """See every frame a switch transmits on a data link (ground truth;
        not the collector port). Sim taps run as frames leave; live targets
        replay their pcaps in ``finish()``."""

    def add_sender(self, host: str, schedule: Any, *, seed: int) -> None:
        """Send ``schedule`` (``traffic.schedules.Schedule``) from ``host``
        from the traffic's time 0; ``seed`` drives host-side loss."""

    def add_receiver(self, host: str, udp_ports: Sequence[int] = ()) -> None:
        """Record what ``host`` receives."""

    def send_frame(self, host: str, frame: bytes) -> None:
        """Send one frame from ``host`` now (probes, one-off packets)."""

    def listen(self, host: str, handler: FrameHandler) -> None:
        """Hand every frame ``host`` receives to ``handler``."""

    @property
    def host_kernels(self) -> bool:
        """Whether hosts run a kernel of their own that answers ARP and ICMP
        (live targets) or are bare endpoints (sim)."""

    def run(self, seconds: float) -> None:
        """Let ``seconds`` pass on the network's clock."""

    def sent_logs(self) -> Mapping[str, Any]:
        """``traffic.sender.SentLog`` by sending host, after ``finish()``."""

    def received(self) -> Mapping[str, Any]:
        """``traffic.receiver.Receiver`` by receiving host, after ``finish()``."""

    # ------------------------------------------------------------- traffic
    def start_traffic(self) -> float:
        """Start every sender on one instant; that instant on the clock."""

    def run_traffic(self, duration_s: float, drain_s: float,
                    on_running: Callable[[Network], None] | None = None) -> None:
        """Let the traffic play for ``duration_s`` then drain ``drain_s``."""

    def end_traffic(self) -> None:
        """End the traffic phase now, before ``duration_s`` (an app that got
        what it came for): senders stop, ``run_traffic`` drains ``drain_s``
        and returns, ``finish`` counts only the packets sent."""

    def finish(self) -> TrafficCounters:
        """Stop the traffic and the switches, replay taps, read counters."""

    @property
    def failure(self) -> str | None:
        """Why the network failed mid-run (a switch process died), or None."""

    @property
    def run_dir(self) -> Path | None:
        """Where the target keeps its logs (switches/NAME.log), if anywhere."""

    def switch_queues(self, switch: str) -> Any:
        """What changes ``switch``'s egress queues while it runs
        (``set_queue_depth(depth, port)``, ``set_queue_rate(pps, port)``;
        ``port`` None: every port), or None where a target sets them only
        from the ``Topology`` when a switch starts (``Target.queues_while_running``)."""

    def switch_registers(self, switch: str) -> Any:
        """What writes ``switch``'s register cells beyond P4Runtime
        (``write_register(name, index, value)``; ``index`` None: every
        cell), or None where P4Runtime is the only way in."""

    pcap_dir: Path | None
    """Per-port pcaps of transmitted frames (``<switch>-eth<port>_out.pcap``,
    BMv2's names), or None: sim records them with ``pcap_dir=`` to
    ``open_network``, live targets always (kept with ``LiveOptions.keep_pcaps``)."""


@dataclass(frozen=True, eq=False, repr=False)
class Target:
    """One entry of the registry: where a network's data plane runs, what
    that place can do, and how to build its networks.

    The command line resolves ``--target`` into one of these once
    (``get_target``); everything below asks it, never its name. A target
    pickles as its name (a Dask worker finds the same entry in its own
    registry)."""

    name: str
    description: str
    live: bool
    """Real processes on the wall clock (Mininet hosts and veth links), as
    opposed to the sim's virtual time in this process."""
    factory: Callable[..., Network]
    available: Callable[[], str | None]
    binary: str | None = None
    """The switch binary a live target runs (``orchestration.binaries.switches``)."""
    queues_while_running: bool = False
    """Egress queues can be changed on a running switch; otherwise they are
    set from the ``Topology`` when a switch starts."""
    models_timing: bool = False
    """Its switches take the time a timing model says (``--switch-model``);
    a live target's take the time they take."""

    def open(self, topo: Topology, program: Any, *, seed: int = 0,
             **options: Any) -> Network:
        """A built, not yet started, network of ``topo``; ``options`` are the
        target's own (``run_dir``, ``pcap`` for live ones)."""
        return self.factory(topo, program, seed=seed, **options)

    def check_available(self) -> None:
        """Raise ``TargetError`` saying why this target cannot run here."""
        problem = self.available()
        if problem is not None:
            raise TargetError(problem)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Target({self.name!r})"  # stable: journal keys are reprs of points

    def __reduce__(self) -> tuple[Callable[[str], Target], tuple[str]]:
        return get_target, (self.name,)


def _sim_network(topo: Topology, program: Any, *, seed: int = 0, **options: Any) -> Network:
    from orchestration.sim import SimNetwork

    return SimNetwork.for_run(topo, program, seed=seed, **options)


def _live_network(name: str) -> Callable[..., Network]:
    def factory(topo: Topology, program: Any, *, seed: int = 0, **options: Any) -> Network:
        from orchestration.live.network import LiveNetwork

        return LiveNetwork.for_run(topo, program, target=TARGETS[name], seed=seed, **options)

    return factory


def _live_available(name: str) -> Callable[[], str | None]:
    def available() -> str | None:
        from orchestration.live.network import live_available

        return live_available(TARGETS[name])

    return available


TARGETS: dict[str, Target] = {
    "sim": Target("sim", "intbed's engine in virtual time, one process (default)", False,
                  _sim_network, lambda: None, queues_while_running=True, models_timing=True),
    "mininet": Target("mininet", "intbed-switch processes on Mininet veth links", True,
                      _live_network("mininet"), _live_available("mininet"), binary="intbed"),
    "bmv2": Target("bmv2", "BMv2 simple_switch_grpc processes on Mininet veth links", True,
                   _live_network("bmv2"), _live_available("bmv2"), binary="bmv2"),
}
DEFAULT_TARGET = TARGETS["sim"]


def get_target(target: Target | str) -> Target:
    """The registry entry for ``target`` (a name, or an entry already), or
    one line naming the valid ones."""
    if isinstance(target, Target):
        return target
    try:
        return TARGETS[target]
    except KeyError:
        raise TargetError(f"unknown target '{target}' (targets: {', '.join(TARGETS)})") from None


def check_available(target: Target | str) -> None:
    """Raise ``TargetError`` saying why ``target`` cannot run on this machine."""
    get_target(target).check_available()


@dataclass(frozen=True)
class RunEnv:
    """Where and how one run of a system happens: the target, the run's
    seed, and a live target's options (``orchestration.live.LiveOptions``:
    results directory, Redis). What a system's run is given, instead of
    the three apart."""

    target: Target = DEFAULT_TARGET
    seed: int = 0
    live: Any = None
    switch_model: str | None = None
    """The switches' timing model where the target models it (a profile's
    name or path, ``dataplane.targets.sim.timing``; None: the default)."""
    collector_profile: str | None = None
    """Whose collector time a system's run charges where the target models
    it (INT-label's: a profile's name or path,
    ``orchestration.systems.intlabel.collector_profile``; None: the
    default). Live targets' collectors take the time they take."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "target", get_target(self.target))

    def to_dict(self) -> dict[str, Any]:
        """What a run's results record of where it ran."""
        out: dict[str, Any] = {"seed": self.seed, "target": self.target.name}
        if self.target.models_timing:
            from dataplane.targets.sim.timing import load_model

            out["switch_model"] = load_model(self.switch_model).name
            if self.collector_profile is not None:
                out["collector_profile"] = self.collector_profile
        return out

    def open(self, topo: Topology, program: Any, **options: Any) -> Network:
        """A built, not yet started, network of ``topo`` for this run."""
        if self.live is not None and self.target.live:
            options.setdefault("live", self.live)
        if self.target.models_timing:
            options.setdefault("switch_model", self.switch_model)
        return self.target.open(topo, program, seed=self.seed, **options)


def open_network(target: Target | str, topo: Topology, program: Any, *, seed: int = 0,
                 **options: Any) -> Network:
    """A built, not yet started, network of ``topo`` on ``target``.
    ``options`` are the target's own (``run_dir``, ``pcap`` for live ones)."""
    return get_target(target).open(topo, program, seed=seed, **options)
