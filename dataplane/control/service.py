"""The P4Runtime service over one Switch: requests and replies as ``p4runtime`` messages.

It plays the part BMv2's PI layer plays for ``simple_switch_grpc``: ids come
from the P4Info (built from the program's schema, or given, e.g. p4c's own),
values travel as P4Runtime bytestrings (accepted in any length that fits the
bit width, returned canonical: shortest big-endian, at least one byte), and
errors carry gRPC canonical codes. A Write applies its updates one by one
(CONTINUE_ON_ERROR); every update is validated before it touches the switch,
so a failed update changes nothing, and a failed batch raises one error with
a ``p4.v1.Error`` per update (P4Runtime spec, "Error Reporting Messages").

Packet I/O follows PI's ``packet_io_mgr``: a PacketOut's metadata is packed
bit by bit, in P4Info order, into the ``packet_out`` controller header (whole
bytes, missing fields zero) in front of the payload, and the frame enters the
switch on the CPU port; a frame the switch sends to the CPU port loses its
leading ``packet_in`` header, whose fields become the PacketIn's metadata.
Digests follow PI's ``digest_mgr``: only configured digests are reported,
``max_timeout_ns == 0`` sends each sample at once, ``max_list_size`` caps a
list, and with ``ack_timeout_ns > 0`` a sample already in an unacknowledged
list is suppressed until its list is acknowledged or times out.

Client arbitration (primary and backups, who may write, who does packet
I/O) is ``dataplane.control.arbitration``'s, shared with the gRPC server.
In process, a ``Session`` is one controller's StreamChannel: its ``stream``
sends stream messages, ``subscribe`` receives what the switch sends that
controller (arbitration notifications; PacketIn and DigestList when it is
the primary). The service object is itself one such session (``stream``,
``subscribe``), enough for a single controller; every further controller
needs a ``session()`` of its own, as it would open its own stream over
gRPC. The target calls ``packet_in`` (or ``deliver``) for frames leaving on
the CPU port and ``poll_digests`` after packets.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from google.rpc import code_pb2

from common.errors import RuntimeConfigError
from dataplane.compiler.p4info import build_p4info, p4runtime_protos
from dataplane.control.action_profiles import ActionValue, ProfileAccess
from dataplane.control.arbitration import Arbitration, Controller
from dataplane.control.errors import P4RuntimeServiceError
from dataplane.control.errors import fail as _fail
from dataplane.runtime.tables import (
    Entry,
    Exact,
    Lpm,
    MatchSpec,
    OptionalMatch,
    RangeMatch,
    Table,
    Ternary,
)

_PB = p4runtime_protos()
p4r = _PB.p4runtime_pb2
p4i = _PB.p4info_pb2

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
_PRIORITY_KINDS = frozenset(("ternary", "range", "optional"))
_MATCH_KIND = {
    p4i.MatchField.EXACT: "exact",
    p4i.MatchField.LPM: "lpm",
    p4i.MatchField.TERNARY: "ternary",
    p4i.MatchField.RANGE: "range",
    p4i.MatchField.OPTIONAL: "optional",
}
# PI's clone session id range (pre_clone_mgr.h): [1, 32768).
MIN_CLONE_SESSION, MAX_CLONE_SESSION = 1, 32768
# v1model's mcast_grp and egress_rid are bit<16>.
MAX_MULTICAST_GROUP = 0xFFFF
MAX_RID = 0xFFFF
DEFAULT_API_VERSION = "1.4.1"


# --------------------------------------------------------------------------- bytestrings


def encode(value: int) -> bytes:
    """P4Runtime's canonical bytestring: shortest big-endian form, at least one byte."""
    return value.to_bytes((value.bit_length() + 7) // 8 or 1, "big")


def decode(data: bytes, width: int, what: str) -> int:
    """An unsigned value from a bytestring of any length, as long as it fits ``width``
    bits (PI ``bytestring_p4rt_to_pi``); an empty string is no value at all."""
    if not data:
        raise _fail("INVALID_ARGUMENT", f"{what}: empty bytestring")
    value = int.from_bytes(data, "big")
    if value >> width:
        raise _fail(
            "INVALID_ARGUMENT", f"{what}: value 0x{data.hex()} does not fit in {width} bits"
        )
    return value


# --------------------------------------------------------------------------- P4Info index


@dataclasses.dataclass(slots=True)
class _Field:
    id: int
    name: str
    width: int
    kind: str
    pos: int  # position in the runtime table's key


@dataclasses.dataclass(slots=True)
class _Param:
    id: int
    name: str
    width: int
    pos: int


@dataclasses.dataclass(slots=True)
class _Action:
    id: int
    name: str
    engine_id: int
    params: dict[int, _Param]
    order: list[_Param]  # by position


@dataclasses.dataclass(slots=True)
class _Table:
    id: int
    name: str
    table: Table
    fields: dict[int, _Field]
    order: list[_Field]  # P4Info order
    actions: dict[int, int]  # P4Runtime action id -> ActionRef scope
    needs_priority: bool
    is_const: bool
    const_default: bool
    counter_id: int = 0
    meter_id: int = 0
    profile: ProfileAccess | None = None  # an indirect table's action profile
    # Const entries: engine priority (may be negative) <-> P4Runtime priority.
    const_out: dict[int, int] = dataclasses.field(default_factory=dict)
    const_in: dict[int, int] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(slots=True)
class _Extern:
    id: int
    name: str
    cells: Any  # CounterArray, MeterArray or RegisterArray
    unit: int = 0


@dataclasses.dataclass(slots=True)
class _Header:
    """A controller header: (id, name, width, shift) per field, shifts within ``nbytes``."""

    fields: list[tuple[int, str, int, int]]
    nbytes: int


@dataclasses.dataclass(slots=True)
class _Digest:
    id: int
    name: str
    shape: str  # "struct", "tuple" or "bitstring"
    config: Any = None  # p4.v1.DigestEntry.Config when configured
    pending: list[tuple[int, ...]] = dataclasses.field(default_factory=list)
    pending_cached: list[tuple[int, ...]] = dataclasses.field(default_factory=list)
    first_ns: int = 0
    next_list: int = 1
    cache: set[tuple[int, ...]] = dataclasses.field(default_factory=set)
    inflight: dict[int, tuple[int, list[tuple[int, ...]]]] = dataclasses.field(
        default_factory=dict
    )


def _header(msg: Any) -> _Header:
    total = sum(m.bitwidth for m in msg.metadata)
    nbytes = (total + 7) // 8
    fields = []
    offset = 0
    for m in msg.metadata:
        fields.append((m.id, m.name, m.bitwidth, nbytes * 8 - offset - m.bitwidth))
        offset += m.bitwidth
    return _Header(fields, nbytes)


def _p4info_for(program: Any) -> Any:
    """The P4Info of a compiled program, from its schema alone (controller
    headers included: the compile pipeline records them)."""
    return build_p4info(program.schema)


# --------------------------------------------------------------------------- the service


class RuntimeService:
    """P4Runtime requests against one Switch's state.

    ``cpu_port`` is the port packet-outs enter by and packet-ins leave by
    (``simple_switch_grpc --cpu-port``); ``None`` disables packet I/O.
    ``inject(port, frame)`` feeds a packet-out into the target (default:
    ``process`` at once, other ports' output appended to ``emitted``).
    ``clock_ns`` stamps digest lists (default: the switch clock, in ns).
    ``arbitration`` holds the device's controllers (default: a fresh one;
    the gRPC server passes its own, which outlives pipeline changes).
    """

    protos = _PB

    def __init__(
        self,
        switch: Any,
        p4info: Any = None,
        *,
        cpu_port: int | None = None,
        inject: Callable[[int, bytes], None] | None = None,
        clock_ns: Callable[[], int] | None = None,
        arbitration: Arbitration | None = None,
    ) -> None:
        self.switch = switch
        self.device_id = switch.device_id
        self.arbitration = arbitration or Arbitration(self.device_id)
        self._default: Session | None = None
        if p4info is None:
            p4info = _p4info_for(switch.program)
        elif not isinstance(p4info, p4i.P4Info):
            p4info = p4i.P4Info.FromString(p4info.SerializeToString())
        self.p4info = p4info
        self.cpu_port = cpu_port
        self.emitted: list[tuple[int, bytes]] = []
        self._inject = inject or self._inject_now
        self._clock_ns = clock_ns or (lambda: int(switch.now()) * 1000)
        self._entry_extra: dict[tuple[int, int], tuple[int, bytes]] = {}
        self._mc: dict[int, list[tuple[int, int]]] = {}
        # BMv2's P4Runtime server refuses RegisterEntry writes; a network
        # running a p4-utils controller turns them on (its Thrift
        # register_write has to land somewhere).
        self.register_writes = False
        self._mc_nodes: dict[int, list[int]] = {}
        self._free_nodes: list[int] = []
        self._clones: dict[int, Any] = {}
        self._index(p4info)

    # ------------------------------------------------------------ P4Info -> runtime objects

    def _index(self, info: Any) -> None:
        sw = self.switch
        schema_actions = {a.name: a for a in sw.program.schema.actions}
        self._actions: dict[int, _Action] = {}
        self._by_engine: dict[int, _Action] = {}
        for a in info.actions:
            name = a.preamble.name
            if name not in sw.action_ids:
                continue
            sa = schema_actions.get(name)
            positions = {p.name: i for i, p in enumerate(sa.params)} if sa else {}
            params = [
                _Param(p.id, p.name, p.bitwidth, positions.get(p.name, i))
                for i, p in enumerate(a.params)
            ]
            act = _Action(
                a.preamble.id, name, sw.action_ids[name], {p.id: p for p in params},
                sorted(params, key=lambda p: p.pos),
            )
            self._actions[act.id] = act
            self._by_engine[act.engine_id] = act

        runtime_tables = {t.name: t for t in sw.tables}
        self._tables: dict[int, _Table] = {}
        self._tables_by_name: dict[str, _Table] = {}
        for t in info.tables:
            table = runtime_tables.get(t.preamble.name)
            if table is None:
                continue
            positions = {f.name: i for i, f in enumerate(table.fields)}
            fields = []
            for i, mf in enumerate(t.match_fields):
                kind = _MATCH_KIND.get(mf.match_type, "other")
                fields.append(_Field(mf.id, mf.name, mf.bitwidth, kind, positions.get(mf.name, i)))
            meta = _Table(
                t.preamble.id, t.preamble.name, table, {f.id: f for f in fields}, fields,
                {ref.id: ref.scope for ref in t.action_refs},
                table.mode == "priority", bool(t.is_const_table),
                bool(t.const_default_action_id),
            )
            if meta.is_const and meta.needs_priority:
                _number_const_entries(meta)
            self._tables[meta.id] = meta
            self._tables_by_name[meta.name] = meta

        self._profiles: dict[int, ProfileAccess] = {}
        for ap in info.action_profiles:
            engine = sw.action_profiles.get(ap.preamble.name)
            if engine is not None:
                self._profiles[ap.preamble.id] = ProfileAccess(
                    ap.preamble.id, ap.preamble.name, engine, ap.max_group_size)
        for t in info.tables:
            tm = self._tables.get(t.preamble.id)
            if tm is not None and t.implementation_id in self._profiles:
                tm.profile = self._profiles[t.implementation_id]
        self._profile_actions = {
            pid: {aid for tid in ap.table_ids if tid in self._tables
                  for aid, scope in self._tables[tid].actions.items()
                  if scope != p4i.ActionRef.DEFAULT_ONLY}
            for ap in info.action_profiles for pid in [ap.preamble.id]
        }

        extern_index = {ext.qname: i for i, ext in enumerate(sw.program.externs)}

        def cells(name: str) -> Any:
            i = extern_index.get(name)
            return None if i is None else sw.externs[i]

        self._counters = self._externs(info.counters, cells, lambda c: c.spec.unit)
        self._meters = self._externs(info.meters, cells, lambda m: m.spec.unit)
        self._registers = self._externs(info.registers, cells, lambda r: 0)
        self._direct_counters: dict[int, _Table] = {}
        self._direct_counter_units: dict[int, int] = {}
        for dc in info.direct_counters:
            tm = self._tables.get(dc.direct_table_id)
            if tm is not None:
                tm.counter_id = dc.preamble.id
                self._direct_counters[dc.preamble.id] = tm
                self._direct_counter_units[tm.id] = dc.spec.unit
        self._direct_meters: dict[int, _Table] = {}
        for dm in info.direct_meters:
            tm = self._tables.get(dm.direct_table_id)
            if tm is not None:
                tm.meter_id = dm.preamble.id
                self._direct_meters[dm.preamble.id] = tm

        self._digests: dict[int, _Digest] = {}
        by_name: dict[str, _Digest] = {}
        for d in info.digests:
            shape = d.type_spec.WhichOneof("type_spec") or "bitstring"
            dig = _Digest(d.preamble.id, d.preamble.name, shape)
            self._digests[dig.id] = dig
            by_name[dig.name] = dig
        self._digest_by_index = {
            i: by_name[d.name] for i, d in enumerate(sw.program.schema.digests) if d.name in by_name
        }

        self._in_header: _Header | None = None
        self._out_header: _Header | None = None
        for h in info.controller_packet_metadata:
            if h.preamble.name == "packet_in":
                self._in_header = _header(h)
            elif h.preamble.name == "packet_out":
                self._out_header = _header(h)

    @staticmethod
    def _externs(items: Iterable[Any], cells: Callable[[str], Any],
                 unit: Callable[[Any], int]) -> dict[int, _Extern]:
        out = {}
        for item in items:
            found = cells(item.preamble.name)
            if found is not None:
                out[item.preamble.id] = _Extern(
                    item.preamble.id, item.preamble.name, found, unit(item)
                )
        return out

    # ------------------------------------------------------------------------ RPCs

    def capabilities(self, request: Any = None) -> Any:
        try:
            version = importlib.metadata.version("p4runtime")
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover
            version = DEFAULT_API_VERSION
        return p4r.CapabilitiesResponse(p4runtime_api_version=version)

    def get_pipeline_config(self, request: Any = None) -> Any:
        if request is not None:
            self.arbitration.check_device(request.device_id)
        response = p4r.GetForwardingPipelineConfigResponse()
        kind = request.response_type if request is not None else 0
        Req = p4r.GetForwardingPipelineConfigRequest
        if kind in (Req.ALL, Req.P4INFO_AND_COOKIE):
            response.config.p4info.CopyFrom(self.p4info)
        response.config.cookie.cookie = 0
        return response

    def write(self, request: Any) -> Any:
        """Apply a WriteRequest; raises ``P4RuntimeServiceError`` (UNKNOWN with
        one ``p4.v1.Error`` per update) when any update fails. Only the primary
        may write; the arbitration lock keeps the primary from changing while
        a write is under way."""
        with self.arbitration.lock:
            self.arbitration.check_write(request)
            return self._write(request)

    def _write(self, request: Any) -> Any:
        if request.atomicity != p4r.WriteRequest.CONTINUE_ON_ERROR:
            raise _fail("UNIMPLEMENTED", "only CONTINUE_ON_ERROR atomicity is supported")
        results = []
        failed = False
        for update in request.updates:
            try:
                self._apply(update)
            except P4RuntimeServiceError as exc:
                failed = True
                results.append(p4r.Error(canonical_code=exc.grpc_code, message=exc.message))
            except RuntimeConfigError as exc:
                failed = True
                results.append(
                    p4r.Error(canonical_code=code_pb2.INVALID_ARGUMENT, message=exc.message)
                )
            else:
                results.append(p4r.Error(canonical_code=code_pb2.OK))
        if failed:
            raise P4RuntimeServiceError("UNKNOWN", "Write failure.", results)
        return p4r.WriteResponse()

    def read(self, request: Any) -> Iterator[Any]:
        """All matching entities in one ReadResponse (built before returning, so
        errors are raised by the call, not by iteration)."""
        self.arbitration.check_read(request)
        response = p4r.ReadResponse()
        for entity in request.entities:
            self._read(entity, response.entities)
        return iter([response])

    def stream(self, request: Any) -> list[Any]:
        """One message on the service's own stream (see ``session``)."""
        return self._session().stream(request)

    def subscribe(self, callback: Callable[[Any], None]) -> Callable[[], None]:
        """Receive what the switch sends the service's own stream; returns the
        function that unsubscribes."""
        return self._session().subscribe(callback)

    def session(self) -> Session:
        """A new in-process StreamChannel: one more controller."""
        return Session(self)

    def _session(self) -> Session:
        if self._default is None:
            self._default = Session(self)
        return self._default

    def stream_from(self, controller: Controller, request: Any) -> list[Any]:
        """One StreamChannel message from ``controller``; returns the replies it
        causes at once (its arbitration notification, a StreamError for a
        refused packet-out). A refused arbitration raises: the stream ends.
        Packet-outs and digest acks count only from the primary."""
        kind = request.WhichOneof("update")
        if kind == "arbitration":
            return [self.arbitration.update(controller, request.arbitration)]
        if not self.arbitration.is_primary(controller):
            return []
        if kind == "packet":
            try:
                self._packet_out(request.packet)
            except P4RuntimeServiceError as exc:
                reply = p4r.StreamMessageResponse()
                reply.error.canonical_code = exc.grpc_code
                reply.error.message = exc.message
                reply.error.packet_out.packet_out.CopyFrom(request.packet)
                return [reply]
            return []
        if kind == "digest_ack":
            self._digest_ack(request.digest_ack)
            return []
        reply = p4r.StreamMessageResponse()
        reply.error.canonical_code = code_pb2.UNIMPLEMENTED
        reply.error.message = f"stream message {kind} is not supported"
        return [reply]

    # ------------------------------------------------------------- target side

    def _inject_now(self, port: int, frame: bytes) -> None:
        self.emitted.extend(self.process(port, frame))

    def process(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        """``switch.process`` with packet I/O: frames for the CPU port become
        PacketIns, digests are reported; returns the other ports' frames."""
        out = self.deliver(self.switch.process(port, frame))
        self.poll_digests()
        return out

    def deliver(self, outputs: Iterable[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
        """Send the CPU port's frames to the controller, return the others."""
        cpu = self.cpu_port
        rest = []
        for port, frame in outputs:
            if port == cpu:
                self.packet_in(frame)
            else:
                rest.append((port, frame))
        return rest

    def packet_in(self, frame: bytes) -> None:
        """A frame the switch sent to the CPU port, as a PacketIn to subscribers.
        A frame shorter than the ``packet_in`` header is dropped (PI), as is
        every frame while there is no primary to receive it."""
        if self.arbitration.primary is None:
            return
        reply = p4r.StreamMessageResponse()
        packet = reply.packet
        header = self._in_header
        if header is None:
            packet.payload = frame
        else:
            if len(frame) < header.nbytes:
                return
            bits = int.from_bytes(frame[: header.nbytes], "big")
            for fid, _, width, shift in header.fields:
                packet.metadata.add(
                    metadata_id=fid, value=encode((bits >> shift) & ((1 << width) - 1))
                )
            packet.payload = frame[header.nbytes :]
        self._publish(reply)

    def poll_digests(self) -> None:
        """Collect the switch's digest samples and send the lists that are due
        (acknowledgement timeouts are applied first)."""
        now = self._clock_ns()
        for dig in self._digests.values():
            if dig.inflight and dig.config is not None and dig.config.ack_timeout_ns > 0:
                self._expire(dig, now)
        samples = self.switch.digests
        if samples:
            by_index = self._digest_by_index
            live = self.arbitration.primary is not None
            for sample in samples:
                dig = by_index.get(sample.digest_id)
                if live and dig is not None and dig.config is not None:
                    self._learn(dig, tuple(sample.values), now)
            samples.clear()
        for dig in self._digests.values():
            if dig.pending and now - dig.first_ns >= dig.config.max_timeout_ns:
                self._send_digest(dig, now)

    def _publish(self, message: Any) -> None:
        self.arbitration.publish(message)

    # ------------------------------------------------------------------- writes

    def _apply(self, update: Any) -> None:
        utype = update.type
        if utype not in (INSERT, MODIFY, DELETE):
            raise _fail("INVALID_ARGUMENT", "update type must be INSERT, MODIFY or DELETE")
        kind = update.entity.WhichOneof("entity")
        handler = {
            "table_entry": self._write_table_entry,
            "counter_entry": self._write_counter,
            "direct_counter_entry": self._write_direct_counter,
            "meter_entry": self._write_meter,
            "direct_meter_entry": self._write_direct_meter,
            "packet_replication_engine_entry": self._write_pre,
            "digest_entry": self._write_digest,
            "action_profile_member": self._write_member,
            "action_profile_group": self._write_profile_group,
        }.get(kind or "")
        if kind == "register_entry":
            if not self.register_writes:
                raise _fail("UNIMPLEMENTED", "register writes are not supported (as BMv2)")
            handler = self._write_register
        if handler is None:
            raise _fail("UNIMPLEMENTED", f"entity {kind or 'unset'} is not supported")
        handler(utype, getattr(update.entity, kind))

    def _table(self, table_id: int) -> _Table:
        tm = self._tables.get(table_id)
        if tm is None:
            raise _fail("NOT_FOUND", f"unknown table id {table_id}")
        return tm

    def _matches(self, tm: _Table, entry: Any) -> list[MatchSpec | None]:
        specs: list[MatchSpec | None] = [None] * len(tm.order)
        seen: set[int] = set()
        for fm in entry.match:
            f = tm.fields.get(fm.field_id)
            if f is None:
                raise _fail("INVALID_ARGUMENT", f"table {tm.name} has no match field {fm.field_id}")
            if fm.field_id in seen:
                raise _fail("INVALID_ARGUMENT", f"match field {f.name} given twice")
            seen.add(fm.field_id)
            kind = fm.WhichOneof("field_match_type")
            if kind != f.kind:
                raise _fail(
                    "INVALID_ARGUMENT", f"match field {f.name} is {f.kind}, got a {kind} match"
                )
            specs[f.pos] = self._match(f, fm)
        for f in tm.order:
            if f.kind == "exact" and specs[f.pos] is None:
                raise _fail("INVALID_ARGUMENT", f"missing exact match field {f.name}")
        return specs

    @staticmethod
    def _match(f: _Field, fm: Any) -> MatchSpec:
        """One field match, checked as P4Runtime requires: don't-care values
        must be omitted, masked-out bits must be zero (INVALID_ARGUMENT)."""
        width, what = f.width, f"match field {f.name}"
        full = (1 << width) - 1
        if f.kind == "exact":
            return Exact(decode(fm.exact.value, width, what))
        if f.kind == "lpm":
            value = decode(fm.lpm.value, width, what)
            plen = fm.lpm.prefix_len
            if not 0 < plen <= width:
                raise _fail("INVALID_ARGUMENT", f"{what}: prefix length {plen} out of 1..{width}")
            if value & (full >> plen):
                raise _fail("INVALID_ARGUMENT", f"{what}: bits set beyond the prefix length")
            return Lpm(value, plen)
        if f.kind == "ternary":
            value = decode(fm.ternary.value, width, what)
            mask = decode(fm.ternary.mask, width, what)
            if mask == 0:
                raise _fail("INVALID_ARGUMENT", f"{what}: a zero mask must be omitted")
            if value & ~mask:
                raise _fail("INVALID_ARGUMENT", f"{what}: value has bits outside the mask")
            return Ternary(value, mask)
        if f.kind == "range":
            low = decode(fm.range.low, width, what)
            high = decode(fm.range.high, width, what)
            if low > high:
                raise _fail("INVALID_ARGUMENT", f"{what}: range low is above high")
            if low == 0 and high == full:
                raise _fail("INVALID_ARGUMENT", f"{what}: a full range must be omitted")
            return RangeMatch(low, high)
        if f.kind == "optional":
            return OptionalMatch(decode(fm.optional.value, width, what))
        raise _fail("UNIMPLEMENTED", f"{what}: match kind {f.kind} is not supported")

    @staticmethod
    def _priority(tm: _Table, priority: int) -> int | None:
        if tm.needs_priority:
            if priority <= 0:
                raise _fail(
                    "INVALID_ARGUMENT", f"table {tm.name} needs a priority above 0"
                )
            return priority
        if priority:
            raise _fail("INVALID_ARGUMENT", f"table {tm.name} takes no priority")
        return None

    def _action(self, tm: _Table, table_action: Any, default: bool) -> tuple[int, tuple[int, ...]]:
        kind = table_action.WhichOneof("type")
        if kind is None:
            raise _fail("INVALID_ARGUMENT", f"table {tm.name}: the entry has no action")
        if kind != "action":
            raise _fail("INVALID_ARGUMENT",
                        f"cannot provide indirect action for direct table {tm.name}")
        action = table_action.action
        act = self._actions.get(action.action_id)
        if act is None:
            raise _fail("NOT_FOUND", f"unknown action id {action.action_id}")
        scope = tm.actions.get(act.id)
        if scope is None:
            raise _fail("INVALID_ARGUMENT", f"action {act.name} is not an action of {tm.name}")
        if default and scope == p4i.ActionRef.TABLE_ONLY:
            raise _fail("INVALID_ARGUMENT", f"action {act.name} cannot be a default action")
        if not default and scope == p4i.ActionRef.DEFAULT_ONLY:
            raise _fail("INVALID_ARGUMENT", f"action {act.name} is only a default action")
        return self._action_value(act, action)

    def _action_value(self, act: _Action, action: Any) -> ActionValue:
        """The engine's action id and arguments of a checked ``p4.v1.Action``."""
        args: list[int | None] = [None] * len(act.order)
        for p in action.params:
            pm = act.params.get(p.param_id)
            if pm is None:
                raise _fail("INVALID_ARGUMENT", f"action {act.name} has no parameter {p.param_id}")
            if args[pm.pos] is not None:
                raise _fail("INVALID_ARGUMENT", f"parameter {pm.name} given twice")
            args[pm.pos] = decode(p.value, pm.width, f"parameter {pm.name}")
        for pm in act.order:
            if args[pm.pos] is None:
                raise _fail("INVALID_ARGUMENT", f"action {act.name}: missing parameter {pm.name}")
        return act.engine_id, tuple(args)  # type: ignore[arg-type]

    def _write_table_entry(self, utype: int, e: Any) -> None:
        tm = self._table(e.table_id)
        if e.is_default_action:
            self._write_default(utype, tm, e)
            return
        if tm.is_const:
            raise _fail("PERMISSION_DENIED", f"table {tm.name} has const entries")
        specs = self._matches(tm, e)
        priority = self._priority(tm, e.priority)
        if e.idle_timeout_ns:
            raise _fail("UNIMPLEMENTED", "idle timeouts are not supported")
        table = tm.table
        existing = table.find(specs, priority)
        if utype == DELETE:
            if existing is None:
                raise _fail("NOT_FOUND", f"table {tm.name}: no such entry")
            table.delete(existing)
            self._release_oneshot(tm, existing.ref)
            self._entry_extra.pop((tm.id, existing.handle), None)
            return
        if existing is None and utype == MODIFY:
            raise _fail("NOT_FOUND", f"table {tm.name}: no such entry")
        if existing is not None and utype == INSERT:
            raise _fail("ALREADY_EXISTS", f"table {tm.name}: the entry exists")
        if utype == INSERT and len(table) >= table.size:
            raise _fail("RESOURCE_EXHAUSTED", f"table {tm.name} is full")
        counter = self._counter_data(tm, e)
        rates = self._entry_rates(tm, e)
        if tm.profile is not None:
            entry = self._write_indirect(tm, e, specs, priority, existing)
        else:
            action, args = self._action(tm, e.action, False)
            if utype == INSERT:
                entry = table.insert(specs, action, args, priority)
            else:
                entry = table.modify(existing, action, args)  # type: ignore[arg-type]
        if counter is not None:
            entry.packets, entry.bytes = counter
        if rates is not None and entry.meter is not None:
            entry.meter.set_rates(*rates)
        key = (tm.id, entry.handle)
        if e.controller_metadata or e.metadata:
            self._entry_extra[key] = (e.controller_metadata, e.metadata)
        else:
            self._entry_extra.pop(key, None)

    def _counter_data(self, tm: _Table, e: Any) -> tuple[int, int] | None:
        if not e.HasField("counter_data"):
            return None
        if not tm.counter_id:
            raise _fail("INVALID_ARGUMENT", f"table {tm.name} has no direct counter")
        return e.counter_data.packet_count, e.counter_data.byte_count

    def _entry_rates(self, tm: _Table, e: Any) -> tuple[int, int, int, int] | None:
        if not e.HasField("meter_config"):
            return None
        if not tm.meter_id:
            raise _fail("INVALID_ARGUMENT", f"table {tm.name} has no direct meter")
        return _rates(e.meter_config)

    def _write_indirect(self, tm: _Table, e: Any, specs: list[MatchSpec | None],
                        priority: int | None, existing: Entry | None) -> Entry:
        """An indirect table's entry: a member, a group or a one-shot action
        set (a new group of new members, the old set removed after a MODIFY)."""
        profile = tm.profile
        assert profile is not None
        kind = e.action.WhichOneof("type")
        if kind is None:
            raise _fail("INVALID_ARGUMENT", f"table {tm.name}: the entry has no action")
        if kind == "action":
            raise _fail("INVALID_ARGUMENT",
                        f"cannot provide direct action for indirect table {tm.name}")
        if kind == "action_profile_action_set":
            actions = [
                (self._profile_action(profile, a.action), a.weight)
                for a in e.action.action_profile_action_set.action_profile_actions
            ]
            ref = profile.create_oneshot(actions)
        else:
            ident = (e.action.action_profile_member_id if kind == "action_profile_member_id"
                     else e.action.action_profile_group_id)
            ref = profile.entry_ref("member" if kind == "action_profile_member_id" else "group",
                                    ident)
        try:
            if existing is None:
                return tm.table.insert(specs, -1, (), priority, ref=ref)
            old = existing.ref
            entry = tm.table.modify(existing, -1, (), ref=ref)
            self._release_oneshot(tm, old)
            return entry
        except RuntimeConfigError as exc:
            self._release_oneshot(tm, ref)
            raise _fail("UNKNOWN", f"error when adding match entry to target: {exc.message}"
                        ) from None

    def _release_oneshot(self, tm: _Table, ref: int | None) -> None:
        if tm.profile is not None and ref is not None and ref < 0 and ~ref in tm.profile.oneshots:
            tm.profile.delete_oneshot(ref)

    def _profile(self, profile_id: int) -> ProfileAccess:
        profile = self._profiles.get(profile_id)
        if profile is None:
            raise _fail("NOT_FOUND", f"unknown action profile id {profile_id}")
        return profile

    def _profile_action(self, profile: ProfileAccess, action: Any) -> ActionValue:
        act = self._actions.get(action.action_id)
        if act is None:
            raise _fail("NOT_FOUND", f"unknown action id {action.action_id}")
        if act.id not in self._profile_actions.get(profile.id, ()):
            raise _fail("INVALID_ARGUMENT", f"invalid action {act.name} for action profile "
                                            f"{profile.name}")
        return self._action_value(act, action)

    def _write_member(self, utype: int, m: Any) -> None:
        profile = self._profile(m.action_profile_id)
        if utype == DELETE:
            profile.delete_member(m.member_id)
            return
        action = self._profile_action(profile, m.action)
        if utype == INSERT:
            profile.insert_member(m.member_id, action)
        else:
            profile.modify_member(m.member_id, action)

    def _write_profile_group(self, utype: int, g: Any) -> None:
        profile = self._profile(g.action_profile_id)
        if not profile.profile.with_selector:
            raise _fail("INVALID_ARGUMENT", f"action profile {profile.name} has no selector, "
                                            "so no groups")
        if utype == DELETE:
            profile.delete_group(g.group_id)
            return
        members = [(m.member_id, m.weight) for m in g.members]
        if utype == INSERT:
            profile.insert_group(g.group_id, g.max_size, members)
        else:
            profile.modify_group(g.group_id, g.max_size, members)

    def _write_default(self, utype: int, tm: _Table, e: Any) -> None:
        """The default entry: MODIFY only; without an action it returns to the
        program's default (P4Runtime spec, "Default entry")."""
        if tm.profile is not None:
            raise _fail("INVALID_ARGUMENT",
                        f"cannot set / reset default action for indirect table {tm.name}")
        if utype != MODIFY:
            raise _fail("INVALID_ARGUMENT", "the default entry can only be modified")
        if len(e.match) or e.priority:
            raise _fail("INVALID_ARGUMENT", "the default entry has no match and no priority")
        if tm.const_default:
            raise _fail("PERMISSION_DENIED", f"table {tm.name} has a const default action")
        if not e.HasField("action"):
            tm.table.reset_default()
            return
        action, args = self._action(tm, e.action, True)
        tm.table.set_default(action, args)

    def _cell_indices(self, ext: _Extern, e: Any) -> range:
        size = ext.cells.size
        if not e.HasField("index"):
            return range(size)
        index = e.index.index
        if not 0 <= index < size:
            raise _fail("OUT_OF_RANGE", f"{ext.name}: index {index} out of range (size {size})")
        return range(index, index + 1)

    def _write_counter(self, utype: int, e: Any) -> None:
        if utype != MODIFY:
            raise _fail("INVALID_ARGUMENT", "counter entries can only be modified")
        ext = self._counters.get(e.counter_id)
        if ext is None:
            raise _fail("NOT_FOUND", f"unknown counter id {e.counter_id}")
        for i in self._cell_indices(ext, e):
            ext.cells.write(i, e.data.packet_count, e.data.byte_count)

    def _write_register(self, utype: int, e: Any) -> None:
        if utype != MODIFY:
            raise _fail("INVALID_ARGUMENT", "register entries can only be modified")
        ext = self._registers.get(e.register_id)
        if ext is None:
            raise _fail("NOT_FOUND", f"unknown register id {e.register_id}")
        if e.data.WhichOneof("data") != "bitstring":
            raise _fail("INVALID_ARGUMENT", f"{ext.name}: a register cell takes a bitstring")
        cells = ext.cells
        value = int.from_bytes(e.data.bitstring, "big")
        if value > cells.mask:
            raise _fail("OUT_OF_RANGE", f"{ext.name}: value {value} does not fit the cell")
        for i in self._cell_indices(ext, e):
            cells.set(i, value)

    def _entry(self, tm: _Table, e: Any) -> Entry:
        specs = self._matches(tm, e)
        entry = tm.table.find(specs, self._priority(tm, e.priority))
        if entry is None:
            raise _fail("NOT_FOUND", f"table {tm.name}: no such entry")
        return entry

    def _write_direct_counter(self, utype: int, e: Any) -> None:
        if utype != MODIFY:
            raise _fail("INVALID_ARGUMENT", "direct counter entries can only be modified")
        tm = self._table(e.table_entry.table_id)
        if not tm.counter_id:
            raise _fail("INVALID_ARGUMENT", f"table {tm.name} has no direct counter")
        entry = self._entry(tm, e.table_entry)
        entry.packets, entry.bytes = e.data.packet_count, e.data.byte_count

    def _write_meter(self, utype: int, e: Any) -> None:
        if utype != MODIFY:
            raise _fail("INVALID_ARGUMENT", "meter entries can only be modified")
        ext = self._meters.get(e.meter_id)
        if ext is None:
            raise _fail("NOT_FOUND", f"unknown meter id {e.meter_id}")
        indices = self._cell_indices(ext, e)
        rates = _rates(e.config) if e.HasField("config") else None
        for i in indices:
            meter = ext.cells.meters[i]
            if rates is None:
                meter.reset_rates()
            else:
                meter.set_rates(*rates)

    def _write_direct_meter(self, utype: int, e: Any) -> None:
        if utype != MODIFY:
            raise _fail("INVALID_ARGUMENT", "direct meter entries can only be modified")
        tm = self._table(e.table_entry.table_id)
        if not tm.meter_id:
            raise _fail("INVALID_ARGUMENT", f"table {tm.name} has no direct meter")
        entry = self._entry(tm, e.table_entry)
        if e.HasField("config"):
            entry.meter.set_rates(*_rates(e.config))
        else:
            entry.meter.reset_rates()

    # ---------------------------------------------------- packet replication engine

    def _write_pre(self, utype: int, e: Any) -> None:
        kind = e.WhichOneof("type")
        if kind == "multicast_group_entry":
            self._write_group(utype, e.multicast_group_entry)
        elif kind == "clone_session_entry":
            self._write_clone(utype, e.clone_session_entry)
        else:
            raise _fail("INVALID_ARGUMENT", "empty packet replication engine entry")

    @staticmethod
    def _replicas(replicas: Iterable[Any], what: str) -> list[tuple[int, int]]:
        """(port, rid) pairs, grouped by rid then port as PI reads them back."""
        seen: set[tuple[int, int]] = set()
        for r in replicas:
            if len(r.backup_replicas):
                raise _fail("UNIMPLEMENTED", "backup replicas are not supported")
            if r.WhichOneof("port_kind") == "port":
                port = int.from_bytes(r.port, "big")
            else:
                port = r.egress_port
            if r.instance > MAX_RID:
                raise _fail("INVALID_ARGUMENT", f"{what}: instance {r.instance} exceeds 16 bits")
            pair = (port, r.instance)
            if pair in seen:
                raise _fail("INVALID_ARGUMENT", f"{what}: duplicate replica {pair}")
            seen.add(pair)
        return sorted(seen, key=lambda pr: (pr[1], pr[0]))

    def _write_group(self, utype: int, g: Any) -> None:
        gid = g.multicast_group_id
        if gid == 0:
            raise _fail("INVALID_ARGUMENT", "multicast group id 0 is not a group")
        if gid > MAX_MULTICAST_GROUP:
            raise _fail("OUT_OF_RANGE", f"multicast group id {gid} exceeds 16 bits")
        exists = gid in self._mc
        if utype == INSERT and exists:
            raise _fail("ALREADY_EXISTS", f"multicast group {gid} exists")
        if utype != INSERT and not exists:
            raise _fail("NOT_FOUND", f"multicast group {gid} does not exist")
        sw = self.switch
        if utype == DELETE:
            self._free_nodes.extend(self._mc_nodes.pop(gid))
            del self._mc[gid]
            sw.mc_groups.pop(gid, None)
            return
        replicas = self._replicas(g.replicas, f"multicast group {gid}")
        self._free_nodes.extend(self._mc_nodes.pop(gid, []))
        by_rid: dict[int, list[int]] = {}
        for port, rid in replicas:
            by_rid.setdefault(rid, []).append(port)
        nodes = []
        for rid, ports in by_rid.items():
            node = (rid, sorted(ports))
            if self._free_nodes:
                index = self._free_nodes.pop()
                sw.mc_nodes[index] = node
            else:
                sw.mc_nodes.append(node)
                index = len(sw.mc_nodes) - 1
            nodes.append(index)
        self._mc[gid] = replicas
        self._mc_nodes[gid] = nodes
        sw.mc_groups[gid] = list(nodes)

    def _write_clone(self, utype: int, c: Any) -> None:
        sid = c.session_id
        if not MIN_CLONE_SESSION <= sid < MAX_CLONE_SESSION:
            raise _fail("INVALID_ARGUMENT", f"clone session id {sid} out of range")
        exists = sid in self._clones
        if utype == INSERT and exists:
            raise _fail("ALREADY_EXISTS", f"clone session {sid} exists")
        if utype != INSERT and not exists:
            raise _fail("NOT_FOUND", f"clone session {sid} does not exist")
        if utype == DELETE:
            del self._clones[sid]
            self.switch.mirror.pop(sid, None)
            return
        if c.class_of_service:
            raise _fail("UNIMPLEMENTED", "class of service for clone sessions is not supported")
        if c.packet_length_bytes:
            raise _fail("UNIMPLEMENTED", "clone session truncation is not supported")
        replicas = self._replicas(c.replicas, f"clone session {sid}")
        if len(replicas) > 1:
            raise _fail("UNIMPLEMENTED", "a clone session with more than one replica")
        stored = p4r.CloneSessionEntry()
        stored.CopyFrom(c)
        self._clones[sid] = stored
        if replicas:
            self.switch.mirror[sid] = replicas[0][0]
        else:
            self.switch.mirror.pop(sid, None)

    # ---------------------------------------------------------------------- digests

    def _write_digest(self, utype: int, e: Any) -> None:
        dig = self._digests.get(e.digest_id)
        if dig is None:
            raise _fail("NOT_FOUND", f"unknown digest id {e.digest_id}")
        if utype == INSERT and dig.config is not None:
            raise _fail("ALREADY_EXISTS", f"digest {dig.name} is already configured")
        if utype != INSERT and dig.config is None:
            raise _fail("NOT_FOUND", f"digest {dig.name} is not configured")
        if utype == DELETE:
            self._digests[dig.id] = _Digest(dig.id, dig.name, dig.shape)
            return
        cfg = e.config
        if cfg.max_timeout_ns < 0 or cfg.max_list_size < 0 or cfg.ack_timeout_ns < 0:
            raise _fail("INVALID_ARGUMENT", f"digest {dig.name}: negative configuration")
        config = p4r.DigestEntry.Config()
        config.CopyFrom(cfg)
        dig.config = config

    def _learn(self, dig: _Digest, values: tuple[int, ...], now: int) -> None:
        cfg = dig.config
        if cfg.ack_timeout_ns > 0:
            if values in dig.cache:
                return
            dig.cache.add(values)
            dig.pending_cached.append(values)
        if not dig.pending:
            dig.first_ns = now
        dig.pending.append(values)
        if cfg.max_timeout_ns == 0 or (
            cfg.max_list_size and len(dig.pending) >= cfg.max_list_size
        ):
            self._send_digest(dig, now)

    def _send_digest(self, dig: _Digest, now: int) -> None:
        reply = p4r.StreamMessageResponse()
        digest_list = reply.digest
        digest_list.digest_id = dig.id
        digest_list.list_id = dig.next_list
        digest_list.timestamp = now
        for values in dig.pending:
            data = digest_list.data.add()
            if dig.shape == "struct":
                for v in values:
                    data.struct.members.add(bitstring=encode(v))
            elif dig.shape == "tuple":
                for v in values:
                    data.tuple.members.add(bitstring=encode(v))
            else:
                data.bitstring = encode(values[0])
        if dig.pending_cached:
            dig.inflight[dig.next_list] = (now, dig.pending_cached)
        dig.pending = []
        dig.pending_cached = []
        dig.next_list += 1
        self._publish(reply)

    def _digest_ack(self, ack: Any) -> None:
        dig = self._digests.get(ack.digest_id)
        if dig is None:
            return
        done = dig.inflight.pop(ack.list_id, None)
        if done is not None:
            dig.cache.difference_update(done[1])

    def _expire(self, dig: _Digest, now: int) -> None:
        timeout = dig.config.ack_timeout_ns
        for list_id, (sent, samples) in list(dig.inflight.items()):
            if now - sent >= timeout:
                del dig.inflight[list_id]
                dig.cache.difference_update(samples)

    # -------------------------------------------------------------------- packet-out

    def _packet_out(self, packet: Any) -> None:
        if self.cpu_port is None:
            raise _fail("FAILED_PRECONDITION", "the switch has no CPU port")
        header = self._out_header
        if header is None:
            if len(packet.metadata):
                raise _fail("INVALID_ARGUMENT", "unexpected metadata in PacketOut")
            self._inject(self.cpu_port, packet.payload)
            return
        given = {}
        for m in packet.metadata:
            given[m.metadata_id] = m.value
        known = {fid for fid, _, _, _ in header.fields}
        for fid in given:
            if fid not in known:
                raise _fail("INVALID_ARGUMENT", f"unknown metadata id {fid} in PacketOut")
        bits = 0
        for fid, name, width, shift in header.fields:
            if fid in given:
                bits |= decode(given[fid], width, f"packet_out metadata {name}") << shift
        self._inject(self.cpu_port, bits.to_bytes(header.nbytes, "big") + packet.payload)

    # ------------------------------------------------------------------------ reads

    def _read(self, entity: Any, out: Any) -> None:
        kind = entity.WhichOneof("entity")
        reader = {
            "table_entry": self._read_table_entries,
            "counter_entry": self._read_counters,
            "direct_counter_entry": self._read_direct_counters,
            "meter_entry": self._read_meters,
            "direct_meter_entry": self._read_direct_meters,
            "register_entry": self._read_registers,
            "packet_replication_engine_entry": self._read_pre,
            "digest_entry": self._read_digests,
            "action_profile_member": self._read_members,
            "action_profile_group": self._read_profile_groups,
        }.get(kind or "")
        if reader is None:
            raise _fail("UNIMPLEMENTED", f"reading {kind or 'an empty entity'} is not supported")
        reader(getattr(entity, kind), out)

    def _selected_entries(self, e: Any) -> Iterator[tuple[_Table, Entry]]:
        """The entries a TableEntry names: all tables for table id 0, all entries
        of the table without match fields, else the one entry with that match."""
        metas = list(self._tables.values()) if e.table_id == 0 else [self._table(e.table_id)]
        for tm in metas:
            if len(e.match):
                specs = self._matches(tm, e)
                priority = self._priority(tm, e.priority)
                if priority is not None:
                    priority = tm.const_in.get(priority, priority)
                entry = tm.table.find(specs, priority)
                if entry is not None:
                    yield tm, entry
                continue
            for entry in tm.table.entries:
                if e.priority and tm.const_out.get(entry.handle, entry.priority) != e.priority:
                    continue
                yield tm, entry

    def _read_table_entries(self, e: Any, out: Any) -> None:
        counters = e.HasField("counter_data")
        meters = e.HasField("meter_config")
        if e.is_default_action:
            metas = list(self._tables.values()) if e.table_id == 0 else [self._table(e.table_id)]
            for tm in metas:
                msg = out.add().table_entry
                msg.table_id = tm.id
                msg.is_default_action = True
                self._action_msg(tm.table.default_action, tm.table.default_args, msg.action)
            return
        for tm, entry in self._selected_entries(e):
            msg = out.add().table_entry
            self._entry_msg(tm, entry, msg)
            if counters and tm.counter_id:
                self._counter_msg(entry.packets, entry.bytes, msg.counter_data,
                                  self._direct_counter_units.get(tm.id, 0))
            if meters and tm.meter_id:
                self._meter_msg(entry.meter, msg)

    def _entry_msg(self, tm: _Table, entry: Entry, msg: Any) -> None:
        msg.table_id = tm.id
        matches = entry.matches
        for f in tm.order:
            spec = matches[f.pos]
            if spec is None:
                continue
            fm = msg.match.add(field_id=f.id)
            if isinstance(spec, Lpm):
                fm.lpm.value = encode(spec.value)
                fm.lpm.prefix_len = spec.prefix_len
            elif isinstance(spec, Ternary):
                fm.ternary.value = encode(spec.value)
                fm.ternary.mask = encode(spec.mask)
            elif isinstance(spec, RangeMatch):
                fm.range.low = encode(spec.low)
                fm.range.high = encode(spec.high)
            elif f.kind == "optional":
                fm.optional.value = encode(spec.value)
            else:
                fm.exact.value = encode(spec.value)
        if entry.ref is not None and tm.profile is not None:
            kind, value = tm.profile.describe_ref(entry.ref)
            if kind == "member":
                msg.action.action_profile_member_id = value
            elif kind == "group":
                msg.action.action_profile_group_id = value
            else:
                action_set = msg.action.action_profile_action_set
                for (engine_id, args), weight in value:
                    item = action_set.action_profile_actions.add(weight=weight)
                    self._action_msg(engine_id, args, item)
        else:
            self._action_msg(entry.action, entry.args, msg.action)
        if tm.needs_priority:
            msg.priority = tm.const_out.get(entry.handle, entry.priority)
        if tm.is_const:
            msg.is_const = True
        extra = self._entry_extra.get((tm.id, entry.handle))
        if extra is not None:
            msg.controller_metadata, msg.metadata = extra

    def _action_msg(self, engine_id: int, args: Sequence[int], table_action: Any) -> None:
        act = self._by_engine.get(engine_id)
        if act is None:
            return
        action = table_action.action
        action.action_id = act.id
        for pm in sorted(act.params.values(), key=lambda p: p.id):
            if pm.pos < len(args):
                action.params.add(param_id=pm.id, value=encode(args[pm.pos]))

    def _profile_items(self, profile_id: int, kind: str, ident: int
                       ) -> Iterator[tuple[ProfileAccess, int, Any]]:
        """(profile, id, state) of the members or groups a read names: every
        profile for id 0, every item for item id 0."""
        profiles = (list(self._profiles.values()) if profile_id == 0
                    else [self._profile(profile_id)])
        for profile in profiles:
            for item_id, state in sorted(getattr(profile, kind).items()):
                if not ident or item_id == ident:
                    yield profile, item_id, state

    def _read_members(self, e: Any, out: Any) -> None:
        for profile, member_id, state in self._profile_items(
                e.action_profile_id, "members", e.member_id):
            msg = out.add().action_profile_member
            msg.action_profile_id, msg.member_id = profile.id, member_id
            self._action_msg(*state.action, msg)

    def _read_profile_groups(self, e: Any, out: Any) -> None:
        for profile, group_id, state in self._profile_items(
                e.action_profile_id, "groups", e.group_id):
            msg = out.add().action_profile_group
            msg.action_profile_id, msg.group_id = profile.id, group_id
            msg.max_size = state.max_size
            for member_id, weight in sorted(state.members.items()):
                msg.members.add(member_id=member_id, weight=weight)

    @staticmethod
    def _counter_msg(packets: int, nbytes: int, data: Any, unit: int) -> None:
        """Counts as P4Info's unit says (BMv2 keeps both, reports per unit)."""
        if unit in (p4i.CounterSpec.PACKETS, p4i.CounterSpec.BOTH, 0):
            data.packet_count = packets
        if unit in (p4i.CounterSpec.BYTES, p4i.CounterSpec.BOTH, 0):
            data.byte_count = nbytes

    @staticmethod
    def _meter_msg(meter: Any, msg: Any) -> None:
        rates = meter.rates() if meter is not None else None
        if rates is not None:
            cfg = msg.meter_config if msg.DESCRIPTOR.name == "TableEntry" else msg.config
            cfg.cir, cfg.cburst, cfg.pir, cfg.pburst = rates

    def _read_counters(self, e: Any, out: Any) -> None:
        if e.counter_id == 0:
            exts = list(self._counters.values())
        else:
            ext = self._counters.get(e.counter_id)
            if ext is None:
                raise _fail("NOT_FOUND", f"unknown counter id {e.counter_id}")
            exts = [ext]
        for ext in exts:
            cells = ext.cells
            for i in self._cell_indices(ext, e):
                msg = out.add().counter_entry
                msg.counter_id = ext.id
                msg.index.index = i
                self._counter_msg(cells.packets[i], cells.bytes[i], msg.data, ext.unit)

    def _read_direct_counters(self, e: Any, out: Any) -> None:
        te = e.table_entry
        if te.table_id:
            tm = self._table(te.table_id)
            if not tm.counter_id:
                raise _fail("INVALID_ARGUMENT", f"table {tm.name} has no direct counter")
        for tm, entry in self._selected_entries(te):
            if not tm.counter_id:
                continue
            msg = out.add().direct_counter_entry
            self._entry_msg(tm, entry, msg.table_entry)
            self._counter_msg(entry.packets, entry.bytes, msg.data,
                              self._direct_counter_units.get(tm.id, 0))

    def _read_meters(self, e: Any, out: Any) -> None:
        if e.meter_id == 0:
            exts = list(self._meters.values())
        else:
            ext = self._meters.get(e.meter_id)
            if ext is None:
                raise _fail("NOT_FOUND", f"unknown meter id {e.meter_id}")
            exts = [ext]
        for ext in exts:
            for i in self._cell_indices(ext, e):
                msg = out.add().meter_entry
                msg.meter_id = ext.id
                msg.index.index = i
                self._meter_msg(ext.cells.meters[i], msg)

    def _read_direct_meters(self, e: Any, out: Any) -> None:
        te = e.table_entry
        if te.table_id:
            tm = self._table(te.table_id)
            if not tm.meter_id:
                raise _fail("INVALID_ARGUMENT", f"table {tm.name} has no direct meter")
        for tm, entry in self._selected_entries(te):
            if not tm.meter_id:
                continue
            msg = out.add().direct_meter_entry
            self._entry_msg(tm, entry, msg.table_entry)
            self._meter_msg(entry.meter, msg)

    def _read_registers(self, e: Any, out: Any) -> None:
        if e.register_id == 0:
            exts = list(self._registers.values())
        else:
            ext = self._registers.get(e.register_id)
            if ext is None:
                raise _fail("NOT_FOUND", f"unknown register id {e.register_id}")
            exts = [ext]
        for ext in exts:
            cells = ext.cells
            for i in self._cell_indices(ext, e):
                msg = out.add().register_entry
                msg.register_id = ext.id
                msg.index.index = i
                msg.data.bitstring = encode(cells.values[i])

    def _read_pre(self, e: Any, out: Any) -> None:
        kind = e.WhichOneof("type")
        if kind == "multicast_group_entry":
            gid = e.multicast_group_entry.multicast_group_id
            if gid and gid not in self._mc:
                raise _fail("NOT_FOUND", f"multicast group {gid} does not exist")
            for g in sorted(self._mc) if gid == 0 else [gid]:
                msg = out.add().packet_replication_engine_entry.multicast_group_entry
                msg.multicast_group_id = g
                for port, rid in self._mc[g]:
                    msg.replicas.add(egress_port=port, instance=rid)
        elif kind == "clone_session_entry":
            sid = e.clone_session_entry.session_id
            if sid and sid not in self._clones:
                raise _fail("NOT_FOUND", f"clone session {sid} does not exist")
            for s in sorted(self._clones) if sid == 0 else [sid]:
                msg = out.add().packet_replication_engine_entry.clone_session_entry
                msg.CopyFrom(self._clones[s])
        else:
            raise _fail("INVALID_ARGUMENT", "empty packet replication engine entry")

    def _read_digests(self, e: Any, out: Any) -> None:
        if e.digest_id == 0:
            digs = [d for d in self._digests.values() if d.config is not None]
        else:
            dig = self._digests.get(e.digest_id)
            if dig is None or dig.config is None:
                raise _fail("NOT_FOUND", f"digest {e.digest_id} is not configured")
            digs = [dig]
        for dig in digs:
            msg = out.add().digest_entry
            msg.digest_id = dig.id
            msg.config.CopyFrom(dig.config)


class Session:
    """One controller's StreamChannel to a service in this process.

    It offers what ``InProcessTransport`` calls (``write``, ``read``,
    ``stream``, ``subscribe``, ``get_pipeline_config``, ``capabilities``):
    unary calls go straight to the service, which identifies the sender by
    the election id in the request, as over gRPC; stream messages are this
    session's, and ``subscribe`` gets what the switch sends to it. A refused
    arbitration ends the stream (the error is raised, the controller has
    left); the session's next message opens a new stream, as a client
    reconnecting would. ``close`` ends the stream for good.
    """

    protos = _PB

    def __init__(self, service: RuntimeService) -> None:
        self.service = service
        self.controller = service.arbitration.open(self._deliver)
        self._subscribers: list[Callable[[Any], None]] = []
        self.closed = False

    def write(self, request: Any) -> Any:
        return self.service.write(request)

    def read(self, request: Any) -> Iterator[Any]:
        return self.service.read(request)

    def get_pipeline_config(self, request: Any = None) -> Any:
        return self.service.get_pipeline_config(request)

    def capabilities(self, request: Any = None) -> Any:
        return self.service.capabilities(request)

    def stream(self, request: Any) -> list[Any]:
        """Send one message on this stream; returns the replies it causes at once."""
        if self.closed:
            raise _fail("CANCELLED", "the session is closed")
        return self.service.stream_from(self.controller, request)

    def subscribe(self, callback: Callable[[Any], None]) -> Callable[[], None]:
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def close(self) -> None:
        """End the stream: the controller leaves (a primary leaving is announced)."""
        if not self.closed:
            self.closed = True
            self.service.arbitration.close(self.controller)
            self._subscribers.clear()

    def _deliver(self, message: Any) -> None:
        for callback in list(self._subscribers):
            callback(message)


def _number_const_entries(tm: _Table) -> None:
    """P4Runtime priorities of const entries: positive, larger wins, in the
    engine's match order (the first entry of the program gets the largest),
    as p4c numbers entries that carry no priority."""
    ranked = sorted(tm.table.entries, key=lambda e: (-e.priority, e.handle))
    for rank, entry in enumerate(ranked):
        number = len(ranked) - rank
        tm.const_out[entry.handle] = number
        tm.const_in[number] = entry.priority


def _rates(cfg: Any) -> tuple[int, int, int, int]:
    """A v1model (two-rate) meter configuration, checked as BMv2 checks it."""
    if min(cfg.cir, cfg.cburst, cfg.pir, cfg.pburst) < 0:
        raise _fail("INVALID_ARGUMENT", "meter rates and bursts must not be negative")
    if cfg.cir > cfg.pir:
        raise _fail("INVALID_ARGUMENT", f"meter CIR {cfg.cir} is above PIR {cfg.pir}")
    return cfg.cir, cfg.cburst, cfg.pir, cfg.pburst

