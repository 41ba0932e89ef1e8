"""P4Runtime over gRPC for one device: the ``p4.v1.P4Runtime`` service of a live switch.

The server puts a ``RuntimeService`` (answers) in front of one ``Switch``
(state) and follows BMv2's PI server (``PI/proto/server/pi_server.cpp``)
wherever the P4Runtime specification leaves a choice:

- Client arbitration is ``dataplane.control.arbitration``'s, the rules the
  in-process service applies too (P4Runtime spec §5, §16.2): each
  StreamChannel is one controller; a refused MasterArbitrationUpdate ends
  its stream with the refusal's status (unknown device or role NOT_FOUND, an
  election id in use INVALID_ARGUMENT, a 17th controller
  RESOURCE_EXHAUSTED...); notifications go out on the streams they concern.
  The arbitration outlives pipeline changes and is reset by ``stop``.
- Write and SetForwardingPipelineConfig: only the primary's election id may
  write (PERMISSION_DENIED "Not primary" otherwise, also while there is no
  primary), checked before the pipeline is (FAILED_PRECONDITION).
- Packet-outs and digest acks are taken from the primary only; a backup's
  (or one sent before arbitration) is ignored, as PI ignores it. PacketIns
  and DigestLists go to the primary's stream only.
- Errors are gRPC statuses; a failed Write batch is UNKNOWN with a
  ``google.rpc.Status`` in ``grpc-status-details-bin`` whose details hold one
  ``p4.v1.Error`` per update (spec "Error Reporting Messages"). Before any
  pipeline is set, Write, Read and GetForwardingPipelineConfig answer
  FAILED_PRECONDITION "No forwarding pipeline config set for this device".

The device config (``ForwardingPipelineConfig.p4_device_config``) carries
intbed's program as UTF-8 JSON::

    {"format": "intbed-p4", "name": "<program name>", "source": "<P4-16 text>"}

or as the P4-16 source text itself (named ``program``). The source may
include only ``core.p4`` and ``v1model.p4``. It is compiled by intbed's front
end; ``config.p4info``, when given, is the P4Info served (its tables and
actions must exist in the program), else it is built from the program.
SetForwardingPipelineConfig actions: VERIFY compiles and checks; VERIFY_AND_SAVE
also keeps the result for a later COMMIT (the running pipeline keeps serving
until then); VERIFY_AND_COMMIT and COMMIT swap in a fresh Switch and
RuntimeService (forwarding state cleared); RECONCILE_AND_COMMIT keeps the
state when the config equals the running one and is UNIMPLEMENTED otherwise.

Thread safety: ``server.lock`` (re-entrant) is held around every call into
the Switch and the RuntimeService. A target running packets through the
same Switch from its own thread must hold it as well, e.g.
``with server.lock: server.service.process(port, frame)``.
"""

from __future__ import annotations

import collections
import dataclasses
import importlib.metadata
import itertools
import json
import queue
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc

from common.errors import IntbedError
from dataplane.control.arbitration import Arbitration, Controller
from dataplane.control.errors import P4RuntimeServiceError
from dataplane.control.service import RuntimeService

p4r = RuntimeService.protos.p4runtime_pb2
p4i = RuntimeService.protos.p4info_pb2

SERVICE = "p4.v1.P4Runtime"
DEVICE_CONFIG_FORMAT = "intbed-p4"
DEFAULT_PROGRAM_NAME = "program"
# PI's DeviceState::max_connections.
MAX_CONNECTIONS = 16
# PI sets the server's maximum receive size to 256 MB (pi_server.cpp).
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
DEFAULT_API_VERSION = "1.3.0"
STATUS_DETAILS_KEY = "grpc-status-details-bin"

_GRPC_CODES = {code.value[0]: code for code in grpc.StatusCode}
_Action = p4r.SetForwardingPipelineConfigRequest
_Response = p4r.GetForwardingPipelineConfigRequest

SwitchFactory = Callable[[Any, int], Any]
PipelineHook = Callable[[Any, RuntimeService], None]


def api_version() -> str:
    """The P4Runtime version of the installed ``p4runtime`` protos (PI reports
    the version of the protos it was built with)."""
    try:
        return importlib.metadata.version("p4runtime")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover
        return DEFAULT_API_VERSION


# --------------------------------------------------------------------------- device config


