"""P4Info generation against p4c's own output for hand-described programs."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.errors import P4SemanticError
from common.paths import shared_dir
from dataplane.compiler.p4info import (
    PREFIX_ACTION,
    PREFIX_CONTROLLER_HEADER,
    PREFIX_TABLE,
    SymbolTable,
    assign_ids,
    build_p4info,
    compare_p4info,
    from_text,
    jenkins_hash,
    load_text,
    p4info_pb2,
    score,
    shortest_unique_suffixes,
    to_text,
)
from dataplane.schema import (
    ActionInfo,
    ActionParamInfo,
    ActionRefInfo,
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

SAMPLES = shared_dir() / "p4-conformance" / "samples"
needs_samples = pytest.mark.skipif(
    not SAMPLES.is_dir(), reason="p4c's samples are not checked out beside the repository"
)

NO_ACTION = ActionInfo("NoAction", [], annotations=['@noWarn("unused")'])
DEFAULT_ONLY = ["@defaultonly"]


def _sample(name: str) -> Path:
    return SAMPLES / f"{name}.p4info.txtpb"


def issue3488_schema() -> ProgramSchema:
    """issue3488-1-bmv2.p4: const default action with an argument, a misspelt @defaultonly."""
    c = "test_ingress."
    return ProgramSchema(
        tables=[
            TableInfo(
                c + "pre_tbl1",
                [MatchFieldInfo("hdr.ipv4.dst_addr", 32, "exact")],
                [
                    ActionRefInfo(c + "action1"),
                    ActionRefInfo(c + "action2"),
                    ActionRefInfo(c + "action3"),
                    ActionRefInfo(c + "send_to_port", annotations=["@defaut_only"]),
                ],
                default_action=c + "send_to_port",
                default_args=[2],
                const_default_action=True,
            ),
            TableInfo(
                c + "in_tbl2",
                [MatchFieldInfo("hdr.ipv4.protocol", 8, "exact")],
                [
                    ActionRefInfo(c + "action4"),
                    ActionRefInfo("NoAction", "DEFAULT_ONLY", DEFAULT_ONLY),
                ],
                default_action="NoAction",
            ),
            TableInfo(
                c + "post_tbl3",
                [MatchFieldInfo("hdr.ipv4.src_addr", 32, "exact")],
                [
                    ActionRefInfo(c + "action5"),
                    ActionRefInfo("NoAction", "DEFAULT_ONLY", DEFAULT_ONLY),
                ],
                default_action="NoAction",
            ),
        ],
        actions=[
            NO_ACTION,
            ActionInfo(c + "drop_action", []),
            ActionInfo(c + "action3", []),
            ActionInfo(c + "action2", []),
            ActionInfo(c + "action1", []),
            ActionInfo(c + "send_to_port", [ActionParamInfo("p", 9)]),
            ActionInfo(c + "action4", []),
            ActionInfo(c + "action5", [ActionParamInfo("neighbor_mac", 48)]),
        ],
    )


def issue1814_schema() -> ProgramSchema:
    """issue1814-1-bmv2.p4: a register beside a table."""
    return ProgramSchema(
        tables=[
            TableInfo(
                "IngressImpl.debug_table",
                [MatchFieldInfo("meta.test", 1, "exact")],
                [
                    ActionRefInfo("IngressImpl.drop"),
                    ActionRefInfo("IngressImpl.forward"),
                    ActionRefInfo("NoAction", "DEFAULT_ONLY", DEFAULT_ONLY),
                ],
                default_action="NoAction",
            )
        ],
        actions=[
            NO_ACTION,
            ActionInfo("IngressImpl.drop", []),
            ActionInfo("IngressImpl.forward", []),
        ],
        registers=[RegisterInfo("IngressImpl.testRegister", 1, 1)],
    )


def arith_inline_schema() -> ProgramSchema:
    """arith-inline-bmv2.p4: a keyless table in an inlined control (alias drops two parts)."""
    return ProgramSchema(
        tables=[
            TableInfo(
                "ingress.c.t",
                [],
                [ActionRefInfo("ingress.c.add")],
                default_action="ingress.c.add",
                const_default_action=True,
            )
        ],
        actions=[ActionInfo("ingress.c.add", [])],
    )


def ternary_entries_schema() -> ProgramSchema:
    """table-entries-ternary-bmv2.p4: a ``const entries`` table."""
    return ProgramSchema(
        tables=[
            TableInfo(
                "ingress.t_ternary",
                [MatchFieldInfo("h.h.t", 16, "ternary")],
                [ActionRefInfo("ingress.a"), ActionRefInfo("ingress.a_with_control_params")],
                default_action="ingress.a",
                is_const_table=True,
                has_initial_entries=True,
            )
        ],
        actions=[
            ActionInfo("ingress.a", []),
            ActionInfo("ingress.a_with_control_params", [ActionParamInfo("x", 9)]),
        ],
    )


HAND_BUILT = {
    "issue3488-1-bmv2": issue3488_schema,
    "issue1814-1-bmv2": issue1814_schema,
    "arith-inline-bmv2": arith_inline_schema,
    "table-entries-ternary-bmv2": ternary_entries_schema,
}


@needs_samples
@pytest.mark.parametrize("sample", sorted(HAND_BUILT))
def test_matches_p4c_field_by_field(sample: str) -> None:
    ours = build_p4info(HAND_BUILT[sample]())
    theirs = load_text(_sample(sample))
    assert compare_p4info(ours, theirs, ids=True) == []
    assert to_text(ours) == _sample(sample).read_text()
    assert ours == theirs


@needs_samples
def test_issue3488_details() -> None:
    p4info = build_p4info(issue3488_schema())
    pre_tbl1 = p4info.tables[0]
    assert pre_tbl1.preamble.id == 43864660
    assert pre_tbl1.const_default_action_id == 18870058
    arg = pre_tbl1.initial_default_action.arguments[0]
    assert (arg.param_id, arg.value) == (1, b"\x00\x02")  # bit<9> padded to two bytes
    # "@defaut_only" is not @defaultonly: copied, but the scope stays TABLE_AND_DEFAULT
    ref = pre_tbl1.action_refs[3]
    assert list(ref.annotations) == ["@defaut_only"]
    assert ref.scope == p4info_pb2.ActionRef.TABLE_AND_DEFAULT
    assert p4info.tables[1].action_refs[1].scope == p4info_pb2.ActionRef.DEFAULT_ONLY


@needs_samples
def test_text_round_trip_of_every_sample() -> None:
    files = sorted(SAMPLES.glob("*.p4info.txtpb"))
    assert len(files) >= 100
    for path in files:
        text = path.read_text()
        p4info = load_text(path)
        assert to_text(p4info) == text, path.name
        assert from_text(text) == p4info


@needs_samples
def test_ids_and_aliases_of_every_sample_object() -> None:
    """Recomputing each object's id and alias from its name alone gives p4c's."""
    kinds = {
        "tables": PREFIX_TABLE,
        "actions": PREFIX_ACTION,
        "registers": p4info_pb2.P4Ids.REGISTER,
        "counters": p4info_pb2.P4Ids.COUNTER,
        "direct_counters": p4info_pb2.P4Ids.DIRECT_COUNTER,
        "meters": p4info_pb2.P4Ids.METER,
        "direct_meters": p4info_pb2.P4Ids.DIRECT_METER,
        "digests": p4info_pb2.P4Ids.DIGEST,
    }
    checked = 0
    for path in sorted(SAMPLES.glob("*.p4info.txtpb")):
        p4info = load_text(path)
        symbols = SymbolTable()
        objects = [(kinds[k], o) for k in kinds for o in getattr(p4info, k)]
        for prefix, o in objects:
            symbols.add(prefix, o.preamble.name)
        symbols.compute()
        for prefix, o in objects:
            assert symbols.id(prefix, o.preamble.name) == o.preamble.id, o.preamble.name
            assert symbols.alias(o.preamble.name) == o.preamble.alias, o.preamble.name
            checked += 1
    assert checked >= 140


def test_hash_gives_p4c_ids() -> None:
    assert (PREFIX_TABLE << 24) | (jenkins_hash("ingress.simple_table") & 0xFFFFFF) == 39789425
    assert (PREFIX_ACTION << 24) | (jenkins_hash("NoAction") & 0xFFFFFF) == 21257015
    assert (PREFIX_ACTION << 24) | (jenkins_hash("ingress.do_something") & 0xFFFFFF) == 30461719
    assert jenkins_hash("") == 0


def test_aliases_are_shortest_unique_suffixes() -> None:
    aliases = shortest_unique_suffixes(["d.a.c", "e.b.c", "x.y", "a.b.z", "b.z", "q"])
    assert aliases == {
        "d.a.c": "a.c",
        "e.b.c": "b.c",
        "x.y": "y",
        "a.b.z": "a.b.z",
        "b.z": "b.z",  # itself a suffix of a.b.z, so it keeps all its parts
        "q": "q",
    }


def _colliding_names() -> tuple[str, str]:
    seen: dict[int, str] = {}
    for i in range(200_000):
        name = f"c.t{i}"
        low = jenkins_hash(name) & 0xFFFFFF
        if low in seen:
            return seen[low], name
        seen[low] = name
    raise AssertionError("no collision found")


def test_hash_collision_probes_in_name_order() -> None:
    first, second = sorted(_colliding_names(), key=str.encode)
    base = (PREFIX_TABLE << 24) | (jenkins_hash(first) & 0xFFFFFF)
    symbols = SymbolTable()
    symbols.add(PREFIX_TABLE, second)
    symbols.add(PREFIX_TABLE, first)
    symbols.compute()
    assert symbols.id(PREFIX_TABLE, first) == base
    assert symbols.id(PREFIX_TABLE, second) == base + 1


def test_explicit_ids_are_fixed_first_and_prefixed() -> None:
    hashed = (PREFIX_ACTION << 24) | (jenkins_hash("c.a") & 0xFFFFFF)
    symbols = SymbolTable()
    symbols.add(PREFIX_ACTION, "c.a")
    symbols.add(PREFIX_ACTION, "c.b", hashed)  # takes c.a's hashed id
    symbols.add(PREFIX_TABLE, "c.t", 5)
    symbols.compute()
    assert symbols.id(PREFIX_ACTION, "c.b") == hashed
    assert symbols.id(PREFIX_ACTION, "c.a") == hashed + 1
    assert symbols.id(PREFIX_TABLE, "c.t") == 0x02000005


def test_explicit_id_with_wrong_prefix_or_twice_is_an_error() -> None:
    wrong = SymbolTable()
    with pytest.raises(P4SemanticError, match="wrong 8-bit prefix"):
        wrong.add(PREFIX_TABLE, "c.t", 0x01000005)
    twice = SymbolTable()
    twice.add(PREFIX_TABLE, "c.t", 7)
    twice.add(PREFIX_TABLE, "c.u", 7)
    with pytest.raises(P4SemanticError, match="assigned to multiple"):
        twice.compute()


def test_id_annotations_on_objects_and_fields() -> None:
    schema = ProgramSchema(
        tables=[
            TableInfo(
                "c.t",
                [MatchFieldInfo("h.a", 8, "exact"), MatchFieldInfo("h.b", 8, "lpm", id=1)],
                [ActionRefInfo("c.a")],
                default_action="c.a",
                annotations=["@id(0x02000010)", '@name("c.t")'],
            )
        ],
        actions=[
            ActionInfo(
                "c.a", [ActionParamInfo("x", 4), ActionParamInfo("y", 4, annotations=["@id(1)"])]
            )
        ],
    )
    p4info = build_p4info(schema)
    table = p4info.tables[0]
    assert table.preamble.id == 0x02000010
    assert list(table.preamble.annotations) == []  # @id and @name live elsewhere in P4Info
    # p4c's FieldIdAllocator: fixed ids first, then positions skipping taken values
    assert [(f.name, f.id) for f in table.match_fields] == [("h.a", 2), ("h.b", 1)]
    assert [(p.name, p.id) for p in p4info.actions[0].params] == [("x", 2), ("y", 1)]


def test_externs_digests_and_packet_metadata() -> None:
    schema = ProgramSchema(
        tables=[
            TableInfo(
                "ingress.fwd",
                [
                    MatchFieldInfo("hdr.ipv4.dstAddr", 32, "lpm"),
                    MatchFieldInfo("meta.hash", 16, "selector"),
                    MatchFieldInfo("meta.port", 9, "range", annotations=['@brief("port")']),
                ],
                [ActionRefInfo("ingress.set", annotations=["@tableonly"])],
                default_action="ingress.set",
                default_args=[0x1FF, 1],
                size=64,
                direct_counter="ingress.fwd_counter",
                direct_meter="ingress.fwd_meter",
                implementation="ingress.ecmp",
                idle_timeout=True,
            )
        ],
        actions=[ActionInfo("ingress.set", [ActionParamInfo("port", 9), ActionParamInfo("v", 1)])],
        counters=[CounterInfo("ingress.pkts", "PACKETS", size=16)],
        direct_counters=[CounterInfo("ingress.fwd_counter", "BOTH", table="ingress.fwd")],
        meters=[MeterInfo("ingress.rate", "BYTES", size=8)],
        direct_meters=[MeterInfo("ingress.fwd_meter", "PACKETS", table="ingress.fwd")],
        registers=[RegisterInfo("egress.delta", 32, 4, signed=True)],
        digests=[DigestInfo("learn_t", [FieldInfo("src", 48), FieldInfo("port", 9)])],
        controller_headers=[
            ControllerHeaderInfo(
                "packet_in_t",
                [FieldInfo("ingress_port", 9), FieldInfo("pad", 7)],
                annotations=['@controller_header("packet_in")'],
            )
        ],
        value_sets=[ValueSetInfo("ParserImpl.pvs", [MatchFieldInfo("", 16, "exact")], 4)],
    )
    p4info = build_p4info(schema)

    def hid(prefix: int, name: str) -> int:
        return (prefix << 24) | (jenkins_hash(name) & 0xFFFFFF)

    table = p4info.tables[0]
    assert [(f.id, f.name, f.match_type) for f in table.match_fields] == [
        (1, "hdr.ipv4.dstAddr", p4info_pb2.MatchField.LPM),
        (3, "meta.port", p4info_pb2.MatchField.RANGE),  # the selector key keeps its position
    ]
    assert table.match_fields[1].doc.brief == "port"
    assert list(table.match_fields[1].annotations) == []
    assert table.action_refs[0].scope == p4info_pb2.ActionRef.TABLE_ONLY
    assert [(a.param_id, a.value) for a in table.initial_default_action.arguments] == [
        (1, b"\x01\xff"),
        (2, b"\x01"),
    ]
    assert table.const_default_action_id == 0
    assert table.implementation_id == hid(p4info_pb2.P4Ids.ACTION_PROFILE, "ingress.ecmp")
    assert list(table.direct_resource_ids) == [
        hid(p4info_pb2.P4Ids.DIRECT_COUNTER, "ingress.fwd_counter"),
        hid(p4info_pb2.P4Ids.DIRECT_METER, "ingress.fwd_meter"),
    ]
    assert table.size == 64
    assert table.idle_timeout_behavior == p4info_pb2.Table.NOTIFY_CONTROL

    counter = p4info.counters[0]
    assert (counter.preamble.id, counter.spec.unit, counter.size) == (
        hid(p4info_pb2.P4Ids.COUNTER, "ingress.pkts"),
        p4info_pb2.CounterSpec.PACKETS,
        16,
    )
    direct = p4info.direct_counters[0]
    assert direct.spec.unit == p4info_pb2.CounterSpec.BOTH
    assert direct.direct_table_id == table.preamble.id
    assert (p4info.meters[0].spec.unit, p4info.meters[0].size) == (p4info_pb2.MeterSpec.BYTES, 8)
    assert p4info.direct_meters[0].direct_table_id == table.preamble.id
    register = p4info.registers[0]
    assert register.type_spec.bitstring.int.bitwidth == 32
    assert register.size == 4

    digest = p4info.digests[0]
    assert digest.preamble.id == hid(p4info_pb2.P4Ids.DIGEST, "learn_t")
    assert digest.type_spec.struct.name == "learn_t"
    members = p4info.type_info.structs["learn_t"].members
    assert [(m.name, m.type_spec.bitstring.bit.bitwidth) for m in members] == [
        ("src", 48),
        ("port", 9),
    ]

    packet_in = p4info.controller_packet_metadata[0]
    assert packet_in.preamble.id == hid(PREFIX_CONTROLLER_HEADER, "packet_in_t")
    assert (packet_in.preamble.name, packet_in.preamble.alias) == ("packet_in", "packet_in")
    assert list(packet_in.preamble.annotations) == ['@controller_header("packet_in")']
    assert [(m.id, m.name, m.bitwidth) for m in packet_in.metadata] == [
        (1, "ingress_port", 9),
        (2, "pad", 7),
    ]

    value_set = p4info.value_sets[0]
    assert value_set.preamble.alias == "pvs"
    assert value_set.size == 4
    assert [(m.id, m.name, m.bitwidth) for m in value_set.match] == [(1, "", 16)]

    assert from_text(to_text(p4info)) == p4info
    assert compare_p4info(p4info, from_text(to_text(p4info)), ids=True) == []


def test_type_info_written_as_p4c_does() -> None:
    actions_only = ProgramSchema(actions=[ActionInfo("c.a", [])])
    assert not build_p4info(actions_only).HasField("type_info")
    assert build_p4info(actions_only, extern_calls=True).HasField("type_info")
    with_param = ProgramSchema(actions=[ActionInfo("c.a", [ActionParamInfo("x", 1)])])
    assert build_p4info(with_param).HasField("type_info")
    empty = build_p4info(ProgramSchema())
    assert to_text(empty) == (
        "# proto-file: p4/config/v1/p4info.proto\n"
        "# proto-message: p4.config.v1.P4Info\n\n"
        'pkg_info {\n  arch: "v1model"\n}\n'
    )


def test_hidden_objects_are_left_out_but_named() -> None:
    schema = ProgramSchema(
        tables=[
            TableInfo("c.t", [], [ActionRefInfo("c.a")], "c.a", annotations=["@hidden"]),
            TableInfo("d.t", [], [ActionRefInfo("c.a")], "c.a"),
        ],
        actions=[ActionInfo("c.a", [])],
    )
    p4info = build_p4info(schema)
    assert [t.preamble.name for t in p4info.tables] == ["d.t"]
    assert p4info.tables[0].preamble.alias == "d.t"  # c.t still counts for aliases


@needs_samples
def test_compare_reports_each_difference() -> None:
    theirs = load_text(_sample("issue3488-1-bmv2"))
    schema = issue3488_schema()
    schema.tables[0].match_fields[0].bitwidth = 16
    schema.tables[1].action_refs.pop()
    schema.actions[5].params[0].name = "port"
    schema.actions.pop(1)  # drop_action, which no table uses
    schema.registers.append(RegisterInfo("test_ingress.r", 8, 2))
    ours = build_p4info(schema)
    assert compare_p4info(ours, theirs) == [
        "table test_ingress.pre_tbl1: match field hdr.ipv4.dst_addr: ours 16, exact, p4c 32, exact",
        "table test_ingress.in_tbl2: action NoAction: missing (p4c: DEFAULT_ONLY)",
        "action test_ingress.drop_action: missing",
        "action test_ingress.send_to_port: param p: missing (p4c: 9)",
        "action test_ingress.send_to_port: param port: not in p4c's P4Info (ours: 9)",
        "register test_ingress.r: not in p4c's P4Info",
    ]
    matching, total = score(ours, theirs)
    assert total - matching == 8  # six lines; the extra register's parts are not repeated
    assert score(theirs, theirs) == (total - 4, total - 4)


def _schema_of(p4info) -> ProgramSchema:
    """The schema a front end would give for the program behind p4c's ``p4info``."""
    actions = {a.preamble.id: a for a in p4info.actions}
    tables = {t.preamble.id: t.preamble.name for t in p4info.tables}
    match_kinds = {v: k.lower() for k, v in p4info_pb2.MatchField.MatchType.items()}
    scopes = {v: k for k, v in p4info_pb2.ActionRef.Scope.items()}
    schema = ProgramSchema(arch=p4info.pkg_info.arch)
    for t in p4info.tables:
        default = actions[t.initial_default_action.action_id]
        schema.tables.append(
            TableInfo(
                t.preamble.name,
                [
                    MatchFieldInfo(f.name, f.bitwidth, match_kinds[f.match_type], f.id)
                    for f in t.match_fields
                ],
                [
                    ActionRefInfo(actions[r.id].preamble.name, scopes[r.scope], list(r.annotations))
                    for r in t.action_refs
                ],
                default.preamble.name,
                [int.from_bytes(a.value, "big") for a in t.initial_default_action.arguments],
                const_default_action=bool(t.const_default_action_id),
                is_const_table=t.is_const_table,
                has_initial_entries=t.has_initial_entries,
                size=t.size,
                annotations=list(t.preamble.annotations),
            )
        )
    for a in p4info.actions:
        params = [ActionParamInfo(p.name, p.bitwidth, p.id) for p in a.params]
        schema.actions.append(ActionInfo(a.preamble.name, params, list(a.preamble.annotations)))
    for r in p4info.registers:
        bits = r.type_spec.bitstring
        signed = bits.HasField("int")
        width = bits.int.bitwidth if signed else bits.bit.bitwidth
        schema.registers.append(RegisterInfo(r.preamble.name, width, r.size, signed))
    for c in p4info.direct_counters:
        unit = p4info_pb2.CounterSpec.Unit.Name(c.spec.unit)
        table = tables[c.direct_table_id]
        schema.direct_counters.append(CounterInfo(c.preamble.name, unit, table=table))
    return schema


