"""P4-16 syntax tree -> generated Python for the v1model pipeline.

One pass resolves names, infers widths, folds constants and writes Python
source: one function per parser state, action, function, table and control
instance. Per-packet state is a flat slot list ``s`` (see ``types.slots``);
every field access becomes a constant list index and every operation a
masked integer expression, so no syntax tree is walked per packet.

The generated module defines ``make(X)``; each switch calls it once with its
own runtime state ``X`` and gets closures bound to its tables and externs,
while the code objects stay shared between switches running the program.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from common.errors import P4SemanticError, P4UnsupportedError
from dataplane.compiler.check import names
from dataplane.compiler.check.env import Facts
from dataplane.compiler.check.target import package_args_in_order
from dataplane.compiler.check.typeref import known
from dataplane.compiler.codegen.calls import CallMixin
from dataplane.compiler.codegen.exprs import ExprMixin
from dataplane.compiler.codegen.externs import ExternMixin
from dataplane.compiler.codegen.field_lists import FieldListMixin
from dataplane.compiler.codegen.naming import ident
from dataplane.compiler.codegen.packet_io import PacketIOMixin
from dataplane.compiler.codegen.parser_states import live_states, merge_states
from dataplane.compiler.codegen.stackmarks import long_stacks, mark_stack_writes
from dataplane.compiler.codegen.stmts import StmtMixin
from dataplane.compiler.codegen.tables import TableMixin
from dataplane.compiler.codegen.values import LValue, Val, location
from dataplane.compiler.codegen.writer import Writer
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.scope import (
    ActionSym,
    BlockInstSym,
    ConstSym,
    ExternFuncSym,
    FuncSym,
    GenericTypeSym,
    InstanceSym,
    Scope,
    TableSym,
    TypeSym,
    VarSym,
)
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
    field_bits,
    slots,
    strip,
)
from dataplane.contract import HIDDEN_SLOTS, PAYLOAD
from dataplane.schema import ProgramSchema

V1_BLOCKS = ("parser", "verify", "ingress", "egress", "compute", "deparser")


@dataclass
class TableRuntime:
    """What a Switch needs to build one table's runtime state."""

    sym: TableSym
    info: Any  # schema.TableInfo
    const_entries: list[tuple[list[Any], int, tuple[int, ...], int]] = field(default_factory=list)
    default_action: int = 0
    default_args: tuple[int, ...] = ()
    key_widths: list[int] = field(default_factory=list)


@dataclass
class ExternRuntime:
    """One extern object instance: ``kind`` is the v1model extern name."""

    kind: str
    qname: str
    size: int = 0
    width: int = 0
    unit: str = ""
    signed: bool = False
    table: str | None = None
    ctor_args: tuple[Any, ...] = ()  # a user-declared extern's constructor arguments


@dataclass
class Layout:
    """Where the pipeline's top-level state lives in the slot list."""

    nslots: int = HIDDEN_SLOTS
    template: list[Any] = field(default_factory=list)
    headers: int = 0
    headers_type: Type | None = None
    headers_end: int = 0
    """The slot after the headers (the runtime's clones copy up to it)."""
    meta: int = 0
    meta_type: Type | None = None
    std: int = 0
    std_type: StructT | None = None
    std_fields: dict[str, int] = field(default_factory=dict)
    field_lists: dict[int, list[int]] = field(default_factory=dict)
    error_codes: dict[str, int] = field(default_factory=dict)
    # Long header stacks [lo, hi) and the slot marking a packet whose code
    # may have stored into one (-1: none; ``codegen.stackmarks``).
    stack_spans: list[tuple[int, int]] = field(default_factory=list)
    stack_mark: int = -1
    # Finished packet states, reset to ``template``, that every switch
    # running this layout may take for its next packet (``runtime.switch``).
    free_states: list[list[Any]] = field(default_factory=list, repr=False, compare=False)


@dataclass
class FuncCtx:
    """What the statement compiler needs to know about the enclosing
    generated function."""

    kind: str  # "action", "function", "control", "parser"
    return_type: Type | None = None
    loops: list[list[ast.Stmt]] = field(default_factory=list)
    prefix: str = ""  # control-plane name prefix ("ingress.")


