"""Client arbitration (P4Runtime spec §5, §16.2): the rules of
``dataplane.control.arbitration`` directly, then one scenario through the
in-process service and through the gRPC server, which must agree."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from google.rpc import code_pb2

from controller.p4rt import InProcessTransport, P4RuntimeClient, RpcError, protos
from controller.p4rt.grpc_transport import GrpcTransport
from dataplane.compiler.p4info import p4runtime_protos
from dataplane.compiler.pipeline import compile_file
from dataplane.control.arbitration import Arbitration, Controller
from dataplane.control.errors import P4RuntimeServiceError
from dataplane.control.grpc_server import P4RuntimeServer
from dataplane.control.service import RuntimeService
from dataplane.runtime.switch import Switch

p4r = p4runtime_protos().p4runtime_pb2
pb = protos().p4runtime_pb2
REPO = Path(__file__).resolve().parents[2]
L3 = REPO / "p4src" / "l3_forward.p4"
OK, NOT_FOUND, ALREADY_EXISTS = code_pb2.OK, code_pb2.NOT_FOUND, code_pb2.ALREADY_EXISTS
UNSET = None

# --------------------------------------------------------------------------- the rules


@dataclass
class Stream:
    """A controller plus everything the arbitration sent it (not its replies)."""

    controller: Controller
    inbox: list[Any] = field(default_factory=list)

    def notices(self) -> list[tuple[int, tuple[int, int] | None]]:
        out = []
        for m in self.inbox:
            arb = m.arbitration
            eid = (arb.election_id.high, arb.election_id.low) if arb.HasField(
                "election_id") else None
            out.append((arb.status.code, eid))
        self.inbox.clear()
        return out


def stream(arb: Arbitration) -> Stream:
    inbox: list[Any] = []
    return Stream(arb.open(inbox.append), inbox)


def update(device_id: int = 0, eid: tuple[int, int] | None = (0, 1), role: str = "",
           role_config: bool = False) -> Any:
    msg = p4r.MasterArbitrationUpdate(device_id=device_id)
    if eid is not None:
        msg.election_id.high, msg.election_id.low = eid
    if role:
        msg.role.name = role
    if role_config:
        msg.role.config.type_url = "type.googleapis.com/example.RoleConfig"
    return msg


def join(arb: Arbitration, s: Stream, eid: tuple[int, int] | None, **kwargs: Any
         ) -> tuple[int, tuple[int, int] | None]:
    reply = arb.update(s.controller, update(eid=eid, **kwargs)).arbitration
    got = (reply.election_id.high, reply.election_id.low) if reply.HasField(
        "election_id") else None
    return reply.status.code, got


def refused(code: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    with pytest.raises(P4RuntimeServiceError) as info:
        call(*args, **kwargs)
    assert info.value.code == code, info.value
    return info.value.message


def write_request(eid: tuple[int, int] | None, device_id: int = 0, role: str = "") -> Any:
    request = p4r.WriteRequest(device_id=device_id, role=role)
    if eid is not None:
        request.election_id.high, request.election_id.low = eid
    return request


def test_highest_election_id_is_primary_and_every_change_is_announced() -> None:
    arb = Arbitration(0)
    a, b, c = stream(arb), stream(arb), stream(arb)
    assert join(arb, a, (0, 10)) == (OK, (0, 10))
    # A backup joining hears only its own status.
    assert join(arb, b, (0, 5)) == (ALREADY_EXISTS, (0, 10))
    assert a.notices() == []
    # A higher id takes over: the others are told first, the new primary gets the reply.
    assert join(arb, c, (1, 0)) == (OK, (1, 0))
    assert a.notices() == b.notices() == [(ALREADY_EXISTS, (1, 0))]
    assert arb.is_primary(c.controller) and arb.highest == (1, 0)
    # A no-op update from the primary is a new election: everyone hears it again.
    assert join(arb, c, (1, 0)) == (OK, (1, 0))
    assert a.notices() == b.notices() == [(ALREADY_EXISTS, (1, 0))]


def test_primary_leaving_leaves_no_primary_until_an_id_as_high_comes() -> None:
    arb = Arbitration(0)
    a, b = stream(arb), stream(arb)
    join(arb, a, (0, 2))
    join(arb, b, (0, 1))
    b.notices()
    arb.close(a.controller)
    assert b.notices() == [(NOT_FOUND, (0, 2))]
    assert arb.primary is None  # the backup is not promoted
    refused("PERMISSION_DENIED", arb.check_write, write_request((0, 1)))
    # Re-announcing a lower id changes nothing; only the sender hears it.
    assert join(arb, b, (0, 1)) == (NOT_FOUND, (0, 2))
    # An id equal to the highest ever seen wins (the old primary coming back).
    c = stream(arb)
    assert join(arb, c, (0, 2)) == (OK, (0, 2))
    assert b.notices() == [(ALREADY_EXISTS, (0, 2))]
    arb.check_write(write_request((0, 2)))


def test_primary_lowering_its_id_is_announced_to_all() -> None:
    arb = Arbitration(0)
    a, b = stream(arb), stream(arb)
    join(arb, a, (0, 9))
    join(arb, b, (0, 1))
    assert join(arb, a, (0, 3)) == (NOT_FOUND, (0, 9))
    assert b.notices() == [(NOT_FOUND, (0, 9))]
    assert arb.primary is None


def test_a_backup_leaving_is_not_announced() -> None:
    arb = Arbitration(0)
    a, b = stream(arb), stream(arb)
    join(arb, a, (0, 9))
    join(arb, b, (0, 1))
    arb.close(b.controller)
    assert a.notices() == []
    assert arb.is_primary(a.controller)


def test_unset_election_id_is_never_primary_and_may_repeat() -> None:
    arb = Arbitration(0)
    a, b = stream(arb), stream(arb)
    # Nobody was ever primary: NOT_FOUND and no election id in the notice.
    assert join(arb, a, UNSET) == (NOT_FOUND, None)
    assert join(arb, b, UNSET) == (NOT_FOUND, None)
    refused("PERMISSION_DENIED", arb.check_write, write_request(UNSET))
    # {0, 0} is a set id, the lowest, and it wins over unset ones.
    c = stream(arb)
    assert join(arb, c, (0, 0)) == (OK, (0, 0))
    assert a.notices() == b.notices() == [(ALREADY_EXISTS, (0, 0))]
    arb.check_write(write_request((0, 0)))
    refused("PERMISSION_DENIED", arb.check_write, write_request(UNSET))


def test_first_arbitration_refusals_end_the_stream() -> None:
    arb = Arbitration(0, max_controllers=2)
    a = stream(arb)
    join(arb, a, (0, 1))
    assert "unknown device id 7" in refused("NOT_FOUND", join, arb, stream(arb), (0, 2),
                                            device_id=7)
    assert "default role" in refused("NOT_FOUND", join, arb, stream(arb), (0, 2), role="ops")
    refused("INVALID_ARGUMENT", join, arb, stream(arb), (0, 1))  # a's id
    refused("INVALID_ARGUMENT", join, arb, stream(arb), (0, 2), role_config=True)
    join(arb, stream(arb), (0, 2))
    refused("RESOURCE_EXHAUSTED", join, arb, stream(arb), (0, 3))
    assert len(arb.controllers) == 2


def test_later_arbitration_refusals_end_a_live_stream() -> None:
    arb = Arbitration(0)
    a, b = stream(arb), stream(arb)
    join(arb, a, (0, 5))
    join(arb, b, (0, 1))
    refused("FAILED_PRECONDITION", join, arb, b, (0, 1), device_id=3)
    assert b.controller not in arb.controllers
    join(arb, b, (0, 1))  # the same stream object arbitrating again is a new stream
    refused("FAILED_PRECONDITION", join, arb, b, (0, 1), role="ops")
    join(arb, b, (0, 1))
    refused("INVALID_ARGUMENT", join, arb, b, (0, 1), role_config=True)
    join(arb, b, (0, 1))
    b.notices()
    # The primary taking another live controller's id ends its stream: announced.
    refused("INVALID_ARGUMENT", join, arb, a, (0, 1))
    assert arb.primary is None
    assert b.notices() == [(NOT_FOUND, (0, 5))]


def test_who_may_write_and_read() -> None:
    arb = Arbitration(0)
    a = stream(arb)
    refused("PERMISSION_DENIED", arb.check_write, write_request((0, 1)))  # no primary yet
    join(arb, a, (0, 1))
    arb.check_write(write_request((0, 1)))
    refused("PERMISSION_DENIED", arb.check_write, write_request((0, 2)))
    refused("PERMISSION_DENIED", arb.check_write, write_request(UNSET))
    refused("NOT_FOUND", arb.check_write, write_request((0, 1), device_id=4))
    refused("NOT_FOUND", arb.check_write, write_request((0, 1), role="ops"))
    arb.check_read(p4r.ReadRequest(device_id=0))
    refused("NOT_FOUND", arb.check_read, p4r.ReadRequest(device_id=0, role="ops"))


def test_only_the_primary_receives_switch_messages() -> None:
    arb = Arbitration(0)
    a, b = stream(arb), stream(arb)
    message = p4r.StreamMessageResponse()
    assert not arb.publish(message)
    join(arb, a, (0, 2))
    join(arb, b, (0, 1))
    b.notices()
    assert arb.publish(message)
    assert a.inbox == [message] and b.inbox == []


def test_reset_forgets_the_highest_election_id() -> None:
    arb = Arbitration(0)
    a = stream(arb)
    join(arb, a, (5, 0))
    arb.reset()
    assert arb.primary is None and arb.highest is None and arb.controllers == []
    assert join(arb, stream(arb), (0, 1)) == (OK, (0, 1))


# --------------------------------------------------------------------------- both transports


@dataclass
class Peer:
    """One controller's transport, the arbitration notices it received and
    how to end its stream."""

    transport: Any
    close: Callable[[], None]
    notices: list[tuple[int, tuple[int, int] | None]] = field(default_factory=list)

    def on_message(self, message: Any) -> None:
        if message.WhichOneof("update") == "arbitration":
            self.notices.append(_notice(message))


def _notice(message: Any) -> tuple[int, tuple[int, int] | None]:
    arb = message.arbitration
    eid = (arb.election_id.high, arb.election_id.low) if arb.HasField("election_id") else None
    return arb.status.code, eid


class Side:
    """The switch reached in process (sessions) or over gRPC (streams)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.server: P4RuntimeServer | None = None
        self.service: RuntimeService | None = None
        self.transports: list[GrpcTransport] = []
        if kind == "grpc":
            self.server = P4RuntimeServer(program=L3)
            self.server.start()
        else:
            self.service = RuntimeService(Switch(compile_file(L3)))

    def peer(self) -> Peer:
        if self.service is not None:
            session = self.service.session()
            peer = Peer(InProcessTransport(session), session.close)
        else:
            assert self.server is not None
            transport = GrpcTransport(self.server.address, timeout=5)
            self.transports.append(transport)
            peer = Peer(transport, transport.close)
        peer.transport.subscribe(peer.on_message)
        return peer

    def close(self) -> None:
        for t in self.transports:
            t.close()
        if self.server is not None:
            self.server.stop()


