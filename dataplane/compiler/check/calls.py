"""Call rules: what may be called, argument count, names, directions and
types, and the width a generic parameter takes from its argument."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataplane.compiler.check.env import (
    ACTION,
    EXTERN_FUNCTION,
    FUNCTION,
    INSTANCE,
    TABLE,
    TYPE,
    Entity,
    Scope,
)
from dataplane.compiler.check.exprs import SIZE_METHODS, ApplyResultT, err, header_method
from dataplane.compiler.check.stmts import always_returns
from dataplane.compiler.check.typeref import known, substitute
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.types import (
    BitT,
    BlockT,
    DontCareT,
    EnumT,
    ExternT,
    HeaderT,
    IntT,
    ListT,
    StackT,
    StructLikeT,
    TupleT,
    Type,
    TypeVarT,
    UnionT,
    VarbitT,
    VoidT,
    strip,
)

if TYPE_CHECKING:
    from dataplane.compiler.check.checker import Checker


def call_type(ck: Checker, e: ast.Call, want: Type | None) -> Type | None:
    f = e.func
    if isinstance(f, ast.Name):
        ent = ck.lookup(f)
        return _call_entity(ck, ent, f.name, e)
    if isinstance(f, ast.Member):
        if isinstance(f.expr, ast.Name):
            ent = (ck.res.root if f.expr.absolute else ck.scope).lookup(f.expr.name)
            if ent is not None and ent.kind == TABLE:
                ck.facts.symbols[id(f.expr)] = ent
                if f.name != "apply":
                    raise err(f, f"a table has no method '{f.name}' (only apply)")
                if ck.ctx.kind in ("action", "function"):
                    raise err(e, f"table {f.expr.name} cannot be applied from an "
                                 f"{ck.ctx.kind}")
                _bind(ck, [], e, [], f"{f.expr.name}.apply")
                ck.facts.applied_tables.add(id(ent.decl))
                return ApplyResultT(ent.decl)
        named = ck.type_named(f.expr)
        if named is not None:
            if f.name in SIZE_METHODS:
                return IntT()
            raise err(f, f"type {named} has no method '{f.name}'")
        base = ck.expr(f.expr)
        return _method(ck, base, f, e)
    for a in e.args:
        ck.expr(a.value)
    return None


def _call_entity(ck: Checker, ent: Entity, name: str, e: ast.Call) -> Type | None:
    if ent.kind in (ACTION, FUNCTION):
        decl = ent.decl
        if ent.kind == ACTION and ck.ctx.kind in ("parser", "function"):
            raise err(e, f"action '{name}' cannot be called from a {ck.ctx.kind}")
        if ent.kind == ACTION and e.type_args:
            raise err(e, f"action '{name}' takes no type arguments")
        explicit = _explicit_types(ck, decl, e, name) if ent.kind == FUNCTION else {}
        ptypes = [substitute(t, explicit) if t is not None and explicit else t
                  for t in ent.params]
        bindings = _bind(ck, decl.params, e, ptypes, name)
        if ent.kind == FUNCTION:
            _returns_on_every_path(ent)
            if decl.type_params:
                bindings.update(explicit)
                return ck.specialize(ent, bindings)
            return ent.type
        return VoidT()
    if ent.kind == EXTERN_FUNCTION:
        decl = _overload(ck, ent.overloads, e, name)
        scope = _generic_scope(ent.scope or ck.res.root, decl.type_params, e, ck)
        ptypes = [ck.res.resolve(p.type, scope) for p in decl.params]
        _bind(ck, decl.params, e, ptypes, name)
        ck.facts.extern_calls.append((e, decl, ptypes, ck.res.resolve(decl.return_type, scope),
                                      _names_unseen(ck, decl, decl.type_params)))
        if name == "verify" and ck.ctx.kind in ("control", "action"):
            raise err(e, "verify() is called only in a parser")
        if name == "static_assert":
            _static_assert(ck, e)
        if name == "hash" and len(e.args) > 1:
            _hash_algorithm(ck, e.args[1].value)
        return known(ck.res.resolve(decl.return_type, scope)) or None
    if ent.kind == TYPE:
        t = ent.type
        decl = getattr(known(t), "decl", None)
        if isinstance(decl, ast.ParserDecl | ast.ControlDecl) and not decl.type_params:
            # a constructor call: its arguments bind the constructor parameters (spec 15)
            ptypes = [ck.res.resolve(p.type, ck.res.root) for p in decl.ctor_params]
            _bind(ck, decl.ctor_params, e, ptypes, f"{name} constructor")
            return t
        if isinstance(known(t), ExternT) and not getattr(decl, "type_params", None):
            k = known(t)
            constructor_args(ck, ast.Instantiation(name, ast.TypeName(name, loc=e.loc), e.args,
                                                   loc=e.loc), k)  # type: ignore[arg-type]
            return t
        for a in e.args:
            ck.expr(a.value)
        if isinstance(t, BlockT | ExternT):
            return t
        raise err(e, f"'{name}' is a type; it cannot be called")
    raise err(e, f"'{name}' is a {ent.kind}; it cannot be called")


def constructor_args(ck: Checker, d: ast.Instantiation, t: ExternT) -> None:
    """An extern instance's constructor arguments against the extern's
    constructors (spec 7.2.11.2)."""
    ctors = [m for m in getattr(t.decl, "methods", []) if m.name == t.name
             and m.return_type is None]
    if not ctors:
        return
    call = ast.Call(ast.Name(t.name, loc=d.loc), d.args, loc=d.loc)
    m = _overload(ck, ctors, call, f"{t.name} constructor")
    bound = {n: a for n, a in zip(getattr(t.decl, "type_params", []), t.args)}
    scope = _generic_scope(ck.res.root, m.type_params, call, ck, bound)
    ptypes = [ck.res.resolve(p.type, scope) for p in m.params]
    _bind(ck, m.params, call, ptypes, f"{t.name} constructor")


def _returns_on_every_path(ent: Entity) -> None:
    """A function with a result returns a value on every path through its
    body, checked where it is called (p4c)."""
    decl = ent.decl
    if isinstance(strip(ent.type) if ent.type else None, VoidT) or always_returns(decl.body):
        return
    if ent.type is None and not decl.type_params:
        return
    raise err(decl, f"function {decl.name} does not return a value on every path")


def _names_unseen(ck: Checker, decl: ast.Node, type_params: list[str]) -> bool:
    """Whether the signature names a type parameter the caller's scope does
    not know: code generation reads a program's own extern's parameter types
    in the caller's scope."""
    if ck.generic_depth or ck.ctx.kind not in ("control", "parser"):
        return False  # only apply blocks and states are sure to be generated
    refs = [p.type for p in decl.params] + [decl.return_type]
    names = {n.name for n in ast.walk(refs) if isinstance(n, ast.TypeName)}
    return any(n in type_params and (ck.scope.lookup(n) is None
                                     or ck.scope.lookup(n).kind != TYPE)  # type: ignore
               for n in names)