@needs_samples
def test_every_sample_rebuilt_from_its_schema() -> None:
    """Names, shapes and order given, build_p4info writes each of p4c's files exactly."""
    rebuilt = 0
    for path in sorted(SAMPLES.glob("*.p4info.txtpb")):
        theirs = load_text(path)
        # serializable enums in type_info come from types the schema does not describe
        theirs.type_info.ClearField("serializable_enums")
        ours = build_p4info(_schema_of(theirs), extern_calls=theirs.HasField("type_info"))
        assert to_text(ours) == to_text(theirs), path.name
        rebuilt += 1
    assert rebuilt >= 100


@needs_samples
def test_compare_with_ids_reports_id_differences() -> None:
    schema = issue1814_schema()
    schema.tables[0].id = 0x02000001
    ours, theirs = build_p4info(schema), load_text(_sample("issue1814-1-bmv2"))
    assert compare_p4info(ours, theirs) == []
    assert compare_p4info(ours, theirs, ids=True) == [
        "table IngressImpl.debug_table: id: ours 33554433, p4c 44942503"
    ]
    matching, total = score(ours, theirs, ids=True)
    assert total - matching == 1


def test_assign_ids_writes_p4c_ids_into_the_schema() -> None:
    schema = issue1814_schema()
    symbols = assign_ids(schema)
    assert schema.tables[0].id == 44942503
    assert [a.id for a in schema.actions] == [21257015, 17676690, 33244565]
    assert schema.registers[0].id == 377042504
    assert schema.tables[0].match_fields[0].id == 1
    assert symbols.alias("IngressImpl.testRegister") == "testRegister"
    assert build_p4info(schema) == build_p4info(issue1814_schema())  # ids are stable
