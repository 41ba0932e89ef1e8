"""One v1model switch: runtime state plus the generated pipeline.

The two halves follow BMv2's ``simple_switch``: ``ingress`` runs the parser,
checksum verification and the ingress control, then applies the traffic
manager's decisions in BMv2's order (ingress clone, digest, resubmit,
multicast, drop on port 511, unicast); ``egress`` runs the egress control,
egress clone, drop, checksum update, deparser, truncation and recirculation.
What sits between the halves (the queues) belongs to the target; ``process``
connects them immediately, as STF tests and BMv2 with empty queues do.
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import cython

from common.errors import RuntimeConfigError
from common.names import NameLookupError, lookup
from dataplane.contract import CLONE, CLONE_FL, CUR, PAYLOAD, RECIRC, RESUB, TRUNC
from dataplane.runtime import plugins
from dataplane.runtime.action_profiles import ActionProfile, IndirectRef
from dataplane.runtime.externs import CounterArray, Meter, MeterArray, RandomSource, RegisterArray
from dataplane.runtime.support import ExitPipeline, ParserReject
from dataplane.runtime.tables import Entry, Exact, Lpm, OptionalMatch, RangeMatch, Table, Ternary

if TYPE_CHECKING:  # the compiler makes programs; the runtime only runs them
    from dataplane.compiler.pipeline import CompiledProgram

DROP_PORT = 511
FREE_STATES = 64
"""Finished packet states kept for reuse (programs with long header stacks
only), in one pool for every switch running the same compiled program:
enough for the packets in flight at once between a few ingresses and
egresses, bounded so a burst does not pin memory. One pool, not one per
switch: a state freed by the hop just finished is still in the CPU's
caches for the next hop, on whichever switch; a switch's own last state
went cold while a hundred other switches ran."""

# standard_metadata.instance_type values (BMv2 simple_switch).
NORMAL, INGRESS_CLONE, EGRESS_CLONE, RECIRCULATED, REPLICATION, RESUBMITTED = 0, 1, 2, 4, 5, 6


# Compiled (switch.pxd), a job is made and freed once per packet-hop and is
# never part of a cycle (it holds integers, bytes and the packet's state, a
# list of field values): Cython keeps freed ones for reuse (no allocator
# call) and leaves the type out of the cyclic collector (no tracking, and
# no collections of the young generation set off by jobs). Cython takes
# these decorators here, beside ``cclass``, not from switch.pxd; Python
# ignores all three.
@cython.freelist(64)
@cython.no_gc
@cython.cclass
class EgressJob:
    """A packet between the traffic manager and egress.

    One is made per packet-hop: a plain class with a written-out
    ``__init__``, which the compiled fast path compiles (a dataclass's
    generated ``__init__`` would stay interpreted)."""

    __slots__ = ("port", "state", "frame", "offset", "length", "enq_ns", "enq_depth", "enq_us")

    def __init__(self, port: int, state: list[Any], frame: bytes, length: int,
                 offset: int = 0) -> None:
        _fill_job(self, port, state, frame, length, offset)

    @property
    def payload(self) -> bytes:
        """The bytes after the parsed headers (a copy unless the offset is 0)."""
        return self.frame[self.offset:] if self.offset else self.frame

    def __repr__(self) -> str:
        return (f"EgressJob(port={self.port}, length={self.length}, "
                f"payload={len(self.frame) - self.offset} bytes)")


@dataclass(slots=True)
class Digest:
    digest_id: int
    name: str
    values: tuple[int, ...]


class ValueSet:
    """Runtime content of a parser ``value_set``."""

    __slots__ = ("name", "size", "members")

    def __init__(self, name: str, size: int) -> None:
        self.name = name
        self.size = size
        self.members: set[Any] = set()

    def matches(self, key: Any) -> bool:
        return key in self.members


class PacketCounts(Mapping[str, int]):
    """A switch's packets through ingress and egress, and dropped: a live,
    read-only view of counters the per-packet closures keep in machine
    words."""

    __slots__ = ("_read",)

    def __init__(self, read: Callable[[], dict[str, int]]) -> None:
        self._read = read

    def __getitem__(self, key: str) -> int:
        return self._read()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())

    def __repr__(self) -> str:
        return f"PacketCounts({self._read()})"


class Switch:
    """A v1model switch running one compiled program."""

    _DATA_PLANE = frozenset(("ingress", "egress"))

    def __setattr__(self, name: str, value: Any) -> None:
        # ``ingress`` and ``egress`` may be replaced (a test wraps them to
        # record each packet); targets that keep them bound are told.
        super().__setattr__(name, value)
        if name in Switch._DATA_PLANE:
            for rebind in self.__dict__.get("_data_plane_watchers", ()):
                rebind()

    def watch_data_plane(self, rebind: Callable[[], None]) -> None:
        """Call ``rebind`` whenever ``ingress`` or ``egress`` is replaced:
        a target that holds them (the sim switch, so a packet-hop does not
        look them up on this object) reads them again."""
        self.__dict__.setdefault("_data_plane_watchers", []).append(rebind)

    def __init__(self, program: CompiledProgram, *, device_id: int = 0, seed: int = 0,
                 clock: Callable[[], int] | None = None) -> None:
        if not program.runnable:
            raise RuntimeConfigError(f"{program.source}: the program has no 'main' package "
                                     "instance, so there is no pipeline to run")
        self.program = program
        self.device_id = device_id
        self.now: Callable[[], int] = clock or (lambda: 0)
        self._rng = RandomSource(seed)
        self.random = self._rng.random
        self.digests: list[Digest] = []
        self.logs: list[str] = []
        self.out: list[bytes] = []
        self.mirror: dict[int, int] = {}
        self.mc_nodes: list[tuple[int, list[int]]] = []
        self.mc_groups: dict[int, list[int]] = {}
        self.action_ids = {name: i for i, name in enumerate(program.action_names)}
        self.tables: list[Table] = []
        for rt in program.tables:
            factory = None
            if rt.info.direct_meter is not None:
                ext = next(e for e in program.externs if e.qname == rt.info.direct_meter)
                factory = partial(Meter, ext.unit == "PACKETS")
            table = Table(rt.info, self.action_ids, factory)
            for matches, action, args, prio in rt.const_entries:
                table.insert(matches, action, args, prio, normalize=True)
            self.tables.append(table)
        self.externs: list[Any] = []
        for ext in program.externs:
            if ext.kind == "register":
                self.externs.append(RegisterArray(ext.size, ext.width, ext.signed))
            elif ext.kind == "counter":
                self.externs.append(CounterArray(ext.size, ext.unit))
            elif ext.kind == "meter":
                self.externs.append(MeterArray(ext.size, ext.unit, self.now))
            elif ext.kind in ("action_profile", "action_selector"):
                self.externs.append(self._action_profile(ext.qname))
            elif ext.kind.startswith("user:"):
                self.externs.append(plugins.instance(ext.kind[5:], ext.ctor_args))
            else:
                self.externs.append(None)
        self.value_sets = [ValueSet(name, size) for name, _, size in program.value_sets]
        self.action_profiles = {p.name: p for p in self.externs if isinstance(p, ActionProfile)}
        for table in self.tables:
            if table.info.implementation is not None:
                table.profile = self.action_profiles[table.info.implementation]
        self._tables_by_name = {t.name: t for t in self.tables}
        lay = program.layout
        self._template = lay.template
        self._mark = lay.stack_mark
        self._free = lay.free_states
        self._gaps = _gaps(lay.template, lay.stack_spans)
        self._std = lay.std_fields
        hdr_end = lay.headers_end
        # A clone copies the headers; the stack mark right after them (when
        # their stacks are long) says whether it copied anything but the
        # template there.
        self._hdr_range = (lay.headers, hdr_end + (lay.stack_mark == hdr_end))
        self._index_std()
        blocks = program.make(self)
        self._parser = blocks["parser"]
        self._verify = blocks["verify"]
        self._ingress = blocks["ingress"]
        self._egress = blocks["egress"]
        self._compute = blocks["compute"]
        self._deparser = blocks["deparser"]
        # Where the compiled deparser stores headers (its count in the
        # state's first slot): the engine copies them out with the payload.
        self._deparse_buffer: bytearray = blocks["buffer"]
        self._bind_data_plane()

    def _action_profile(self, name: str) -> ActionProfile:
        """An action profile whose members may run any action of its tables."""
        info = next(p for p in self.program.schema.action_profiles if p.name == name)
        allowed = {
            self.action_ids[ref.action]
            for t in self.program.schema.tables if t.name in info.tables
            for ref in t.action_refs if ref.scope != "DEFAULT_ONLY"
        }
        return ActionProfile(name, info.size, info.algorithm, frozenset(allowed))

    # ------------------------------------------------------ externs (X.*)

    @staticmethod
    def user_function(name: str) -> Callable[..., Any]:
        """The plugin implementing an extern function the program declares."""
        return plugins.function(name)

    def digest(self, digest_id: int, values: tuple[int, ...]) -> None:
        name = self.program.schema.digests[digest_id].name
        self.digests.append(Digest(digest_id, name, values))

    def log(self, msg: str, values: tuple[Any, ...]) -> None:
        text = msg
        for v in values:
            text = text.replace("{}", str(v), 1)
        self.logs.append(text)

    # --------------------------------------------------------- control plane

    def table(self, name: str) -> Table:
        return self._tables_by_name[self.resolve_table(name)]

    def resolve_table(self, name: str) -> str:
        return _resolve(name, list(self._tables_by_name), "table")

    def resolve_action(self, name: str) -> str:
        return _resolve(name, list(self.action_ids), "action")

    def _action_args(self, action: str, args: Mapping[str, int] | Sequence[int]) -> tuple[int, ...]:
        info = next(a for a in self.program.schema.actions if a.name == action)
        if isinstance(args, Mapping):
            unknown = set(args) - {p.name for p in info.params}
            if unknown:
                raise RuntimeConfigError(f"action {action} has no parameter "
                                         f"'{sorted(unknown)[0]}'")
            try:
                values = [int(args[p.name]) for p in info.params]
            except KeyError as exc:
                raise RuntimeConfigError(f"action {action}: missing argument {exc}") from None
        else:
            values = [int(v) for v in args]
            if len(values) != len(info.params):
                raise RuntimeConfigError(f"action {action} takes {len(info.params)} "
                                         f"argument(s), got {len(values)}")
        out = []
        for p, v in zip(info.params, values):
            if v < 0 or v >> p.bitwidth:
                raise RuntimeConfigError(f"action {action}: value {v} does not fit "
                                         f"parameter {p.name} (bit<{p.bitwidth}>)")
            out.append(v)
        return tuple(out)

    def table_add(self, table: str, matches: Mapping[str, Any], action: str | IndirectRef,
                  args: Mapping[str, int] | Sequence[int] = (),
                  priority: int | None = None) -> Entry:
        t = self.table(table)
        specs: list[Any] = []
        fields = {f.name: f for f in t.fields}
        for name in matches:
            if name not in fields:
                raise RuntimeConfigError(f"table {t.name} has no match field '{name}' "
                                         f"(fields: {', '.join(fields) or 'none'})")
        for f in t.fields:
            m = matches.get(f.name)
            specs.append(_adapt(m, f.match_type, f.bitwidth))
        if priority is None and t.mode == "priority":
            priority = 1
        if isinstance(action, IndirectRef):
            return t.insert(specs, -1, (), priority, normalize=True, ref=action.ref)
        aname = self.resolve_action(action)
        values = self._action_args(aname, args)
        if t.profile is not None:
            # An action given to an indirect table becomes a member of its
            # own, as a P4Runtime one-shot action set of one action does.
            member = t.profile.add_member(self.action_ids[aname], values)
            try:
                return t.insert(specs, -1, (), priority, normalize=True, ref=member)
            except RuntimeConfigError:
                t.profile.delete_member(member)
                raise
        return t.insert(specs, self.action_ids[aname], values, priority, normalize=True)

    def action_profile(self, name: str) -> ActionProfile:
        """An action profile or selector by (suffix of) its name."""
        return self.action_profiles[_resolve(name, list(self.action_profiles),
                                             "action profile")]

    def act_prof_create_member(self, profile: str, action: str,
                               args: Mapping[str, int] | Sequence[int] = ()) -> int:
        """simple_switch_CLI's ``act_prof_create_member``: the new member's handle."""
        prof = self.action_profile(profile)
        aname = self.resolve_action(action)
        return prof.add_member(self.action_ids[aname], self._action_args(aname, args))

    def table_set_default(self, table: str, action: str,
                          args: Mapping[str, int] | Sequence[int] = ()) -> None:
        t = self.table(table)
        aname = self.resolve_action(action)
        t.set_default(self.action_ids[aname], self._action_args(aname, args))

    def mirroring_add(self, session: int, port: int) -> None:
        self.mirror[session] = port

    def mc_group_create(self, group: int) -> None:
        self.mc_groups.setdefault(group, [])

    def mc_node_create(self, rid: int, ports: Sequence[int]) -> int:
        self.mc_nodes.append((rid, sorted(ports)))
        return len(self.mc_nodes) - 1

    def mc_node_associate(self, group: int, node: int) -> None:
        if node >= len(self.mc_nodes):
            raise RuntimeConfigError(f"unknown multicast node handle {node}")
        self.mc_groups.setdefault(group, []).append(node)

    def replicate(self, group: int) -> list[tuple[int, int]]:
        """(rid, port) copies of multicast group ``group``."""
        out = []
        for node in self.mc_groups.get(group, ()):
            rid, ports = self.mc_nodes[node]
            out.extend((rid, p) for p in ports)
        return out

    # ------------------------------------------------------------- data plane

    def _index_std(self) -> None:
        """Slot numbers of the standard_metadata fields the target fills
        (-1 where the program's standard_metadata_t lacks one)."""
        std = self._std
        g = std.get
        self._i_port = std["ingress_port"]
        self._i_len = std["packet_length"]
        self._i_type = std["instance_type"]
        self._i_spec = std["egress_spec"]
        self._i_eport = std["egress_port"]
        self._i_mcast = g("mcast_grp", -1)
        self._i_rid = g("egress_rid", -1)
        self._i_perr = g("parser_error", -1)
        self._i_its = g("ingress_global_timestamp", -1)
        self._i_ets = g("egress_global_timestamp", -1)
        self._i_queue = (std["enq_timestamp"], std["enq_qdepth"], std["deq_timedelta"],
                         std["deq_qdepth"]) if "deq_qdepth" in std else None

    def _fresh(self, port: int, length: int, instance_type: int) -> list[Any]:
        s = self._template.copy()
        s[self._i_port] = port
        s[self._i_len] = length
        s[self._i_type] = instance_type
        if self._i_its >= 0:
            s[self._i_its] = self.now()
        return s

    def _preserve(self, dst: list[Any], src: list[Any], field_list: int) -> None:
        if field_list > 0:
            for i in self.program.layout.field_lists.get(field_list - 1, ()):
                dst[i] = src[i]
            if self._mark >= 0 and src[self._mark]:
                dst[self._mark] = 1

    def _parse(self, s: list[Any], data: bytes) -> None:
        s[CUR] = 0
        try:
            self._parser(s, data)
        except ParserReject as reject:
            if reject.code is not None and self._i_perr >= 0:
                s[self._i_perr] = reject.code
        s[PAYLOAD] = data[s[CUR]:]

    def _ingress_clone(self, s: list[Any], port: int, data: bytes,
                       jobs: list[EgressJob]) -> None:
        """I2E clone: BMv2 parses the original packet again and resets all
        metadata except the preserved field list."""
        mport = self.mirror.get(s[CLONE] - 1)
        if mport is None:
            return
        c = self._fresh(port, len(data), INGRESS_CLONE)
        self._parse(c, data)
        c2 = self._template.copy()
        lo, hi = self._hdr_range
        c2[lo:hi] = c[lo:hi]
        c2[PAYLOAD] = c[PAYLOAD]
        c2[self._i_type] = INGRESS_CLONE
        c2[self._i_len] = len(data)
        self._preserve(c2, s, s[CLONE_FL])
        jobs.append(_new_job(mport, c2, c2[PAYLOAD], len(data), 0))

    def _bind_data_plane(self) -> None:
        """Build ``self.ingress`` and ``self.egress`` as closures over this
        switch's slot numbers and pipeline functions: the per-packet path
        then reads local cells instead of attributes (about 20% faster).

        ``ingress(port, data, instance_type=0, preserved=None)`` runs one
        packet through ingress and returns the egress jobs in the order the
        traffic manager receives them, and packets to feed back into
        ingress (resubmit) as (port, data, instance_type, preserved).

        ``egress(job, enq_timestamp=0, enq_qdepth=0, deq_timedelta=0,
        deq_qdepth=0)`` runs one dequeued packet through egress and the
        deparser and returns (emitted packets, egress-clone jobs,
        recirculations).

        Both take ``ts=``, the switch's timestamp in microseconds, from a
        target that knows it already (the sim's queues); without it they
        ask the switch's clock.
        """
        template = self._template
        now = self.now
        # Packets through ingress and egress, and dropped: machine words in
        # the closures' cells when compiled (``stats`` reads them).
        n_ingress = cython.declare(cython.longlong, 0)
        n_egress = cython.declare(cython.longlong, 0)
        n_dropped = cython.declare(cython.longlong, 0)
        # Compiled, the slot numbers are machine words in the closures'
        # cells (cython.declare; in Python it returns the value), so the
        # per-packet path indexes its state list without integer objects.
        i_port = cython.declare(cython.Py_ssize_t, self._i_port)
        i_len = cython.declare(cython.Py_ssize_t, self._i_len)
        i_type = cython.declare(cython.Py_ssize_t, self._i_type)
        i_spec = cython.declare(cython.Py_ssize_t, self._i_spec)
        i_eport = cython.declare(cython.Py_ssize_t, self._i_eport)
        i_mcast = cython.declare(cython.Py_ssize_t, self._i_mcast)
        i_rid = cython.declare(cython.Py_ssize_t, self._i_rid)
        i_perr = cython.declare(cython.Py_ssize_t, self._i_perr)
        i_its = cython.declare(cython.Py_ssize_t, self._i_its)
        i_ets = cython.declare(cython.Py_ssize_t, self._i_ets)
        k_cur = cython.declare(cython.Py_ssize_t, CUR)
        k_payload = cython.declare(cython.Py_ssize_t, PAYLOAD)
        k_clone = cython.declare(cython.Py_ssize_t, CLONE)
        k_clone_fl = cython.declare(cython.Py_ssize_t, CLONE_FL)
        k_resub = cython.declare(cython.Py_ssize_t, RESUB)
        k_recirc = cython.declare(cython.Py_ssize_t, RECIRC)
        k_trunc = cython.declare(cython.Py_ssize_t, TRUNC)
        queue = self._i_queue
        # The queue metadata's slots (-1: the program has none).
        q_enq_ts = cython.declare(cython.Py_ssize_t, queue[0] if queue else -1)
        q_enq_depth = cython.declare(cython.Py_ssize_t, queue[1] if queue else -1)
        q_deq_delta = cython.declare(cython.Py_ssize_t, queue[2] if queue else -1)
        q_deq_depth = cython.declare(cython.Py_ssize_t, queue[3] if queue else -1)
        parser, deparser = self._parser, self._deparser
        dbuf = self._deparse_buffer
        # An empty control is not called at all (None).
        empty = self.program.empty_blocks
        verify, ingress_c, egress_c, compute = (
            None if kind in empty else fn for kind, fn in (
                ("verify", self._verify), ("ingress", self._ingress),
                ("egress", self._egress), ("compute", self._compute)))
        out = cython.declare(list, self.out)  # typed: an emptiness test is a size read
        hdr_lo, hdr_hi = self._hdr_range
        mirror = self.mirror
        preserve = self._preserve
        ingress_clone = self._ingress_clone
        replicate = self.replicate
        mark = cython.declare(cython.Py_ssize_t, self._mark)  # -1: no long stacks
        # Every state generated code sees is a copy of the template (whose
        # slots it stores into unchecked when compiled): only an egress
        # job's, which a caller may make, is checked.
        n_slots = cython.declare(cython.Py_ssize_t, len(template))
        gaps = self._gaps
        free = cython.declare(list, self._free)
        # The pool's bound and the drop port as machine words in the cells:
        # compiled, a test against a module's integer object is a lookup by
        # name and a comparison of two objects.
        free_max = cython.declare(cython.Py_ssize_t, FREE_STATES)
        drop_port = cython.declare(cython.long, DROP_PORT)
        # Only a program that reads the payload slot gets the payload copied
        # into it; a job carries the frame and the payload's offset.
        copy_payload = cython.declare(cython.bint, self.program.reads_payload)
        normal: Any = NORMAL  # a cell, not a lookup by name per packet
        whole: Any = [(0, len(template), template)]
        if cython.compiled:
            # The compiled reset reads its runs as machine words, from one
            # bytes object per program that every switch running it shares
            # (per-switch tuples of integer objects went cold between hops).
            gaps, whole = _packed_spans(gaps), _packed_spans(whole)

        @cython.locals(s=list)
        def recycle(s: list[Any]) -> None:
            """Keep a finished state for the next packet, reset to the
            template: only the slots outside long stacks unless the mark
            says the packet's code may have stored into one."""
            _reset(s, template, whole if s[mark] != 0 else gaps)
            if len(free) < free_max:
                if cython.compiled:  # no reallocation (items.pxd)
                    _push_item(free, s)  # noqa: F821 (cimported in switch.pxd)
                else:
                    free.append(s)

        @cython.boundscheck(False)
        @cython.wraparound(False)
        # The length an integer object: made once, for the state and the job.
        @cython.locals(s=list, frame=bytes, cur=cython.Py_ssize_t, size=cython.Py_ssize_t,
                       length=object)
        def ingress_hop(port: int, data: bytes, instance_type: int,
                        preserved: tuple[list[Any], int] | None, ts: int | None
                        ) -> EgressJob | tuple[list[EgressJob], Sequence[tuple]] | None:
            """``ingress`` in the form a target that calls it for every
            packet-hop wants: the one egress job of a unicast packet, None
            for a packet that makes none, and ``ingress``'s pair only when
            it clones, resubmits or replicates (no list or tuple made for
            the common case)."""
            nonlocal n_ingress, n_dropped
            n_ingress += 1
            if type(data) is not bytes:  # the compiled parser reads bytes only
                data = bytes(data)
            length = len(data)
            if cython.compiled:
                # The pool taken from without reallocation (items.pxd);
                # _put: a store over the list's item pointers.
                s = _take_last(free) if len(free) else template.copy()  # noqa: F821
                _put(s, i_port, port)  # noqa: F821 (declared in switch.pxd)
                _put(s, i_len, length)  # noqa: F821
                _put(s, i_type, instance_type)  # noqa: F821
                if i_its >= 0:
                    _put(s, i_its, now() if ts is None else ts)  # noqa: F821
            else:
                s = free.pop() if free else template.copy()
                s[i_port] = port
                s[i_len] = length
                s[i_type] = instance_type
                if i_its >= 0:
                    s[i_its] = now() if ts is None else ts
            if preserved is not None:
                preserve(s, preserved[0], preserved[1])
            try:
                parser(s, data)
            except ParserReject as reject:
                if reject.code is not None and i_perr >= 0:
                    s[i_perr] = reject.code
            frame = data
            cur = s[k_cur]
            size = len(frame)
            if cur > size:
                cur = size
            if copy_payload:
                if cython.compiled:
                    # One copy by C: Cython slices bytes through Python's
                    # generic protocol (a slice object; some 500 instructions).
                    payload = PyBytes_FromStringAndSize(  # noqa: F821 (switch.pxd)
                        PyBytes_AS_STRING(frame) + cur, size - cur)  # noqa: F821
                    _put(s, k_payload, payload)  # noqa: F821
                else:
                    payload = frame[cur:]
                    s[k_payload] = payload
                frame = payload
                cur = 0
            try:
                if verify is not None:
                    verify(s)
                if ingress_c is not None:
                    ingress_c(s)
            except ExitPipeline:
                pass
            jobs: list[EgressJob] | None = None
            # The flag slots hold ints: compiled, "!= 0" is an inline test
            # of the integer where a truth test calls PyObject_IsTrue.
            if s[k_clone] != 0:
                jobs = []
                ingress_clone(s, port, data, jobs)
            if s[k_resub] != 0:
                return jobs or [], [(port, data, RESUBMITTED, (s, s[k_resub]))]
            if i_mcast >= 0 and s[i_mcast] != 0:
                if jobs is None:
                    jobs = []
                s[i_type] = REPLICATION
                for rid, p in replicate(s[i_mcast]):
                    c = s.copy()
                    if i_rid >= 0:
                        c[i_rid] = rid
                    jobs.append(_new_job(p, c, frame, length, cur))
                return jobs, ()
            egress_spec = s[i_spec]
            if cython.cast(cython.long, egress_spec) == drop_port:
                n_dropped += 1
                if mark >= 0:
                    recycle(s)
                return None if jobs is None else (jobs, ())
            if cython.compiled:
                _put(s, i_type, normal)  # noqa: F821
            else:
                s[i_type] = NORMAL
            job = _new_job(egress_spec, s, frame, length, cur)
            if jobs is None:
                return job  # most packets: one job, nothing else
            jobs.append(job)
            return jobs, ()

        def ingress(port: int, data: bytes, instance_type: int = NORMAL,
                    preserved: tuple[list[Any], int] | None = None, ts: int | None = None
                    ) -> tuple[list[EgressJob], Sequence[tuple]]:
            r = ingress_hop(port, data, instance_type, preserved, ts)
            if r is None:
                return [], ()
            if type(r) is EgressJob:
                return [r], ()
            return r

        @cython.boundscheck(False)
        @cython.wraparound(False)
        @cython.locals(s=list, job=EgressJob, stored=cython.Py_ssize_t)
        def egress_hop(job: EgressJob, enq_timestamp: int, enq_qdepth: int,
                       deq_timedelta: int, deq_qdepth: int, ts: int | None) -> bytes | tuple[
                           Sequence[tuple[int, bytes]], Sequence[EgressJob], Sequence[tuple]]:
            """``egress`` for a target's every packet-hop: the packet
            itself when it leaves on ``job.port`` and nothing else comes of
            it, ``egress``'s triple otherwise."""
            nonlocal n_egress, n_dropped
            n_egress += 1
            s = job.state
            if len(s) != n_slots:  # compiled code stores into its slots unchecked
                raise ValueError(f"an egress job's state has {len(s)} slots; this switch's "
                                 f"program has {n_slots}")
            if cython.compiled:  # as in ingress_hop
                _put(s, i_eport, job.port)  # noqa: F821
                _put(s, i_spec, 0)  # noqa: F821
                _put(s, i_len, job.length)  # noqa: F821
                if i_ets >= 0:
                    _put(s, i_ets, now() if ts is None else ts)  # noqa: F821
                if q_enq_ts >= 0:
                    _put(s, q_enq_ts, enq_timestamp)  # noqa: F821
                    _put(s, q_enq_depth, enq_qdepth)  # noqa: F821
                    _put(s, q_deq_delta, deq_timedelta)  # noqa: F821
                    _put(s, q_deq_depth, deq_qdepth)  # noqa: F821
                _put(s, k_clone, 0)  # noqa: F821
                _put(s, k_recirc, 0)  # noqa: F821
            else:
                s[i_eport] = job.port
                s[i_spec] = 0
                s[i_len] = job.length
                if i_ets >= 0:
                    s[i_ets] = now() if ts is None else ts
                if q_enq_ts >= 0:
                    s[q_enq_ts] = enq_timestamp
                    s[q_enq_depth] = enq_qdepth
                    s[q_deq_delta] = deq_timedelta
                    s[q_deq_depth] = deq_qdepth
                s[k_clone] = 0
                s[k_recirc] = 0
            if egress_c is not None:
                try:
                    egress_c(s)
                except ExitPipeline:
                    pass
            clones: list[EgressJob] | tuple = ()
            if s[k_clone] != 0:  # as in ingress_hop
                mport = mirror.get(s[k_clone] - 1)
                if mport is not None:
                    c = template.copy()
                    c[hdr_lo:hdr_hi] = s[hdr_lo:hdr_hi]
                    c[i_type] = EGRESS_CLONE
                    preserve(c, s, s[k_clone_fl])
                    # BMv2 (1.15.5, measured) gives an egress clone the length
                    # of the packet as it is at the clone point: the headers
                    # egress left valid plus the payload.
                    if out:
                        out.clear()
                    c[k_cur] = 0
                    deparser(c)
                    length = sum(map(len, out)) + c[k_cur] + len(job.frame) - job.offset
                    clones = [_new_job(mport, c, job.frame, length, job.offset)]
            if cython.cast(cython.long, s[i_spec]) == drop_port:
                n_dropped += 1
                if mark >= 0:
                    recycle(s)
                return (), clones, ()
            if copy_payload:
                if cython.compiled:
                    _put(s, k_payload, job.payload)  # noqa: F821
                else:
                    s[k_payload] = job.payload
            if compute is not None:
                try:
                    compute(s)
                except ExitPipeline:
                    pass
            if out:  # almost always empty: no method call for nothing
                out.clear()
            if cython.compiled:  # the deparser's count of bytes in its buffer
                _put(s, k_cur, 0)  # noqa: F821
            else:
                s[k_cur] = 0
            deparser(s)
            stored = s[k_cur]
            if stored != 0 and not out:  # compiled, the common case (an inline test)
                packet = _joined(dbuf, stored, job.frame, job.offset)
            else:
                if stored:
                    out.append(bytes(dbuf[:stored]))
                out.append(job.payload)
                packet = b"".join(out)
            if s[k_trunc] != 0 and len(packet) >= s[k_trunc]:
                packet = packet[:s[k_trunc] - 1]
            if s[k_recirc] != 0:
                return (), clones, [(job.port, packet, RECIRCULATED, (s, s[k_recirc]))]
            if mark >= 0:
                recycle(s)
            if type(clones) is list:  # an egress clone (a truth test of () is a call)
                return ((job.port, packet),), clones, ()
            return packet  # most packets

        def egress(job: EgressJob, enq_timestamp: int = 0, enq_qdepth: int = 0,
                   deq_timedelta: int = 0, deq_qdepth: int = 0, ts: int | None = None) -> tuple[
                       Sequence[tuple[int, bytes]], Sequence[EgressJob], Sequence[tuple]]:
            r = egress_hop(job, enq_timestamp, enq_qdepth, deq_timedelta, deq_qdepth, ts)
            if type(r) is bytes:
                return ((job.port, r),), (), ()
            return r

        def counts() -> dict[str, int]:
            return {"ingress": n_ingress, "egress": n_egress, "dropped": n_dropped}

        # The hop forms, and the pair of public halves they stand for: a
        # target uses the hop forms only while ``ingress`` and ``egress``
        # are still these (nobody has wrapped them).
        self.ingress_hop = ingress_hop
        self.egress_hop = egress_hop
        self.hop_halves = (ingress, egress)
        self.ingress = ingress
        self.egress = egress
        self.stats = PacketCounts(counts)

    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """Ingress, an immediate traffic manager, and egress for one packet
        and everything it spawns (clones, copies, resubmits,
        recirculations)."""
        jobs, again = self.ingress(port, data)
        if not again and len(jobs) == 1:
            out, clones, recirc = self.egress(jobs[0])
            if not clones and not recirc:
                return list(out)
            work: deque[Any] = deque(clones)
            work.extend(recirc)
            emitted = list(out)
        else:
            work = deque(jobs)
            work.extend(again)
            emitted = []
        while work:
            item = work.popleft()
            if isinstance(item, EgressJob):
                out, clones, recirc = self.egress(item)
                emitted.extend(out)
                work.extend(clones)
                work.extend(recirc)
            else:
                jobs, again = self.ingress(*item)
                work.extend(jobs)
                work.extend(again)
        return emitted


_PACKED_SPANS: dict[bytes, bytes] = {}


def _packed_spans(spans: list[tuple[int, int, list[Any]]]) -> bytes:
    """The (lo, hi) of each run as native ``Py_ssize_t`` pairs, one object
    for all switches whose runs are the same (the compiled reset's form)."""
    raw = struct.pack(f"{2 * len(spans)}n", *(x for lo, hi, _ in spans for x in (lo, hi)))
    return _PACKED_SPANS.setdefault(raw, raw)


def _reset(s, template, spans):  # noqa: ANN001, ANN202 (typed in switch.pxd)
    """Give ``s`` the template's values again in ``spans``: (lo, hi,
    template[lo:hi]) runs, each run's slice assigned. Compiled, the same
    runs packed by ``_packed_spans`` go to ``items.reset_runs``, which
    stores only the slots that differ."""
    if cython.compiled:
        _reset_runs(s, template, spans)  # noqa: F821 (cimported in switch.pxd)
        return
    for lo, hi, piece in spans:
        s[lo:hi] = piece


def _fill_job(job, port, state, frame, length, offset):  # noqa: ANN001, ANN202 (switch.pxd)
    """Every field of a new job: ``EgressJob.__init__`` and ``_new_job``
    both fill it here."""
    job.port = port
    job.state = state
    # The payload is frame[offset:]: the frame the packet arrived in and
    # where its parsed headers ended, so ingress need not copy it out (a
    # program that reads the payload slot gets a copy there).
    job.frame = frame
    job.offset = offset
    job.length = length  # packet_length seen by egress (bytes)
    # A target's queue metadata while the job waits in its queue (the sim's
    # egress port: time in nanoseconds, packets ahead of it).
    job.enq_ns = 0
    job.enq_depth = 0
    # The switch's timestamp of the instant the job was enqueued, when the
    # target that enqueued it holds it as an integer object already (the
    # sim's ingress: the same instant), else None.
    job.enq_us = None


def _new_job(port, state, frame, length, offset):  # noqa: ANN001, ANN202 (switch.pxd)
    """A job as the engine makes one per packet-hop: the type's allocator,
    then ``_fill_job``. Compiled, that is a C call; calling the type runs
    ``__init__`` through Python's calling convention and parses its five
    arguments (some 300 instructions a packet-hop with the allocation)."""
    job = EgressJob.__new__(EgressJob)
    _fill_job(job, port, state, frame, length, offset)
    return job


def _joined(buffer, n, frame, offset):  # noqa: ANN001, ANN202 (typed in switch.pxd)
    """The first ``n`` bytes of the deparse buffer, then ``frame`` from
    ``offset`` on (the payload): one new bytes object, filled by two
    copies when compiled."""
    if cython.compiled:
        size = len(frame) - offset
        out = PyBytes_FromStringAndSize(cython.NULL, n + size)  # noqa: F821
        p = PyBytes_AS_STRING(out)  # noqa: F821
        memcpy(p, PyByteArray_AS_STRING(buffer), n)  # noqa: F821
        memcpy(p + n, PyBytes_AS_STRING(frame) + offset, size)  # noqa: F821
        return out
    return bytes(buffer[:n]) + frame[offset:]


def _gaps(template: list[Any], spans: list[tuple[int, int]]
          ) -> list[tuple[int, int, list[Any]]]:
    """The template's slots outside ``spans``, as (lo, hi, values) runs."""
    out = []
    lo = 0
    for a, b in sorted(spans):
        if a > lo:
            out.append((lo, a, template[lo:a]))
        lo = max(lo, b)
    if lo < len(template):
        out.append((lo, len(template), template[lo:]))
    return out


def _resolve(name: str, names: list[str], what: str) -> str:
    """``common.names.lookup`` as a control-plane error."""
    try:
        return lookup(name, names, what)
    except NameLookupError as exc:
        raise RuntimeConfigError(exc.message) from None


def _adapt(m: Any, kind: str, width: int) -> Any:
    """Control-plane value as the table's match kind wants it."""
    if m is None:
        return None
    if isinstance(m, int):
        m = Exact(m)
    if isinstance(m, Exact):
        if kind == "exact":
            return m
        if kind == "lpm":
            return Lpm(m.value, width)
        if kind == "ternary":
            return Ternary(m.value, (1 << width) - 1)
        if kind == "range":
            return RangeMatch(m.value, m.value)
        if kind == "optional":
            return OptionalMatch(m.value)
    if isinstance(m, Ternary) and kind == "lpm":
        return Lpm(m.value & m.mask, bin(m.mask).count("1"))
    if isinstance(m, Lpm) and kind == "ternary":
        mask = ((1 << m.prefix_len) - 1) << (width - m.prefix_len) if m.prefix_len else 0
        return Ternary(m.value & mask, mask)
    if isinstance(m, Ternary) and kind == "optional":
        return None if m.mask == 0 else OptionalMatch(m.value)
    return m
