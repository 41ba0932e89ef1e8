"""The checking pass: declarations in order, each body checked where it
is declared, so a name is visible only after its declaration (spec 6.9)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from common.errors import P4UnsupportedError
from dataplane.compiler.check.blocks import BlockRules
from dataplane.compiler.check.calls import constructor_args
from dataplane.compiler.check.decls import DeclRules
from dataplane.compiler.check.env import (
    ACTION,
    CONST,
    EXTERN_FUNCTION,
    FUNCTION,
    INSTANCE,
    TABLE,
    TYPE,
    VALUE_SET,
    VAR,
    Entity,
    Facts,
    Scope,
)
from dataplane.compiler.check.exprs import SIZE_METHODS, ExprRules, err
from dataplane.compiler.check.packages import check_package
from dataplane.compiler.check.stmts import Context, StmtRules
from dataplane.compiler.check.tables import TableRules
from dataplane.compiler.check.target import check_target
from dataplane.compiler.check.typeref import TypeResolver, known
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.types import (
    BitT,
    BlockT,
    BoolT,
    DontCareT,
    EnumT,
    ErrorT,
    ExternT,
    HeaderT,
    IntT,
    ListT,
    MatchKindT,
    NewT,
    StackT,
    StringT,
    StructLikeT,
    StructT,
    TupleT,
    Type,
    TypeVarT,
    UnionT,
    VarbitT,
    VoidT,
    strip,
)


def check_program(program: ast.Program) -> Facts:
    """Resolve and type-check ``program``; raise its first error (located),
    else return what was found out about its nodes."""
    return checked(program).facts


def checked(program: ast.Program) -> Checker:
    """``check_program``'s checker itself, for a reader of its resolved
    scope (the types it declared) as well as its facts."""
    checker = Checker(program)
    checker.run()
    check_target(program, checker)
    return checker


class Checker(ExprRules, StmtRules, TableRules, DeclRules, BlockRules):
    def __init__(self, program: ast.Program) -> None:
        self.program = program
        self.error = ErrorT([m for d in program.decls if isinstance(d, ast.ErrorDecl)
                             for m in d.members])
        self.res = TypeResolver(self.error)
        self.scope = self.res.root
        self.facts = Facts()
        self.ctx = Context("top")
        self.main: ast.Instantiation | None = None
        self.packages: list[ast.Instantiation] = []  # every package instance, in order
        self.block: ast.Decl | None = None  # the parser or control being checked
        self.bound: dict[str, Type] = {}
        self.specialized: set[tuple] = set()
        self.generic_depth = 0

    @contextmanager
    def nested(self, ctx: Context | None = None) -> Iterator[Scope]:
        saved = self.scope, self.ctx
        self.scope = self.scope.child()
        if ctx is not None:
            self.ctx = ctx
        try:
            yield self.scope
        finally:
            self.scope, self.ctx = saved

    def run(self) -> None:
        root = self.res.root
        root.names["error"] = Entity(TYPE, None, self.error)
        errors = [d for d in self.program.decls if isinstance(d, ast.ErrorDecl)]
        self.distinct_members(errors[-1] if errors else self.program,
                              [m for d in errors for m in d.members], "error")
        for d in self.program.decls:
            self.declare(d, root)
        self.main_is_a_package()

    # -------------------------------------------------------- declarations

    def declare(self, d: ast.Decl, scope: Scope) -> None:
        fn = getattr(self, "d_" + type(d).__name__, None)
        if fn is None:
            return
        saved = self.scope
        self.scope = scope
        try:
            fn(d, scope)
        finally:
            self.scope = saved

    def d_ErrorDecl(self, d: ast.ErrorDecl, scope: Scope) -> None:  # noqa: N802
        pass  # collected up front: ``error`` is one program-wide type

    def d_MatchKindDecl(self, d: ast.MatchKindDecl, scope: Scope) -> None:  # noqa: N802
        for m in d.members:
            scope.declare(m, Entity(CONST, d, MatchKindT(), m), d)

    def d_ConstDecl(self, d: ast.ConstDecl, scope: Scope) -> None:  # noqa: N802
        self.declare_const(d, scope)

    def declare_const(self, d: ast.ConstDecl, scope: Scope) -> None:
        t = self.res.resolve(d.type, scope)
        vt = self.expr(d.value, t)
        self.converts(vt, t, d.value)
        if not self.is_constant(d.value) and not _static_assert(d.value):
            raise err(d.value, f"initializer of constant '{d.name}' is not a compile-time "
                               "known value")
        if any(self.unfolded(n) for n in ast.walk(d.value)):
            raise P4UnsupportedError(f"unsupported construct: constant '{d.name}' computed "
                                     "from a field, an element or a size (well typed; code "
                                     "generation folds literals and operators only)",
                                     d.value.loc)
        scope.declare(d.name, Entity(CONST, d, t, self.res.const_value(d.value, scope)), d)

    def unfolded(self, n: ast.Node) -> bool:
        """A compile-time known part code generation does not fold: a field
        of a constant struct, an element of a constant tuple, a size."""
        if isinstance(n, ast.Member):
            return self.type_named(n.expr) is None and isinstance(
                known(self.facts.types.get(id(n.expr))), StructLikeT)
        if isinstance(n, ast.Index):
            return isinstance(known(self.facts.types.get(id(n.expr))), TupleT | ListT)
        return isinstance(n, ast.Call) and isinstance(n.func, ast.Member) and \
            n.func.name in SIZE_METHODS

    def declare_var(self, d: ast.VarDecl, scope: Scope) -> None:
        t = self.res.resolve(d.type, scope)
        if d.init is not None:
            it = self.expr(d.init, t)
            self.converts(it, t, d.init)
        scope.declare(d.name, Entity(VAR, d, t, writable=True), d)

    def d_VarDecl(self, d: ast.VarDecl, scope: Scope) -> None:  # noqa: N802
        self.declare_var(d, scope)

    def d_Typedef(self, d: ast.Typedef, scope: Scope) -> None:  # noqa: N802
        base = self.res.resolve(d.type, scope)
        if d.newtype:
            self.new_type_base(d, base)
        t = NewT(d.name, base) if d.newtype and base is not None else base
        scope.declare(d.name, Entity(TYPE, d, t), d)

    def d_HeaderDecl(self, d: ast.HeaderDecl | ast.StructDecl | ast.HeaderUnionDecl,  # noqa: N802
                     scope: Scope) -> None:
        cls = {ast.HeaderDecl: HeaderT, ast.StructDecl: StructT,
               ast.HeaderUnionDecl: UnionT}[type(d)]
        t = cls(d.name, [])
        inner = self.generic(scope, d.type_params)
        if d.type_params:
            self.res.generics[id(t)] = list(d.type_params)
        seen: set[str] = set()
        for f in d.fields:
            if f.name in seen:
                raise err(f, f"{d.name} has two fields named '{f.name}'")
            seen.add(f.name)
            ft = self.res.resolve(f.type, inner)
            problem = field_problem(cls, ft)
            if problem is not None:
                raise err(f, f"field '{f.name}' of {d.name} cannot have type {ft}: {problem}")
            t.fields.append((f.name, ft if ft is not None else TypeVarT("?")))
        scope.declare(d.name, Entity(TYPE, d, t), d)

    d_StructDecl = d_HeaderDecl
    d_HeaderUnionDecl = d_HeaderDecl

    def d_EnumDecl(self, d: ast.EnumDecl, scope: Scope) -> None:  # noqa: N802
        self.distinct_members(d, d.members, f"enum {d.name}")
        under = self.enum_underlying(d, self.res.resolve(d.underlying, scope)
                                     if d.underlying is not None else None)
        t = EnumT(d.name, list(d.members), under)
        for i, m in enumerate(d.members):
            v = d.values[i] if i < len(d.values) else None
            if v is not None:
                self.converts(self.expr(v, under), under, v)
                value = self.res.const_value(v, scope)
                t.values[m] = value if isinstance(value, int) else i
            else:
                t.values[m] = i
        scope.declare(d.name, Entity(TYPE, d, t), d)

    def d_ExternDecl(self, d: ast.ExternDecl, scope: Scope) -> None:  # noqa: N802
        scope.declare(d.name, Entity(TYPE, d, ExternT(d.name, d)), d)
        self.extern_methods(d, scope)

    def d_ParserTypeDecl(self, d: ast.Decl, scope: Scope) -> None:  # noqa: N802
        kind = {ast.ParserTypeDecl: "parser", ast.ControlTypeDecl: "control",
                ast.PackageTypeDecl: "package"}[type(d)]
        self.signature(d, scope)
        scope.declare(d.name, Entity(TYPE, d, BlockT(kind, d.name, d)), d)

    d_ControlTypeDecl = d_ParserTypeDecl
    d_PackageTypeDecl = d_ParserTypeDecl

    def d_ExternFunctionDecl(self, d: ast.ExternFunctionDecl,  # noqa: N802
                             scope: Scope) -> None:
        self.signature(d, scope)
        scope.declare(d.name, Entity(EXTERN_FUNCTION, d, overloads=[d], scope=scope), d)

    def generic(self, scope: Scope, type_params: list[str]) -> Scope:
        if not type_params:
            return scope
        inner = scope.child()
        for n in type_params:
            inner.names[n] = Entity(TYPE, None, self.bound.get(n) or TypeVarT(n))
        return inner

    def params(self, params: list[ast.Param], into: Scope, read_only_plain: bool,
               types_from: Scope | None = None) -> list[Type | None]:
        """Bind parameters in ``into``: out/inout ones are writable; in
        ones, and directionless ones where ``read_only_plain``, are not."""
        out = []
        for p in params:
            t = self.res.resolve(p.type, types_from or into)
            writable = p.direction in ("out", "inout") or (not p.direction
                                                           and not read_only_plain)
            into.declare(p.name, Entity(VAR, p, t, writable=writable), p)
            out.append(t)
        return out

    def d_FunctionDecl(self, d: ast.FunctionDecl, scope: Scope) -> None:  # noqa: N802
        self.signature(d, scope)
        inner = self.generic(scope, d.type_params)
        ret = self.res.resolve(d.return_type, inner)
        ent = Entity(FUNCTION, d, ret, scope=scope)
        with self.nested(Context("function", ret)) as body:
            body.parent = inner
            ent.params = self.params(d.params, body, read_only_plain=True)
            with self.generic_body(d):
                self.s_Block(d.body)  # the body may shadow a parameter, as in p4c
        scope.declare(d.name, ent, d)  # after the body: no recursion (spec 10)

    def specialize(self, ent: Entity, bindings: dict[str, Type]) -> Type | None:
        """Check a generic function's body once more for one call, its type
        variables bound to the arguments' types; returns the call's type.
        What is found there belongs to this call only, so it is kept apart
        from ``Facts`` (code generation types each call itself)."""
        decl = ent.decl
        if any(known(bindings.get(n)) is None for n in decl.type_params):
            return None
        scope = (ent.scope or self.res.root).child()
        for n in decl.type_params:
            scope.names[n] = Entity(TYPE, None, bindings[n])
        ret = self.res.resolve(decl.return_type, scope)
        shared, self.facts = self.facts, Facts()
        try:
            with self.nested(Context("function", ret)) as body:
                body.parent = scope
                self.params(decl.params, body, read_only_plain=True)
                self.s_Block(decl.body)
            shared.extracts += self.facts.extracts
            shared.hash_algorithms += self.facts.hash_algorithms
        finally:
            self.facts = shared
        return ret

    def d_ActionDecl(self, d: ast.ActionDecl, scope: Scope) -> None:  # noqa: N802
        self.signature(d, scope)
        ent = Entity(ACTION, d, scope=scope)
        with self.nested(Context("action")) as body:
            ent.params = self.params(d.params, body, read_only_plain=True)
            self.s_Block(d.body)
        scope.declare(d.name, ent, d)

    def d_Instantiation(self, d: ast.Instantiation, scope: Scope) -> None:  # noqa: N802
        t = self.res.resolve(d.type, scope)
        k = known(t)
        bindings: dict[str, Type] = {}
        if isinstance(k, ExternT):
            constructor_args(self, d, k)
        elif isinstance(k, BlockT) and k.kind != "package":
            bindings = self.block_instance(d, k)
        else:
            for a in d.args:
                self.expr(a.value)
        self.compile_time_arguments(d)
        if isinstance(k, BlockT) and k.decl is self.block and scope is not self.res.root:
            raise err(d, f"{k.kind} {k.name} cannot instantiate itself")
        if isinstance(k, BlockT) and k.kind in ("parser", "control") and \
                self.ctx.kind in ("parser", "control") and k.kind != self.ctx.kind:
            raise err(d, f"{k.kind} {k.name} cannot be instantiated in a {self.ctx.kind} "
                         "(a parser holds parsers, a control controls)")
        if isinstance(k, BlockT) and k.kind == "package":
            if scope is not self.res.root:
                raise err(d, "a package is instantiated only at the top level")
            self.main = d if d.name == "main" else self.main
            self.packages.append(d)
            check_package(self, d, k)
        elif isinstance(k, BlockT) and scope is self.res.root:
            raise err(d, f"{k.kind} {k.name} cannot be instantiated at the top level (only "
                         "externs and packages are)")
        elif k is not None and not isinstance(k, BlockT | ExternT):
            raise err(d, f"cannot instantiate {t}: not an extern, parser, control or package")
        scope.declare(d.name, Entity(INSTANCE, d, t, bindings or None), d)

    def d_ValueSetDecl(self, d: ast.ValueSetDecl, scope: Scope) -> None:  # noqa: N802
        t = self.res.resolve(d.type, scope)
        k = known(t)
        if k is not None and not isinstance(k, BitT | BoolT | EnumT | StructT | TupleT):
            raise err(d, f"value_set<{t}>: the elements are bit-strings, bools, enums, "
                         "structs or tuples")
        st = known(self.expr(d.size))
        if st is not None and (not isinstance(st, BitT | IntT) or not self.is_constant(d.size)):
            raise err(d.size, "a value_set's size is a compile-time known integer")
        scope.declare(d.name, Entity(VALUE_SET, d, t), d)

    def d_TableDecl(self, d: ast.TableDecl, scope: Scope) -> None:  # noqa: N802
        self.table(d)
        scope.declare(d.name, Entity(TABLE, d), d)

    # -------------------------------------------------------------- blocks

    def block_scope(self, d: ast.ParserDecl | ast.ControlDecl, scope: Scope) -> Scope:
        kind = "parser" if isinstance(d, ast.ParserDecl) else "control"
        self.signature(d, scope)
        scope.declare(d.name, Entity(TYPE, d, BlockT(kind, d.name, d)), d)
        self.block = d
        inner = self.generic(scope, d.type_params).child()
        self.params(d.params, inner, read_only_plain=True)
        for p in d.ctor_params:
            t = self.res.resolve(p.type, inner)
            inner.declare(p.name, Entity(CONST if not isinstance(known(t), ExternT) else
                                         INSTANCE, p, t), p)
        return inner.child()

    @contextmanager
    def generic_body(self, d: ast.Decl) -> Iterator[None]:
        """Checking a generic declaration as written (not for an instance),
        which code generation never generates as such."""
        generic = bool(getattr(d, "type_params", None)) and not self.bound
        self.generic_depth += generic
        try:
            yield
        finally:
            self.generic_depth -= generic

    def d_ControlDecl(self, d: ast.ControlDecl, scope: Scope) -> None:  # noqa: N802
        inner = self.block_scope(d, scope)
        saved = self.scope, self.ctx
        self.scope, self.ctx = inner, Context("control")
        try:
            with self.generic_body(d):
                for local in d.locals:
                    self.declare(local, inner)
                with self.nested():
                    self.stmts(d.body.stmts)
        finally:
            self.scope, self.ctx = saved

    def d_ParserDecl(self, d: ast.ParserDecl, scope: Scope) -> None:  # noqa: N802
        inner = self.block_scope(d, scope)
        states = {}
        for st in d.states:
            if st.name in states:
                raise err(st, f"parser {d.name} has two states named '{st.name}'")
            if st.name in ("accept", "reject"):
                raise err(st, f"'{st.name}' is a built-in state; it cannot be declared")
            states[st.name] = st
        if "start" not in states:
            raise err(d, f"parser '{d.name}' has no 'start' state")
        if not _ends(states):
            raise err(d, f"parser {d.name} never reaches the accept or reject state")
        saved = self.scope, self.ctx
        self.scope, self.ctx = inner, Context("parser", states=states)
        try:
            with self.generic_body(d):
                for local in d.locals:
                    self.declare(local, inner)
                for st in d.states:
                    with self.nested():
                        self.stmts(st.stmts)
                        self.transition(st.transition)
        finally:
            self.scope, self.ctx = saved


def _ends(states: dict[str, ast.ParserState]) -> bool:
    """Whether some path from ``start`` reaches ``accept`` or ``reject``
    (a state without a transition goes to reject), as p4c requires."""
    seen, todo = set(), ["start"]
    while todo:
        name = todo.pop()
        if name in ("accept", "reject"):
            return True
        st = states.get(name)
        if st is None:
            return True  # no such state: the transition's own rule reports it
        if name in seen:
            continue
        seen.add(name)
        if st.transition is None:
            return True
        todo += [c.state for c in st.transition.cases]
    return False


def field_problem(cls: type, ft: Type | None) -> str | None:
    """Why a field of type ``ft`` may not stand in a header (bit-strings,
    bools, serializable enums and structs of those), a union (headers) or a
    struct (spec 7.2.2, 7.2.5, 7.2.6 and 7.2.9), or None."""
    k = known(ft)
    if k is None:
        return None
    if cls is HeaderT:
        return None if _bits_only(k) or isinstance(k, VarbitT) else \
            "a header holds bit<W>, int<W>, bool, varbit, serializable enums and structs of those"
    if cls is UnionT:
        return None if isinstance(k, HeaderT) else "a header union holds headers only"
    bad = (IntT, StringT, VoidT, ExternT, BlockT, ListT, DontCareT)
    return "not a type a struct may hold" if isinstance(k, bad) else None


def _bits_only(t: Type) -> bool:
    while isinstance(t, StackT):
        t = strip(t.elem)
    if isinstance(t, BitT | BoolT) or (isinstance(t, EnumT) and t.underlying is not None):
        return True
    return isinstance(t, StructT) and all(known(ft) is None or _bits_only(known(ft))
                                          for _, ft in t.fields)


def _static_assert(e: ast.Expr) -> bool:
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and \
        e.func.name == "static_assert"


__all__ = ["Checker", "check_program", "Type"]