class CodeGen(ExprMixin, StmtMixin, CallMixin, TableMixin, ExternMixin, FieldListMixin,
              PacketIOMixin):
    """Compiles one program. Use ``generate()`` once."""

    def __init__(self, program: ast.Program, facts: Facts | None = None,
                 copy_blocks: frozenset[str] = frozenset(), share_params: bool = True) -> None:
        self.program = program
        # Controls whose parameters are copied in and out even where they
        # could share the caller's variables (``CallMixin.shared_params``);
        # ``share_params=False``: every control's (the reference semantics,
        # for tests).
        self.copy_blocks = copy_blocks
        self.share_params = share_params
        self._shared_params: dict[Any, dict[str, int]] = {}
        self.facts = facts if facts is not None else Facts()
        self.root = Scope()
        self.scope = self.root
        self.layout = Layout(template=[0] * HIDDEN_SLOTS)
        self.layout.template[PAYLOAD] = b""
        self.schema = ProgramSchema()
        self.tables: list[TableRuntime] = []
        self.externs: list[ExternRuntime] = []
        self.action_syms: list[ActionSym] = []
        self.funcs: list[Writer] = []
        self.w = Writer(1)
        self.ctx = FuncCtx("control")
        self.error = ErrorT([])
        self._tmp = 0
        self._generated: dict[Any, Any] = {}
        self.blocks: dict[str, str] = {}
        self.empty_funcs: set[str] = set()  # generated functions that do nothing
        # Whether generated code reads the payload slot (a *_with_payload
        # checksum): the engine fills that slot only for such programs.
        self.reads_payload = False
        self.register_lists: set[int] = set()  # registers whose cells code indexes itself
        self.lpm1_tables: set[int] = set()  # tables of one lpm key field (LK, LF in make)
        self.digests: dict[str, int] = {}
        self.value_sets: list[Any] = []
        # Extern functions the program declares itself, bound to plugins.
        self.user_functions: dict[str, int] = {}
        # Each extern the program declares itself and uses: its kind
        # ("function" or "object") and where it is first used.
        self.user_externs: dict[str, tuple[str, Any]] = {}
        # struct formats of whole-header extracts and emits, and lengths of
        # all-zero lists for stack guards: one closure constant each.
        self.struct_formats: dict[str, int] = {}
        self.zero_lists: set[int] = set()
        # Bytes of all the headers the deparser stores byte by byte when
        # compiled: the size of the program's deparse buffer (_DB).
        self.store_bytes = 0
        # The extern instances each generated block was applied with.
        self._block_instances: dict[Any, dict[str, Any]] = {}
        self._type_cache: dict[int, Type] = {}

    # ---------------------------------------------------------------- utils

    def fresh(self, stem: str = "t") -> str:
        self._tmp += 1
        return f"_{stem}{self._tmp}"

    def word_local(self, code: str, stem: str = "wd") -> str:
        """A new local holding ``code``, declared an unsigned 64-bit machine
        word on the compiled fast path (Python ignores the declaration):
        the value must be within ``[0, 2**64)``. Also how a constant of 31
        bits or more stays in machine words, since Cython types such a
        literal as a Python int."""
        name = self.fresh(stem)
        self.w.ctypes[name] = "cython.ulonglong"
        self.w(f"{name} = {code}")
        return name

    def alloc(self, t: Type) -> int:
        base = self.layout.nslots
        n = slots(t)
        self.layout.nslots += n
        self.layout.template.extend([0] * n)
        spans = long_stacks(t, base)
        if spans:
            self.layout.stack_spans += spans
            if self.layout.stack_mark < 0:  # right after the variable: see stackmarks
                self.layout.stack_mark = self.alloc(BoolT())
        return base

    def checked_type(self, node: ast.Node) -> Type | None:
        """The type the checking pass gave ``node``, without typedefs; None
        where it could not know it (a generic body's, which each instance
        settles here) or the node is no value."""
        return known(self.facts.type_of(node))

    @staticmethod
    def internal(node: ast.Node, what: str) -> RuntimeError:
        """What the checking pass guarantees did not hold: a compiler bug,
        reported as an internal error naming the construct."""
        return RuntimeError(f"{node.loc}: {what}, which the checking pass should have refused")

    def type_rule(self, node: ast.Node, msg: str, *operands: ast.Node) -> Exception:
        """A rule the checking pass applies to every node it types: where it
        typed ``node`` and its ``operands``, failing here is a compiler bug
        (an internal error); elsewhere (a generic body, typed per instance
        only here) it is the program's error."""
        if self.checked_type(node) is not None and all(
                self.checked_type(o) is not None for o in operands):
            return self.internal(node, msg)
        return self.err(node, msg)

    def conversion_rule(self, node: ast.Node, msg: str) -> Exception:
        """Like ``type_rule`` for a value converted (or cast) to a type: the
        checker notes every conversion it checked between known types."""
        return self.assumed(node, msg, self.facts.converted)

    def lvalue_rule(self, node: ast.Node, msg: str) -> Exception:
        """Like ``type_rule`` for the target of an assignment or an out or
        inout argument the checker found writable."""
        return self.assumed(node, msg, self.facts.assignable)

    def assumed(self, node: ast.Node, msg: str, checked: set[int]) -> Exception:
        if id(node) in checked:
            return self.internal(node, msg)
        return self.err(node, msg)

    def err(self, node: ast.Node | None, msg: str) -> P4SemanticError:
        return P4SemanticError(msg, node.loc if node is not None else None)

    def unsupported(self, node: ast.Node | None, what: str) -> P4UnsupportedError:
        return P4UnsupportedError(
            f"unsupported construct: {what}", node.loc if node is not None else None
        )

    @contextmanager
    def function(self, header: str, ctx: FuncCtx, scope: Scope) -> Iterator[Writer]:
        """Open a new generated function; restores the caller's state."""
        saved = (self.w, self.ctx, self.scope)
        self.w = Writer(1)
        self.ctx = ctx
        self.scope = scope
        self.w(f"def {header}:")
        self.w.depth += 1
        mark = len(self.w.lines)
        try:
            yield self.w
            if len(self.w.lines) == mark:
                self.w("pass")
                self.empty_funcs.add(header.split("(", 1)[0])
            # The packet state is always a list: declared one, the compiled
            # fast path indexes it without checking its type at each access.
            if header.split("(", 1)[1].rstrip(")").split(", ")[0] == "s":
                self.w.ctypes["s"] = "list"
            self.funcs.append(self.w)
        finally:
            self.w, self.ctx, self.scope = saved

    @contextmanager
    def nested_scope(self) -> Iterator[Scope]:
        saved = self.scope
        self.scope = saved.child()
        try:
            yield self.scope
        finally:
            self.scope = saved

    # ---------------------------------------------------------- annotations

    annotation = staticmethod(names.annotation)
    anno_string = staticmethod(names.anno_string)

    @staticmethod
    def control_name(decl: ast.Decl, prefix: str) -> str:
        return names.control_name(decl, prefix)

    @staticmethod
    def anno_texts(annos: list[ast.Annotation]) -> list[str]:
        skip = {"name", "id", "tableonly", "defaultonly", "hidden", "match", "brief",
                "description", "field_list", "priority"}
        out = []
        for a in annos:
            if a.name in skip:
                continue
            out.append(f"@{a.name}" + (f"({a.body})" if a.body is not None else ""))
        return out

    # ---------------------------------------------------------------- types

    def resolve_type(self, ref: ast.TypeRef, scope: Scope | None = None) -> Type:
        scope = scope or self.scope
        if isinstance(ref, ast.BitType):
            w = self.const_int(ref.width, scope)
            if w <= 0 and not (w == 0 and not ref.signed):
                raise self.err(ref, f"invalid width {w}")
            return BitT(w, ref.signed)
        if isinstance(ref, ast.BoolType):
            return BoolT()
        if isinstance(ref, ast.IntType):
            return IntT()
        if isinstance(ref, ast.VarbitType):
            return VarbitT(self.const_int(ref.width, scope))
        if isinstance(ref, ast.StringType):
            return StringT()
        if isinstance(ref, ast.VoidType):
            return VoidT()
        if isinstance(ref, ast.DontCareType):
            return DontCareT()
        if isinstance(ref, ast.StackType):
            elem = self.resolve_type(ref.elem, scope)
            return StackT(elem, self.const_int(ref.size, scope))
        if isinstance(ref, ast.TupleType):
            return TupleT([self.resolve_type(e, scope) for e in ref.elems])
        if isinstance(ref, ast.SpecializedType):
            generic = (self.root if ref.base.absolute else scope).lookup(ref.base.name)
            if isinstance(generic, GenericTypeSym):
                return self.generic_instance(generic, ref, scope)
            base = self.resolve_type(ref.base, scope)
            args = [self.resolve_type(a, scope) for a in ref.args]
            if isinstance(base, ExternT):
                return ExternT(base.name, base.decl, args)
            if isinstance(base, BlockT):
                return base
            if ref.base.name == "tuple":
                return TupleT(args)
            raise self.unsupported(ref, f"generic type {ref.base.name}<...>")
        if isinstance(ref, ast.TypeName):
            if ref.name == "error":
                return self.error
            if ref.name == "match_kind":
                return MatchKindT()
            sym = (self.root if ref.absolute else scope).lookup(ref.name)
            if isinstance(sym, TypeSym):
                return sym.type
            if sym is None:
                raise self.err(ref, f"unknown type '{ref.name}'")
            raise self.err(ref, f"'{ref.name}' is not a type")
        raise self.unsupported(ref, type(ref).__name__)

    def struct_like(self, d: ast.HeaderDecl | ast.StructDecl | ast.HeaderUnionDecl, name: str,
                    scope: Scope) -> Type:
        cls = {ast.HeaderDecl: HeaderT, ast.StructDecl: StructT,
               ast.HeaderUnionDecl: UnionT}[type(d)]
        t = cls(name, [])
        for f in d.fields:
            t.fields.append((f.name, self.resolve_type(f.type, scope)))
            t.annotations[f.name] = f.annotations
        return t

    def generic_instance(self, sym: GenericTypeSym, ref: ast.SpecializedType,
                         scope: Scope) -> Type:
        """``S<A, ...>``: the generic declaration's fields with its type
        parameters bound (spec 7.2.12), one type per list of arguments, as
        p4c's front end specializes it."""
        d = sym.decl
        args = [self.resolve_type(a, scope) for a in ref.args]
        if len(args) != len(d.type_params):
            raise self.err(ref, f"{d.name} takes {len(d.type_params)} type argument(s), got "
                                f"{len(args)}")
        key = ", ".join(map(str, args))
        hit = sym.instances.get(key)
        if hit is not None:
            return hit
        bound = sym.scope.child()
        for name, t in zip(d.type_params, args):
            bound.names[name] = TypeSym(t)
        t = self.struct_like(d, f"{d.name}<{key}>", bound)
        sym.instances[key] = t
        return t

    def const_int(self, e: ast.Expr, scope: Scope | None = None) -> int:
        saved = self.scope
        if scope is not None:
            self.scope = scope
        try:
            v = self.ev(e)
        finally:
            self.scope = saved
        if not v.is_const or isinstance(v.const, bool):
            raise self.err(e, "expected a compile-time integer constant")
        return int(v.const)

    # ---------------------------------------------------------- declarations

    def declare_global(self, d: ast.Decl) -> None:
        root = self.root
        if isinstance(d, ast.ErrorDecl):
            for m in d.members:
                if m not in self.error.members:
                    self.error.members.append(m)
            root.names["error"] = TypeSym(self.error)
            return
        if isinstance(d, ast.MatchKindDecl):
            for m in d.members:
                root.names[m] = ConstSym(MatchKindT(), m)
            return
        if isinstance(d, ast.ExternFunctionDecl):
            sym = root.names.get(d.name)
            if isinstance(sym, ExternFuncSym):
                sym.overloads.append(d)
            else:
                root.names[d.name] = ExternFuncSym([d])
            return
        if isinstance(d, ast.ActionDecl):
            root.names[d.name] = ActionSym(d, self.control_name(d, ""), root)
            return
        if isinstance(d, ast.FunctionDecl):
            root.names[d.name] = FuncSym(d, root)
            return
        if isinstance(d, ast.Instantiation):
            t = self.resolve_type(d.type, root)
            if isinstance(t, BlockT) and t.kind == "package":
                root.names[d.name] = InstanceSym(t, d.name, d)
                self.main = d
                return
            if isinstance(t, BlockT):
                root.names[d.name] = BlockInstSym(t.decl, d.name, d.args, root)  # type: ignore[arg-type]
                return
            root.names[d.name] = self.instantiate_extern(d, t, "", root)
            return
        self.declare_local(d, root, "")

    def declare_local(self, d: ast.Decl, scope: Scope, prefix: str) -> None:
        """Declarations that may appear at top level or inside blocks."""
        if isinstance(d, ast.ConstDecl):
            t = self.resolve_type(d.type, scope)
            saved = self.scope
            self.scope = scope
            try:
                v = self.coerce(self.ev(d.value, t), t, d.value)
            finally:
                self.scope = saved
            if v.is_const:
                scope.names[d.name] = ConstSym(t, v.const)
            elif v.parts is not None and all(_is_literal(p) for p in v.parts):
                scope.names[d.name] = ConstSym(t, [eval(p) for p in v.parts])  # noqa: S307
            else:
                raise self.err(d.value, f"initializer of constant '{d.name}' is not constant")
            return
        if isinstance(d, ast.Typedef):
            base = self.resolve_type(d.type, scope)
            scope.names[d.name] = TypeSym(NewT(d.name, base) if d.newtype else base)
            return
        if isinstance(d, ast.HeaderDecl | ast.StructDecl | ast.HeaderUnionDecl):
            if d.type_params:
                scope.names[d.name] = GenericTypeSym(d, scope)
                return
            scope.names[d.name] = TypeSym(self.struct_like(d, d.name, scope))
            return
        if isinstance(d, ast.EnumDecl):
            under = self.resolve_type(d.underlying, scope) if d.underlying else None
            t = EnumT(d.name, list(d.members), under)  # type: ignore[arg-type]
            for i, m in enumerate(d.members):
                if under is not None and i < len(d.values) and d.values[i] is not None:
                    t.values[m] = self.const_int(d.values[i], scope) & under.mask  # type: ignore[arg-type,union-attr]
                else:
                    t.values[m] = i
            scope.names[d.name] = TypeSym(t)
            return
        if isinstance(d, ast.ExternDecl):
            scope.names[d.name] = TypeSym(ExternT(d.name, d))
            return
        if isinstance(d, ast.ParserTypeDecl):
            scope.names[d.name] = TypeSym(BlockT("parser", d.name, d))
            return
        if isinstance(d, ast.ControlTypeDecl):
            scope.names[d.name] = TypeSym(BlockT("control", d.name, d))
            return
        if isinstance(d, ast.PackageTypeDecl):
            scope.names[d.name] = TypeSym(BlockT("package", d.name, d))
            return
        if isinstance(d, ast.ParserDecl):
            scope.names[d.name] = TypeSym(BlockT("parser", d.name, d))
            return
        if isinstance(d, ast.ControlDecl):
            scope.names[d.name] = TypeSym(BlockT("control", d.name, d))
            return
        raise self.unsupported(d, f"declaration {type(d).__name__} here")

    # ------------------------------------------------------------ generation

    def generate(self) -> str:
        self.main: ast.Instantiation | None = None
        for d in self.program.decls:
            self.declare_global(d)
        self.layout.error_codes = {m: i for i, m in enumerate(self.error.members)}
        if self.main is None:
            self.check_blocks()
            return self.source()
        self.generate_pipeline(self.main)
        return mark_stack_writes(self.source(), self.layout.stack_spans, self.layout.stack_mark)

    def check_blocks(self) -> None:
        """A program with no ``main`` (a library of controls, or a front-end
        test) has nothing to run, but p4c still checks it: generate every
        top-level parser and control once, its parameters in storage of
        their own, so its bodies are checked as a pipeline's would be.
        Generic blocks and blocks whose constructor needs arguments are
        only declared, as p4c does not type them without an instance."""
        for d in self.program.decls:
            if not isinstance(d, ast.ParserDecl | ast.ControlDecl) or d.type_params:
                continue
            if any(p.default is None for p in d.ctor_params):
                continue
            bindings: dict[str, Any] = {}
            for p in d.params:
                t = self.resolve_type(p.type, self.root)
                external = isinstance(strip(t), ExternT)
                bindings[p.name] = VarSym(t, -1 if external else self.alloc(t))
            self.gen_block(d, d.name, bindings, [], self.root)

    def block_decl(self, arg: ast.Arg) -> tuple[ast.ParserDecl | ast.ControlDecl, list[ast.Arg]]:
        e = arg.value
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name):
            sym = self.root.lookup(e.func.name)
            if isinstance(sym, TypeSym) and isinstance(sym.type, BlockT):
                decl = sym.type.decl
                if isinstance(decl, ast.ParserDecl | ast.ControlDecl):
                    return decl, e.args
        if isinstance(e, ast.Name):
            sym = self.root.lookup(e.name)
            if isinstance(sym, BlockInstSym):
                return sym.decl, sym.ctor_args
        raise self.unsupported(e, "package argument that is not a parser or control instance")

    def generate_pipeline(self, main: ast.Instantiation) -> None:
        # The checker has established a V1Switch of six parser and control
        # instances with v1model's parameter counts and a headers type BMv2
        # can carry.
        t = self.resolve_type(main.type, self.root)
        assert isinstance(t, BlockT)
        args = package_args_in_order(main, t)
        decls = [self.block_decl(a) for a in args]
        parser = decls[0][0]
        pscope = self.root
        h_t = self.resolve_type(parser.params[1].type, pscope)
        m_t = self.resolve_type(parser.params[2].type, pscope)
        sm_t = self.resolve_type(parser.params[3].type, pscope)
        lay = self.layout
        lay.headers_type, lay.meta_type = h_t, m_t
        lay.headers = self.alloc(h_t)
        lay.headers_end = lay.headers + slots(h_t)
        if lay.stack_spans and lay.stack_mark != lay.headers + slots(h_t):
            # The engine's clones copy the mark with the headers (stackmarks).
            raise RuntimeError("a long stack was allocated before the headers: the stack mark "
                               "does not follow them")
        lay.meta = self.alloc(m_t)
        lay.std = self.alloc(sm_t)
        assert isinstance(strip(sm_t), StructT)
        lay.std_type = strip(sm_t)  # type: ignore[assignment]
        for fname, off in lay.std_type.offsets.items():  # type: ignore[union-attr]
            lay.std_fields[fname] = lay.std + off
        self._field_lists(m_t, lay.meta)
        phv = {"H": (h_t, lay.headers), "M": (m_t, lay.meta), "SM": (sm_t, lay.std)}
        roles = [["pkt", "H", "M", "SM"], ["H", "M"], ["H", "M", "SM"], ["H", "M", "SM"],
                 ["H", "M"], ["pkt", "H"]]
        for kind, (decl, cargs), role in zip(V1_BLOCKS, decls, roles):
            bindings: dict[str, Any] = {}
            for p, r in zip(decl.params, role):
                if r == "pkt":
                    bindings[p.name] = VarSym(self.resolve_type(p.type, self.root), -1)
                else:
                    pt, base = phv[r]
                    bindings[p.name] = VarSym(pt, base)
            qname = self.control_name(decl, "")
            self.blocks[kind] = self.gen_block(decl, qname, bindings, cargs, self.root)

    def _field_lists(self, t: Type, base: int) -> None:
        """Record ``@field_list(n)`` members of the user metadata."""
        t = strip(t)
        if not isinstance(t, StructT):
            return
        for fname, ft in t.fields:
            off = base + t.offsets[fname]
            for a in t.annotations.get(fname, []):
                if a.name == "field_list":
                    ids = [self.const_int(x, self.root) for x in a.args] if a.args else [
                        int(x) for x in (a.body or "").split(",") if x.strip()]
                    for i in ids:
                        self.layout.field_lists.setdefault(i, []).extend(
                            range(off, off + slots(ft)))
            if isinstance(strip(ft), StructT):
                self._field_lists(ft, off)

    # ------------------------------------------------------------- blocks

    def gen_block(self, decl: ast.ParserDecl | ast.ControlDecl, qname: str,
                  bindings: dict[str, Any], ctor_args: list[ast.Arg], site: Scope) -> str:
        """Generate a parser or control instance; returns its function name."""
        scope = self.root.child()
        for p, a in zip(decl.ctor_params, ctor_args):
            pt = self.resolve_type(p.type, scope)
            saved = self.scope
            self.scope = site
            try:
                v = self.ev(a.value, pt)
            finally:
                self.scope = saved
            if v.is_const:
                scope.names[p.name] = ConstSym(pt, v.const)
            elif isinstance(v, _InstanceVal):
                scope.names[p.name] = v.sym
            else:
                raise self.unsupported(a, "non-constant constructor argument")
        for p in decl.ctor_params[len(ctor_args):]:
            if p.default is None:
                raise self.err(decl, f"missing constructor argument '{p.name}'")
            pt = self.resolve_type(p.type, scope)
            scope.names[p.name] = ConstSym(pt, self.const_int(p.default, scope))
        scope.names.update(bindings)
        prefix = qname + "."
        if isinstance(decl, ast.ParserDecl):
            return self.gen_parser(decl, qname, scope, prefix)
        return self.gen_control(decl, qname, scope, prefix)

    def declare_block_locals(self, decl: ast.ParserDecl | ast.ControlDecl, scope: Scope,
                             prefix: str) -> list[ast.VarDecl]:
        """Bind a block's local declarations; returns variables whose
        initialisers run at the start of every apply."""
        inits: list[ast.VarDecl] = []
        for d in decl.locals:
            if isinstance(d, ast.VarDecl):
                t = self.resolve_type(d.type, scope)
                scope.names[d.name] = VarSym(t, self.alloc(t))
                inits.append(d)
            elif isinstance(d, ast.ActionDecl):
                scope.names[d.name] = ActionSym(d, self.control_name(d, prefix), scope,
                                                prefix=prefix)
            elif isinstance(d, ast.TableDecl):
                scope.names[d.name] = TableSym(d, self.control_name(d, prefix), scope)
            elif isinstance(d, ast.Instantiation):
                t = self.resolve_type(d.type, scope)
                if isinstance(t, BlockT):
                    if t.kind == "package":
                        raise self.unsupported(d, "package instance inside a block")
                    scope.names[d.name] = BlockInstSym(
                        t.decl, self.control_name(d, prefix), d.args, scope)  # type: ignore[arg-type]
                else:
                    scope.names[d.name] = self.instantiate_extern(d, t, prefix, scope)
            elif isinstance(d, ast.ValueSetDecl):
                scope.names[d.name] = self.declare_value_set(d, scope, prefix)
            elif isinstance(d, ast.FunctionDecl):
                scope.names[d.name] = FuncSym(d, scope)
            else:
                self.declare_local(d, scope, prefix)
        return inits

    def run_local_inits(self, inits: list[ast.VarDecl], scope: Scope) -> None:
        for d in inits:
            sym = scope.names[d.name]
            if d.init is not None:
                self.assign(LValue(sym.type, sym.base), d.init, d)
            else:
                self.invalidate_headers(sym.type, sym.base)

    def gen_control(self, decl: ast.ControlDecl, qname: str, scope: Scope, prefix: str) -> str:
        inits = self.declare_block_locals(decl, scope, prefix)
        name = f"c_{ident(qname)}_{len(self.funcs)}"
        with self.function(f"{name}(s)", FuncCtx("control", prefix=prefix), scope):
            self.run_local_inits(inits, scope)
            self.stmts(decl.body.stmts)
        return name

    def gen_parser(self, decl: ast.ParserDecl, qname: str, scope: Scope, prefix: str) -> str:
        from dataplane.compiler.frontend.scope import StateSym

        inits = self.declare_block_locals(decl, scope, prefix)
        base = f"p_{ident(qname)}_{len(self.funcs)}"
        states: dict[str, StateSym] = {}
        for st in decl.states:
            states[st.name] = StateSym(st, f"{base}_{ident(st.name)}")
            scope.names[st.name] = states[st.name]
        if "start" not in states:
            raise self.internal(decl, f"parser '{decl.name}' without a 'start' state")
        writers: dict[str, Writer] = {}
        for st in decl.states:
            with self.function(f"{states[st.name].func}(s, b)", FuncCtx("parser", prefix=prefix),
                               scope.child()):
                self.stmts(st.stmts)
                self.transition(st.transition, st)
            writers[states[st.name].func] = self.funcs[-1]
        merged = merge_states({name: w.lines[1:] for name, w in writers.items()})
        start = states["start"].func
        live = live_states(merged, start)
        # A merged state carries its temporaries into other functions: each
        # declares them all (the names are unique).
        ctypes = {k: v for w in writers.values() for k, v in w.ctypes.items()}
        for name, w in writers.items():
            w.lines[1:] = merged[name]
            w.ctypes.update(ctypes)
            if name not in live:  # merged into every state that leads to it
                self.funcs.remove(w)
        with self.function(f"{base}(s, b)", FuncCtx("parser", prefix=prefix), scope):
            if not live:
                self.w.ctypes.update(ctypes)
            self.run_local_inits(inits, scope)
            if live:
                self.w(f"st = {start}")
                with self.w.block("while st is not None"):
                    self.w("st = st(s, b)")
            else:  # every path merged: the parser is one function
                self.w.lines.extend(merged[start])
        return base

    # --------------------------------------------------------------- output

    def source(self) -> str:
        # Formats and zero lists are the program's, not a switch's: made
        # once here and shared by every switch that runs it.
        lines = []
        for fmt, k in self.struct_formats.items():
            lines.append(f"_S{k} = Struct({fmt!r})")
        for n in sorted(self.zero_lists):
            lines.append(f"_Z{n} = [0] * {n}")
        # The compiled deparser's headers, written one after another into
        # one buffer the program's switches share (the engine copies them
        # out with the payload at once): no bytes object per header.
        lines.append(f"_DB = bytearray({self.store_bytes})")
        lines.append("def make(X):")
        for i in range(len(self.tables)):
            lines.append(f"    T{i} = X.tables[{i}]")
            # A table's lookup routine is chosen once, when it is built:
            # bound here, a lookup is a call, not an attribute read and a call.
            lines.append(f"    L{i} = T{i}.lookup")
            # Its miss's [action, args], changed in place only (typed list).
            lines.append(f"    TD{i} = cython.declare(list, T{i}.default)")
            if i in self.lpm1_tables:  # its slots, changed in place only (typed)
                lines.append(f"    LK{i} = cython.declare(bytearray, T{i}._lpm_slot_keys)")
                lines.append(f"    LF{i} = cython.declare(list, T{i}._lpm_slot_found)")
        for i in range(len(self.externs)):
            lines.append(f"    E{i} = X.externs[{i}]")
        for i in sorted(self.register_lists):
            # A register's cells, only ever changed in place: compiled, the
            # cell is typed list, so indexing it is a C call, not a lookup
            # of the subscript on the object's type.
            lines.append(f"    RV{i} = cython.declare(list, E{i}.values)")
        for i in range(len(self.value_sets)):
            lines.append(f"    V{i} = X.value_sets[{i}]")
        for fname, k in self.user_functions.items():
            lines.append(f"    UF{k} = X.user_function({fname!r})")
        lines.append("    RAND = X.random")
        lines.append("    DIGEST = X.digest")
        lines.append("    LOG = X.log")
        lines.append("    NOW = X.now")
        lines.append("    OUT = X.out")
        lines.append("    DB = _DB")
        lines.append(f"    DBN = {self.store_bytes}")
        lines.append("    def DFLUSH(s):")
        lines.append("        OUT.append(bytes(DB[:s[0]]))")
        lines.append("        s[0] = 0")
        lines.append("        return 0")
        for k in self.struct_formats.values():
            lines.append(f"    SU{k} = _S{k}.unpack_from")
            lines.append(f"    SP{k} = _S{k}.pack")
        for n in sorted(self.zero_lists):
            lines.append(f"    Z{n} = _Z{n}")
        for w in self.funcs:
            ctypes = w.ctypes
            if "b" in ctypes and any("lambda" in line for line in w.lines[1:]):
                # A sub-parser's call reads the packet from a lambda, and
                # Cython cannot give a typed local to a nested function.
                ctypes = {k: v for k, v in ctypes.items() if k != "b"}
            if ctypes:
                decl = ", ".join(f"{k}={v}" for k, v in sorted(ctypes.items()))
                lines.append(f"    @cython.locals({decl})")
            lines.extend(w.lines)
        blocks = ", ".join(f"{k!r}: {v}" for k, v in [*self.blocks.items(), ("buffer", "DB")])
        lines.append(f"    return {{{blocks}}}")
        return "\n".join(lines) + "\n"


class _InstanceVal(Val):
    """A constructor argument that is an instance (extern or block)."""

    sym: Any = None


def _is_literal(code: str) -> bool:
    return code.lstrip("-").isdigit() or code in ("True", "False")


Gen = Callable[..., Val]
__all__ = ["CodeGen", "Layout", "TableRuntime", "ExternRuntime", "field_bits", "location",
           "HeaderT", "StackT", "TupleT", "StructLikeT", "TypeVarT", "UnionT"]
