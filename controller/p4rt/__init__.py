"""P4Runtime for controller apps: a client addressed by names over a transport.

Apps get a ``P4RuntimeClient`` per switch; the orchestrator decides the
transport (in-process for the ``sim`` target, gRPC for live switches).
"""

from controller.p4rt.client import DigestList, P4RuntimeClient, PacketIn
from controller.p4rt.errors import P4RuntimeError, RpcError, UnknownNameError, UpdateError
from controller.p4rt.protos import protos
from controller.p4rt.transport import InProcessTransport, Transport

__all__ = [
    "DigestList",
    "InProcessTransport",
    "P4RuntimeClient",
    "P4RuntimeError",
    "PacketIn",
    "RpcError",
    "Transport",
    "UnknownNameError",
    "UpdateError",
    "protos",
]
