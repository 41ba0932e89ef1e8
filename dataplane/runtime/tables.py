"""Match-action tables: control-plane entry management and the per-packet lookup.

Semantics follow P4Runtime over BMv2: exact tables are one dict probe; a
table with one lpm field (other fields exact) picks the longest matching
prefix; a table with any ternary, range or optional field picks the matching
entry with the highest priority (P4Runtime: a larger number wins; BMv2 breaks
ties by the lowest entry handle, which here is the earliest insertion).

The lookup key is the tuple of the evaluated key fields in the order of the
table's match fields, ``selector`` fields left out (they feed an action
selector, not the match). An indirect table (one with an ``implementation``)
has a ``profile``; its entries carry ``ref`` instead of an action: a member
handle, or ``~group`` (negative) for a selector group.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cython

from common.errors import P4UnsupportedError, RuntimeConfigError
from dataplane.runtime.action_profiles import ActionProfile
from dataplane.schema import TableInfo


@dataclass(frozen=True, slots=True)
class Exact:
    value: int


@dataclass(frozen=True, slots=True)
class Lpm:
    value: int
    prefix_len: int


@dataclass(frozen=True, slots=True)
class Ternary:
    value: int
    mask: int


@dataclass(frozen=True, slots=True)
class RangeMatch:
    low: int
    high: int


@dataclass(frozen=True, slots=True)
class OptionalMatch:
    value: int


MatchSpec = Exact | Lpm | Ternary | RangeMatch | OptionalMatch
Matches = Sequence[MatchSpec | int | None]

_PRIORITY_KINDS = frozenset(("ternary", "range", "optional"))

LPM_RESULTS_KEPT = 1 << 16
"""Keys whose lpm result a table remembers before it starts afresh (so a
run over many distinct addresses keeps bounded memory)."""

LPM_SLOTS = 1024
"""Compiled, a one-field lpm table of at most 63 bits remembers results in
this many slots (a power of two), one per key's hash: a probe reads one
machine word and one list item instead of a dictionary's index, entry and
key object, which a hundred switches' tables keep cold. A key whose slot
another holds is looked up again."""

_UNSEEN = object()


class Entry:
    """One installed entry; ``packets``/``bytes`` are its direct counter and
    ``meter`` its direct meter (``None`` when the table has none); ``ref``
    is the member (>= 0) or ``~group`` of an indirect table's entry."""

    __slots__ = ("matches", "action", "args", "priority", "packets", "bytes", "meter", "handle",
                 "ref")

    def __init__(
        self,
        matches: tuple[MatchSpec | None, ...],
        action: int,
        args: tuple[int, ...],
        priority: int,
        handle: int,
        meter: object | None = None,
    ) -> None:
        self.matches = matches
        self.action = action
        self.args = args
        self.priority = priority
        self.packets = 0
        self.bytes = 0
        self.meter = meter
        self.handle = handle
        self.ref: int | None = None

    def __repr__(self) -> str:
        return (
            f"Entry(matches={self.matches!r}, action={self.action}, args={self.args!r}, "
            f"priority={self.priority}, handle={self.handle})"
        )


