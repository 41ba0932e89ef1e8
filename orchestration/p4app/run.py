"""Run a p4-utils network on any target: build it, bring the pipelines up,
apply every switch's command file, then check reachability.

On ``sim`` the queue commands change the running ports and register writes
go to the engine. The live targets set queues when a switch starts, so
their queue commands are applied to the Topology first and skipped later.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from controller.bmcli import CommandRunner, read_command_file
from controller.p4rt.client import P4RuntimeClient
from orchestration.apps.ping import PingResult
from orchestration.network import Network, Target, get_target
from orchestration.p4app.controller import ControllerResult, ControllerSession
from orchestration.p4app.reach import ping_all
from orchestration.p4app.spec import P4App
from orchestration.switch_access import TopologyQueues

QUEUE_COMMANDS = frozenset({"set_queue_depth", "set_queue_rate"})


class _SetAtStart:
    """Queue commands already written into the Topology before start."""

    def set_queue_depth(self, depth: int, port: int | None) -> None:
        pass

    def set_queue_rate(self, rate_pps: float, port: int | None) -> None:
        pass


@dataclass
class AppRun:
    """What a run did: commands applied per switch and the all-pairs pings."""

    app: P4App
    target: str
    commands: dict[str, int] = field(default_factory=dict)
    pings: list[PingResult] = field(default_factory=list)
    limitations: list[str] = field(default_factory=list)
    controller: ControllerResult | None = None

    @property
    def lost(self) -> list[PingResult]:
        return [p for p in self.pings if p.rtt_us is None]


def open_app(app: P4App, target: Target | str = "sim", *, seed: int = 0,
             for_controller: bool = False, **options: Any) -> Network:
    """The network of ``app`` on ``target``, started, every command file applied.
    ``for_controller``: its switches take register writes where they can (a
    p4-utils controller's Thrift ``register_write`` becomes one)."""
    target = get_target(target)
    if for_controller and target.live:
        from orchestration.live.options import LiveOptions

        options["live"] = replace(options.get("live") or LiveOptions(), register_writes=True,
                                  cpu_ports=dict(app.cpu_ports))
    files = {name: read_command_file(path) for name, path in app.cli_inputs.items()}
    if not target.queues_while_running:
        for name, commands in files.items():
            _runner(None, TopologyQueues(app.topo, name)).run(
                c for c in commands if c.name in QUEUE_COMMANDS)
    programs = set(app.programs.values())
    if len(programs) > 1:
        for name, path in app.programs.items():
            app.topo.switches[name].program = str(path)
    net = target.open(app.topo, str(min(programs)), seed=seed, **options)
    net.start()
    try:
        for name, commands in files.items():
            queues = net.switch_queues(name)
            _runner(net.clients[name], queues if queues is not None else _SetAtStart(),
                    net.switch_registers(name)).run(commands)
    except BaseException:
        net.stop()
        raise
    return net


def _runner(client: P4RuntimeClient | None, queues: Any, registers: Any = None
            ) -> CommandRunner:
    return CommandRunner(cast(P4RuntimeClient, client), queues=queues, registers=registers)


@dataclass(frozen=True)
class ControllerSpec:
    """A p4-utils controller to run with the network: the script, its
    arguments, and how long to wait for it (None: until it ends)."""

    script: Path
    args: tuple[str, ...] = ()
    settle_s: float | None = None


def run_app(app: P4App, target: Target | str = "sim", *, seed: int = 0, ping: bool = True,
            controller: ControllerSpec | None = None, **options: Any) -> AppRun:
    """Build, configure, (run ``controller``,) ping every pair, tear down.

    A controller still running when ``settle_s`` ends keeps running through
    the pings (a learning switch needs it; on sim they run in paced time)
    and is stopped after them."""
    target = get_target(target)
    result = AppRun(app, target.name)
    net = open_app(app, target, seed=seed, for_controller=controller is not None, **options)
    try:
        result.commands = {name: len(read_command_file(path))
                           for name, path in app.cli_inputs.items()}
        if controller is None:
            if ping:
                result.pings = ping_all(net, app)
        else:
            _with_controller(net, target, app, controller, ping, result)
        result.limitations = list(net.limitations)
    finally:
        net.stop()
    return result


def _with_controller(net: Network, target: Target, app: P4App, spec: ControllerSpec,
                     ping: bool, result: AppRun) -> None:
    script = spec.script.resolve()
    with ControllerSession(net, target, app, script.parent) as session:
        session.launch(script, spec.args)
        result.controller = session.wait(spec.settle_s)
        if result.controller.returncode is None and ping:
            result.pings = session.ping_all()
            return
    if ping:
        result.pings = ping_all(net, app)
