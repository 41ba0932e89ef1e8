"""Run a p4-utils controller script beside a running network.

The script runs unchanged as a subprocess in its own directory: the
network's ``topology.json`` is written there (as p4-utils writes it where
the network starts; a file already there is put back afterwards), the
shim ``p4utils`` package is first on its ``PYTHONPATH``, and a connection
file named by ``INTBED_P4UTILS_CONNECT`` tells the API which gRPC address
serves which switch. Live switches are reached at their own addresses; a
sim switch through a ``ServiceBridge`` of its in-process service, with
virtual time kept at the wall-clock time since the controller started
(so its sleeps and timeouts mean what they say) and digests collected
as time moves; ``ip link`` on the sim's interfaces is answered by
``simlinks``, and CPU ports are veths the controller can sniff (``simcpu``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.errors import IntbedError
from common.paths import PACKAGE_ROOT, child_env
from controller.p4utils.connect import ENV, SwitchAddress, write_connect_file
from orchestration.network import Network, Target
from orchestration.p4app.spec import P4App
from orchestration.p4app.topojson import switch_ports, topology_data

SHIM_DIR = PACKAGE_ROOT / "controller" / "p4utils" / "shim"
SUDOBIN = Path(__file__).resolve().parent / "sudobin"
PACE_STEP_S = 0.002


class ControllerError(IntbedError):
    """The controller script could not be started."""


@dataclass
class ControllerResult:
    """How the script ended: its exit status, or None when ``settle`` ran out
    while it was still running (it was then stopped)."""

    script: Path
    returncode: int | None
    elapsed_s: float

    @property
    def failed(self) -> bool:
        return self.returncode not in (None, 0)


class ControllerSession:
    """Everything a controller needs from ``net``, from ``__enter__`` to
    ``__exit__``: topology.json in ``topology_dir``, a connection file, gRPC
    endpoints and (sim) paced virtual time."""

    def __init__(self, net: Network, target: Target, app: P4App, topology_dir: Path) -> None:
        self.net, self.target, self.app = net, target, app
        self.topology_dir = topology_dir
        self._tmp = tempfile.TemporaryDirectory(prefix="intbed-p4utils-")
        self.connect_file = Path(self._tmp.name) / "connect.json"
        self._bridges: list[Any] = []
        self._old_topology: bytes | None = None
        self._stop = threading.Event()
        self._proc: subprocess.Popen | None = None
        self._links: Any = None
        self._cpu: Any = None
        self._script, self._started = Path(), 0.0
        self._pacer: threading.Thread | None = None
        self.lock: Any = threading.RLock()

    # ------------------------------------------------------------ lifecycle

    def __enter__(self) -> ControllerSession:
        try:
            addresses = self._endpoints()
            write_connect_file(self.connect_file, addresses)
            self._write_topology()
            if not self.target.live:
                from orchestration.p4app.simlinks import LinkServer, LinkStates

                self._links = LinkServer(LinkStates(self.net, self.lock),
                                         Path(self._tmp.name) / "links.sock")
                if self.app.cpu_ports:
                    from orchestration.p4app.simcpu import SimCpuPorts

                    self._cpu = SimCpuPorts(self.net, self.app.cpu_ports)
                    if self._cpu.problem is not None:
                        print(f"note: no CPU interface for the controller: {self._cpu.problem}",
                              file=sys.stderr)
                self._pacer = threading.Thread(target=self._pace, name="sim-pace", daemon=True)
                self._pacer.start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.terminate()
        self._stop_pacing()
        if self._links is not None:
            self._links.close()
            self._links = None
        if self._cpu is not None:
            self._cpu.close()
            self._cpu = None
        for bridge in self._bridges:
            bridge.stop()
        self._bridges.clear()
        self._restore_topology()
        self._tmp.cleanup()

    @property
    def topology_file(self) -> Path:
        return self.topology_dir / "topology.json"

    def env(self) -> dict[str, str]:
        env = child_env({ENV: str(self.connect_file)})
        env["PYTHONPATH"] = os.pathsep.join([str(SHIM_DIR), env["PYTHONPATH"]])
        path = [env.get("PATH", "")]
        if self._links is not None:
            from orchestration.p4app.simlinks import SIMBIN

            path.insert(0, str(SIMBIN))
            env["INTBED_SIM_LINKS"] = str(self._links.path)
        if self._links is not None or (os.geteuid() == 0 and shutil.which("sudo") is None):
            path.insert(0, str(SUDOBIN))  # scripts that sudo what needs no privileges here
        env["PATH"] = os.pathsep.join(path)
        return env

    # ------------------------------------------------------------ endpoints

    def _endpoints(self) -> list[SwitchAddress]:
        ports = switch_ports(self.app)
        out = []
        for name, spec in self.app.topo.switches.items():
            thrift, grpc = ports[name]
            out.append(SwitchAddress(name, self._grpc_address(name), spec.device_id, thrift,
                                     grpc))
        return out

    def _grpc_address(self, name: str) -> str:
        if self.target.live:
            return self.net.switches[name].grpc_addr  # type: ignore[attr-defined]
        from dataplane.control.service_bridge import ServiceBridge

        service = self.net.services[name]  # type: ignore[attr-defined]
        service.register_writes = True
        bridge = ServiceBridge(service)
        bridge.lock = self.lock  # one lock: the pacer moves every switch at once
        bridge.start()
        self._bridges.append(bridge)
        return bridge.address

    def _pace(self) -> None:
        """Virtual time follows the wall clock; digests go out as it moves."""
        sim = self.net.sim  # type: ignore[attr-defined]
        services = list(self.net.services.values())  # type: ignore[attr-defined]
        start_ns, start_wall = sim.now_ns, time.monotonic()
        while not self._stop.wait(PACE_STEP_S):
            target = start_ns + round((time.monotonic() - start_wall) * 1e9)
            with self.lock:
                sim.run(target)
                for service in services:
                    service.poll_digests()

    # ---------------------------------------------------------- topology.json

    def _write_topology(self) -> None:
        import json

        path = self.topology_file
        if path.exists():
            self._old_topology = path.read_bytes()
        path.write_text(json.dumps(topology_data(self.app), indent=1))

    def _restore_topology(self) -> None:
        path = self.topology_file
        if self._old_topology is not None:
            path.write_bytes(self._old_topology)
            self._old_topology = None
        elif path.exists():
            path.unlink()

    # ------------------------------------------------------------------ run

    def launch(self, script: Path, args: Sequence[str] = (),
               stdin: Any = subprocess.DEVNULL) -> subprocess.Popen:
        """Start ``script`` (its directory as cwd) with the API on its path."""
        script = script.resolve()
        if not script.is_file():
            raise ControllerError(f"controller script {script}: no such file")
        try:
            self._proc = subprocess.Popen([sys.executable, str(script), *args],
                                          cwd=script.parent, env=self.env(), stdin=stdin)
        except OSError as exc:
            raise ControllerError(f"controller script {script}: cannot start: {exc}") from None
        self._script, self._started = script, time.monotonic()
        return self._proc

    def wait(self, settle_s: float | None) -> ControllerResult:
        """Until the script ends, or ``settle_s`` seconds (returncode None)."""
        assert self._proc is not None, "launch() first"
        try:
            code: int | None = self._proc.wait(timeout=settle_s)
        except subprocess.TimeoutExpired:
            code = None
        return ControllerResult(self._script, code, time.monotonic() - self._started)

    def ping_all(self) -> list[Any]:
        """All-pairs ping while the controller runs on: on sim in paced time
        (the pacer moves it, the controller answers as the pings go), on the
        live targets as always."""
        from orchestration.p4app.reach import ping_all

        if self._pacer is None:
            return ping_all(self.net, self.app)
        # Slack for the pacer's last step before the replies are read.
        return ping_all(self.net, self.app, lock=self.lock,
                        run=lambda s: time.sleep(s + 10 * PACE_STEP_S))

    def _stop_pacing(self) -> None:
        self._stop.set()
        if self._pacer is not None:
            self._pacer.join()
            self._pacer = None

    def terminate(self) -> None:
        """Stop the script if it still runs (SIGTERM, then SIGKILL after 5 s)."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
