"""Table rules: keys and match kinds, the action list, the default action
and constant entries (key count, masks and ranges per match kind, action
arguments, priorities)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataplane.compiler.check.env import ACTION, CONST, INSTANCE, Entity
from dataplane.compiler.check.exprs import ApplyResultT, err
from dataplane.compiler.check.typeref import known
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.types import BitT, BoolT, EnumT, ErrorT, IntT, MatchKindT, Type

if TYPE_CHECKING:
    from dataplane.compiler.check.checker import Checker

OBJECT_PROPERTIES = ("counters", "meters", "implementation")


class TableRules:
    """Table declarations for ``Checker``."""

    def table(self: Checker, d: ast.TableDecl) -> None:
        key_types: list[Type | None] = []
        _no_self_reference(d)
        for k in d.keys:
            kt = self.expr(k.expr)
            key_types.append(kt)
            sk = known(kt)
            if sk is not None and not isinstance(sk, BitT | BoolT | EnumT | ErrorT):
                raise err(k.expr, f"a key is a bit-string, bool, enum or error, not {kt}")
            mk = self.scope.lookup(k.match_kind)
            if mk is None or mk.kind != CONST or not isinstance(mk.type, MatchKindT):
                raise err(k, f"'{k.match_kind}' is not a match kind")
            if not _names_itself(k.expr) and not any(a.name == "name" for a in k.annotations):
                raise err(k.expr, "a key that is not a name, constant, or a member, index, "
                                  "slice, & or isValid() of such needs a @name annotation "
                                  "(p4c's rule: the control plane names keys)")
        listed: list[Entity] = []
        for ref in d.actions:
            ent = self.action_ref(ref)
            self.action_args(ref, ent, directional_only=True)
            if any(ent is x for x in listed):
                raise err(ref, f"action {ent.decl.name} is listed twice in table {d.name}")
            listed.append(ent)
        if d.default_action is not None:
            ent = self.action_ref(d.default_action)
            if all(ent is not x for x in listed):
                raise err(d.default_action, f"default action {ent.decl.name} is not in the "
                                            f"actions of table {d.name}")
            if _listed_with(d, listed, ent, "tableonly"):
                raise err(d.default_action, f"default action {ent.decl.name} is listed "
                                            "@tableonly: it may not be the default action")
            self.action_args(d.default_action, ent, directional_only=False)
        for p in d.properties:
            self.table_property(d, p)
        if d.entries:
            self.entries(d, key_types, listed)

    def no_table_apply(self: Checker, e: ast.Expr, where: str) -> None:
        """An action bound in a table's actions list takes no argument that
        applies a table (p4c; a table applied in a key is accepted)."""
        for n in ast.walk(e):
            if isinstance(n, ast.Call) and isinstance(self.facts.types.get(id(n)),
                                                      ApplyResultT):
                raise err(n, f"a table is applied in {where} of a table")

    def action_ref(self: Checker, ref: ast.ActionRef) -> Entity:
        e = ref.name
        if not isinstance(e, ast.Name):
            raise err(ref, "an action is named by an identifier")
        ent = self.lookup(e)
        if ent.kind != ACTION:
            raise err(ref, f"'{e.name}' is a {ent.kind}, not an action")
        return ent

    def action_args(self: Checker, ref: ast.ActionRef, ent: Entity,
                    directional_only: bool) -> None:
        """In the actions list only directional parameters take arguments;
        a default action or an entry gives every one."""
        params = ent.decl.params
        ndir = sum(1 for p in params if p.direction)
        most = ndir if directional_only else len(params)
        if len(ref.args) > most:
            raise err(ref, f"action {ent.decl.name} takes {most} argument(s) here, got "
                           f"{len(ref.args)}")
        if not directional_only and len(ref.args) < len(params):
            cp = len(params) - ndir
            raise err(ref, f"action '{ent.decl.name}' needs {cp} control-plane argument(s), "
                           f"got {max(0, len(ref.args) - ndir)}")
        for p, pt, a in zip(params, ent.params, ref.args):
            at = self.expr(a.value, pt)
            self.no_table_apply(a.value, "an action argument")
            if p.direction in ("out", "inout"):
                self.lvalue(a.value, f"argument for {p.direction} parameter '{p.name}'")
            elif not p.direction and not self.is_constant(a.value):
                raise err(a.value, f"the argument for action parameter '{p.name}' (set by the "
                                   "control plane) must be a compile-time constant here")
            self.converts(at, pt, a.value)

    def table_property(self: Checker, d: ast.TableDecl, p: ast.TableProperty) -> None:
        if p.name in OBJECT_PROPERTIES and isinstance(p.value, ast.Name):
            ent = self.lookup(p.value)
            if ent.kind != INSTANCE:
                raise err(p, f"table {d.name}: '{p.name}' names a {ent.kind}, not an extern "
                             "instance")
            return
        t = known(self.expr(p.value))
        if p.name in ("size", "priority_delta") and not self.is_constant(p.value):
            raise err(p.value, f"table {d.name}: '{p.name}' must be a compile-time constant")
        if p.name in ("size", "priority_delta"):
            v = self.res.const_value(p.value, self.scope)
            if not isinstance(t, BitT | IntT) or (isinstance(v, int) and v < 0):
                raise err(p.value, f"table {d.name}: '{p.name}' is a non-negative integer")
        if p.name == "largest_priority_wins" and not isinstance(t, BoolT):
            raise err(p.value, f"table {d.name}: 'largest_priority_wins' is a bool")

    def entries(self: Checker, d: ast.TableDecl, key_types: list[Type | None],
                listed: list[Entity]) -> None:
        kinds = [k.match_kind for k in d.keys]
        for entry in d.entries or []:
            elems = entry.keyset.elems
            if len(elems) == 1 and isinstance(elems[0], ast.ListExpr) and (
                    len(kinds) > 1 or len(elems[0].elems) == 1):
                elems = elems[0].elems
            if len(elems) != len(kinds):
                raise err(entry, f"this entry has {len(elems)} key value(s); table {d.name} "
                                 f"has {len(kinds)} key(s)")
            for x, kind, kt in zip(elems, kinds, key_types):
                self.entry_key(x, kind, kt)
            ent = self.action_ref(entry.action)
            if all(ent is not x for x in listed):
                raise err(entry.action, f"action '{ent.decl.name}' is not in the actions of "
                                        f"table {d.name}")
            if _listed_with(d, listed, ent, "defaultonly"):
                raise err(entry.action, f"action '{ent.decl.name}' is listed @defaultonly: "
                                        "an entry may not use it")
            self.action_args(entry.action, ent, directional_only=False)
            if entry.priority is not None:
                self.expr(entry.priority)
        self.entry_priorities(d)

    def entry_key(self: Checker, x: ast.Expr, kind: str, kt: Type | None) -> None:
        if kind == "exact" and isinstance(x, ast.Default | ast.DontCare):
            raise err(x, "an exact key matches one value: an entry gives it one, not '_' or "
                         "default")
        self.keyset_elem(x, kt, "a table entry key")
        k = known(kt)
        if isinstance(x, ast.Mask):
            if kind in ("exact", "optional"):
                raise err(x, f"a mask (&&&) is not a key for match kind {kind}: give a value "
                             "(or default)")
            m = self.res.const_value(x.mask, self.scope)
            if kind == "lpm" and isinstance(k, BitT) and isinstance(m, int):
                m &= k.mask
                plen = bin(m).count("1")
                if m != k.mask ^ ((1 << (k.width - plen)) - 1):
                    raise err(x, f"mask {m:#x} of an lpm key is not a prefix of {k.width} bits "
                                 "(ones from the top, then zeros)")
        elif isinstance(x, ast.Range) and kind not in ("range", "ternary"):
            raise err(x, f"a range (..) is not a key for match kind {kind}")

    def entry_priorities(self: Checker, d: ast.TableDecl) -> None:
        """P4-16's rules for entries that give ``priority = N``: once one
        does, the first must too, and each entry without one takes the
        previous entry's priority moved by ``priority_delta`` (down when
        ``largest_priority_wins``, the default), which must stay >= 1."""
        entries = d.entries or []
        given = next((e for e in entries if e.priority is not None), None)
        if given is None:
            return
        if d.entries_const:
            raise err(given, f"table {d.name}: 'const entries' cannot have priorities "
                             "(declare them as 'entries')")
        if d.keys and all(k.match_kind in ("exact", "lpm") for k in d.keys):
            raise err(given, f"table {d.name}: its keys are all exact or lpm, which do not "
                             "need priorities, but this entry gives one")
        first = entries[0]
        if first.priority is None:
            later = next(e for e in entries if e.priority is not None)
            raise err(first, f"the first entry has no priority, but the entry on line "
                             f"{later.loc.line} has one: give the first entry a priority")
        props = {p.name: p.value for p in d.properties}
        delta = self.res.const_value(props["priority_delta"], self.scope) \
            if "priority_delta" in props else 1
        down = True
        if "largest_priority_wins" in props:
            wins = props["largest_priority_wins"]
            self.converts(self.expr(wins), BoolT(), wins)
            down = bool(self.res.const_value(props["largest_priority_wins"], self.scope))
        prio = self.res.const_value(first.priority, self.scope)  # type: ignore[arg-type]
        if not isinstance(prio, int) or not isinstance(delta, int):
            return
        for e in entries[1:]:
            if e.priority is not None:
                p = self.res.const_value(e.priority, self.scope)
                if not isinstance(p, int):
                    return
                prio = p
                continue
            prio = prio - delta if down else prio + delta
            if prio < 1:
                raise err(e, f"this entry's priority would be {prio} (the previous one's "
                             f"minus priority_delta {delta}); priorities must be >= 1")


def _listed_with(d: ast.TableDecl, listed: list[Entity], ent: Entity, anno: str) -> bool:
    """Whether the actions list names ``ent`` with annotation ``anno``
    (``@tableonly``, ``@defaultonly``: spec 14.2.1.2)."""
    return any(x is ent and any(a.name == anno for a in ref.annotations)
               for ref, x in zip(d.actions, listed))


def _names_itself(e: ast.Expr) -> bool:
    """A key p4c names from its own text (its ``KeyNameGenerator``): a
    name, a constant, a member, index, slice or ``&`` of such, or
    ``isValid()`` of one; anything else needs ``@name``."""
    if isinstance(e, ast.Name | ast.IntLit | ast.BoolLit):
        return True
    if isinstance(e, ast.Member):
        return _names_itself(e.expr)
    if isinstance(e, ast.Index):
        return _names_itself(e.expr) and _names_itself(e.index)
    if isinstance(e, ast.Slice):
        return _names_itself(e.expr) and _names_itself(e.hi) and _names_itself(e.lo)
    if isinstance(e, ast.Binary) and e.op == "&":
        return _names_itself(e.left) and _names_itself(e.right)
    if isinstance(e, ast.Call):
        f = e.func
        return (isinstance(f, ast.Member) and f.name == "isValid" and not e.args
                and _names_itself(f.expr))
    return False


def _no_self_reference(d: ast.TableDecl) -> None:
    """A table's keys and action arguments do not name the table itself."""
    parts = [k.expr for k in d.keys] + [a.value for r in d.actions for a in r.args]
    for n in ast.walk(parts):
        if isinstance(n, ast.Name) and not n.absolute and n.name == d.name:
            raise err(n, f"table {d.name} cannot refer to itself")
