"""``SimpleSwitchP4RuntimeAPI`` with p4-utils' signatures, over intbed's client.

Match keys and parameters are strings as p4-utils takes them (``"10.0.0.0/24"``,
``"0x0a&&&0xff"``, ``"1..5"``); priorities are P4Runtime's (larger wins).
Bad input prints ``Error: ...`` as p4-utils does.
"""

from __future__ import annotations

import queue
from collections.abc import Sequence
from typing import Any

from controller.bmcli.runner import PRIORITY_BASE
from controller.p4rt.client import DigestList, P4RuntimeClient
from controller.p4utils.base import RunnerAPI, rate_words
from controller.p4utils.connect import find_switch, open_client, release_client
from controller.p4utils.errors import NotHonouredError, UIn_Error, bad_input


def _list(values: Any, what: str) -> list[str]:
    if not isinstance(values, list | tuple):
        raise TypeError(f"{what} is not a list.")
    return [str(v) for v in values]


def _keys(values: Any) -> list[str]:
    return [k.replace("..", "->") if ".." in k else k for k in _list(values, "match_keys")]


class SimpleSwitchP4RuntimeAPI(RunnerAPI):
    """One switch's P4Runtime session, named by device id and gRPC port as
    topology.json lists them."""

    catch_all = True  # p4-utils' P4Runtime API prints whatever a call raises

    def __init__(self, device_id: int, grpc_port: int, grpc_ip: str = "0.0.0.0",
                 p4rt_path: str | None = None, json_path: str | None = None,
                 *, p4rt: P4RuntimeClient | None = None) -> None:
        self.device_id, self.grpc_port, self.grpc_ip = device_id, grpc_port, grpc_ip
        self.p4rt_path, self.json_path = p4rt_path, json_path
        if p4rt is None:
            p4rt = open_client(find_switch(grpc_port=grpc_port, device_id=device_id))
        super().__init__(p4rt)
        self.client = p4rt
        self._digests: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._packets: queue.SimpleQueue[Any] = queue.SimpleQueue()
        p4rt.transport.subscribe(self._on_stream)

    def _on_stream(self, message: Any) -> None:
        kind = message.WhichOneof("update")
        if kind == "digest":
            self._digests.put(message.digest)
        elif kind == "packet":
            self._packets.put(message.packet)

    def _params(self, values: Any, what: str) -> list[str]:
        return _list(values, what)

    def _prio_words(self, table_name: str, prio: int | None) -> list[str]:
        if not self.runner.needs_priority(table_name):
            return []
        if prio is None or not 0 < int(prio) <= PRIORITY_BASE:
            raise UIn_Error(f"table {table_name} needs a priority in 1..{PRIORITY_BASE}")
        return [str(PRIORITY_BASE - int(prio))]

    # ------------------------------------------------------------------ tables

    @bad_input
    def table_add(self, table_name: str, action_name: str, match_keys: Sequence[Any],
                  action_params: Sequence[Any] = (), prio: int = 0, rates: Any = None,
                  pkts: int | None = None, byts: int | None = None) -> None:
        if pkts is not None or byts is not None:
            raise NotHonouredError("SimpleSwitchP4RuntimeAPI.table_add", "direct counter "
                                   "values given with an entry are not written by intbed")
        meter = None if rates is None else (self._direct("meter", table_name), rate_words(rates))
        self._apply("table_add", table_name, action_name, *_keys(match_keys), "=>",
                    *_list(action_params, "action_params"), *self._prio_words(table_name, prio))
        if meter is not None:  # checked before the entry was written
            handle = self.runner.handle_of(table_name, _keys(match_keys))
            self._apply("meter_set_rates", meter[0], handle, *meter[1])

    def _direct(self, what: str, table_name: str) -> str:
        table = self.runner.table_info(table_name)
        for obj in getattr(self.client.p4info, f"direct_{what}s"):
            if obj.direct_table_id == table.preamble.id:
                return obj.preamble.name
        raise UIn_Error(f"table {table_name} has no direct {what} attached.")

    def _handle(self, table_name: str, match_keys: Any, prio: int | None) -> int:
        cli = None
        if prio is not None and self.runner.needs_priority(table_name):
            cli = PRIORITY_BASE - int(prio)
        handle = self.runner.handle_of(table_name, _keys(match_keys), cli)
        if handle is None:
            raise UIn_Error(f"table {table_name} has no entry {list(match_keys)}")
        return handle

    @bad_input
    def table_delete_match(self, table_name: str, match_keys: Sequence[Any],
                           prio: int | None = None) -> None:
        self._apply("table_delete", table_name, self._handle(table_name, match_keys, prio))

    @bad_input
    def table_modify_match(self, table_name: str, action_name: str, match_keys: Sequence[Any],
                           action_params: Sequence[Any] = (), prio: int = 0, rates: Any = None,
                           pkts: int | None = None, byts: int | None = None) -> None:
        handle = self._handle(table_name, match_keys, prio or None)
        self._apply("table_modify", table_name, action_name, handle,
                    *_list(action_params, "action_params"))

    # ----------------------------------------------------------------- counters

    @bad_input
    def counter_read(self, counter_name: str, index: int) -> tuple[int, int]:
        packets, nbytes = self.client.counters[self._name("counters", counter_name)].read(
            int(index))
        return nbytes, packets

    @bad_input
    def direct_counter_read(self, direct_counter_name: str, match_keys: Sequence[Any],
                            prio: int = 0) -> tuple[int, int]:
        name = self._name("direct_counters", direct_counter_name)
        table = self.client.names.by_id(
            next(c for c in self.client.p4info.direct_counters
                 if c.preamble.name == name).direct_table_id)
        tname = table.preamble.name
        match, priority = self.runner.entry_key(
            tname, self._handle(tname, match_keys, prio or None))
        packets, nbytes = self.client.tables[tname].direct_counter.read(match, priority)
        return nbytes, packets

    @bad_input
    def direct_counter_reset(self, direct_counter_name: str) -> None:
        self._apply("counter_reset", direct_counter_name)

    # ------------------------------------------------------------------- meters

    @bad_input
    def direct_meter_set_rates(self, direct_meter_name: str, match_keys: Sequence[Any],
                               prio: int = 0, rates: Any = None) -> None:
        name = self._name("direct_meters", direct_meter_name)
        table_id = next(m for m in self.client.p4info.direct_meters
                        if m.preamble.name == name).direct_table_id
        tname = self.client.names.by_id(table_id).preamble.name
        self._apply("meter_set_rates", name, self._handle(tname, match_keys, prio or None),
                    *rate_words(rates))

    def _name(self, kind: str, name: str) -> str:
        return self._find((kind,), name, kind.rstrip("s").replace("_", " "))[1].preamble.name

    # ---------------------------------------------------------------------- PRE

    @staticmethod
    def _replicas(ports: Any, instances: Any) -> list[tuple[int, int]]:
        ports = _list(ports, "ports")
        if instances is None:
            instances = [0] * len(ports)
        elif not isinstance(instances, list | tuple):
            raise TypeError("instances is not a list.")
        if len(instances) != len(ports):
            raise UIn_Error("instances and ports have different lengths.")
        return [(int(p), int(i)) for p, i in zip(ports, instances, strict=True)]

    @bad_input
    def mc_mgrp_create(self, mgrp: int, ports: Sequence[Any] = (), instances: Any = None) -> None:
        self.client.multicast_groups.insert(int(mgrp), self._replicas(list(ports), instances))

    @bad_input
    def mc_mgrp_destroy(self, mgrp: int) -> None:
        self.client.multicast_groups.delete(int(mgrp))

    @bad_input
    def mc_set_replicas(self, mgrp: int, ports: Sequence[Any] = (), instances: Any = None
                        ) -> None:
        self.client.multicast_groups.modify(int(mgrp), self._replicas(list(ports), instances))

    @bad_input
    def mc_get_replicas(self, mgrp: int) -> list[tuple[int, int]]:
        return self.client.multicast_groups.read().get(int(mgrp), [])

    @bad_input
    def cs_create(self, session_id: int, ports: Sequence[Any] = (), instances: Any = None,
                  cos: int = 0, packet_length: int = 0) -> None:
        self._write_session(self.client.clone_sessions.insert, session_id, ports, instances, cos,
                      packet_length)

    @bad_input
    def cs_set_replicas(self, session_id: int, ports: Sequence[Any] = (), instances: Any = None,
                        cos: int = 0, packet_length: int = 0) -> None:
        self._write_session(self.client.clone_sessions.modify, session_id, ports, instances, cos,
                      packet_length)

    def _write_session(self, write: Any, session_id: int, ports: Any, instances: Any, cos: int,
                 packet_length: int) -> None:
        if cos or packet_length:
            raise NotHonouredError("SimpleSwitchP4RuntimeAPI.cs_create", "class of service "
                                   "and truncation of clone sessions are not implemented")
        write(int(session_id), self._replicas(list(ports), instances))

    @bad_input
    def cs_destroy(self, session_id: int) -> None:
        self.client.clone_sessions.delete(int(session_id))

    @bad_input
    def cs_get_replicas(self, session_id: int) -> list[tuple[int, int]]:
        return self.client.clone_sessions.read().get(int(session_id), [])

    # ------------------------------------------------------------------ digests

    @bad_input
    def digest_enable(self, digest_name: str, max_timeout_ns: int = 0, max_list_size: int = 1,
                      ack_timeout_ns: int = 0) -> bool:
        self.client.digests[self._name("digests", digest_name)].insert(
            max_timeout_ns=max_timeout_ns, max_list_size=max_list_size,
            ack_timeout_ns=ack_timeout_ns)
        return True

    @bad_input
    def digest_set_conf(self, digest_name: str, max_timeout_ns: int = 0,
                        max_list_size: int = 1, ack_timeout_ns: int = 0) -> bool:
        self.client.digests[self._name("digests", digest_name)].modify(
            max_timeout_ns=max_timeout_ns, max_list_size=max_list_size,
            ack_timeout_ns=ack_timeout_ns)
        return True

    @bad_input
    def digest_disable(self, digest_name: str) -> None:
        self.client.digests[self._name("digests", digest_name)].delete()

    def get_digest_list(self, timeout: float | None = None) -> Any:
        """The next ``p4.v1.DigestList`` (acknowledged), or None after ``timeout`` s."""
        try:
            digest = self._digests.get(timeout=timeout)
        except queue.Empty:
            return None
        self.client.digests.ack(DigestList("", digest.digest_id, digest.list_id,
                                           digest.timestamp, []))
        return digest

    # ------------------------------------------------------------- packet I/O

    def get_packet_in(self, timeout: float | None = None) -> Any:
        """The next ``p4.v1.PacketIn`` from the CPU port, or None after ``timeout`` s."""
        try:
            return self._packets.get(timeout=timeout)
        except queue.Empty:
            return None

    def packet_out(self, payload: bytes, metadata: dict[str, Any] | None = None) -> None:
        self.client.packet_out(payload, metadata)

    # --------------------------------------------------------------- the switch

    def teardown(self) -> None:
        release_client(self.client)


