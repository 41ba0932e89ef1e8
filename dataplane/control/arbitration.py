"""P4Runtime client arbitration for one device: who is primary, who may write.

The in-process service (``RuntimeService`` and its sessions) and the gRPC
server (``P4RuntimeServer``, one controller per StreamChannel) both keep
their controllers here, so a client meets the same rules whichever way it
reaches the switch. The rules are those of the P4Runtime specification
(v1.4/v1.5), section numbers as there:

- Identity (§5): a stream that sent an accepted MasterArbitrationUpdate is a
  live controller, known by (device_id, role, election_id); the election ids
  of live controllers are unique, unary calls identify their sender by the
  same triple.
- Roles (§5.1, §5.2): only the default role (no role name, no role config:
  full pipeline access) exists. A role name (or the deprecated role id) is a
  role the device does not know: NOT_FOUND; a ``role.config`` matches no
  scheme agreed on: INVALID_ARGUMENT.
- A stream's first MasterArbitrationUpdate (§5.3, case 1), checked in this
  order, each failure ending the stream: unknown device NOT_FOUND, unknown
  role NOT_FOUND, an election id another live controller holds
  INVALID_ARGUMENT, a role config INVALID_ARGUMENT, more than
  ``MAX_CONTROLLERS`` live controllers RESOURCE_EXHAUSTED.
- Later updates on a live stream (§5.3, case 2): another device id or
  another role FAILED_PRECONDITION, a role config INVALID_ARGUMENT, an
  election id held by another live controller INVALID_ARGUMENT (all end the
  stream); otherwise the stream's election id is replaced.
- Primary (§5.3, §16.2): the device remembers the highest election id it has
  ever been sent (``highest``). A controller whose id is at least that high
  becomes, or stays, primary; every other controller is a backup. When the
  primary leaves or lowers its id there is no primary until some controller
  sends an id at least as high as ``highest``: the next-highest backup is
  not promoted (spec v1.1 and later).
- Unset election id (§16.2.1): lower than any id, never primary, not
  subject to the uniqueness check. ``{high: 0, low: 0}`` is a set id (the
  lowest one), not the unset one.
- Notifications (§5.4): a StreamMessageResponse whose arbitration carries
  the device id, the role, ``highest`` (unset while no controller was ever
  primary) and a status: OK for the primary, ALREADY_EXISTS for a backup
  while there is a primary, NOT_FOUND for a backup while there is none.
  Who hears one: when a controller becomes or stays primary, every live
  controller (the others first, the new primary last); when the primary
  lowers its id, every live controller; when a backup announces itself,
  only that backup; when the primary's stream ends, every remaining one.
  The sender's own notification is the value ``update`` returns (its
  transport sends it back on that stream); the others go through their
  controllers' ``send``.
- Write and SetForwardingPipelineConfig (§12, §14): unknown device or role
  NOT_FOUND, then PERMISSION_DENIED unless the request carries the primary's
  election id (so also when there is no primary, or no election id). Read
  (§13): unknown device or role NOT_FOUND; anyone may read.
- Writes in flight (§5.3, 1.b.iii): ``lock`` is held across a write's check
  and its updates and across every arbitration change, so a primary change
  waits for the writes already started and none starts in between.
- Packet I/O, digests (§16.1, §5): only the primary sends packet-outs and
  digest acks (others' are ignored, as BMv2's PI does) and only the primary
  receives PacketIns and DigestLists (``publish``).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any

from google.rpc import code_pb2

from dataplane.compiler.p4info import p4runtime_protos
from dataplane.control.errors import P4RuntimeServiceError, fail

p4r = p4runtime_protos().p4runtime_pb2

# Live controllers per device (BMv2's PI: DeviceState::max_connections).
MAX_CONTROLLERS = 16
DEFAULT_ROLE = ""

ElectionId = tuple[int, int]
Send = Callable[[Any], None]


def election_id(message: Any) -> ElectionId | None:
    """A message's ``election_id`` as (high, low), or None when unset."""
    if not message.HasField("election_id"):
        return None
    return message.election_id.high, message.election_id.low


def _show(eid: ElectionId | None) -> str:
    return "unset" if eid is None else f"(high={eid[0]}, low={eid[1]})"


@dataclasses.dataclass(eq=False)
class Controller:
    """One stream channel and what it announced; ``send`` carries the
    notifications meant for it back on that stream."""

    send: Send
    device_id: int | None = None
    role: str = DEFAULT_ROLE
    election_id: ElectionId | None = None
    live: bool = False  # has sent an accepted MasterArbitrationUpdate


