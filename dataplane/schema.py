"""What a compiled program exposes to the control plane.

The compile pipeline (``dataplane.compiler.pipeline``) fills one
``ProgramSchema`` per program; the runtime builds its state from it,
``dataplane.compiler.p4info`` turns it into a P4Info message and the
P4Runtime service (``dataplane.control``) reads it, so everything a later
stage needs from the source must be recorded here: no later stage parses
the source again. Names are the fully qualified control-plane names p4c
would give (``ingress.t``, ``NoAction``), already adjusted for ``@name``
annotations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MATCH_KINDS = ("exact", "lpm", "ternary", "range", "optional", "selector")


@dataclass(slots=True)
class MatchFieldInfo:
    name: str
    bitwidth: int
    match_type: str  # one of MATCH_KINDS
    id: int = 0  # 1-based position, as P4Info numbers match fields
    annotations: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ActionParamInfo:
    name: str
    bitwidth: int
    id: int = 0  # 1-based position
    annotations: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ActionInfo:
    name: str
    params: list[ActionParamInfo]
    annotations: list[str] = field(default_factory=list)
    id: int = 0


@dataclass(slots=True)
class ActionRefInfo:
    """An action a table may use; ``scope`` is ``TABLE_AND_DEFAULT``,
    ``TABLE_ONLY`` (``@tableonly``) or ``DEFAULT_ONLY`` (``@defaultonly``)."""

    action: str
    scope: str = "TABLE_AND_DEFAULT"
    annotations: list[str] = field(default_factory=list)


@dataclass(slots=True)
class TableInfo:
    name: str
    match_fields: list[MatchFieldInfo]
    action_refs: list[ActionRefInfo]
    default_action: str  # action name
    default_args: list[int] = field(default_factory=list)
    const_default_action: bool = False
    # True when the program declares the default action (P4Info's
    # initial_default_action is written only then... p4c always writes it).
    is_const_table: bool = False  # ``const entries``
    has_initial_entries: bool = False
    size: int = 1024
    direct_counter: str | None = None
    direct_meter: str | None = None
    implementation: str | None = None
    idle_timeout: bool = False
    annotations: list[str] = field(default_factory=list)
    id: int = 0


@dataclass(slots=True)
class CounterInfo:
    """``counter`` or ``direct_counter``; ``unit`` is ``PACKETS``,
    ``BYTES`` or ``BOTH``; ``table`` is set for direct counters."""

    name: str
    unit: str
    size: int = 0
    table: str | None = None
    annotations: list[str] = field(default_factory=list)
    id: int = 0


@dataclass(slots=True)
class MeterInfo:
    """``meter`` or ``direct_meter``; ``unit`` is ``PACKETS`` or ``BYTES``."""

    name: str
    unit: str
    size: int = 0
    table: str | None = None
    annotations: list[str] = field(default_factory=list)
    id: int = 0


@dataclass(slots=True)
class ActionProfileInfo:
    """``action_profile`` or ``action_selector`` (``algorithm`` set: the
    selector's ``HashAlgorithm`` member); ``tables`` use it as their
    ``implementation``, in the order they were compiled."""

    name: str
    size: int
    algorithm: str | None = None
    output_width: int = 0
    tables: list[str] = field(default_factory=list)
    annotations: list[str] = field(default_factory=list)
    id: int = 0
    # The selector key expressions, as written; BMv2 keeps one per selector.
    selector_input: list[str] | None = None


@dataclass(slots=True)
class RegisterInfo:
    name: str
    bitwidth: int
    size: int
    signed: bool = False
    annotations: list[str] = field(default_factory=list)
    id: int = 0


@dataclass(slots=True)
class FieldInfo:
    name: str
    bitwidth: int


@dataclass(slots=True)
class DigestInfo:
    """A ``digest<T>`` call site; ``name`` is the struct type's name."""

    name: str
    fields: list[FieldInfo]
    annotations: list[str] = field(default_factory=list)
    id: int = 0


@dataclass(slots=True)
class ControllerHeaderInfo:
    """A header annotated ``@controller_header("packet_in"|"packet_out")``;
    ``fields`` in wire order with resolved widths (packet I/O packs and
    unpacks the header from them)."""

    name: str
    fields: list[FieldInfo]
    annotations: list[str] = field(default_factory=list)
    id: int = 0


@dataclass(slots=True)
class ValueSetInfo:
    name: str
    match_fields: list[MatchFieldInfo]
    size: int
    annotations: list[str] = field(default_factory=list)
    id: int = 0


@dataclass(slots=True)
class ProgramSchema:
    tables: list[TableInfo] = field(default_factory=list)
    actions: list[ActionInfo] = field(default_factory=list)
    counters: list[CounterInfo] = field(default_factory=list)
    direct_counters: list[CounterInfo] = field(default_factory=list)
    meters: list[MeterInfo] = field(default_factory=list)
    direct_meters: list[MeterInfo] = field(default_factory=list)
    registers: list[RegisterInfo] = field(default_factory=list)
    digests: list[DigestInfo] = field(default_factory=list)
    controller_headers: list[ControllerHeaderInfo] = field(default_factory=list)
    value_sets: list[ValueSetInfo] = field(default_factory=list)
    action_profiles: list[ActionProfileInfo] = field(default_factory=list)
    arch: str = "v1model"
