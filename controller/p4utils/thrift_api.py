"""``SimpleSwitchThriftAPI`` with p4-utils' signatures, over P4Runtime.

Each call is the simple_switch_CLI command p4-utils' Thrift client would
send, applied by ``controller.bmcli.CommandRunner`` (the same translation
command files get: BMv2's entry and node handles, names by unique suffix).
Bad input prints ``Error: ...`` and returns None, as p4-utils does; a call
P4Runtime cannot express raises ``NotHonouredError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from controller.p4rt.client import P4RuntimeClient
from controller.p4utils.base import RunnerAPI
from controller.p4utils.connect import find_switch, open_client
from controller.p4utils.errors import NotHonouredError, UIn_Error, bad_input
from controller.p4utils.learning import LearningClient


@dataclass(frozen=True, slots=True)
class CounterValue:
    """BMv2's ``BmCounterValue``; unpacks as p4-utils returns it, (bytes, packets)."""

    bytes: int
    packets: int

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter((self.bytes, self.packets))


def _handle(line: str | None) -> int | None:
    return None if line is None else int(line.rsplit(" ", 1)[1])


class SimpleSwitchThriftAPI(RunnerAPI):
    """One switch's control plane, named by its Thrift port in topology.json.

    ``client`` stands for the Thrift client for the calls controllers make on
    it directly (digest learning); ``p4rt`` is the P4Runtime session.
    """

    def __init__(self, thrift_port: int, thrift_ip: str = "localhost",
                 pre_type: str = "SimplePre", json_path: str | None = None,
                 *, p4rt: P4RuntimeClient | None = None) -> None:
        self.thrift_port = thrift_port
        self.thrift_ip = thrift_ip
        self.pre_type = pre_type
        self.json_path = json_path
        if p4rt is None:
            self.switch = find_switch(thrift_port=thrift_port)
            p4rt = open_client(self.switch)
        super().__init__(p4rt)
        self.p4rt = p4rt
        self.client = LearningClient(self)
        self.mc_client = self.client

    @staticmethod
    def _not_honoured(call: str, reason: str) -> NotHonouredError:
        return NotHonouredError(f"SimpleSwitchThriftAPI.{call}", reason)

    # ------------------------------------------------------------------ tables

    @bad_input
    def table_add(self, table_name: str, action_name: str, match_keys: Sequence[Any],
                  action_params: Sequence[Any] = (), prio: int = 0) -> int | None:
        words = [table_name, action_name, *self._params(match_keys, "match_keys"), "=>",
                 *self._params(action_params, "action_params")]
        if self.runner.needs_priority(table_name):
            words.append(str(int(prio)))
        return _handle(self._apply("table_add", *words))

    @bad_input
    def table_num_entries(self, table_name: str) -> int:
        name = self.runner.table_info(table_name).preamble.name
        return len(self.p4rt.tables[name].read())

    @bad_input
    def table_modify(self, table_name: str, action_name: str, entry_handle: int,
                     action_params: Sequence[Any] = ()) -> int:
        self._apply("table_modify", table_name, action_name, entry_handle,
                    *self._params(action_params, "action_params"))
        return int(entry_handle)

    @bad_input
    def table_delete(self, table_name: str, entry_handle: int, quiet: bool = False) -> None:
        self._apply("table_delete", table_name, entry_handle)

    def get_handle_from_match(self, table_name: str, match_keys: Sequence[Any],
                              pop: bool = False) -> int | None:
        return self.runner.handle_of(table_name, self._params(match_keys, "match_keys"))

    @bad_input
    def table_modify_match(self, table_name: str, action_name: str, match_keys: Sequence[Any],
                           action_params: Sequence[Any] = ()) -> int | None:
        handle = self.runner.handle_of(table_name, self._params(match_keys, "match_keys"))
        if handle is None:
            raise UIn_Error(f"Table {table_name} has no entry with match {list(match_keys)}")
        self._apply("table_modify", table_name, action_name, handle,
                    *self._params(action_params, "action_params"))
        return handle

    @bad_input
    def table_delete_match(self, table_name: str, match_keys: Sequence[Any]) -> None:
        handle = self.runner.handle_of(table_name, self._params(match_keys, "match_keys"))
        if handle is None:
            raise UIn_Error(f"Table {table_name} has no entry with match {list(match_keys)}")
        self._apply("table_delete", table_name, handle)

    def table_set_timeout(self, table_name: str, entry_handle: int, timeout_ms: int) -> None:
        raise self._not_honoured("table_set_timeout", "entry idle timeouts are not "
                                 "implemented by intbed's switches")

    # ----------------------------------------------------------- action profiles

    @bad_input
    def act_prof_create_member(self, act_prof_name: str, action_name: str,
                               action_params: Sequence[Any] = ()) -> int | None:
        return _handle(self._apply("act_prof_create_member", act_prof_name, action_name,
                                   *self._params(action_params, "action_params")))

    @bad_input
    def act_prof_delete_member(self, act_prof_name: str, mbr_handle: int) -> None:
        self._apply("act_prof_delete_member", act_prof_name, mbr_handle)

    @bad_input
    def act_prof_modify_member(self, act_prof_name: str, action_name: str, mbr_handle: int,
                               action_params: Sequence[Any] = ()) -> None:
        self._apply("act_prof_modify_member", act_prof_name, action_name, mbr_handle,
                    *self._params(action_params, "action_params"))

    @bad_input
    def act_prof_create_group(self, act_prof_name: str) -> int | None:
        return _handle(self._apply("act_prof_create_group", act_prof_name))

    @bad_input
    def act_prof_delete_group(self, act_prof_name: str, grp_handle: int) -> None:
        self._apply("act_prof_delete_group", act_prof_name, grp_handle)

    @bad_input
    def act_prof_add_member_to_group(self, act_prof_name: str, mbr_handle: int,
                                     grp_handle: int) -> None:
        self._apply("act_prof_add_member_to_group", act_prof_name, mbr_handle, grp_handle)

    @bad_input
    def act_prof_remove_member_from_group(self, act_prof_name: str, mbr_handle: int,
                                          grp_handle: int) -> None:
        self._apply("act_prof_remove_member_from_group", act_prof_name, mbr_handle,
                    grp_handle)

    # --------------------------------------------------------- PRE and mirroring

    @bad_input
    def mirroring_add(self, mirror_id: int, egress_port: int) -> None:
        self._apply("mirroring_add", mirror_id, egress_port)

    @bad_input
    def mirroring_delete(self, mirror_id: int) -> None:
        self._apply("mirroring_delete", mirror_id)

    def mirroring_add_mc(self, mirror_id: int, mgrp: int) -> None:
        raise self._not_honoured("mirroring_add_mc", "a P4Runtime clone session lists "
                                 "egress ports; it cannot point at a multicast group")

    def mirroring_add_port_and_mgrp(self, mirror_id: int, egress_port: int, mgrp: int) -> None:
        raise self._not_honoured("mirroring_add_port_and_mgrp", "a P4Runtime clone session "
                                 "lists egress ports; it cannot point at a multicast group")

    @bad_input
    def mirroring_get(self, mirror_id: int) -> list[int]:
        sessions = self.p4rt.clone_sessions.read()
        if int(mirror_id) not in sessions:
            raise UIn_Error(f"mirroring session {mirror_id} does not exist")
        return [port for port, _ in sessions[int(mirror_id)]]

    @bad_input
    def mc_mgrp_create(self, mgrp: int) -> int:
        self._apply("mc_mgrp_create", mgrp)
        return int(mgrp)

    @bad_input
    def mc_mgrp_destroy(self, mgrp: int) -> None:
        self._apply("mc_mgrp_destroy", mgrp)

    @bad_input
    def mc_node_create(self, rid: int, ports: Sequence[Any], lags: Sequence[Any] = ()
                       ) -> int | None:
        if lags:
            raise self._not_honoured("mc_node_create", "P4Runtime replicas are ports; "
                                     "BMv2's LAGs have no P4Runtime form")
        return _handle(self._apply("mc_node_create", rid, *self._params(ports, "ports")))

    @bad_input
    def mc_node_update(self, l1_hdl: int, ports: Sequence[Any], lags: Sequence[Any] = ()
                       ) -> None:
        if lags:
            raise self._not_honoured("mc_node_update", "BMv2's LAGs have no P4Runtime form")
        self._apply("mc_node_update", l1_hdl, *self._params(ports, "ports"))

    @bad_input
    def mc_node_associate(self, mgrp: int, l1_hdl: int) -> None:
        self._apply("mc_node_associate", mgrp, l1_hdl)

    @bad_input
    def mc_node_dissociate(self, mgrp: int, l1_hdl: int) -> None:
        self._apply("mc_node_dissociate", mgrp, l1_hdl)

    @bad_input
    def mc_node_destroy(self, l1_hdl: int) -> None:
        self._apply("mc_node_destroy", l1_hdl)

    def mc_set_lag_membership(self, lag_index: int, ports: Sequence[Any]) -> None:
        raise self._not_honoured("mc_set_lag_membership", "BMv2's LAGs have no P4Runtime form")

    @bad_input
    def mc_dump(self) -> dict[int, list[tuple[int, int]]]:
        groups = self.p4rt.multicast_groups.read()
        for group, replicas in sorted(groups.items()):
            print(f"mgrp({group}): " + ", ".join(f"port {p} rid {r}" for p, r in replicas))
        return groups

    # ------------------------------------------------------------------ externs

    @bad_input
    def counter_read(self, counter_name: str, index: int) -> CounterValue:
        kind, info = self._find(("counters", "direct_counters"), counter_name, "counter")
        if kind != "counters":
            raise self._not_honoured("counter_read", f"{counter_name} is a direct counter; "
                                     "BMv2 indexes it by entry handle, read it by match "
                                     "through SimpleSwitchP4RuntimeAPI.direct_counter_read")
        packets, nbytes = self.p4rt.counters[info.preamble.name].read(int(index))
        value = CounterValue(nbytes, packets)
        print(f"{counter_name}[{index}]= ({value.bytes} bytes, {value.packets} packets)")
        return value

    @bad_input
    def register_read(self, register_name: str, index: int | None = None,
                      show: bool = False) -> int | list[int]:
        _, info = self._find(("registers",), register_name, "register")
        reg = self.p4rt.registers[info.preamble.name]
        if index or index == 0:
            value = reg.read(int(index))
            if show:
                print(f"{register_name}[{index}]=", value)
            return value
        values = reg.read()
        if show:
            print(f"{register_name}=", ", ".join(map(str, values)))
        return values

    @bad_input
    def register_write(self, register_name: str, index: int | Sequence[int], value: int) -> None:
        try:
            value = int(value)
        except (TypeError, ValueError):
            raise UIn_Error("Bad format for value, must be an integer") from None
        if isinstance(index, list | tuple):
            for i in range(int(index[0]), int(index[1]) + 1):
                self._apply("register_write", register_name, i, value)
            return
        self._apply("register_write", register_name, int(index), value)

    @bad_input
    def register_reset(self, register_name: str) -> None:
        self._apply("register_reset", register_name)

    # ------------------------------------------------------------ the switch

    def set_queue_depth(self, queue_depth: int, egress_port: int | None = None,
                        priority: int | None = None) -> None:
        raise self._not_honoured("set_queue_depth", "queues are not P4Runtime state; give "
                                 "set_queue_depth in the switch's cli_input command file")

    def set_queue_rate(self, rate: int, egress_port: int | None = None,
                       priority: int | None = None) -> None:
        raise self._not_honoured("set_queue_rate", "queues are not P4Runtime state; give "
                                 "set_queue_rate in the switch's cli_input command file")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise self._not_honoured(name, "this Thrift call has no P4Runtime equivalent "
                                 "(see docs/p4utils.md)")


