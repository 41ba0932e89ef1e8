"""What p4c's BMv2 back end refuses in a program its front end accepts,
where only the generated instances show it.

A program that compiles here must also compile for ``simple_switch``, or a
researcher finds out only when moving to BMv2. The rules one declaration
shows (lpm keys, direct counters and meters) are the checking pass's
(``check.target``); the one here compares the control-plane names of every
instance, so it runs after code generation.
"""

from __future__ import annotations

from typing import Any

from common.errors import Loc, P4SemanticError


def check_bmv2_rules(gen: Any) -> None:
    """Raise the first violation as a located error; ``gen`` is the
    ``CodeGen`` that generated the program."""
    _unique_names("table", [(rt.info.name, rt.sym) for rt in gen.tables])
    _unique_names("action", [(a.qname, a) for a in gen.action_syms])


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

