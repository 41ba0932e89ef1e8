"""P4Runtime entities by name: one object per table, extern and PRE kind.

Every kind of entity has the same shape, as in p4runtime-shell: an object
reached from the client whose methods are the P4Runtime updates allowed on
it (``insert``, ``modify``, ``delete``) and ``read``. The verbs are the
spec's, so a call says what goes on the wire:

    client.tables["ipv4_lpm"].insert({"hdr.ipv4.dstAddr": "10.0.1.0/24"},
                                     "ipv4_forward", {"dstAddr": mac, "port": 1})
    client.tables["ipv4_lpm"].default.modify("drop")
    client.counters["port_pkts"].read(3)
    client.clone_sessions.insert(5, [3])

A name (full, alias or unique suffix, see ``names.py``) is resolved in the
P4Info once, when its object is first asked for; the object then keeps its
ids and the match fields and actions it has looked up, so a loop of writes
pays for dictionary lookups, not for P4Info searches. Unknown names raise
``UnknownNameError`` before anything is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from controller.p4rt import codec
from controller.p4rt.errors import P4RuntimeError, UnknownNameError
from controller.p4rt.names import P4InfoIndex
from controller.p4rt.protos import protos

if TYPE_CHECKING:
    from controller.p4rt.client import DigestList, P4RuntimeClient

MatchValue = codec.Value | tuple[codec.Value, codec.Value] | None
Params = Mapping[str, codec.Value] | None
Replicas = Iterable[int | tuple[int, int]]
MeterConfig = tuple[int, int, int, int] | None

_PB = protos().p4runtime_pb2
_MF = protos().p4info_pb2.MatchField
_LPM, _TERNARY, _RANGE, _OPTIONAL = _MF.LPM, _MF.TERNARY, _MF.RANGE, _MF.OPTIONAL
INSERT, MODIFY, DELETE = _PB.Update.INSERT, _PB.Update.MODIFY, _PB.Update.DELETE

E = TypeVar("E")


class Registry(Mapping[str, E]):
    """The entity objects of one P4Info kind by name, each made on first use
    and kept (under the name asked for and its full name); iterates over
    the full names in the P4Info."""

    def __init__(self, client: P4RuntimeClient, kind: str,
                 factory: Callable[[P4RuntimeClient, Any], E]) -> None:
        self._client = client
        self._kind = kind
        self._factory = factory
        self._made: dict[str, E] = {}

    def __getitem__(self, name: str) -> E:
        found = self._made.get(name)
        if found is None:
            info = self._client.names.get(self._kind, name)  # UnknownNameError
            full = info.preamble.name
            found = self._made.get(full)
            if found is None:
                found = self._made[full] = self._factory(self._client, info)
            self._made[name] = found
        return found

    def __iter__(self) -> Iterator[str]:
        return (obj.preamble.name for obj in getattr(self._client.p4info, self._kind))

    def __len__(self) -> int:
        return len(getattr(self._client.p4info, self._kind))


# ------------------------------------------------------------------ actions


class _Entity:
    """What every P4Info-named entity object holds: its client, its P4Info
    and the name and id resolved once."""

    def __init__(self, client: P4RuntimeClient, info: Any) -> None:
        self._client = client
        self.info = info
        self.name: str = info.preamble.name
        self.id: int = info.preamble.id


class _ActionRef:
    """One action as a table or a profile member uses it: its id and its
    parameters' ids and widths, looked up once."""

    __slots__ = ("id", "info", "params")

    def __init__(self, info: Any) -> None:
        self.info = info
        self.id = info.preamble.id
        self.params: dict[str, tuple[int, int]] = {}
        for p in info.params:
            self.params.setdefault(p.name, (p.id, p.bitwidth))

    def fill(self, msg: Any, params: Params) -> None:
        """``msg`` (a ``p4.v1.Action``) set to this action with ``params``."""
        msg.action_id = self.id
        if not params:
            return
        known = self.params
        add = msg.params.add
        for name, value in params.items():
            p = known.get(name)
            if p is None:
                P4InfoIndex.param(self.info, name)  # raises the usual error
            add(param_id=p[0], value=codec.encode(codec.parse(value, p[1])))


