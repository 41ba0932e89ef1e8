"""How an API object finds its switch: the connection file intbed writes.

p4-utils' APIs name a switch by its Thrift port (``SimpleSwitchThriftAPI``)
or by device id and gRPC port (``SimpleSwitchP4RuntimeAPI``), as
``topology.json`` lists them. intbed's switches speak P4Runtime on addresses
of its own choosing, so the network writes a connection file (switch ->
gRPC address, device id, nominal Thrift and gRPC ports) and names it in
``INTBED_P4UTILS_CONNECT`` for the controller it runs.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.errors import IntbedError
from controller.p4rt.client import P4RuntimeClient

ENV = "INTBED_P4UTILS_CONNECT"
# Above the election ids intbed's own clients hold, so the controller is primary.
CONTROLLER_ELECTION_ID = (1, 0)
_SESSIONS: dict[str, list[Any]] = {}  # switch -> [client, users]
_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class SwitchAddress:
    name: str
    grpc: str
    device_id: int
    thrift_port: int
    grpc_port: int


def write_connect_file(path: Path, switches: list[SwitchAddress]) -> None:
    data = {s.name: {"grpc": s.grpc, "device_id": s.device_id, "thrift_port": s.thrift_port,
                     "grpc_port": s.grpc_port} for s in switches}
    path.write_text(json.dumps({"switches": data}, indent=2))


def _switches() -> list[SwitchAddress]:
    path = os.environ.get(ENV)
    if not path:
        raise IntbedError(f"{ENV} is not set: run the controller with 'intbed p4app run "
                          "--controller SCRIPT', or export the variable 'intbed p4app up' prints")
    try:
        data = json.loads(Path(path).read_text())["switches"]
    except (OSError, ValueError, KeyError) as exc:
        raise IntbedError(f"{ENV}={path}: not an intbed connection file ({exc})") from None
    return [SwitchAddress(name, d["grpc"], d["device_id"], d["thrift_port"], d["grpc_port"])
            for name, d in data.items()]


def find_switch(*, thrift_port: int | None = None, grpc_port: int | None = None,
                device_id: int | None = None) -> SwitchAddress:
    """The switch a p4-utils API constructor names."""
    switches = _switches()
    for s in switches:
        if thrift_port is not None and s.thrift_port == int(thrift_port):
            return s
        if grpc_port is not None and s.grpc_port == int(grpc_port):
            return s
    for s in switches:
        if thrift_port is None and grpc_port is None and s.device_id == device_id:
            return s
    wanted = (f"Thrift port {thrift_port}" if thrift_port is not None
              else f"gRPC port {grpc_port}" if grpc_port is not None else f"device {device_id}")
    raise IntbedError(f"no switch of this network has {wanted} (switches: "
                      + ", ".join(f"{s.name} thrift {s.thrift_port} grpc {s.grpc_port}"
                                  for s in switches) + ")")


def open_client(switch: SwitchAddress) -> P4RuntimeClient:
    """The process's primary P4Runtime session with ``switch`` over gRPC,
    its writes pipelined (``controller.p4utils.pipeline``); a refused write
    is printed as p4-utils prints a refused Thrift call. API objects of one
    switch share it: scripts open a Thrift and a P4Runtime API to the same
    switch, and one election id holds one session."""
    from controller.p4rt.grpc_transport import GrpcTransport
    from controller.p4utils.pipeline import PipelinedTransport

    with _LOCK:
        found = _SESSIONS.get(switch.name)
        if found is not None:
            found[1] += 1
            return found[0]
        grpc = GrpcTransport(switch.grpc, switch.device_id, CONTROLLER_ELECTION_ID)
        transport = PipelinedTransport(grpc, lambda e: print(f"Invalid operation on "
                                                             f"{switch.name} ({e})"))
        client = P4RuntimeClient(transport, device_id=switch.device_id,
                                 election_id=CONTROLLER_ELECTION_ID)
        _SESSIONS[switch.name] = [client, 1]
        return client


def release_client(client: P4RuntimeClient) -> None:
    """One user fewer; the last one closes the session."""
    with _LOCK:
        for name, entry in list(_SESSIONS.items()):
            if entry[0] is client:
                entry[1] -= 1
                if entry[1] > 0:
                    return
                del _SESSIONS[name]
                break
    client.close()
    close = getattr(client.transport, "close", None)
    if close is not None:
        close()