def encode_device_config(name: str, source: str) -> bytes:
    """The ``p4_device_config`` bytes of a program (the module's JSON format)."""
    doc = {"format": DEVICE_CONFIG_FORMAT, "name": name, "source": source}
    return json.dumps(doc, sort_keys=True).encode()


def decode_device_config(data: bytes) -> tuple[str, str]:
    """``(name, source)`` of a ``p4_device_config``: the JSON document or bare P4 text."""
    if not data:
        raise P4RuntimeServiceError("INVALID_ARGUMENT", "the p4_device_config is empty")
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise P4RuntimeServiceError(
            "INVALID_ARGUMENT", "the p4_device_config is neither intbed-p4 JSON nor P4 text"
        ) from None
    if not text.lstrip().startswith("{"):
        return DEFAULT_PROGRAM_NAME, text
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise P4RuntimeServiceError(
            "INVALID_ARGUMENT", f"the p4_device_config is not valid JSON: {exc}"
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != DEVICE_CONFIG_FORMAT:
        raise P4RuntimeServiceError(
            "INVALID_ARGUMENT", f'the p4_device_config needs "format": "{DEVICE_CONFIG_FORMAT}"'
        )
    name, source = doc.get("name", DEFAULT_PROGRAM_NAME), doc.get("source")
    if not isinstance(name, str) or not isinstance(source, str):
        raise P4RuntimeServiceError(
            "INVALID_ARGUMENT", 'the p4_device_config needs string "name" and "source"'
        )
    return name, source


def _check_p4info(p4info: Any, program: Any) -> None:
    """A given P4Info must describe the program: every table and action it
    names exists in the program description (actions called directly from a
    control included, as p4c lists them); other objects the service skips
    when it does not find them."""
    tables = {t.info.name for t in program.tables}
    actions = {a.name for a in program.schema.actions} | set(program.action_names)
    for t in p4info.tables:
        if t.preamble.name not in tables:
            raise P4RuntimeServiceError(
                "INVALID_ARGUMENT", f"P4Info table {t.preamble.name} is not in the program"
            )
    for a in p4info.actions:
        if a.preamble.name not in actions:
            raise P4RuntimeServiceError(
                "INVALID_ARGUMENT", f"P4Info action {a.preamble.name} is not in the program"
            )


# --------------------------------------------------------------------------- helpers


class _Status(collections.namedtuple("_Status", ("code", "details", "trailing_metadata")),
              grpc.Status):
    """What ``context.abort_with_status`` takes."""


def _abort(context: grpc.ServicerContext, error: P4RuntimeServiceError) -> None:
    context.abort_with_status(_Status(
        _GRPC_CODES.get(error.grpc_code, grpc.StatusCode.UNKNOWN), error.message,
        ((STATUS_DETAILS_KEY, error.status_bytes()),),
    ))


def _fail(code: str, message: str) -> P4RuntimeServiceError:
    return P4RuntimeServiceError(code, message)


def _no_pipeline() -> P4RuntimeServiceError:
    return _fail("FAILED_PRECONDITION", "No forwarding pipeline config set for this device")


_END = object()


class _Connection:
    """One StreamChannel: its outbox and the controller it is in the arbitration."""

    def __init__(self, arbitration: Arbitration) -> None:
        self.outbox: queue.SimpleQueue = queue.SimpleQueue()
        self.controller: Controller = arbitration.open(self.outbox.put)
        self.closed = False


@dataclasses.dataclass(slots=True)
class _Pipeline:
    """A verified program ready to serve: the Switch, its service and its config."""

    program: Any
    switch: Any
    service: RuntimeService
    p4info: Any
    device_config: bytes
    cookie: int | None


# --------------------------------------------------------------------------- the server


class P4RuntimeServer:
    """A P4Runtime gRPC server hosting one device (one Switch + RuntimeService).

    ``switch_factory(program, device_id)`` makes the Switch of a compiled
    program (default: a plain ``Switch``); ``inject(port, frame)`` is how the
    service feeds packet-outs to the target (default: processed at once,
    other ports' output in ``service.emitted``); ``on_pipeline(switch,
    service)`` is called, under the lock, whenever a new pipeline starts
    serving. ``program`` (a ``CompiledProgram`` or a ``.p4`` path) is
    installed at once, as ``simple_switch_grpc`` started with a program.
    """

    def __init__(
        self,
        addr: str = "127.0.0.1:0",
        device_id: int = 0,
        cpu_port: int | None = None,
        switch_factory: SwitchFactory | None = None,
        *,
        program: Any = None,
        p4info: Any = None,
        inject: Callable[[int, bytes], None] | None = None,
        on_pipeline: PipelineHook | None = None,
        max_workers: int = 2 * MAX_CONNECTIONS + 8,
    ) -> None:
        self.addr = addr
        self.device_id = device_id
        self.cpu_port = cpu_port
        self.lock = threading.RLock()
        # Every pipeline's service takes RegisterEntry writes (intbed-switch
        # --register-writes); off, as BMv2's server.
        self.register_writes = False
        self.port: int | None = None
        self._switch_factory = switch_factory or _default_switch
        self._inject = inject
        self._on_pipeline = on_pipeline
        self._max_workers = max_workers
        self._server: grpc.Server | None = None
        self._current: _Pipeline | None = None
        self._saved: _Pipeline | None = None
        self.arbitration = Arbitration(device_id, max_controllers=MAX_CONNECTIONS)
        self._streams: set[_Connection] = set()
        self._workdir: tempfile.TemporaryDirectory[str] | None = None
        self._serial = itertools.count(1)
        if program is not None:
            self.set_pipeline(program, p4info)

    # ------------------------------------------------------------------ lifecycle

    @property
    def switch(self) -> Any:
        return self._current.switch if self._current is not None else None

    @property
    def service(self) -> RuntimeService | None:
        return self._current.service if self._current is not None else None

    @property
    def address(self) -> str:
        """``host:port`` clients dial (after ``start``)."""
        host = self.addr.rsplit(":", 1)[0]
        return f"{host}:{self.port}"

    def start(self) -> int:
        """Listen and serve; returns the bound port (``addr`` may ask for port 0)."""
        if self._server is not None:
            raise RuntimeError("the server is already started")
        server = grpc.server(
            futures.ThreadPoolExecutor(self._max_workers, thread_name_prefix="p4rt"),
            options=[("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                     ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                     ("grpc.so_reuseport", 0)],
        )
        server.add_generic_rpc_handlers((self._handlers(),))
        port = server.add_insecure_port(self.addr)
        if port == 0:
            raise RuntimeError(f"cannot listen on {self.addr}")
        server.start()
        self._server, self.port = server, port
        return port

    def stop(self, grace: float | None = 0.5) -> None:
        """End every stream and stop serving."""
        with self.lock:
            for conn in list(self._streams):
                conn.outbox.put(_END)
            self._streams.clear()
            self.arbitration.reset()
        if self._server is not None:
            self._server.stop(grace).wait()
            self._server = None
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None

    def __enter__(self) -> P4RuntimeServer:
        if self._server is None:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ pipelines

    def set_pipeline(self, program: Any, p4info: Any = None) -> None:
        """Serve ``program`` (a ``CompiledProgram`` or a ``.p4`` path) from now on,
        with fresh forwarding state; ``p4info`` defaults to the program's own."""
        if isinstance(program, str | Path):
            from dataplane.compiler.pipeline import compile_file

            program = compile_file(program)
        source = Path(program.source)
        text = source.read_text() if source.is_file() else ""
        pipeline = self._build(program, p4info, encode_device_config(program.name, text), None)
        with self.lock:
            self._commit(pipeline)

    def _compile(self, name: str, source: str) -> Any:
        """Compile P4 text through a file of its own (the front end reads files)."""
        from dataplane.compiler.pipeline import compile_file

        if self._workdir is None:
            self._workdir = tempfile.TemporaryDirectory(prefix="intbed-p4rt-")
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name) or DEFAULT_PROGRAM_NAME
        directory = Path(self._workdir.name) / str(next(self._serial))
        directory.mkdir()
        path = directory / f"{stem}.p4"
        path.write_text(source)
        try:
            return compile_file(path)
        except IntbedError as exc:
            raise _fail("INVALID_ARGUMENT", f"the program does not compile: {exc}") from None

    def _build(self, program: Any, p4info: Any, device_config: bytes,
               cookie: int | None) -> _Pipeline:
        if p4info is not None and p4info.ByteSize():
            if not isinstance(p4info, p4i.P4Info):
                p4info = p4i.P4Info.FromString(p4info.SerializeToString())
            _check_p4info(p4info, program)
        else:
            p4info = None
        switch = self._switch_factory(program, self.device_id)
        try:
            service = RuntimeService(switch, p4info, cpu_port=self.cpu_port, inject=self._inject,
                                     arbitration=self.arbitration)
            service.register_writes = self.register_writes
        except IntbedError as exc:
            raise _fail("INVALID_ARGUMENT", f"the P4Info does not fit the program: {exc}") from None
        return _Pipeline(program, switch, service, service.p4info, device_config, cookie)

    def _commit(self, pipeline: _Pipeline) -> None:
        self._current = pipeline
        if self._on_pipeline is not None:
            self._on_pipeline(pipeline.switch, pipeline.service)

    def _from_request(self, request: Any) -> _Pipeline:
        config = request.config
        name, source = decode_device_config(config.p4_device_config)
        program = self._compile(name, source)
        cookie = config.cookie.cookie if config.HasField("cookie") else None
        return self._build(program, config.p4info, config.p4_device_config, cookie)

    # ------------------------------------------------------------------ arbitration

    def _drop(self, conn: _Connection) -> None:
        """The stream ended: its controller leaves the arbitration."""
        with self.lock:
            conn.closed = True
            self._streams.discard(conn)
            self.arbitration.close(conn.controller)

    # ------------------------------------------------------------------ RPC handlers

    def _handlers(self) -> grpc.GenericRpcHandler:
        def unary(fn: Callable[[Any], Any], request_cls: Any) -> grpc.RpcMethodHandler:
            return grpc.unary_unary_rpc_method_handler(
                self._guarded(fn), request_deserializer=request_cls.FromString,
                response_serializer=_serialize,
            )

        return grpc.method_handlers_generic_handler(SERVICE, {
            "Write": unary(self._write, p4r.WriteRequest),
            "Read": grpc.unary_stream_rpc_method_handler(
                self._guarded(self._read), request_deserializer=p4r.ReadRequest.FromString,
                response_serializer=_serialize,
            ),
            "SetForwardingPipelineConfig": unary(
                self._set_pipeline_config, p4r.SetForwardingPipelineConfigRequest
            ),
            "GetForwardingPipelineConfig": unary(
                self._get_pipeline_config, p4r.GetForwardingPipelineConfigRequest
            ),
            "StreamChannel": grpc.stream_stream_rpc_method_handler(
                self._stream_channel, request_deserializer=p4r.StreamMessageRequest.FromString,
                response_serializer=_serialize,
            ),
            "Capabilities": unary(self._capabilities, p4r.CapabilitiesRequest),
        })

    @staticmethod
    def _guarded(fn: Callable[[Any], Any]) -> Callable[[Any, grpc.ServicerContext], Any]:
        """Refusals become gRPC statuses with P4Runtime details; anything else
        unexpected is INTERNAL with its message."""

        def handler(request: Any, context: grpc.ServicerContext) -> Any:
            try:
                return fn(request)
            except P4RuntimeServiceError as exc:
                _abort(context, exc)
            except IntbedError as exc:
                _abort(context, _fail("INVALID_ARGUMENT", str(exc)))
            except Exception as exc:  # a defect: report it rather than hang the client
                _abort(context, _fail("INTERNAL", f"{type(exc).__name__}: {exc}"))

        return handler

    def _serving(self) -> _Pipeline:
        if self._current is None:
            raise _no_pipeline()
        return self._current

    def _write(self, request: Any) -> Any:
        with self.lock:
            self.arbitration.check_write(request)
            return self._serving().service.write(request)

    def _read(self, request: Any) -> Iterator[Any]:
        """Replies are built under the lock, before the first is sent, so a
        refusal is the RPC's status rather than a broken stream."""
        with self.lock:
            self.arbitration.check_read(request)
            return iter(list(self._serving().service.read(request)))

    def _capabilities(self, request: Any) -> Any:
        return p4r.CapabilitiesResponse(p4runtime_api_version=api_version())

    def _get_pipeline_config(self, request: Any) -> Any:
        with self.lock:
            self.arbitration.check_device(request.device_id)
            current = self._serving()
        response = p4r.GetForwardingPipelineConfigResponse()
        config = response.config
        kind = request.response_type
        if kind in (_Response.ALL, _Response.P4INFO_AND_COOKIE):
            config.p4info.CopyFrom(current.p4info)
        if kind in (_Response.ALL, _Response.DEVICE_CONFIG_AND_COOKIE):
            config.p4_device_config = current.device_config
        if current.cookie is not None:
            config.cookie.cookie = current.cookie
        return response

    def _set_pipeline_config(self, request: Any) -> Any:
        with self.lock:
            self.arbitration.check_write(request)
        action = request.action
        has_config = request.HasField("config")
        if action == _Action.COMMIT:
            if has_config:
                raise _fail("INVALID_ARGUMENT", "COMMIT takes no config")
            with self.lock:
                saved, self._saved = self._saved, None
                if saved is None:
                    raise _fail("FAILED_PRECONDITION", "no saved config to commit")
                self._commit(saved)
            return p4r.SetForwardingPipelineConfigResponse()
        if action not in (_Action.VERIFY, _Action.VERIFY_AND_SAVE, _Action.VERIFY_AND_COMMIT,
                          _Action.RECONCILE_AND_COMMIT):
            raise _fail("INVALID_ARGUMENT", f"unsupported action {action}")
        if not has_config:
            raise _fail("INVALID_ARGUMENT", "a config is required")
        if action == _Action.RECONCILE_AND_COMMIT:
            return self._reconcile(request.config)
        pipeline = self._from_request(request)  # compiles outside the lock
        with self.lock:
            self.arbitration.check_write(request)  # the primary may have changed meanwhile
            if action == _Action.VERIFY_AND_SAVE:
                self._saved = pipeline
            elif action == _Action.VERIFY_AND_COMMIT:
                self._saved = None
                self._commit(pipeline)
        return p4r.SetForwardingPipelineConfigResponse()

    def _reconcile(self, config: Any) -> Any:
        with self.lock:
            current = self._current
            same = current is not None and config.p4_device_config == current.device_config and (
                not config.p4info.ByteSize()
                or config.p4info.SerializeToString(deterministic=True)
                == current.p4info.SerializeToString(deterministic=True)
            )
            if not same:
                raise _fail("UNIMPLEMENTED",
                            "RECONCILE_AND_COMMIT is supported only for the running config")
            if config.HasField("cookie"):
                current.cookie = config.cookie.cookie
        return p4r.SetForwardingPipelineConfigResponse()

    # ------------------------------------------------------------------ StreamChannel

    def _stream_channel(self, requests: Iterator[Any],
                        context: grpc.ServicerContext) -> Iterator[Any]:
        conn = _Connection(self.arbitration)
        with self.lock:
            self._streams.add(conn)
        context.add_callback(lambda: conn.outbox.put(_END))
        reader = threading.Thread(target=self._pump, args=(requests, conn),
                                  name="p4rt-stream", daemon=True)
        reader.start()
        try:
            while True:
                item = conn.outbox.get()
                if item is _END:
                    return
                if isinstance(item, P4RuntimeServiceError):
                    _abort(context, item)
                yield item
        finally:
            self._drop(conn)

    def _pump(self, requests: Iterator[Any], conn: _Connection) -> None:
        """Read one stream's requests until the client half-closes or fails."""
        try:
            for request in requests:
                if conn.closed:
                    break
                try:
                    self._on_stream_request(conn, request)
                except P4RuntimeServiceError as exc:
                    conn.outbox.put(exc)
                    break
        except grpc.RpcError:  # cancelled by the client or the server stopping
            pass
        except Exception as exc:  # a defect: end the stream with it
            conn.outbox.put(_fail("INTERNAL", f"{type(exc).__name__}: {exc}"))
        finally:
            self._drop(conn)
            conn.outbox.put(_END)

    def _on_stream_request(self, conn: _Connection, request: Any) -> None:
        """Arbitration is answered with or without a pipeline; other messages
        go to the serving pipeline's service, which takes them from the
        primary only. Replies are queued under the lock, so nothing the
        switch sends the stream meanwhile overtakes them."""
        with self.lock:
            if request.WhichOneof("update") == "arbitration":
                replies = [self.arbitration.update(conn.controller, request.arbitration)]
            elif self._current is None:
                return
            else:
                replies = self._current.service.stream_from(conn.controller, request)
            for reply in replies:
                conn.outbox.put(reply)


def _serialize(message: Any) -> bytes:
    return message.SerializeToString()


def _default_switch(program: Any, device_id: int) -> Any:
    from dataplane.runtime.switch import Switch

    return Switch(program, device_id=device_id)

