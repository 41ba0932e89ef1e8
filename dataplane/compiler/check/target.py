"""What the v1model architecture and BMv2 ask of a well-typed program:
the ``V1Switch`` package and its blocks, the extern objects BMv2 has,
whole-byte headers, and what its back end accepts of tables. Checked after
the whole program has been typed, so a type error is reported first."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common.errors import P4SemanticError, P4UnsupportedError
from dataplane.compiler.check.env import ACTION, CONST, INSTANCE, TYPE, Entity
from dataplane.compiler.check.names import check_unique_names
from dataplane.compiler.check.typeref import known
from dataplane.compiler.frontend import ast
from dataplane.compiler.frontend.types import (
    BitT,
    BlockT,
    BoolT,
    EnumT,
    ExternT,
    HeaderT,
    StackT,
    StructLikeT,
    StructT,
    UnionT,
)
from dataplane.schema import MATCH_KINDS

if TYPE_CHECKING:
    from dataplane.compiler.check.checker import Checker

V1_EXTERNS = {"register", "counter", "direct_counter", "meter", "direct_meter",
              "action_profile", "action_selector", "packet_in", "packet_out"}
V1_FUNCTIONS = {"verify", "random", "digest", "mark_to_drop", "hash", "verify_checksum",
                "update_checksum", "verify_checksum_with_payload",
                "update_checksum_with_payload", "clone", "clone3", "resubmit",
                "resubmit_preserving_field_list", "recirculate",
                "recirculate_preserving_field_list", "clone_preserving_field_list",
                "truncate", "assert", "assume", "log_msg"}
"""The extern functions of core.p4 and v1model.p4, which BMv2 implements."""
V1_ROLES = ("parser", "verify", "ingress", "egress", "compute", "deparser")
V1_PARAMS = (4, 2, 3, 3, 2, 2)


def unsupported(node: Any, what: str) -> P4UnsupportedError:
    return P4UnsupportedError(f"unsupported construct: {what}", node.loc)


V1MODEL_VERSIONS = (20180101, 20200408)


def check_target(program: ast.Program, ck: Checker) -> None:
    _v1model_version(ck)
    for node, t in ck.facts.extracts:
        if isinstance(t, HeaderT) and t.bit_width % 8:
            raise unsupported(node, f"header {t.name} of {t.bit_width} bits (not a whole "
                                    "number of bytes)")
    for d in _instantiations(program):
        _extern_object(d, ck)
    for d in program.decls:
        if isinstance(d, ast.ExternFunctionDecl) and d.name in V1_FUNCTIONS and \
                not _from_builtin(d):
            raise unsupported(d, f"the program's own extern function '{d.name}' (BMv2 "
                                 "has one of that name)")
    for call, decl, ptypes, rt, generic in ck.facts.extern_calls:
        if not _from_builtin(decl) and generic:
            raise unsupported(call, f"a call of the program's own generic extern {decl.name} "
                                    "(its parameter types name type parameters)")
        if not _from_builtin(decl) and _user_extern_results_with_headers(decl, ptypes, rt):
            raise unsupported(call, "a result holding headers from the program's own extern "
                                    f"{decl.name} (an out or inout argument, or the value "
                                    "returned)")
    for call, method in ck.facts.optional_left_out:
        decl = _extern_of(call, ck)
        if decl is not None and not _from_builtin(decl):
            raise unsupported(call, f"a call of the program's own extern method {method} "
                                    "that leaves out an optional parameter")
    for algo, name in ck.facts.hash_algorithms:
        if name == "random":
            raise unsupported(algo, "HashAlgorithm.random (BMv2 refuses to load it)")
    selectors: dict[int, tuple[Any, ast.TableDecl]] = {}
    for table in _tables(program):
        _table_rules(table, ck)
        if id(table) in ck.facts.applied_tables:
            _selector_input(table, ck, selectors)
    _direct_meters_owned(program, ck)
    pipeline = _pipeline(ck)
    if pipeline is not None:
        _v1switch(pipeline, ck)


def _pipeline(ck: Checker) -> ast.Instantiation | None:
    """The package instance BMv2 runs: ``main``. Code generation runs the
    last package instance, so a program with another one after ``main``,
    or with package instances and no ``main``, is not run."""
    if not ck.packages:
        return None
    last = ck.packages[-1]
    if ck.main is not None and last is ck.main:
        return ck.main
    what = "a package instance after 'main'" if ck.main is not None else \
        f"package instance '{last.name}' with no 'main'"
    raise unsupported(last, what)


def _direct_meters_owned(program: ast.Program, ck: Checker) -> None:
    """A direct meter an action reads belongs to a table through that
    table's ``meters`` property (p4c's BMv2 back end)."""
    owned = {id(ck.facts.symbols.get(id(p.value))) for t in _tables(program)
             for p in t.properties if p.name == "meters"}
    for key, ent in ck.facts.meters_read.items():
        if key not in owned:
            raise P4SemanticError(f"direct meter {ent.decl.name} is read, but no table owns "
                                  f"it: give a table 'meters = {ent.decl.name};'", ent.decl.loc)


def _v1model_version(ck: Checker) -> None:
    """``V1MODEL_VERSION`` names a v1model.p4 generation p4c knows."""
    ent = ck.res.root.lookup("__v1model_version")
    if ent is None or ent.kind != CONST or not isinstance(ent.value, int):
        return
    first, last = V1MODEL_VERSIONS
    if ent.value < 0:
        raise P4SemanticError(f"V1MODEL_VERSION is {ent.value}; a v1model version is a "
                              "non-negative number", ent.decl.value.loc)
    if not first <= ent.value <= last:
        raise P4SemanticError(f"unknown v1model version {ent.value}: the versions are "
                              f"{first} to {last}", ent.decl.value.loc)


def _instantiations(program: ast.Program) -> list[ast.Instantiation]:
    out = []
    for d in program.decls:
        if isinstance(d, ast.Instantiation):
            out.append(d)
        if isinstance(d, ast.ControlDecl | ast.ParserDecl):
            out += [x for x in d.locals if isinstance(x, ast.Instantiation)]
    return out


def _tables(program: ast.Program) -> list[ast.TableDecl]:
    return [x for d in program.decls if isinstance(d, ast.ControlDecl)
            for x in d.locals if isinstance(x, ast.TableDecl)]


def _extern_object(d: ast.Instantiation, ck: Checker) -> None:
    t = _instance_type(d, ck)
    if isinstance(t, BlockT) and getattr(t.decl, "type_params", None) and t.kind != "package":
        raise unsupported(d, f"an instance of the generic {t.kind} {t.name} (a {t.kind} "
                             "with type parameters)")
    if isinstance(t, ExternT) and t.name == "register" and isinstance(d.type, ast.SpecializedType):
        cell = _cell_type(d.type, ck)
        if cell is not None and not isinstance(cell, BitT | BoolT | EnumT):
            raise unsupported(d, f"a register of {cell} (BMv2 registers hold bit-strings)")
    if not isinstance(t, ExternT) or t.name in V1_EXTERNS:
        return
    if not _from_builtin(t.decl):
        return  # a program's own extern: bound to a plugin at run time
    raise unsupported(d, f"extern object '{t.name}'")


def _cell_type(ref: ast.SpecializedType, ck: Checker) -> Any:
    """A register's cell type, when known outside any generic block."""
    try:
        return known(ck.res.resolve(ref.args[0], ck.res.root)) if ref.args else None
    except P4SemanticError:
        return None  # a type variable of the enclosing block


