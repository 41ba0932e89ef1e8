"""Direct invocation of controls and parsers (P4-16 1.2): ``C.apply(args)``
with ``C`` a control or parser type and no instance written.

The language defines it as an anonymous instance made at the call, so this
pass rewrites the syntax tree before any name is resolved: each such call
gets a fresh instance ``C_inst`` (``C_inst_0``, ... when taken) declared
in the enclosing control's or parser's locals, annotated ``@name("C")``
so tables inside it keep the control-plane names p4c gives them
(``Ingress.C.t``). Later stages then see only ordinary instances.
"""

from __future__ import annotations

from dataplane.compiler.frontend import ast


def instantiate_direct_calls(program: ast.Program) -> None:
    blocks = {d.name for d in program.decls if isinstance(d, ast.ControlDecl | ast.ParserDecl)}
    if not blocks:
        return
    taken = {n.name for n in ast.walk(program) if isinstance(n, ast.Decl)}
    for decl in program.decls:
        if not isinstance(decl, ast.ControlDecl | ast.ParserDecl):
            continue
        shadowed = {p.name for p in (*decl.params, *decl.ctor_params)}
        shadowed.update(d.name for d in decl.locals)
        bodies: list[ast.Node] = [decl.body] if isinstance(decl, ast.ControlDecl) else list(
            decl.states)
        added: list[ast.Decl] = []
        for body in bodies:
            for node in ast.walk(body):
                target = _direct_target(node, blocks, shadowed)
                if target is None:
                    continue
                name = _fresh(f"{target.name}_inst", taken)
                added.append(ast.Instantiation(
                    name, ast.TypeName(target.name, target.absolute, loc=target.loc), [],
                    annotations=[ast.Annotation("name", f'"{target.name}"', loc=target.loc)],
                    loc=node.loc))
                node.func.expr = ast.Name(name, loc=target.loc)  # type: ignore[attr-defined]
        decl.locals.extend(added)


def _direct_target(node: ast.Node, blocks: set[str], shadowed: set[str]) -> ast.Name | None:
    """The type name of ``T.apply(...)`` when ``T`` names a control or parser
    type that no parameter or local of the enclosing block hides."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Member):
        return None
    member = node.func
    if member.name != "apply" or not isinstance(member.expr, ast.Name):
        return None
    target = member.expr
    if target.name not in blocks or (target.name in shadowed and not target.absolute):
        return None
    return target


def _fresh(base: str, taken: set[str]) -> str:
    name, k = base, 0
    while name in taken:
        name = f"{base}_{k}"
        k += 1
    taken.add(name)
    return name

