"""Tables: a table's P4Info and runtime description, its generated
lookup-and-dispatch function, action profiles and selectors, and const
entries and default actions folded to the runtime's match values. Apart
because a table is the one construct that is half control-plane schema,
half generated code, and the runtime's ``Table`` reads what is made
here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dataplane import schema as sc
from dataplane.compiler.codegen.naming import ident
from dataplane.compiler.codegen.values import ApplyResultT, Val, slot
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.scope import ActionSym, InstanceSym, Scope, TableSym
from dataplane.compiler.frontend.types import BitT, BoolT, EnumT, ErrorT, Type, slots, strip

if TYPE_CHECKING:
    from dataplane.compiler.codegen.generator import CodeGen


class TableMixin:
    """Table compilation for CodeGen."""

    def table_actions(self: CodeGen, sym: TableSym) -> list[tuple[ast.ActionRef, ActionSym]]:
        out = []
        for ref in sym.decl.actions:
            out.append((ref, self.resolve_action(ref, sym.scope)))
        return out

    def resolve_action(self: CodeGen, ref: ast.ActionRef, scope: Scope) -> ActionSym:
        e = ref.name
        a = (self.root if e.absolute else scope).lookup(e.name) if isinstance(
            e, ast.Name) else None
        if not isinstance(a, ActionSym):
            raise self.internal(ref, f"a table naming an unknown action '{_text(e)}'")
        return a

    def apply_table(self: CodeGen, sym: TableSym, e: ast.Call) -> Val:
        fn = self.gen_table(sym)
        # The table function returns action * 2 + hit in one int (no tuple
        # to make and unpack); compiled, the result is a machine word.
        r = self.fresh("r")
        self.w(f"{r} = {fn}(s)")
        self.w.ctypes[r] = "cython.long"
        return Val(ApplyResultT(sym, f"(({r} & 1) == 1)", f"({r} >> 1)"))

    def gen_table(self: CodeGen, sym: TableSym) -> str:
        if sym.func:
            return sym.func
        from dataplane.compiler.codegen.generator import FuncCtx, TableRuntime

        decl = sym.decl
        idx = len(self.tables)
        sym.index = idx
        sym.func = f"t_{ident(sym.qname)}_{idx}"
        info = sc.TableInfo(name=sym.qname, match_fields=[], action_refs=[], default_action="")
        info.annotations = self.anno_texts(decl.annotations)
        rt = TableRuntime(sym, info)
        self.tables.append(rt)
        saved_scope = self.scope
        self.scope = sym.scope
        try:
            refs = self.table_actions(sym)
            ids: list[int] = []
            for ref, asym in refs:
                ids.append(self.action_id(asym))
                self.gen_action(asym)
                scope_kind = "TABLE_AND_DEFAULT"
                names = {an.name for an in ref.annotations}
                if "defaultonly" in names:
                    scope_kind = "DEFAULT_ONLY"
                elif "tableonly" in names:
                    scope_kind = "TABLE_ONLY"
                info.action_refs.append(sc.ActionRefInfo(
                    asym.qname, scope_kind, self.anno_texts(ref.annotations)))
                self.register_action_info(asym)
            # default action
            dref = decl.default_action
            if dref is None:
                noaction = self.root.lookup("NoAction")
                if not isinstance(noaction, ActionSym):
                    raise self.err(decl, "table without default_action needs NoAction")
                if all(a is not noaction for _, a in refs):
                    refs.append((ast.ActionRef(ast.Name("NoAction"), [], [ast.Annotation(
                        "defaultonly")]), noaction))
                    ids.append(self.action_id(noaction))
                    self.gen_action(noaction)
                    info.action_refs.append(sc.ActionRefInfo(
                        noaction.qname, "DEFAULT_ONLY", ["@defaultonly"]))
                    self.register_action_info(noaction)
                dsym = noaction
                dargs: tuple[int, ...] = ()
            else:
                dsym = self.resolve_action(dref, sym.scope)
                if all(a is not dsym for _, a in refs):
                    raise self.internal(dref, f"default action '{dsym.decl.name}' outside the "
                                              "table's actions")
                dargs = self.const_action_args(dsym, dref, refs)
            rt.default_action = self.action_id(dsym)
            rt.default_args = dargs
            info.default_action = dsym.qname
            info.default_args = list(dargs)
            info.const_default_action = decl.default_action_const
            # properties
            profile: InstanceSym | None = None
            for prop in decl.properties:
                if prop.name == "size":
                    info.size = self.const_int(prop.value)
                elif prop.name in ("counters", "meters"):
                    inst = self.scope.lookup(prop.value.name) if isinstance(
                        prop.value, ast.Name) else None
                    if not isinstance(inst, InstanceSym):
                        raise self.err(prop, f"'{prop.name}' must name a direct extern instance")
                    ext = self.externs[inst.index]
                    ext.table = sym.qname
                    if prop.name == "counters":
                        info.direct_counter = inst.qname
                    else:
                        info.direct_meter = inst.qname
                    self.bind_direct(inst, sym.qname)
                elif prop.name == "implementation":
                    profile = self.table_implementation(sym, prop)
                    info.implementation = profile.qname
                elif prop.name == "support_timeout":
                    v = self.ev(prop.value)
                    info.idle_timeout = bool(v.const)
        finally:
            self.scope = saved_scope
        # code
        with self.function(f"{sym.func}(s)", FuncCtx("control"), sym.scope):
            w = self.w
            saved_lines = w.lines
            # Keys are evaluated here, in the table's own function: a key
            # expression may need statements (isValid on a stack element,
            # machine-word temporaries of a 31-63-bit sum), which belong
            # before the lookup, not in the function that applies the table.
            # keys
            key_codes: list[str] = []
            selector_exprs: list[ast.Expr] = []
            for k in decl.keys:
                if k.match_kind not in sc.MATCH_KINDS:
                    raise self.internal(k, f"match kind '{k.match_kind}'")
                if k.match_kind == "selector":
                    # Without an action selector the key feeds nothing (p4c
                    # accepts such a table; BMv2 has no use for the field).
                    selector_exprs.append(k.expr)
                kv = self.ev(k.expr)
                kt = strip(kv.type)
                if isinstance(kt, BoolT):
                    width, code = 1, f"(1 if {kv.code} else 0)"
                elif isinstance(kt, BitT):
                    width, code = kt.width, kv.code if not kt.signed else f"({kv.code} & {kt.mask})"
                elif isinstance(kt, EnumT) and kt.underlying is not None:
                    width, code = kt.underlying.width, kv.code
                elif isinstance(kt, ErrorT):
                    width, code = 32, kv.code
                else:
                    raise self.err(k, f"cannot match on a value of type {kv.type}")
                kname = self.anno_string(self.annotation(k.annotations, "name")) or _text(k.expr)
                info.match_fields.append(sc.MatchFieldInfo(
                    kname, width, k.match_kind, len(info.match_fields) + 1,
                    self.anno_texts(k.annotations)))
                if k.match_kind == "selector":
                    continue
                rt.key_widths.append(width)
                key_codes.append(code)
            if profile is not None:
                self.record_selector_input(profile, selector_exprs)
            if decl.entries is not None and profile is not None:
                raise self.internal(decl, "entries in a table with an implementation")
            if decl.entries is not None:
                info.has_initial_entries = True
                info.is_const_table = decl.entries_const
                self.const_entries(rt, decl, refs)
            keys = "(" + ", ".join(key_codes) + ("," if len(key_codes) == 1 else "") + ")"
            if [k.match_kind for k in decl.keys] == ["lpm"] and profile is None:
                # Compiled, the slots' answer read in C (tables.pxd), the
                # table's lookup on a miss; Python calls the lookup.
                self.lpm1_tables.add(idx)
                with w.block("if cython.compiled"):
                    w(f"e = lpm1_lookup(LK{idx}, LF{idx}, {key_codes[0]}, L{idx})")
                with w.block("else"):
                    w(f"e = L{idx}({keys})")
            else:
                w(f"e = L{idx}({keys})" if key_codes or profile is not None else "e = None")
            # Every action's arguments are a tuple (entries, members and
            # defaults keep them so): compiled, an argument is a C item read.
            # The hit entry is an Entry (an extension type when compiled:
            # its action and arguments are struct members).
            w.ctypes.update({"a": "cython.long", "hit": "cython.long", "args": "tuple",
                             "e": "Entry"})
            with w.block("if e is None"):
                w(f"a = TD{idx}[0]")
                w(f"args = TD{idx}[1]")
                w("hit = 0")
            with w.block("else"):
                if profile is None:
                    w("a = e.action")
                    w("args = e.args")
                else:
                    self.indirect_action(profile, selector_exprs)
                w("hit = 1")
                if info.direct_counter is not None:
                    w("e.packets += 1")
                    w(f"e.bytes += {slot(self.layout.std_fields.get('packet_length', 0))}")
                if info.direct_meter is not None:
                    w("if e.meter is not None:")
                    w(f"    _c = e.meter.execute({slot(self.layout.std_fields['packet_length'])},"
                      f" NOW())")
                    w(f"    s[{7}] = _c")
            first = True
            done: set[int] = set()
            for (ref, asym), aid in zip(refs, ids):
                if aid in done:
                    continue
                done.add(aid)
                with w.block(f"{'if' if first else 'elif'} a == {aid}"):
                    self.dispatch_action(asym, ref)
                first = False
            w("return a * 2 + hit")
            assert w.lines is saved_lines
        return sym.func

    def table_implementation(self: CodeGen, sym: TableSym, prop: ast.TableProperty
                             ) -> InstanceSym:
        """The action profile or selector named (or constructed in place) by
        ``implementation =``. A profile constructed in place is named by the
        property's ``@name``, as p4c's P4Runtime names it."""
        value = prop.value
        inst: object = None
        if isinstance(value, ast.Name):
            inst = self.scope.lookup(value.name)
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            given = self.anno_string(self.annotation(prop.annotations, "name"))
            name = (given[1:] if given.startswith(".") else given) if given else sym.qname
            d = ast.Instantiation(name=value.func.name, annotations=prop.annotations,
                                  type=ast.TypeName(value.func.name), args=value.args,
                                  loc=prop.loc)
            t = self.resolve_type(d.type, self.scope)
            inst = self.instantiate_extern(d, t, "", self.scope)
            self.schema.action_profiles[-1].name = name
            self.externs[inst.index].qname = name  # type: ignore[attr-defined]
            inst.qname = name  # type: ignore[attr-defined]
        kind = strip(inst.type).name if isinstance(inst, InstanceSym) else ""  # type: ignore[union-attr]
        if kind not in ("action_profile", "action_selector"):
            raise self.err(prop, "'implementation' must name an action_profile or "
                                 "action_selector")
        assert isinstance(inst, InstanceSym)
        info = next(p for p in self.schema.action_profiles if p.name == inst.qname)
        if sym.qname not in info.tables:
            info.tables.append(sym.qname)
        return inst

    def record_selector_input(self: CodeGen, profile: InstanceSym, exprs: list[ast.Expr]) -> None:
        """BMv2 keeps an action selector's input (its tables' selector key
        expressions) with the selector."""
        if strip(profile.type).name != "action_selector":  # type: ignore[union-attr]
            return
        info = next(p for p in self.schema.action_profiles if p.name == profile.qname)
        if info.selector_input is None:  # the checker made every table's input the same
            info.selector_input = [_text(e) for e in exprs]

    def indirect_action(self: CodeGen, profile: InstanceSym, selector: list[ast.Expr]) -> None:
        """``a``/``args`` of an indirect entry: its member, or the member its
        group picks by hashing the selector fields (BMv2's choose_from_group);
        an empty group runs no action."""
        w = self.w
        ref = f"E{profile.index}"
        w("r = e.ref")
        with w.block("if r >= 0"):
            w(f"m = {ref}.members[r]")
        with w.block("else"):
            fields = self.field_list(ast.ListExpr(list(selector))) if selector else "()"
            w(f"m = {ref}.choose(~r, {fields})")
        with w.block("if m is None"):
            w("a = -1")
            w("args = ()")
        with w.block("else"):
            w("a = m.action")
            w("args = m.args")

    def dispatch_action(self: CodeGen, asym: ActionSym, ref: ast.ActionRef) -> None:
        """Run the action chosen by a table: control-plane arguments from
        ``args``, directional ones bound in the ``actions`` list."""
        name, psyms = self.gen_action(asym)
        params = asym.decl.params
        ndir = sum(1 for p in params if p.direction)
        cp = [ps for p, ps in zip(params, psyms) if not p.direction]
        if cp:
            first = cp[0].base
            if all(ps.base == first + i for i, ps in enumerate(cp)) and all(
                    slots(ps.type) == 1 for ps in cp):
                # Compiled, a store per argument: a slice assignment costs a
                # slice object and two index objects (~900 instructions).
                with self.w.block("if cython.compiled"):
                    for i in range(len(cp)):
                        self.w(f"s[{first + i}] = args[{i}]")
                with self.w.block("else"):
                    self.w(f"s[{first}:{first + len(cp)}] = args")
            else:
                for i, ps in enumerate(cp):
                    self.w(f"{slot(ps.base)} = args[{i}]")
        if ndir:
            bound: list[ast.Expr | None] = [a.value for a in ref.args[:ndir]]
            bound += [None] * (len(params) - len(bound))
            self.invoke(params[:ndir], psyms[:ndir], bound[:ndir], name, ref)
        else:
            self.w(f"{name}(s)")

    def const_action_args(self: CodeGen, asym: ActionSym, ref: ast.ActionRef,
                          refs: list[tuple[ast.ActionRef, ActionSym]]) -> tuple[int, ...]:
        params = asym.decl.params
        ndir = sum(1 for p in params if p.direction)
        out = []
        args = ref.args[ndir:]
        cparams = [p for p in params if not p.direction]  # the checker matched the count
        for p, a in zip(cparams, args):
            t = self.resolve_type(p.type, asym.scope)
            v = self.coerce(self.ev(a.value, t), t, a.value)
            if not v.is_const:
                raise self.err(a, "action argument must be a constant")
            out.append(_unsigned(v.const, t))
        return tuple(out)

    def const_entries(self: CodeGen, rt: Any, decl: ast.TableDecl,
                      refs: list[tuple[ast.ActionRef, ActionSym]]) -> None:
        from dataplane.runtime.tables import Exact, Lpm, OptionalMatch, RangeMatch, Ternary

        # The checker has established each entry's key count, that masks and
        # ranges fit their match kinds, that an lpm mask is a prefix, that the
        # action is one of the table's with every argument, and the
        # priorities' rules.
        kinds = [k.match_kind for k in decl.keys]
        for i, entry in enumerate(decl.entries or []):
            elems = entry.keyset.elems
            if len(elems) == 1 and isinstance(elems[0], ast.ListExpr) and (
                    len(kinds) > 1 or len(elems[0].elems) == 1):
                elems = elems[0].elems  # {k1, k2} for several keys, {k} for one
            matches: list[Any] = []
            for e, kind, width in zip(elems, kinds, rt.key_widths):
                t = BitT(width)
                if isinstance(e, ast.Default | ast.DontCare):
                    matches.append(None)
                elif isinstance(e, ast.Mask):
                    v = self._const_key(e.value, t)
                    m = self._const_key(e.mask, t)
                    plen = bin(m).count("1")
                    matches.append(Ternary(v & m, m) if kind != "lpm" else Lpm(v & m, plen))
                elif isinstance(e, ast.Range):
                    matches.append(RangeMatch(self._const_key(e.lo, t), self._const_key(e.hi, t)))
                else:
                    v = self._const_key(e, t)
                    if kind == "lpm":
                        matches.append(Lpm(v, width))
                    elif kind == "ternary":
                        matches.append(Ternary(v, (1 << width) - 1))
                    elif kind == "range":
                        matches.append(RangeMatch(v, v))
                    elif kind == "optional":
                        matches.append(OptionalMatch(v))
                    else:
                        matches.append(Exact(v))
            asym = self.resolve_action(entry.action, rt.sym.scope)
            args = self.const_action_args(asym, entry.action, refs)
            # Larger wins in the runtime table. Entries without a priority
            # rank by position; ``@priority(N)`` is BMv2's own ranking where
            # the smallest number wins; ``priority = N`` is the spec's, where
            # the largest wins.
            prio = -(i + 1)
            if entry.priority is not None:
                prio = self.const_int(entry.priority)
            else:
                pa = self.annotation(entry.annotations, "priority")
                if pa is not None:
                    prio = -int(self.anno_string(pa) or (i + 1))
            rt.const_entries.append((matches, self.action_id(asym), args, prio))

    def _const_key(self: CodeGen, e: ast.Expr, t: Type) -> int:
        v = self.ev(e, t)
        if isinstance(strip(v.type), BoolT):
            return int(bool(v.const))
        if isinstance(strip(v.type), EnumT | ErrorT) and v.is_const:
            return int(v.const)
        v = self.coerce(v, t, e)
        if not v.is_const:
            raise self.err(e, "table entry key must be a constant")
        return int(v.const) & strip(t).mask  # type: ignore[union-attr]


def _unsigned(value: Any, t: Type) -> int:
    st = strip(t)
    if isinstance(value, bool):
        return int(value)
    if isinstance(st, BitT):
        return int(value) & st.mask
    if isinstance(st, EnumT) and st.underlying is not None:
        return int(value) & st.underlying.mask
    return int(value)


def _text(e: ast.Expr) -> str:
    """An expression as p4c prints it in control-plane names."""
    if isinstance(e, ast.Name):
        return ("." if e.absolute else "") + e.name
    if isinstance(e, ast.Member):
        return f"{_text(e.expr)}.{e.name}"
    if isinstance(e, ast.Index):
        return f"{_text(e.expr)}[{_text(e.index)}]"
    if isinstance(e, ast.Slice):
        return f"{_text(e.expr)}[{_text(e.hi)}:{_text(e.lo)}]"
    if isinstance(e, ast.Call):
        if isinstance(e.func, ast.Member) and e.func.name == "isValid" and not e.args:
            return f"{_text(e.func.expr)}.$valid$"  # p4c's name for a validity key
        return f"{_text(e.func)}()"
    if isinstance(e, ast.IntLit):
        if e.width is not None:
            return f"{e.width}{'s' if e.signed else 'w'}{e.value}"
        return str(e.value)
    if isinstance(e, ast.BoolLit):
        return "true" if e.value else "false"
    if isinstance(e, ast.Binary):
        return f"{_text(e.left)} {e.op} {_text(e.right)}"
    if isinstance(e, ast.Cast):
        return f"({_text(e.expr)})"
    return type(e).__name__