def _explicit_types(ck: Checker, decl: ast.FunctionDecl, e: ast.Call,
                    name: str) -> dict[str, Type]:
    """A generic function's explicit type arguments, bound to its type
    parameters, so the value arguments are checked against them."""
    if not e.type_args:
        return {}
    if len(e.type_args) != len(decl.type_params):
        raise err(e, f"{name} takes {len(decl.type_params)} type argument(s), got "
                     f"{len(e.type_args)}")
    out = {}
    for tp, ta in zip(decl.type_params, e.type_args):
        t = ck.res.resolve(ta, ck.scope)
        if t is not None:
            out[tp] = t
    return out


def _static_assert(ck: Checker, e: ast.Call) -> None:
    """``static_assert(cond[, message])`` fails the compile when ``cond``
    is known to be false."""
    if not e.args:
        return
    cond = ck.res.const_value(e.args[0].value, ck.scope)
    if cond is False:
        msg = e.args[1].value if len(e.args) > 1 else None
        text = msg.value if isinstance(msg, ast.StringLit) else "static assertion failed"
        raise err(e, f"static_assert: {text}")


def _hash_algorithm(ck: Checker, algo: ast.Expr) -> None:
    """Keep the algorithm of a ``hash`` call by name, for BMv2's rules."""
    t = known(ck.facts.types.get(id(algo)))
    value = ck.res.const_value(algo, ck.scope)
    if isinstance(t, EnumT):
        name = next((m for m, v in t.values.items() if v == value), None)
        if name is not None:
            ck.facts.hash_algorithms.append((algo, name))


