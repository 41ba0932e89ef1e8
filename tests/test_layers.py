"""intbed's packages import only downwards, so each layer can be used,
tested and replaced without the ones above it.

Levels (a package imports its own package, anything the table lists, and
third-party code; nothing else):

0. common, p4proto, p4src: neutral helpers, no intbed package; fastpath
   (the compiled fast path's loader and build): common only.
1. dataplane, topologies, traffic: level 0 only, not each other.
2. sinks (host-side collectors, stores, decoders): level 0, topologies,
   traffic; controller (control-plane apps): the same and sinks. Neither
   imports dataplane (they talk to switches over P4Runtime and sockets,
   as they would to hardware).
3. orchestration: levels 0-2.
4. experiments, benchmarks: levels 0-3, not each other.
5. intbed (the CLI): anything.

tests may import anything except private names (leading underscore) of
benchmarks: a helper tests share with benchmarks is public.

Every import counts, at any depth (function-local, under TYPE_CHECKING), and
so do string literals passed to ``importlib.import_module``/``__import__``.
Run outside pytest with ``python -m tests.test_layers`` from the checkout.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

LEVEL0 = frozenset({"common", "fastpath", "p4proto", "p4src"})
ALLOWED: dict[str, frozenset[str]] = {
    "common": frozenset(),
    "fastpath": frozenset({"common"}),
    "p4proto": frozenset(),
    "p4src": frozenset(),
    "dataplane": LEVEL0,
    "topologies": LEVEL0,
    "traffic": LEVEL0,
    "sinks": LEVEL0 | {"topologies", "traffic"},
    "controller": LEVEL0 | {"topologies", "traffic", "sinks"},
    "orchestration": LEVEL0 | {"dataplane", "topologies", "traffic", "sinks", "controller"},
    "experiments": LEVEL0 | {"dataplane", "topologies", "traffic", "sinks", "controller",
                             "orchestration"},
    "benchmarks": LEVEL0 | {"dataplane", "topologies", "traffic", "sinks", "controller",
                            "orchestration"},
}
PACKAGES = frozenset(ALLOWED) | {"intbed"}
"""intbed's top-level packages (pyproject's packages.find list)."""

UNRESTRICTED = frozenset({"intbed", "tests"})
"""Directories checked only for the rule on private benchmark names."""


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    imported: str
    why: str

    def __str__(self) -> str:
        rel = self.path.relative_to(REPO_ROOT) if self.path.is_relative_to(REPO_ROOT) \
            else self.path
        return f"{rel}:{self.line}: {self.imported}: {self.why}"


@dataclass(frozen=True)
class Import:
    """One imported module, with the names taken from it (``from m import a``)."""

    line: int
    module: str
    names: tuple[str, ...] = ()


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def resolve_relative(node: ast.ImportFrom, module: str, is_package: bool) -> str | None:
    """``from ..x import y`` in ``module`` -> ``pkg.x``; None when it climbs
    above the top-level package."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    up = node.level - 1
    if up > len(base) - 1:
        return None
    base = base[:len(base) - up] if up else base
    return ".".join([*base, node.module] if node.module else base)


def imports(tree: ast.AST, module: str, is_package: bool) -> Iterator[Import]:
    """Every import in ``tree``, wherever it is."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            target = (node.module or "") if node.level == 0 else \
                resolve_relative(node, module, is_package)
            if target is None:
                yield Import(node.lineno, "." * node.level + (node.module or ""))
                continue
            names = tuple(a.name for a in node.names)
            yield Import(node.lineno, target, names)
            # ``from pkg import sub`` may import the submodule pkg.sub.
            for name in names:
                if name != "*":
                    yield Import(node.lineno, f"{target}.{name}")
        elif isinstance(node, ast.Call) and _is_dynamic_import(node.func) and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                yield Import(node.lineno, arg.value)


def _is_dynamic_import(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in ("import_module", "__import__")
    return isinstance(func, ast.Attribute) and func.attr == "import_module"


def private_attributes(tree: ast.AST, aliases: dict[str, str]) -> Iterator[Import]:
    """``alias._name`` or ``alias.sub._name`` where ``alias`` is a name bound
    by an import from benchmarks."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        chain: list[str] = []
        value: ast.expr = node.value
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in aliases:
            yield Import(node.lineno, ".".join([aliases[value.id], *reversed(chain)]),
                         (node.attr,))


