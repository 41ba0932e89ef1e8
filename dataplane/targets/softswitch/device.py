"""The switch's control side: one Switch and its RuntimeService behind a lock.

The data plane takes ``device.lock`` around every call into the Switch or
the service and reads ``device.switch`` / ``device.service`` afresh each
time, so a SetForwardingPipelineConfig that swaps both is picked up at the
next batch. ``LocalDevice`` serves programs that embed the data plane (tests);
``GrpcDevice`` puts the P4Runtime gRPC server in front of the same pair.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from dataplane.compiler.pipeline import CompiledProgram
from dataplane.control.service import RuntimeService
from dataplane.runtime.switch import Switch

Inject = Callable[[int, bytes], None]


class LocalDevice:
    """A Switch and its RuntimeService in this process, without gRPC."""

    def __init__(self, device_id: int = 0, cpu_port: int | None = None, *,
                 clock: Callable[[], int] | None = None, inject: Inject | None = None,
                 seed: int = 0) -> None:
        self.lock = threading.RLock()
        self.device_id = device_id
        self.cpu_port = cpu_port
        self.clock = clock
        self.inject = inject
        self.seed = seed
        self.switch: Switch | None = None
        self.service: RuntimeService | None = None

    def make_switch(self, program: CompiledProgram) -> Switch:
        return Switch(program, device_id=self.device_id, seed=self.seed, clock=self.clock)

    def set_pipeline(self, program: CompiledProgram) -> None:
        switch = self.make_switch(program)
        service = RuntimeService(switch, cpu_port=self.cpu_port, inject=self.inject)
        with self.lock:
            self.switch, self.service = switch, service

    def start(self) -> int | None:
        return None

    def stop(self) -> None:
        pass


class GrpcDevice:
    """The P4Runtime server (``dataplane.control.grpc_server``) as the device.

    The server owns the Switch and the service and replaces both on
    SetForwardingPipelineConfig; this adapter gives the data plane the same
    ``lock`` / ``switch`` / ``service`` view as ``LocalDevice``.
    """

    def __init__(self, addr: str, device_id: int = 0, cpu_port: int | None = None, *,
                 clock: Callable[[], int] | None = None, inject: Inject | None = None,
                 seed: int = 0, register_writes: bool = False) -> None:
        from dataplane.control.grpc_server import P4RuntimeServer

        self.device_id = device_id
        self.cpu_port = cpu_port
        self.clock = clock
        self.seed = seed
        self.server: Any = P4RuntimeServer(addr, device_id, cpu_port,
                                           switch_factory=self.make_switch, inject=inject)
        self.server.register_writes = register_writes
        self.lock = self.server.lock

    def make_switch(self, program: CompiledProgram, device_id: int) -> Switch:
        return Switch(program, device_id=device_id, seed=self.seed, clock=self.clock)

    @property
    def switch(self) -> Switch | None:
        return self.server.switch

    @property
    def service(self) -> RuntimeService | None:
        return self.server.service

    def set_pipeline(self, program: CompiledProgram) -> None:
        self.server.set_pipeline(program)

    def start(self) -> int | None:
        return self.server.start()

    def stop(self) -> None:
        self.server.stop()