def _user_extern_results_with_headers(decl: Any, ptypes: list, rt: Any) -> bool:
    """Whether a call of a program's own extern returns, or writes through
    an out/inout argument, a value that holds a header (code generation
    passes such values back only as bit-strings and structs of them)."""
    written = [t for p, t in zip(decl.params, ptypes) if p.direction in ("out", "inout")]
    return any(_holds_header(known(t)) for t in [*written, rt] if t is not None)


def _holds_header(t: Any) -> bool:
    if isinstance(t, HeaderT | UnionT | StackT):
        return True
    return isinstance(t, StructLikeT) and any(_holds_header(known(ft)) for _, ft in t.fields)


def _extern_of(call: ast.Call, ck: Checker) -> Any:
    """The declaration of the extern whose method ``call`` calls."""
    f = call.func
    t = known(ck.facts.types.get(id(f.expr))) if isinstance(f, ast.Member) else None
    return t.decl if isinstance(t, ExternT) else None


def _instance_type(d: ast.Instantiation, ck: Checker) -> Any:
    base = d.type.base if isinstance(d.type, ast.SpecializedType) else d.type
    if not isinstance(base, ast.TypeName):
        return None
    ent = ck.res.root.lookup(base.name)
    if ent is None or ent.kind != TYPE:
        return None
    return known(ent.type)


