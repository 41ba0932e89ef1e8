"""P4Info from a ``ProgramSchema``, named, numbered and shaped as p4c writes it.

p4c's v1model back end (``control-plane/p4RuntimeSerializer.cpp`` and
``p4RuntimeSymbolTable.cpp``) is the reference: every object id is
``(P4Ids.Prefix << 24) | (jenkins_one_at_a_time(name) & 0xffffff)`` with
linear probing on collisions, every alias is the shortest dotted suffix that
is unique among all control-plane symbols, and the optional fields are set
exactly when p4c sets them, so ``to_text`` reproduces p4c's ``.p4info.txtpb``
files byte for byte. ``compare_p4info`` and ``score`` measure how close a
generated P4Info is to p4c's, object by object and by name.

The messages are P4Runtime's own (``p4.config.v1.P4Info``), built by
``p4runtime_protos`` from the descriptors the p4runtime package ships.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from google.protobuf import text_format

from common.errors import P4SemanticError
from dataplane.schema import (
    ActionInfo,
    ActionParamInfo,
    ActionProfileInfo,
    ControllerHeaderInfo,
    CounterInfo,
    DigestInfo,
    FieldInfo,
    MatchFieldInfo,
    MeterInfo,
    ProgramSchema,
    RegisterInfo,
    TableInfo,
    ValueSetInfo,
)
from p4proto import load_protos

# --------------------------------------------------------------------------- protobuf classes

@cache
def p4runtime_protos() -> SimpleNamespace:
    """The switch side's P4Runtime classes: one descriptor pool (``p4proto``)."""
    return load_protos()


p4info_pb2 = p4runtime_protos().p4info_pb2
P4Info = p4info_pb2.P4Info

# P4Ids.Prefix values of p4info.proto: the top byte of every object id.
PREFIX_ACTION = p4info_pb2.P4Ids.ACTION
PREFIX_TABLE = p4info_pb2.P4Ids.TABLE
PREFIX_VALUE_SET = p4info_pb2.P4Ids.VALUE_SET
PREFIX_CONTROLLER_HEADER = p4info_pb2.P4Ids.CONTROLLER_HEADER
PREFIX_ACTION_PROFILE = p4info_pb2.P4Ids.ACTION_PROFILE
PREFIX_COUNTER = p4info_pb2.P4Ids.COUNTER
PREFIX_DIRECT_COUNTER = p4info_pb2.P4Ids.DIRECT_COUNTER
PREFIX_METER = p4info_pb2.P4Ids.METER
PREFIX_DIRECT_METER = p4info_pb2.P4Ids.DIRECT_METER
PREFIX_REGISTER = p4info_pb2.P4Ids.REGISTER
PREFIX_DIGEST = p4info_pb2.P4Ids.DIGEST

# The two comment lines p4c writes before the message (writeTextTo).
TEXT_HEADER = "# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n"

_MATCH_TYPES = {
    "exact": p4info_pb2.MatchField.EXACT,
    "lpm": p4info_pb2.MatchField.LPM,
    "ternary": p4info_pb2.MatchField.TERNARY,
    "range": p4info_pb2.MatchField.RANGE,
    "optional": p4info_pb2.MatchField.OPTIONAL,
}
_SCOPES = {
    "TABLE_AND_DEFAULT": p4info_pb2.ActionRef.TABLE_AND_DEFAULT,
    "TABLE_ONLY": p4info_pb2.ActionRef.TABLE_ONLY,
    "DEFAULT_ONLY": p4info_pb2.ActionRef.DEFAULT_ONLY,
}
_COUNTER_UNITS = {
    "PACKETS": p4info_pb2.CounterSpec.PACKETS,
    "BYTES": p4info_pb2.CounterSpec.BYTES,
    "BOTH": p4info_pb2.CounterSpec.BOTH,
    "PACKETS_AND_BYTES": p4info_pb2.CounterSpec.BOTH,
}
_METER_UNITS = {
    "PACKETS": p4info_pb2.MeterSpec.PACKETS,
    "BYTES": p4info_pb2.MeterSpec.BYTES,
}

