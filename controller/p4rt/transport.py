"""How a P4Runtime client reaches a switch.

A ``Transport`` carries P4Runtime messages (classes of ``protos()``) to one
device and back: unary calls return the reply or raise ``RpcError``; the
stream channel is split into ``stream`` (send one message, get the replies
it causes at once) and ``subscribe`` (every message the switch sends on its
own: PacketIn, DigestList, StreamError). The gRPC transport of live targets
implements the same protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from controller.p4rt.errors import RpcError
from controller.p4rt.protos import convert, protos

Callback = Callable[[Any], None]


class Transport(Protocol):
    def write(self, request: Any) -> Any: ...

    def read(self, request: Any) -> Iterable[Any]: ...

    def stream(self, request: Any) -> list[Any]: ...

    def subscribe(self, callback: Callback) -> Callable[[], None]: ...

    def get_pipeline_config(self, request: Any) -> Any: ...

    def capabilities(self, request: Any) -> Any: ...


class InProcessTransport:
    """Calls a runtime service object in this process.

    The service answers the six calls above with messages of its own
    ``service.protos.p4runtime_pb2`` and refuses a call by raising an error
    with ``status_bytes()`` (a serialized ``google.rpc.Status``). Messages
    cross between the two descriptor pools as bytes, as they would over gRPC.
    """

    def __init__(self, service: Any) -> None:
        self.service = service
        self._theirs = service.protos.p4runtime_pb2
        self._ours = protos().p4runtime_pb2

    def _call(self, method: Callable[[Any], Any], request: Any) -> Any:
        try:
            return method(convert(request, self._theirs))
        except Exception as exc:
            status = getattr(exc, "status_bytes", None)
            if not callable(status):
                raise
            code, message = getattr(exc, "grpc_code", 2), getattr(exc, "message", str(exc))
            raise RpcError(code, message, status()) from None

    def _back(self, reply: Any) -> Any:
        return convert(reply, self._ours)

    def write(self, request: Any) -> Any:
        return self._back(self._call(self.service.write, request))

    def read(self, request: Any) -> list[Any]:
        return [self._back(r) for r in self._call(self.service.read, request)]

    def stream(self, request: Any) -> list[Any]:
        return [self._back(r) for r in self._call(self.service.stream, request)]

    def subscribe(self, callback: Callback) -> Callable[[], None]:
        return self.service.subscribe(lambda message: callback(self._back(message)))

    def get_pipeline_config(self, request: Any) -> Any:
        return self._back(self._call(self.service.get_pipeline_config, request))

    def capabilities(self, request: Any) -> Any:
        return self._back(self._call(self.service.capabilities, request))
