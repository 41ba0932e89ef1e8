"""Calls: actions, functions, tables, nested blocks, v1model externs and
packet_in/packet_out methods, with P4's copy-in/copy-out semantics."""

from __future__ import annotations

import re
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dataplane import schema as sc
from dataplane.compiler.codegen.values import (
    ApplyResultT,
    LValue,
    Val,
    const,
    location,
    offset,
    py_tuple,
    slot,
)
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.scope import (
    ActionSym,
    BlockInstSym,
    ConstSym,
    ExternFuncSym,
    FuncSym,
    InstanceSym,
    Scope,
    TableSym,
    ValueSetSym,
    VarSym,
)
from dataplane.compiler.frontend.types import (
    BitT,
    BoolT,
    DontCareT,
    EnumT,
    ErrorT,
    ExternT,
    HeaderT,
    IntT,
    StackT,
    StructLikeT,
    StructT,
    TupleT,
    Type,
    UnionT,
    VarbitT,
    VoidT,
    field_bits,
    is_compound,
    same_type,
    slots,
    strip,
)
from dataplane.contract import reflected_crc

if TYPE_CHECKING:
    from dataplane.compiler.codegen.generator import CodeGen


_PACK_CODES = {8: "B", 16: "H", 32: "I", 48: "IH", 64: "Q"}
"""struct codes of the whole-byte widths ``packed_fields`` packs (48 bits as
two fields)."""

def _word(v: Val) -> bool:
    """Whether ``v`` always fits an unsigned 64-bit machine word."""
    t = strip(v.type)
    if v.is_const:
        return isinstance(v.const, int) and not isinstance(v.const, bool) \
            and 0 <= v.const < 1 << 64
    return isinstance(t, BitT) and not t.signed and t.width <= 64


class CopyBlockParams(Exception):
    """A control generated to work on its caller's variables in place was
    applied again with other variables: generation starts over with that
    control's parameters copied in and out (``CodeGen.copy_blocks``)."""

    def __init__(self, qname: str) -> None:
        super().__init__(qname)
        self.qname = qname