def _overload(ck: Checker, overloads: list, e: ast.Call, name: str) -> ast.Node:
    given = {a.name for a in e.args if a.name is not None}
    fits = [d for d in overloads if _arity_fits(d.params, e.args)
            and given <= {p.name for p in d.params}]
    exact = [d for d in fits if len(d.params) == len(e.args)]
    if len(exact) > 1:
        raise err(e, f"the call of '{name}' is ambiguous: {len(exact)} declarations take "
                     f"{len(e.args)} argument(s) (name the arguments)")
    if not fits:
        counts = sorted({len(d.params) for d in overloads})
        raise err(e, f"no declaration of '{name}' takes these {len(e.args)} argument(s) "
                     f"(it takes {' or '.join(map(str, counts))})")
    return fits[0]


def _arity_fits(params: list[ast.Param], args: list[ast.Arg]) -> bool:
    needed = sum(1 for p in params if p.default is None
                 and not any(a.name == "optional" for a in p.annotations))
    return needed <= len(args) <= len(params)


def _generic_scope(scope: Scope, type_params: list[str], e: ast.Call, ck: Checker,
                   bound: dict[str, Type] | None = None) -> Scope:
    """A scope where a generic declaration's type parameters stand for the
    explicit type arguments, the instance's, or else themselves."""
    if not type_params and not bound:
        return scope
    inner = scope.child()
    for name, t in (bound or {}).items():
        inner.names[name] = Entity(TYPE, None, t)
    explicit = [ck.res.resolve(t, ck.scope) for t in e.type_args]
    for i, name in enumerate(type_params):
        t = explicit[i] if i < len(explicit) and explicit[i] is not None else TypeVarT(name)
        inner.names[name] = Entity(TYPE, None, t)
    return inner


def _bind(ck: Checker, params: list[ast.Param], e: ast.Call, ptypes: list[Type | None],
          name: str) -> dict[str, Type]:
    """Arguments to parameters by position or name; each argument is typed
    against its parameter, out and inout ones must be assignable. Returns
    the type each type variable took from its arguments."""
    bound: list[ast.Arg | None] = [None] * len(params)
    names = [p.name for p in params]
    pos = 0
    for a in e.args:
        if a.name is not None:
            if a.name not in names:
                raise err(a, f"{name}: no parameter named '{a.name}'")
            i = names.index(a.name)
        else:
            if pos >= len(params):
                raise err(e, f"{name}: too many arguments (it takes {len(params)})")
            i = pos
            pos += 1
        if bound[i] is not None:
            raise err(a, f"{name}: argument for parameter '{params[i].name}' given twice")
        bound[i] = a
    literal_only: dict[str, ast.Expr] = {}
    typed_vars: dict[str, Type] = {}  # a type variable's type, from its first typed argument
    for i, (p, a) in enumerate(zip(params, bound)):
        if a is None:
            if p.default is None and not any(an.name == "optional" for an in p.annotations):
                raise err(e, f"{name}: No argument supplied for {p.name}")
            continue
        pt = ptypes[i] if i < len(ptypes) else None
        at = ck.expr(a.value, pt)
        if p.direction in ("out", "inout") and not isinstance(a.value, ast.DontCare):
            ck.lvalue(a.value, f"argument for {p.direction} parameter '{p.name}'")
        var = strip(pt) if pt is not None else None
        if isinstance(var, TypeVarT):
            if isinstance(known(at), IntT):
                literal_only.setdefault(var.name, a.value)
            elif at is not None and var.name in typed_vars:
                ck.converts(at, typed_vars[var.name], a.value)
            elif at is not None:
                typed_vars[var.name] = at
            continue
        ck.converts(at, pt, a.value)
    for var_name, lit in literal_only.items():
        if var_name not in typed_vars:
            raise err(lit, "could not infer a width for this integer: the parameter's type "
                           f"{var_name} takes it from the argument (give it a width, e.g. "
                           "16w0xffff, or cast it)")
    return typed_vars