def _from_builtin(decl: Any) -> bool:
    from dataplane.compiler.frontend.preprocess import builtin_include_dir

    file = getattr(getattr(decl, "loc", None), "file", None)
    if not file:
        return True
    try:
        return Path(file).resolve().parent == builtin_include_dir()
    except OSError:
        return False


def _table_rules(d: ast.TableDecl, ck: Checker) -> None:
    for ref in d.actions if _runs_on_v1switch(ck) else []:
        ent = ck.facts.symbols.get(id(ref.name))
        if ent is not None and ent.kind == ACTION:
            _control_plane_params(ent)
    for k in d.keys:
        if k.match_kind not in MATCH_KINDS:
            raise unsupported(k, f"match kind '{k.match_kind}' (BMv2 matches "
                                 f"{', '.join(MATCH_KINDS)})")
    if d.entries is not None and any(p.name == "implementation" for p in d.properties):
        raise unsupported(d, "entries in a table with an implementation (BMv2 takes entries "
                             "in simple tables only)")
    lpm = [k for k in d.keys if k.match_kind == "lpm"]
    if len(lpm) > 1:
        raise unsupported(d, f"table '{d.name}' with {len(lpm)} lpm keys; BMv2 matches at "
                             "most one by prefix: make the others ternary")
    for p in d.properties:
        want = {"counters": "direct_counter", "meters": "direct_meter"}.get(p.name)
        ent = ck.facts.symbols.get(id(p.value))
        if want is None or ent is None or ent.kind != INSTANCE:
            continue
        t = known(ent.type)
        got = t.name if isinstance(t, ExternT) else str(t)
        if got != want:
            raise P4SemanticError(f"table '{d.name}': '{p.name} = {ent.decl.name}' needs a "
                                  f"{want}, and '{ent.decl.name}' is a {got}", p.loc)
        if want == "direct_meter" and id(ent) not in ck.facts.meters_read:
            raise unsupported(p, f"table '{d.name}' with a direct meter '{ent.decl.name}' that "
                                 "no action reads; BMv2 needs the field the color is written "
                                 "to: call read() on the meter in the table's actions")


def _runs_on_v1switch(ck: Checker) -> bool:
    ent = ck.res.root.lookup(ck.main.name) if ck.main is not None else None
    t = known(ent.type) if ent is not None else None
    return isinstance(t, BlockT) and t.name == "V1Switch"


def _control_plane_params(ent: Entity) -> None:
    """A table's action takes its directionless parameters from the control
    plane, which sends bit-strings: bit<W>, int<W>, bool, a new type or a
    serializable enum (p4c's P4Runtime rule, for v1model programs)."""
    for p, pt in zip(ent.decl.params, ent.params):
        k = known(pt)
        if p.direction or k is None:
            continue
        if not isinstance(k, BitT | BoolT) and not (isinstance(k, EnumT) and k.underlying):
            raise P4SemanticError(f"action parameter '{p.name}' of type {pt} is set by the "
                                  "control plane, which gives bit<W>, int<W>, bool, new types "
                                  "and serializable enums only", p.loc)


def _selector_input(d: ast.TableDecl, ck: Checker,
                    seen: dict[int, tuple[Any, ast.TableDecl]]) -> None:
    """Tables sharing an action selector must hash the same key
    expressions: BMv2 keeps the selector's input with the selector."""
    prop = next((p for p in d.properties if p.name == "implementation"), None)
    ent = ck.facts.symbols.get(id(prop.value)) if prop is not None else None
    t = known(ent.type) if ent is not None else None
    if not isinstance(t, ExternT) or t.name != "action_selector":
        return
    shape = tuple(_shape(k.expr) for k in d.keys if k.match_kind == "selector")
    first = seen.setdefault(id(ent), (shape, d))
    if first[0] != shape:
        raise P4SemanticError(f"action selector {ent.decl.name} is used by multiple tables "
                              f"with different selector inputs ({first[1].name} and {d.name}); "
                              "BMv2 keeps one input per selector", d.loc)