def _add_match(te: Any, field: tuple[int, int, int], value: MatchValue) -> None:
    """One match field into ``te``; don't-care values (zero mask, zero prefix
    length, full range) are left out, as P4Runtime requires."""
    fid, width, kind = field
    if kind == _LPM:
        v, plen = codec.parse_prefix(value, width)  # type: ignore[arg-type]
        if plen == 0:
            return
        fm = te.match.add(field_id=fid)
        fm.lpm.value, fm.lpm.prefix_len = codec.encode(v), plen
    elif kind == _TERNARY:
        full = (1 << width) - 1
        v, mask = (
            (codec.parse(value[0], width), codec.parse(value[1], width))
            if isinstance(value, tuple) else (codec.parse(value, width), full)  # type: ignore[arg-type]
        )
        if mask == 0:
            return
        fm = te.match.add(field_id=fid)
        fm.ternary.value, fm.ternary.mask = codec.encode(v), codec.encode(mask)
    elif kind == _RANGE:
        full = (1 << width) - 1
        low, high = (
            (codec.parse(value[0], width), codec.parse(value[1], width))
            if isinstance(value, tuple) else (codec.parse(value, width),) * 2  # type: ignore[arg-type]
        )
        if low == 0 and high == full:
            return
        fm = te.match.add(field_id=fid)
        fm.range.low, fm.range.high = codec.encode(low), codec.encode(high)
    elif kind == _OPTIONAL:
        te.match.add(field_id=fid).optional.value = codec.encode(
            codec.parse(value, width))  # type: ignore[arg-type]
    else:  # EXACT
        te.match.add(field_id=fid).exact.value = codec.encode(
            codec.parse(value, width))  # type: ignore[arg-type]


# ------------------------------------------------------------------- tables


class Table(_Entity):
    """One table's entries: ``insert``/``modify`` (an action with params, or
    a profile ``member`` or ``group`` for a table with an implementation),
    ``delete`` and ``read``; its ``default`` entry; and the direct counter
    and meter, which P4Runtime addresses by entry.

    ``match`` maps field names to values: exact and optional a value; lpm
    ``(value, prefix_len)`` or ``"a.b.c.d/n"``; ternary ``(value, mask)``;
    range ``(low, high)``; ``None`` or a missing field is a wildcard."""

    def __init__(self, client: P4RuntimeClient, info: Any) -> None:
        super().__init__(client, info)
        self._allowed = frozenset(ref.id for ref in info.action_refs)
        self._fields: dict[str, tuple[int, int, int]] = {}
        self._actions: dict[str, _ActionRef] = {}
        self.default = DefaultEntry(self)
        self.direct_counter = DirectCounter(self)
        self.direct_meter = DirectMeter(self)

    def insert(self, match: Mapping[str, MatchValue], action: str | None = None,
               params: Params = None, priority: int | None = None, *,
               member: int | None = None, group: int | None = None) -> None:
        """Add an entry running ``action(params)``, or pointing at a profile
        ``member`` or ``group`` (exactly one of the three)."""
        self._write(INSERT, match, action, params, priority, member, group)

    def modify(self, match: Mapping[str, MatchValue], action: str | None = None,
               params: Params = None, priority: int | None = None, *,
               member: int | None = None, group: int | None = None) -> None:
        """Change an entry's action (as ``insert``); its counter is kept."""
        self._write(MODIFY, match, action, params, priority, member, group)

    def delete(self, match: Mapping[str, MatchValue], priority: int | None = None) -> None:
        with self._client._update(DELETE) as entity:
            self._key(entity.table_entry, match, priority)

    def read(self, *, counters: bool = False) -> list[dict[str, Any]]:
        """This table's entries as dicts (see ``entry_dict``); with
        ``counters`` each carries ``counter`` = (packets, bytes)."""
        return _read_entries(self._client, self.id, counters)

    def _write(self, kind: int, match: Mapping[str, MatchValue], action: str | None,
               params: Params, priority: int | None, member: int | None,
               group: int | None) -> None:
        with self._client._update(kind) as entity:
            te = entity.table_entry
            self._key(te, match, priority)
            self._action(te, action, params, member, group)

    def _key(self, te: Any, match: Mapping[str, MatchValue], priority: int | None) -> None:
        te.table_id = self.id
        fields = self._fields
        for name, value in match.items():
            if value is None:
                continue
            field = fields.get(name)
            if field is None:
                mf = P4InfoIndex.match_field(self.info, name)  # UnknownNameError
                field = fields[name] = (mf.id, mf.bitwidth, mf.match_type)
            _add_match(te, field, value)
        if priority is not None:
            te.priority = priority

    def _action(self, te: Any, action: str | None, params: Params, member: int | None,
                group: int | None) -> None:
        if action is not None and member is None and group is None:
            ref = self._actions.get(action)
            if ref is None:
                info = self._client.names.action(action)
                if info.preamble.id not in self._allowed:
                    raise UnknownNameError(
                        f"action {info.preamble.name} is not an action of {self.name}")
                ref = self._actions[action] = _ActionRef(info)
            ref.fill(te.action.action, params)
        elif action is None and params is None and (member is None) != (group is None):
            if member is not None:
                te.action.action_profile_member_id = member
            else:
                te.action.action_profile_group_id = group
        else:
            raise ValueError("give exactly one of an action (with its params), "
                             "a member and a group")


