"""P4Runtime over gRPC on 127.0.0.1: P4RuntimeServer <- GrpcTransport <- P4RuntimeClient.

The same by-name client as in-process; here every message crosses a real
gRPC channel, errors come back as gRPC statuses with P4Runtime details, and
the stream carries arbitration, packet I/O and digests.
"""

from __future__ import annotations

import importlib.metadata
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from common.paths import PACKAGE_ROOT
from controller.p4rt import DigestList, P4RuntimeClient, P4RuntimeError, PacketIn, RpcError, protos
from controller.p4rt.grpc_transport import GrpcTransport, device_config
from dataplane.compiler.p4info import build_p4info
from dataplane.compiler.pipeline import compile_file
from dataplane.control.grpc_server import P4RuntimeServer, decode_device_config
from p4src import program_path

pb = protos().p4runtime_pb2
L3 = program_path("l3_forward")
PACKET_IO = PACKAGE_ROOT / "tests" / "p4rt" / "packet_io.p4"
CPU = 64
LPM, DST, FWD = "ipv4_lpm", "hdr.ipv4.dstAddr", "ipv4_forward"
NH1, NH2 = "00:00:00:00:01:01", "00:00:00:00:02:02"


def wait_for(predicate: Callable[[], object], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.005)


class Rig:
    """A started server and the transports opened against it (closed at the end)."""

    def __init__(self, server: P4RuntimeServer) -> None:
        self.server = server
        self.server.start()
        self.transports: list[GrpcTransport] = []

    def transport(self, election_id: tuple[int, int] = (0, 1), device_id: int = 0
                  ) -> GrpcTransport:
        t = GrpcTransport(self.server.address, device_id, election_id, timeout=5)
        self.transports.append(t)
        return t

    def client(self, election_id: tuple[int, int] = (0, 1), **kwargs) -> P4RuntimeClient:
        return P4RuntimeClient(self.transport(election_id), election_id=election_id, **kwargs)

    def close(self) -> None:
        for t in self.transports:
            t.close()
        self.server.stop()


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig(P4RuntimeServer(program=L3))
    yield r
    r.close()


@pytest.fixture
def io_rig() -> Iterator[Rig]:
    r = Rig(P4RuntimeServer(program=PACKET_IO, cpu_port=CPU))
    yield r
    r.close()


@pytest.fixture
def empty_rig() -> Iterator[Rig]:
    r = Rig(P4RuntimeServer())
    yield r
    r.close()


def route(client: P4RuntimeClient, prefix: str, mac: str = NH1, port: int = 1,
          kind: str = "insert") -> None:
    getattr(client.tables[LPM], kind)({DST: prefix}, FWD, {"dstAddr": mac, "port": port})


def code_of(call: Callable[..., object], *args, **kwargs) -> str:
    with pytest.raises(P4RuntimeError) as info:
        call(*args, **kwargs)
    return info.value.code


def lpm_update(client: P4RuntimeClient, kind: int, value: bytes, plen: int,
               table_id: int | None = None, params: bool = True) -> object:
    table = client.names.table(LPM)
    action = client.names.action(FWD)
    update = pb.Update(type=kind)
    te = update.entity.table_entry
    te.table_id = table.preamble.id if table_id is None else table_id
    fm = te.match.add(field_id=table.match_fields[0].id)
    fm.lpm.value, fm.lpm.prefix_len = value, plen
    te.action.action.action_id = action.preamble.id
    te.action.action.params.add(param_id=1, value=b"\x01\x01")
    if params:
        te.action.action.params.add(param_id=2, value=b"\x02")
    return update


# --------------------------------------------------------------------------- tables


def test_insert_read_modify_delete_over_grpc(rig):
    client = rig.client()
    assert client.is_primary
    route(client, "10.0.1.0/24", NH1, 1)
    route(client, "10.0.2.0/24", NH2, 2)
    entries = {e["match"][DST]: (e["action"], e["params"]) for e in client.tables[LPM].read()}
    assert entries == {
        (0x0A000100, 24): ("MyIngress.ipv4_forward", {"dstAddr": 0x0101, "port": 1}),
        (0x0A000200, 24): ("MyIngress.ipv4_forward", {"dstAddr": 0x0202, "port": 2}),
    }
    route(client, "10.0.1.0/24", NH2, 7, kind="modify")
    (modified,) = [e for e in client.tables[LPM].read() if e["match"][DST][0] == 0x0A000100]
    assert modified["params"] == {"dstAddr": 0x0202, "port": 7}
    client.tables[LPM].delete({DST: "10.0.1.0/24"})
    assert [e["match"][DST] for e in client.tables[LPM].read()] == [(0x0A000200, 24)]
    # The switch itself holds what the client reads back.
    (table,) = [t for t in rig.server.switch.tables if t.name == "MyIngress.ipv4_lpm"]
    assert len(table) == 1


