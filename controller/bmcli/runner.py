"""simple_switch_CLI commands as P4Runtime writes.

Each command becomes the P4Runtime writes that leave the switch in the state
the command gives on BMv2, through a ``P4RuntimeClient``, so one command file
configures the simulator, ``intbed-switch`` and BMv2 alike. What BMv2 keeps
on the switch side and P4Runtime does not have (entry handles, multicast
nodes) is kept here, numbered as BMv2 numbers them. Queue settings are not
P4Runtime: the target hands in a ``QueueSettings``.

Names resolve as BMv2's CLI resolves them: the full name or any unique
dotted suffix (``dmac`` for ``MyIngress.dmac``). The first command that
fails stops the run with a ``CommandFileError`` located at its line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from heapq import heappop, heappush
from pathlib import Path
from typing import Any, Protocol

from common.errors import IntbedError, Loc
from common.names import NameLookupError, lookup
from controller.bmcli import values
from controller.bmcli.parse import Command, CommandFileError, read_command_file
from controller.p4rt.client import P4RuntimeClient
from controller.p4rt.entities import MatchValue, entry_dict
from controller.p4rt.protos import protos

# BMv2 ranks ternary and range entries smallest priority first; P4Runtime
# largest first. A CLI priority p is written as P4Runtime priority BASE - p.
PRIORITY_BASE = 1 << 24
# BMv2 meter rates are per microsecond; P4Runtime's per second.
_US_PER_S = 1_000_000

_MF = protos().p4info_pb2.MatchField
_PRIORITY_KINDS = (_MF.TERNARY, _MF.RANGE, _MF.OPTIONAL)
_UPDATE = protos().p4runtime_pb2.Update


def cli_priority_to_p4rt(priority: int) -> int:
    """The P4Runtime priority of a simple_switch_CLI priority."""
    if not 0 <= priority < PRIORITY_BASE:
        raise values.BadValue(f"priority {priority} is not in 0..{PRIORITY_BASE - 1}")
    return PRIORITY_BASE - priority


class QueueSettings(Protocol):
    """A target's egress queues (BMv2's set_queue_depth/set_queue_rate);
    ``port`` None means every port."""

    def set_queue_depth(self, depth: int, port: int | None) -> None: ...

    def set_queue_rate(self, rate_pps: float, port: int | None) -> None: ...


class RegisterAccess(Protocol):
    """Register cells written by the target itself, for targets whose
    P4Runtime server refuses register writes as BMv2's does; ``index`` None
    means every cell. ``name`` is the register's full P4Info name."""

    def write_register(self, name: str, index: int | None, value: int) -> None: ...


@dataclass(slots=True)
class _Entry:
    match: dict[str, MatchValue]
    priority: int | None