class DefaultEntry:
    """A table's default entry: P4Runtime only modifies it (no insert or
    delete); ``reset`` is the MODIFY without action that restores the
    program's default."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def modify(self, action: str | None = None, params: Params = None, *,
               member: int | None = None, group: int | None = None) -> None:
        """Run ``action(params)`` (or a profile ``member`` or ``group``) on a miss."""
        with self._table._client._update(MODIFY) as entity:
            self._table._action(self._entry(entity), action, params, member, group)

    def reset(self) -> None:
        with self._table._client._update(MODIFY) as entity:
            self._entry(entity)

    def read(self) -> dict[str, Any]:
        entity = _PB.Entity()
        self._entry(entity)
        client = self._table._client
        return entry_dict(client.names, client.read([entity])[0].table_entry)

    def _entry(self, entity: Any) -> Any:
        """``entity``'s table entry, made this table's default entry."""
        te = entity.table_entry
        te.table_id = self._table.id
        te.is_default_action = True
        return te


class DirectCounter:
    """The counter cell of one entry (a ``DirectCounterEntry``): read only here."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def read(self, match: Mapping[str, MatchValue],
             priority: int | None = None) -> tuple[int, int]:
        """(packets, bytes) of the entry ``match`` (and ``priority``)."""
        table = self._table
        entity = _PB.Entity()
        table._key(entity.direct_counter_entry.table_entry, match, priority)
        found = table._client.read([entity])
        if not found:
            raise P4RuntimeError("NOT_FOUND", f"table {table.name}: no such entry")
        data = found[0].direct_counter_entry.data
        return data.packet_count, data.byte_count


