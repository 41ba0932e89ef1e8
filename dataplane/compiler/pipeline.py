"""The front-end pipeline: preprocess, parse, check, generate, compile, exec.

A program is compiled once per process and shared by every Switch that
runs it (the generated code objects are shared; each Switch binds its own
state through ``make``). The pipeline also completes the program's
``ProgramSchema``: everything later stages (runtime, P4Info, the P4Runtime
service) need from the source is put there once, so none of them parses
the source again.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cython

from common.errors import P4UnsupportedError
from dataplane.compiler import native
from dataplane.compiler.check import check_program
from dataplane.compiler.codegen.calls import CopyBlockParams
from dataplane.compiler.codegen.generator import CodeGen, ExternRuntime, Layout, TableRuntime
from dataplane.compiler.frontend.ast import HeaderDecl, Program
from dataplane.compiler.frontend.direct_calls import instantiate_direct_calls
from dataplane.compiler.frontend.types import HeaderT, StackT, StructLikeT, field_bits, strip
from dataplane.compiler.options import current as current_options
from dataplane.runtime import externs as rt_externs
from dataplane.runtime import plugins, support
from dataplane.runtime.tables import Entry
from dataplane.schema import ControllerHeaderInfo, FieldInfo, ProgramSchema
from fastpath.build import Job


@dataclass
class CompiledProgram:
    """A program ready to run: control-plane schema plus generated code."""

    name: str
    source: Path
    schema: ProgramSchema
    layout: Layout
    tables: list[TableRuntime]
    externs: list[ExternRuntime]
    value_sets: list[Any]
    action_names: list[str]
    python_source: str
    make: Callable[[Any], dict[str, Callable]] = field(repr=False)
    error_names: list[str] = field(default_factory=list)
    runnable: bool = True
    """False for a program with no ``main`` package: checked, nothing to run."""
    empty_blocks: frozenset[str] = frozenset()
    """Blocks whose generated function does nothing (an empty egress, say):
    the engine does not call them."""
    native: bool = False
    """True when the generated code runs as a built extension
    (``dataplane.compiler.native``), not as Python text."""
    reads_payload: bool = True
    """Whether the generated code reads the payload slot (a
    ``*_with_payload`` checksum); when it does not, the engine passes the
    payload along as the frame and an offset, never copied on its own."""
    user_externs: dict[str, tuple[str, Any]] = field(default_factory=dict)
    """The program's own externs it uses: kind and first use (plugins bind them)."""


def _globals() -> dict[str, Any]:
    return {
        "ExitPipeline": support.ExitPipeline,
        "ParserReject": support.ParserReject,
        "AssertionFailed": support.AssertionFailed,
        "sat_add": support.sat_add,
        "to_signed": support.to_signed,
        "shl": support.shl,
        "read_bits": support.read_bits,
        "join_bits": support.join_bits,
        "compute_hash": rt_externs.compute_hash,
        "hash_bytes": rt_externs.hash_bytes,
        "verify_checksum": rt_externs.verify_checksum,
        "update_checksum": rt_externs.update_checksum,
        "Struct": struct.Struct,
        "Entry": Entry,
        "cython": cython,
        "__builtins__": __builtins__,
    }


def native_job(compiled: CompiledProgram) -> Job | None:
    """What ``intbed accel build`` builds for this program's pipeline (None
    when built already)."""
    return native.job(compiled.python_source, _globals(), f"pipeline of {compiled.source.name}")


