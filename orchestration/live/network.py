"""The ``mininet`` and ``bmv2`` targets: a Topology built as a Mininet network.

As in BMv2's Mininet setups, hosts are Mininet hosts (network namespaces)
and every switch is a process in the root namespace on the root ends of
the veth pairs: ``intbed-switch`` for ``mininet``, ``simple_switch_grpc``
for ``bmv2`` (``orchestration.binaries.switches``), each with P4Runtime on a free
loopback port, its device id from the topology, CPU port 510, a log file
and optionally pcaps under the run directory. The network:

- hosts: the topology's MAC and IP, IPv6 off (no neighbour discovery or
  MLD frames of their own), offloads off (``netutil``), a default route
  on their interface and static ARP entries for every other host, so the
  kernel's own traffic needs no ARP through the P4 switches;
- links: veth pairs; a link's bandwidth becomes Mininet's ``TCLink`` (a
  token bucket) where the rate is at most 1 Gb/s. Link delay is
  not emulated: this kernel has no ``netem`` (``limitations`` says so).
  Loss is emulated by ``intbed-switch --loss PORT:P`` on the switch ends
  and by the senders for the host-to-switch direction;
- the collector: one host with an interface per switch, wired to that
  switch's port 500 (``orchestration.sim.COLLECTOR_PORT``), without an IP
  address, so its kernel answers no report.

``start()`` builds everything and starts the switches in parallel, pushes
the pipeline (SetForwardingPipelineConfig with ``Prepared.p4info`` and the
binary's device config) and starts a watchdog. ``stop()`` tears everything
down in order (host processes, P4Runtime sessions, switches, Mininet,
then any interface left over); it is idempotent, runs from ``with``,
``atexit`` and on SIGTERM (turned into KeyboardInterrupt in the main
thread, like Ctrl-C), and keeps going past a failed step.
"""

from __future__ import annotations

import ast
import atexit
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import IO, Any

from common.errors import IntbedError
from common.paths import PACKAGE_ROOT, child_env
from common.pcap import iter_pcap
from common.procs import stop_process
from common.seeds import derive_seed
from orchestration.binaries.switches import Prepared, SwitchProcess, get_binary, launch
from orchestration.live.netutil import add_veth_pair, disable_offloads
from orchestration.live.options import LiveOptions, next_run_dir
from orchestration.live.pcap import out_pcap
from orchestration.live.teardown import StepLog, run_step
from orchestration.live.watchdog import SwitchFailure, SwitchWatchdog
from orchestration.network import (
    COLLECTOR_HOST,
    COLLECTOR_PORT,
    CPU_PORT,
    TARGETS,
    FrameHandler,
    Tap,
    Target,
    TrafficCounters,
    get_target,
)
from orchestration.redis_server import free_port
from p4src import program_path
from topologies.model import DEFAULT_QUEUE_DEPTH, Topology

SENDER_SLACK_S = 30.0  # beyond the schedule's length before a sender counts as stuck
COLLECTOR_QUEUE_DEPTH = 1024  # as the sim's collector port
# Mininet's TCLink takes 0 < bw <= 1000 Mb/s. Its token bucket (TBF: HTB warns
# about its quantum at 1 Gb/s) may hold as much as a veth's default queue,
# txqueuelen 1000 full-size frames.
MAX_SHAPED_MBPS = 1000.0
SHAPER_BACKLOG_BITS = 1000 * 1500 * 8
IFNAMSIZ = 15  # characters of an interface name (16 with the NUL)
READY_TIMEOUT_S = 60.0  # 2 cores starting a dozen Python switches take a while
HOST_STOP_S = 3.0
HOST_CMDS_PER_LINE = 20  # "ip neigh replace ..." commands per shell line (< 4095 chars)

_active: set[LiveNetwork] = set()  # started and not yet stopped, for atexit


class LiveTargetError(IntbedError):
    """A live target that cannot run here, or a network that failed to come up."""


def live_available(target: Target | str) -> str | None:
    """None when ``target`` can run on this machine, else why not."""
    if not isinstance(target, Target) and target not in TARGETS:
        return f"unknown live target '{target}' (choices: {', '.join(_live_names())})"
    target = get_target(target)
    if not target.live or target.binary is None:
        return f"'{target}' is not a live target (choices: {', '.join(_live_names())})"
    if os.geteuid() != 0:
        return f"the {target} target needs root (network namespaces, veth pairs): use sudo"
    for tool in ("mnexec", "ip", "tc", "setsid"):
        if shutil.which(tool) is None:
            return (f"'{tool}' not found: install the Debian packages mininet and iproute2 "
                    "(make install)")
    try:
        import mininet.net  # noqa: F401
    except ImportError:
        return "the Python package mininet is missing: pip install mininet"
    return get_binary(target.binary).available()


