"""Bytestrings, value parsing, name lookup and error translation of the client."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from google.protobuf import any_pb2
from google.rpc import status_pb2

from controller.p4rt import InProcessTransport, P4RuntimeError, RpcError, UpdateError, protos
from controller.p4rt.codec import decode, encode, parse, parse_prefix
from controller.p4rt.names import P4InfoIndex
from controller.p4rt.protos import convert

pb = protos().p4runtime_pb2


def test_canonical_encoding():
    assert encode(0) == b"\x00"
    assert encode(1) == b"\x01"
    assert encode(255) == b"\xff"
    assert encode(256) == b"\x01\x00"
    assert encode(0x0A000100) == b"\x0a\x00\x01\x00"
    assert decode(b"\x00\x00\x01\x2c") == 300
    with pytest.raises(ValueError):
        encode(-1)


def test_parse_text_values():
    assert parse("10.0.1.5", 32) == 0x0A000105
    assert parse("aa:bb:cc:dd:ee:ff", 48) == 0xAABBCCDDEEFF
    assert parse("0:1:2:3:4:5", 48) == 0x000102030405
    assert parse("00-00-00-00-01-01", 48) == 0x0101
    assert parse("2001:db8::1", 128) == 0x20010DB8000000000000000000000001
    assert parse("0x1f", 5) == 31
    assert parse("511", 9) == 511
    assert parse(b"\x01\x02", 16) == 0x0102
    assert parse(1 << 40, 9) == 1 << 40  # integers are judged by the switch
    with pytest.raises(ValueError):
        parse("10.0.0.1", 16)
    with pytest.raises(ValueError):
        parse("512", 9)


def test_parse_prefixes():
    assert parse_prefix("10.0.0.0/8", 32) == (0x0A000000, 8)
    assert parse_prefix(("10.0.1.0", 24), 32) == (0x0A000100, 24)
    assert parse_prefix(0x0A000001, 32) == (0x0A000001, 32)


def test_names_resolve_by_full_name_alias_and_field_suffix():
    info = protos().p4info_pb2.P4Info()
    t = info.tables.add()
    t.preamble.id, t.preamble.name, t.preamble.alias = 7, "ingress.ipv4_lpm", "ipv4_lpm"
    t.match_fields.add(id=1, name="hdr.ipv4.dstAddr", bitwidth=32)
    t.match_fields.add(id=2, name="hdr.inner.dstAddr", bitwidth=32)
    t.match_fields.add(id=3, name="meta.vrf", bitwidth=8)
    names = P4InfoIndex(info)
    assert names.table("ingress.ipv4_lpm") is names.table("ipv4_lpm")
    assert names.by_id(7).preamble.name == "ingress.ipv4_lpm"
    assert names.match_field(t, "vrf").id == 3
    assert names.match_field(t, "ipv4.dstAddr").id == 1
    with pytest.raises(P4RuntimeError, match="match field name 'dstAddr' in table "
                       "ingress.ipv4_lpm is ambiguous: hdr.inner.dstAddr, hdr.ipv4.dstAddr"):
        names.match_field(t, "dstAddr")
    with pytest.raises(P4RuntimeError, match="no table named 'nope'"):
        names.table("nope")


def _status(code: int, message: str, errors: list[tuple[int, str]]) -> bytes:
    status = status_pb2.Status(code=code, message=message)
    for canonical, text in errors:
        packed = any_pb2.Any()
        packed.Pack(pb.Error(canonical_code=canonical, message=text))
        status.details.append(packed)
    return status.SerializeToString()


def test_write_errors_point_at_the_failing_updates():
    details = _status(2, "Write failure.", [(0, ""), (5, "no such entry"), (6, "exists")])
    err = P4RuntimeError.from_rpc(RpcError(2, "Write failure.", details), pb.Error)
    assert (err.code, err.index, err.message) == ("NOT_FOUND", 1, "no such entry")
    assert err.details == [
        UpdateError(1, "NOT_FOUND", "no such entry"),
        UpdateError(2, "ALREADY_EXISTS", "exists"),
    ]
    assert str(err) == "NOT_FOUND (update 1): no such entry"
    plain = P4RuntimeError.from_rpc(RpcError(5, "unknown device id 7"), pb.Error)
    assert (plain.code, plain.index, plain.details) == ("NOT_FOUND", None, [])


class _Refusal(Exception):
    grpc_code = 12
    message = "nope"

    def status_bytes(self) -> bytes:
        return _status(12, "nope", [])


class _FakeService:
    """A service speaking the controller's own classes (no conversion needed)."""

    protos = protos()

    def __init__(self) -> None:
        self.seen: list = []

    def write(self, request):
        self.seen.append(request)
        if len(request.updates) > 1:
            raise _Refusal()
        if request.device_id == 9:
            raise KeyError("a bug, not a refusal")
        return pb.WriteResponse()


def test_in_process_transport_translates_refusals_only():
    service = _FakeService()
    transport = InProcessTransport(service)
    request = pb.WriteRequest(device_id=1)
    transport.write(request)
    assert service.seen[0] is request  # same pool: passed through untouched
    request.updates.add()
    request.updates.add()
    with pytest.raises(RpcError) as info:
        transport.write(request)
    assert (info.value.code, info.value.message) == (12, "nope")
    with pytest.raises(KeyError):
        transport.write(pb.WriteRequest(device_id=9))


def test_convert_crosses_descriptor_pools():
    from dataplane.compiler.p4info import p4runtime_protos

    theirs = p4runtime_protos().p4runtime_pb2
    ours = pb.WriteRequest(device_id=3)
    ours.updates.add(type=pb.Update.DELETE)
    other = convert(ours, theirs)
    assert type(other) is theirs.WriteRequest
    assert other.device_id == 3 and other.updates[0].type == theirs.Update.DELETE
    back = convert(other, SimpleNamespace(WriteRequest=pb.WriteRequest))
    assert back == ours
