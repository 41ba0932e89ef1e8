"""Pipelined writes over real gRPC: applied in the order the calls were
made, read back by the next read, a refusal reported when it arrives."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from controller.p4rt import P4RuntimeClient
from controller.p4rt.errors import P4RuntimeError
from controller.p4rt.grpc_transport import GrpcTransport
from controller.p4utils.connect import CONTROLLER_ELECTION_ID
from controller.p4utils.pipeline import PipelinedTransport
from controller.p4utils.thrift_api import SimpleSwitchThriftAPI
from dataplane.compiler.pipeline import compile_file
from dataplane.control.service import RuntimeService
from dataplane.control.service_bridge import ServiceBridge
from dataplane.runtime.switch import Switch
from tests.p4app.test_cli_commands import PROGRAM


@pytest.fixture
def served() -> Iterator[tuple[SimpleSwitchThriftAPI, PipelinedTransport,
                               list[P4RuntimeError]]]:
    service = RuntimeService(Switch(compile_file(PROGRAM)))
    errors: list[P4RuntimeError] = []
    with ServiceBridge(service) as bridge:
        transport = PipelinedTransport(
            GrpcTransport(bridge.address, service.device_id, CONTROLLER_ELECTION_ID),
            errors.append)
        client = P4RuntimeClient(transport, device_id=service.device_id,
                                 election_id=CONTROLLER_ELECTION_ID)
        yield SimpleSwitchThriftAPI(9090, p4rt=client), transport, errors
        transport.close()


def test_writes_apply_in_call_order(served) -> None:  # type: ignore[no-untyped-def]
    api, transport, errors = served
    macs = [f"00:00:0a:00:{i >> 8:02x}:{i & 0xFF:02x}" for i in range(200)]
    handles = [api.table_add("dmac", "metered_forward", [m, "1"], ["2"]) for m in macs]
    for h in handles[::2]:
        api.table_modify("dmac", "metered_forward", h, ["9"])
    for h in handles[1::4]:
        api.table_delete("dmac", h)
    entries = api.p4rt.tables["Ing.dmac"].read()  # a read waits for every write
    assert errors == []
    assert len(entries) == 200 - 50
    by_mac = {e["match"]["hdr.ethernet.dstAddr"]: e["params"]["port"] for e in entries}
    for i, mac in enumerate(macs):
        key = int(mac.replace(":", ""), 16)
        if i % 4 == 1:
            assert key not in by_mac
        else:
            assert by_mac[key] == (9 if i % 2 == 0 else 2)


def test_a_refused_write_is_reported_and_the_rest_apply(served) -> None:  # type: ignore[no-untyped-def]
    api, transport, errors = served
    api.table_add("dmac", "drop", ["00:00:0a:00:00:01", "1"])
    api.p4rt.tables["Ing.dmac"].insert({"hdr.ethernet.dstAddr": 0x00000A000001,
                                        "sm.ingress_port": 1}, "Ing.drop")
    api.table_add("dmac", "drop", ["00:00:0a:00:00:02", "1"])
    transport.flush()
    assert [e.code for e in errors] == ["ALREADY_EXISTS"]
    assert len(api.p4rt.tables["Ing.dmac"].read()) == 2


def test_a_refused_insert_gives_its_handle_back(served) -> None:  # type: ignore[no-untyped-def]
    """As on BMv2, where a refused table_add never gets a handle."""
    api, transport, errors = served
    key = {"hdr.ethernet.dstAddr": 0x00000A000001, "sm.ingress_port": 1}
    api.p4rt.tables["Ing.dmac"].insert(key, "Ing.drop")
    assert api.table_add("dmac", "drop", ["00:00:0a:00:00:09", "1"]) == 1  # 0: the entry above
    assert api.table_add("dmac", "drop", ["00:00:0a:00:00:01", "1"]) == 2  # refused later
    transport.flush()
    assert [e.code for e in errors] == ["ALREADY_EXISTS"]
    assert api.table_add("dmac", "drop", ["00:00:0a:00:00:02", "1"]) == 2
    transport.flush()
    api.table_delete("dmac", 2)  # the handle names 00:00:0a:00:00:02's entry
    macs = {e["match"]["hdr.ethernet.dstAddr"] for e in api.p4rt.tables["Ing.dmac"].read()}
    assert macs == {0x00000A000001, 0x00000A000009}


def test_reset_state_on_a_switch_without_register_writes_is_quiet(served) -> None:  # type: ignore[no-untyped-def]
    """BMv2's server (and intbed's, by default) refuses register writes:
    reset_state skips the registers instead of reporting a refusal."""
    api, transport, errors = served
    api.table_add("dmac", "drop", ["00:00:0a:00:00:01", "1"])
    api.reset_state()
    transport.flush()
    assert errors == []
    assert api.p4rt.tables["Ing.dmac"].read() == []
