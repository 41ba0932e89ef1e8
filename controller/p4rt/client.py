"""A P4Runtime client addressed by names.

Controller apps name tables, actions, fields and externs as the P4 program
does; the client resolves them through the P4Info into ids, encodes values
as canonical bytestrings and sends ``p4runtime`` messages over a
``Transport``. Refusals come back as ``P4RuntimeError`` with the gRPC code
name and, for a batch, the index of the failing update.

Entities are reached by kind and name, each with the updates P4Runtime
allows on it (``entities.py``):

    client = P4RuntimeClient(InProcessTransport(service), p4info)
    client.tables["ipv4_lpm"].insert({"hdr.ipv4.dstAddr": ("10.0.1.0", 24)},
                                     "ipv4_forward", {"dstAddr": "00:00:00:00:01:01", "port": 1})
    with client.batch():
        client.multicast_groups.insert(1, [(1, 0), (2, 0)])
        client.clone_sessions.insert(5, [3])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from controller.p4rt import codec
from controller.p4rt.entities import (
    ActionProfile,
    CloneSessions,
    Counter,
    Digests,
    Meter,
    MulticastGroups,
    Register,
    Registry,
    Tables,
)
from controller.p4rt.errors import P4RuntimeError, RpcError, UnknownNameError, code_name
from controller.p4rt.names import P4InfoIndex
from controller.p4rt.protos import convert, protos
from controller.p4rt.transport import Transport


@dataclass(frozen=True, slots=True)
class PacketIn:
    """A frame the switch sent to the controller, with its ``packet_in`` metadata."""

    payload: bytes
    metadata: dict[str, int]


@dataclass(frozen=True, slots=True)
class DigestList:
    """One DigestList: ``data`` holds a dict per sample for struct digests
    (member name -> value), a tuple for tuple digests, an int otherwise."""

    name: str
    digest_id: int
    list_id: int
    timestamp: int
    data: list[Any]


class OneUpdate:
    """One update built in place inside the WriteRequest that carries it (a
    single write builds its message once instead of copying it into a
    request), sent when its ``with`` block ends without an exception."""

    __slots__ = ("_client", "_request", "_update")

    def __init__(self, client: P4RuntimeClient, kind: int) -> None:
        self._client = client
        if client._batch is not None:
            self._request = None
            self._update = client._pb.Update(type=kind)
        else:
            self._request = client._write_request()
            self._update = self._request.updates.add(type=kind)

    def __enter__(self) -> Any:
        return self._update.entity

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None:
            return
        client = self._client
        if self._request is None:
            client._batch.append(self._update)  # type: ignore[union-attr]
        else:
            client._rpc(client.transport.write, self._request)


class P4RuntimeClient:
    """One controller's P4Runtime session with one device.

    ``p4info`` may be omitted: it is then fetched from the device. With
    ``arbitrate`` the client announces ``election_id`` on the stream first
    (P4Runtime spec, "Client Arbitration"); ``is_primary`` tells the outcome.

    The entities, by kind: ``tables``, ``action_profiles``, ``counters``,
    ``meters``, ``registers``, ``digests`` (mappings by name) and the PRE's
    ``clone_sessions`` and ``multicast_groups``.
    """

    def __init__(
        self,
        transport: Transport,
        p4info: Any = None,
        device_id: int = 0,
        election_id: tuple[int, int] = (0, 1),
        *,
        arbitrate: bool = True,
    ) -> None:
        self.transport = transport
        self.device_id = device_id
        self.election_id = election_id
        self._pb = protos().p4runtime_pb2
        self._packet_in_callbacks: list[Callable[[PacketIn], None]] = []
        self._digest_callbacks: list[tuple[Callable[[DigestList], None], bool]] = []
        self._error_callbacks: list[Callable[[P4RuntimeError], None]] = []
        self.stream_errors: list[P4RuntimeError] = []
        self._batch: list[Any] | None = None
        self.is_primary = False
        if p4info is None:
            p4info = self.get_p4info()
        self.p4info = convert(p4info, protos().p4info_pb2)
        self.names = P4InfoIndex(self.p4info)
        self.tables = Tables(self)
        self.action_profiles: Registry[ActionProfile] = Registry(
            self, "action_profiles", ActionProfile)
        self.counters: Registry[Counter] = Registry(self, "counters", Counter)
        self.meters: Registry[Meter] = Registry(self, "meters", Meter)
        self.registers: Registry[Register] = Registry(self, "registers", Register)
        self.digests = Digests(self)
        self.clone_sessions = CloneSessions(self)
        self.multicast_groups = MulticastGroups(self)
        self._unsubscribe = transport.subscribe(self._on_stream)
        if arbitrate:
            self.arbitrate()

    # ------------------------------------------------------------------ plumbing

    def _rpc(self, method: Callable[[Any], Any], request: Any) -> Any:
        try:
            return method(request)
        except RpcError as exc:
            raise P4RuntimeError.from_rpc(exc, self._pb.Error) from None

    def close(self) -> None:
        """Stop receiving stream messages."""
        self._unsubscribe()

    def get_p4info(self) -> Any:
        request = self._pb.GetForwardingPipelineConfigRequest(device_id=self.device_id)
        return self._rpc(self.transport.get_pipeline_config, request).config.p4info

    def api_version(self) -> str:
        request = self._pb.CapabilitiesRequest(device_id=self.device_id)
        return self._rpc(self.transport.capabilities, request).p4runtime_api_version

    def arbitrate(self) -> bool:
        request = self._pb.StreamMessageRequest()
        request.arbitration.device_id = self.device_id
        request.arbitration.election_id.high, request.arbitration.election_id.low = (
            self.election_id
        )
        for reply in self._rpc(self.transport.stream, request):
            self._on_stream(reply)
        return self.is_primary

    def write(self, updates: Iterable[Any]) -> None:
        """Send updates as one WriteRequest (or queue them inside ``batch()``)."""
        updates = list(updates)
        if self._batch is not None:
            self._batch.extend(updates)
            return
        request = self._write_request()
        request.updates.extend(updates)
        self._rpc(self.transport.write, request)

    def _write_request(self) -> Any:
        request = self._pb.WriteRequest(device_id=self.device_id)
        request.election_id.high, request.election_id.low = self.election_id
        return request

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group every write inside the block into one WriteRequest, sent when
        the block ends without an exception."""
        if self._batch is not None:
            raise RuntimeError("batches do not nest")
        self._batch = []
        try:
            yield
            updates = self._batch
        finally:
            self._batch = None
        if updates:
            self.write(updates)

    def read(self, entities: Iterable[Any]) -> list[Any]:
        request = self._pb.ReadRequest(device_id=self.device_id)
        request.entities.extend(entities)
        out: list[Any] = []
        for response in self._rpc(self.transport.read, request):
            out.extend(response.entities)
        return out

    def _update(self, kind: int) -> OneUpdate:
        """``with client._update(INSERT) as entity:`` fills one update's
        entity in place, written when the block ends (queued inside
        ``batch()``; nothing is sent if the block raises)."""
        return OneUpdate(self, kind)

    # ------------------------------------------------------ packet I/O, the stream

    def packet_out(self, payload: bytes, metadata: Mapping[str, codec.Value] | None = None) -> None:
        """Send a frame out through the switch; ``metadata`` fills its
        ``packet_out`` controller header by field name."""
        request = self._pb.StreamMessageRequest()
        request.packet.payload = payload
        if metadata:
            header = self.names.controller_header("packet_out")
            if header is None:
                raise UnknownNameError("the program has no packet_out controller header")
            fields = {m.name: m for m in header.metadata}
            for name, value in metadata.items():
                m = fields.get(name)
                if m is None:
                    raise UnknownNameError(f"packet_out has no field '{name}'")
                request.packet.metadata.add(
                    metadata_id=m.id, value=codec.encode(codec.parse(value, m.bitwidth))
                )
        self._stream(request)

    def _stream(self, request: Any) -> None:
        for reply in self._rpc(self.transport.stream, request):
            if reply.WhichOneof("update") == "error":
                err = reply.error
                raise P4RuntimeError(code_name(err.canonical_code), err.message)
            self._on_stream(reply)

    def on_packet_in(self, callback: Callable[[PacketIn], None]) -> None:
        self._packet_in_callbacks.append(callback)

    def on_digest(self, callback: Callable[[DigestList], None], *, ack: bool = True) -> None:
        """Call ``callback`` for every DigestList; with ``ack`` the list is
        acknowledged once the callback returns."""
        self._digest_callbacks.append((callback, ack))

    def on_stream_error(self, callback: Callable[[P4RuntimeError], None]) -> None:
        self._error_callbacks.append(callback)

    def _on_stream(self, message: Any) -> None:
        kind = message.WhichOneof("update")
        if kind == "packet":
            self._dispatch_packet(message.packet)
        elif kind == "digest":
            self._dispatch_digest(message.digest)
        elif kind == "arbitration":
            self.is_primary = message.arbitration.status.code == 0
        elif kind == "error":
            error = P4RuntimeError(code_name(message.error.canonical_code), message.error.message)
            self.stream_errors.append(error)
            for callback in list(self._error_callbacks):
                callback(error)

    def _dispatch_packet(self, packet: Any) -> None:
        if not self._packet_in_callbacks:
            return
        header = self.names.controller_header("packet_in")
        names = {m.id: m.name for m in header.metadata} if header is not None else {}
        metadata = {
            names.get(m.metadata_id, str(m.metadata_id)): codec.decode(m.value)
            for m in packet.metadata
        }
        event = PacketIn(packet.payload, metadata)
        for callback in list(self._packet_in_callbacks):
            callback(event)

    def _dispatch_digest(self, digest: Any) -> None:
        if not self._digest_callbacks:
            return
        info = self.names.by_id(digest.digest_id)
        members = self.names.struct_members(info.type_spec.struct.name)
        data: list[Any] = []
        for item in digest.data:
            which = item.WhichOneof("data")
            if which == "struct":
                values = [codec.decode(m.bitstring) for m in item.struct.members]
                data.append(dict(zip(members, values, strict=False)))
            elif which == "tuple":
                data.append(tuple(codec.decode(m.bitstring) for m in item.tuple.members))
            else:
                data.append(codec.decode(item.bitstring))
        event = DigestList(
            info.preamble.name, digest.digest_id, digest.list_id, digest.timestamp, data
        )
        acked = False
        for callback, ack in list(self._digest_callbacks):
            callback(event)
            if ack and not acked:
                acked = True
                self.digests.ack(event)