def arbitrate(peer: Peer, eid: tuple[int, int] | None, device_id: int = 0, role: str = ""
              ) -> tuple[str, Any]:
    request = pb.StreamMessageRequest()
    request.arbitration.device_id = device_id
    if eid is not None:
        request.arbitration.election_id.high, request.arbitration.election_id.low = eid
    if role:
        request.arbitration.role.name = role
    try:
        (reply,) = peer.transport.stream(request)
    except RpcError as exc:
        return "ended", exc.code
    return "reply", _notice(reply)


def write(peer: Peer, eid: tuple[int, int] | None, prefix: int, role: str = "") -> str:
    """Insert one ipv4_lpm route as sent with this election id and role; the
    outcome's code name."""
    client = P4RuntimeClient(peer.transport, arbitrate=False)
    table = client.names.table("ipv4_lpm")
    action = client.names.action("ipv4_forward")
    client.close()
    request = pb.WriteRequest(device_id=0, role=role)
    if eid is not None:
        request.election_id.high, request.election_id.low = eid
    te = request.updates.add(type=pb.Update.INSERT).entity.table_entry
    te.table_id = table.preamble.id
    fm = te.match.add(field_id=table.match_fields[0].id)
    fm.lpm.value, fm.lpm.prefix_len = bytes([10, prefix, 0, 0]), 16
    te.action.action.action_id = action.preamble.id
    te.action.action.params.add(param_id=1, value=b"\x01")
    te.action.action.params.add(param_id=2, value=b"\x01")
    try:
        peer.transport.write(request)
    except RpcError as exc:
        return code_pb2.Code.Name(exc.code)
    return "OK"