def _live_names() -> list[str]:
    return [name for name, t in TARGETS.items() if t.live]


@dataclass
class LiveSwitch:
    """One switch process and where its pieces are."""

    name: str
    device_id: int
    ports: dict[int, str]  # port -> root-namespace interface
    grpc_addr: str
    thrift_port: int
    log_file: Path
    console_file: Path
    process: SwitchProcess | None = None
    counters: dict[str, Any] | None = None
    exit_code: int | None = None


@dataclass
class HostProcess:
    """A process started in a host's namespace (``LiveNetwork.popen``)."""

    host: str
    argv: list[str]
    popen: subprocess.Popen
    output: Path | None = None
    _files: list[IO[Any]] = field(default_factory=list)

    def stop(self, timeout: float = HOST_STOP_S) -> int:
        """SIGTERM, then SIGKILL after ``timeout``; the exit status."""
        stop_process(self.popen, timeout)
        for f in (self.popen.stdin, self.popen.stdout):
            if f is not None and not f.closed:
                f.close()
        for f in self._files:
            f.close()
        return self.popen.returncode


def _iface_name(switch: str, device_id: int, port: int) -> str:
    name = f"{switch}-eth{port}"
    if len(name) <= IFNAMSIZ:
        return name
    short = f"s{device_id}-eth{port}"
    if len(short) > IFNAMSIZ:
        raise LiveTargetError(f"switch {switch}: no interface name for port {port} fits "
                              f"{IFNAMSIZ} characters")
    return short