def _shape(node: Any) -> Any:
    """An expression's structure without its location, to compare two."""
    if isinstance(node, ast.Node):
        return (type(node).__name__, *(_shape(getattr(node, f.name)) for f in fields(node)
                                       if f.name != "loc"))
    if isinstance(node, list):
        return tuple(_shape(x) for x in node)
    return node


def _v1switch(main: ast.Instantiation, ck: Checker) -> None:
    ent = ck.res.root.lookup(main.name)
    t = known(ent.type) if ent is not None else None
    if not isinstance(t, BlockT):
        return
    if t.name != "V1Switch":
        raise unsupported(main, f"package '{t.name}' (only V1Switch is supported)")
    if len(main.args) != 6:
        raise P4SemanticError("V1Switch takes 6 arguments", main.loc)
    args = package_args_in_order(main, t)
    blocks = [_block(a, ck) for a in args]
    for decl, arg, want, role in zip(blocks, args, V1_PARAMS, V1_ROLES):
        if len(decl.params) != want:
            raise P4SemanticError(f"V1Switch's {role} block takes {want} parameters; "
                                  f"'{decl.name}' has {len(decl.params)}", arg.loc)
    parser = blocks[0]
    if not isinstance(parser, ast.ParserDecl):
        raise P4SemanticError("the first V1Switch argument must be a parser", args[0].loc)
    h = ck.res.resolve(parser.params[1].type, ck.res.root)
    hs = known(h)
    meta = ck.res.resolve(parser.params[2].type, ck.res.root)
    if known(meta) is not None and not isinstance(known(meta), StructT):
        raise P4SemanticError(f"V1Switch's user metadata type must be a struct, not {meta} "
                              "(p4c's BMv2 back end)", parser.params[2].loc)
    for fname, ft in getattr(hs, "fields", []):
        if not isinstance(known(ft), HeaderT | StackT | UnionT):
            raise unsupported(parser.params[1], f"headers type {h} with field '{fname}' of "
                                                f"type {ft} (BMv2 takes only headers, stacks "
                                                "and unions)")
    check_unique_names(ck, [(b, i) for i, b in enumerate(blocks)])


def package_args_in_order(main: ast.Instantiation, t: BlockT) -> list[ast.Arg]:
    """The package's arguments in parameter order: ``V1Switch(p = ...,
    ig = ..., ...)`` may name them in any order."""
    if not any(a.name for a in main.args):
        return main.args
    params = [p.name for p in getattr(t.decl, "params", [])]
    by_name: dict[str, ast.Arg] = {}
    for a in main.args:
        if a.name is None:
            raise P4SemanticError("arguments are all named or all positional", a.loc)
        if a.name not in params:
            raise P4SemanticError(f"{t.name} has no parameter '{a.name}' (it has "
                                  f"{', '.join(params)})", a.loc)
        if a.name in by_name:
            raise P4SemanticError(f"argument '{a.name}' given twice", a.loc)
        by_name[a.name] = a
    return [by_name[p] for p in params if p in by_name]


def _block(arg: ast.Arg, ck: Checker) -> ast.ParserDecl | ast.ControlDecl:
    e = arg.value
    name = e.func if isinstance(e, ast.Call) else e
    if not isinstance(name, ast.Name):
        raise unsupported(e, "package argument that is not a parser or control instance")
    ent = ck.res.root.lookup(name.name)
    decl = ent.decl if ent is not None else None
    if ent is not None and ent.kind == INSTANCE:
        t = known(ent.type)
        decl = t.decl if isinstance(t, BlockT) else None
    if not isinstance(decl, ast.ParserDecl | ast.ControlDecl):
        raise unsupported(e, "package argument that is not a parser or control instance")
    return decl