def _method(ck: Checker, base: Type | None, f: ast.Member, e: ast.Call) -> Type | None:
    b = known(base)
    if isinstance(b, ExternT):
        return _extern_method(ck, b, f, e)
    if b is None:
        for a in e.args:
            ck.expr(a.value)
        return None
    if isinstance(b, BlockT):
        if f.name != "apply":
            raise err(f, f"{b.kind} {b.name} has no method '{f.name}' (only apply)")
        if ck.ctx.kind != b.kind:
            where = {"action": "an action", "function": "a function", "parser": "a parser",
                     "control": "a control"}.get(ck.ctx.kind, "here")
            raise err(e, f"{b.kind} {b.name} cannot be applied from {where} (a parser is "
                         "applied from a parser state, a control from an apply block)")
        decl = b.decl
        _bind(ck, getattr(decl, "params", []), e, ck.apply_types(f.expr, decl),
              f"{b.name}.apply")
        return VoidT()
    ht = header_method(b, f.name)
    if ht is not None:
        _bind(ck, [], e, [], f.name)
        return ht
    if isinstance(b, StackT) and f.name in ("push_front", "pop_front"):
        if len(e.args) != 1:
            raise err(e, f"{f.name} takes one argument, the count")
        count = e.args[0].value
        ct = known(ck.expr(count))
        if ct is not None and not isinstance(ct, IntT | BitT) or not ck.is_constant(count):
            raise err(count, f"{f.name}'s count is a compile-time known integer")
        v = ck.res.const_value(count, ck.scope)
        if isinstance(v, int) and v < 0:
            raise err(count, f"{f.name}'s count is not negative")
        return VoidT()
    if f.name in SIZE_METHODS and not e.args:  # of any type with a size (spec 9)
        return IntT()
    raise err(f, f"a value of type {base} has no method '{f.name}'")


def _extern_method(ck: Checker, t: ExternT, f: ast.Member, e: ast.Call) -> Type | None:
    decl = t.decl
    methods = [m for m in getattr(decl, "methods", []) if m.name == f.name
               and m.return_type is not None]
    if not methods:
        raise err(f, f"extern {t.name} has no method '{f.name}'")
    m = _overload(ck, methods, e, f"{t.name}.{f.name}")
    bound = {n: a for n, a in zip(getattr(decl, "type_params", []), t.args)}
    scope = _generic_scope(ck.res.root, m.type_params, e, ck, bound)
    ptypes = [ck.res.resolve(p.type, scope) for p in m.params]
    _bind(ck, m.params, e, ptypes, f"{t.name}.{f.name}")
    ck.facts.extern_calls.append((e, m, ptypes, ck.res.resolve(m.return_type, scope),
                                  _names_unseen(ck, m, [*m.type_params,
                                                        *getattr(decl, "type_params", [])])))
    if len(e.args) < len(m.params):
        ck.facts.optional_left_out.append((e, f"{t.name}.{f.name}"))
    if t.name == "packet_out" and f.name == "emit" and e.args:
        et = known(ck.facts.types.get(id(e.args[0].value)))
        if et is not None and not _emittable(et):
            raise err(e.args[0].value, f"emit takes a header, a header stack or union, or a "
                                       f"struct of those, not a value of type {et}")
    if t.name == "packet_in" and f.name == "lookahead" and e.type_args:
        la = ck.res.resolve(e.type_args[0], ck.scope)
        if _has_varbit(known(la)):
            raise err(e, f"lookahead<{la}>: its type must have a fixed width (no varbit)")
    if t.name == "packet_in" and f.name == "extract" and e.args:
        ht = known(ck.facts.types.get(id(e.args[0].value)))
        if ht is not None and not isinstance(ht, HeaderT | DontCareT):
            raise err(e.args[0].value, f"extract takes a header, not a value of type {ht}")
        if isinstance(ht, HeaderT) and sum(isinstance(strip(ft), VarbitT)
                                           for _, ft in ht.fields) > 1:
            raise err(e.args[0].value, f"header {ht.name} has more than one varbit field, so "
                                       "it cannot be extracted")
        if isinstance(ht, HeaderT):
            ck.facts.extracts.append((e, ht))
    if t.name == "direct_meter" and f.name == "read" and isinstance(f.expr, ast.Name):
        ent = ck.facts.symbols.get(id(f.expr))
        if ent is not None and ent.kind == INSTANCE:
            ck.facts.meters_read[id(ent)] = ent
    rt = ck.res.resolve(m.return_type, scope)
    return rt if known(rt) is not None or isinstance(strip(rt), BitT) else None


def _has_varbit(t: Type | None) -> bool:
    if isinstance(t, VarbitT):
        return True
    if isinstance(t, StructLikeT):
        return any(_has_varbit(known(ft)) for _, ft in t.fields)
    return isinstance(t, StackT) and _has_varbit(known(t.elem))


def _emittable(t: Type) -> bool:
    """What a deparser emits (spec 16.1; p4c also takes lists and tuples)."""
    if isinstance(t, HeaderT | UnionT | ListT | TupleT):
        return True
    if isinstance(t, StackT):
        return _emittable(known(t.elem) or t.elem)
    if isinstance(t, StructLikeT):
        return all(known(ft) is None or _emittable(known(ft)) for _, ft in t.fields)
    return False


bind_arguments = _bind