class Arbitration:
    """The controllers of one device and the rules above (module docstring)."""

    def __init__(self, device_id: int, *, max_controllers: int = MAX_CONTROLLERS) -> None:
        self.device_id = device_id
        self.max_controllers = max_controllers
        self.lock = threading.RLock()
        self._live: list[Controller] = []
        self._primary: Controller | None = None
        self.highest: ElectionId | None = None

    # ------------------------------------------------------------------ state

    @property
    def primary(self) -> Controller | None:
        return self._primary

    @property
    def controllers(self) -> list[Controller]:
        """The live controllers, in the order they joined."""
        return list(self._live)

    def is_primary(self, controller: Controller) -> bool:
        return controller is self._primary

    def open(self, send: Send) -> Controller:
        """A new stream channel; it takes part once its arbitration is accepted."""
        return Controller(send)

    def reset(self) -> None:
        """Forget every controller and the highest election id (a full restart, §16.2)."""
        with self.lock:
            for controller in self._live:
                controller.live = False
            self._live.clear()
            self._primary = None
            self.highest = None

    # ------------------------------------------------------------------ streams

    def update(self, controller: Controller, arbitration: Any) -> Any:
        """Apply a MasterArbitrationUpdate from ``controller``'s stream.

        Returns the StreamMessageResponse for that stream; other controllers'
        notifications are sent through their ``send``. A refusal raises
        ``P4RuntimeServiceError`` after the controller has left (the stream
        ends with that status).
        """
        with self.lock:
            try:
                self._accept(controller, arbitration)
            except P4RuntimeServiceError:
                self.close(controller)
                raise
            return self._elect(controller)

    def close(self, controller: Controller) -> None:
        """The controller's stream ended; when it was the primary every other
        controller hears that there is none."""
        with self.lock:
            if not controller.live:
                return
            controller.live = False
            self._live.remove(controller)
            if controller is self._primary:
                self._primary = None
                for other in self._live:
                    other.send(self._notice(other))

    def _accept(self, controller: Controller, arb: Any) -> None:
        role = arb.role.name
        eid = election_id(arb)
        if not controller.live:  # the stream's first arbitration (§5.3, case 1)
            self.check_device(arb.device_id)
            self._check_role_name(role, arb.role.id)
            self._check_unique(controller, eid)
            self._check_role_config(arb)
            if len(self._live) >= self.max_controllers:
                raise fail("RESOURCE_EXHAUSTED",
                           f"too many controllers (at most {self.max_controllers})")
            controller.device_id, controller.role = arb.device_id, role
            controller.election_id, controller.live = eid, True
            self._live.append(controller)
            return
        if arb.device_id != controller.device_id:  # a live stream (§5.3, case 2)
            raise fail("FAILED_PRECONDITION",
                       f"the stream is for device {controller.device_id}, not {arb.device_id}")
        if role != controller.role or arb.role.id:
            raise fail("FAILED_PRECONDITION",
                       "a stream keeps its role; open a new stream for another role")
        self._check_role_config(arb)
        self._check_unique(controller, eid)
        controller.election_id = eid

    def _check_unique(self, controller: Controller, eid: ElectionId | None) -> None:
        if eid is None:
            return
        if any(c.election_id == eid for c in self._live if c is not controller):
            raise fail("INVALID_ARGUMENT",
                       f"election id {_show(eid)} is already used by another controller")

    @staticmethod
    def _check_role_config(arb: Any) -> None:
        if arb.role.HasField("config"):
            raise fail("INVALID_ARGUMENT",
                       "role.config is not supported: the default role has full pipeline "
                       "access and no other role scheme is agreed on")

    def _elect(self, controller: Controller) -> Any:
        """Primary or backup after an accepted update (§5.3); the notices of §5.4."""
        eid = controller.election_id
        was_primary = controller is self._primary
        if eid is not None and (self.highest is None or eid >= self.highest):
            self.highest = eid
            self._primary = controller
            self._tell_others(controller)
        elif was_primary:  # the primary lowered its id: now there is none
            self._primary = None
            self._tell_others(controller)
        return self._notice(controller)

    def _tell_others(self, controller: Controller) -> None:
        for other in self._live:
            if other is not controller:
                other.send(self._notice(other))

    def _notice(self, controller: Controller) -> Any:
        reply = p4r.StreamMessageResponse()
        arb = reply.arbitration
        arb.device_id = self.device_id
        if controller.role:
            arb.role.name = controller.role
        if self.highest is not None:
            arb.election_id.high, arb.election_id.low = self.highest
        if controller is self._primary:
            arb.status.code, arb.status.message = code_pb2.OK, "Is primary"
        elif self._primary is not None:
            arb.status.code, arb.status.message = code_pb2.ALREADY_EXISTS, "Is backup"
        else:
            arb.status.code = code_pb2.NOT_FOUND
            arb.status.message = "Is backup; there is no primary"
        return reply

    def publish(self, message: Any) -> bool:
        """Send a PacketIn or DigestList to the primary; False when there is none."""
        primary = self._primary
        if primary is None:
            return False
        primary.send(message)
        return True

    # ------------------------------------------------------------------ unary calls

    def check_device(self, device_id: int) -> None:
        if device_id != self.device_id:
            raise fail("NOT_FOUND", f"unknown device id {device_id}")

    @staticmethod
    def _check_role_name(role: str, role_id: int = 0) -> None:
        if role or role_id:
            shown = role or f"id {role_id}"
            raise fail("NOT_FOUND",
                       f"unknown role {shown!r}: this device has only the default role")

    def check_read(self, request: Any) -> None:
        """A ReadRequest's device and role (§13); reading needs no primary."""
        self.check_device(request.device_id)
        self._check_role_name(request.role)

    def check_write(self, request: Any) -> None:
        """A WriteRequest's or SetForwardingPipelineConfigRequest's sender must
        be the primary (§12, §14): its device, role and election id say so."""
        self.check_device(request.device_id)
        self._check_role_name(request.role)
        primary = self._primary
        eid = election_id(request)
        if primary is None:
            raise fail("PERMISSION_DENIED", "Not primary: this device has no primary client")
        if eid != primary.election_id:
            raise fail("PERMISSION_DENIED",
                       f"Not primary: election id {_show(eid)} is not the primary's")
