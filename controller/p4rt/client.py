"""A P4Runtime client addressed by names.

Controller apps name tables, actions, fields and externs as the P4 program
does; the client resolves them through the P4Info into ids, encodes values
as canonical bytestrings and sends ``p4runtime`` messages over a
``Transport``. Refusals come back as ``P4RuntimeError`` with the gRPC code
name and, for a batch, the index of the failing update.

    client = P4RuntimeClient(InProcessTransport(service), p4info)
    client.insert_table_entry("ipv4_lpm", {"hdr.ipv4.dstAddr": ("10.0.1.0", 24)},
                              "ipv4_forward", {"dstAddr": "00:00:00:00:01:01", "port": 1})
    with client.batch():
        client.write_multicast_group(1, [(1, 0), (2, 0)])
        client.write_clone_session(5, [3])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from controller.p4rt import codec
from controller.p4rt.errors import P4RuntimeError, RpcError, UnknownNameError, code_name
from controller.p4rt.names import P4InfoIndex
from controller.p4rt.protos import convert, protos
from controller.p4rt.transport import Transport

MatchValue = codec.Value | tuple[codec.Value, codec.Value] | None


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


_MF = protos().p4info_pb2.MatchField
_UPDATE = protos().p4runtime_pb2.Update
_UPDATE_TYPES = {"insert": _UPDATE.INSERT, "modify": _UPDATE.MODIFY, "delete": _UPDATE.DELETE}


class P4RuntimeClient:
    """One controller's P4Runtime session with one device.

    ``p4info`` may be omitted: it is then fetched from the device. With
    ``arbitrate`` the client announces ``election_id`` on the stream first
    (P4Runtime spec, "Client Arbitration"); ``is_primary`` tells the outcome.
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
        request = self._pb.WriteRequest(device_id=self.device_id)
        request.election_id.high, request.election_id.low = self.election_id
        request.updates.extend(updates)
        self._rpc(self.transport.write, request)

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

    def _update(self, kind: str, entity: Any) -> Any:
        update = self._pb.Update(type=_UPDATE_TYPES[kind.lower()])
        update.entity.CopyFrom(entity)
        return update

    # -------------------------------------------------------------- table entries

    def _table_entry(
        self, table: str, match: Mapping[str, MatchValue], priority: int | None
    ) -> tuple[Any, Any]:
        info = self.names.table(table)
        entity = self._pb.Entity()
        te = entity.table_entry
        te.table_id = info.preamble.id
        for name, value in match.items():
            if value is None:
                continue
            mf = self.names.match_field(info, name)
            self._field_match(mf, value, te)
        if priority is not None:
            te.priority = priority
        return entity, info

    @staticmethod
    def _field_match(mf: Any, value: MatchValue, te: Any) -> None:
        """One match field; don't-care values (zero mask, zero prefix length,
        full range) are left out, as P4Runtime requires."""
        width, kind = mf.bitwidth, mf.match_type
        full = (1 << width) - 1
        if kind == _MF.LPM:
            v, plen = codec.parse_prefix(value, width)  # type: ignore[arg-type]
            if plen == 0:
                return
            fm = te.match.add(field_id=mf.id)
            fm.lpm.value, fm.lpm.prefix_len = codec.encode(v), plen
        elif kind == _MF.TERNARY:
            v, mask = (
                (codec.parse(value[0], width), codec.parse(value[1], width))
                if isinstance(value, tuple) else (codec.parse(value, width), full)
            )
            if mask == 0:
                return
            fm = te.match.add(field_id=mf.id)
            fm.ternary.value, fm.ternary.mask = codec.encode(v), codec.encode(mask)
        elif kind == _MF.RANGE:
            low, high = (
                (codec.parse(value[0], width), codec.parse(value[1], width))
                if isinstance(value, tuple) else (codec.parse(value, width),) * 2
            )
            if low == 0 and high == full:
                return
            fm = te.match.add(field_id=mf.id)
            fm.range.low, fm.range.high = codec.encode(low), codec.encode(high)
        elif kind == _MF.OPTIONAL:
            fm = te.match.add(field_id=mf.id)
            fm.optional.value = codec.encode(codec.parse(value, width))  # type: ignore[arg-type]
        else:  # EXACT
            fm = te.match.add(field_id=mf.id)
            fm.exact.value = codec.encode(codec.parse(value, width))  # type: ignore[arg-type]

    def _action(self, table_info: Any, action: str, params: Mapping[str, codec.Value] | None,
                table_action: Any) -> None:
        info = self.names.action(action)
        allowed = {ref.id for ref in table_info.action_refs}
        if info.preamble.id not in allowed:
            raise UnknownNameError(
                f"action {info.preamble.name} is not an action of {table_info.preamble.name}"
            )
        msg = table_action.action
        msg.action_id = info.preamble.id
        for name, value in (params or {}).items():
            p = self.names.param(info, name)
            msg.params.add(param_id=p.id, value=codec.encode(codec.parse(value, p.bitwidth)))

    def insert_table_entry(
        self,
        table: str,
        match: Mapping[str, MatchValue],
        action: str,
        params: Mapping[str, codec.Value] | None = None,
        priority: int | None = None,
    ) -> None:
        """Add an entry. ``match`` maps field names to values: exact and
        optional a value; lpm ``(value, prefix_len)`` or ``"a.b.c.d/n"``;
        ternary ``(value, mask)``; range ``(low, high)``; ``None`` or a missing
        field is a wildcard."""
        self._entry_update("insert", table, match, action, params, priority)

    def modify_table_entry(
        self,
        table: str,
        match: Mapping[str, MatchValue],
        action: str,
        params: Mapping[str, codec.Value] | None = None,
        priority: int | None = None,
    ) -> None:
        self._entry_update("modify", table, match, action, params, priority)

    def delete_table_entry(
        self, table: str, match: Mapping[str, MatchValue], priority: int | None = None
    ) -> None:
        entity, _ = self._table_entry(table, match, priority)
        self.write([self._update("delete", entity)])

    def _entry_update(self, kind: str, table: str, match: Mapping[str, MatchValue],
                      action: str, params: Mapping[str, codec.Value] | None,
                      priority: int | None) -> None:
        entity, info = self._table_entry(table, match, priority)
        self._action(info, action, params, entity.table_entry.action)
        self.write([self._update(kind, entity)])

    # ------------------------------------------------- action profiles (indirect tables)

    def _profile_action(self, profile: Any, action: str,
                        params: Mapping[str, codec.Value] | None, msg: Any) -> None:
        """``msg.action`` set to ``action``, which must be an action of a
        table the profile implements."""
        info = self.names.action(action)
        tables = [self.names.by_id(t) for t in profile.table_ids]
        if not any(info.preamble.id in {r.id for r in t.action_refs} for t in tables):
            raise UnknownNameError(f"action {info.preamble.name} is not an action of the "
                                   f"tables of {profile.preamble.name}")
        msg.action.action_id = info.preamble.id
        for name, value in (params or {}).items():
            p = self.names.param(info, name)
            msg.action.params.add(param_id=p.id,
                                  value=codec.encode(codec.parse(value, p.bitwidth)))

    def write_action_profile_member(self, profile: str, member_id: int, action: str,
                                    params: Mapping[str, codec.Value] | None = None, *,
                                    update: str = "insert") -> None:
        """An ``ActionProfileMember``: ``member_id`` runs ``action(params)``."""
        info = self.names.action_profile(profile)
        entity = self._pb.Entity()
        m = entity.action_profile_member
        m.action_profile_id, m.member_id = info.preamble.id, member_id
        self._profile_action(info, action, params, m)
        self.write([self._update(update, entity)])

    def delete_action_profile_member(self, profile: str, member_id: int) -> None:
        entity = self._pb.Entity()
        m = entity.action_profile_member
        m.action_profile_id = self.names.action_profile(profile).preamble.id
        m.member_id = member_id
        self.write([self._update("delete", entity)])

    def write_action_profile_group(self, profile: str, group_id: int, members: Iterable[int],
                                   *, max_size: int = 0, update: str = "insert") -> None:
        """An ``ActionProfileGroup`` holding ``members`` (weight 1 each)."""
        entity = self._pb.Entity()
        g = entity.action_profile_group
        g.action_profile_id = self.names.action_profile(profile).preamble.id
        g.group_id, g.max_size = group_id, max_size
        for member in members:
            g.members.add(member_id=member, weight=1)
        self.write([self._update(update, entity)])

    def delete_action_profile_group(self, profile: str, group_id: int) -> None:
        entity = self._pb.Entity()
        g = entity.action_profile_group
        g.action_profile_id = self.names.action_profile(profile).preamble.id
        g.group_id = group_id
        self.write([self._update("delete", entity)])

    def write_indirect_entry(self, table: str, match: Mapping[str, MatchValue], *,
                             member: int | None = None, group: int | None = None,
                             priority: int | None = None, update: str = "insert",
                             default: bool = False) -> None:
        """An entry of a table with an implementation, pointing at a member
        or a group (exactly one); ``default`` sets the default entry."""
        if (member is None) == (group is None):
            raise ValueError("give exactly one of member and group")
        entity, _ = self._table_entry(table, match, priority)
        te = entity.table_entry
        te.is_default_action = default
        if member is not None:
            te.action.action_profile_member_id = member
        else:
            te.action.action_profile_group_id = group  # type: ignore[assignment]
        self.write([self._update(update, entity)])

    def set_default_action(
        self, table: str, action: str, params: Mapping[str, codec.Value] | None = None
    ) -> None:
        entity, info = self._table_entry(table, {}, None)
        entity.table_entry.is_default_action = True
        self._action(info, action, params, entity.table_entry.action)
        self.write([self._update("modify", entity)])

    def reset_default_action(self, table: str) -> None:
        """Back to the program's default action (a MODIFY without action)."""
        entity, _ = self._table_entry(table, {}, None)
        entity.table_entry.is_default_action = True
        self.write([self._update("modify", entity)])

    def read_table_entries(self, table: str | None = None, *,
                           counters: bool = False) -> list[dict[str, Any]]:
        """Entries of one table (all tables when ``None``) as dicts with keys
        ``table``, ``match``, ``action``, ``params``, ``priority``, ``is_const``
        and, with ``counters``, ``counter`` = (packets, bytes)."""
        entity = self._pb.Entity()
        te = entity.table_entry
        te.SetInParent()
        if table is not None:
            te.table_id = self.names.table(table).preamble.id
        if counters:
            te.counter_data.SetInParent()
        return [self._entry_dict(e.table_entry) for e in self.read([entity])]

    def read_default_action(self, table: str) -> dict[str, Any]:
        entity, _ = self._table_entry(table, {}, None)
        entity.table_entry.is_default_action = True
        found = self.read([entity])
        return self._entry_dict(found[0].table_entry)

    def _entry_dict(self, te: Any) -> dict[str, Any]:
        info = self.names.by_id(te.table_id)
        fields = {f.id: f for f in info.match_fields}
        match: dict[str, Any] = {}
        for fm in te.match:
            f = fields[fm.field_id]
            kind = fm.WhichOneof("field_match_type")
            if kind == "lpm":
                match[f.name] = (codec.decode(fm.lpm.value), fm.lpm.prefix_len)
            elif kind == "ternary":
                match[f.name] = (codec.decode(fm.ternary.value), codec.decode(fm.ternary.mask))
            elif kind == "range":
                match[f.name] = (codec.decode(fm.range.low), codec.decode(fm.range.high))
            elif kind == "optional":
                match[f.name] = codec.decode(fm.optional.value)
            else:
                match[f.name] = codec.decode(fm.exact.value)
        which = te.action.WhichOneof("type") if te.HasField("action") else None
        action = self.names.by_id(te.action.action.action_id) if which == "action" else None
        params = {}
        if action is not None:
            names = {p.id: p.name for p in action.params}
            params = {names[p.param_id]: codec.decode(p.value) for p in te.action.action.params}
        out: dict[str, Any] = {
            "table": info.preamble.name,
            "match": match,
            "action": action.preamble.name if action is not None else None,
            "params": params,
            "priority": te.priority,
            "is_const": te.is_const,
        }
        if which == "action_profile_member_id":
            out["member"] = te.action.action_profile_member_id
        elif which == "action_profile_group_id":
            out["group"] = te.action.action_profile_group_id
        if te.is_default_action:
            out["is_default"] = True
        if te.HasField("counter_data"):
            out["counter"] = (te.counter_data.packet_count, te.counter_data.byte_count)
        return out

    # ------------------------------------------------------------ counters, meters

    def read_counter(self, name: str, index: int | None = None) -> Any:
        """``(packets, bytes)`` of one cell, or a list over all cells."""
        info = self.names.get("counters", name)
        entity = self._pb.Entity()
        entity.counter_entry.counter_id = info.preamble.id
        if index is not None:
            entity.counter_entry.index.index = index
        cells = [
            (e.counter_entry.data.packet_count, e.counter_entry.data.byte_count)
            for e in self.read([entity])
        ]
        return cells[0] if index is not None else cells

    def write_counter(self, name: str, index: int | None, packets: int = 0,
                      nbytes: int = 0) -> None:
        """Set one cell (every cell when ``index`` is None); zero resets."""
        info = self.names.get("counters", name)
        entity = self._pb.Entity()
        ce = entity.counter_entry
        ce.counter_id = info.preamble.id
        if index is not None:
            ce.index.index = index
        ce.data.packet_count, ce.data.byte_count = packets, nbytes
        self.write([self._update("modify", entity)])

    def read_direct_counter(self, table: str, match: Mapping[str, MatchValue],
                            priority: int | None = None) -> tuple[int, int]:
        entry, _ = self._table_entry(table, match, priority)
        entity = self._pb.Entity()
        entity.direct_counter_entry.table_entry.CopyFrom(entry.table_entry)
        found = self.read([entity])
        if not found:
            raise P4RuntimeError("NOT_FOUND", f"table {table}: no such entry")
        data = found[0].direct_counter_entry.data
        return data.packet_count, data.byte_count

    def write_meter(self, name: str, index: int | None,
                    rates: tuple[int, int, int, int] | None) -> None:
        """Configure a meter cell (all cells when ``index`` is None) with
        ``(cir, cburst, pir, pburst)`` in units per second; ``None`` resets it."""
        info = self.names.get("meters", name)
        entity = self._pb.Entity()
        me = entity.meter_entry
        me.meter_id = info.preamble.id
        if index is not None:
            me.index.index = index
        if rates is not None:
            me.config.cir, me.config.cburst, me.config.pir, me.config.pburst = rates
        self.write([self._update("modify", entity)])

    def read_meter(self, name: str, index: int) -> tuple[int, int, int, int] | None:
        info = self.names.get("meters", name)
        entity = self._pb.Entity()
        entity.meter_entry.meter_id = info.preamble.id
        entity.meter_entry.index.index = index
        me = self.read([entity])[0].meter_entry
        if not me.HasField("config"):
            return None
        return me.config.cir, me.config.cburst, me.config.pir, me.config.pburst

    def write_direct_meter(self, table: str, match: Mapping[str, MatchValue],
                           rates: tuple[int, int, int, int] | None,
                           priority: int | None = None) -> None:
        entry, _ = self._table_entry(table, match, priority)
        entity = self._pb.Entity()
        dm = entity.direct_meter_entry
        dm.table_entry.CopyFrom(entry.table_entry)
        if rates is not None:
            dm.config.cir, dm.config.cburst, dm.config.pir, dm.config.pburst = rates
        self.write([self._update("modify", entity)])

    def read_register(self, name: str, index: int | None = None) -> Any:
        """One cell's value, or a list over all cells."""
        info = self.names.get("registers", name)
        entity = self._pb.Entity()
        entity.register_entry.register_id = info.preamble.id
        if index is not None:
            entity.register_entry.index.index = index
        values = [codec.decode(e.register_entry.data.bitstring) for e in self.read([entity])]
        return values[0] if index is not None else values

    # -------------------------------------------------- packet replication engine

    # The two PRE entities differ only in their field and id names.
    _PRE = {"clone": ("clone_session_entry", "session_id"),
            "multicast": ("multicast_group_entry", "multicast_group_id")}

    def _pre_entity(self, kind: str, ident: int | None) -> tuple[Any, Any]:
        entity = self._pb.Entity()
        field, id_name = self._PRE[kind]
        msg = getattr(entity.packet_replication_engine_entry, field)
        if ident is None:
            msg.SetInParent()
        else:
            setattr(msg, id_name, ident)
        return entity, msg

    def _pre_write(self, kind: str, ident: int, replicas: Iterable[int | tuple[int, int]],
                   update: str) -> None:
        entity, msg = self._pre_entity(kind, ident)
        for item in replicas:
            port, rid = item if isinstance(item, tuple) else (item, 0)
            msg.replicas.add(egress_port=port, instance=rid)
        self.write([self._update(update, entity)])

    def _pre_read(self, kind: str) -> dict[int, list[tuple[int, int]]]:
        entity, _ = self._pre_entity(kind, None)
        field, id_name = self._PRE[kind]
        out = {}
        for e in self.read([entity]):
            msg = getattr(e.packet_replication_engine_entry, field)
            out[getattr(msg, id_name)] = [(r.egress_port, r.instance) for r in msg.replicas]
        return out

    def write_clone_session(self, session: int, ports: Iterable[int | tuple[int, int]],
                            *, update: str = "insert") -> None:
        """Clone session ``session`` copies to ``ports`` (ints or (port, rid))."""
        self._pre_write("clone", session, ports, update)

    def delete_clone_session(self, session: int) -> None:
        self.write([self._update("delete", self._pre_entity("clone", session)[0])])

    def read_clone_sessions(self) -> dict[int, list[tuple[int, int]]]:
        return self._pre_read("clone")

    def write_multicast_group(self, group: int, replicas: Iterable[int | tuple[int, int]],
                              *, update: str = "insert") -> None:
        """Multicast group ``group`` with (port, rid) replicas (a bare port has rid 0)."""
        self._pre_write("multicast", group, replicas, update)

    def delete_multicast_group(self, group: int) -> None:
        self.write([self._update("delete", self._pre_entity("multicast", group)[0])])

    def read_multicast_groups(self) -> dict[int, list[tuple[int, int]]]:
        return self._pre_read("multicast")

    # ---------------------------------------------------------- digests, packet I/O

    def configure_digest(self, name: str, *, max_timeout_ns: int = 0, max_list_size: int = 1,
                         ack_timeout_ns: int = 0, update: str = "insert") -> None:
        """Ask the switch to report digest ``name`` (nothing is reported before)."""
        info = self.names.get("digests", name)
        entity = self._pb.Entity()
        de = entity.digest_entry
        de.digest_id = info.preamble.id
        de.config.max_timeout_ns = max_timeout_ns
        de.config.max_list_size = max_list_size
        de.config.ack_timeout_ns = ack_timeout_ns
        self.write([self._update(update, entity)])

    def ack_digest(self, digest: DigestList) -> None:
        request = self._pb.StreamMessageRequest()
        request.digest_ack.digest_id = digest.digest_id
        request.digest_ack.list_id = digest.list_id
        self._stream(request)

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
                self.ack_digest(event)
