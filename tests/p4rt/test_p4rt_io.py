"""Packet-in/out, digests, counters, meters, registers and pipeline queries,
with packet_io.p4 (controller headers, digest, direct and indirect externs)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from controller.p4rt import (
    DigestList,
    InProcessTransport,
    P4RuntimeClient,
    P4RuntimeError,
    PacketIn,
    UnknownNameError,
    protos,
)

pb = protos().p4runtime_pb2
PROGRAM = Path(__file__).resolve().parent / "packet_io.p4"
CPU = 64
HOST_A, HOST_B = "00:00:00:00:00:0a", "00:00:00:00:00:0b"


def eth(dst: int, src: int, payload: bytes = b"hello") -> bytes:
    return dst.to_bytes(6, "big") + src.to_bytes(6, "big") + b"\x08\x00" + payload


def code_of(call, *args, **kwargs) -> str:
    with pytest.raises(P4RuntimeError) as info:
        call(*args, **kwargs)
    return info.value.code


# --------------------------------------------------------------------------- packet-out


def test_packet_out_header_is_packed_bitwise_in_front_of_the_payload(make):
    injected: list[tuple[int, bytes]] = []
    rig = make(PROGRAM, cpu_port=CPU, inject=lambda port, f: injected.append((port, f)))
    rig.client.packet_out(b"\xde\xad", {"egress_port": 3, "flags": 5})
    # egress_port 000000011, flags 101, _pad 0000 -> 0x01d0
    rig.client.packet_out(b"\xbe\xef", {"flags": 7})  # a missing field is zero
    rig.client.packet_out(b"\x00", {"egress_port": "511", "_pad": 15})
    assert injected == [
        (CPU, b"\x01\xd0\xde\xad"),
        (CPU, b"\x00\x70\xbe\xef"),
        (CPU, b"\xff\x8f\x00"),
    ]


def test_packet_out_leaves_by_the_chosen_port(io):
    frame = eth(0x02, 0x0A)
    io.client.packet_out(frame, {"egress_port": 3})
    io.client.packet_out(frame, {"egress_port": 7})
    assert io.service.emitted == [(3, frame), (7, frame)]


def test_packet_out_errors(io, make):
    assert code_of(io.client.packet_out, b"x", {"egress_port": 512}) == "INVALID_ARGUMENT"
    with pytest.raises(UnknownNameError):
        io.client.packet_out(b"x", {"no_such_field": 1})
    request = io.service.protos.p4runtime_pb2.StreamMessageRequest()
    request.packet.payload = b"x"
    request.packet.metadata.add(metadata_id=9, value=b"\x01")
    (reply,) = io.service.stream(request)
    assert reply.error.canonical_code == 3  # INVALID_ARGUMENT
    assert reply.error.packet_out.packet_out.payload == b"x"
    assert io.service.emitted == []
    without_cpu = make(PROGRAM)
    assert code_of(without_cpu.client.packet_out, b"x", {"egress_port": 1}) == (
        "FAILED_PRECONDITION"
    )


# --------------------------------------------------------------------------- packet-in


def test_packet_in_strips_the_controller_header(io):
    got: list[PacketIn] = []
    io.client.on_packet_in(got.append)
    miss = eth(0x99, 0x0A)
    assert io.service.process(1, miss) == []  # default action send_to_cpu(1)
    io.client.tables["fwd"].insert({"dstAddr": 0x42}, "send_to_cpu", {"reason": 0x55})
    hit = eth(0x42, 0x0A, b"more")
    assert io.service.process(300, hit) == []
    assert got == [
        PacketIn(miss, {"ingress_port": 1, "reason": 1}),
        PacketIn(hit, {"ingress_port": 300, "reason": 0x55}),
    ]


def test_packet_in_metadata_is_canonical(io):
    raw = []
    io.service.subscribe(raw.append)
    io.service.process(300, eth(0x99, 0x0A))
    (message,) = raw
    assert [(m.metadata_id, m.value) for m in message.packet.metadata] == [
        (1, b"\x01\x2c"),
        (2, b"\x01"),
    ]


def test_short_frames_to_the_cpu_port_are_dropped(io):
    got = []
    io.client.on_packet_in(got.append)
    io.service.packet_in(b"\x01")
    assert got == []
    io.service.packet_in(b"\x00\x81")  # header only: port 1, reason 1, empty payload
    assert got == [PacketIn(b"", {"ingress_port": 1, "reason": 1})]


def test_deliver_splits_cpu_frames_from_the_rest(io):
    got = []
    io.client.on_packet_in(got.append)
    rest = io.service.deliver([(2, b"a"), (CPU, b"\x00\x82b"), (5, b"c")])
    assert rest == [(2, b"a"), (5, b"c")]
    assert got == [PacketIn(b"b", {"ingress_port": 1, "reason": 2})]


# --------------------------------------------------------------------------- digests


class Clock:
    def __init__(self) -> None:
        self.ns = 5_000

    def __call__(self) -> int:
        return self.ns


def test_digests_are_reported_once_configured(make):
    clock = Clock()
    rig = make(PROGRAM, cpu_port=CPU, clock_ns=clock)
    got: list[DigestList] = []
    rig.client.on_digest(got.append)
    rig.service.process(1, eth(0x99, 0x0A))
    assert got == [] and rig.switch.digests == []
    rig.client.digests["learn_t"].insert()
    rig.service.process(1, eth(0x99, 0x0A))
    rig.service.process(2, eth(0x99, 0x0B))
    did = rig.client.names.get("digests", "learn_t").preamble.id
    assert got == [
        DigestList("learn_t", did, 1, 5_000, [{"srcAddr": 0x0A, "port": 1}]),
        DigestList("learn_t", did, 2, 5_000, [{"srcAddr": 0x0B, "port": 2}]),
    ]


def test_digest_suppression_until_ack_or_timeout(make):
    clock = Clock()
    rig = make(PROGRAM, cpu_port=CPU, clock_ns=clock)
    got: list[DigestList] = []
    rig.client.on_digest(got.append, ack=False)
    rig.client.digests["learn_t"].insert(ack_timeout_ns=1_000)
    a = eth(0x99, 0x0A)
    rig.service.process(1, a)
    rig.service.process(1, a)  # in an unacknowledged list: suppressed
    rig.service.process(1, eth(0x99, 0x0B))
    assert [(d.list_id, d.data) for d in got] == [
        (1, [{"srcAddr": 0x0A, "port": 1}]),
        (2, [{"srcAddr": 0x0B, "port": 1}]),
    ]
    rig.client.digests.ack(got[0])
    rig.service.process(1, a)  # acknowledged: reported again
    assert [d.list_id for d in got] == [1, 2, 3]
    rig.service.process(1, eth(0x99, 0x0B))  # list 2 still unacknowledged
    assert len(got) == 3
    clock.ns += 1_000
    rig.service.process(1, eth(0x99, 0x0B))  # list 2 timed out
    assert [d.list_id for d in got] == [1, 2, 3, 4]


def test_digest_lists_fill_up_to_max_list_size_or_max_timeout(make):
    clock = Clock()
    rig = make(PROGRAM, cpu_port=CPU, clock_ns=clock)
    got: list[DigestList] = []
    rig.client.on_digest(got.append)
    rig.client.digests["learn_t"].insert(max_list_size=3, max_timeout_ns=1_000_000)
    for src in (1, 2, 3, 4, 5):
        rig.service.process(src, eth(0x99, src))
    assert [[s["port"] for s in d.data] for d in got] == [[1, 2, 3]]
    clock.ns += 999_999
    rig.service.poll_digests()
    assert len(got) == 1
    clock.ns += 1
    rig.service.poll_digests()
    assert [[s["port"] for s in d.data] for d in got] == [[1, 2, 3], [4, 5]]
    assert got[1].timestamp == 1_005_000


def test_digest_entry_writes_and_reads(io):
    c = io.client
    c.digests["learn_t"].insert(max_list_size=4)
    assert code_of(c.digests["learn_t"].insert) == "ALREADY_EXISTS"
    c.digests["learn_t"].modify(max_list_size=8)
    entity = pb.Entity()
    entity.digest_entry.SetInParent()
    (found,) = c.read([entity])
    assert found.digest_entry.config.max_list_size == 8
    delete = pb.Update(type=pb.Update.DELETE)
    delete.entity.digest_entry.digest_id = found.digest_entry.digest_id
    c.write([delete])
    assert c.read([entity]) == []
    assert code_of(c.digests["learn_t"].modify) == "NOT_FOUND"


# --------------------------------------------------------------------------- externs


def test_counters_read_write_and_range(io):
    c = io.client
    frame = eth(0x99, 0x0A)  # 19 bytes
    io.service.process(1, frame)
    io.service.process(1, frame)
    io.service.process(2, frame)
    assert c.counters["port_pkts"].read(1) == (2, 38)
    cells = c.counters["IoIngress.port_pkts"].read()
    assert len(cells) == 128 and cells[2] == (1, 19) and cells[3] == (0, 0)
    c.counters["port_pkts"].modify(1, packets=7, bytes=700)
    assert c.counters["port_pkts"].read(1) == (7, 700)
    c.counters["port_pkts"].modify(None)
    assert set(c.counters["port_pkts"].read()) == {(0, 0)}
    assert code_of(c.counters["port_pkts"].read, 128) == "OUT_OF_RANGE"
    assert code_of(c.counters["port_pkts"].modify, 200, packets=1, bytes=1) == "OUT_OF_RANGE"
    with pytest.raises(UnknownNameError):
        c.counters["no_such_counter"].read()


def test_direct_counter_follows_the_entry(io):
    c = io.client
    c.tables["fwd"].insert({"dstAddr": 0x02}, "to_port", {"port": 2})
    frame = eth(0x02, 0x0A)
    assert io.service.process(1, frame) == [(2, frame)]
    io.service.process(1, frame)
    assert c.tables["fwd"].direct_counter.read({"dstAddr": 0x02}) == (2, 38)
    assert c.tables["fwd"].read(counters=True)[0]["counter"] == (2, 38)
    c.tables["fwd"].modify({"dstAddr": 0x02}, "to_port", {"port": 3})
    assert c.tables["fwd"].direct_counter.read({"dstAddr": 0x02}) == (2, 38)  # kept on modify
    update = pb.Update(type=pb.Update.MODIFY)
    dce = update.entity.direct_counter_entry
    dce.table_entry.table_id = c.names.table("fwd").preamble.id
    dce.table_entry.match.add(field_id=1).exact.value = b"\x02"
    dce.data.packet_count, dce.data.byte_count = 0, 0
    c.write([update])
    assert c.tables["fwd"].direct_counter.read({"dstAddr": 0x02}) == (0, 0)
    dce.table_entry.match[0].exact.value = b"\x03"
    assert code_of(c.write, [update]) == "NOT_FOUND"


def test_meters_config_read_back_and_reset(io):
    c = io.client
    assert c.meters["port_meter"].read(1) is None
    c.meters["port_meter"].modify(1, (10, 2, 20, 4))
    assert c.meters["port_meter"].read(1) == (10, 2, 20, 4)
    c.meters["port_meter"].modify(None, (1000, 10, 2000, 20))
    assert c.meters["port_meter"].read(127) == (1000, 10, 2000, 20)
    c.meters["port_meter"].modify(1, None)
    assert c.meters["port_meter"].read(1) is None
    assert code_of(c.meters["port_meter"].modify, 1, (30, 2, 20, 4)) == "INVALID_ARGUMENT"
    assert code_of(c.meters["port_meter"].modify, 128, (1, 1, 1, 1)) == "OUT_OF_RANGE"


def test_direct_meter_config(io):
    c = io.client
    c.tables["fwd"].insert({"dstAddr": 0x02}, "to_port", {"port": 2})
    c.tables["fwd"].direct_meter.modify({"dstAddr": 0x02}, (100, 10, 200, 20))
    entity = pb.Entity()
    entity.direct_meter_entry.table_entry.table_id = c.names.table("fwd").preamble.id
    (found,) = c.read([entity])
    config = found.direct_meter_entry.config
    assert (config.cir, config.cburst, config.pir, config.pburst) == (100, 10, 200, 20)
    assert code_of(c.tables["fwd"].direct_meter.modify, {"dstAddr": 0x03}, None) == "NOT_FOUND"


def test_registers_are_read_only(io):
    c = io.client
    io.service.process(5, eth(0x99, 0x0A, b"x" * 30))
    assert c.registers["last_len"].read(5) == 44
    values = c.registers["last_len"].read()
    assert len(values) == 128 and values[5] == 44 and values[4] == 0
    update = pb.Update(type=pb.Update.MODIFY)
    re_ = update.entity.register_entry
    re_.register_id = c.names.get("registers", "last_len").preamble.id
    re_.index.index = 5
    re_.data.bitstring = b"\x01"
    assert code_of(c.write, [update]) == "UNIMPLEMENTED"


# --------------------------------------------------------------------------- pipeline


def test_pipeline_config_and_capabilities(io):
    fetched = P4RuntimeClient(InProcessTransport(io.service))  # P4Info from the device
    assert fetched.p4info.SerializeToString() == io.service.p4info.SerializeToString()
    assert fetched.names.table("fwd").preamble.name == "IoIngress.fwd"
    assert fetched.api_version() == importlib.metadata.version("p4runtime")
    headers = {h.preamble.name for h in fetched.p4info.controller_packet_metadata}
    assert headers == {"packet_in", "packet_out"}