class LiveNetwork:
    """A running network of ``topo`` where every switch runs ``program``.

    ``run_dir`` receives ``switches/<name>.log`` (the switch's log) and
    ``<name>.out`` (its console), and ``pcap/`` when ``pcap`` is set.
    """

    def __init__(self, topo: Topology, program: str | Path, *, run_dir: str | Path,
                 target: Target | str = "mininet", pcap: bool = False, collector: bool = True,
                 seed: int = 0, shape_links: bool = True,
                 ready_timeout: float = READY_TIMEOUT_S) -> None:
        topo.validate()
        target = get_target(target)
        if not target.live or target.binary is None:
            raise LiveTargetError(f"'{target}' is not a live target")
        self.topo = topo
        self.program = program_path(program)
        self.target = target
        self.run_dir = Path(run_dir)
        self.pcap_dir = self.run_dir / "pcap" if pcap else None
        self.with_collector = collector
        self.seed = seed
        self.shape_links = shape_links
        self.ready_timeout = ready_timeout
        self.binary = get_binary(target.binary)
        self.prepared: Prepared | None = None
        self.net: Any = None
        self.switches: dict[str, LiveSwitch] = {}
        self.clients: dict[str, Any] = {}
        self.collector_ifaces: dict[str, str] = {}  # switch -> collector-side interface
        self.limitations: list[str] = []
        self.watchdog: SwitchWatchdog | None = None
        self._transports: list[Any] = []
        self._procs: list[HostProcess] = []
        self._root_ifaces: list[str] = []
        self._started = False
        self._stopped = False
        self._lock = threading.Lock()
        self._old_sigterm: Any = None
        self.options = LiveOptions()
        self._stack = ExitStack()  # run-scoped resources: Redis, temporary run dirs
        self._app_lock = threading.RLock()
        self._clock: Any = None
        self._origin_mono = 0.0  # time.monotonic() at the clock's zero
        self._redis_url: str | None = None
        self._collector_handler: FrameHandler | None = None
        self._frame_tap: Any = None
        self._taps: list[Tap] = []
        self._host_sockets: dict[str, Any] = {}
        self._listeners: list[Any] = []
        self._traffic: Any = None
        self._start_ns = 0  # CLOCK_MONOTONIC ns of the traffic's time 0
        self._wall_start_ns = 0  # the same instant on CLOCK_REALTIME
        self._elapsed_s = 0.0
        self._traffic_ended = threading.Event()
        if not self.binary.emulates_loss and any(ln.loss for ln in topo.links):
            lossy = [t.name for t in TARGETS.values()
                     if t.binary is not None and get_binary(t.binary).emulates_loss]
            raise LiveTargetError(f"the {target} target cannot emulate link loss "
                                  f"({self.binary.name} has no loss option): use --target "
                                  f"{' or '.join(lossy)} or a loss-free topology")

    @classmethod
    def for_run(cls, topo: Topology, program: str | Path, *, target: Target | str = "mininet",
                seed: int = 0, live: LiveOptions | None = None, label: str = "run",
                **options: Any) -> LiveNetwork:
        """The registry's constructor: a network with pcaps (the ground truth)
        in ``live.results_dir/NNN-label`` (a temporary directory, removed at
        ``stop()``, when that is None)."""
        opts = live or LiveOptions()
        stack = ExitStack()
        if opts.results_dir is not None:
            root = Path(opts.results_dir)
        else:
            root = Path(stack.enter_context(TemporaryDirectory(prefix="intbed-live-")))
        net = cls(topo, program, run_dir=next_run_dir(root, label), target=target,
                  pcap=True, seed=seed, **options)
        net.options = opts
        net._stack = stack
        return net

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> LiveNetwork:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Build the network, start and program the switches, watch them."""
        if self._started:
            if self._stopped:
                raise LiveTargetError("a stopped network cannot start again")
            return
        problem = live_available(self.target)
        if problem is not None:
            raise LiveTargetError(problem)
        self._started = True
        _active.add(self)
        self._trap_sigterm()
        try:
            (self.run_dir / "switches").mkdir(parents=True, exist_ok=True)
            if self.pcap_dir is not None:
                self.pcap_dir.mkdir(parents=True, exist_ok=True)
            self.prepared = self._prepare()
            self._build()
            self._start_switches()
            self._connect()
            self.watchdog = SwitchWatchdog(
                {n: s.process for n, s in self.switches.items()},  # type: ignore[misc]
                logs=lambda n: [self.switches[n].log_file, self.switches[n].console_file])
            self.watchdog.start()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Tear everything down (idempotent). Every step runs even if one
        fails or a second Ctrl-C arrives; that interrupt is raised after."""
        with self._lock:
            if self._stopped or not self._started:
                if not self._started:
                    self._stack.close()  # a temporary run directory
                return
            self._stopped = True
        log = StepLog()
        for name, step, deadline_s in (
                ("stop apps", self._stop_apps, 15.0),
                ("stop host processes", self.stop_host_processes, 15.0),
                ("close P4Runtime clients", self._close_clients, 5.0),
                ("stop switches", self.stop_switches, 30.0),
                ("stop Mininet", self._stop_mininet, 30.0),
                ("remove leftovers", self._remove_leftovers, 15.0)):
            run_step(name, step, deadline_s, log)
        self._write_teardown_log(log)
        run_step("remove temporary files", self._stack.close, 15.0, log)
        self._restore_sigterm()
        _active.discard(self)
        if log.interrupt is not None:
            raise log.interrupt
        if log.errors:
            raise LiveTargetError("teardown incomplete: " + "; ".join(log.errors))

    def _write_teardown_log(self, log: StepLog) -> None:
        """``teardown.log`` in the run directory: each step's time, or the
        step that blocked (kept only where the run directory is)."""
        try:
            (self.run_dir / "teardown.log").write_text(log.text())
        except OSError:
            pass

    @property
    def switch_failure(self) -> SwitchFailure | None:
        return self.watchdog.failure if self.watchdog is not None else None

    @property
    def failure(self) -> str | None:
        failure = self.switch_failure
        return failure.message() if failure is not None else None

    @property
    def failed(self) -> threading.Event:
        """Set when a switch process ended on its own."""
        assert self.watchdog is not None, "start() first"
        return self.watchdog.failed

    def check(self) -> None:
        """Raise ``IntbedError("switch NAME (pid N) exited with code C: ...")``
        if a switch process ended."""
        if self.watchdog is not None:
            self.watchdog.check()

    # ------------------------------------------------------------------ building

    def _prepare(self) -> Prepared:
        return self.binary.prepare(self.program)

    def _build(self) -> None:
        from mininet.link import Link, TCLink
        from mininet.net import Mininet
        from mininet.node import Host

        topo = self.topo
        self.net = net = Mininet(controller=None, build=False, host=Host,
                                 switch=_root_switch_class(), link=Link, autoSetMacs=False,
                                 autoStaticArp=False, waitConnected=False)
        if COLLECTOR_HOST in topo.hosts or COLLECTOR_HOST in topo.switches:
            raise LiveTargetError(f"'{COLLECTOR_HOST}' is reserved for the collector host")
        for name, spec in topo.switches.items():
            net.addSwitch(name, dpid=f"{spec.device_id + 1:x}", inNamespace=False)
        names = [*topo.hosts, *([COLLECTOR_HOST] if self.with_collector else [])]
        for name in names:
            spec = topo.hosts.get(name)
            ip = f"{spec.ip}/{spec.prefix_len}" if spec is not None else None
            host = net.addHost(name, ip=ip, mac=spec.mac if spec is not None else None)
            # Before any interface exists, so none ever gets an IPv6 address.
            host.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
                     "net.ipv6.conf.default.disable_ipv6=1")
        host_ifaces: dict[str, str] = {}
        for link in topo.links:
            ends = []
            for node, port in ((link.a, link.a_port), (link.b, link.b_port)):
                if node in topo.switches:
                    iface = _iface_name(node, topo.switches[node].device_id, port)
                    if node not in self.switches:
                        self.switches[node] = self._switch_record(node)
                    self.switches[node].ports[port] = iface
                    self._root_ifaces.append(iface)
                    ends.append((node, port, iface, None))
                else:
                    iface = host_ifaces[node] = f"{node}-eth0"
                    ends.append((node, 0, iface, topo.hosts[node].mac))
            (n1, p1, i1, m1), (n2, p2, i2, m2) = ends
            kw: dict[str, Any] = {"port1": p1, "port2": p2, "intfName1": i1, "intfName2": i2}
            if m1:
                kw["addr1"] = m1
            if m2:
                kw["addr2"] = m2
            if self.shape_links and 0 < link.bandwidth_mbps <= MAX_SHAPED_MBPS:
                bw = link.bandwidth_mbps
                net.addLink(n1, n2, cls=TCLink, bw=bw, use_tbf=True,
                            latency_ms=SHAPER_BACKLOG_BITS / (bw * 1000.0), **kw)
            else:
                net.addLink(n1, n2, **kw)
        for name in topo.switches:
            if name not in self.switches:
                self.switches[name] = self._switch_record(name)
        if self.with_collector:
            ordered = sorted(topo.switches, key=lambda n: topo.switches[n].device_id)
            for i, name in enumerate(ordered):
                iface = _iface_name(name, topo.switches[name].device_id, COLLECTOR_PORT)
                col = f"col-eth{i}"
                net.addLink(name, COLLECTOR_HOST, port1=COLLECTOR_PORT, port2=i,
                            intfName1=iface, intfName2=col)
                self.switches[name].ports[COLLECTOR_PORT] = iface
                self._root_ifaces.append(iface)
                self.collector_ifaces[name] = col
        net.build()
        self._add_cpu_veths()
        self._configure_hosts(host_ifaces)
        self._configure_root_ifaces()
        if any(ln.delay_us > 0 for ln in topo.links):
            self.limitations.append("link delays are not emulated (the kernel has no netem): "
                                    "each link adds only the veth's own latency")
        if self.shape_links and any(ln.bandwidth_mbps > MAX_SHAPED_MBPS for ln in topo.links):
            self.limitations.append(f"links above {MAX_SHAPED_MBPS:g} Mb/s are not shaped")
        if self.options.register_writes and getattr(self.binary, "register_writes_flag",
                                                    None) is None:
            self.limitations.append(f"{self.binary.name} refuses P4Runtime register writes: "
                                    "a controller's register_write fails")

    def _switch_record(self, name: str) -> LiveSwitch:
        spec = self.topo.switches[name]
        logs = self.run_dir / "switches"
        return LiveSwitch(name, spec.device_id, {}, f"127.0.0.1:{free_port()}", free_port(),
                          logs / f"{name}.log", logs / f"{name}.out")

    def _configure_hosts(self, host_ifaces: Mapping[str, str]) -> None:
        hosts = self.topo.hosts
        for name, iface in host_ifaces.items():
            node = self.net[name]
            cmds = [f"ip route replace default dev {iface}"]
            cmds += [f"ip neigh replace {h.ip} lladdr {h.mac} dev {iface} nud permanent"
                     for other, h in hosts.items() if other != name]
            # A host's shell reads one terminal line of at most 4095
            # characters: with dozens of neighbours, send them in chunks.
            for i in range(0, len(cmds), HOST_CMDS_PER_LINE):
                out = node.cmd("; ".join(cmds[i:i + HOST_CMDS_PER_LINE]))
                if out.strip():
                    raise LiveTargetError(f"host {name}: {out.strip().splitlines()[-1]}")
            disable_offloads(iface, node.pid)
        if self.with_collector:
            node = self.net[COLLECTOR_HOST]
            for iface in self.collector_ifaces.values():
                disable_offloads(iface, node.pid)

    def _add_cpu_veths(self) -> None:
        """``LiveOptions.cpu_ports``: each a veth pair in the root namespace,
        the first end that switch port, the second left for a controller."""
        for name, port in sorted(self.options.cpu_ports.items()):
            inner, outer = f"{name}-cpu-eth0", f"{name}-cpu-eth1"
            self._root_ifaces += [inner, outer]
            problem = add_veth_pair(inner, outer)
            if problem is not None:
                raise LiveTargetError(f"switch {name}: CPU port veth: {problem}")
            self.switches[name].ports[port] = inner

    def _configure_root_ifaces(self) -> None:
        for iface in self._root_ifaces:
            try:
                Path(f"/proc/sys/net/ipv6/conf/{iface}/disable_ipv6").write_text("1\n")
            except OSError:
                pass  # IPv6 not built in: nothing to silence
            disable_offloads(iface)

    # ------------------------------------------------------------------ switches

    def switch_queues(self, switch: str) -> None:
        """None: a live switch's queues are set from the Topology when it starts."""
        return None

    def switch_registers(self, switch: str) -> None:
        """None: registers are written over P4Runtime (or the binary's own CLI)."""
        return None

    def _queue(self, name: str) -> dict[int, tuple[int | None, int | None]]:
        spec = self.topo.switches[name]
        queue: dict[int, tuple[int | None, int | None]] = {}
        for port, _, _ in self.topo.port_peers(name):
            depth = spec.port_queue_depth(port)
            rate = spec.port_queue_rate_pps(port)
            if depth != DEFAULT_QUEUE_DEPTH or rate is not None:
                queue[port] = (depth, None if rate is None else max(1, round(rate)))
        if self.with_collector:
            queue[COLLECTOR_PORT] = (COLLECTOR_QUEUE_DEPTH, None)
        return queue

    def _extra_args(self, name: str) -> list[str]:
        losses = {port: link.loss for link in self.topo.links if link.loss
                  for node, port in ((link.a, link.a_port), (link.b, link.b_port))
                  if node == name}
        args = self.binary.extra_args(seed=derive_seed(self.seed, "p4-random", name),
                                      losses=losses)
        flag = getattr(self.binary, "register_writes_flag", None)
        if self.options.register_writes and flag is not None:
            args.append(flag)
        return args

    def _launch(self, sw: LiveSwitch) -> SwitchProcess:
        assert self.prepared is not None
        return launch(self.binary, self.prepared, ports=sw.ports, device_id=sw.device_id,
                      grpc_addr=sw.grpc_addr, cpu_port=CPU_PORT, thrift_port=sw.thrift_port,
                      pcap_dir=self.pcap_dir, log_file=sw.log_file, queue=self._queue(sw.name),
                      prefix=("setsid",), ready_timeout=self.ready_timeout,
                      console=sw.console_file, cwd=PACKAGE_ROOT,
                      extra_args=self._extra_args(sw.name))

    def _start_switches(self) -> None:
        sws = list(self.switches.values())
        with ThreadPoolExecutor(max_workers=max(1, len(sws))) as pool:
            futures = [(sw, pool.submit(self._launch, sw)) for sw in sws]
            first: tuple[str, BaseException] | None = None
            for sw, fut in futures:
                try:
                    sw.process = fut.result()
                except BaseException as exc:
                    if first is None:
                        first = (sw.name, exc)
        if first is not None:
            name, exc = first
            if isinstance(exc, IntbedError):
                raise LiveTargetError(f"switch {name}: {exc.message}") from exc
            raise exc

    def _connect_one(self, sw: LiveSwitch) -> Any:
        from google.protobuf import text_format

        from controller.p4rt.client import P4RuntimeClient
        from controller.p4rt.grpc_transport import GrpcTransport
        from controller.p4rt.protos import protos

        assert self.prepared is not None
        p4info = text_format.Parse(self.prepared.p4info.read_text(), protos().p4info_pb2.P4Info())
        transport = GrpcTransport(sw.grpc_addr, sw.device_id, timeout=30.0,
                                  connect_timeout=self.ready_timeout)
        self._transports.append(transport)
        client = P4RuntimeClient(transport, p4info, device_id=sw.device_id)
        transport.set_pipeline(p4info, self.binary.device_config(self.prepared))
        return client

    def _connect(self) -> None:
        sws = list(self.switches.values())
        with ThreadPoolExecutor(max_workers=max(1, len(sws))) as pool:
            clients = list(pool.map(self._connect_one, sws))
        self.clients = {sw.name: c for sw, c in zip(sws, clients)}

    def install_routes(self) -> None:
        """Shortest-path routes on every switch (``controller.routing``)."""
        from controller.routing import compute_routes, install_routes

        routes = compute_routes(self.topo)
        for name, client in self.clients.items():
            install_routes(client, self.topo, name, routes)

    def stop_switches(self) -> dict[str, dict[str, Any] | None]:
        """Stop every switch process (SIGTERM, so pcaps and counters are
        written); each switch's final counters from its log, if it wrote them."""
        if self.watchdog is not None:
            self.watchdog.stop()
        for sw in self.switches.values():
            if sw.process is not None and sw.exit_code is None:
                sw.exit_code = sw.process.stop()
                sw.counters = read_counters(sw.log_file)
        return {name: sw.counters for name, sw in self.switches.items()}

    # ------------------------------------------------------------------ hosts

    def host_pid(self, host: str) -> int:
        """The process holding ``host``'s network namespace."""
        return int(self.net[host].pid)

    def host_iface(self, host: str) -> str:
        return f"{host}-eth0"

    def host_loss(self, host: str) -> float:
        """Loss probability of ``host``'s link (its host-to-switch direction
        is the sender's to emulate)."""
        return max((ln.loss for ln in self.topo.links_of(host)), default=0.0)

    def popen(self, host: str, argv: Sequence[str], *, output: Path | None = None,
              env: Mapping[str, str] | None = None) -> HostProcess:
        """Start ``argv`` in ``host``'s namespace with pipes on stdin and
        stdout (stderr to ``output``); stopped by ``stop()``."""
        files: list[IO[Any]] = []
        err: Any = subprocess.DEVNULL
        if output is not None:
            err = open(output, "wb")  # noqa: SIM115 - HostProcess.stop closes it
            files.append(err)
        full_env = child_env({"PYTHONUNBUFFERED": "1", **(env or {})})
        popen = self.net[host].popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=err, env=full_env, cwd=str(PACKAGE_ROOT))
        proc = HostProcess(host, list(argv), popen, output, files)
        self._procs.append(proc)
        return proc

    def stop_host_processes(self) -> None:
        for proc in self._procs:
            proc.stop()

    # ------------------------------------------------------------------ apps

    @property
    def clock(self) -> Any:
        """A ``WallClock`` whose callbacks hold ``app_lock`` (made at first use)."""
        if self._clock is None:
            from common.wallclock import WallClock

            self._clock = WallClock(lock=self._app_lock)
            self._origin_mono = time.monotonic() - self._clock.now()
        return self._clock

    def _clock_origin(self) -> float:
        """``time.monotonic()`` at the clock's zero, to put kernel receive
        times on the clock (makes the clock first if need be)."""
        return self._origin_mono if self.clock is not None else 0.0

    @property
    def app_lock(self) -> threading.RLock:
        return self._app_lock

    def redis_url(self) -> str:
        """``LiveOptions.redis_url``, or a private ``redis-server`` for this
        network (stopped with it)."""
        if self._redis_url is None:
            if self.options.redis_url is not None:
                self._redis_url = self.options.redis_url
            else:
                from orchestration.redis_server import RedisServer

                self._redis_url = self._stack.enter_context(RedisServer()).url
        return self._redis_url

    def attach_collector(self, handler: FrameHandler, *, delay_us: float = 100.0) -> None:
        """Read the collector host's interfaces in this process (the kernel's
        receive times, on the clock). Link delays are not emulated."""
        from orchestration.live.tap import FrameTap

        if not self.with_collector:
            raise LiveTargetError("the network was built without a collector host")
        if self._frame_tap is not None:
            raise LiveTargetError("a collector handler is attached already")
        origin = self._clock_origin()

        def on_frames(frames: list[tuple[bytes, int, int]]) -> None:
            handler([(f, t_ns / 1e9 - origin) for f, t_ns, _ in frames])

        ifaces = [self.collector_ifaces[n] for n in sorted(self.collector_ifaces)]
        self._frame_tap = FrameTap(ifaces, self.host_pid(COLLECTOR_HOST), on_frames)
        self._frame_tap.start()

    def fail_link(self, a: str, b: str) -> None:
        """Take both ends of the link down (``ip link set ... down``): a
        real link failure, which the switches see as a dead port."""
        ifaces = [self.switches[n].ports[p]
                  for ln in self.topo.links if {ln.a, ln.b} == {a, b}
                  for n, p in ((ln.a, ln.a_port), (ln.b, ln.b_port)) if n in self.switches]
        if not ifaces:
            raise LiveTargetError(f"no link between {a} and {b}")
        for iface in ifaces:
            out = subprocess.run(["ip", "link", "set", "dev", iface, "down"],
                                 capture_output=True, text=True, check=False)
            if out.returncode != 0:
                raise LiveTargetError(f"cannot take {iface} down: {out.stderr.strip()}")

    def tap_transmitted(self, tap: Tap) -> None:
        """Replayed from the switches' out pcaps in ``finish()``."""
        if self.pcap_dir is None:
            raise LiveTargetError("the network was built without pcaps: no transmit taps")
        self._taps.append(tap)

    def _live_traffic(self) -> Any:
        if self._traffic is None:
            from orchestration.live.traffic import LiveTraffic

            self._traffic = LiveTraffic(self, self.run_dir / "traffic")
        return self._traffic

    def add_sender(self, host: str, schedule: Any, *, seed: int = 0) -> None:
        self._live_traffic().add_sender(host, schedule, loss=self.host_loss(host), seed=seed)

    def add_receiver(self, host: str, udp_ports: Sequence[int] = ()) -> None:
        self._live_traffic().add_receiver(host, udp_ports=tuple(udp_ports))

    host_kernels = True

    def listen(self, host: str, handler: FrameHandler) -> None:
        """A ``FrameTap`` on the host's interface, read in this process."""
        from orchestration.live.tap import FrameTap

        origin = self._clock_origin()

        def on_frames(frames: list[tuple[bytes, int, int]]) -> None:
            handler([(f, t_ns / 1e9 - origin) for f, t_ns, _ in frames])

        tap = FrameTap([self.host_iface(host)], self.host_pid(host), on_frames)
        tap.start()
        self._listeners.append(tap)

    def run(self, seconds: float) -> None:
        """Wait ``seconds`` of wall-clock time, or until a switch fails."""
        self.failed.wait(seconds)
        self.check()

    def send_to_switch(self, switch: str, frame: bytes) -> None:
        """Out of the collector host's interface toward ``switch``."""
        iface = self.collector_ifaces.get(switch)
        if iface is None:
            raise LiveTargetError(f"no collector link to switch '{switch}'")
        self._raw_send(COLLECTOR_HOST, iface, frame)

    def send_frame(self, host: str, frame: bytes) -> None:
        """Through a send-only raw socket in ``host``'s namespace, opened once."""
        self._raw_send(host, self.host_iface(host), frame)

    def _raw_send(self, host: str, iface: str, frame: bytes) -> None:
        sock = self._host_sockets.get(iface)
        if sock is None:
            from common.rawsock import open_raw_socket

            sock = open_raw_socket(iface, self.host_pid(host), receive=False)
            self._host_sockets[iface] = sock
        sock.send(frame)

    def start_traffic(self) -> float:
        """Every sender starts ``LiveOptions.lead_s`` from now; that instant."""
        self.check()
        origin = self._clock_origin()
        self._start_ns = self._live_traffic().start(self.options.lead_s)
        self._wall_start_ns = self._start_ns + (time.time_ns() - time.monotonic_ns())
        return self._start_ns / 1e9 - origin

    def run_traffic(self, duration_s: float, drain_s: float,
                    on_running: Any = None) -> None:
        if on_running is not None:
            on_running(self)
        traffic = self._live_traffic()
        ended = self._traffic_ended
        abort = _EitherEvent(self.failed, ended)
        if traffic.wait_senders(duration_s + self.options.lead_s + SENDER_SLACK_S, abort) \
                or not self.failed.is_set():
            if ended.is_set():
                traffic.stop_senders()
            self.failed.wait(drain_s)
        self._elapsed_s = time.monotonic() - self._start_ns / 1e9

    def end_traffic(self) -> None:
        """Senders stop now (they log what they sent); ``run_traffic``
        drains and returns. Safe from any thread."""
        self._traffic_ended.set()

    def _stop_apps(self) -> None:
        """Traffic, collector and clock, in dependency order (idempotent)."""
        if self._traffic is not None:
            self._traffic.stop()
        if self._frame_tap is not None:
            self._frame_tap.stop()
        for tap in self._listeners:
            tap.stop()
        self._listeners.clear()
        if self._clock is not None:
            self._clock.close()
        for sock in self._host_sockets.values():
            sock.close()
        self._host_sockets.clear()

    def finish(self) -> TrafficCounters:
        """Stop the apps and the switches, replay the taps from the pcaps."""
        if self._traffic is not None and self._traffic.start_ns is not None \
                and not self._elapsed_s:
            self._elapsed_s = time.monotonic() - self._start_ns / 1e9
        self._stop_apps()
        counters = self.stop_switches()
        start = self._wall_start_ns
        if self._taps:
            taps = self._taps
            for t_ns, switch, port, frame in self.transmitted(skip_ports=(COLLECTOR_PORT,)):
                if t_ns >= start:
                    for tap in taps:
                        tap(t_ns - start, switch, port, frame)
        if not self.options.keep_pcaps and self.pcap_dir is not None:
            shutil.rmtree(self.pcap_dir, ignore_errors=True)
        traffic = self._live_traffic()
        received = traffic.received()
        send_stats = traffic.send_stats()
        ports = [p for c in counters.values() if c for p in c.get("ports", {}).values()]
        return TrafficCounters(
            sent=sum(len(log) for log in traffic.sent_logs().values()),
            delivered=sum(1 for rx in received.values() for k in rx.keys if k is not None),
            queue_drops=sum(sum(c.get("queue_drops", {}).values())
                            for c in counters.values() if c),
            link_losses=sum(p.get("lost", 0) for p in ports) + sum(
                s.host_lost for s in send_stats.values()),
            elapsed_s=self._elapsed_s, events=0,
            port_tx={(name, int(port)): p.get("tx", 0) for name, c in counters.items() if c
                     for port, p in c.get("ports", {}).items()
                     if int(port) != COLLECTOR_PORT},
            extra=self._extra(counters, send_stats))

    def _extra(self, counters: dict[str, dict[str, Any] | None],
               send_stats: dict[str, Any]) -> dict[str, Any]:
        duration = max(self._elapsed_s, 1e-9)
        rates = {}
        for name, c in counters.items():
            if not c:
                continue
            data = [p for port, p in c.get("ports", {}).items() if port != COLLECTOR_PORT]
            rates[name] = {"rx_pps": sum(p.get("rx", 0) for p in data) / duration,
                           "tx_pps": sum(p.get("tx", 0) for p in data) / duration}
        tap = self._frame_tap
        return {
            "target": self.target.name,
            "run_dir": str(self.run_dir),
            "limitations": list(self.limitations),
            "switch_rates": rates,
            "senders": {h: {"sent": s.sent, "host_lost": s.host_lost,
                            "late_p50_us": s.late_p50_us, "late_p99_us": s.late_p99_us,
                            "late_max_us": s.late_max_us} for h, s in send_stats.items()},
            "collector_frames": tap.frames if tap is not None else 0,
            "collector_errors": [repr(e) for e in tap.errors] if tap is not None else [],
            "failure": self.failure,
        }

    def sent_logs(self) -> dict[str, Any]:
        return self._live_traffic().sent_logs()

    def received(self) -> dict[str, Any]:
        return self._live_traffic().received()

    # ------------------------------------------------------------------ results

    def transmitted(self, *, skip_ports: Sequence[int] = ()) -> Iterator[
            tuple[int, str, int, bytes]]:
        """``(wall-clock ns, switch, port, frame)`` of every frame the switches
        wrote to their out pcaps (``pcap=True``), file by file."""
        if self.pcap_dir is None:
            raise LiveTargetError("the network was built without pcaps")
        skip = set(skip_ports)
        for name, sw in self.switches.items():
            for port, iface in sorted(sw.ports.items()):
                if port in skip:
                    continue
                for t_ns, frame in iter_pcap(out_pcap(self.pcap_dir, iface), truncated_ok=True,
                                                missing_ok=True):
                    yield t_ns, name, port, frame

    # ------------------------------------------------------------------ teardown

    def _close_clients(self) -> None:
        for client in self.clients.values():
            client.close()
        for transport in self._transports:
            transport.close()
        self.clients = {}
        self._transports = []

    def _stop_mininet(self) -> None:
        if self.net is None:
            return
        net = self.net
        net.stop()
        for node in [*net.hosts, *net.switches]:
            shell = getattr(node, "shell", None)
            if shell is not None and shell.poll() is None:
                shell.kill()
                shell.wait()

    def _remove_leftovers(self) -> None:
        """What an interrupted step may have left: processes, then interfaces."""
        running = [p.popen for p in self._procs] + [
            sw.process.popen for sw in self.switches.values() if sw.process is not None]
        for popen in running:
            if popen.poll() is None:
                popen.kill()
                popen.wait()
        for iface in self._root_ifaces:
            if os.path.exists(f"/sys/class/net/{iface}"):
                subprocess.run(["ip", "link", "del", iface], capture_output=True, check=False)

    def _trap_sigterm(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return

        def on_sigterm(signum: int, frame: Any) -> None:
            raise KeyboardInterrupt(f"signal {signum}")

        self._old_sigterm = signal.signal(signal.SIGTERM, on_sigterm)

    def _restore_sigterm(self) -> None:
        if self._old_sigterm is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._old_sigterm)
            self._old_sigterm = None


