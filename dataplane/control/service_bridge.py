"""A gRPC front for a RuntimeService that already serves a switch in this process.

A sim switch's P4Runtime service lives inside the simulator; tools that
speak gRPC only (p4runtime-shell) reach it through ``ServiceBridge``, a
``P4RuntimeServer`` whose one pipeline is that service. The bridge shares
the service's arbitration, so a gRPC client meets the in-process
controllers as P4Runtime's rules say (a higher election id takes the
primary role from them, a lower one is a backup that may only read).

The pipeline belongs to the network, not to the client:
SetForwardingPipelineConfig is refused (a new pipeline would be a Switch
outside the simulator), and stopping the bridge closes its own streams
only, leaving the in-process controllers in place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dataplane.control import grpc_server
from dataplane.control.grpc_server import P4RuntimeServer, encode_device_config
from dataplane.control.service import RuntimeService


class ServiceBridge(P4RuntimeServer):
    """Serves ``service`` (and its switch) on ``addr`` over gRPC."""

    def __init__(self, service: RuntimeService, addr: str = "127.0.0.1:0") -> None:
        super().__init__(addr, device_id=service.device_id, cpu_port=service.cpu_port)
        self.arbitration = service.arbitration
        program = service.switch.program
        source = Path(program.source)
        text = source.read_text() if source.is_file() else ""
        self._current = grpc_server._Pipeline(
            program, service.switch, service, service.p4info,
            encode_device_config(program.name, text), None)

    def _set_pipeline_config(self, request: Any) -> Any:
        raise grpc_server._fail(
            "FAILED_PRECONDITION",
            "this switch's pipeline is set by the network it belongs to; "
            "SetForwardingPipelineConfig is not served here")

    def stop(self, grace: float | None = 0.5) -> None:
        """End the bridge's streams (their controllers leave the arbitration)
        and stop serving; the service's other controllers stay."""
        with self.lock:
            streams = list(self._streams)
            for conn in streams:
                conn.outbox.put(grpc_server._END)
        if self._server is not None:
            self._server.stop(grace).wait()
            self._server = None
        for conn in streams:
            self._drop(conn)