_ANNOTATION_NAME = re.compile(r"@\s*([A-Za-z_][A-Za-z0-9_]*)")
_STRING_ARG = re.compile(r'\(\s*"((?:[^"\\]|\\.)*)"\s*\)')
_INT_ARG = re.compile(r"\(\s*(0[xX][0-9a-fA-F]+|\d+)\s*\)")
# Represented elsewhere in P4Info, so p4c never copies them (Helpers::addAnnotations).
_NOT_COPIED = frozenset({"name", "id", "brief", "description"})


# --------------------------------------------------------------------------- ids and aliases


def jenkins_hash(name: str) -> int:
    """Jenkins one-at-a-time hash of the UTF-8 bytes of ``name``, as p4c hashes names."""
    h = 0
    for byte in name.encode():
        h = (h + byte) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    return (h + (h << 15)) & 0xFFFFFFFF


def shortest_unique_suffixes(names: Iterable[str]) -> dict[str, str]:
    """Alias of each name: its fewest trailing dotted components that no other name ends with.

    p4c counts, for every suffix, how many distinct symbols (of any kind) end
    with it, and stops at the first suffix counted once; a name that is itself
    a suffix of another keeps all its components.
    """
    unique = set(names)
    counts: Counter[tuple[str, ...]] = Counter()
    parts = {name: tuple(name.split(".")) for name in unique}
    for comps in parts.values():
        for k in range(1, len(comps) + 1):
            counts[comps[-k:]] += 1
    aliases = {}
    for name, comps in parts.items():
        k = 1
        while k < len(comps) and counts[comps[-k:]] > 1:
            k += 1
        aliases[name] = ".".join(comps[-k:])
    return aliases


class SymbolTable:
    """Control-plane symbols of one program, their ids and aliases (p4c's P4RuntimeSymbolTable).

    Symbols are grouped by id prefix; ``@id`` values are fixed first, then the
    remaining names of each kind get hashed ids in ascending prefix order and,
    within a kind, in byte order of their names, probing the hash upwards on a
    collision, so the result does not depend on declaration order.
    """

    __slots__ = ("_explicit", "_ids", "_kinds", "_aliases")

    def __init__(self) -> None:
        self._kinds: dict[int, dict[str, None]] = {}  # names in insertion order
        self._explicit: dict[tuple[int, str], int] = {}
        self._ids: dict[tuple[int, str], int] = {}
        self._aliases: dict[str, str] = {}

    def add(self, prefix: int, name: str, explicit_id: int | None = None) -> None:
        names = self._kinds.setdefault(prefix, {})
        if name in names:
            return  # p4c tolerates duplicates (actions shared by controls)
        names[name] = None
        if explicit_id:
            self._explicit[(prefix, name)] = _prefixed_id(prefix, explicit_id, name)

    def compute(self) -> None:
        assigned: set[int] = set()
        for key, value in self._explicit.items():
            if value in assigned:
                raise P4SemanticError(f"@id {value} is assigned to multiple declarations")
            assigned.add(value)
            self._ids[key] = value
        for prefix in sorted(self._kinds):
            pending = [n for n in self._kinds[prefix] if (prefix, n) not in self._explicit]
            for name in sorted(pending, key=str.encode):
                start = value = jenkins_hash(name)
                ident = (prefix << 24) | (value & 0xFFFFFF)
                while ident in assigned:
                    value = (value + 1) & 0xFFFFFFFF
                    if value == start:
                        raise P4SemanticError(f"no P4Runtime id left for {name}")
                    ident = (prefix << 24) | (value & 0xFFFFFF)
                assigned.add(ident)
                self._ids[(prefix, name)] = ident
        self._aliases = shortest_unique_suffixes(n for ns in self._kinds.values() for n in ns)

    def id(self, prefix: int, name: str) -> int:
        return self._ids[(prefix, name)]

    def alias(self, name: str) -> str:
        return self._aliases[name]

    def items(self) -> Iterable[tuple[int, str, int]]:
        """(prefix, name, id) of every symbol."""
        return ((p, n, i) for (p, n), i in self._ids.items())