def scenario(side: Side, settle: Callable[[dict[str, Peer]], None]) -> list[Any]:
    """Controllers come, write, take over, leave; every outcome in order.
    ``settle`` waits until the notices sent so far have arrived."""
    peers: dict[str, Peer] = {}
    trace: list[Any] = []

    def step(label: str, outcome: Any = None) -> None:
        settle(peers)
        notices = {name: list(p.notices) for name, p in peers.items() if p.notices}
        for p in peers.values():
            p.notices.clear()
        trace.append((label, outcome, notices))

    for name in ("a", "b", "c", "d", "e", "f", "g"):
        peers[name] = side.peer()
    a, b, c, d, e, f, g = peers.values()
    step("a joins (0,10)", arbitrate(a, (0, 10)))
    step("b joins (0,5)", arbitrate(b, (0, 5)))
    step("b writes", write(b, (0, 5), 1))
    step("a writes", write(a, (0, 10), 2))
    step("c joins (1,0)", arbitrate(c, (1, 0)))
    step("a writes again", write(a, (0, 10), 3))
    step("c writes", write(c, (1, 0), 4))
    step("c writes with a role", write(c, (1, 0), 5, role="ops"))
    step("d joins with b's id", arbitrate(d, (0, 5)))
    step("e joins unset", arbitrate(e, None))
    step("f joins device 7", arbitrate(f, (2, 0), device_id=7))
    step("g joins role ops", arbitrate(g, (2, 0), role="ops"))
    c.close()
    step("c leaves")
    step("a writes without a primary", write(a, (0, 10), 6))
    step("a again (0,10)", arbitrate(a, (0, 10)))
    step("a takes over (1,0)", arbitrate(a, (1, 0)))
    step("a writes as primary", write(a, (1, 0), 7))
    step("a steps down (0,11)", arbitrate(a, (0, 11)))
    step("b writes without a primary", write(b, (0, 5), 8))
    return trace


