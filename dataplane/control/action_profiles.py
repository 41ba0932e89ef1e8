"""P4Runtime action profile members, groups and one-shot action sets, as PI does them.

PI's ``action_prof_mgr`` sits between P4Runtime ids and BMv2 handles, and its
choices decide which member a selector's hash picks:

* A member id gets the BMv2 handle ``act_prof_add_member`` returns: the
  smallest free one, so handles follow creation order, with reuse of
  deleted ones. A group keeps its members sorted by handle and picks
  ``h % n``, so the member chosen for a hash is the one at that rank in
  handle order, not in the order the group lists its members.
* A member of weight ``w`` in some group is ``w`` BMv2 members with the same
  action (the first is its own handle, the rest created on demand and
  deleted again when no group needs them), all in the group.
* A profile is programmed either with members and groups or with one-shot
  action sets, never both at once (INVALID_ARGUMENT; it may switch when
  empty). A one-shot set becomes a fresh group of fresh members, removed
  with its table entry.

Status codes are PI's: NOT_FOUND for unknown member or group ids,
ALREADY_EXISTS for duplicates, INVALID_ARGUMENT for bad weights, sizes and
mixed modes, RESOURCE_EXHAUSTED when weights exceed the group's size, and
UNKNOWN when BMv2 refuses (a member or group still in use).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from dataplane.control.errors import fail as _fail
from dataplane.runtime.action_profiles import ActionProfile, ActionProfileError

ActionValue = tuple[int, tuple[int, ...]]  # engine action id, arguments
DecodeAction = Callable[[Any], ActionValue]


@dataclasses.dataclass(slots=True)
class _MemberState:
    action: ActionValue
    handles: list[int]  # handles[0] is the member's own; more for weights > 1
    weights: dict[int, int] = dataclasses.field(default_factory=dict)  # group id -> weight


@dataclasses.dataclass(slots=True)
class _GroupState:
    handle: int
    max_size: int
    members: dict[int, int] = dataclasses.field(default_factory=dict)  # member id -> weight


@dataclasses.dataclass(slots=True)
class _OneShot:
    """A one-shot action set: its group and, per action, (handles, action, weight)."""

    group: int
    actions: list[tuple[list[int], ActionValue, int]]


class ProfileAccess:
    """One action profile's P4Runtime state over the engine's ``ActionProfile``."""

    def __init__(self, profile_id: int, name: str, profile: ActionProfile,
                 max_group_size: int) -> None:
        self.id = profile_id
        self.name = name
        self.profile = profile
        self.max_group_size = max_group_size
        self.mode: str | None = None  # "manual" or "oneshot"
        self.members: dict[int, _MemberState] = {}
        self.groups: dict[int, _GroupState] = {}
        self.oneshots: dict[int, _OneShot] = {}  # by group handle
        self._member_of_handle: dict[int, int] = {}
        self._group_of_handle: dict[int, int] = {}

    # -- programming mode ------------------------------------------------------

    def use_mode(self, mode: str) -> None:
        empty = not (self.members or self.groups or self.oneshots)
        if self.mode not in (None, mode) and not empty:
            raise _fail("INVALID_ARGUMENT",
                        f"action profile {self.name}: invalid attempt to mix action "
                        "selector programming modes")
        self.mode = mode

    # -- members -----------------------------------------------------------------

    def insert_member(self, member_id: int, action: ActionValue) -> None:
        self.use_mode("manual")
        if member_id in self.members:
            raise _fail("ALREADY_EXISTS", f"duplicate member id: {member_id}")
        handle = self._target(lambda: self.profile.add_member(*action), "creating member")
        self.members[member_id] = _MemberState(action, [handle])
        self._member_of_handle[handle] = member_id

    def modify_member(self, member_id: int, action: ActionValue) -> None:
        state = self._member(member_id)
        for h in state.handles:
            self._target(lambda h=h: self.profile.modify_member(h, *action), "modifying member")
        state.action = action

    def delete_member(self, member_id: int) -> None:
        state = self._member(member_id)
        for h in list(state.handles):
            self._target(lambda h=h: self.profile.delete_member(h), "deleting member")
            state.handles.remove(h)
            del self._member_of_handle[h]
        del self.members[member_id]

    def _member(self, member_id: int) -> _MemberState:
        state = self.members.get(member_id)
        if state is None:
            raise _fail("NOT_FOUND", f"member id does not exist: {member_id}")
        return state

    # -- groups ------------------------------------------------------------------

    def insert_group(self, group_id: int, max_size: int,
                     members: Iterable[tuple[int, int]]) -> None:
        self.use_mode("manual")
        if max_size < 0:
            raise _fail("INVALID_ARGUMENT", "group max_size cannot be less than 0")
        if self.max_group_size > 0 and max_size > self.max_group_size:
            raise _fail("INVALID_ARGUMENT",
                        "group max_size cannot exceed static max_group_size (from P4Info)")
        if group_id in self.groups:
            raise _fail("ALREADY_EXISTS", f"duplicate group id: {group_id}")
        wanted = self._membership(max_size, members)
        handle = self._target(self.profile.create_group, "creating group")
        state = self.groups[group_id] = _GroupState(handle, max_size)
        self._group_of_handle[handle] = group_id
        self._set_members(group_id, state, wanted)

    def modify_group(self, group_id: int, max_size: int,
                     members: Iterable[tuple[int, int]]) -> None:
        state = self._group(group_id)
        if max_size and max_size != state.max_size:
            raise _fail("INVALID_ARGUMENT", "cannot change group max_size after group creation")
        self._set_members(group_id, state, self._membership(state.max_size, members))

    def delete_group(self, group_id: int) -> None:
        state = self._group(group_id)
        self._target(lambda: self.profile.delete_group(state.handle), "deleting group")
        del self.groups[group_id]
        del self._group_of_handle[state.handle]
        for member_id in state.members:
            member = self.members[member_id]
            del member.weights[group_id]
            self._purge(member)

    def _group(self, group_id: int) -> _GroupState:
        state = self.groups.get(group_id)
        if state is None:
            raise _fail("NOT_FOUND", f"group id does not exist: {group_id}")
        return state

    def _membership(self, max_size: int, members: Iterable[tuple[int, int]]) -> dict[int, int]:
        """The checked new membership, member id -> weight (before any change)."""
        wanted: dict[int, int] = {}
        pairs = list(members)
        for _, weight in pairs:
            if weight <= 0:
                raise _fail("INVALID_ARGUMENT", "member weight must be a positive integer value")
        limit = max_size or self.max_group_size
        if limit > 0 and sum(w for _, w in pairs) > limit:
            raise _fail("RESOURCE_EXHAUSTED", "sum of member weights exceeds maximum group size")
        for member_id, weight in pairs:
            self._member(member_id)
            if member_id in wanted:
                raise _fail("INVALID_ARGUMENT",
                            f"duplicate member id {member_id} in a group, use weights instead")
            wanted[member_id] = weight
        return wanted

    def _set_members(self, group_id: int, state: _GroupState, wanted: dict[int, int]) -> None:
        for member_id in sorted(set(state.members) | set(wanted)):
            member = self.members[member_id]
            old, new = state.members.get(member_id, 0), wanted.get(member_id, 0)
            while len(member.handles) < new:
                h = self._target(lambda m=member: self.profile.add_member(*m.action),
                                 "creating member")
                member.handles.append(h)
                self._member_of_handle[h] = member_id
            for i in range(old - 1, new - 1, -1):
                self._target(lambda i=i, m=member: self.profile.remove_from_group(
                    state.handle, m.handles[i]), "removing member from group")
            for i in range(old, new):
                self._target(lambda i=i, m=member: self.profile.add_to_group(
                    state.handle, m.handles[i]), "adding member to group")
            if new:
                state.members[member_id] = new
                member.weights[group_id] = new
            else:
                state.members.pop(member_id, None)
                member.weights.pop(group_id, None)
            self._purge(member)

    def _purge(self, member: _MemberState) -> None:
        """Delete the weight copies no group needs any more (the newest first)."""
        keep = max(member.weights.values(), default=1)
        while len(member.handles) > keep:
            h = member.handles[-1]
            self._target(lambda h=h: self.profile.delete_member(h), "deleting member copy")
            member.handles.pop()
            del self._member_of_handle[h]

    # -- one-shot action sets ------------------------------------------------------

    def create_oneshot(self, actions: list[tuple[ActionValue, int]]) -> int:
        """A group for a one-shot action set; the entry's ``~group`` reference."""
        self.use_mode("oneshot")
        if not actions:
            raise _fail("UNIMPLEMENTED", "no support for empty action profile groups")
        if any(weight <= 0 for _, weight in actions):
            raise _fail("INVALID_ARGUMENT", "member weight must be a positive integer value")
        if self.max_group_size > 0 and sum(w for _, w in actions) > self.max_group_size:
            raise _fail("RESOURCE_EXHAUSTED",
                        "sum of weights exceeds static max_group_size (from P4Info)")
        made: list[tuple[list[int], ActionValue, int]] = []
        group = self._target(self.profile.create_group, "creating group")
        for action, weight in actions:
            handles = [self.profile.add_member(*action) for _ in range(weight)]
            made.append((handles, action, weight))
            for h in handles:
                self.profile.add_to_group(group, h)
        self.oneshots[group] = _OneShot(group, made)
        return ~group

    def delete_oneshot(self, ref: int) -> None:
        shot = self.oneshots.pop(~ref)
        self.profile.delete_group(shot.group)
        for handles, _, _ in shot.actions:
            for h in handles:
                self.profile.delete_member(h)

    # -- table entries -------------------------------------------------------------

    def entry_ref(self, kind: str, ident: int) -> int:
        """The engine reference of a member or group id named by a table entry."""
        self.use_mode("manual")
        if kind == "member":
            state = self.members.get(ident)
            if state is not None:
                return state.handles[0]
        else:
            group = self.groups.get(ident)
            if group is not None:
                return ~group.handle
        raise _fail("INVALID_ARGUMENT", "invalid member / group id")

    def describe_ref(self, ref: int) -> tuple[str, Any]:
        """What a table entry's reference reads back as: ("member", id),
        ("group", id) or ("oneshot", [(action, weight), ...])."""
        if ref >= 0:
            return "member", self._member_of_handle[ref]
        if ~ref in self.oneshots:
            return "oneshot", [(a, w) for _, a, w in self.oneshots[~ref].actions]
        return "group", self._group_of_handle[~ref]

    def clear(self) -> None:
        self.profile.clear()
        self.members.clear()
        self.groups.clear()
        self.oneshots.clear()
        self._member_of_handle.clear()
        self._group_of_handle.clear()
        self.mode = None

    def _target(self, op: Callable[[], Any], what: str) -> Any:
        """Run an engine operation; BMv2's refusal is PI's UNKNOWN."""
        try:
            return op()
        except ActionProfileError as exc:
            raise _fail("UNKNOWN", f"error when {what} on target: {exc.code} "
                                   f"({exc.message})") from None
