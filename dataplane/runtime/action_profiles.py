"""Action profiles and action selectors as BMv2 ``simple_switch`` keeps them.

An indirect table's entry holds no action of its own: it names a *member*
(an action with its arguments, shared by every table of the profile) or, with
a selector, a *group* of members. BMv2 (``src/bm_sim/action_profile.cpp``)
gives members and groups the smallest free handle, keeps a group's members as
a sorted set of member handles, and picks member ``n = h % size`` of that
sorted set, where ``h`` is the selector's calculation over the ``selector``
key fields cast to a 32-bit unsigned int (a profile without a hash picks
member 0). A group with no members makes the lookup run no action at all
("empty group"). Refusals carry BMv2's ``MatchErrorCode`` name so the
P4Runtime service can answer with the status PI gives for it.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Sequence
from dataclasses import dataclass

from common.errors import P4UnsupportedError, RuntimeConfigError
from dataplane.runtime.externs import HASH_ALGORITHMS, pack_bits

HASH_MASK = 0xFFFFFFFF  # BMv2's ActionProfile::hash_t is an unsigned int


class ActionProfileError(RuntimeConfigError):
    """A member or group operation BMv2 refuses; ``code`` is its MatchErrorCode."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class IndirectRef:
    """What an indirect entry points at, in the engine's encoding: a member
    handle (>= 0) or ``~group``."""

    ref: int

    @classmethod
    def member(cls, handle: int) -> IndirectRef:
        return cls(handle)

    @classmethod
    def group(cls, handle: int) -> IndirectRef:
        return cls(~handle)


class Member:
    """One member: the action and arguments an entry or a group points at.

    ``users`` counts the groups and table entries that reference it (BMv2's
    reference count, which keeps a used member from being deleted)."""

    __slots__ = ("action", "args", "users")

    def __init__(self, action: int, args: tuple[int, ...]) -> None:
        self.action = action
        self.args = args
        self.users = 0

    def __repr__(self) -> str:
        return f"Member(action={self.action}, args={self.args!r})"


class Group:
    """A selector group: member handles kept sorted, as BMv2's ``RandAccessUIntSet``."""

    __slots__ = ("members", "users")

    def __init__(self) -> None:
        self.members: list[int] = []
        self.users = 0


def _smallest_free(slots: list) -> int:
    for i, item in enumerate(slots):
        if item is None:
            return i
    slots.append(None)
    return len(slots) - 1


