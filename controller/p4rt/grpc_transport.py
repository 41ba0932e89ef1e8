"""The gRPC transport: a P4Runtime client's path to a live switch.

It implements ``Transport`` over the ``p4.v1.P4Runtime`` service with the
controller's own message classes (``protos()``), so ``P4RuntimeClient``
works unchanged whether the switch is in this process or behind gRPC.

- Unary calls and Read return replies or raise ``RpcError`` (code, message
  and the ``grpc-status-details-bin`` trailer, a serialized
  ``google.rpc.Status``); the client turns that into ``P4RuntimeError`` with
  one entry per failed update, once, as for the in-process transport.
- One StreamChannel is opened per transport. A thread reads it: replies to
  an arbitration sent through ``stream`` go back to that call; everything
  else (PacketIn, DigestList, StreamError, later arbitration updates) goes to
  the ``subscribe`` callbacks, on that thread. Other stream requests are
  sent without waiting, so errors about them (a refused packet-out) arrive
  later as StreamError messages, never as ``stream`` replies.

The gRPC stubs in the ``p4runtime`` wheel cannot be imported with today's
protobuf (see ``p4proto``); the methods are called by their full names.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

import grpc

from controller.p4rt.errors import RpcError
from controller.p4rt.protos import protos

SERVICE = "/p4.v1.P4Runtime/"
STATUS_DETAILS_KEY = "grpc-status-details-bin"
DEVICE_CONFIG_FORMAT = "intbed-p4"
# As the server: PI accepts messages of up to 256 MB.
MAX_MESSAGE_BYTES = 256 * 1024 * 1024

Callback = Callable[[Any], None]


def device_config(name: str, source: str) -> bytes:
    """An intbed switch's ``p4_device_config`` for P4-16 ``source`` (see
    ``dataplane.control.grpc_server``: ``{"format": "intbed-p4", ...}``)."""
    doc = {"format": DEVICE_CONFIG_FORMAT, "name": name, "source": source}
    return json.dumps(doc, sort_keys=True).encode()


def rpc_error(error: grpc.RpcError) -> RpcError:
    """A gRPC failure as the transports' ``RpcError``."""
    code = error.code() if callable(getattr(error, "code", None)) else grpc.StatusCode.UNKNOWN
    message = error.details() if callable(getattr(error, "details", None)) else str(error)
    details = b""
    trailers = error.trailing_metadata() if callable(getattr(error, "trailing_metadata", None)) \
        else None
    for key, value in trailers or ():
        if key == STATUS_DETAILS_KEY:
            details = value
    return RpcError(code.value[0], message or "", details)


def _serialize(message: Any) -> bytes:
    return message.SerializeToString()