def _prefixed_id(prefix: int, value: int, name: str) -> int:
    """An ``@id`` value with the kind's prefix in its top byte (p4c's externalId)."""
    if value >> 32 or value < 0:
        raise P4SemanticError(f"{name}: @id should be an unsigned 32-bit integer")
    top = value >> 24
    if top and top != prefix:
        raise P4SemanticError(f"{name}: @id has the wrong 8-bit prefix")
    return value | (prefix << 24)


# --------------------------------------------------------------------------- annotations


def _annotation_name(text: str) -> str:
    m = _ANNOTATION_NAME.match(text.strip())
    return m.group(1) if m else text.strip().lstrip("@")


def _normalized(annotations: Iterable[str]) -> list[str]:
    return [a.strip() if a.strip().startswith("@") else "@" + a.strip() for a in annotations]


def _id_annotation(annotations: Iterable[str]) -> int | None:
    for a in annotations:
        if _annotation_name(a) == "id":
            m = _INT_ARG.search(a)
            if m:
                return int(m.group(1), 0)
    return None


def _string_argument(annotations: Iterable[str], name: str) -> str | None:
    for a in annotations:
        if _annotation_name(a) == name:
            m = _STRING_ARG.search(a)
            if m:
                return bytes(m.group(1), "utf-8").decode("unicode_escape")
    return None


def _annotation_argument(annotations: Iterable[str], name: str) -> str | None:
    """The integer argument of ``@name(N)``, as written."""
    for a in annotations:
        if _annotation_name(a) == name:
            m = _INT_ARG.search(a)
            if m:
                return m.group(1)
    return None


def _has(annotations: Iterable[str], name: str) -> bool:
    return any(_annotation_name(a) == name for a in annotations)


def _copy_annotations(message, annotations: Sequence[str], skip: frozenset[str] = frozenset()):
    """Copy the annotations p4c keeps into ``message``; @brief and @description become ``doc``."""
    for a in _normalized(annotations):
        name = _annotation_name(a)
        if name in _NOT_COPIED or name in skip:
            continue
        message.annotations.append(a)
    if "doc" not in message.DESCRIPTOR.fields_by_name:
        return
    brief = _string_argument(annotations, "brief")
    description = _string_argument(annotations, "description")
    if brief is not None:
        message.doc.brief = brief
    if description is not None:
        message.doc.description = description


def _explicit_id(obj) -> int | None:
    return obj.id or _id_annotation(obj.annotations)


def _field_ids(items: Sequence[MatchFieldInfo] | Sequence[ActionParamInfo]) -> list[int]:
    """Ids of match fields or action parameters (p4c's FieldIdAllocator).

    Explicit ids are fixed first; the rest count up from 1 by position,
    skipping taken values.
    """
    explicit = [_explicit_id(i) for i in items]
    taken = {e for e in explicit if e}
    ids = []
    index = 1
    for e in explicit:
        if e:
            ids.append(e)
            index += 1
            continue
        while index in taken:
            index += 1
        ids.append(index)
        taken.add(index)
    return ids


# --------------------------------------------------------------------------- building