class CommandRunner:
    """Applies commands to one switch. Keeps BMv2's entry handles (per table,
    the lowest free number, entries already on the switch first) and
    multicast node handles across ``run`` calls."""

    def __init__(self, client: P4RuntimeClient, *, queues: QueueSettings | None = None,
                 registers: RegisterAccess | None = None) -> None:
        self.client = client
        self.queues = queues
        self.registers = registers
        self.output: list[str] = []
        self._handles: dict[str, dict[int, _Entry]] = {}
        self._free: dict[str, list[int]] = {}  # per table, a heap of deleted handles
        self._nodes: dict[int, tuple[int, list[int]]] = {}
        self._groups: dict[int, list[int]] = {}
        self._sessions: set[int] | None = None
        # Name -> P4Info object per kind, and per table its actions (P4Info is fixed).
        self._objects: dict[str, dict[str, Any]] = {}
        self._table_actions: dict[int, dict[str, Any]] = {}
        # (kind, name as written) -> P4Info object: a name resolves the same
        # way every time (the P4Info is fixed), and controllers repeat names.
        self._resolved: dict[tuple[str, str], Any] = {}
        # Per action profile: member handles (BMv2's smallest free, used as
        # the P4Runtime member id) and groups with their members.
        self._members: dict[str, set[int]] = {}
        self._profile_groups: dict[str, dict[int, list[int]]] = {}

    # ------------------------------------------------------------------ driving

    def run_file(self, path: str | Path) -> None:
        self.run(read_command_file(path))

    def run(self, commands: Iterable[Command]) -> None:
        for cmd in commands:
            method = _COMMANDS.get(cmd.name)
            if method is None:
                if cmd.name in _UNSUPPORTED:
                    raise cmd.fail("this simple_switch_CLI command is not supported in "
                                   "command files (supported: " + ", ".join(sorted(_COMMANDS))
                                   + ")")
                raise CommandFileError(
                    f"unknown command '{cmd.name}' (in '{cmd.text}'); supported: "
                    + ", ".join(sorted(_COMMANDS)), cmd.loc)
            try:
                method(self, cmd)
            except CommandFileError:
                raise
            except values.BadValue as exc:
                raise cmd.fail(str(exc)) from None
            except IntbedError as exc:
                raise cmd.fail(exc.message) from None

    def apply(self, name: str, words: Sequence[str], where: Loc | None = None) -> str | None:
        """One command given as words (an API call rather than a file line);
        returns what it printed, if anything."""
        text = " ".join((name, *words))
        before = len(self.output)
        self.run([Command(name, tuple(words), where or Loc("<api>", 0), text)])
        return self.output[-1] if len(self.output) > before else None

    def table_info(self, word: str) -> Any:
        """The P4Info table a name or unique dotted suffix means."""
        return self._table(Command("table", (word,), Loc("<api>", 0), word), word)

    def needs_priority(self, word: str) -> bool:
        """Whether entries of the table take a priority (ternary, range, optional)."""
        key = ("priority", word)
        found = self._resolved.get(key)
        if found is None:
            found = any(f.match_type in _PRIORITY_KINDS
                        for f in self.table_info(word).match_fields)
            self._resolved[key] = found
        return found

    def handle_of(self, word: str, keys: Sequence[str], priority: int | None = None
                  ) -> int | None:
        """The handle of the entry with these match words, or None."""
        cmd = Command("table_delete", (word, *keys), Loc("<api>", 0), " ".join(keys))
        table = self._table(cmd, word)
        match = self._match(cmd, table, keys)
        p4rt = None if priority is None else cli_priority_to_p4rt(priority)
        for handle, entry in self._handles_of(table).items():
            if entry.match == match and (p4rt is None or entry.priority == p4rt):
                return handle
        return None

    def forget_insert(self, update: Any) -> None:
        """A table entry INSERT the switch refused after the fact (a
        pipelined write): its handle is free again, as BMv2 never gave it."""
        if update.type != _UPDATE.INSERT or update.entity.WhichOneof("entity") != "table_entry":
            return
        refused = entry_dict(self.client.names, update.entity.table_entry)
        name = refused["table"]
        handles = self._handles.get(name, {})
        # The latest entry with that key: a refused duplicate came after the original.
        for handle, entry in reversed(list(handles.items())):
            if entry.match == refused["match"] and (entry.priority or 0) == refused["priority"]:
                del handles[handle]
                heappush(self._free.setdefault(name, []), handle)
                return

    def entry_key(self, word: str, handle: int) -> tuple[dict[str, MatchValue], int | None]:
        """The match and P4Runtime priority of the entry with ``handle``."""
        entry = self._handles_of(self.table_info(word))[handle]
        return entry.match, entry.priority

    # ------------------------------------------------------------------ names

    def _table(self, cmd: Command, name: str) -> Any:
        return self._lookup(cmd, "tables", name, "table")

    def _lookup(self, cmd: Command, kind: str, name: str, what: str) -> Any:
        found = self._resolved.get((kind, name))
        if found is not None:
            return found
        objects = self._objects.get(kind)
        if objects is None:
            objects = {o.preamble.name: o for o in getattr(self.client.p4info, kind)}
            self._objects[kind] = objects
        try:
            found = objects[lookup(name, objects, what)]
        except NameLookupError as exc:
            raise cmd.fail(exc.message) from None
        self._resolved[(kind, name)] = found
        return found

    def _action(self, cmd: Command, table: Any, name: str) -> Any:
        key = (f"action of {table.preamble.id}", name)
        found = self._resolved.get(key)
        if found is not None:
            return found
        actions = self._table_actions.get(table.preamble.id)
        if actions is None:
            ids = {ref.id for ref in table.action_refs}
            actions = {a.preamble.name: a for a in self.client.p4info.actions
                       if a.preamble.id in ids}
            self._table_actions[table.preamble.id] = actions
        try:
            found = actions[lookup(name, actions, "action", f"of table {table.preamble.name}")]
        except NameLookupError as exc:
            raise cmd.fail(exc.message) from None
        self._resolved[key] = found
        return found

    @staticmethod
    def _args(cmd: Command, low: int, high: int | None, usage: str) -> tuple[str, ...]:
        n = len(cmd.args)
        if n < low or (high is not None and n > high):
            raise cmd.fail(f"usage: {cmd.name} {usage}")
        return cmd.args

    @staticmethod
    def _int(cmd: Command, word: str, what: str, low: int = 0, high: int | None = None) -> int:
        try:
            number = int(word, 0)
        except ValueError:
            raise cmd.fail(f"{what} '{word}' is not an integer") from None
        if number < low or (high is not None and number > high):
            bound = f"{low}.." + ("" if high is None else str(high))
            raise cmd.fail(f"{what} {number} is not in {bound}")
        return number

    # ------------------------------------------------------------------ tables

    def _params(self, cmd: Command, action: Any, words: Sequence[str]) -> dict[str, int]:
        params = list(action.params)
        if len(words) != len(params):
            names = ", ".join(f"{p.name} (bit<{p.bitwidth}>)" for p in params) or "none"
            raise cmd.fail(f"action {action.preamble.name} takes {len(params)} parameter"
                           f"{'s' if len(params) != 1 else ''} ({names}), got {len(words)}")
        return {p.name: values.parse_value(w, p.bitwidth,
                                           f"parameter {p.name} of {action.preamble.name}")
                for p, w in zip(params, words, strict=True)}

    def _match(self, cmd: Command, table: Any, words: Sequence[str]) -> dict[str, MatchValue]:
        fields = list(table.match_fields)
        if len(words) != len(fields):
            names = ", ".join(f"{f.name} ({_KIND_NAMES.get(f.match_type, '?')})"
                              for f in fields) or "none"
            raise cmd.fail(f"table {table.preamble.name} has {len(fields)} match field"
                           f"{'s' if len(fields) != 1 else ''} ({names}), got {len(words)}")
        match: dict[str, MatchValue] = {}
        for f, word in zip(fields, words, strict=True):
            what, width, kind = f"match field {f.name}", f.bitwidth, f.match_type
            if kind == _MF.LPM:
                match[f.name] = values.parse_lpm(word, width, what)
            elif kind == _MF.TERNARY:
                match[f.name] = values.parse_ternary(word, width, what)
            elif kind == _MF.RANGE:
                match[f.name] = values.parse_range(word, width, what)
            elif kind == _MF.OPTIONAL and word == "*":
                match[f.name] = None
            else:
                match[f.name] = values.parse_value(word, width, what)
        return match

    def _handles_of(self, table: Any) -> dict[int, _Entry]:
        name = table.preamble.name
        found = self._handles.get(name)
        if found is None:
            # Entries already there (const entries) hold the first handles, as on BMv2.
            found = {}
            for i, e in enumerate(self.client.tables[name].read()):
                found[i] = _Entry(dict(e["match"]), e["priority"] or None)
            self._handles[name] = found
        return found

    def _entry(self, cmd: Command, table: Any, word: str) -> tuple[int, _Entry]:
        handles = self._handles_of(table)
        handle = self._int(cmd, word, "entry handle")
        entry = handles.get(handle)
        if entry is None:
            raise cmd.fail(f"table {table.preamble.name} has no entry with handle {handle}")
        return handle, entry

    def table_add(self, cmd: Command) -> None:
        args = self._args(cmd, 2, None, "TABLE ACTION MATCH... => PARAMS... [PRIORITY]")
        table = self._table(cmd, args[0])
        action = self._action(cmd, table, args[1])
        rest = list(args[2:])
        if "=>" in rest:
            cut = rest.index("=>")
            keys, params = rest[:cut], rest[cut + 1:]
        else:
            keys, params = rest, []
        priority = None
        if any(f.match_type in _PRIORITY_KINDS for f in table.match_fields):
            if len(params) != len(action.params) + 1:
                self._params(cmd, action, params[:-1] if params else params)
                raise cmd.fail(f"table {table.preamble.name} has ternary or range fields: "
                               "give a priority after the action parameters")
            priority = cli_priority_to_p4rt(self._int(cmd, params[-1], "priority"))
            params = params[:-1]
        match = self._match(cmd, table, keys)
        param_values = self._params(cmd, action, params)
        handles = self._handles_of(table)  # before the insert: existing entries come first
        self.client.tables[table.preamble.name].insert(match, action.preamble.name,
                                                       param_values, priority)
        free = self._free.setdefault(table.preamble.name, [])
        handle = heappop(free) if free else len(handles)
        handles[handle] = _Entry(match, priority)
        self.output.append(f"Entry has been added with handle {handle}")

    def table_modify(self, cmd: Command) -> None:
        args = self._args(cmd, 3, None, "TABLE ACTION HANDLE PARAMS...")
        table = self._table(cmd, args[0])
        action = self._action(cmd, table, args[1])
        _, entry = self._entry(cmd, table, args[2])
        words = args[3:]
        if words[:1] == ("=>",):  # some files write the arrow here too
            words = words[1:]
        params = self._params(cmd, action, words)
        self.client.tables[table.preamble.name].modify(entry.match, action.preamble.name,
                                                       params, entry.priority)

    def table_delete(self, cmd: Command) -> None:
        args = self._args(cmd, 2, 2, "TABLE HANDLE")
        table = self._table(cmd, args[0])
        handle, entry = self._entry(cmd, table, args[1])
        self.client.tables[table.preamble.name].delete(entry.match, entry.priority)
        del self._handles_of(table)[handle]
        heappush(self._free.setdefault(table.preamble.name, []), handle)

    def table_clear(self, cmd: Command) -> None:
        args = self._args(cmd, 1, 1, "TABLE")
        table = self._table(cmd, args[0])
        handles = self._handles_of(table)
        entries = self.client.tables[table.preamble.name]
        for e in entries.read():
            if not e["is_const"]:
                entries.delete(e["match"], e["priority"] or None)
        handles.clear()
        self._handles.pop(table.preamble.name, None)
        self._free.pop(table.preamble.name, None)

    def table_set_default(self, cmd: Command) -> None:
        args = self._args(cmd, 2, None, "TABLE ACTION PARAMS...")
        table = self._table(cmd, args[0])
        action = self._action(cmd, table, args[1])
        params = self._params(cmd, action, args[2:])
        self.client.tables[table.preamble.name].default.modify(action.preamble.name, params)

    def table_reset_default(self, cmd: Command) -> None:
        args = self._args(cmd, 1, 1, "TABLE")
        self.client.tables[self._table(cmd, args[0]).preamble.name].default.reset()

    # ------------------------------------------------------------------ PRE

    def mirroring_add(self, cmd: Command) -> None:
        args = self._args(cmd, 2, 2, "SESSION_ID EGRESS_PORT")
        session = self._int(cmd, args[0], "mirror session id", 1)
        port = self._int(cmd, args[1], "egress port", 0, 511)
        if self._sessions is None:
            self._sessions = set(self.client.clone_sessions.read())
        sessions = self.client.clone_sessions
        write = sessions.modify if session in self._sessions else sessions.insert
        write(session, [port])
        self._sessions.add(session)

    def mirroring_delete(self, cmd: Command) -> None:
        args = self._args(cmd, 1, 1, "SESSION_ID")
        session = self._int(cmd, args[0], "mirror session id", 1)
        self.client.clone_sessions.delete(session)
        if self._sessions is not None:
            self._sessions.discard(session)

    def _write_group(self, group: int, *, new: bool = False) -> None:
        replicas: list[tuple[int, int]] = []
        for node in self._groups[group]:
            rid, ports = self._nodes[node]
            replicas.extend((port, rid) for port in ports)
        groups = self.client.multicast_groups
        (groups.insert if new else groups.modify)(group, replicas)

    def _group(self, cmd: Command, word: str) -> int:
        group = self._int(cmd, word, "multicast group id", 1, 0xFFFF)
        if group not in self._groups:
            raise cmd.fail(f"multicast group {group} was not created (mc_mgrp_create first)")
        return group

    def _node(self, cmd: Command, word: str) -> int:
        node = self._int(cmd, word, "node handle")
        if node not in self._nodes:
            raise cmd.fail(f"no multicast node with handle {node} (mc_node_create gives one)")
        return node

    def _ports(self, cmd: Command, words: Sequence[str]) -> list[int]:
        if "|" in words:
            raise cmd.fail("LAG lists (after '|') are not supported")
        return [self._int(cmd, w, "port", 0, 511) for w in words]

    def mc_mgrp_create(self, cmd: Command) -> None:
        args = self._args(cmd, 1, 1, "GROUP_ID")
        group = self._int(cmd, args[0], "multicast group id", 1, 0xFFFF)
        if group in self._groups:
            raise cmd.fail(f"multicast group {group} already exists")
        self._groups[group] = []
        self._write_group(group, new=True)

    def mc_mgrp_destroy(self, cmd: Command) -> None:
        group = self._group(cmd, self._args(cmd, 1, 1, "GROUP_ID")[0])
        self.client.multicast_groups.delete(group)
        del self._groups[group]

    def mc_node_create(self, cmd: Command) -> None:
        args = self._args(cmd, 1, None, "RID PORTS...")
        rid = self._int(cmd, args[0], "replication id", 0, 0xFFFF)
        ports = self._ports(cmd, args[1:])
        node = 0
        while node in self._nodes:
            node += 1
        self._nodes[node] = (rid, ports)
        self.output.append(f"node was created with handle {node}")

    def mc_node_update(self, cmd: Command) -> None:
        args = self._args(cmd, 1, None, "NODE_HANDLE PORTS...")
        node = self._node(cmd, args[0])
        self._nodes[node] = (self._nodes[node][0], self._ports(cmd, args[1:]))
        for group, nodes in self._groups.items():
            if node in nodes:
                self._write_group(group)

    def mc_node_associate(self, cmd: Command) -> None:
        args = self._args(cmd, 2, 2, "GROUP_ID NODE_HANDLE")
        group, node = self._group(cmd, args[0]), self._node(cmd, args[1])
        if any(node in nodes for nodes in self._groups.values()):
            raise cmd.fail(f"node {node} is already associated with a group")
        self._groups[group].append(node)
        self._write_group(group)

    def mc_node_dissociate(self, cmd: Command) -> None:
        args = self._args(cmd, 2, 2, "GROUP_ID NODE_HANDLE")
        group, node = self._group(cmd, args[0]), self._node(cmd, args[1])
        if node not in self._groups[group]:
            raise cmd.fail(f"node {node} is not associated with group {group}")
        self._groups[group].remove(node)
        self._write_group(group)

    def mc_node_destroy(self, cmd: Command) -> None:
        node = self._node(cmd, self._args(cmd, 1, 1, "NODE_HANDLE")[0])
        if any(node in nodes for nodes in self._groups.values()):
            raise cmd.fail(f"node {node} is still associated with a group: dissociate first")
        del self._nodes[node]

    # ------------------------------------------------------------------ externs

    def register_write(self, cmd: Command) -> None:
        args = self._args(cmd, 3, 3, "REGISTER INDEX VALUE")
        reg = self._lookup(cmd, "registers", args[0], "register")
        index = self._int(cmd, args[1], "register index", 0, reg.size - 1)
        width = reg.type_spec.bitstring.bit.bitwidth or reg.type_spec.bitstring.int.bitwidth
        value = values.parse_value(args[2], width, f"value of {reg.preamble.name}")
        self._register(reg, index, value)

    def register_reset(self, cmd: Command) -> None:
        reg = self._lookup(cmd, "registers", self._args(cmd, 1, 1, "REGISTER")[0], "register")
        self._register(reg, None, 0)

    def _register(self, reg: Any, index: int | None, value: int) -> None:
        if self.registers is not None:
            self.registers.write_register(reg.preamble.name, index, value)
            return
        entity = protos().p4runtime_pb2.Entity()
        re = entity.register_entry
        re.register_id = reg.preamble.id
        if index is not None:
            re.index.index = index
        re.data.bitstring = value.to_bytes((value.bit_length() + 7) // 8 or 1, "big")
        self._send("modify", entity)

    def _send(self, kind: str, entity: Any) -> None:
        update = _UPDATE(type=_UPDATE.MODIFY if kind == "modify" else _UPDATE.INSERT)
        update.entity.CopyFrom(entity)
        self.client.write([update])

    def _counter(self, cmd: Command, word: str) -> tuple[str, Any]:
        """('counters' or 'direct_counters', the P4Info object)."""
        return self._extern(cmd, word, "counter")

    def _extern(self, cmd: Command, word: str, what: str) -> tuple[str, Any]:
        kinds = (f"{what}s", f"direct_{what}s")
        objects = {o.preamble.name: (k, o) for k in kinds
                   for o in getattr(self.client.p4info, k)}
        try:
            return objects[lookup(word, objects, what)]
        except NameLookupError as exc:
            raise cmd.fail(exc.message) from None

    def counter_reset(self, cmd: Command) -> None:
        kind, ctr = self._counter(cmd, self._args(cmd, 1, 1, "COUNTER")[0])
        if kind == "counters":
            self.client.counters[ctr.preamble.name].modify(None)
            return
        query = protos().p4runtime_pb2.Entity()
        query.table_entry.table_id = ctr.direct_table_id
        for found in self.client.read([query]):
            entity = protos().p4runtime_pb2.Entity()
            te = entity.direct_counter_entry.table_entry
            te.CopyFrom(found.table_entry)
            te.ClearField("action")
            te.ClearField("counter_data")
            te.ClearField("meter_config")
            entity.direct_counter_entry.data.SetInParent()
            self._send("modify", entity)

    def counter_write(self, cmd: Command) -> None:
        args = self._args(cmd, 4, 4, "COUNTER INDEX PACKETS BYTES")
        kind, ctr = self._counter(cmd, args[0])
        if kind != "counters":
            raise cmd.fail(f"{ctr.preamble.name} is a direct counter: not supported here")
        index = self._int(cmd, args[1], "counter index", 0, ctr.size - 1)
        packets = self._int(cmd, args[2], "packet count")
        nbytes = self._int(cmd, args[3], "byte count")
        self.client.counters[ctr.preamble.name].modify(index, packets=packets, bytes=nbytes)

    def _rates(self, cmd: Command, words: Sequence[str]) -> tuple[int, int, int, int]:
        (cir, cburst), (pir, pburst) = (values.parse_rate_burst(w, "rate") for w in words)
        return round(cir * _US_PER_S), cburst, round(pir * _US_PER_S), pburst

    def meter_set_rates(self, cmd: Command) -> None:
        args = self._args(cmd, 4, 4, "METER INDEX RATE:BURST RATE:BURST")
        kind, meter = self._extern(cmd, args[0], "meter")
        rates = self._rates(cmd, args[2:])
        if kind == "meters":
            index = self._int(cmd, args[1], "meter index", 0, meter.size - 1)
            self.client.meters[meter.preamble.name].modify(index, rates)
            return
        table = self.client.names.by_id(meter.direct_table_id)
        _, entry = self._entry(cmd, table, args[1])
        self.client.tables[table.preamble.name].direct_meter.modify(entry.match, rates,
                                                                    entry.priority)

    def meter_array_set_rates(self, cmd: Command) -> None:
        args = self._args(cmd, 3, 3, "METER RATE:BURST RATE:BURST")
        kind, meter = self._extern(cmd, args[0], "meter")
        if kind != "meters":
            raise cmd.fail(f"{meter.preamble.name} is a direct meter: use meter_set_rates "
                           "with an entry handle")
        self.client.meters[meter.preamble.name].modify(None, self._rates(cmd, args[1:]))

    # ------------------------------------------------------------------ queues

    def _queue_target(self, cmd: Command) -> QueueSettings:
        if self.queues is None:
            raise cmd.fail("this switch's queues cannot be set from a command file here")
        return self.queues

    def set_queue_depth(self, cmd: Command) -> None:
        args = self._args(cmd, 1, 2, "DEPTH_PACKETS [EGRESS_PORT]")
        depth = self._int(cmd, args[0], "queue depth", 1, (1 << 31) - 1)
        port = self._int(cmd, args[1], "egress port", 0, 511) if len(args) > 1 else None
        self._queue_target(cmd).set_queue_depth(depth, port)

    def set_queue_rate(self, cmd: Command) -> None:
        args = self._args(cmd, 1, 2, "RATE_PPS [EGRESS_PORT]")
        try:
            rate = float(args[0])
        except ValueError:
            raise cmd.fail(f"queue rate '{args[0]}' is not a number") from None
        if not rate > 0:
            raise cmd.fail(f"queue rate {args[0]} must be above 0 packets per second")
        port = self._int(cmd, args[1], "egress port", 0, 511) if len(args) > 1 else None
        self._queue_target(cmd).set_queue_rate(rate, port)


    # --------------------------------------------- action profiles and indirect tables

    def _profile(self, cmd: Command, name: str) -> Any:
        return self._lookup(cmd, "action_profiles", name, "action profile")

    def _table_profile(self, cmd: Command, name: str) -> tuple[Any, Any]:
        """A table with an implementation, and its action profile."""
        table = self._table(cmd, name)
        if not table.implementation_id:
            raise cmd.fail(f"table {table.preamble.name} has no action profile (use table_add)")
        for prof in self.client.p4info.action_profiles:
            if prof.preamble.id == table.implementation_id:
                return table, prof
        raise cmd.fail(f"table {table.preamble.name}: its action profile is not in the P4Info")

    def _profile_action(self, cmd: Command, prof: Any, name: str) -> Any:
        for table_id in prof.table_ids:
            for table in self.client.p4info.tables:
                if table.preamble.id == table_id:
                    return self._action(cmd, table, name)
        raise cmd.fail(f"action profile {prof.preamble.name} serves no table")

    def _member(self, cmd: Command, prof: Any, word: str) -> int:
        handle = self._int(cmd, word, "member handle")
        if handle not in self._members.get(prof.preamble.name, ()):
            raise cmd.fail(f"action profile {prof.preamble.name} has no member {handle}")
        return handle

    def _profile_group(self, cmd: Command, prof: Any, word: str) -> int:
        handle = self._int(cmd, word, "group handle")
        if handle not in self._profile_groups.get(prof.preamble.name, {}):
            raise cmd.fail(f"action profile {prof.preamble.name} has no group {handle}")
        return handle

    @staticmethod
    def _smallest_free(used: Iterable[int]) -> int:
        taken = set(used)
        return next(i for i in range(len(taken) + 1) if i not in taken)

    def _create_member(self, cmd: Command, prof: Any, args: Sequence[str]) -> None:
        action = self._profile_action(cmd, prof, args[0])
        params = self._params(cmd, action, args[1:])
        members = self._members.setdefault(prof.preamble.name, set())
        handle = self._smallest_free(members)
        self.client.action_profiles[prof.preamble.name].members.insert(
            handle, action.preamble.name, params)
        members.add(handle)
        self.output.append(f"Member has been created with handle {handle}")

    def act_prof_create_member(self, cmd: Command) -> None:
        args = self._args(cmd, 2, None, "PROFILE ACTION [PARAMS...]")
        self._create_member(cmd, self._profile(cmd, args[0]), args[1:])

    def act_prof_delete_member(self, cmd: Command) -> None:
        args = self._args(cmd, 2, 2, "PROFILE MEMBER")
        prof = self._profile(cmd, args[0])
        self._delete_member(cmd, prof, args[1])

    def _delete_member(self, cmd: Command, prof: Any, word: str) -> None:
        handle = self._member(cmd, prof, word)
        self.client.action_profiles[prof.preamble.name].members.delete(handle)
        self._members[prof.preamble.name].discard(handle)

    def act_prof_modify_member(self, cmd: Command) -> None:
        args = self._args(cmd, 3, None, "PROFILE ACTION MEMBER [PARAMS...]")
        prof = self._profile(cmd, args[0])
        self._modify_member(cmd, prof, args[1:])

    def _modify_member(self, cmd: Command, prof: Any, args: Sequence[str]) -> None:
        action = self._profile_action(cmd, prof, args[0])
        handle = self._member(cmd, prof, args[1])
        params = self._params(cmd, action, args[2:])
        self.client.action_profiles[prof.preamble.name].members.modify(
            handle, action.preamble.name, params)

    def _create_group(self, prof: Any) -> None:
        groups = self._profile_groups.setdefault(prof.preamble.name, {})
        handle = self._smallest_free(groups)
        self.client.action_profiles[prof.preamble.name].groups.insert(handle, [])
        groups[handle] = []
        self.output.append(f"Group has been created with handle {handle}")

    def act_prof_create_group(self, cmd: Command) -> None:
        args = self._args(cmd, 1, 1, "PROFILE")
        self._create_group(self._profile(cmd, args[0]))

    def act_prof_delete_group(self, cmd: Command) -> None:
        args = self._args(cmd, 2, 2, "PROFILE GROUP")
        self._delete_group(cmd, self._profile(cmd, args[0]), args[1])

    def _delete_group(self, cmd: Command, prof: Any, word: str) -> None:
        handle = self._profile_group(cmd, prof, word)
        self.client.action_profiles[prof.preamble.name].groups.delete(handle)
        del self._profile_groups[prof.preamble.name][handle]

    def _regroup(self, cmd: Command, prof: Any, args: Sequence[str], add: bool) -> None:
        member = self._member(cmd, prof, args[0])
        group = self._profile_group(cmd, prof, args[1])
        members = self._profile_groups[prof.preamble.name][group]
        if add == (member in members):
            raise cmd.fail(f"member {member} is {'already' if add else 'not'} in group {group}")
        changed = [*members, member] if add else [m for m in members if m != member]
        self.client.action_profiles[prof.preamble.name].groups.modify(group, changed)
        self._profile_groups[prof.preamble.name][group] = changed

    def act_prof_add_member_to_group(self, cmd: Command) -> None:
        args = self._args(cmd, 3, 3, "PROFILE MEMBER GROUP")
        self._regroup(cmd, self._profile(cmd, args[0]), args[1:], add=True)

    def act_prof_remove_member_from_group(self, cmd: Command) -> None:
        args = self._args(cmd, 3, 3, "PROFILE MEMBER GROUP")
        self._regroup(cmd, self._profile(cmd, args[0]), args[1:], add=False)

    def _indirect_add(self, cmd: Command, with_group: bool) -> None:
        what = "GROUP" if with_group else "MEMBER"
        args = self._args(cmd, 3, None, f"TABLE MATCH... => {what} [PRIORITY]")
        table, prof = self._table_profile(cmd, args[0])
        rest = list(args[1:])
        if "=>" not in rest:
            raise cmd.fail(f"usage: {cmd.name} TABLE MATCH... => {what} [PRIORITY]")
        cut = rest.index("=>")
        keys, after = rest[:cut], rest[cut + 1:]
        needs_priority = any(f.match_type in _PRIORITY_KINDS for f in table.match_fields)
        if len(after) != 1 + needs_priority:
            raise cmd.fail(f"give the {what.lower()} handle"
                           + (" and a priority" if needs_priority else "") + " after '=>'")
        target = (self._profile_group if with_group else self._member)(cmd, prof, after[0])
        priority = (cli_priority_to_p4rt(self._int(cmd, after[1], "priority"))
                    if needs_priority else None)
        match = self._match(cmd, table, keys)
        handles = self._handles_of(table)
        self.client.tables[table.preamble.name].insert(
            match, priority=priority, **({"group": target} if with_group else {"member": target}))
        free = self._free.setdefault(table.preamble.name, [])
        handle = heappop(free) if free else len(handles)
        handles[handle] = _Entry(match, priority)
        self.output.append(f"Entry has been added with handle {handle}")

    def table_indirect_add(self, cmd: Command) -> None:
        self._indirect_add(cmd, with_group=False)

    def table_indirect_add_with_group(self, cmd: Command) -> None:
        self._indirect_add(cmd, with_group=True)

    def table_indirect_delete(self, cmd: Command) -> None:
        args = self._args(cmd, 2, 2, "TABLE HANDLE")
        table, _ = self._table_profile(cmd, args[0])
        handle, entry = self._entry(cmd, table, args[1])
        self.client.tables[table.preamble.name].delete(entry.match, entry.priority)
        del self._handles_of(table)[handle]
        heappush(self._free.setdefault(table.preamble.name, []), handle)

    def _indirect_default(self, cmd: Command, with_group: bool) -> None:
        args = self._args(cmd, 2, 2, f"TABLE {'GROUP' if with_group else 'MEMBER'}")
        table, prof = self._table_profile(cmd, args[0])
        target = (self._profile_group if with_group else self._member)(cmd, prof, args[1])
        self.client.tables[table.preamble.name].default.modify(
            **({"group": target} if with_group else {"member": target}))

    def table_indirect_set_default(self, cmd: Command) -> None:
        self._indirect_default(cmd, with_group=False)

    def table_indirect_set_default_with_group(self, cmd: Command) -> None:
        self._indirect_default(cmd, with_group=True)

    def table_indirect_reset_default(self, cmd: Command) -> None:
        args = self._args(cmd, 1, 1, "TABLE")
        table, _ = self._table_profile(cmd, args[0])
        self.client.tables[table.preamble.name].default.reset()

    # The older spellings that name the table instead of its profile.
    def table_indirect_create_member(self, cmd: Command) -> None:
        args = self._args(cmd, 2, None, "TABLE ACTION [PARAMS...]")
        self._create_member(cmd, self._table_profile(cmd, args[0])[1], args[1:])

    def table_indirect_delete_member(self, cmd: Command) -> None:
        args = self._args(cmd, 2, 2, "TABLE MEMBER")
        self._delete_member(cmd, self._table_profile(cmd, args[0])[1], args[1])

    def table_indirect_modify_member(self, cmd: Command) -> None:
        args = self._args(cmd, 3, None, "TABLE ACTION MEMBER [PARAMS...]")
        self._modify_member(cmd, self._table_profile(cmd, args[0])[1], args[1:])

    def table_indirect_create_group(self, cmd: Command) -> None:
        args = self._args(cmd, 1, 1, "TABLE")
        self._create_group(self._table_profile(cmd, args[0])[1])

    def table_indirect_delete_group(self, cmd: Command) -> None:
        args = self._args(cmd, 2, 2, "TABLE GROUP")
        self._delete_group(cmd, self._table_profile(cmd, args[0])[1], args[1])

    def table_indirect_add_member_to_group(self, cmd: Command) -> None:
        args = self._args(cmd, 3, 3, "TABLE MEMBER GROUP")
        self._regroup(cmd, self._table_profile(cmd, args[0])[1], args[1:], add=True)

    def table_indirect_remove_member_from_group(self, cmd: Command) -> None:
        args = self._args(cmd, 3, 3, "TABLE MEMBER GROUP")
        self._regroup(cmd, self._table_profile(cmd, args[0])[1], args[1:], add=False)


_KIND_NAMES = {_MF.EXACT: "exact", _MF.LPM: "lpm", _MF.TERNARY: "ternary",
               _MF.RANGE: "range", _MF.OPTIONAL: "optional"}

_COMMANDS = {name: getattr(CommandRunner, name) for name in (
    "table_add", "table_modify", "table_delete", "table_clear", "table_set_default",
    "table_reset_default", "mirroring_add", "mirroring_delete", "mc_mgrp_create",
    "mc_mgrp_destroy", "mc_node_create", "mc_node_update", "mc_node_associate",
    "mc_node_dissociate", "mc_node_destroy", "register_write", "register_reset",
    "counter_reset", "counter_write", "meter_set_rates", "meter_array_set_rates",
    "set_queue_depth", "set_queue_rate",
    "act_prof_create_member", "act_prof_delete_member", "act_prof_modify_member",
    "act_prof_create_group", "act_prof_delete_group", "act_prof_add_member_to_group",
    "act_prof_remove_member_from_group", "table_indirect_add", "table_indirect_add_with_group",
    "table_indirect_delete", "table_indirect_set_default", "table_indirect_set_default_with_group",
    "table_indirect_reset_default", "table_indirect_create_member", "table_indirect_delete_member",
    "table_indirect_modify_member", "table_indirect_create_group", "table_indirect_delete_group",
    "table_indirect_add_member_to_group", "table_indirect_remove_member_from_group")}

# simple_switch_CLI commands that exist but are not translated.
_UNSUPPORTED = frozenset({
    "mirroring_add_mc", "mc_set_lag_membership", "mc_node_update_lag", "register_read",
    "counter_read", "meter_get_rates", "table_dump", "table_dump_entry", "table_num_entries",
    "table_info", "show_tables", "show_actions", "show_ports", "port_add", "port_remove",
    "swap_configs", "load_new_config_file", "reset_state", "write_config_to_file",
    "set_crc16_parameters", "set_crc32_parameters", "shell", "switch_info", "mc_dump",
    "mirroring_get", "table_set_timeout", "table_dump_group", "table_dump_member"})