class DirectMeter:
    """The meter of one entry (a ``DirectMeterEntry``): modify only here."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def modify(self, match: Mapping[str, MatchValue], config: MeterConfig,
               priority: int | None = None) -> None:
        """``config`` = (cir, cburst, pir, pburst); ``None`` resets the meter."""
        table = self._table
        with table._client._update(MODIFY) as entity:
            dm = entity.direct_meter_entry
            table._key(dm.table_entry, match, priority)
            if config is not None:
                dm.config.cir, dm.config.cburst, dm.config.pir, dm.config.pburst = config


class Tables(Registry[Table]):
    """``client.tables[name]``; ``read()`` reads the entries of every table."""

    def __init__(self, client: P4RuntimeClient) -> None:
        super().__init__(client, "tables", Table)

    def read(self, *, counters: bool = False) -> list[dict[str, Any]]:
        return _read_entries(self._client, None, counters)


def _read_entries(client: P4RuntimeClient, table_id: int | None,
                  counters: bool) -> list[dict[str, Any]]:
    entity = _PB.Entity()
    te = entity.table_entry
    te.SetInParent()
    if table_id is not None:
        te.table_id = table_id
    if counters:
        te.counter_data.SetInParent()
    names = client.names
    return [entry_dict(names, e.table_entry) for e in client.read([entity])]


def entry_dict(names: P4InfoIndex, te: Any) -> dict[str, Any]:
    """A ``TableEntry`` as a dict: ``table``, ``match`` (field name -> value,
    or the tuples ``insert`` takes), ``action``, ``params``, ``priority``,
    ``is_const``; ``member`` or ``group`` for an indirect entry,
    ``is_default`` for the default entry, ``counter`` when read with counters."""
    info = names.by_id(te.table_id)
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
    action = names.by_id(te.action.action.action_id) if which == "action" else None
    params = {}
    if action is not None:
        pnames = {p.id: p.name for p in action.params}
        params = {pnames[p.param_id]: codec.decode(p.value) for p in te.action.action.params}
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


# ---------------------------------------------------------- action profiles


class ActionProfile(_Entity):
    """An action profile (or selector) of indirect tables: its ``members``
    and ``groups``."""

    def __init__(self, client: P4RuntimeClient, info: Any) -> None:
        super().__init__(client, info)
        self.members = ProfileMembers(client, self)
        self.groups = ProfileGroups(client, self)


class ProfileMembers:
    """``ActionProfileMember``s: ``member_id`` runs an action of one of the
    tables the profile implements."""

    def __init__(self, client: P4RuntimeClient, profile: ActionProfile) -> None:
        self._client = client
        self._profile = profile
        self._actions: dict[str, _ActionRef] = {}

    def insert(self, member_id: int, action: str, params: Params = None) -> None:
        self._write(INSERT, member_id, action, params)

    def modify(self, member_id: int, action: str, params: Params = None) -> None:
        self._write(MODIFY, member_id, action, params)

    def delete(self, member_id: int) -> None:
        with self._client._update(DELETE) as entity:
            m = entity.action_profile_member
            m.action_profile_id, m.member_id = self._profile.id, member_id

    def _write(self, kind: int, member_id: int, action: str, params: Params) -> None:
        ref = self._actions.get(action)
        if ref is None:
            ref = self._actions[action] = self._resolve(action)
        with self._client._update(kind) as entity:
            m = entity.action_profile_member
            m.action_profile_id, m.member_id = self._profile.id, member_id
            ref.fill(m.action, params)

    def _resolve(self, action: str) -> _ActionRef:
        names = self._client.names
        info = names.action(action)
        profile = self._profile.info
        tables = [names.by_id(t) for t in profile.table_ids]
        if not any(info.preamble.id in {r.id for r in t.action_refs} for t in tables):
            raise UnknownNameError(f"action {info.preamble.name} is not an action of the "
                                   f"tables of {profile.preamble.name}")
        return _ActionRef(info)


class ProfileGroups:
    """``ActionProfileGroup``s: a group holds members (weight 1 each)."""

    def __init__(self, client: P4RuntimeClient, profile: ActionProfile) -> None:
        self._client = client
        self._profile = profile

    def insert(self, group_id: int, members: Iterable[int], *, max_size: int = 0) -> None:
        self._write(INSERT, group_id, members, max_size)

    def modify(self, group_id: int, members: Iterable[int], *, max_size: int = 0) -> None:
        """Replace the group's members."""
        self._write(MODIFY, group_id, members, max_size)

    def delete(self, group_id: int) -> None:
        with self._client._update(DELETE) as entity:
            g = entity.action_profile_group
            g.action_profile_id, g.group_id = self._profile.id, group_id

    def _write(self, kind: int, group_id: int, members: Iterable[int], max_size: int) -> None:
        with self._client._update(kind) as entity:
            g = entity.action_profile_group
            g.action_profile_id = self._profile.id
            g.group_id, g.max_size = group_id, max_size
            for member in members:
                g.members.add(member_id=member, weight=1)


# ------------------------------------------------------------------- externs


class Counter(_Entity):
    """An indexed counter: ``read`` and ``modify``, as P4Runtime allows
    (cells always exist, so there is no insert or delete)."""

    def read(self, index: int | None = None) -> Any:
        """``(packets, bytes)`` of one cell, or a list over all cells."""
        entity = _PB.Entity()
        entity.counter_entry.counter_id = self.id
        if index is not None:
            entity.counter_entry.index.index = index
        cells = [
            (e.counter_entry.data.packet_count, e.counter_entry.data.byte_count)
            for e in self._client.read([entity])
        ]
        return cells[0] if index is not None else cells

    def modify(self, index: int | None, *, packets: int = 0, bytes: int = 0) -> None:
        """Set one cell (every cell when ``index`` is None); zero resets."""
        with self._client._update(MODIFY) as entity:
            ce = entity.counter_entry
            ce.counter_id = self.id
            if index is not None:
                ce.index.index = index
            ce.data.packet_count, ce.data.byte_count = packets, bytes


class Meter(_Entity):
    """An indexed meter: ``read`` and ``modify`` of a cell's configuration."""

    def read(self, index: int) -> MeterConfig:
        """(cir, cburst, pir, pburst) of a cell, None when it is unconfigured."""
        entity = _PB.Entity()
        entity.meter_entry.meter_id = self.id
        entity.meter_entry.index.index = index
        me = self._client.read([entity])[0].meter_entry
        if not me.HasField("config"):
            return None
        return me.config.cir, me.config.cburst, me.config.pir, me.config.pburst

    def modify(self, index: int | None, config: MeterConfig) -> None:
        """Configure a cell (all cells when ``index`` is None) with
        ``(cir, cburst, pir, pburst)`` in units per second; ``None`` resets it."""
        with self._client._update(MODIFY) as entity:
            me = entity.meter_entry
            me.meter_id = self.id
            if index is not None:
                me.index.index = index
            if config is not None:
                me.config.cir, me.config.cburst, me.config.pir, me.config.pburst = config