def read_counters(log_file: Path) -> dict[str, Any] | None:
    """The ``stopped: {...}`` counters ``intbed-switch`` logs when it ends."""
    try:
        lines = log_file.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        _, sep, rest = line.partition("stopped: ")
        if sep:
            try:
                value = ast.literal_eval(rest.strip())
            except (ValueError, SyntaxError):
                return None
            return value if isinstance(value, dict) else None
    return None


@cache
def _root_switch_class() -> type:
    from mininet.node import Switch

    class RootSwitch(Switch):
        """A Mininet switch node in the root namespace whose data plane is
        the process ``LiveNetwork`` starts: Mininet only owns its links."""

        def start(self, controllers: Any) -> None:
            pass

    return RootSwitch


@atexit.register
def _stop_all() -> None:
    """Never leave a network behind when the process exits without stop()."""
    for net in list(_active):
        try:
            net.stop()
        except Exception:  # exiting anyway
            pass


class _EitherEvent:
    """Set when either event is: ``LiveTraffic.wait_senders``' abort for a
    failed switch or an early end of the traffic."""

    def __init__(self, a: threading.Event, b: threading.Event) -> None:
        self.a, self.b = a, b

    def is_set(self) -> bool:
        return self.a.is_set() or self.b.is_set()

    def wait(self, timeout: float) -> bool:
        self.a.wait(timeout)
        return self.is_set()
