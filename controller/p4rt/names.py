"""Names to P4Info objects and back.

Control-plane objects are found by their fully qualified name or their alias
(``MyIngress.ipv4_lpm`` or ``ipv4_lpm``), as p4runtime-shell does, and match
fields by full name or a unique dotted suffix (``hdr.ipv4.dstAddr`` or
``dstAddr``): both by ``common.names.lookup``, whose rule is this one (a
P4Info alias is the shortest unique dotted suffix). Action parameters and
controller metadata go by name.
"""

from __future__ import annotations

from typing import Any

from common.names import NameLookupError, lookup
from controller.p4rt.errors import UnknownNameError

KINDS = (
    "tables",
    "actions",
    "counters",
    "direct_counters",
    "meters",
    "direct_meters",
    "registers",
    "digests",
    "controller_packet_metadata",
    "action_profiles",
)


def _singular(kind: str) -> str:
    return kind.rstrip("s").replace("_", " ")


class P4InfoIndex:
    """Lookups over one P4Info message."""

    def __init__(self, p4info: Any) -> None:
        self.p4info = p4info
        self._names: dict[str, dict[str, Any]] = {}
        self._full: dict[str, list[str]] = {}
        self._ids: dict[int, Any] = {}
        for kind in KINDS:
            table: dict[str, Any] = {}
            for obj in getattr(p4info, kind):
                pre = obj.preamble
                table[pre.name] = obj
                self._ids[pre.id] = obj
            self._full[kind] = list(table)
            for obj in getattr(p4info, kind):
                table.setdefault(obj.preamble.alias, obj)
            self._names[kind] = table

    def get(self, kind: str, name: str) -> Any:
        found = self._names[kind].get(name)  # full names and aliases: the common case
        if found is None:
            try:
                full = lookup(name, self._full[kind], _singular(kind), "in the P4Info")
                found = self._names[kind][full]
            except NameLookupError as exc:
                raise UnknownNameError(exc.message) from None
        return found

    def by_id(self, ident: int) -> Any:
        found = self._ids.get(ident)
        if found is None:
            raise UnknownNameError(f"no object with id {ident} in the P4Info")
        return found

    def table(self, name: str) -> Any:
        return self.get("tables", name)

    def action(self, name: str) -> Any:
        return self.get("actions", name)

    def action_profile(self, name: str) -> Any:
        return self.get("action_profiles", name)

    @staticmethod
    def match_field(table: Any, name: str) -> Any:
        fields = {f.name: f for f in table.match_fields}
        try:
            return fields[lookup(name, fields, "match field", f"in table {table.preamble.name}")]
        except NameLookupError as exc:
            raise UnknownNameError(exc.message) from None

    @staticmethod
    def param(action: Any, name: str) -> Any:
        for p in action.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in action.params) or "none"
        raise UnknownNameError(
            f"action {action.preamble.name} has no parameter '{name}' (parameters: {known})"
        )

    def controller_header(self, name: str) -> Any | None:
        """The ``packet_in``/``packet_out`` metadata header, if the program has one."""
        return self._names["controller_packet_metadata"].get(name)

    def struct_members(self, name: str) -> list[str]:
        """Member names of a named struct of ``type_info`` (digests)."""
        structs = self.p4info.type_info.structs
        if name not in structs:
            return []
        return [m.name for m in structs[name].members]
