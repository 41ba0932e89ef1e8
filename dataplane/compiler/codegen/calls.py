"""Calls with P4's copy-in/copy-out semantics: arguments bound to
parameters, static per-callable frames in the slot list, actions,
functions and applied parser/control instances (including the controls
that work on their caller's variables in place, ``shared_params``).
Apart from tables and externs because every kind of call goes through
these: a table's actions, a plugin extern's arguments, a sub-block's
apply."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dataplane import schema as sc
from dataplane.compiler.codegen.naming import ident
from dataplane.compiler.codegen.values import LValue, Val, location, py_tuple, slot
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.scope import (
    ActionSym,
    BlockInstSym,
    ConstSym,
    FuncSym,
    InstanceSym,
    Scope,
    VarSym,
)
from dataplane.compiler.frontend.types import (
    BoolT,
    DontCareT,
    ExternT,
    IntT,
    Type,
    VoidT,
    field_bits,
    is_compound,
    same_type,
    slots,
    strip,
)

if TYPE_CHECKING:
    from dataplane.compiler.codegen.generator import CodeGen


class CopyBlockParams(Exception):
    """A control generated to work on its caller's variables in place was
    applied again with other variables: generation starts over with that
    control's parameters copied in and out (``CodeGen.copy_blocks``)."""

    def __init__(self, qname: str) -> None:
        super().__init__(qname)
        self.qname = qname


class CallMixin:
    """Call compilation for CodeGen: binding, copy-in/copy-out, frames."""

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
        name = f"a_{ident(sym.qname)}_{len(self.funcs)}"
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

    def call_function(self: CodeGen, sym: FuncSym, e: ast.Call) -> Val:
        key = sym  # the symbol itself: an id() could be reused once a symbol is freed
        decl = sym.decl
        if decl.type_params:
            raise self.unsupported(e, f"generic function '{decl.name}'")
        if key not in self._generated:
            scope = sym.scope.child()
            psyms = self.frame(decl.params, scope)
            rt = self.resolve_type(decl.return_type, scope)
            name = f"f_{ident(decl.name)}_{len(self.funcs)}"
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


def _same_layout(a: Type, b: Type) -> bool:
    a0, b0 = strip(a), strip(b)
    if isinstance(a0, IntT) or isinstance(b0, IntT | DontCareT):
        return True
    return same_type(a0, b0) or (slots(a0) == slots(b0) and not is_compound(a0))