def test_default_action_and_batches_over_grpc(rig):
    client = rig.client()
    client.tables[LPM].default.modify(FWD, {"dstAddr": NH1, "port": 9})
    assert client.tables[LPM].default.read()["params"] == {"dstAddr": 0x0101, "port": 9}
    with client.batch():
        for i in range(20):
            route(client, f"10.1.{i}.0/24", NH1, i)
    assert len(client.tables[LPM].read()) == 20


def test_bad_writes_get_bmv2_codes_and_change_nothing(rig):
    client = rig.client()
    route(client, "10.0.1.0/24", NH1, 1)
    before = client.tables.read()
    # Unknown table id.
    bad_table = lpm_update(client, pb.Update.INSERT, b"\x0a\x00\x02\x00", 24, table_id=0x02FFFFFF)
    assert code_of(client.write, [bad_table]) == "NOT_FOUND"
    # A 5-byte value for a 32-bit key.
    wide = lpm_update(client, pb.Update.INSERT, b"\x01\x0a\x00\x02\x00", 24)
    assert code_of(client.write, [wide]) == "INVALID_ARGUMENT"
    # Missing mandatory exact key field of ecmp_nhop.
    assert code_of(client.tables["ecmp_nhop"].insert, {"meta.ecmp_group": 1}, FWD,
                   {"dstAddr": NH1, "port": 1}) == "INVALID_ARGUMENT"
    # Missing action parameter.
    no_port = lpm_update(client, pb.Update.INSERT, b"\x0a\x00\x03\x00", 24, params=False)
    assert code_of(client.write, [no_port]) == "INVALID_ARGUMENT"
    # Duplicate entry.
    assert code_of(route, client, "10.0.1.0/24", NH2, 2) == "ALREADY_EXISTS"
    # Deleting what is not there.
    assert code_of(client.tables[LPM].delete, {DST: "10.9.9.0/24"}) == "NOT_FOUND"
    assert client.tables.read() == before


def test_failed_batch_reports_every_update_with_its_index(rig):
    client = rig.client()
    route(client, "10.0.1.0/24")
    good = lpm_update(client, pb.Update.INSERT, b"\x0a\x00\x05\x00", 24)
    dup = lpm_update(client, pb.Update.INSERT, b"\x0a\x00\x01\x00", 24)
    wide = lpm_update(client, pb.Update.INSERT, b"\x01\x0a\x00\x02\x00", 24)
    with pytest.raises(P4RuntimeError) as info:
        client.write([good, dup, wide])
    err = info.value
    assert (err.code, err.index) == ("ALREADY_EXISTS", 1)
    assert [(d.index, d.code) for d in err.details] == [(1, "ALREADY_EXISTS"),
                                                        (2, "INVALID_ARGUMENT")]
    # CONTINUE_ON_ERROR: the good update is in, the bad ones changed nothing.
    assert sorted(e["match"][DST] for e in client.tables[LPM].read()) == [
        (0x0A000100, 24), (0x0A000500, 24)]


def test_failed_write_carries_the_grpc_status_details(rig):
    """What p4runtime-shell reads: UNKNOWN with a p4.v1.Error per update in
    the google.rpc.Status of grpc-status-details-bin."""
    from google.rpc import code_pb2, status_pb2

    transport = rig.transport()
    client = P4RuntimeClient(transport)
    route(client, "10.0.1.0/24")
    request = pb.WriteRequest(device_id=0)
    request.election_id.low = 1
    request.updates.append(lpm_update(client, pb.Update.INSERT, b"\x0a\x00\x01\x00", 24))
    with pytest.raises(RpcError) as info:
        transport.write(request)
    assert info.value.code == code_pb2.UNKNOWN
    status = status_pb2.Status.FromString(info.value.details)
    (packed,) = status.details
    assert packed.type_url == "type.googleapis.com/p4.v1.Error"
    error = pb.Error.FromString(packed.value)
    assert error.canonical_code == code_pb2.ALREADY_EXISTS


def test_wrong_device_id_is_not_found(rig):
    client = rig.client()
    request = pb.ReadRequest(device_id=7)
    request.entities.add().table_entry.SetInParent()
    assert code_of(client._rpc, client.transport.read, request) == "NOT_FOUND"
    stranger = rig.transport((0, 9), device_id=7)
    with pytest.raises(RpcError) as info:
        stranger.arbitrate()
    assert info.value.code == 5  # NOT_FOUND ends that stream