def compile_program(program: Program, source: Path, *,
                    share_params: bool = True) -> CompiledProgram:
    """Generate and compile code for a parsed program (``share_params``:
    see ``CallMixin.shared_params``)."""
    instantiate_direct_calls(program)
    facts = check_program(program)
    copy_blocks: frozenset[str] = frozenset()
    while True:
        gen = CodeGen(program, facts, copy_blocks, share_params)
        try:
            text = gen.generate()
            break
        except CopyBlockParams as again:
            copy_blocks |= {again.qname}
    _require_implementations(gen.user_externs)
    namespace = native.load(text, _globals())
    built = namespace is not None
    if namespace is None:
        namespace = _globals()
        exec(compile(text, f"<p4:{source.name}>", "exec"), namespace)  # noqa: S102 - ours
    gen.schema.tables = [t.info for t in gen.tables]
    gen.schema.controller_headers = controller_headers(program, gen.layout)
    return CompiledProgram(
        name=source.stem,
        source=source,
        schema=gen.schema,
        layout=gen.layout,
        tables=gen.tables,
        externs=gen.externs,
        value_sets=gen.value_sets,
        action_names=[a.qname for a in gen.action_syms],
        python_source=text,
        native=built,
        make=namespace["make"],
        error_names=list(gen.error.members),
        runnable=gen.main is not None,
        empty_blocks=frozenset(k for k, fn in gen.blocks.items() if fn in gen.empty_funcs),
        reads_payload=gen.reads_payload,
        user_externs=gen.user_externs,
    )


def _require_implementations(externs: Mapping[str, tuple[str, Any]]) -> None:
    """Refuse a program's own extern that no plugin implements, as p4c's
    BMv2 back end does without ``--emit-externs``: where BMv2 would need a
    module, intbed needs one in ``$INTBED_EXTERN_PLUGINS``."""
    for name, (kind, loc) in externs.items():
        if not plugins.bound(kind, name):
            raise P4UnsupportedError(
                f"unsupported construct: the program's own extern {kind} '{name}': BMv2 "
                "runs it only with a module implementing it; register one with "
                f"dataplane.runtime.plugins.extern_{kind}('{name}') in a module listed in "
                f"{plugins.ENV}", loc)


def controller_headers(program: Program, layout: Layout) -> list[ControllerHeaderInfo]:
    """The ``@controller_header`` headers the pipeline carries, in declaration order.

    Only header types reachable from the pipeline's headers or metadata
    struct count (an annotated type nothing uses has no packet I/O to
    describe); field widths are the resolved ones, so constants and
    typedefs in the declaration are already folded.
    """
    resolved: dict[str, HeaderT] = {}

    def walk(t: Any) -> None:
        t = strip(t)
        if isinstance(t, StackT):
            walk(t.elem)
        elif isinstance(t, StructLikeT):
            if isinstance(t, HeaderT):
                resolved.setdefault(t.name, t)
            for _, ft in t.fields:
                walk(ft)

    for t in (layout.headers_type, layout.meta_type):
        if t is not None:
            walk(t)
    out = []
    for decl in program.decls:
        if not isinstance(decl, HeaderDecl):
            continue
        anno = next((a for a in decl.annotations if a.name == "controller_header"), None)
        header = resolved.get(decl.name)
        if anno is None or header is None:
            continue
        fields = [FieldInfo(name, field_bits(ft)) for name, ft in header.fields]
        out.append(ControllerHeaderInfo(decl.name, fields, [f"@controller_header({anno.body})"]))
    return out


_CACHE: dict[tuple, CompiledProgram] = {}


def compile_file(path: str | Path, include_dirs: Sequence[Path] = (),
                 defines: Mapping[str, str] | None = None) -> CompiledProgram:
    """Compile a ``.p4`` file (cached per process by path and mtime). With
    no ``include_dirs`` or ``defines``, those of the surrounding
    ``compile_options`` apply (a command's ``-I``/``-D``)."""
    from dataplane.compiler.frontend.parser import parse_file

    if not include_dirs and defines is None:
        ambient = current_options()
        include_dirs, defines = ambient.include_dirs, ambient.defines
    p = Path(path).resolve()
    key = (str(p), p.stat().st_mtime_ns if p.exists() else 0,
           tuple(str(d) for d in include_dirs), tuple(sorted((defines or {}).items())))
    hit = _CACHE.get(key)
    if hit is not None:
        _require_implementations(hit.user_externs)  # plugins may have changed since
        return hit
    program = parse_file(p, include_dirs=tuple(include_dirs), defines=dict(defines or {}))
    compiled = compile_program(program, p)
    _CACHE[key] = compiled
    return compiled
