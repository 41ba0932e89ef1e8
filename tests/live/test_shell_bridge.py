"""The gRPC bridge to a sim switch's in-process P4Runtime service, with
intbed's own gRPC client: the same switch state both ways, one arbitration
shared by the in-process and gRPC controllers, the network's pipeline kept,
and the in-process controllers untouched when the bridge stops."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from controller.p4rt.client import P4RuntimeClient
from controller.p4rt.errors import P4RuntimeError, RpcError, code_name
from controller.p4rt.grpc_transport import GrpcTransport
from dataplane.control.service_bridge import ServiceBridge
from orchestration.sim import SimNetwork, build
from topologies.generators import build_topology

TABLE = "MyIngress.ipv4_lpm"
ROUTE = {"hdr.ipv4.dstAddr": (0x0A090900, 24)}


@pytest.fixture
def net() -> SimNetwork:
    return build(build_topology("line", n=2), "l3_forward")


@pytest.fixture
def bridge(net: SimNetwork) -> Iterator[ServiceBridge]:
    with ServiceBridge(net.services["s1"]) as srv:
        yield srv


def insert_route(client: P4RuntimeClient) -> None:
    client.tables[TABLE].insert(ROUTE, "MyIngress.ipv4_forward",
                                {"dstAddr": 0x909, "port": 2})


def grpc_client(bridge: ServiceBridge, election_id: tuple[int, int]) -> P4RuntimeClient:
    transport = GrpcTransport(bridge.address, bridge.device_id, election_id=election_id,
                              timeout=10.0, connect_timeout=10.0)
    return P4RuntimeClient(transport, device_id=bridge.device_id, election_id=election_id)


def test_reads_through_the_bridge_are_the_in_process_state(net, bridge) -> None:
    inside = net.clients["s1"]
    outside = grpc_client(bridge, (0, 0))
    assert outside.p4info == inside.p4info  # fetched from the switch
    assert outside.tables[TABLE].read() == inside.tables[TABLE].read()
    assert len(inside.tables[TABLE].read()) == 2
    # A backup (0,0 is below the network's 0,1) may read but not write.
    assert not outside.is_primary and inside.is_primary
    with pytest.raises(P4RuntimeError) as refused:
        insert_route(outside)
    assert refused.value.code == "PERMISSION_DENIED"
    # The in-process primary's write shows through the bridge at once.
    insert_route(inside)
    assert outside.tables[TABLE].read() == inside.tables[TABLE].read()
    assert len(outside.tables[TABLE].read()) == 3


def test_a_higher_election_id_takes_the_primary_role_from_the_network(net, bridge) -> None:
    inside = net.clients["s1"]
    outside = grpc_client(bridge, (1, 0))
    assert outside.is_primary
    with pytest.raises(P4RuntimeError) as refused:
        insert_route(inside)
    assert refused.value.code == "PERMISSION_DENIED"
    insert_route(outside)
    assert len(inside.tables[TABLE].read()) == 3


def test_the_pipeline_stays_the_networks(net, bridge) -> None:
    outside = grpc_client(bridge, (1, 0))
    with pytest.raises(RpcError) as refused:
        outside.transport.set_pipeline(outside.p4info, b"{}")
    assert code_name(refused.value.code) == "FAILED_PRECONDITION"
    assert "set by the network" in refused.value.message
    assert bridge.service is net.services["s1"]


def test_stopping_the_bridge_leaves_the_in_process_controllers(net) -> None:
    inside = net.clients["s1"]
    with ServiceBridge(net.services["s1"]) as srv:
        grpc_client(srv, (0, 0)).tables[TABLE].read()
    # The gRPC backup left; the network's primary still writes.
    insert_route(inside)
    assert len(inside.tables[TABLE].read()) == 3
