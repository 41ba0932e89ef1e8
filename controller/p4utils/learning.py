"""BMv2's learning notifications (the nanomsg socket Thrift controllers
read digests from), fed by P4Runtime DigestLists.

A Thrift controller asks ``client.bm_mgmt_get_info().notifications_socket``
for an address, subscribes to it with ``nnpy`` and unpacks each message as
BMv2 packs it: a 32-byte header ``<iQiiQi`` (topic, device id, context id,
list id, buffer id, sample count), then each sample's fields big-endian in
whole bytes. The shim's ``nnpy`` connects to the address this module hands
out, whose messages are the switch's DigestLists packed that way; the
controller's ``bm_learning_ack_buffer`` acknowledges the list.
"""

from __future__ import annotations

import queue
import struct
import threading
from dataclasses import dataclass
from typing import Any

from controller.p4rt.client import DigestList

SCHEME = "intbed-learn://"
_HEADER = struct.Struct("<iQiiQi")
_TOPIC_LEARN = 0x4C45411F  # any fixed topic: controllers skip it
# Digests are reported one sample a list at once; a sample already sent is
# not sent again for this long unless acknowledged (BMv2's learning filter).
ACK_TIMEOUT_NS = 1_000_000_000
_ENDPOINTS: dict[str, LearningClient] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class MgmtInfo:
    notifications_socket: str


def endpoint(url: str) -> LearningClient:
    with _LOCK:
        found = _ENDPOINTS.get(url)
    if found is None:
        raise ConnectionRefusedError(f"{url}: no switch API of this process hands out this "
                                     "notifications socket")
    return found


class LearningClient:
    """The part of BMv2's Thrift client controllers call directly."""

    def __init__(self, api: Any) -> None:
        self._api = api
        self.url = f"{SCHEME}{id(self)}"
        self._queues: list[queue.SimpleQueue[bytes]] = []
        self._lists: dict[int, DigestList] = {}
        self._widths: dict[int, list[int]] = {}
        self._started = False

    def bm_mgmt_get_info(self) -> MgmtInfo:
        with _LOCK:
            _ENDPOINTS[self.url] = self
        return MgmtInfo(self.url)

    def subscribe(self) -> queue.SimpleQueue[bytes]:
        """A queue of packed learning messages; digests are enabled on first use."""
        q: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._queues.append(q)
        if not self._started:
            self._started = True
            p4rt = self._api.p4rt
            p4rt.on_digest(self._on_digest, ack=False)
            with p4rt.batch():
                for digest in p4rt.digests.values():
                    digest.insert(max_timeout_ns=0, max_list_size=1,
                                  ack_timeout_ns=ACK_TIMEOUT_NS)
        return q

    def _member_widths(self, digest_id: int) -> list[int]:
        widths = self._widths.get(digest_id)
        if widths is None:
            p4rt = self._api.p4rt
            info = p4rt.names.by_id(digest_id)
            struct_name = info.type_spec.struct.name
            members = p4rt.p4info.type_info.structs[struct_name].members
            widths = [m.type_spec.bitstring.bit.bitwidth for m in members]
            self._widths[digest_id] = widths
        return widths

    def _on_digest(self, event: DigestList) -> None:
        widths = self._member_widths(event.digest_id)
        body = bytearray()
        for sample in event.data:
            values = list(sample.values()) if isinstance(sample, dict) else (
                list(sample) if isinstance(sample, tuple) else [sample])
            for value, width in zip(values, widths, strict=False):
                body += int(value).to_bytes((width + 7) // 8, "big")
        self._lists[event.list_id] = event
        device = self._api.p4rt.device_id
        message = _HEADER.pack(_TOPIC_LEARN, device, 0, event.list_id, event.list_id,
                               len(event.data)) + bytes(body)
        for q in self._queues:
            q.put(message)

    def bm_learning_ack_buffer(self, ctx_id: int, list_id: int, buffer_id: int) -> None:
        event = self._lists.pop(list_id, None)
        if event is not None:
            self._api.p4rt.digests.ack(event)

    def bm_learning_ack(self, ctx_id: int, list_id: int, buffer_id: int,
                        sample_ids: Any) -> None:
        self.bm_learning_ack_buffer(ctx_id, list_id, buffer_id)

    def bm_reset_state(self) -> None:
        self._api.reset_state()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        from controller.p4utils.errors import NotHonouredError

        raise NotHonouredError(f"client.{name}", "intbed speaks P4Runtime, not BMv2's "
                               "Thrift; use the SimpleSwitchThriftAPI call instead")
