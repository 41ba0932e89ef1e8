"""Table entries that make ``p4src/pint.p4`` run an execution plan.

The plan, the path coding and the value codec live in this package; the
switches only see constants: salts, 32-bit thresholds, query-set ranges,
bit offsets and widths, the levels of a value codec. ``pint_writes`` turns
them into a list of plain writes (so tests can render the same writes as
STF lines), and ``configure_switch`` sends them through a
``controller.p4rt`` client. The program has one path-tracing slot and one
per-packet-maximum slot; a plan with other queries is refused in one line.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from common.errors import InvalidValueError
from sinks.pint.engine import Aggregation, ExecutionPlan
from sinks.pint.hashing import TWO32, GlobalHashes
from sinks.pint.pathtrace import MAX_HOPS, PathCoding
from sinks.pint.values import ValueCodec

__all__ = [
    "REPORT_SESSION",
    "TableWrite",
    "configure_switch",
    "level_entries",
    "pint_writes",
    "query_selector",
]

REPORT_SESSION = 501
_STEP_SHIFT = 16
_LEVEL_TABLE_SIZE = 1024


@dataclass(frozen=True)
class TableWrite:
    """One P4Runtime write: a default action when ``match`` is empty."""

    table: str
    action: str
    params: dict[str, int] = field(default_factory=dict)
    match: dict[str, Any] = field(default_factory=dict)
    priority: int | None = None


def query_selector(seed: int) -> GlobalHashes:
    """The hashes whose ``query`` salt draws ``q`` (as ``Recorder`` does)."""
    return GlobalHashes(seed, "query-selection")


def _slots(plan: ExecutionPlan) -> tuple[str | None, str | None]:
    path = [q.name for q in plan.queries.values()
            if q.aggregation is Aggregation.STATIC_PER_FLOW]
    maxima = [q.name for q in plan.queries.values() if q.aggregation is Aggregation.PER_PACKET]
    others = [q.name for q in plan.queries.values()
              if q.aggregation is Aggregation.DYNAMIC_PER_FLOW]
    if len(path) > 1 or len(maxima) > 1 or others:
        raise InvalidValueError(
            f"p4src/pint.p4 runs one path-tracing and one per-packet query; the plan has "
            f"path {path}, per-packet {maxima}, dynamic {others}: drop the extra queries"
        )
    return (path[0] if path else None), (maxima[0] if maxima else None)


def level_entries(codec: ValueCodec) -> list[tuple[int, int, int, int, int]]:
    """Range entries ``(lo, hi, code, base, step)`` over integer values.

    An integer ``v`` in ``[lo, hi]`` has lower code ``code``; it rounds up
    when the rounding coin is below ``base + ((v - lo) * step >> 16)``,
    the fixed-point form of ``(v - level) / (next level - level) * 2^32``.
    """
    levels = codec.levels()
    out = []
    for code in range(codec.top):
        low, high = float(levels[code]), float(levels[code + 1])
        lo, hi = math.ceil(low), math.ceil(high) - 1
        if hi < lo:
            continue
        span = high - low
        base = math.ceil((lo - low) / span * TWO32)
        step = round(TWO32 / span * (1 << _STEP_SHIFT))
        out.append((lo, min(hi, TWO32 - 1), code, min(base, TWO32 - 1), step))
    top_lo = math.ceil(float(levels[codec.top]))
    if top_lo < TWO32:
        out.append((top_lo, TWO32 - 1, codec.top, 0, 0))
    if len(out) > _LEVEL_TABLE_SIZE:
        raise InvalidValueError(
            f"a {codec.bits}-bit value codec needs {len(out)} level entries; "
            f"MyEgress.pint_max_level holds {_LEVEL_TABLE_SIZE}: use fewer bits"
        )
    return out


def pint_writes(
    plan: ExecutionPlan,
    seed: int,
    *,
    switch_id: int,
    path_codings: dict[str, PathCoding] | None = None,
    value_codecs: dict[str, ValueCodec] | None = None,
    source_ports: Iterable[int] = (),
    sink_ports: Iterable[int] = (),
    init_ttl: int = 64,
    report_macs: tuple[int, int] | None = None,
) -> list[TableWrite]:
    """Every table write one switch needs for ``plan`` (its id, its host
    ports as sources and sinks, its report addresses)."""
    path_name, max_name = _slots(plan)
    path_codings = path_codings or {}
    value_codecs = value_codecs or {}
    if not 0 <= switch_id < TWO32:
        raise InvalidValueError(f"switch id {switch_id} does not fit 32 bits")
    if not 1 <= init_ttl <= 255:
        raise InvalidValueError(f"initial TTL {init_ttl} must be 1 to 255")
    writes = [TableWrite("MyEgress.pint_config", "MyEgress.set_config", {
        "switch_id": switch_id, "budget": plan.budget, "init_ttl": init_ttl,
        "query_salt": query_selector(seed).salt("query")})]
    writes += [TableWrite("MyEgress.pint_source_port", "MyEgress.set_source",
                          match={"standard_metadata.ingress_port": p}) for p in source_ports]
    writes += [TableWrite("MyEgress.pint_sink_port", "MyEgress.set_sink",
                          match={"standard_metadata.egress_port": p}) for p in sink_ports]
    writes += [TableWrite("MyEgress.pint_query_select", "MyEgress.set_query_set",
                          {"set_id": r.set_id}, {"meta.q_word": (r.lo, r.hi)}, priority=1)
               for r in plan.ranges]
    for qset in plan.sets:
        for p in qset.placements:
            slot = "path" if p.query == path_name else "max"
            writes.append(TableWrite(f"MyEgress.pint_{slot}_field", f"MyEgress.{slot}_field",
                                     {"offset": p.offset, "width": p.width},
                                     {"meta.set_id": qset.set_id}))
    if path_name is not None:
        writes += _path_writes(plan, seed, path_name, path_codings)
    if max_name is not None:
        writes += _max_writes(plan, seed, max_name, value_codecs)
    if report_macs is not None:
        writes.append(TableWrite("MyEgress.pint_report_config", "MyEgress.set_report",
                                 {"src_mac": report_macs[0], "collector_mac": report_macs[1]}))
    return writes


def _fitting(plan: ExecutionPlan, name: str, given: PathCoding | ValueCodec | None,
             kind: str) -> PathCoding | ValueCodec:
    """The query's coding, refused unless it fills the query's bit field."""
    width = plan.queries[name].bits
    if given is None or given.bits != width:
        raise InvalidValueError(
            f"query {name!r} needs {kind} with bits={width} (its field width), got {given}"
        )
    return given


def _path_writes(plan: ExecutionPlan, seed: int, name: str,
                 codings: dict[str, PathCoding]) -> list[TableWrite]:
    coding = _fitting(plan, name, codings.get(name), "a PathCoding")
    assert isinstance(coding, PathCoding)
    config = coding.switch_config(GlobalHashes(seed, name))
    writes = [TableWrite("MyEgress.pint_path_config", "MyEgress.set_path", {
        "scheme_salt": config["salts"]["scheme"],
        "fragment_salt": config["salts"]["fragment"],
        "hop_salt": config["salts"]["hop"],
        "baseline_threshold": config["baseline_threshold"],
        "xor_threshold": config["xor_threshold"],
        "fragments": config["fragments"],
        "fragment_bits": coding.bits,
        "fragment_mask": coding.fragment_mask,
    })]
    writes += [TableWrite("MyEgress.pint_hop_threshold", "MyEgress.set_hop_threshold",
                          {"threshold": t}, {"meta.hop": hop})
               for hop, t in enumerate(config["hop_thresholds"][:MAX_HOPS], start=1)]
    return writes


def _max_writes(plan: ExecutionPlan, seed: int, name: str,
                codecs: dict[str, ValueCodec]) -> list[TableWrite]:
    codec = _fitting(plan, name, codecs.get(name), "a ValueCodec")
    assert isinstance(codec, ValueCodec)
    writes = [TableWrite("MyEgress.pint_max_config", "MyEgress.set_max",
                         {"round_salt": GlobalHashes(seed, name).salt("round")})]
    writes += [TableWrite("MyEgress.pint_max_level", "MyEgress.set_level",
                          {"code": code, "lo": lo, "base": base, "step": step},
                          {"meta.value": (lo, hi)}, priority=1)
               for lo, hi, code, base, step in level_entries(codec)]
    return writes


def configure_switch(client: Any, writes: Iterable[TableWrite], *,
                     collector_port: int | None = None) -> None:
    """Send ``writes`` through a P4Runtime client; with ``collector_port``,
    the report clone session too."""
    for w in writes:
        if w.match:
            client.tables[w.table].insert(w.match, w.action, w.params, priority=w.priority)
        else:
            client.tables[w.table].default.modify(w.action, w.params)
    if collector_port is not None:
        client.clone_sessions.insert(REPORT_SESSION, [collector_port])