# --------------------------------------------------------------------------- arbitration


def test_backup_cannot_write_and_primary_changes_are_announced(rig):
    primary = rig.client((0, 10))
    backup = rig.client((0, 5))
    assert primary.is_primary and not backup.is_primary
    assert code_of(route, backup, "10.0.9.0/24") == "PERMISSION_DENIED"
    assert primary.tables[LPM].read() == []
    assert backup.tables[LPM].read() == []  # reading is open to everyone
    # A higher election id takes over; both others hear it.
    newcomer = rig.client((1, 0))
    assert newcomer.is_primary
    wait_for(lambda: not primary.is_primary)
    assert code_of(route, primary, "10.0.9.0/24") == "PERMISSION_DENIED"
    route(newcomer, "10.0.9.0/24")
    # The primary leaves: everyone hears there is no primary, and nobody is
    # promoted (P4Runtime 1.1 and later) until an id as high as (1, 0) comes.
    notices: list[object] = []
    primary.transport.subscribe(notices.append)
    newcomer.transport.close()
    wait_for(lambda: notices)
    (notice,) = notices
    assert notice.arbitration.status.code == 5  # NOT_FOUND: no primary
    assert (notice.arbitration.election_id.high, notice.arbitration.election_id.low) == (1, 0)
    assert not primary.is_primary and not backup.is_primary
    assert code_of(route, primary, "10.0.10.0/24") == "PERMISSION_DENIED"
    primary.election_id = (1, 1)
    assert primary.arbitrate()  # its own notice is the reply, not a stream message
    assert len(notices) == 1
    route(primary, "10.0.10.0/24")
    assert len(primary.tables[LPM].read()) == 2


def test_duplicate_election_id_ends_the_new_stream(rig):
    rig.client((0, 3))
    with pytest.raises(P4RuntimeError) as info:
        rig.client((0, 3))
    assert info.value.code == "INVALID_ARGUMENT"


def test_without_a_primary_nobody_writes(rig):
    """The spec's rule, not PI's grpc_cli shortcut: with no primary a write is
    refused with or without an election id."""
    transport = rig.transport()
    client = P4RuntimeClient(transport, arbitrate=False)
    assert code_of(route, client, "10.0.1.0/24") == "PERMISSION_DENIED"
    request = pb.WriteRequest(device_id=0)  # no election id at all (grpc_cli style)
    request.updates.append(lpm_update(client, pb.Update.INSERT, b"\x0a\x00\x01\x00", 24))
    with pytest.raises(RpcError) as info:
        transport.write(request)
    assert info.value.code == 7  # PERMISSION_DENIED
    assert client.tables[LPM].read() == []


def test_capabilities_report_the_installed_p4runtime_version(rig):
    assert rig.client().api_version() == importlib.metadata.version("p4runtime")


# --------------------------------------------------------------------------- packet I/O


def test_packet_out_enters_the_switch_on_the_cpu_port(io_rig):
    client = io_rig.client()
    frame = bytes.fromhex("000000000002" "00000000000a" "0800") + b"hello"
    client.packet_out(frame, {"egress_port": 3})
    client.packet_out(frame, {"egress_port": 7})
    service = io_rig.server.service
    wait_for(lambda: len(service.emitted) == 2)
    assert service.emitted == [(3, frame), (7, frame)]


def test_packet_in_reaches_the_primary_only(io_rig):
    primary = io_rig.client((0, 2))
    backup = io_rig.client((0, 1))
    got: list[PacketIn] = []
    backup_got: list[PacketIn] = []
    primary.on_packet_in(got.append)
    backup.on_packet_in(backup_got.append)
    frame = bytes.fromhex("0000000000ee" "00000000000a" "0800") + b"miss"
    with io_rig.server.lock:  # as the live switch's data-plane thread does
        assert io_rig.server.service.process(5, frame) == []
    wait_for(lambda: got)
    # fwd misses: send_to_cpu(1) puts a packet_in header (ingress_port, reason).
    assert got == [PacketIn(frame, {"ingress_port": 5, "reason": 1})]
    time.sleep(0.05)
    assert backup_got == []


def test_backup_packet_out_is_ignored(io_rig):
    primary = io_rig.client((0, 2))
    backup = io_rig.client((0, 1))
    frame = bytes.fromhex("000000000002" "00000000000a" "0800")
    backup.packet_out(frame + b"backup", {"egress_port": 3})
    primary.packet_out(frame + b"primary", {"egress_port": 4})
    service = io_rig.server.service
    wait_for(lambda: service.emitted)
    time.sleep(0.05)
    assert service.emitted == [(4, frame + b"primary")]