class GrpcTransport:
    """P4Runtime to one device at ``addr`` (``host:port``).

    ``election_id`` is used for ``arbitrate`` and ``set_pipeline``; the
    client puts its own in the messages it builds. ``timeout`` bounds every
    call and the wait for an arbitration reply; the constructor waits up to
    ``connect_timeout`` seconds for the server and raises ``RpcError``
    (UNAVAILABLE) when it does not answer.
    """

    def __init__(self, addr: str, device_id: int = 0, election_id: tuple[int, int] = (0, 1),
                 *, timeout: float = 30.0, connect_timeout: float = 10.0) -> None:
        self.addr = addr
        self.device_id = device_id
        self.election_id = election_id
        self.timeout = timeout
        self._pb = protos().p4runtime_pb2
        pb = self._pb
        self.channel = grpc.insecure_channel(addr, options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ])
        def unary(name: str, reply: Any) -> Any:
            return self.channel.unary_unary(SERVICE + name, request_serializer=_serialize,
                                            response_deserializer=reply.FromString)

        self._write = unary("Write", pb.WriteResponse)
        self._read = self.channel.unary_stream(SERVICE + "Read", request_serializer=_serialize,
                                               response_deserializer=pb.ReadResponse.FromString)
        self._set_config = unary("SetForwardingPipelineConfig",
                                 pb.SetForwardingPipelineConfigResponse)
        self._get_config = unary("GetForwardingPipelineConfig",
                                 pb.GetForwardingPipelineConfigResponse)
        self._capabilities = unary("Capabilities", pb.CapabilitiesResponse)
        try:  # a real call rather than channel_ready_future, whose poller slows close()
            self._capabilities(pb.CapabilitiesRequest(), timeout=connect_timeout,
                               wait_for_ready=True)
        except grpc.RpcError as exc:
            self.channel.close()
            if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise RpcError(grpc.StatusCode.UNAVAILABLE.value[0],
                               f"no P4Runtime server answers at {addr}") from None
            raise rpc_error(exc) from None
        channel = self.channel.stream_stream(
            SERVICE + "StreamChannel", request_serializer=_serialize,
            response_deserializer=pb.StreamMessageResponse.FromString,
        )
        self._lock = threading.Lock()
        self._subscribers: list[Callback] = []
        self._outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._arbitration_lock = threading.Lock()
        self._arbitration_replies: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._awaiting_arbitration = False
        self._stream_error: RpcError | None = None
        self._closed = False
        self._call = channel(self._requests())
        self._reader = threading.Thread(target=self._read_stream, name="p4rt-client-stream",
                                        daemon=True)
        self._reader.start()

    # ------------------------------------------------------------------ unary calls

    def _call_unary(self, method: Any, request: Any) -> Any:
        try:
            return method(request, timeout=self.timeout)
        except grpc.RpcError as exc:
            raise rpc_error(exc) from None

    def write(self, request: Any) -> Any:
        return self._call_unary(self._write, request)

    def read(self, request: Any) -> list[Any]:
        try:
            return list(self._read(request, timeout=self.timeout))
        except grpc.RpcError as exc:
            raise rpc_error(exc) from None

    def get_pipeline_config(self, request: Any) -> Any:
        return self._call_unary(self._get_config, request)

    def set_pipeline_config(self, request: Any) -> Any:
        """SetForwardingPipelineConfig with a ready request; a request without
        an election id gets the transport's."""
        if not request.HasField("election_id"):
            request.election_id.high, request.election_id.low = self.election_id
        return self._call_unary(self._set_config, request)

    def set_pipeline(self, p4info: Any = None, config: bytes = b"", *,
                     action: str = "VERIFY_AND_COMMIT", cookie: int | None = None) -> Any:
        """Build and send a SetForwardingPipelineConfigRequest for this device;
        ``config`` is the target's device config (``device_config(...)``)."""
        pb = self._pb
        request = pb.SetForwardingPipelineConfigRequest(device_id=self.device_id)
        request.action = pb.SetForwardingPipelineConfigRequest.Action.Value(action)
        if p4info is not None:
            request.config.p4info.ParseFromString(p4info.SerializeToString())
        request.config.p4_device_config = config
        if cookie is not None:
            request.config.cookie.cookie = cookie
        return self.set_pipeline_config(request)

    def capabilities(self, request: Any) -> Any:
        return self._call_unary(self._capabilities, request)

    # ------------------------------------------------------------------ stream channel

    def _requests(self) -> Iterator[Any]:
        while True:
            item = self._outbox.get()
            if item is None:
                return
            yield item

    def _read_stream(self) -> None:
        try:
            for message in self._call:
                self._on_message(message)
            if not self._closed:
                self._stream_error = RpcError(grpc.StatusCode.UNAVAILABLE.value[0],
                                              "the switch closed the stream")
        except grpc.RpcError as exc:
            if not self._closed:
                self._stream_error = rpc_error(exc)
        finally:
            self._arbitration_replies.put(None)

    def _on_message(self, message: Any) -> None:
        if message.WhichOneof("update") == "arbitration":
            with self._lock:
                waiting = self._awaiting_arbitration
                self._awaiting_arbitration = False
            if waiting:
                self._arbitration_replies.put(message)
                return
        with self._lock:
            callbacks = list(self._subscribers)
        for callback in callbacks:
            callback(message)

    def _check_stream(self) -> None:
        if self._stream_error is not None:
            raise self._stream_error
        if self._closed:
            raise RpcError(grpc.StatusCode.CANCELLED.value[0], "the transport is closed")

    def stream(self, request: Any) -> list[Any]:
        """Send one stream message; an arbitration waits for (and returns) its
        answer, anything else returns ``[]`` at once."""
        self._check_stream()
        if request.WhichOneof("update") != "arbitration":
            self._outbox.put(request)
            return []
        with self._arbitration_lock:
            while not self._arbitration_replies.empty():
                self._arbitration_replies.get_nowait()
            with self._lock:
                self._awaiting_arbitration = True
            self._outbox.put(request)
            try:
                reply = self._arbitration_replies.get(timeout=self.timeout)
            except queue.Empty:
                reply = None
            finally:
                with self._lock:
                    self._awaiting_arbitration = False
        if reply is None:
            self._check_stream()
            raise RpcError(grpc.StatusCode.DEADLINE_EXCEEDED.value[0],
                           "no answer to the arbitration request")
        return [reply]

    def arbitrate(self) -> Any:
        """Announce the transport's election id; returns the MasterArbitrationUpdate."""
        request = self._pb.StreamMessageRequest()
        request.arbitration.device_id = self.device_id
        request.arbitration.election_id.high, request.arbitration.election_id.low = (
            self.election_id
        )
        return self.stream(request)[0].arbitration

    def subscribe(self, callback: Callback) -> Callable[[], None]:
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """End the stream (the switch re-elects) and close the channel."""
        if self._closed:
            return
        self._closed = True
        self._outbox.put(None)
        self._call.cancel()
        if self._reader is not threading.current_thread():
            self._reader.join(timeout=5)
        self.channel.close()

    def __enter__(self) -> GrpcTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