class Table:
    """Runtime state of one table.

    ``lookup(key: tuple[int, ...]) -> Entry | None`` is the hot path, bound at
    construction to the routine for the table's match kinds; ``None`` means a
    miss (run ``default_action`` with ``default_args``).

    ``action_ids`` maps action names (as in ``TableInfo.action_refs``) to the
    small ints the engine dispatches on. ``meter_factory`` builds the direct
    meter of each new entry when the table has one.
    """

    __slots__ = (
        "info",
        "name",
        "size",
        "fields",
        "widths",
        "kinds",
        "mode",
        "lookup",
        "default",
        "_initial_default",
        "_entry_actions",
        "_default_actions",
        "_by_key",
        "_next_handle",
        "_meter_factory",
        "_lpm_pos",
        "_levels",
        "_level_dicts",
        "_lpm_results",
        "_lpm_slot_keys",
        "_lpm_slot_found",
        "_scan",
        "_scan_keys",
        "_shifts",
        "profile",
    )

    def __init__(
        self,
        info: TableInfo,
        action_ids: Mapping[str, int],
        meter_factory: Callable[[], object] | None = None,
    ) -> None:
        self.info = info
        self.name = info.name
        self.size = info.size
        self.fields = [f for f in info.match_fields if f.match_type != "selector"]
        self.widths = tuple(f.bitwidth for f in self.fields)
        self.kinds = tuple(f.match_type for f in self.fields)
        self._meter_factory = meter_factory
        self._next_handle = 0
        self.profile: ActionProfile | None = None

        entry_actions: set[int] = set()
        default_actions: set[int] = set()
        for ref in info.action_refs:
            if ref.action not in action_ids:
                raise RuntimeConfigError(f"table {info.name}: unknown action {ref.action}")
            aid = action_ids[ref.action]
            if ref.scope != "DEFAULT_ONLY":
                entry_actions.add(aid)
            if ref.scope != "TABLE_ONLY":
                default_actions.add(aid)
        self._entry_actions = frozenset(entry_actions)
        self._default_actions = frozenset(default_actions)
        if info.default_action not in action_ids:
            raise RuntimeConfigError(
                f"table {info.name}: unknown default action {info.default_action}"
            )
        self._initial_default = (action_ids[info.default_action], tuple(info.default_args))
        # [action, args] of a miss, changed in place only: the generated
        # pipeline holds this list and reads a miss's action from it with
        # two item reads instead of two attribute lookups.
        self.default: list[Any] = list(self._initial_default)

        self._by_key: dict[tuple, Entry] = {}
        self._levels: list[tuple[int, dict]] = []
        self._level_dicts: dict[int, dict] = {}
        # One-field lpm tables remember each key's result (an entry or
        # None) until an entry is added or removed: a packet's lookup is
        # then one dictionary probe instead of one per prefix length.
        self._lpm_results: dict[int, Entry | None] = {}
        # The compiled path's slots (LPM_SLOTS): each holds key + 1 (0: empty)
        # as a machine word, and the key's result in the list beside it.
        self._lpm_slot_keys = bytearray()
        self._lpm_slot_found: list[Entry | None] = []
        self._scan: list[tuple[int, int, tuple[tuple[int, int, int], ...], Entry]] = []
        self._scan_keys: list[tuple[int, int]] = []
        self._lpm_pos = -1
        self._shifts: tuple[int, ...] = ()

        n_lpm = self.kinds.count("lpm")
        if any(k in _PRIORITY_KINDS for k in self.kinds):
            self.mode = "priority"
            shifts = []
            offset = 0
            for width in reversed(self.widths):
                shifts.append(offset)
                offset += width
            self._shifts = tuple(reversed(shifts))
            self.lookup = self._lookup_priority
        elif n_lpm > 1:
            raise P4UnsupportedError(
                f"table {info.name}: more than one lpm key field (BMv2 allows one)"
            )
        elif n_lpm == 1:
            self.mode = "lpm"
            self._lpm_pos = self.kinds.index("lpm")
            if len(self.kinds) > 1:
                self.lookup = self._lookup_lpm
            elif cython.compiled and self.widths[0] <= 63:
                # The one place the compiled path's slots are chosen (same
                # answers: lpm_slots).
                from dataplane.runtime import lpm_slots
                self._lpm_slot_keys, self._lpm_slot_found, self.lookup = (
                    lpm_slots.slots_lookup(LPM_SLOTS, self._levels, _longest_prefix))
            else:
                self.lookup = self._lookup_lpm1
        else:
            self.mode = "exact"
            # Exact tables: the canonical key is the lookup key itself, so the
            # hot path is the bound ``dict.get`` with no Python frame at all.
            self.lookup = self._by_key.get

    # -- hot path ------------------------------------------------------------

    # A typed dict: compiled, its get is a C lookup instead of a method
    # call found on dict's type for every packet.
    @cython.locals(results=dict)
    def _lookup_lpm1(self, key: tuple[int, ...]) -> Entry | None:
        value = key[0]
        results = self._lpm_results
        found = results.get(value, _UNSEEN)
        if found is not _UNSEEN:
            return found  # type: ignore[return-value]
        entry = _longest_prefix(self._levels, value)
        if len(results) >= LPM_RESULTS_KEPT:
            results.clear()
        results[value] = entry
        return entry

    def _forget_lpm_results(self) -> None:
        """Called wherever an entry comes or goes."""
        self._lpm_results.clear()
        if self._lpm_slot_found:
            keys = self._lpm_slot_keys
            keys[:] = bytes(len(keys))
            self._lpm_slot_found[:] = [None] * len(self._lpm_slot_found)

    def _lookup_lpm(self, key: tuple[int, ...]) -> Entry | None:
        pos = self._lpm_pos
        value = key[pos]
        rest = key[:pos] + key[pos + 1 :]
        for mask, level in self._levels:
            entry = level.get((value & mask, rest))
            if entry is not None:
                return entry
        return None

    def _lookup_priority(self, key: tuple[int, ...]) -> Entry | None:
        packed = 0
        for value, shift in zip(key, self._shifts, strict=False):
            packed |= value << shift
        for mask, value, ranges, entry in self._scan:
            if packed & mask == value:
                if ranges:
                    for i, low, high in ranges:
                        if not low <= key[i] <= high:
                            break
                    else:
                        return entry
                    continue
                return entry
        return None

    # -- validation ----------------------------------------------------------

    def _canonical(
        self, matches: Matches, normalize: bool
    ) -> tuple[tuple[MatchSpec | None, ...], tuple]:
        """Checked match specs (don't-care as ``None``) and the hashable key
        that identifies the entry (without priority)."""
        if len(matches) != len(self.kinds):
            raise RuntimeConfigError(
                f"table {self.name}: {len(matches)} match fields given, "
                f"the table has {len(self.kinds)}"
            )
        specs: list[MatchSpec | None] = []
        key: list[object] = []
        for field, kind, width, spec in zip(
            self.fields, self.kinds, self.widths, matches, strict=True
        ):
            full = (1 << width) - 1
            where = f"table {self.name}, field {field.name}"
            if isinstance(spec, int):
                spec = Exact(spec)
            if spec is None:
                if kind == "exact":
                    raise RuntimeConfigError(f"{where}: an exact field needs a value")
                specs.append(None)
                key.append(None)
                continue
            if kind == "exact":
                if not isinstance(spec, Exact):
                    raise RuntimeConfigError(f"{where}: expected an exact match")
                _fits(spec.value, width, where)
                specs.append(spec)
                key.append(spec.value)
            elif kind == "lpm":
                if isinstance(spec, Exact):
                    spec = Lpm(spec.value, width)
                if not isinstance(spec, Lpm):
                    raise RuntimeConfigError(f"{where}: expected an lpm match")
                _fits(spec.value, width, where)
                if not 0 <= spec.prefix_len <= width:
                    raise RuntimeConfigError(
                        f"{where}: prefix length {spec.prefix_len} exceeds width {width}"
                    )
                mask = full ^ (full >> spec.prefix_len)
                if spec.value & ~mask:
                    if not normalize:
                        raise RuntimeConfigError(
                            f"{where}: value {spec.value:#x} has bits set beyond "
                            f"prefix length {spec.prefix_len}"
                        )
                    spec = Lpm(spec.value & mask, spec.prefix_len)
                if spec.prefix_len == 0:
                    specs.append(None)
                    key.append(None)
                else:
                    specs.append(spec)
                    key.append((spec.value, spec.prefix_len))
            elif kind == "ternary":
                if isinstance(spec, Exact):
                    spec = Ternary(spec.value, full)
                if not isinstance(spec, Ternary):
                    raise RuntimeConfigError(f"{where}: expected a ternary match")
                _fits(spec.value, width, where)
                _fits(spec.mask, width, where)
                if spec.value & ~spec.mask:
                    if not normalize:
                        raise RuntimeConfigError(
                            f"{where}: value {spec.value:#x} has bits outside mask {spec.mask:#x}"
                        )
                    spec = Ternary(spec.value & spec.mask, spec.mask)
                if spec.mask == 0:
                    specs.append(None)
                    key.append(None)
                else:
                    specs.append(spec)
                    key.append((spec.value, spec.mask))
            elif kind == "range":
                if isinstance(spec, Exact):
                    spec = RangeMatch(spec.value, spec.value)
                if not isinstance(spec, RangeMatch):
                    raise RuntimeConfigError(f"{where}: expected a range match")
                _fits(spec.low, width, where)
                _fits(spec.high, width, where)
                if spec.low > spec.high:
                    raise RuntimeConfigError(
                        f"{where}: range low {spec.low} is above high {spec.high}"
                    )
                if spec.low == 0 and spec.high == full:
                    specs.append(None)
                    key.append(None)
                else:
                    specs.append(spec)
                    key.append((spec.low, spec.high))
            elif kind == "optional":
                if isinstance(spec, Exact):
                    spec = OptionalMatch(spec.value)
                if not isinstance(spec, OptionalMatch):
                    raise RuntimeConfigError(f"{where}: expected an optional match")
                _fits(spec.value, width, where)
                specs.append(spec)
                key.append(spec.value)
            else:  # pragma: no cover - schema guarantees the kinds
                raise P4UnsupportedError(f"{where}: match kind {kind} is not supported")
        return tuple(specs), tuple(key)

    def _full_key(self, key: tuple, priority: int) -> tuple:
        return (key, priority) if self.mode == "priority" else key

    def _priority(self, priority: int | None) -> int:
        if self.mode == "priority":
            if priority is None:
                raise RuntimeConfigError(
                    f"table {self.name}: a priority is required for ternary, range "
                    "and optional matches"
                )
            return priority
        return 0 if priority is None else priority

    def _check_action(self, action: int, allowed: frozenset[int], what: str) -> None:
        if action not in allowed:
            raise RuntimeConfigError(f"table {self.name}: action {action} is not {what}")

    # -- control plane -------------------------------------------------------

    def insert(
        self,
        matches: Matches,
        action: int,
        args: Sequence[int] = (),
        priority: int | None = None,
        *,
        normalize: bool = False,
        ref: int | None = None,
    ) -> Entry:
        """Add an entry. ``normalize=True`` masks value bits outside a ternary
        mask or lpm prefix as BMv2's CLI does, instead of rejecting them as
        P4Runtime does. ``priority`` is ignored by exact and lpm tables. An
        indirect table takes ``ref`` (member handle or ``~group``) and
        ignores ``action``/``args``."""
        specs, key = self._canonical(matches, normalize)
        prio = self._priority(priority)
        full_key = self._full_key(key, prio)
        if full_key in self._by_key:
            raise RuntimeConfigError(f"table {self.name}: entry already exists")
        if len(self._by_key) >= self.size:
            raise RuntimeConfigError(f"table {self.name}: table full ({self.size} entries)")
        self._check_kind(ref)
        if ref is None:
            self._check_action(action, self._entry_actions, "allowed in table entries")
        else:
            self.profile.use(ref)  # type: ignore[union-attr]
            action, args = -1, ()
        meter = self._meter_factory() if self._meter_factory is not None else None
        entry = Entry(specs, action, tuple(args), prio, self._next_handle, meter)
        entry.ref = ref
        self._next_handle += 1
        self._by_key[full_key] = entry
        if self.mode == "lpm":
            self._lpm_add(key, entry)
        elif self.mode == "priority":
            self._scan_add(specs, entry)
        return entry

    def _resolve(self, target: Entry | Matches, priority: int | None) -> tuple[tuple, Entry]:
        if isinstance(target, Entry):
            specs, key = self._canonical(target.matches, False)
            full_key = self._full_key(key, target.priority)
        else:
            specs, key = self._canonical(target, False)
            full_key = self._full_key(key, self._priority(priority))
        entry = self._by_key.get(full_key)
        if entry is None:
            raise RuntimeConfigError(f"table {self.name}: entry does not exist")
        return full_key, entry

    def find(self, matches: Matches, priority: int | None = None) -> Entry | None:
        """The installed entry with exactly these matches (and priority)."""
        specs, key = self._canonical(matches, False)
        return self._by_key.get(self._full_key(key, self._priority(priority)))

    def modify(
        self,
        target: Entry | Matches,
        action: int,
        args: Sequence[int] = (),
        priority: int | None = None,
        *,
        ref: int | None = None,
    ) -> Entry:
        """Change an entry's action and arguments (an indirect table's
        entry: its ``ref``); counters and meter stay."""
        _, entry = self._resolve(target, priority)
        self._check_kind(ref)
        if ref is not None:
            self.profile.use(ref)  # type: ignore[union-attr]
            self.profile.release(entry.ref)  # type: ignore[union-attr,arg-type]
            entry.ref = ref
            return entry
        self._check_action(action, self._entry_actions, "allowed in table entries")
        entry.action = action
        entry.args = tuple(args)
        return entry

    def _check_kind(self, ref: int | None) -> None:
        if (ref is None) != (self.profile is None):
            how = "a member or group" if ref is None else "an action"
            raise RuntimeConfigError(f"table {self.name}: its entries take {how}")

    def delete(self, target: Entry | Matches, priority: int | None = None) -> Entry:
        """Remove an entry and return it."""
        full_key, entry = self._resolve(target, priority)
        del self._by_key[full_key]
        if entry.ref is not None:
            self.profile.release(entry.ref)  # type: ignore[union-attr]
        if self.mode == "lpm":
            self._lpm_remove(full_key, entry)
        elif self.mode == "priority":
            i = bisect_left(self._scan_keys, (-entry.priority, entry.handle))
            del self._scan_keys[i]
            del self._scan[i]
        return entry

    def clear(self) -> None:
        """Remove every entry; the default action is kept."""
        if self.profile is not None:
            for entry in self._by_key.values():
                self.profile.release(entry.ref)  # type: ignore[arg-type]
        self._by_key.clear()
        self._levels.clear()
        self._level_dicts.clear()
        self._forget_lpm_results()
        self._scan.clear()
        self._scan_keys.clear()

    def set_default(self, action: int, args: Sequence[int] = ()) -> None:
        if self.info.const_default_action:
            raise RuntimeConfigError(f"table {self.name}: the default action is const")
        self._check_action(action, self._default_actions, "allowed as default action")
        self.default[:] = (action, tuple(args))

    def reset_default(self) -> None:
        """Back to the program's declared default action."""
        self.default[:] = self._initial_default

    @property
    def default_action(self) -> int:
        return self.default[0]

    @property
    def default_args(self) -> tuple[int, ...]:
        return self.default[1]

    @property
    def entries(self) -> Iterator[Entry]:
        """Installed entries in insertion order."""
        return iter(list(self._by_key.values()))

    def __len__(self) -> int:
        return len(self._by_key)

    # -- index maintenance ---------------------------------------------------

    def _lpm_key(self, key: tuple) -> tuple[int, object]:
        """(prefix length, level-dict key) of a canonical lpm-mode key."""
        pos = self._lpm_pos
        lpm = key[pos]
        value, plen = (0, 0) if lpm is None else lpm
        if len(key) == 1:
            return plen, value
        return plen, (value, key[:pos] + key[pos + 1 :])

    def _lpm_add(self, key: tuple, entry: Entry) -> None:
        plen, lkey = self._lpm_key(key)
        level = self._level_dicts.get(plen)
        if level is None:
            level = self._level_dicts[plen] = {}
            self._rebuild_levels()
        level[lkey] = entry
        self._forget_lpm_results()

    def _lpm_remove(self, key: tuple, entry: Entry) -> None:
        plen, lkey = self._lpm_key(key)
        level = self._level_dicts[plen]
        del level[lkey]
        self._forget_lpm_results()
        if not level:
            del self._level_dicts[plen]
            self._rebuild_levels()

    def _rebuild_levels(self) -> None:
        full = (1 << self.widths[self._lpm_pos]) - 1
        self._levels[:] = [
            (full ^ (full >> plen), self._level_dicts[plen])
            for plen in sorted(self._level_dicts, reverse=True)
        ]

    def _scan_add(self, specs: tuple[MatchSpec | None, ...], entry: Entry) -> None:
        mask = value = 0
        ranges: list[tuple[int, int, int]] = []
        for i, (spec, width, shift) in enumerate(
            zip(specs, self.widths, self._shifts, strict=True)
        ):
            full = (1 << width) - 1
            if spec is None:
                continue
            if isinstance(spec, RangeMatch):
                ranges.append((i, spec.low, spec.high))
                continue
            if isinstance(spec, Ternary):
                m, v = spec.mask, spec.value
            elif isinstance(spec, Lpm):
                m = full ^ (full >> spec.prefix_len)
                v = spec.value
            else:  # Exact, OptionalMatch
                m, v = full, spec.value
            mask |= m << shift
            value |= v << shift
        sort_key = (-entry.priority, entry.handle)
        i = bisect_left(self._scan_keys, sort_key)
        self._scan_keys.insert(i, sort_key)
        self._scan.insert(i, (mask, value, tuple(ranges), entry))


def _fits(value: int, width: int, where: str) -> None:
    if value < 0 or value >> width:
        raise RuntimeConfigError(f"{where}: value {value:#x} does not fit in {width} bits")


@cython.locals(level=dict)
def _longest_prefix(levels: list[tuple[int, dict]], value: int) -> Entry | None:
    """A one-field lpm table's entry for ``value``: the first level (longest
    prefix first) whose masked key holds one."""
    for mask, level in levels:
        entry = level.get(value & mask)
        if entry is not None:
            return entry  # type: ignore[no-any-return]
    return None