@dataclass(slots=True)
class _Builder:
    schema: ProgramSchema
    symbols: SymbolTable = field(default_factory=SymbolTable)
    actions: dict[str, ActionInfo] = field(default_factory=dict)

    def collect(self) -> None:
        s = self.schema
        add = self.symbols.add
        for t in s.tables:
            add(PREFIX_TABLE, t.name, _explicit_id(t))
        for a in s.actions:
            add(PREFIX_ACTION, a.name, _explicit_id(a))
            self.actions.setdefault(a.name, a)
        for t in s.tables:
            for ref in t.action_refs:
                add(PREFIX_ACTION, ref.action)
            if t.default_action:
                add(PREFIX_ACTION, t.default_action)
            if t.implementation:
                add(PREFIX_ACTION_PROFILE, t.implementation)
        for prefix, items in (
            (PREFIX_COUNTER, s.counters),
            (PREFIX_DIRECT_COUNTER, s.direct_counters),
            (PREFIX_METER, s.meters),
            (PREFIX_DIRECT_METER, s.direct_meters),
            (PREFIX_REGISTER, s.registers),
            (PREFIX_DIGEST, s.digests),
            (PREFIX_CONTROLLER_HEADER, s.controller_headers),
            (PREFIX_VALUE_SET, s.value_sets),
            (PREFIX_ACTION_PROFILE, s.action_profiles),
        ):
            for item in items:
                add(prefix, item.name, _explicit_id(item))
        for t in s.tables:
            if t.direct_counter:
                add(PREFIX_DIRECT_COUNTER, t.direct_counter)
            if t.direct_meter:
                add(PREFIX_DIRECT_METER, t.direct_meter)
        self.symbols.compute()

    def preamble(self, message, prefix: int, name: str, annotations: Sequence[str]) -> None:
        pre = message.preamble
        pre.id = self.symbols.id(prefix, name)
        pre.name = name
        pre.alias = self.symbols.alias(name)
        _copy_annotations(pre, annotations)

    def table(self, out: P4Info, t: TableInfo) -> None:
        if _has(t.annotations, "hidden"):
            return
        msg = out.tables.add()
        self.preamble(msg, PREFIX_TABLE, t.name, t.annotations)
        for f, fid in zip(t.match_fields, _field_ids(t.match_fields), strict=True):
            if f.match_type == "selector":
                continue  # p4c leaves selector keys to the action profile
            mf = msg.match_fields.add(id=fid, name=f.name, bitwidth=f.bitwidth)
            _copy_annotations(mf, f.annotations)
            if f.match_type in _MATCH_TYPES:
                mf.match_type = _MATCH_TYPES[f.match_type]
            else:
                mf.other_match_type = f.match_type
        for ref in t.action_refs:
            ar = msg.action_refs.add(id=self.symbols.id(PREFIX_ACTION, ref.action))
            _copy_annotations(ar, ref.annotations)
            ar.scope = _scope(ref.scope, ref.annotations)
        if t.default_action:
            action_id = self.symbols.id(PREFIX_ACTION, t.default_action)
            if t.const_default_action:
                msg.const_default_action_id = action_id
            initial = msg.initial_default_action
            initial.action_id = action_id
            self.default_arguments(initial, t)
        if t.implementation:
            msg.implementation_id = self.symbols.id(PREFIX_ACTION_PROFILE, t.implementation)
        if t.direct_counter:
            msg.direct_resource_ids.append(self.symbols.id(PREFIX_DIRECT_COUNTER, t.direct_counter))
        if t.direct_meter:
            msg.direct_resource_ids.append(self.symbols.id(PREFIX_DIRECT_METER, t.direct_meter))
        msg.size = t.size
        if t.idle_timeout:
            msg.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
        msg.is_const_table = t.is_const_table
        msg.has_initial_entries = t.has_initial_entries

    def default_arguments(self, initial, t: TableInfo) -> None:
        """Arguments as p4c encodes them: big-endian, padded to the parameter's whole bytes.

        p4c numbers them by position unless the parameter carries an ``@id``.
        """
        action = self.actions.get(t.default_action)
        params = action.params if action else []
        for i, value in enumerate(t.default_args):
            param = params[i] if i < len(params) else None
            width = param.bitwidth if param else max(value.bit_length(), 1)
            arg = initial.arguments.add(param_id=(param and _explicit_id(param)) or i + 1)
            arg.value = (value & ((1 << width) - 1)).to_bytes((width + 7) // 8, "big")

    def action(self, out: P4Info, a: ActionInfo) -> None:
        if _has(a.annotations, "hidden"):
            return
        msg = out.actions.add()
        self.preamble(msg, PREFIX_ACTION, a.name, a.annotations)
        for p, pid in zip(a.params, _field_ids(a.params), strict=True):
            param = msg.params.add(id=pid, name=p.name)
            _copy_annotations(param, p.annotations)
            param.bitwidth = p.bitwidth

    def counter(self, out: P4Info, c: CounterInfo, direct: bool) -> None:
        unit = _COUNTER_UNITS.get(c.unit.upper(), p4info_pb2.CounterSpec.UNSPECIFIED)
        if direct:
            self._resource(out.direct_counters, PREFIX_DIRECT_COUNTER, c, unit)
        else:
            self._resource(out.counters, PREFIX_COUNTER, c, unit)

    def meter(self, out: P4Info, m: MeterInfo, direct: bool) -> None:
        unit = _METER_UNITS.get(m.unit.upper(), p4info_pb2.MeterSpec.UNSPECIFIED)
        if direct:
            self._resource(out.direct_meters, PREFIX_DIRECT_METER, m, unit)
        else:
            self._resource(out.meters, PREFIX_METER, m, unit)

    def _resource(self, group: Any, prefix: int, info: CounterInfo | MeterInfo,
                  unit: int) -> None:
        """A counter or meter: direct ones name their table, indexed ones
        have a size."""
        msg = group.add()
        self.preamble(msg, prefix, info.name, info.annotations)
        msg.spec.unit = unit
        if prefix in (PREFIX_DIRECT_COUNTER, PREFIX_DIRECT_METER):
            if info.table:
                msg.direct_table_id = self.symbols.id(PREFIX_TABLE, info.table)
        else:
            msg.size = info.size

    def register(self, out: P4Info, r: RegisterInfo) -> None:
        msg = out.registers.add()
        self.preamble(msg, PREFIX_REGISTER, r.name, r.annotations)
        bits = msg.type_spec.bitstring
        (bits.int if r.signed else bits.bit).bitwidth = r.bitwidth
        msg.size = r.size

    def controller_header(self, out: P4Info, h: ControllerHeaderInfo) -> None:
        """``controller_packet_metadata``: named after the annotation's string, id from the type."""
        if _has(h.annotations, "hidden"):
            return
        msg = out.controller_packet_metadata.add()
        label = _string_argument(h.annotations, "controller_header") or h.name
        pre = msg.preamble
        pre.id = self.symbols.id(PREFIX_CONTROLLER_HEADER, h.name)
        pre.name = label
        pre.alias = label
        _copy_annotations(pre, h.annotations)
        for i, f in enumerate(h.fields, start=1):
            msg.metadata.add(id=i, name=f.name, bitwidth=f.bitwidth)

    def value_set(self, out: P4Info, v: ValueSetInfo) -> None:
        msg = out.value_sets.add()
        self.preamble(msg, PREFIX_VALUE_SET, v.name, v.annotations)
        for f, fid in zip(v.match_fields, _field_ids(v.match_fields), strict=True):
            mf = msg.match.add(id=fid, bitwidth=f.bitwidth)
            if f.name:
                mf.name = f.name
            skip = frozenset({"match"})
            _copy_annotations(mf, f.annotations, skip)
            mf.match_type = _MATCH_TYPES.get(f.match_type, p4info_pb2.MatchField.EXACT)
        msg.size = v.size

    def action_profile(self, out: P4Info, ap: ActionProfileInfo) -> None:
        """As p4c's v1model handler writes it: the tables using it, whether it
        has a selector, its size; ``@max_group_size``,
        ``@selector_size_semantics`` and ``@max_member_weight`` become fields
        (of a selector only) instead of annotations."""
        msg = out.action_profiles.add()
        own = ("max_group_size", "selector_size_semantics", "max_member_weight")
        kept = [a for a in ap.annotations if _annotation_name(a) not in own]
        self.preamble(msg, PREFIX_ACTION_PROFILE, ap.name, kept)
        for table in ap.tables:
            msg.table_ids.append(self.symbols.id(PREFIX_TABLE, table))
        msg.with_selector = ap.algorithm is not None
        msg.size = ap.size
        if ap.algorithm is None:
            return
        group = _annotation_argument(ap.annotations, "max_group_size")
        if group is not None:
            msg.max_group_size = int(group, 0)
        semantics = _string_argument(ap.annotations, "selector_size_semantics")
        if semantics is not None and semantics.upper() == "SUM_OF_MEMBERS":
            msg.sum_of_members.SetInParent()
            weight = _annotation_argument(ap.annotations, "max_member_weight")
            if weight is not None:
                msg.sum_of_members.max_member_weight = int(weight, 0)
        elif semantics is not None and semantics.upper() == "SUM_OF_WEIGHTS":
            msg.sum_of_weights.SetInParent()

    def digest(self, out: P4Info, d: DigestInfo) -> None:
        """One digest per struct type; p4c attaches no annotations to it (getDigestCall)."""
        msg = out.digests.add()
        pre = msg.preamble
        pre.id = self.symbols.id(PREFIX_DIGEST, d.name)
        pre.name = d.name
        pre.alias = self.symbols.alias(d.name)
        msg.type_spec.struct.name = d.name
        _struct_type(out, d.name, d.fields)


def _struct_type(out: P4Info, name: str, fields: Sequence[FieldInfo]) -> None:
    structs = out.type_info.structs
    if name in structs:
        return
    spec = structs[name]
    for f in fields:
        member = spec.members.add(name=f.name)
        member.type_spec.bitstring.bit.bitwidth = f.bitwidth


def _scope(scope: str, annotations: Sequence[str]) -> int:
    """``@tableonly``/``@defaultonly`` on the reference decide, as in p4c; else the schema."""
    if _has(annotations, "tableonly"):
        return p4info_pb2.ActionRef.TABLE_ONLY
    if _has(annotations, "defaultonly"):
        return p4info_pb2.ActionRef.DEFAULT_ONLY
    return _SCOPES.get(scope, p4info_pb2.ActionRef.TABLE_AND_DEFAULT)


def _wants_type_info(schema: ProgramSchema) -> bool:
    """p4c touches ``type_info`` for any table, action parameter, extern or digest."""
    return bool(
        schema.tables
        or any(a.params for a in schema.actions)
        or schema.counters
        or schema.direct_counters
        or schema.meters
        or schema.direct_meters
        or schema.registers
        or schema.digests
        or schema.controller_headers
        or any(t.implementation for t in schema.tables)
    )


def build_p4info(schema: ProgramSchema, *, extern_calls: bool | None = None) -> P4Info:
    """The P4Info p4c would write for the program ``schema`` describes.

    Objects keep the schema's order. ``extern_calls`` says whether a control
    calls an extern function (``hash``, ``verify_checksum``...), which makes
    p4c write an empty ``type_info``; by default it is read from the schema's
    ``extern_calls`` attribute when present.
    """
    builder = _Builder(schema)
    builder.collect()
    out = P4Info()
    out.pkg_info.arch = schema.arch
    for t in schema.tables:
        builder.table(out, t)
    seen: set[str] = set()
    for a in schema.actions:
        if a.name not in seen:
            seen.add(a.name)
            builder.action(out, a)
    for c in schema.counters:
        builder.counter(out, c, direct=False)
    for c in schema.direct_counters:
        builder.counter(out, c, direct=True)
    for m in schema.meters:
        builder.meter(out, m, direct=False)
    for m in schema.direct_meters:
        builder.meter(out, m, direct=True)
    for r in schema.registers:
        builder.register(out, r)
    digested: set[str] = set()
    for d in schema.digests:
        if d.name not in digested:
            digested.add(d.name)
            builder.digest(out, d)
    for h in schema.controller_headers:
        builder.controller_header(out, h)
    for v in schema.value_sets:
        builder.value_set(out, v)
    for ap in schema.action_profiles:
        builder.action_profile(out, ap)
    if extern_calls is None:
        extern_calls = bool(getattr(schema, "extern_calls", False))
    if extern_calls or _wants_type_info(schema):
        out.type_info.SetInParent()
    return out


def assign_ids(schema: ProgramSchema) -> SymbolTable:
    """The program's symbol table; also writes each object's P4Runtime id into the schema."""
    builder = _Builder(schema)
    builder.collect()
    table = builder.symbols
    s = schema
    for prefix, items in (
        (PREFIX_TABLE, s.tables),
        (PREFIX_ACTION, s.actions),
        (PREFIX_COUNTER, s.counters),
        (PREFIX_DIRECT_COUNTER, s.direct_counters),
        (PREFIX_METER, s.meters),
        (PREFIX_DIRECT_METER, s.direct_meters),
        (PREFIX_REGISTER, s.registers),
        (PREFIX_DIGEST, s.digests),
        (PREFIX_CONTROLLER_HEADER, s.controller_headers),
        (PREFIX_VALUE_SET, s.value_sets),
        (PREFIX_ACTION_PROFILE, s.action_profiles),
    ):
        for item in items:
            item.id = table.id(prefix, item.name)
    for t in s.tables:
        for f, fid in zip(t.match_fields, _field_ids(t.match_fields), strict=True):
            f.id = fid
    for a in s.actions:
        for p, pid in zip(a.params, _field_ids(a.params), strict=True):
            p.id = pid
    return table


# --------------------------------------------------------------------------- text format


def to_text(p4info: P4Info) -> str:
    """Protobuf text format with p4c's two header comments, as in its ``.p4info.txtpb`` files."""
    return TEXT_HEADER + text_format.MessageToString(p4info)


def from_text(text: str) -> P4Info:
    return text_format.Parse(text, P4Info())


def load_text(path: str | Path) -> P4Info:
    """A P4Info from a text-format file such as p4c's ``--p4runtime-files x.p4info.txtpb``."""
    return from_text(Path(path).read_text())


# --------------------------------------------------------------------------- comparison

_ABSENT = object()


def _unit(spec, enum) -> str:
    return enum.Name(spec.unit)


def _bits(type_spec) -> str:
    kind = type_spec.WhichOneof("type_spec")
    if kind == "bitstring":
        b = type_spec.bitstring
        which = b.WhichOneof("type_spec")
        if which == "bit":
            return f"bit<{b.bit.bitwidth}>"
        if which == "int":
            return f"int<{b.int.bitwidth}>"
        if which == "varbit":
            return f"varbit<{b.varbit.max_bitwidth}>"
    if kind == "struct":
        return f"struct {type_spec.struct.name}"
    return kind or "?"


def _match_type(mf) -> str:
    if mf.WhichOneof("match") == "other_match_type":
        return mf.other_match_type
    return p4info_pb2.MatchField.MatchType.Name(mf.match_type).lower()


def _facts(p4info: P4Info, ids: bool) -> dict[tuple[str, ...], object]:
    """Every comparable fact of ``p4info``, keyed by the object (and part) it belongs to.

    A key ``(kind, name)`` stands for an object's existence; longer keys hold
    its parts, named rather than numbered so that two P4Infos compare even
    when their ids differ.
    """
    facts: dict[tuple[str, ...], object] = {("pkg_info", "arch"): p4info.pkg_info.arch}
    action_names = {a.preamble.id: a.preamble.name for a in p4info.actions}
    table_names = {t.preamble.id: t.preamble.name for t in p4info.tables}
    profile_names = {ap.preamble.id: ap.preamble.name for ap in p4info.action_profiles}

    def obj(kind: str, msg) -> tuple[str, ...]:
        key = (kind, msg.preamble.name)
        facts[key] = True
        if ids:
            facts[(*key, "id")] = msg.preamble.id
            facts[(*key, "alias")] = msg.preamble.alias
        return key

    for t in p4info.tables:
        key = obj("table", t)
        for mf in t.match_fields:
            facts[(*key, "match field", mf.name)] = (mf.bitwidth, _match_type(mf))
        for ar in t.action_refs:
            name = action_names.get(ar.id, f"#{ar.id}")
            facts[(*key, "action", name)] = p4info_pb2.ActionRef.Scope.Name(ar.scope)
        default = action_names.get(t.initial_default_action.action_id, "")
        args = tuple(a.value.hex() for a in t.initial_default_action.arguments)
        facts[(*key, "default action")] = (default, args, bool(t.const_default_action_id))
        facts[(*key, "size")] = t.size
        if t.implementation_id:
            facts[(*key, "implementation")] = profile_names.get(
                t.implementation_id, f"#{t.implementation_id}")
    for a in p4info.actions:
        key = obj("action", a)
        for p in a.params:
            facts[(*key, "param", p.name)] = p.bitwidth
    for kind, items, size in (
        ("counter", p4info.counters, True),
        ("direct counter", p4info.direct_counters, False),
    ):
        for c in items:
            key = obj(kind, c)
            facts[(*key, "unit")] = _unit(c.spec, p4info_pb2.CounterSpec.Unit)
            if size:
                facts[(*key, "size")] = c.size
            else:
                facts[(*key, "table")] = table_names.get(c.direct_table_id, "")
    for kind, items, size in (
        ("meter", p4info.meters, True),
        ("direct meter", p4info.direct_meters, False),
    ):
        for m in items:
            key = obj(kind, m)
            facts[(*key, "unit")] = _unit(m.spec, p4info_pb2.MeterSpec.Unit)
            if size:
                facts[(*key, "size")] = m.size
            else:
                facts[(*key, "table")] = table_names.get(m.direct_table_id, "")
    for r in p4info.registers:
        key = obj("register", r)
        facts[(*key, "type")] = _bits(r.type_spec)
        facts[(*key, "size")] = r.size
    for d in p4info.digests:
        key = obj("digest", d)
        facts[(*key, "type")] = _bits(d.type_spec)
        struct = p4info.type_info.structs.get(d.type_spec.struct.name)
        for m in struct.members if struct is not None else ():
            facts[(*key, "field", m.name)] = _bits(m.type_spec)
    for h in p4info.controller_packet_metadata:
        key = obj("controller header", h)
        for m in h.metadata:
            facts[(*key, "field", m.name)] = m.bitwidth
    for v in p4info.value_sets:
        key = obj("value set", v)
        facts[(*key, "size")] = v.size
        for mf in v.match:
            facts[(*key, "match field", mf.name or f"#{mf.id}")] = (mf.bitwidth, _match_type(mf))
    for ap in p4info.action_profiles:
        key = obj("action profile", ap)
        facts[(*key, "size")] = (ap.size, ap.with_selector)
        facts[(*key, "tables")] = tuple(sorted(table_names.get(t, f"#{t}") for t in ap.table_ids))
        facts[(*key, "group size")] = (ap.max_group_size,
                                       ap.WhichOneof("selector_size_semantics") or "",
                                       ap.sum_of_members.max_member_weight)
    return facts


def _describe(key: tuple[str, ...]) -> str:
    head = f"{key[0]} {key[1]}"
    rest = key[2:]
    return head if not rest else f"{head}: " + " ".join(rest)


def _fmt(value: object) -> str:
    if isinstance(value, tuple):
        return ", ".join(_fmt(v) for v in value) or "()"
    return str(value)


def _diff(ours: P4Info, theirs: P4Info, ids: bool) -> tuple[list[str], int, int]:
    mine, ref = _facts(ours, ids), _facts(theirs, ids)
    lines: list[str] = []
    matching = 0
    keys = list(ref) + [k for k in mine if k not in ref]
    for key in keys:
        a, b = mine.get(key, _ABSENT), ref.get(key, _ABSENT)
        if a == b:
            matching += 1
            continue
        parent = key[:2]
        if len(key) > 2 and (parent not in mine or parent not in ref):
            continue  # reported once, with its object
        if a is _ABSENT:
            detail = "" if len(key) == 2 else f" (p4c: {_fmt(b)})"
            lines.append(f"{_describe(key)}: missing{detail}")
        elif b is _ABSENT:
            detail = "" if len(key) == 2 else f" (ours: {_fmt(a)})"
            lines.append(f"{_describe(key)}: not in p4c's P4Info{detail}")
        else:
            lines.append(f"{_describe(key)}: ours {_fmt(a)}, p4c {_fmt(b)}")
    return lines, matching, len(keys)


def compare_p4info(ours: P4Info, theirs: P4Info, *, ids: bool = False) -> list[str]:
    """Differences between our P4Info and p4c's, one readable line each.

    Objects and their parts (match fields, action references and scopes,
    default actions, parameters, sizes, units, widths, digest fields) are
    matched by name; with ``ids`` each object's id and alias must agree too.
    """
    return _diff(ours, theirs, ids)[0]


def score(ours: P4Info, theirs: P4Info, *, ids: bool = False) -> tuple[int, int]:
    """(facts that agree, facts in either P4Info), over the facts ``compare_p4info`` checks."""
    _, matching, total = _diff(ours, theirs, ids)
    return matching, total