class ActionProfile:
    """Members and groups of one ``action_profile`` or ``action_selector``.

    ``algorithm`` is the selector's v1model ``HashAlgorithm`` member name
    (``None`` for a plain action profile, which has no groups).
    ``action_ids`` are the engine ids of the actions its tables allow.
    """

    __slots__ = ("name", "size", "algorithm", "members", "groups", "action_ids", "_hash")

    def __init__(self, name: str, size: int, algorithm: str | None = None,
                 action_ids: frozenset[int] = frozenset()) -> None:
        self.name = name
        self.size = size
        self.algorithm = algorithm
        self.action_ids = action_ids
        self.members: list[Member | None] = []
        self.groups: list[Group | None] = []
        if algorithm == "random":
            raise P4UnsupportedError(f"action selector {name}: HashAlgorithm.random is not "
                                     "supported (BMv2 simple_switch has no such hash)")
        self._hash = HASH_ALGORITHMS[algorithm] if algorithm is not None else None

    @property
    def with_selector(self) -> bool:
        return self.algorithm is not None

    # -- per packet ----------------------------------------------------------

    def choose(self, group: int, fields: Sequence[tuple[int, int]]) -> Member | None:
        """The member a packet with selector input ``fields`` gets from
        ``group``; ``None`` for an empty group."""
        handles = self.groups[group].members  # type: ignore[union-attr]
        if not handles:
            return None
        h = self._hash(pack_bits(fields)) & HASH_MASK if self._hash is not None else 0
        return self.members[handles[h % len(handles)]]

    # -- members -------------------------------------------------------------

    def _member(self, handle: int) -> Member:
        if 0 <= handle < len(self.members):
            member = self.members[handle]
            if member is not None:
                return member
        raise ActionProfileError("INVALID_MBR_HANDLE",
                                 f"action profile {self.name}: no member with handle {handle}")

    def _group(self, handle: int) -> Group:
        if self.algorithm is not None and 0 <= handle < len(self.groups):
            group = self.groups[handle]
            if group is not None:
                return group
        raise ActionProfileError("INVALID_GRP_HANDLE",
                                 f"action profile {self.name}: no group with handle {handle}")

    def _check_action(self, action: int) -> None:
        if self.action_ids and action not in self.action_ids:
            raise ActionProfileError("INVALID_ACTION_NAME",
                                     f"action profile {self.name}: action {action} is not "
                                     "an action of its tables")

    def add_member(self, action: int, args: Sequence[int]) -> int:
        """A new member; its handle is the smallest free one."""
        self._check_action(action)
        handle = _smallest_free(self.members)
        self.members[handle] = Member(action, tuple(args))
        return handle

    def member(self, handle: int) -> Member:
        return self._member(handle)

    def modify_member(self, handle: int, action: int, args: Sequence[int]) -> None:
        member = self._member(handle)
        self._check_action(action)
        member.action = action
        member.args = tuple(args)

    def delete_member(self, handle: int) -> None:
        member = self._member(handle)
        if member.users:
            raise ActionProfileError("MBR_STILL_USED",
                                     f"action profile {self.name}: member {handle} is still used")
        self.members[handle] = None

    # -- groups --------------------------------------------------------------

    def create_group(self) -> int:
        if self.algorithm is None:
            raise ActionProfileError("ERROR", f"action profile {self.name} has no selector")
        handle = _smallest_free(self.groups)
        self.groups[handle] = Group()
        return handle

    def group(self, handle: int) -> Group:
        return self._group(handle)

    def delete_group(self, handle: int) -> None:
        group = self._group(handle)
        if group.users:
            raise ActionProfileError("GRP_STILL_USED",
                                     f"action profile {self.name}: group {handle} is still used")
        for m in group.members:
            self.members[m].users -= 1  # type: ignore[union-attr]
        self.groups[handle] = None

    def add_to_group(self, group: int, member: int) -> None:
        mbr = self._member(member)
        grp = self._group(group)
        i = bisect_left(grp.members, member)
        if i < len(grp.members) and grp.members[i] == member:
            raise ActionProfileError("MBR_ALREADY_IN_GRP",
                                     f"action profile {self.name}: member {member} is already "
                                     f"in group {group}")
        insort(grp.members, member)
        mbr.users += 1

    def remove_from_group(self, group: int, member: int) -> None:
        mbr = self._member(member)
        grp = self._group(group)
        i = bisect_left(grp.members, member)
        if i == len(grp.members) or grp.members[i] != member:
            raise ActionProfileError("MBR_NOT_IN_GRP",
                                     f"action profile {self.name}: member {member} is not in "
                                     f"group {group}")
        del grp.members[i]
        mbr.users -= 1

    # -- references from table entries ---------------------------------------

    def use(self, ref: int) -> None:
        """An entry starts pointing at ``ref`` (a member handle, or ``~group``)."""
        if ref >= 0:
            self._member(ref).users += 1
        else:
            group = self._group(~ref)
            if not group.members:
                raise ActionProfileError("EMPTY_GRP",
                                         f"action profile {self.name}: group {~ref} is empty")
            group.users += 1

    def release(self, ref: int) -> None:
        if ref >= 0:
            self._member(ref).users -= 1
        else:
            self._group(~ref).users -= 1

    def clear(self) -> None:
        self.members.clear()
        self.groups.clear()

    def __repr__(self) -> str:
        live = sum(m is not None for m in self.members)
        return f"ActionProfile({self.name!r}, members={live})"
