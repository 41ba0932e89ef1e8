"""Names to P4Info objects and back.

Control-plane objects are found by their fully qualified name or their alias
(``MyIngress.ipv4_lpm`` or ``ipv4_lpm``), as p4runtime-shell does; match
fields by full name or a unique dotted suffix (``hdr.ipv4.dstAddr`` or
``dstAddr``); action parameters and controller metadata by name.
"""

from __future__ import annotations

from typing import Any

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
)


def _singular(kind: str) -> str:
    return kind.rstrip("s").replace("_", " ")


class P4InfoIndex:
    """Lookups over one P4Info message."""

    def __init__(self, p4info: Any) -> None:
        self.p4info = p4info
        self._names: dict[str, dict[str, Any]] = {}
        self._ids: dict[int, Any] = {}
        for kind in KINDS:
            table: dict[str, Any] = {}
            for obj in getattr(p4info, kind):
                pre = obj.preamble
                table[pre.name] = obj
                self._ids[pre.id] = obj
            for obj in getattr(p4info, kind):
                table.setdefault(obj.preamble.alias, obj)
            self._names[kind] = table

    def get(self, kind: str, name: str) -> Any:
        found = self._names[kind].get(name)
        if found is None:
            found = self._names[kind].get(name.lstrip("."))
        if found is None:
            raise UnknownNameError(f"no {_singular(kind)} named '{name}' in the P4Info")
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

    @staticmethod
    def match_field(table: Any, name: str) -> Any:
        exact = [f for f in table.match_fields if f.name == name]
        if exact:
            return exact[0]
        tail = [f for f in table.match_fields if f.name.endswith("." + name)]
        if len(tail) == 1:
            return tail[0]
        known = ", ".join(f.name for f in table.match_fields) or "none"
        what = "ambiguous" if tail else "unknown"
        raise UnknownNameError(
            f"{what} match field '{name}' in table {table.preamble.name} (fields: {known})"
        )

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