EXPECTED = [
    ("a joins (0,10)", ("reply", (OK, (0, 10))), {}),
    ("b joins (0,5)", ("reply", (ALREADY_EXISTS, (0, 10))), {}),
    ("b writes", "PERMISSION_DENIED", {}),
    ("a writes", "OK", {}),
    ("c joins (1,0)", ("reply", (OK, (1, 0))),
     {"a": [(ALREADY_EXISTS, (1, 0))], "b": [(ALREADY_EXISTS, (1, 0))]}),
    ("a writes again", "PERMISSION_DENIED", {}),
    ("c writes", "OK", {}),
    ("c writes with a role", "NOT_FOUND", {}),
    ("d joins with b's id", ("ended", code_pb2.INVALID_ARGUMENT), {}),
    ("e joins unset", ("reply", (ALREADY_EXISTS, (1, 0))), {}),
    ("f joins device 7", ("ended", NOT_FOUND), {}),
    ("g joins role ops", ("ended", NOT_FOUND), {}),
    ("c leaves", None, {"a": [(NOT_FOUND, (1, 0))], "b": [(NOT_FOUND, (1, 0))],
                        "e": [(NOT_FOUND, (1, 0))]}),
    ("a writes without a primary", "PERMISSION_DENIED", {}),
    ("a again (0,10)", ("reply", (NOT_FOUND, (1, 0))), {}),
    ("a takes over (1,0)", ("reply", (OK, (1, 0))),
     {"b": [(ALREADY_EXISTS, (1, 0))], "e": [(ALREADY_EXISTS, (1, 0))]}),
    ("a writes as primary", "OK", {}),
    ("a steps down (0,11)", ("reply", (NOT_FOUND, (1, 0))),
     {"b": [(NOT_FOUND, (1, 0))], "e": [(NOT_FOUND, (1, 0))]}),
    ("b writes without a primary", "PERMISSION_DENIED", {}),
]


@pytest.fixture
def sides() -> Iterator[dict[str, Side]]:
    made = {kind: Side(kind) for kind in ("in-process", "grpc")}
    yield made
    for side in made.values():
        side.close()


def test_same_scenario_same_outcomes_in_process_and_over_grpc(sides: dict[str, Side]) -> None:
    local = scenario(sides["in-process"], lambda peers: None)
    assert local == EXPECTED
    counts = iter([sum(len(n) for n in notices.values()) for _, _, notices in local])

    def settle(peers: dict[str, Peer]) -> None:
        """Wait for as many notices as the in-process run saw at this step
        (then a little longer, so an extra one would show)."""
        want = next(counts)
        deadline = time.monotonic() + 5
        while sum(len(p.notices) for p in peers.values()) < want:
            if time.monotonic() > deadline:
                break
            time.sleep(0.005)
        time.sleep(0.02)

    remote = scenario(sides["grpc"], settle)
    assert remote == local