def test_bad_packet_out_comes_back_as_a_stream_error(io_rig):
    client = io_rig.client()
    seen = threading.Event()
    client.on_stream_error(lambda error: seen.set())
    client.packet_out(b"x", {"egress_port": 512})  # 10 bits for a 9-bit field
    assert seen.wait(5)
    assert client.stream_errors[0].code == "INVALID_ARGUMENT"


def test_digest_lists_and_acks_over_the_stream(io_rig):
    client = io_rig.client()
    client.digests["learn_t"].insert(max_timeout_ns=0, max_list_size=1,
                                     ack_timeout_ns=10**12)
    lists: list[DigestList] = []
    client.on_digest(lists.append)
    frame = bytes.fromhex("0000000000ee" "00000000000a" "0800") + b"x"
    with io_rig.server.lock:
        io_rig.server.service.process(4, frame)
    wait_for(lambda: lists)
    assert [(d.name, d.list_id, d.data) for d in lists] == [
        ("learn_t", 1, [{"srcAddr": 0x0A, "port": 4}])]
    # The ack is sent by the client; once it lands the same sample reports again.
    dig = next(iter(io_rig.server.service._digests.values()))
    wait_for(lambda: not dig.inflight)
    with io_rig.server.lock:
        io_rig.server.service.process(4, frame)
    wait_for(lambda: len(lists) == 2)
    assert lists[1].list_id == 2


# --------------------------------------------------------------------------- pipeline config


def test_set_then_get_forwarding_pipeline_config(empty_rig):
    transport = empty_rig.transport((0, 1))
    get = pb.GetForwardingPipelineConfigRequest(device_id=0)
    with pytest.raises(RpcError) as info:
        transport.get_pipeline_config(get)
    assert info.value.code == 9  # FAILED_PRECONDITION: no pipeline yet
    assert transport.arbitrate().status.code == 0
    config = device_config("l3_forward", L3.read_text())
    transport.set_pipeline(None, config, cookie=42)
    reply = transport.get_pipeline_config(get).config
    expected = build_p4info(compile_file(L3).schema)
    assert reply.p4info.SerializeToString(deterministic=True) == expected.SerializeToString(
        deterministic=True)
    assert reply.p4_device_config == config
    assert decode_device_config(reply.p4_device_config) == ("l3_forward", L3.read_text())
    assert reply.cookie.cookie == 42
    cookie_only = transport.get_pipeline_config(
        pb.GetForwardingPipelineConfigRequest(device_id=0, response_type=1)).config
    assert (cookie_only.cookie.cookie, cookie_only.p4_device_config) == (42, b"")
    assert not cookie_only.HasField("p4info")
    # The new pipeline serves the client, which fetches the P4Info itself.
    client = P4RuntimeClient(transport, election_id=(0, 1))
    route(client, "10.0.1.0/24")
    assert empty_rig.server.switch.program.name == "l3_forward"
    # The same config again with RECONCILE_AND_COMMIT keeps the entries.
    transport.set_pipeline(None, config, action="RECONCILE_AND_COMMIT")
    assert len(client.tables[LPM].read()) == 1
    # VERIFY_AND_COMMIT starts from a clean state.
    transport.set_pipeline(reply.p4info, config)
    assert client.tables[LPM].read() == []


def test_pipeline_config_errors_change_nothing(empty_rig):
    transport = empty_rig.transport((0, 1))
    transport.arbitrate()
    source = L3.read_text()
    transport.set_pipeline(None, device_config("l3_forward", source))
    client = P4RuntimeClient(transport, election_id=(0, 1))
    route(client, "10.0.1.0/24")

    def code(*args, **kwargs) -> int:
        with pytest.raises(RpcError) as info:
            transport.set_pipeline(*args, **kwargs)
        return info.value.code

    broken = source.replace("table ipv4_lpm {", "table ipv4_lpm {{", 1)
    with pytest.raises(RpcError) as info:
        transport.set_pipeline(None, device_config("broken", broken), action="VERIFY")
    assert info.value.code == 3
    assert "broken.p4:" in info.value.message and "error:" in info.value.message
    assert code(None, b"") == 3  # INVALID_ARGUMENT: no device config
    assert code(None, b'{"format": "bmv2-json"}') == 3
    io_p4info = build_p4info(compile_file(PACKET_IO).schema)
    assert code(io_p4info, device_config("l3_forward", source)) == 3  # P4Info of another program
    assert code(None, device_config("l3_forward", source), action="UNSPECIFIED") == 3
    assert code(None, b"", action="COMMIT") == 3  # COMMIT takes no config
    assert code(None, device_config("x", source + "\n"), action="RECONCILE_AND_COMMIT") == 12
    # A backup may not change the pipeline.
    backup = empty_rig.transport((0, 0))
    backup.arbitrate()
    with pytest.raises(RpcError) as info:
        backup.set_pipeline(None, device_config("l3_forward", source))
    assert info.value.code == 7  # PERMISSION_DENIED
    assert len(client.tables[LPM].read()) == 1