class ExternMixin:
    """Call compilation for CodeGen."""

    # ------------------------------------------------------------ arguments

    def bind_args(self: CodeGen, params: list[ast.Param], args: list[ast.Arg],
                  node: ast.Node) -> list[ast.Expr | None]:
        """Arguments in parameter order (named arguments allowed)."""
        bound: list[ast.Expr | None] = [None] * len(params)
        names = [p.name for p in params]
        pos = 0
        for a in args:
            if a.name is not None:
                if a.name not in names:
                    raise self.err(a, f"no parameter named '{a.name}'")
                bound[names.index(a.name)] = a.value
            else:
                if pos >= len(params):
                    raise self.err(node, f"too many arguments: expected {len(params)}")
                bound[pos] = a.value
                pos += 1
        for i, p in enumerate(params):
            if bound[i] is None:
                if p.default is not None:
                    bound[i] = p.default
                elif not any(an.name == "optional" for an in p.annotations):
                    raise self.err(node, f"missing argument for parameter '{p.name}'")
        return bound

    def named_args(self: CodeGen, overloads: list[Any], e: ast.Call) -> list[ast.Expr]:
        """An extern function's or method's named arguments in parameter
        order, against the first overload that has every name given (an
        optional parameter left out ends the list)."""
        given = {a.name for a in e.args}
        for decl in overloads:
            names = [p.name for p in decl.params]
            if given <= set(names) and len(e.args) <= len(names):
                bound = self.bind_args(decl.params, e.args, e)
                out: list[ast.Expr] = []
                for b in bound:
                    if b is None:
                        break
                    out.append(b)
                return out
        raise self.err(e, f"no declaration of this function has parameters named "
                          f"{', '.join(sorted(n for n in given if n))}")

    def invoke(self: CodeGen, params: list[ast.Param], psyms: list[VarSym],
               args: list[ast.Expr | None], fn: str, node: ast.Node,
               ret: Type | None = None) -> Val:
        """Copy in, call ``fn(s)``, copy out (spec 6.8: arguments are
        evaluated left to right; out/inout locations are fixed before the
        call)."""
        loads: list[tuple[VarSym, str, bool]] = []
        outs: list[tuple[LValue, VarSym]] = []
        for p, psym, a in zip(params, psyms, args):
            if a is None:
                continue
            t = psym.type
            if p.direction in ("", "in"):
                v = self.coerce(self.ev(a, t), t, a)
                tmp = self.fresh("a")
                if v.parts is not None:
                    self.w(f"{tmp} = {py_tuple(v.parts)}")
                    loads.append((psym, tmp, True))
                else:
                    self.w(f"{tmp} = {v.code}")
                    loads.append((psym, tmp, False))
                continue
            if isinstance(a, ast.DontCare):
                if p.direction == "out":
                    loads.append((psym, "", False))
                continue
            lv = self.lval(a)
            if lv.slice is None and not _same_layout(lv.type, t):
                raise self.err(a, f"argument of type {lv.type} does not match parameter "
                                  f"'{p.name}' of type {t}")
            if p.direction == "inout":
                cur = self.read_lvalue(lv)
                tmp = self.fresh("a")
                if cur.parts is not None:
                    self.w(f"{tmp} = {py_tuple(cur.parts)}")
                    loads.append((psym, tmp, True))
                else:
                    self.w(f"{tmp} = {cur.code}")
                    loads.append((psym, tmp, False))
            else:
                loads.append((psym, "", False))
            outs.append((lv, psym))
        for psym, tmp, compound in loads:
            if not tmp:
                self.invalidate_headers(psym.type, psym.base)
            elif compound:
                n = slots(psym.type)
                self.w(f"s[{psym.base}:{psym.base + n}] = {tmp}")
            else:
                self.w(f"{slot(psym.base)} = {tmp}")
        result = Val(VoidT())
        call = f"{fn}(s)"
        if ret is not None and not isinstance(strip(ret), VoidT):
            r = self.fresh("r")
            call = f"{r} = {call}"
            if is_compound(ret):
                result = Val(ret, parts=[f"{r}[{k}]" for k in range(slots(ret))])
            else:
                result = Val(ret, code=r)
        if outs:
            with self.w.block("try"):
                self.w(call)
            with self.w.block("except ExitPipeline"):
                for lv, psym in outs:
                    self.store(lv, location(psym.type, psym.base))
                self.w("raise")
            for lv, psym in outs:
                self.store(lv, location(psym.type, psym.base))
        else:
            self.w(call)
        return result

    def read_lvalue(self: CodeGen, lv: LValue) -> Val:
        if lv.slice is not None:
            hi, lo = lv.slice
            return Val(lv.type, code=f"(({slot(lv.base)} >> {lo}) & {(1 << (hi - lo + 1)) - 1})")
        return location(lv.type, lv.base)

    def frame(self: CodeGen, params: list[ast.Param], scope: Scope,
              shared: dict[str, int] | None = None) -> list[VarSym]:
        """Storage of a callee's parameters: slots of its own, or for the
        names in ``shared`` the caller's argument itself."""
        syms = []
        for p in params:
            t = self.resolve_type(p.type, scope)
            if shared and p.name in shared:
                sym = VarSym(t, shared[p.name])
            else:
                sym = VarSym(t, self.alloc(t))
            scope.names[p.name] = sym
            syms.append(sym)
        return syms

    # -------------------------------------------------------------- actions

    def gen_action(self: CodeGen, sym: ActionSym) -> tuple[str, list[VarSym]]:
        key = sym  # the symbol itself: an id() could be reused once a symbol is freed
        if key in self._generated:
            return self._generated[key]  # type: ignore[return-value]
        scope = sym.scope.child()
        psyms = self.frame(sym.decl.params, scope)
        name = f"a_{_ident(sym.qname)}_{len(self.funcs)}"
        self._generated[key] = (name, psyms)  # type: ignore[assignment]
        from dataplane.compiler.codegen.generator import FuncCtx

        with self.function(f"{name}(s)", FuncCtx("action", prefix=sym.prefix), scope):
            self.stmts(sym.decl.body.stmts)
        # p4c's P4Info lists every action the program uses, called directly
        # or through a table.
        self.register_action_info(sym)
        return name, psyms

    def call_action(self: CodeGen, sym: ActionSym, args: list[ast.Arg], node: ast.Node) -> Val:
        name, psyms = self.gen_action(sym)
        bound = self.bind_args(sym.decl.params, args, node)
        return self.invoke(sym.decl.params, psyms, bound, name, node)

    def action_id(self: CodeGen, sym: ActionSym) -> int:
        if sym.index < 0:
            sym.index = len(self.action_syms)
            self.action_syms.append(sym)
        return sym.index

    def call_function(self: CodeGen, sym: FuncSym, e: ast.Call) -> Val:
        key = sym  # the symbol itself: an id() could be reused once a symbol is freed
        decl = sym.decl
        if decl.type_params:
            raise self.unsupported(e, f"generic function '{decl.name}'")
        if key not in self._generated:
            scope = sym.scope.child()
            psyms = self.frame(decl.params, scope)
            rt = self.resolve_type(decl.return_type, scope)
            name = f"f_{_ident(decl.name)}_{len(self.funcs)}"
            self._generated[key] = (name, psyms, rt)  # type: ignore[assignment]
            from dataplane.compiler.codegen.generator import FuncCtx

            with self.function(f"{name}(s)", FuncCtx("function", return_type=rt), scope):
                self.stmts(decl.body.stmts)
        name, psyms, rt = self._generated[key]  # type: ignore[misc]
        bound = self.bind_args(decl.params, e.args, e)
        return self.invoke(decl.params, psyms, bound, name, e, rt)

    # --------------------------------------------------------------- blocks

    def apply_block(self: CodeGen, sym: BlockInstSym, e: ast.Call) -> Val:
        key = sym  # the symbol itself: an id() could be reused once a symbol is freed
        decl = sym.decl
        bound = self.bind_args(decl.params, e.args, e)
        # An extern object passed to a block (``register<..> r`` as an apply
        # parameter) is bound to the instance given, like p4c's inlining;
        # the block is generated once, so every call must pass the same one.
        # An arbitrary-precision parameter (``int a``) takes the constant
        # given the same way.
        instances: dict[str, Any] = {}
        for p, a in zip(decl.params, bound):
            instances[p.name] = self.passed_instance(a)
            if not p.direction and a is not None and isinstance(
                    strip(self.resolve_type(p.type, self.root)), IntT):
                v = self.ev(a)
                if not v.is_const:
                    raise self.err(a, f"'{p.name}' is an arbitrary-precision parameter: its "
                                      "argument must be a compile-time constant")
                instances[p.name] = ("int", v.const)
        shared = self.shared_params(sym, bound)
        if key not in self._generated:
            scope = Scope(self.root)
            psyms = self.frame(decl.params, scope, shared)
            bindings = dict(scope.names)
            for p, ps in zip(decl.params, psyms):
                inst = instances[p.name]
                if isinstance(inst, tuple):
                    bindings[p.name] = ConstSym(IntT(), inst[1])
                elif isinstance(strip(ps.type), ExternT):
                    bindings[p.name] = inst if inst is not None else VarSym(ps.type, -1)
            fn = self.gen_block(decl, sym.qname, bindings, sym.ctor_args, sym.scope)
            self._generated[key] = (fn, psyms)  # type: ignore[assignment]
            self._block_instances[key] = instances
            self._shared_params[key] = shared
        elif self._block_instances.get(key) != instances:
            raise self.unsupported(e, f"applying '{sym.qname}' with other extern instances "
                                      "or int constants than its first apply passed")
        elif self._shared_params[key] != shared:
            raise CopyBlockParams(sym.qname)
        fn, psyms = self._generated[key]  # type: ignore[misc]
        params = []
        kept_syms = []
        kept_args = []
        for p, ps, a in zip(decl.params, psyms, bound):
            if isinstance(strip(ps.type), ExternT) or isinstance(instances[p.name], tuple):
                continue
            if p.name in shared:
                continue
            params.append(p)
            kept_syms.append(ps)
            kept_args.append(a)
        if isinstance(decl, ast.ParserDecl):
            fn_call = fn
            return self.invoke(params, kept_syms, kept_args, f"(lambda s: {fn_call}(s, b))", e)
        return self.invoke(params, kept_syms, kept_args, fn, e)

    def shared_params(self: CodeGen, sym: BlockInstSym,
                      bound: list[ast.Expr | None]) -> dict[str, int]:
        """Parameters of a control that can work on the caller's variables
        themselves instead of copies: parameter name -> slot of the
        argument.

        A control sees nothing of its caller but its parameters, so copy-in
        and copy-out are observable only where two arguments share storage
        or an ``out`` parameter starts uninitialized. When every data
        parameter is ``in`` or ``inout`` and its argument is a whole
        variable of the parameter's type, none overlapping another, the
        control reads and writes the arguments in place: no frame in every
        packet's state (``store_copy.apply(hdr, meta, standard_metadata)``
        in gpint.p4 would double it) and no copies on each apply. A block
        applied again with other variables is generated with copies
        (``CopyBlockParams``)."""
        decl = sym.decl
        if (not self.share_params or not isinstance(decl, ast.ControlDecl) or decl.type_params
                or sym.qname in self.copy_blocks):
            return {}
        shared: dict[str, int] = {}
        spans: list[tuple[int, int]] = []
        for p, a in zip(decl.params, bound):
            t = self.resolve_type(p.type, self.root)
            if isinstance(strip(t), ExternT) or (not p.direction and isinstance(strip(t), IntT)):
                continue
            if p.direction not in ("in", "inout") or not isinstance(a, ast.Name) or a.absolute:
                return {}
            var = self.scope.lookup(a.name)
            if not isinstance(var, VarSym) or not isinstance(var.base, int) or var.base < 0:
                return {}
            if not same_type(strip(var.type), strip(t)):
                return {}
            lo, hi = var.base, var.base + slots(t)
            if any(lo < b and a0 < hi for a0, b in spans):
                return {}
            spans.append((lo, hi))
            shared[p.name] = var.base
        return shared

    def passed_instance(self: CodeGen, a: ast.Expr | None) -> InstanceSym | None:
        if not isinstance(a, ast.Name):
            return None
        sym = (self.root if a.absolute else self.scope).lookup(a.name)
        return sym if isinstance(sym, InstanceSym) else None

    # --------------------------------------------------------------- tables

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
        sym.func = f"t_{_ident(sym.qname)}_{idx}"
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

    def payload_read(self: CodeGen) -> str:
        """A read of the payload slot (6: contract.PAYLOAD), noted so that
        the engine fills that slot for this program."""
        self.reads_payload = True
        return "s[6]"

    def index_local(self: CodeGen, name: str, idx: Val) -> None:
        """Compiled, a register index of an unsigned type narrower than a
        machine word is one (``Py_ssize_t``): the cells (a typed list, RVk)
        are then read and written by a C item access, not by the list's
        subscript method with an integer object."""
        st = strip(idx.type)
        if isinstance(st, BitT) and not st.signed and st.width <= 62:
            self.w.ctypes[name] = "cython.Py_ssize_t"

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

    def register_action_info(self: CodeGen, asym: ActionSym) -> None:
        if any(a.name == asym.qname for a in self.schema.actions):
            return
        params = []
        for p in asym.decl.params:
            if p.direction:
                continue
            t = strip(self.resolve_type(p.type, asym.scope))
            width = field_bits(t) if not isinstance(t, BoolT) else 1
            params.append(sc.ActionParamInfo(p.name, width, len(params) + 1,
                                             self.anno_texts(p.annotations)))
        annos = self.anno_texts(asym.decl.annotations)
        self.schema.actions.append(sc.ActionInfo(asym.qname, params, annos))

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

    # ------------------------------------------------------------- externs

    def instantiate_extern(self: CodeGen, d: ast.Instantiation, t: Type, prefix: str,
                           scope: Scope) -> InstanceSym:
        from dataplane.compiler.codegen.generator import ExternRuntime

        if not isinstance(t, ExternT):
            raise self.err(d, f"cannot instantiate {t}")
        qname = self.control_name(d, prefix)
        saved = self.scope
        self.scope = scope
        try:
            args = [self.ev(a.value) for a in d.args]
        finally:
            self.scope = saved
        kind = t.name
        ctors = [m for m in getattr(t.decl, "methods", []) if m.name == kind
                 and m.return_type is None]
        if ctors and not any(_arity_fits(m.params, len(d.args)) for m in ctors):
            counts = sorted({len(m.params) for m in ctors})
            raise self.err(d, f"{kind} takes {' or '.join(map(str, counts))} constructor "
                              f"argument(s), got {len(d.args)}")
        annos = self.anno_texts(d.annotations)
        ext = ExternRuntime(kind, qname)

        def enum_name(v: Val) -> str:
            et = strip(v.type)
            if isinstance(et, EnumT):
                return next(m for m, x in et.values.items() if x == v.const)
            raise self.err(d, f"expected an enum constant in the {kind} constructor")

        if kind == "register":
            ext.size = int(args[0].const)
            vt = strip(t.args[0]) if t.args else BitT(32)
            ext.width = field_bits(vt)
            ext.signed = isinstance(vt, BitT) and vt.signed
            self.schema.registers.append(sc.RegisterInfo(qname, ext.width, ext.size, ext.signed,
                                                         annos))
        elif kind == "counter":
            ext.size = int(args[0].const)
            ext.unit = enum_name(args[1]).upper()
            self.schema.counters.append(sc.CounterInfo(qname, ext.unit, ext.size,
                                                       annotations=annos))
        elif kind == "direct_counter":
            ext.unit = enum_name(args[0]).upper()
            self.schema.direct_counters.append(sc.CounterInfo(qname, ext.unit,
                                                              annotations=annos))
        elif kind == "meter":
            ext.size = int(args[0].const)
            ext.unit = enum_name(args[1]).upper()
            self.schema.meters.append(sc.MeterInfo(qname, ext.unit, ext.size, annotations=annos))
        elif kind == "direct_meter":
            ext.unit = enum_name(args[0]).upper()
            self.schema.direct_meters.append(sc.MeterInfo(qname, ext.unit, annotations=annos))
        elif kind == "action_profile":
            ext.size = int(args[0].const)
            self.schema.action_profiles.append(sc.ActionProfileInfo(
                qname, ext.size, annotations=annos))
        elif kind == "action_selector":
            ext.size = int(args[1].const)
            ext.width = int(args[2].const)
            ext.unit = enum_name(args[0])
            self.schema.action_profiles.append(sc.ActionProfileInfo(
                qname, ext.size, ext.unit, ext.width, annotations=annos))
        elif _user_declared(t.decl):
            ext.kind = f"user:{kind}"
            if any(not a.is_const for a in args):
                raise self.err(d, f"the arguments of extern '{kind}' must be constants")
            ext.ctor_args = tuple(a.const for a in args)
        else:
            raise self.unsupported(d, f"extern object '{kind}'")
        sym = InstanceSym(t, qname, d, len(self.externs), scope)
        self.externs.append(ext)
        return sym

    def bind_direct(self: CodeGen, inst: InstanceSym, table: str) -> None:
        for group in (self.schema.direct_counters, self.schema.direct_meters):
            for info in group:
                if info.name == inst.qname:
                    info.table = table

    def declare_value_set(self: CodeGen, d: ast.ValueSetDecl, scope: Scope,
                          prefix: str) -> ValueSetSym:
        t = self.resolve_type(d.type, scope)
        size = self.const_int(d.size, scope)
        sym = ValueSetSym(d, self.control_name(d, prefix), t, len(self.value_sets))
        fields = _value_set_fields(t)
        self.value_sets.append((sym.qname, [(n, w) for n, w, _ in fields], size))
        self.schema.value_sets.append(sc.ValueSetInfo(
            sym.qname, [sc.MatchFieldInfo(n, w, kind, i + 1) for i, (n, w, kind) in
                        enumerate(fields)], size))
        return sym

    def extern_method(self: CodeGen, sym: InstanceSym, name: str, e: ast.Call,
                      want: Type | None) -> Val:
        kind = strip(sym.type).name  # type: ignore[union-attr]
        ref = f"E{sym.index}"
        if any(a.name for a in e.args):
            decl = getattr(strip(sym.type), "decl", None)
            methods = [m for m in getattr(decl, "methods", []) if m.name == name]
            args = self.named_args(methods, e)
        else:
            args = [a.value for a in e.args]
        # A program without main has no standard metadata: its code is
        # checked, never run, so any length will do there.
        plen_slot = self.layout.std_fields.get("packet_length")
        plen = slot(plen_slot) if plen_slot is not None else "0"
        if kind == "register":
            vt = strip(sym.type).args[0] if strip(sym.type).args else BitT(32)  # type: ignore[union-attr]
            reg = self.externs[sym.index]
            # An unsigned register's cells are read and written in place
            # (RVk is its value list): BMv2's rules, as RegisterArray.read
            # and .write apply them, without a call per packet.
            inline = not reg.signed
            if name == "read":
                lv = self.lval(args[0])
                idx = self.ev(args[1], BitT(32))
                if inline:
                    self.register_lists.add(sym.index)
                    i = self.fresh("i")
                    self.index_local(i, idx)
                    self.w(f"{i} = {idx.code}")
                    with self.w.block(f"if {i} < {reg.size}"):  # out of range: unchanged
                        self.store(lv, Val(vt, code=f"RV{sym.index}[{i}]"))
                    return Val(VoidT())
                cur = self.read_lvalue(lv)
                self.store(lv, Val(vt, code=f"{ref}.read({idx.code}, {cur.code})"))
                return Val(VoidT())
            if name == "write":
                idx = self.ev(args[0], BitT(32))
                v = self.coerce(self.ev(args[1], vt), vt, args[1])
                if inline:
                    self.register_lists.add(sym.index)
                    i, x = self.fresh("i"), self.fresh("x")
                    self.index_local(i, idx)
                    self.w(f"{i} = {idx.code}")
                    self.w(f"{x} = {v.code}")
                    # A bit<W> value is always within W bits (every
                    # expression of the type is masked to it), so a value of
                    # the register's own unsigned type is stored as it is.
                    st = strip(v.type)
                    fits = isinstance(st, BitT) and not st.signed and st.width <= reg.width
                    value = x if fits else f"{x} & {(1 << reg.width) - 1}"
                    with self.w.block(f"if {i} < {reg.size}"):  # out of range: nothing
                        self.w(f"RV{sym.index}[{i}] = {value}")
                    return Val(VoidT())
                self.w(f"{ref}.write({idx.code}, {v.code})")
                return Val(VoidT())
        if kind == "counter" and name == "count":
            idx = self.ev(args[0], BitT(32))
            self.w(f"{ref}.count({idx.code}, {plen})")
            return Val(VoidT())
        if kind == "direct_counter" and name == "count":
            return Val(VoidT())
        if kind == "meter" and name == "execute_meter":
            idx = self.ev(args[0], BitT(32))
            lv = self.lval(args[1])
            tmp = self.fresh("c")
            self.w(f"{tmp} = {ref}.execute({idx.code}, {plen}, NOW())")
            with self.w.block(f"if {tmp} is not None"):
                self.store(lv, Val(lv.type, code=tmp))
            return Val(VoidT())
        if kind == "direct_meter" and name == "read":
            lv = self.lval(args[0])
            self.store(lv, Val(lv.type, code="s[7]"))
            return Val(VoidT())
        if self.externs[sym.index].kind.startswith("user:"):
            decl = strip(sym.type).decl  # type: ignore[union-attr]
            method = next((m for m in decl.methods if m.name == name
                           and len(m.params) == len(e.args)), None)
            if method is None:
                raise self.err(e, f"extern '{kind}' has no method '{name}' taking "
                                  f"{len(e.args)} arguments")
            return self.call_user_extern(f"{ref}.{name}", method.params, method.return_type,
                                         e, want)
        raise self.unsupported(e, f"method {kind}.{name}")

    def field_list(self: CodeGen, e: ast.Expr, vals: list[Val] | None = None) -> str:
        """Code for a tuple of (value, width) pairs built from a data
        argument; fields of invalid headers are left out, as BMv2 does.
        ``vals``: the list's elements evaluated already."""
        if isinstance(e, ast.ListExpr):
            out = []
            for i, x in enumerate(e.elems):
                v = vals[i] if vals is not None else self.ev(x)
                items = self._flist(v.type, self.flat(v), None)
                valid = self._header_valid(x)
                if valid is not None and not isinstance(strip(v.type), HeaderT):
                    items = [f"*(({''.join(items)}) if {valid} else ()), "]
                out += items
            return "(" + "".join(out) + ")"
        v = self.ev(e)
        return "(" + "".join(self._flist(v.type, self.flat(v), None)) + ")"

    def byte_fields(self: CodeGen, elems: list[ast.Expr], vals: list[Val]
                    ) -> list[tuple[str | None, list[tuple[str, int]]]] | None:
        """A list of whole-byte unsigned fields (8, 16, 32, 48 or 64 bits) as
        runs under one validity bit each (None: always present), each field
        as (code, width). None: the list needs the general path."""
        runs: list[tuple[str | None, list[tuple[str, int]]]] = []
        for x, v in zip(elems, vals):
            t = strip(v.type)
            if v.parts is not None or not isinstance(t, BitT) or t.signed \
                    or t.width not in _PACK_CODES:
                return None
            valid = self._header_valid(x)
            if not runs or runs[-1][0] != valid:
                runs.append((valid, []))
            runs[-1][1].append((v.code, t.width))
        return runs

    def packed_fields(self: CodeGen,
                      byte_runs: list[tuple[str | None, list[tuple[str, int]]]]) -> str:
        """Code for the bytes ``pack_bits`` would make of ``byte_fields``'
        runs: each run packed by one ``struct`` call, an invalid header's run
        left out. Field values are always within their width, so the bytes
        are those fields' big-endian bytes in order."""
        runs: list[tuple[str | None, list[tuple[str, str]]]] = []
        for valid, fields in byte_runs:
            packs: list[tuple[str, str]] = []
            for code, width in fields:
                if width == 48:
                    packs.extend((("I", f"({code}) >> 16"), ("H", f"({code}) & 65535")))
                else:
                    packs.append((_PACK_CODES[width], code))
            runs.append((valid, packs))
        parts = []
        for valid, fields in runs:
            k = self.struct_formats.setdefault(">" + "".join(c for c, _ in fields),
                                               len(self.struct_formats))
            call = f"SP{k}({', '.join(code for _, code in fields)})"
            parts.append(call if valid is None else f"({call} if {valid} else b'')")
        return " + ".join(parts)

    def _header_valid(self: CodeGen, e: ast.Expr) -> str | None:
        """Validity bit of the header a field expression reads, if any: BMv2
        leaves fields of invalid headers out of hash and checksum input."""
        while isinstance(e, ast.Member | ast.Slice):
            inner = e.expr
            checked = self.checked_type(inner)
            if checked is None:  # a type name (Enum.X) or a generic body's
                try:
                    v = self.ev(inner)
                except Exception:  # noqa: BLE001 - not a value: no header to check
                    return None
            elif isinstance(checked, HeaderT):
                v = self.ev(inner)
            else:
                e = inner
                continue
            if isinstance(strip(v.type), HeaderT) and v.base is not None:
                return slot(v.base)
            e = inner
        return None

    def _flist(self: CodeGen, t: Type, parts: list[str], valid: str | None) -> list[str]:
        t = strip(t)
        out: list[str] = []
        if isinstance(t, HeaderT):
            valid_code = parts[0]
            k = 1
            inner: list[str] = []
            for _, ft in t.fields:
                n = slots(ft)
                inner += self._flist(ft, parts[k:k + n], None)
                k += n
            return [f"*(({''.join(inner)}) if {valid_code} else ()), "]
        if isinstance(t, StructLikeT) or hasattr(t, "elems"):
            k = 0
            children = [ft for _, ft in t.fields] if isinstance(t, StructLikeT) else list(
                t.elems)  # type: ignore[attr-defined]
            for ft in children:
                n = slots(ft)
                out += self._flist(ft, parts[k:k + n], valid)
                k += n
            return out
        if isinstance(t, StackT):
            k = 1
            for _ in range(t.size):
                n = slots(t.elem)
                out += self._flist(t.elem, parts[k:k + n], valid)
                k += n
            return out
        if isinstance(t, VarbitT):
            return [f"({parts[0]}, {parts[1]}), "]
        if isinstance(t, BoolT):
            return [f"((1 if {parts[0]} else 0), 1), "]
        if isinstance(t, IntT):
            raise self.err(None, "field list element needs a width")
        return [f"({parts[0]}, {field_bits(t)}), "]

    def fast_csum16(self: CodeGen, name: str, args: list[ast.Expr]) -> bool:
        """Inline the Internet checksum of a list of plain fields: the
        ones'-complement sum of the 16-bit words of an integer ``v`` is
        ``v mod 0xffff`` (2**16 = 1 mod 0xffff), with 0xffff for a non-zero
        multiple. The same congruence lets each field stand shifted by its
        bit offset modulo 16 instead of in place: the sum of a few small
        integers, not a 160-bit concatenation (IPv4), has the same residue
        and is zero exactly when every field is. Returns False when the
        general path is needed."""
        if self.algo_name(args[3]) != "csum16" or not isinstance(args[1], ast.ListExpr):
            return False
        fields = [self.ev(x) for x in args[1].elems]
        if not all(f.parts is None and isinstance(strip(f.type), BitT | BoolT) for f in fields):
            return False
        values = []
        for f in fields:
            ft = strip(f.type)
            w = 1 if isinstance(ft, BoolT) else ft.width  # type: ignore[union-attr]
            code = f.code if isinstance(ft, BitT) and not ft.signed else f"({f.code} & "\
                f"{(1 << w) - 1})"
            values.append((code, w))
        total = sum(w for _, w in values)
        offset = (-total) % 16  # the zero bits that pad the list to whole words
        shifted = []
        for code, w in reversed(values):
            shifted.append((code, w, offset % 16))
            offset += w
        shifted.reverse()
        # The compiled fast path sums in a machine word when no term or sum
        # can reach 2**64: each field in a C local, so no integer objects.
        typed = sum(((1 << w) - 1) << k for _, w, k in shifted) < 1 << 64
        c = self.ev(args[0], BoolT())
        v = self.fresh("v")
        with self.w.block(f"if {c.code}"):
            terms = []
            for code, _, k in shifted:
                if typed:
                    code = self.word_local(code, "f")
                terms.append(f"(({code}) << {k})" if k else f"({code})")
            if typed:
                self.w.ctypes[v] = "cython.ulonglong"
            self.w(f"{v} = {' + '.join(terms)}")
            ck = f"(65535 - (({v} % 65535) or (65535 if {v} else 0)))"
            if name == "verify_checksum":
                target = self.ev(args[2])
                tt = strip(target.type)
                held = target.code
                if typed and isinstance(tt, BitT) and not tt.signed and tt.width <= 64:
                    # Compared in a machine word: the sum is one, and an
                    # object comparison would box it (a new integer a packet).
                    held = self.word_local(target.code, "f")
                cerr = self.layout.std_fields.get("checksum_error")
                with self.w.block(f"if {ck} != {held}"):
                    if cerr is not None:
                        self.w(f"s[{cerr}] = 1")
            else:
                lv = self.lval(args[2])
                width = field_bits(strip(lv.type))
                self.store(lv, Val(lv.type, code=ck if width >= 16 else f"({ck} & "
                                                                         f"{(1 << width) - 1})"))
        return True

    def inline_crc_hash(self: CodeGen, algo: str,
                        runs: list[tuple[str | None, list[tuple[str, int]]]],
                        base: str, mx: str, width: int) -> str:
        """``hash_bytes`` of a reflected CRC over whole-byte fields, for the
        compiled fast path: the register shifted bit by bit over each
        field's big-endian bytes in machine words (no packed bytes, no table
        and no integer objects), then ``base + h % max`` in 64-bit unsigned
        arithmetic as BMv2 computes it. Returns the local holding the
        result."""
        crc = reflected_crc(algo)
        assert crc is not None  # the caller checked
        poly, init, xor_out = crc
        word = "cython.ulonglong"
        h, k, j = self.fresh("h"), self.fresh("k"), self.fresh("j")
        p, x, m = self.fresh("p"), self.fresh("x"), self.fresh("m")
        self.w.ctypes.update({h: word, k: "cython.Py_ssize_t", j: "cython.Py_ssize_t",
                              p: word, x: word, m: word})
        # Constants in typed locals: Cython gives a literal above 2**31 the
        # type of a Python int, which would take the whole expression out of
        # machine words (and out of their 64-bit wrap).
        self.w(f"{h} = {init}")
        self.w(f"{p} = {poly}")
        self.w(f"{x} = {xor_out}")
        self.w(f"{m} = {(1 << min(width, 64)) - 1}")
        for valid, fields in runs:
            with self.w.block(f"if {valid}") if valid is not None else nullcontext():
                for code, bits in fields:
                    f = self.word_local(code, "w")
                    with self.w.block(f"for {k} in range({bits - 8}, -1, -8)"):
                        self.w(f"{h} ^= ({f} >> {k}) & 255")
                        with self.w.block(f"for {j} in range(8)"):
                            self.w(f"{h} = ({h} >> 1) ^ ({p} if {h} & 1 else 0)")
        size, b, r = self.fresh("z"), self.fresh("b"), self.fresh("r")
        self.w.ctypes.update({size: word, b: word, r: word})
        self.w(f"{size} = {mx}")
        with self.w.block(f"if {size} == 0"):
            self.w(f"{size} = 1")
        self.w(f"{b} = {base}")
        # Unsigned C arithmetic wraps modulo 2**64, as BMv2's uint64 does.
        self.w(f"{r} = (({h} ^ {x}) % {size} + {b}) & {m}")
        return r

    def algo_name(self: CodeGen, e: ast.Expr) -> str:
        v = self.ev(e)
        t = strip(v.type)
        if not isinstance(t, EnumT) or not v.is_const:
            raise self.err(e, "hash algorithm must be a HashAlgorithm constant")
        return next(m for m, x in t.values.items() if x == v.const)

    def extern_function(self: CodeGen, name: str, sym: ExternFuncSym, e: ast.Call,
                        want: Type | None) -> Val:
        args = self.named_args(sym.overloads, e) if any(a.name for a in e.args) else [
            a.value for a in e.args]
        if not any(_arity_fits(o.params, len(args)) for o in sym.overloads):
            counts = sorted({len(o.params) for o in sym.overloads})
            raise self.err(e, f"{name} takes {' or '.join(map(str, counts))} argument(s), "
                              f"got {len(args)}")
        std = self.layout.std_fields
        void = Val(VoidT())
        if name == "mark_to_drop":
            if args:
                lv = self.lval(args[0])
                st = strip(lv.type)
                assert isinstance(st, StructT)
                self.w(f"{slot(lv.base, st.offsets['egress_spec'])} = 511")
                if "mcast_grp" in st.offsets:
                    self.w(f"{slot(lv.base, st.offsets['mcast_grp'])} = 0")
            else:
                self.w(f"s[{std['egress_spec']}] = 511")
                self.w(f"s[{std['mcast_grp']}] = 0")
            return void
        if name == "verify":
            c = self.ev(args[0], BoolT())
            err = self.ev(args[1])
            with self.w.block(f"if not {c.code}"):
                self.w(f"raise ParserReject({err.code})")
            return void
        if name == "random":
            lv = self.lval(args[0])
            lo = self.coerce(self.ev(args[1], lv.type), lv.type, args[1])
            hi = self.coerce(self.ev(args[2], lv.type), lv.type, args[2])
            cur = self.read_lvalue(lv)
            self.store(lv, Val(lv.type, code=f"RAND({lo.code}, {hi.code}, {cur.code})"))
            return void
        if name == "hash":
            lv = self.lval(args[0])
            algo = self.algo_name(args[1])
            if algo == "random":
                raise self.internal(args[1], "HashAlgorithm.random in hash()")
            base = self.ev(args[2])
            elems = args[3].elems if isinstance(args[3], ast.ListExpr) else []
            vals = [self.ev(x) for x in elems] or None
            runs = self.byte_fields(elems, vals) if vals else None
            mx = self.ev(args[4])
            width = field_bits(strip(lv.type))
            if runs is not None:
                call = (f"hash_bytes({algo!r}, {self.packed_fields(runs)}, {base.code}, "
                        f"{mx.code}, {width})")
                if reflected_crc(algo) is not None and lv.slice is None and _word(base) \
                        and _word(mx):
                    with self.w.block("if cython.compiled"):
                        r = self.inline_crc_hash(algo, runs, base.code, mx.code, width)
                        self.store(lv, Val(lv.type, code=r))
                    with self.w.block("else"):
                        self.store(lv, Val(lv.type, code=call))
                    return void
            else:
                data = self.field_list(args[3], vals)
                call = f"compute_hash({algo!r}, {data}, {base.code}, {mx.code}, {width})"
            self.store(lv, Val(lv.type, code=call))
            return void
        if name in ("verify_checksum", "update_checksum"):
            fast = self.fast_csum16(name, args)
            if fast:
                return void
        if name in ("verify_checksum", "verify_checksum_with_payload"):
            c = self.ev(args[0], BoolT())
            data = self.field_list(args[1])
            ck = self.ev(args[2])
            algo = self.algo_name(args[3])
            payload = self.payload_read() if name.endswith("payload") else "b''"
            cerr = std.get("checksum_error")
            with self.w.block(f"if {c.code} and not verify_checksum({algo!r}, {data}, "
                              f"{ck.code}, {payload})"):
                if cerr is not None:
                    self.w(f"s[{cerr}] = 1")
            return void
        if name in ("update_checksum", "update_checksum_with_payload"):
            c = self.ev(args[0], BoolT())
            data = self.field_list(args[1])
            lv = self.lval(args[2])
            algo = self.algo_name(args[3])
            payload = self.payload_read() if name.endswith("payload") else "b''"
            width = field_bits(strip(lv.type))
            with self.w.block(f"if {c.code}"):
                self.store(lv, Val(lv.type, code=f"update_checksum({algo!r}, {data}, {width}, "
                                                 f"{payload})"))
            return void
        if name in ("clone", "clone3", "clone_preserving_field_list"):
            sess = self.ev(args[1], BitT(32))
            self.w(f"s[1] = ({sess.code} & 4294967295) + 1")
            if name == "clone_preserving_field_list":
                fl = self.const_int(args[2])
                self.w(f"s[2] = {fl + 1}")
            else:
                self.w("s[2] = 0")
            return void
        if name in ("resubmit_preserving_field_list", "recirculate_preserving_field_list"):
            fl = self.const_int(args[0])
            self.w(f"s[{3 if name.startswith('resubmit') else 4}] = {fl + 1}")
            return void
        if name in ("resubmit", "recirculate"):
            self.w(f"s[{3 if name == 'resubmit' else 4}] = -1")
            return void
        if name == "truncate":
            # BMv2 keeps the smallest length asked for (slot holds length + 1).
            n = self.ev(args[0], BitT(32))
            self.w(f"s[5] = min(s[5] - 1, {n.code}) + 1 if s[5] else {n.code} + 1")
            return void
        if name == "digest":
            data_t = self.resolve_type(e.type_args[0]) if e.type_args else None
            data = self.ev(args[1], data_t)
            if data_t is not None:
                data = self.coerce(data, data_t, args[1])
            dt = strip(data.type)
            dname = dt.name if isinstance(dt, StructLikeT) else f"digest_{len(self.digests)}"
            if dname not in self.digests:
                self.digests[dname] = len(self.digests)
                fields = [sc.FieldInfo(n, _digest_bits(ft)) for n, ft in dt.fields] if isinstance(
                    dt, StructLikeT) else [sc.FieldInfo("value", _digest_bits(dt))]
                self.schema.digests.append(sc.DigestInfo(dname, fields))
            self.w(f"DIGEST({self.digests[dname]}, {py_tuple(self.flat(data))})")
            return void
        if name in ("assert", "assume"):
            c = self.ev(args[0], BoolT())
            with self.w.block(f"if not {c.code}"):
                self.w(f"raise AssertionFailed({str(e.loc)!r})")
            return void
        if name == "log_msg":
            msg = self.ev(args[0])
            if len(args) > 1:
                data = self.ev(args[1])
                self.w(f"LOG({msg.code}, {py_tuple(self.flat(data))})")
            else:
                self.w(f"LOG({msg.code}, ())")
            return void
        if name == "static_assert":
            c = self.ev(args[0])
            if not c.is_const:
                raise self.err(e, "static_assert needs a constant condition")
            if not c.const:
                msg = self.ev(args[1]).const if len(args) > 1 else "static assertion failed"
                raise self.err(e, str(msg))
            return const(BoolT(), True)
        decl = sym.overloads[0]
        if _user_declared(decl):
            k = self.user_functions.setdefault(name, len(self.user_functions))
            return self.call_user_extern(f"UF{k}", decl.params, decl.return_type, e, want)
        raise self.unsupported(e, f"extern function '{name}'")

    def call_user_extern(self: CodeGen, fn: str, params: list[ast.Param],
                         return_type: ast.TypeRef | None, e: ast.Call,
                         want: Type | None) -> Val:
        """A call to an extern the program declares itself, bound at run time
        to a plugin (``dataplane/runtime/plugins.py``): the in and inout
        values go in, the return value and the out/inout values come back."""
        args = self.bind_args(params, e.args, e)  # named or positional, defaults filled
        missing = [p.name for p, a in zip(params, args) if a is None]
        if missing:
            raise self.err(e, f"argument '{missing[0]}' is left out: a plugin extern "
                              "takes every argument")
        inputs: list[str] = []
        outputs: list[tuple[LValue, Type]] = []
        for p, a in zip(params, args):
            t = self.resolve_type(p.type, self.scope)
            if p.direction in ("out", "inout"):
                lv = self.lval(a)
                outputs.append((lv, t))
                if p.direction == "inout":
                    inputs.append(self.read_lvalue(lv).code)
            else:
                v = self.coerce(self.ev(a, t), t, a)
                inputs.append(v.code if v.parts is None else py_tuple(self.flat(v)))
        rt = self.resolve_type(return_type, self.scope) if return_type is not None else VoidT()
        results: list[tuple[LValue | None, Type]] = []
        if not isinstance(strip(rt), VoidT):
            results.append((None, rt))
        results += outputs
        call = f"{fn}({', '.join(inputs)})"
        if not results:
            self.w(call)
            return Val(VoidT())
        tmp = self.fresh("x")
        self.w(f"{tmp} = {call}")
        codes = [tmp] if len(results) == 1 else [f"{tmp}[{i}]" for i in range(len(results))]
        ret = Val(VoidT())
        for (lv, t), code in zip(results, codes):
            st = strip(t)
            value = f"(({code}) & {st.mask})" if isinstance(st, BitT) else code
            if lv is None:
                ret = Val(t, code=value)
            else:
                self.store(lv, Val(t, code=value))
        return ret

    # ------------------------------------------------------------- packets

    def packet_method(self: CodeGen, t: ExternT, name: str, e: ast.Call,
                      want: Type | None) -> Val:
        args = [a.value for a in e.args]
        if t.name == "packet_in":
            if name == "extract":
                if isinstance(args[0], ast.DontCare):
                    if not e.type_args:
                        raise self.err(e, "extract into '_' needs a type argument")
                    skip = strip(self.resolve_type(e.type_args[0]))
                    self.skip_bytes(str(field_bits(skip) // 8))
                    return Val(VoidT())
                lv = self.lval(args[0])
                if len(args) > 1:
                    nbits = self.ev(args[1])
                    self.extract_varbit(lv, nbits.code, e)
                else:
                    self.extract(lv, e)
                return Val(VoidT())
            if name == "lookahead":
                rt = self.resolve_type(e.type_args[0])
                return self.lookahead(rt, e)
            if name == "advance":
                n = self.ev(args[0], BitT(32))
                nb = self.fresh("nb")
                self.w(f"{nb} = {n.code}")
                invalid = self.layout.error_codes.get("ParserInvalidArgument", 6)
                with self.w.block(f"if {nb} % 8"):
                    self.w(f"raise ParserReject({invalid})")
                self.skip_bytes(f"({nb} >> 3)")
                return Val(VoidT())
            if name == "length":
                return Val(BitT(32), code="len(b)")
        if t.name == "packet_out" and name == "emit":
            v = self.ev(args[0])
            self.emit_value(v.type, v.base if v.base is not None else None, v, e)
            return Val(VoidT())
        raise self.unsupported(e, f"{t.name}.{name}")

    def skip_bytes(self: CodeGen, count: str) -> None:
        too_short = self.layout.error_codes.get("PacketTooShort", 1)
        tmp = self.fresh("n")
        self.w(f"{tmp} = s[0] + {count}")
        with self.w.block(f"if {tmp} > len(b)"):
            self.w(f"raise ParserReject({too_short})")
        self.w(f"s[0] = {tmp}")

    def extract(self: CodeGen, lv: LValue, node: ast.Node) -> None:
        t = strip(lv.type)
        if not isinstance(t, HeaderT):
            raise self.err(node, f"extract needs a header, not {lv.type}")
        if t.has_varbit:
            raise self.err(node, "a header with a varbit field needs the two-argument extract")
        if t.bit_width % 8:
            raise self.unsupported(node, f"header {t.name} of {t.bit_width} bits "
                                         "(not a whole number of bytes)")
        nbytes = t.bit_width // 8
        too_short = self.layout.error_codes.get("PacketTooShort", 1)
        c, end = self.fresh("c"), self.fresh("e")
        self.w(f"{c} = s[0]")
        self.w(f"{end} = {c} + {nbytes}")
        with self.w.block(f"if {end} > len(b)"):
            self.w(f"raise ParserReject({too_short})")
        units = byte_units(header_leaves(t))
        if units and all(u.bits <= 64 for u in units):
            # Compiled, the header's bytes are read one by one from the packet
            # (a bytes object; the engine passes nothing else) into machine
            # words: no struct call, no tuple. Python keeps the struct.
            self.w.ctypes.update({c: "cython.Py_ssize_t", end: "cython.Py_ssize_t",
                                  "b": "bytes"})
            with self.w.block("if cython.compiled"):
                self.load_units(lv.base, units, c)
            with self.w.block("else"):
                self.extract_units(lv.base, units, c)
        else:
            self.extract_units(lv.base, units, c)
        self.w(f"{slot(lv.base)} = 1")
        self.w(f"s[0] = {end}")
        self.stack_advance(node)

    def struct_id(self: CodeGen, units: list[ByteUnit]) -> int:
        fmt = ">" + "".join(code for u in units for code, _ in u.codes)
        return self.struct_formats.setdefault(fmt, len(self.struct_formats))

    def load_units(self: CodeGen, base: Any, units: list[ByteUnit], c: str) -> None:
        """Each unit of at most 64 bits as one big-endian load of its bytes
        from ``b`` at ``c`` (compiled: C byte reads, shifts and ors), split
        into its fields as ``extract_units`` splits a struct value."""
        offset = 0
        for unit in units:
            nbytes = unit.bits // 8
            reads = [f"cython.cast(cython.ulonglong, b[{c} + {offset + k}])" if offset + k
                     else f"cython.cast(cython.ulonglong, b[{c}])" for k in range(nbytes)]
            offset += nbytes
            value = _joined([(r, 8) for r in reads])
            if unit.plain and len(unit.leaves) == 1:
                self.w(f"{slot(base, unit.leaves[0][0])} = {_boxed(value, unit.bits)}")
                continue
            if nbytes > 1:
                value = self.word_local(value, "u")
            self.split_unit(base, value, unit, boxed=True)

    def split_unit(self: CodeGen, base: Any, value: str, unit: ByteUnit,
                   boxed: bool = False) -> None:
        """A unit's fields from its value: small shifts and masks, signed
        fields from two's complement, bools from their bit. ``boxed``
        (compiled code only): unsigned fields become integer objects
        through ``_boxed``'s cache or table."""
        shift = unit.bits
        for off, w, ft in unit.leaves:
            shift -= w
            expr = _piece(value, unit.bits, shift, w)
            if isinstance(ft, BitT) and ft.signed:
                expr = f"to_signed({expr}, {w})"
            elif isinstance(ft, BoolT):
                expr = f"bool({expr})"
            elif boxed:
                expr = _boxed(expr, w)
            self.w(f"{slot(base, off)} = {expr}")

    def extract_units(self: CodeGen, base: Any, units: list[ByteUnit], c: str) -> None:
        """One ``struct.unpack_from`` for the header, then the fields that
        share a unit split off it with small shifts (about 2.5x faster
        than slicing one wide integer for an IPv4 header)."""
        names: list[str] = []
        joins: list[str] = []
        splits: list[tuple[str, ByteUnit]] = []
        for unit in units:
            if len(unit.leaves) == 1 and len(unit.codes) == 1 and unit.plain:
                names.append(slot(base, unit.leaves[0][0]))
                continue
            parts = [self.fresh("u") for _ in unit.codes]
            names.extend(parts)
            value = _joined(list(zip(parts, (bits for _, bits in unit.codes))))
            if len(parts) > 1:
                name = self.fresh("u")
                joins.append(f"{name} = {value}")
                parts.append(name)
                value = name
            if unit.bits <= 64:  # joined and split in a machine word when compiled
                self.w.ctypes.update(dict.fromkeys(parts, "cython.ulonglong"))
            splits.append((value, unit))
        if names:
            target = ", ".join(names) + ("," if len(names) == 1 else "")
            self.w(f"{target} = SU{self.struct_id(units)}(b, {c})")
        for line in joins:
            self.w(line)
        for value, unit in splits:
            self.split_unit(base, value, unit)

    def emit_units(self: CodeGen, parts: list[str], units: list[ByteUnit],
                   stores: bool = True) -> None:
        """A valid header's bytes: compiled, stored byte by byte into a new
        bytes object when every unit fits a machine word and ``stores``; in
        Python (and otherwise) one ``struct.pack``."""
        if stores and any(u.bits for u in units) and all(u.bits <= 64 for u in units):
            with self.w.block("if cython.compiled"):
                self.store_units(parts, units)
            with self.w.block("else"):
                self.pack_units(parts, units)
        else:
            self.pack_units(parts, units)

    def store_units(self: CodeGen, parts: list[str], units: list[ByteUnit]) -> None:
        """The header as C stores into the program's deparse buffer (``DB``,
        a bytearray of ``DBN`` bytes) after the bytes already there, whose
        count the deparser keeps in ``s[0]`` (the parser's cursor, free by
        then); what is there goes to ``OUT`` first if the header would not
        fit. Each field in a machine word (a signed one as its two's
        complement, a bool as its bit), a unit's fields joined by shifts,
        its bytes written most significant first."""
        q, ptr = self.fresh("q"), self.fresh("p")
        self.w.ctypes[ptr] = "cython.p_uchar"
        self.w.ctypes[q] = "cython.Py_ssize_t"
        total = sum(u.bits for u in units) // 8
        self.store_bytes += total
        self.w(f"{q} = s[0]")
        with self.w.block(f"if {q} + {total} > DBN"):
            self.w(f"{q} = DFLUSH(s)")
        self.w(f"{ptr} = cython.cast(cython.p_uchar, PyByteArray_AS_STRING(DB)) + {q}")
        pos = 0
        for unit in units:
            fields = []
            for off, w, ft in unit.leaves:
                if not w:
                    continue
                d = self.fresh("d")
                if isinstance(ft, BitT) and ft.signed:
                    self.w.ctypes[d] = "cython.longlong"
                    self.w(f"{d} = {parts[off]}")
                    fields.append((f"(cython.cast(cython.ulonglong, {d}) & {ft.mask})", w))
                    continue
                self.w.ctypes[d] = "cython.ulonglong"
                self.w(f"{d} = (1 if {parts[off]} else 0)" if isinstance(ft, BoolT)
                       else f"{d} = {parts[off]}")
                fields.append((d, w))
            value = _joined(fields)
            nbytes = unit.bits // 8
            if nbytes > 1 and len(fields) > 1:
                value = self.word_local(value, "v")
            for k in range(nbytes):
                shift = 8 * (nbytes - 1 - k)
                byte = f"({value} >> {shift})" if shift else value
                self.w(f"{ptr}[{pos + k}] = {byte} & 255")
            pos += nbytes
        self.w(f"s[0] = {q} + {total}")

    def pack_units(self: CodeGen, parts: list[str], units: list[ByteUnit]) -> None:
        """A valid header's bytes in one ``struct.pack``: a unit's fields
        joined by small shifts, a unit wider than one format letter split
        into several."""
        args: list[str] = []
        for unit in units:
            fields = []
            for off, w, sft in unit.leaves:
                p = parts[off]
                if isinstance(sft, BitT) and sft.signed:
                    p = f"({p} & {sft.mask})"
                elif isinstance(sft, BoolT):
                    p = f"(1 if {p} else 0)"
                fields.append((p, w))
            value = _joined(fields)
            if len(unit.codes) > 1 and not (value.isidentifier() or _SLOT.match(value)):
                tmp = self.fresh("u")
                self.w(f"{tmp} = {value}")
                value = tmp
            rest = unit.bits
            for _, bits in unit.codes:
                rest -= bits
                args.append(_piece(value, unit.bits, rest, bits))
        if args:
            self.flush_stores()
            self.w(f"OUT.append(SP{self.struct_id(units)}({', '.join(args)}))")

    def flush_stores(self: CodeGen) -> None:
        """Before a header goes to ``OUT`` as its own bytes object, the
        headers stored in the deparse buffer ahead of it go there first
        (none in Python, where every header is its own object)."""
        with self.w.block("if s[0]"):
            self.w("DFLUSH(s)")

    def stack_advance(self: CodeGen, node: ast.Node) -> None:
        """``extract(hs.next)`` also advances the stack's nextIndex."""
        if isinstance(node, ast.Call) and node.args:
            target = node.args[0].value
            while isinstance(target, ast.Member | ast.Index):
                if isinstance(target, ast.Member) and target.name == "next":
                    sv = self.ev(target.expr)
                    if sv.base is not None and isinstance(strip(sv.type), StackT):
                        self.w(f"{slot(sv.base)} += 1")
                    return
                target = target.expr

    def extract_varbit(self: CodeGen, lv: LValue, nbits: str, node: ast.Node) -> None:
        t = strip(lv.type)
        if not isinstance(t, HeaderT):
            raise self.err(node, f"extract needs a header, not {lv.type}")
        too_short = self.layout.error_codes.get("PacketTooShort", 1)
        header_short = self.layout.error_codes.get("HeaderTooShort", 4)
        vw = next((field_bits(ft) for _, ft in t.fields if isinstance(strip(ft), VarbitT)), 0)
        fixed = t.bit_width - vw
        n, c, end, v = self.fresh("n"), self.fresh("c"), self.fresh("e"), self.fresh("v")
        invalid = self.layout.error_codes.get("ParserInvalidArgument", 6)
        # BMv2's order of checks: multiple of 8, packet length, maximum size.
        self.w(f"{n} = {nbits}")
        with self.w.block(f"if {n} % 8"):
            self.w(f"raise ParserReject({invalid})")
        self.w(f"{c} = s[0]")
        self.w(f"{end} = {c} + (({fixed} + {n}) >> 3)")
        with self.w.block(f"if {end} > len(b)"):
            self.w(f"raise ParserReject({too_short})")
        with self.w.block(f"if {n} > {vw}"):
            self.w(f"raise ParserReject({header_short})")
        self.w(f"{v} = int.from_bytes(b[{c}:{end}], 'big')")
        self.w(f"_sh = {fixed} + {n}")
        for fname, ft in t.fields:
            target = slot(lv.base, t.offsets[fname])
            if isinstance(strip(ft), VarbitT):
                self.w(f"_sh -= {n}")
                self.w(f"{target} = ({v} >> _sh) & ((1 << {n}) - 1)")
                self.w(f"{slot(lv.base, t.offsets[fname] + 1)} = {n}")
            else:
                w = field_bits(ft)
                self.w(f"_sh -= {w}")
                self.w(f"{target} = ({v} >> _sh) & {(1 << w) - 1}")
        self.w(f"{slot(lv.base)} = 1")
        self.w(f"s[0] = {end}")
        self.stack_advance(node)

    def lookahead(self: CodeGen, t: Type, node: ast.Node) -> Val:
        st = strip(t)
        width = field_bits(st)
        too_short = self.layout.error_codes.get("PacketTooShort", 1)
        v = self.fresh("v")
        self.w(f"{v} = read_bits(b, s[0] * 8, {width})")
        with self.w.block(f"if {v} is None"):
            self.w(f"raise ParserReject({too_short})")
        if isinstance(st, BitT):
            return Val(t, code=v if not st.signed else f"to_signed({v}, {width})")
        if isinstance(st, BoolT):
            return Val(t, code=f"bool({v})")
        if isinstance(st, HeaderT | StructT | StackT):
            parts: list[str] = []
            _unpack_bits(st, v, width, parts)
            return Val(t, parts=parts)
        raise self.unsupported(node, f"lookahead of {t}")

    def emit_value(self: CodeGen, t: Type, base: int | str | None, v: Val,
                   node: ast.Node, stores: bool = True) -> None:
        """``stores``: a header may take the compiled byte stores
        (``emit_units``); a stack's elements do not, since a long probe
        stack would multiply the code and the C compiler's time (gpint.p4's
        deparser: 540 headers) for packets that rarely carry one."""
        st = strip(t)
        parts = self.flat(v)
        if isinstance(st, HeaderT):
            if st.has_varbit:
                pairs = []
                k = 1
                for _, ft in st.fields:
                    if isinstance(strip(ft), VarbitT):
                        pairs.append(f"({parts[k]}, {parts[k + 1]})")
                    else:
                        pairs.append(f"({parts[k]}, {field_bits(ft)})")
                    k += slots(ft)
                with self.w.block(f"if {parts[0]}"):
                    self.flush_stores()
                    self.w(f"OUT.append(join_bits({py_tuple(pairs)}))")
                return
            if st.bit_width % 8:
                raise self.unsupported(node, f"emitting header {st.name} of {st.bit_width} bits")
            with self.w.block(f"if {parts[0]}"):
                self.emit_units(parts, byte_units(header_leaves(st)), stores)
            return
        if isinstance(st, StructLikeT):
            for fname, ft in st.fields:
                off = st.offsets[fname]
                n = slots(ft)
                sub = Val(ft, parts=parts[off:off + n]) if is_compound(ft) else Val(
                    ft, code=parts[off])
                self.emit_value(ft, None, sub, node, stores)
            return
        if isinstance(st, StackT):
            es = slots(st.elem)
            chunks = [parts[1 + i * es:1 + (i + 1) * es] for i in range(st.size)]
            guard = _any_valid_guard([c[0] for c in chunks]) if isinstance(
                strip(st.elem), HeaderT) else None
            if guard is None:
                for chunk in chunks:
                    self.emit_value(st.elem, None, Val(st.elem, parts=chunk), node, False)
                return
            self.zero_lists.add(len(chunks))
            first = int(_SLOT.match(chunks[0][0]).group(2))  # type: ignore[union-attr]
            if any(lo <= first < hi for lo, hi in self.layout.stack_spans):
                guard = f"s[{self.layout.stack_mark}] and {guard}"  # codegen.stackmarks
            # One C-level scan of the validity slots skips a stack no packet
            # filled (a long probe stack on every plain packet).
            with self.w.block(f"if {guard}"):
                for chunk in chunks:
                    self.emit_value(st.elem, None, Val(st.elem, parts=chunk), node, False)
            return
        if isinstance(st, TupleT):
            k = 0
            for et in st.elems:
                n = slots(et)
                self.emit_value(et, None, Val(et, parts=parts[k:k + n]), node, stores)
                k += n
            return
        raise self.err(node, f"emit needs a header, stack, union or struct, not {t}")


def _value_set_fields(t: Type, prefix: str = "") -> list[tuple[str, int, str]]:
    """(name, width, match kind) of a value set's key: one field for a bit
    type; a struct's fields in order, nested structs flattened into dotted
    names, each field's kind from its ``@match`` annotation (exact when
    none), as select keys line up with them."""
    st = strip(t)
    if not isinstance(st, StructT):
        return [(prefix, field_bits(st), "exact")]
    out: list[tuple[str, int, str]] = []
    for fname, ft in st.fields:
        name = f"{prefix}{fname}"
        if isinstance(strip(ft), StructT):
            out.extend(_value_set_fields(ft, name + "."))
            continue
        kind = "exact"
        for a in st.annotations.get(fname, []):
            if a.name == "match":
                kind = (a.body or "exact").strip()
        out.append((name, field_bits(ft), kind))
    return out


def _arity_fits(params: list[ast.Param], n: int) -> bool:
    """Whether ``n`` positional arguments can bind ``params`` (parameters
    with a default or ``@optional`` may be left out)."""
    needed = sum(1 for p in params if p.default is None
                 and not any(a.name == "optional" for a in p.annotations))
    return needed <= n <= len(params)


def _user_declared(decl: Any) -> bool:
    """An extern the program declares itself, not one of v1model's or core's."""
    from dataplane.compiler.frontend.preprocess import builtin_include_dir

    file = getattr(getattr(decl, "loc", None), "file", None)
    if not file:
        return False
    try:
        return Path(file).resolve().parent != builtin_include_dir()
    except OSError:
        return True


def _digest_bits(t: Type) -> int:
    """A digest field's width in P4Info: an enum without an underlying type
    travels as 32 bits, as p4c's BMv2 back end represents it."""
    st = strip(t)
    if isinstance(st, EnumT) and st.underlying is None:
        return 32
    return field_bits(st)


def _unpack_bits(t: Type, v: str, end: int, parts: list[str]) -> int:
    """Slot expressions of a header, struct or stack read from the integer
    ``v`` whose bits below ``end`` hold it; returns where it began. A
    header (each stack element, too) comes out valid; a stack's next index
    is 0, as for a value that no extract has advanced."""
    st = strip(t)
    if isinstance(st, StackT):
        parts.append("0")
        for _ in range(st.size):
            end = _unpack_bits(st.elem, v, end, parts)
        return end
    if isinstance(st, HeaderT | StructT):
        if isinstance(st, HeaderT):
            parts.append("1")
        for _, ft in st.fields:
            end = _unpack_bits(ft, v, end, parts)
        return end
    w = field_bits(st)
    end -= w
    parts.append(f"(({v} >> {end}) & {(1 << w) - 1})")
    return end


_STRUCT_CODES = ((8, "Q"), (4, "I"), (2, "H"), (1, "B"))


@dataclass(frozen=True)
class ByteUnit:
    """Header fields that together end on a byte boundary, read or written
    as ``codes`` (struct format letters with their widths in bits)."""

    leaves: list[tuple[int, int, Type]]
    bits: int
    codes: list[tuple[str, int]]
    plain: bool
    """One unsigned field: the struct value is the field's value."""


def byte_units(leaves: list[tuple[int, int, Type]]) -> list[ByteUnit]:
    """A whole-byte header's fields grouped at byte boundaries for
    ``struct``. Zero-width fields end up in the unit before them; a header
    of no bits is one unit of no format letters."""
    units: list[ByteUnit] = []
    group: list[tuple[int, int, Type]] = []
    bits = 0
    for leaf in leaves:
        group.append(leaf)
        bits += leaf[1]
        if bits and bits % 8 == 0:
            units.append(_unit(group, bits))
            group, bits = [], 0
    if group:  # only zero-width fields are left (the header is whole bytes)
        if units:
            last = units.pop()
            units.append(_unit(last.leaves + group, last.bits))
        else:
            units.append(_unit(group, 0))
    return units


def _unit(group: list[tuple[int, int, Type]], bits: int) -> ByteUnit:
    nbytes, codes = bits // 8, []
    while nbytes:
        size, code = next((n, c) for n, c in _STRUCT_CODES if n <= nbytes)
        codes.append((code, size * 8))
        nbytes -= size
    ft = strip(group[0][2])
    plain = len(group) == 1 and isinstance(ft, BitT) and not ft.signed
    return ByteUnit(group, bits, codes, plain)


def _joined(values: list[tuple[str, int]]) -> str:
    """Values of the given widths, most significant first, as one integer
    expression (zero-width values add nothing)."""
    acc = ""
    for code, width in values:
        if width:
            acc = code if not acc else f"(({acc}) << {width} | {code})"
    return acc or "0"


def _boxed(expr: str, width: int) -> str:
    """A parsed unsigned field of ``width`` bits as the object compiled code
    stores: through the built module's cache (``BOXU`` in
    ``dataplane.compiler.native``) when it may exceed CPython's shared small
    integers, so a value that recurs (an EtherType, an address, a port) is
    not made and freed again for every packet; a narrower one through
    ``box_u64``, which takes CPython's shared small integer from a table
    (``dataplane/runtime/ints.pxd``) where Cython would call for it."""
    return f"BOXU({expr})" if width > 8 else f"box_u64({expr})"


def _piece(value: str, total: int, shift: int, width: int) -> str:
    """Bits ``shift`` to ``shift + width`` of a ``total``-bit ``value``."""
    if width == 0:
        return "0"
    if width == total:
        return value
    if shift == 0:
        return f"{value} & {(1 << width) - 1}"
    if shift + width == total:
        return f"{value} >> {shift}"
    return f"({value} >> {shift}) & {(1 << width) - 1}"


_SLOT = re.compile(r"^(\w+)\[(\d+)\]$")


def _any_valid_guard(valid: list[str]) -> str | None:
    """``s[a:b:k] != Zn`` when the stack's validity slots are one array at a
    constant stride (worth it from four elements on), else None. ``Zn`` is
    a list of n zeros: list comparison checks identity first, so an empty
    stack costs a slice and a C loop, twice as fast as ``any``."""
    if len(valid) < 4:
        return None
    found = [_SLOT.match(v) for v in valid]
    if not all(found) or len({m.group(1) for m in found if m}) != 1:
        return None
    idx = [int(m.group(2)) for m in found if m]
    stride = idx[1] - idx[0]
    if stride <= 0 or any(b - a != stride for a, b in zip(idx, idx[1:])):
        return None
    return f"{found[0].group(1)}[{idx[0]}:{idx[-1] + 1}:{stride}] != Z{len(idx)}"


def header_leaves(t: Type, base: int = 0) -> list[tuple[int, int, Type]]:
    """(slot offset, width, type) of every scalar inside a header or a
    struct nested in it, in wire order."""
    st = strip(t)
    out: list[tuple[int, int, Type]] = []
    for fname, ft in st.fields:  # type: ignore[union-attr]
        off = base + st.offsets[fname]  # type: ignore[union-attr]
        sft = strip(ft)
        if isinstance(sft, StructT):
            out += header_leaves(sft, off)
        elif isinstance(sft, EnumT) and sft.underlying is not None:
            out.append((off, sft.underlying.width, sft.underlying))
        else:
            out.append((off, field_bits(sft), sft))
    return out


def _same_layout(a: Type, b: Type) -> bool:
    a0, b0 = strip(a), strip(b)
    if isinstance(a0, IntT) or isinstance(b0, IntT | DontCareT):
        return True
    return same_type(a0, b0) or (slots(a0) == slots(b0) and not is_compound(a0))


def _unsigned(value: Any, t: Type) -> int:
    st = strip(t)
    if isinstance(value, bool):
        return int(value)
    if isinstance(st, BitT):
        return int(value) & st.mask
    if isinstance(st, EnumT) and st.underlying is not None:
        return int(value) & st.underlying.mask
    return int(value)


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


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


__all__ = ["ExternMixin", "offset", "TupleT", "UnionT"]