class Register(_Entity):
    """A register array, read only: the service refuses register writes
    (UNIMPLEMENTED), so there is no ``modify`` here."""

    def read(self, index: int | None = None) -> Any:
        """One cell's value, or a list over all cells."""
        entity = _PB.Entity()
        entity.register_entry.register_id = self.id
        if index is not None:
            entity.register_entry.index.index = index
        values = [codec.decode(e.register_entry.data.bitstring)
                  for e in self._client.read([entity])]
        return values[0] if index is not None else values


class Digest(_Entity):
    """A digest's ``DigestEntry``: nothing is reported before ``insert``."""

    def insert(self, *, max_timeout_ns: int = 0, max_list_size: int = 1,
               ack_timeout_ns: int = 0) -> None:
        """Ask the switch to report this digest, in lists of up to
        ``max_list_size`` samples sent within ``max_timeout_ns``."""
        self._write(INSERT, max_timeout_ns, max_list_size, ack_timeout_ns)

    def modify(self, *, max_timeout_ns: int = 0, max_list_size: int = 1,
               ack_timeout_ns: int = 0) -> None:
        self._write(MODIFY, max_timeout_ns, max_list_size, ack_timeout_ns)

    def delete(self) -> None:
        """Stop the reports."""
        with self._client._update(DELETE) as entity:
            entity.digest_entry.digest_id = self.id

    def _write(self, kind: int, max_timeout_ns: int, max_list_size: int,
               ack_timeout_ns: int) -> None:
        with self._client._update(kind) as entity:
            de = entity.digest_entry
            de.digest_id = self.id
            de.config.max_timeout_ns = max_timeout_ns
            de.config.max_list_size = max_list_size
            de.config.ack_timeout_ns = ack_timeout_ns


class Digests(Registry[Digest]):
    """``client.digests[name]``; ``ack`` acknowledges a received list (on
    the stream: a ``DigestListAck``, not an entity)."""

    def __init__(self, client: P4RuntimeClient) -> None:
        super().__init__(client, "digests", Digest)

    def ack(self, digest: DigestList) -> None:
        request = _PB.StreamMessageRequest()
        request.digest_ack.digest_id = digest.digest_id
        request.digest_ack.list_id = digest.list_id
        self._client._stream(request)


# ------------------------------------------------ packet replication engine


class _Replication:
    """The PRE's entries of one kind, by id: a list of (egress port,
    instance) replicas; a bare port is instance 0."""

    _field = ""
    _id_name = ""

    def __init__(self, client: P4RuntimeClient) -> None:
        self._client = client

    def insert(self, ident: int, replicas: Replicas) -> None:
        self._write(INSERT, ident, replicas)

    def modify(self, ident: int, replicas: Replicas) -> None:
        """Replace the replicas."""
        self._write(MODIFY, ident, replicas)

    def delete(self, ident: int) -> None:
        with self._client._update(DELETE) as entity:
            msg = getattr(entity.packet_replication_engine_entry, self._field)
            setattr(msg, self._id_name, ident)

    def read(self) -> dict[int, list[tuple[int, int]]]:
        """Every entry: id -> [(port, instance), ...]."""
        entity = _PB.Entity()
        getattr(entity.packet_replication_engine_entry, self._field).SetInParent()
        out = {}
        for e in self._client.read([entity]):
            msg = getattr(e.packet_replication_engine_entry, self._field)
            out[getattr(msg, self._id_name)] = [(r.egress_port, r.instance)
                                                for r in msg.replicas]
        return out

    def _write(self, kind: int, ident: int, replicas: Replicas) -> None:
        with self._client._update(kind) as entity:
            msg = getattr(entity.packet_replication_engine_entry, self._field)
            setattr(msg, self._id_name, ident)
            for item in replicas:
                port, rid = item if isinstance(item, tuple) else (item, 0)
                msg.replicas.add(egress_port=port, instance=rid)


class CloneSessions(_Replication):
    """Clone sessions: ``insert(session, ports)``, where a clone or mirror
    to ``session`` copies the packet to each port."""

    _field, _id_name = "clone_session_entry", "session_id"


class MulticastGroups(_Replication):
    """Multicast groups: ``insert(group, replicas)``."""

    _field, _id_name = "multicast_group_entry", "multicast_group_id"