def benchmark_aliases(tree: ast.AST) -> dict[str, str]:
    """Local names bound by imports from benchmarks, and what they name."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "benchmarks":
                    continue
                if alias.asname:
                    out[alias.asname] = alias.name
                else:
                    out["benchmarks"] = "benchmarks"
        elif (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
              and node.module.split(".")[0] == "benchmarks"):
            for alias in node.names:
                out[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def check_file(path: Path, root: Path = REPO_ROOT) -> list[Violation]:
    """The layering rules broken by one file of package ``path``'s top folder."""
    owner = path.relative_to(root).parts[0]
    module = module_name(path, root)
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[Violation] = []
    seen: set[tuple[int, str]] = set()
    for imp in imports(tree, module, path.name == "__init__.py"):
        if imp.module.startswith("."):
            found.append(Violation(path, imp.line, imp.module,
                                   "relative import above the top-level package"))
            continue
        top = imp.module.split(".")[0]
        if owner == "tests" and top == "benchmarks":
            private = [p for p in imp.module.split(".") if _private(p)]
            private += [n for n in imp.names if _private(n)]
            for name in private:
                if (imp.line, name) not in seen:
                    seen.add((imp.line, name))
                    found.append(Violation(path, imp.line, f"{imp.module} {name}",
                                           "tests import nothing private from benchmarks"))
            continue
        if owner in UNRESTRICTED or top not in PACKAGES or top == owner:
            continue
        if top not in ALLOWED[owner] and (imp.line, top) not in seen:
            seen.add((imp.line, top))
            found.append(Violation(path, imp.line, imp.module,
                                   f"{owner} may not import {top}"))
    if owner == "tests":
        for imp in private_attributes(tree, benchmark_aliases(tree)):
            found.append(Violation(path, imp.line, f"{imp.module}.{imp.names[0]}",
                                   "tests import nothing private from benchmarks"))
    return found


def python_files(root: Path = REPO_ROOT) -> Iterator[Path]:
    for top in sorted(PACKAGES | UNRESTRICTED):
        for path in sorted((root / top).rglob("*.py")):
            if "__pycache__" not in path.parts:
                yield path


def violations(root: Path = REPO_ROOT) -> list[Violation]:
    return [v for path in python_files(root) for v in check_file(path, root)]


# ------------------------------------------------------------------ tests


def test_every_package_is_checked() -> None:
    """A package missing here would escape the check unnoticed."""
    import tomllib

    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    listed = {p.rstrip("*") for p in pyproject["tool"]["setuptools"]["packages"]["find"]
              ["include"]}
    assert listed == PACKAGES


def test_imports_follow_the_layers() -> None:
    found = violations()
    assert not found, "imports against the layering:\n" + "\n".join(map(str, found))


def test_checker_sees_every_kind_of_import(tmp_path: Path) -> None:
    """Function-local, relative, dynamic and private imports are all caught."""
    (tmp_path / "controller" / "sub").mkdir(parents=True)
    (tmp_path / "tests").mkdir()
    (tmp_path / "controller" / "sub" / "m.py").write_text(
        "import importlib\n"
        "from common.errors import IntbedError\n"
        "from . import sibling\n"
        "def f():\n"
        "    import dataplane.runtime\n"
        "    importlib.import_module('orchestration.sim')\n"
        "from ... import beyond\n")
    (tmp_path / "tests" / "test_x.py").write_text(
        "from benchmarks.sim import _traffic, run\n"
        "import benchmarks.sim as bs\n"
        "import benchmarks.engine\n"
        "from benchmarks import switch\n"
        "import experiments._private\n"
        "bs._helper()\n"
        "benchmarks.engine._x = switch._y\n")
    got = sorted((v.path.name, v.line, v.imported) for v in violations(tmp_path))
    assert got == [
        ("m.py", 5, "dataplane.runtime"),
        ("m.py", 6, "orchestration.sim"),
        ("m.py", 7, "..."),
        ("test_x.py", 1, "benchmarks.sim _traffic"),
        ("test_x.py", 6, "benchmarks.sim._helper"),
        ("test_x.py", 7, "benchmarks.engine._x"),
        ("test_x.py", 7, "benchmarks.switch._y"),
    ]


def main() -> int:
    """Print each violation as path:line and exit 1 if there is any."""
    found = violations()
    for v in found:
        print(v)
    print(f"{len(found)} layering violation(s) in {sum(1 for _ in python_files())} files",
          file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
