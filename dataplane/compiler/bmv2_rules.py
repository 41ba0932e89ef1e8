"""What p4c's BMv2 back end refuses in a program its front end accepts.

A program that compiles here must also compile for ``simple_switch``, or a
researcher finds out only when moving to BMv2. These rules look at the
generated program as a whole (tables, actions, externs), after code
generation, because each needs the resolved names and kinds.
"""

from __future__ import annotations

from typing import Any

from common.errors import Loc, P4SemanticError, P4UnsupportedError


def check_bmv2_rules(gen: Any) -> None:
    """Raise the first violation as a located error; ``gen`` is the
    ``CodeGen`` that generated the program."""
    _unique_names("table", [(rt.info.name, rt.sym) for rt in gen.tables])
    _unique_names("action", [(a.qname, a) for a in gen.action_syms])
    kinds = {e.qname: e.kind for e in gen.externs}
    for rt in gen.tables:
        table, decl = rt.info, rt.sym.decl
        lpm = [f.name for f in table.match_fields if f.match_type == "lpm"]
        if len(lpm) > 1:
            raise P4UnsupportedError(
                f"unsupported construct: table '{table.name}' with {len(lpm)} lpm keys "
                f"({', '.join(lpm)}); BMv2 matches at most one by prefix: make the others "
                "ternary", decl.loc)
        for prop, name, want in (("counters", table.direct_counter, "direct_counter"),
                                 ("meters", table.direct_meter, "direct_meter")):
            if name is not None and kinds.get(name) != want:
                raise P4SemanticError(
                    f"table '{table.name}': '{prop} = {name.rsplit('.', 1)[-1]}' needs a "
                    f"{want}, and '{name}' is a {kinds.get(name)}", _prop_loc(decl, prop))
        if table.direct_meter is not None and table.direct_meter not in gen.meters_read:
            raise P4UnsupportedError(
                f"unsupported construct: table '{table.name}' with a direct meter "
                f"'{table.direct_meter}' that no action reads; BMv2 needs the field the color "
                "is written to: call read() on the meter in the table's actions",
                _prop_loc(decl, "meters"))


def _unique_names(kind: str, named: list[tuple[str, Any]]) -> None:
    """P4Runtime names an object by its control-plane name: two different
    objects (two declarations, or one declaration in two instances whose
    ``@name`` is absolute) may not share one."""
    seen: dict[str, Any] = {}
    for name, sym in named:
        first = seen.setdefault(name, sym)
        if first is not sym and first.decl is sym.decl:
            raise P4SemanticError(
                f"{kind} '{name}' belongs to a block instantiated more than once, and its "
                "absolute @name gives every instance that one control-plane name; P4Runtime "
                "needs each name once: make the @name relative", sym.decl.loc)
        if first is not sym:
            where = first.decl.loc if isinstance(first.decl.loc, Loc) else None
            also = f" (also the name of the {kind} at {where})" if where else ""
            raise P4SemanticError(
                f"two {kind}s have the control-plane name '{name}'{also}; P4Runtime needs "
                "each name once: rename one, or give it another @name", sym.decl.loc)


def _prop_loc(decl: Any, prop: str) -> Any:
    for p in getattr(decl, "properties", []):
        if getattr(p, "name", None) == prop:
            return p.loc
    return decl.loc