def test_verify_and_save_then_commit(empty_rig):
    transport = empty_rig.transport((0, 1))
    transport.arbitrate()
    transport.set_pipeline(None, device_config("l3_forward", L3.read_text()))
    request = pb.SetForwardingPipelineConfigRequest(device_id=0)
    request.action = request.COMMIT
    with pytest.raises(RpcError) as info:
        transport.set_pipeline_config(request)
    assert info.value.code == 9  # FAILED_PRECONDITION: nothing saved
    transport.set_pipeline(None, device_config("packet_io", PACKET_IO.read_text()),
                           action="VERIFY_AND_SAVE")
    assert empty_rig.server.switch.program.name == "l3_forward"  # still serving the old one
    request = pb.SetForwardingPipelineConfigRequest(device_id=0)
    request.action = request.COMMIT
    transport.set_pipeline_config(request)
    assert empty_rig.server.switch.program.name == "packet_io"
    client = P4RuntimeClient(transport, election_id=(0, 1))
    assert client.names.table("fwd").preamble.name == "IoIngress.fwd"


def test_without_a_pipeline_requests_fail_as_in_bmv2(empty_rig):
    transport = empty_rig.transport()
    assert transport.arbitrate().status.code == 0  # the primary's write gets past arbitration
    write = pb.WriteRequest(device_id=0)
    write.election_id.low = 1
    read = pb.ReadRequest(device_id=0)
    read.entities.add().table_entry.SetInParent()
    for call, request in ((transport.write, write), (transport.read, read)):
        with pytest.raises(RpcError) as info:
            call(request)
        assert (info.value.code, info.value.message) == (
            9, "No forwarding pipeline config set for this device")


def test_target_hooks_see_packet_outs_and_new_pipelines():
    injected: list[tuple[int, bytes]] = []
    pipelines: list[str] = []
    server = P4RuntimeServer(
        cpu_port=CPU, inject=lambda port, frame: injected.append((port, frame)),
        on_pipeline=lambda switch, service: pipelines.append(switch.program.name),
    )
    r = Rig(server)
    try:
        server.set_pipeline(PACKET_IO)
        client = r.client()
        client.packet_out(b"\xde\xad", {"egress_port": 3, "flags": 5})
        wait_for(lambda: injected)
        # egress_port 000000011, flags 101, _pad 0000 in front of the payload
        assert injected == [(CPU, b"\x01\xd0\xde\xad")]
        assert pipelines == ["packet_io"]
    finally:
        r.close()


def test_unreachable_server_is_unavailable():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(RpcError) as info:
        GrpcTransport(f"127.0.0.1:{port}", connect_timeout=0.3)
    assert info.value.code == 14  # UNAVAILABLE
    assert time.monotonic() - start < 3


def test_bench_grpc_writes_reports_rates():
    from benchmarks.p4rt import bench_grpc_writes

    report = bench_grpc_writes(40, batch=10)
    assert (report["entries"], report["writes"], report["batch"]) == (40, 80, 10)
    for key in ("client_single", "raw_single", "raw_batched"):
        assert report[f"{key}_writes_per_s"] > 0


def test_a_program_with_directly_called_actions_takes_its_own_p4info(empty_rig):
    """P4Info lists actions a control calls directly (gpint.p4's free_slot),
    as p4c does; the server must accept the P4Info built for the program."""
    transport = empty_rig.transport((0, 1))
    assert transport.arbitrate().status.code == 0
    gpint = program_path("gpint")
    p4info = build_p4info(compile_file(gpint).schema)
    assert "MyIngress.free_slot" in {a.preamble.name for a in p4info.actions}
    from dataplane.compiler.frontend.preprocess import flatten_includes

    transport.set_pipeline(p4info, device_config("gpint", flatten_includes(gpint)))
    assert empty_rig.server.switch.program.name == "gpint"
