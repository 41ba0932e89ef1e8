"""Loading the compiled fast path: a hot module or a generated pipeline
runs from the C extension built from its exact current source, or as
Python.

The Python source stays the reference. An extension is found by the hash
of what it was built from: the module's source, its ``.pxd`` and, to any
depth, every project ``.pxd`` it cimports together with that module's
``.py``. Modules that use each other's declarations form a group (the
simulator, the engine's switch, the sim's network and the traffic app; a
table and the pipelines that read its slots), and a group loads compiled
only as a whole: where any member has no build of its current source (an
edit since the last ``intbed accel build``), every member runs as Python,
with one warning naming it, so a compiled module never meets a Python one
whose layout it assumes. The decision is taken once a process, at the
first import of a member. ``intbed accel status`` says what is built;
``INTBED_PURE_PYTHON=1`` turns the fast path off for a process and its
children. Nothing here imports the rest of intbed.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from common.paths import PACKAGE_ROOT

MODULES: tuple[str, ...] = (
    "dataplane.runtime.support",
    "dataplane.runtime.tables",
    "dataplane.runtime.lpm_slots",
    "dataplane.runtime.externs",
    "dataplane.runtime.switch",
    "dataplane.targets.sim.heap4",
    "dataplane.targets.sim.events",
    "dataplane.targets.sim.network",
    "traffic.packets",
    "traffic.receiver",
    "traffic.sender",
    "orchestration.apps.traffic",
)
"""What a packet-hop runs through (``intbed bench sim --profile``). A
module is found here only if it is imported after ``install``: each
package that holds one (``dataplane``, ``traffic``, ``orchestration``)
installs the finder first thing."""

BUILD_VERSION = "3"
"""Part of every artifact's key: raise it when the build's flags or
directives change, so older artifacts are no longer loaded."""

PURE_ENV = "INTBED_PURE_PYTHON"
DIR_ENV = "INTBED_ACCEL_DIR"


def enabled() -> bool:
    """False when ``INTBED_PURE_PYTHON`` asks for the Python source alone."""
    return os.environ.get(PURE_ENV, "").strip().lower() not in ("1", "true", "yes", "on")


def accel_dir() -> Path:
    """Where artifacts live: ``INTBED_ACCEL_DIR``, else ``.accel`` in a
    checkout, else the user's cache; one subdirectory per interpreter."""
    tag = f"{sys.implementation.cache_tag}-{sysconfig.get_platform()}"
    explicit = os.environ.get(DIR_ENV)
    if explicit:
        return Path(explicit) / tag
    if (PACKAGE_ROOT / ".git").exists():
        return PACKAGE_ROOT / ".accel" / tag
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "intbed" / "accel" / tag


_CIMPORT = re.compile(rb"^\s*(?:from\s+([\w.]+)\s+cimport|cimport\s+([\w.]+)"
                     rb"|from\s+cython\.cimports\.([\w.]+)\s+import)", re.MULTILINE)


def cimported(text: bytes) -> list[str]:
    """The dotted names of the modules whose declarations ``text`` (a
    ``.pxd``, or a ``.py`` in Cython's pure-Python syntax) cimports."""
    return [(m.group(1) or m.group(2) or m.group(3)).decode() for m in _CIMPORT.finditer(text)]


def _declarations_of(name: str) -> Path | None:
    """The project ``.pxd`` of module ``name``, if it has one."""
    pxd = PACKAGE_ROOT.joinpath(*name.split(".")).with_suffix(".pxd")
    return pxd if pxd.is_file() else None


def project_cimports(py_file: Path) -> list[str]:
    """The project modules whose declarations the module at ``py_file``
    cimports, directly (from its ``.pxd`` and its own source)."""
    texts = [py_file.read_bytes()]
    if py_file.with_suffix(".pxd").is_file():
        texts.append(py_file.with_suffix(".pxd").read_bytes())
    names = dict.fromkeys(n for text in texts for n in cimported(text))
    return [n for n in names if _declarations_of(n) is not None]


def dependency_source(names: list[str]) -> bytes:
    """What a build compiled against the declarations of ``names`` depends
    on: for each module of their closure (``declared_closure``), its
    ``.pxd`` and its ``.py`` where it has one."""
    parts = []
    for name in declared_closure(names):
        pxd = _declarations_of(name)
        assert pxd is not None
        parts.append(b"\0pxd\0" + pxd.read_bytes())
        py = pxd.with_suffix(".py")
        if py.is_file():
            parts.append(b"\0py\0" + py.read_bytes())
    return b"".join(parts)


def declared_closure(names: list[str]) -> list[str]:
    """``names`` that have project declarations and the modules those
    cimport, to any depth, each once, depth first in the order written."""
    seen: dict[str, None] = {}
    todo = list(reversed(names))
    while todo:
        name = todo.pop()
        pxd = _declarations_of(name)
        if name in seen or pxd is None:
            continue
        seen[name] = None
        todo.extend(reversed(cimported(pxd.read_bytes())))
    return list(seen)


def module_source(py_file: Path) -> bytes:
    """What a module's build is made from: its source, the ``.pxd`` beside
    it if there is one (Cython's declarations for its classes), and what
    ``dependency_source`` adds for the project modules those cimport: an
    extension compiled against another's declarations (the sim's network
    against the simulator's layout) is built again when they, or the
    module behind them, change."""
    source = py_file.read_bytes()
    pxd = py_file.with_suffix(".pxd")
    parts = [source]
    if pxd.is_file():
        parts.append(b"\0pxd\0" + pxd.read_bytes())
    deps = [n for n in project_cimports(py_file) if n != _module_name(py_file)]
    return b"".join(parts) + dependency_source(deps)


def _module_name(py_file: Path) -> str:
    try:
        rel = py_file.resolve().relative_to(PACKAGE_ROOT.resolve())
    except ValueError:
        return ""
    return ".".join(rel.with_suffix("").parts)


def _digest(*parts: bytes) -> str:
    return hashlib.sha256(b"\0".join([BUILD_VERSION.encode(), *parts])).hexdigest()[:24]


def artifact_path(name: str, source: bytes) -> Path:
    """The extension built from ``source`` for module ``name``."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return accel_dir() / f"{name}-{_digest(name.encode(), source)}{suffix}"


def load_extension(name: str, path: Path) -> ModuleType:
    """Import the extension at ``path`` as module ``name``."""
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def groups(names: tuple[str, ...] = MODULES) -> dict[str, frozenset[str]]:
    """Each module of ``names`` with its group: the modules of ``names``
    linked to it by cimports, either way, to any depth."""
    links: dict[str, set[str]] = {name: set() for name in names}
    for name in names:
        py = PACKAGE_ROOT.joinpath(*name.split(".")).with_suffix(".py")
        if not py.is_file():
            continue
        for dep in declared_closure(project_cimports(py)):
            if dep in links and dep != name:
                links[name].add(dep)
                links[dep].add(name)
    out: dict[str, frozenset[str]] = {}
    for name in names:
        if name in out:
            continue
        group, todo = {name}, [name]
        while todo:
            for other in links[todo.pop()] - group:
                group.add(other)
                todo.append(other)
        for member in group:
            out[member] = frozenset(group)
    return out


def _source_file(name: str, path: object = None) -> Path | None:
    """The ``.py`` file of module ``name``, found without importing its
    parent packages: in ``path`` (the parent's ``__path__``, as the import
    system passes it) or, for another member of a group, on ``sys.path``."""
    *packages, last = name.split(".")
    if path is not None:
        spec = importlib.machinery.PathFinder.find_spec(name, path)  # type: ignore[arg-type]
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            return None
        return Path(spec.origin)
    for entry in sys.path:
        candidate = Path(entry or ".", *packages, f"{last}.py")
        if candidate.is_file():
            return candidate
    # An editable install puts no directory on sys.path (its finder maps
    # the packages): the project's own modules are where its packages are.
    candidate = PACKAGE_ROOT.joinpath(*packages, f"{last}.py")
    return candidate if candidate.is_file() else None


def _is_compiled(module: ModuleType) -> bool:
    return not (getattr(module, "__file__", "") or "").endswith(".py")


class Finder(importlib.abc.MetaPathFinder):
    """Loads a module of ``names`` from the extension built from its
    current source when every module of its group can load so too;
    otherwise leaves the whole group to Python."""

    def __init__(self, names: tuple[str, ...] = MODULES,
                 warn: Callable[[str], None] | None = None,
                 linked: dict[str, frozenset[str]] | None = None) -> None:
        self.names = frozenset(names)
        self._groups = groups(tuple(names)) if linked is None else linked
        self._builds: dict[str, Path | None] = {}
        """Per decided module: the build it loads from, or None (Python)."""
        self.missing: dict[str, Path] = {}
        """Modules that have no build of their current source, with the
        build looked for."""
        self.held_back: dict[str, list[str]] = {}
        """Modules with a build that run as Python all the same, with the
        members of their group that have none."""
        self._warn = warn if warn is not None else _warn_stderr

    def build_for(self, fullname: str, path: object = None) -> Path | None:
        """The extension ``fullname`` loads from, or None when it runs as
        Python (deciding its group's fate if no member was imported yet)."""
        if fullname not in self._builds:
            self._decide(self._groups.get(fullname, frozenset({fullname})), fullname, path)
        return self._builds[fullname]

    def _decide(self, group: frozenset[str], importing: str, path: object) -> None:
        builds: dict[str, Path | None] = {}
        python: list[str] = []
        for name in sorted(group):
            module = sys.modules.get(name)
            if module is not None:  # imported before this finder looked
                builds[name] = None
                if not _is_compiled(module):
                    python.append(name)
                continue
            py = _source_file(name, path if name == importing else None)
            if py is None:
                builds[name] = None
                continue
            try:
                built = artifact_path(name, module_source(py))
            except OSError:
                builds[name] = None
                python.append(name)
                continue
            if built.is_file():
                builds[name] = built
            else:
                builds[name] = None
                self.missing[name] = built
                python.append(name)
        if python:
            held = [name for name, built in builds.items() if built is not None]
            for name in held:
                self.held_back[name] = python
                builds[name] = None
            stale = [name for name in python if name in self.missing and _built_before(name)]
            if held or stale:
                causes = _causes(python)
                others = sorted(set(group) - set(causes))
                self._warn(_group_warning(causes, others))
        self._builds.update(builds)

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        built = self.build_for(fullname, path)
        if built is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(built))
        return importlib.util.spec_from_file_location(fullname, built, loader=loader)


def _causes(python: list[str]) -> list[str]:
    """Of the modules of a group that run as Python, those that do not
    cimport another of them: the edited ones (the rest only lost their
    builds because their keys cover an edited module's source)."""
    if len(python) == 1:
        return python
    out = []
    for name in python:
        py = PACKAGE_ROOT.joinpath(*name.split(".")).with_suffix(".py")
        deps = set(declared_closure(project_cimports(py))) if py.is_file() else set()
        if not (deps - {name}) & set(python):
            out.append(name)
    return out or python


def _built_before(name: str) -> bool:
    """Whether some build of ``name`` exists, of another source than today's."""
    return any(accel_dir().glob(f"{name}-*{importlib.machinery.EXTENSION_SUFFIXES[0]}"))


def _group_warning(causes: list[str], others: list[str]) -> str:
    """One line for a group that runs as Python: which modules have no
    build of their source, which go with them, what to do."""
    one = len(causes) == 1
    also = (f", and so {'does' if len(others) == 1 else 'do'} {', '.join(others)}, compiled "
            f"against {'it' if one else 'them'}") if others else ""
    return (f"warning: {', '.join(causes)} {'has' if one else 'have'} no compiled build of "
            f"{'its' if one else 'their'} current source (edited since the last build?): "
            f"{'it runs' if one else 'they run'} as Python{also} (same results, slower); "
            "run `intbed accel build`")


_QUIET = False


def quiet() -> None:
    """No warnings about groups that run as Python from here on (``intbed
    accel``, which builds them, need not be told to)."""
    global _QUIET
    _QUIET = True


def _warn_stderr(message: str) -> None:
    if not _QUIET:
        print(message, file=sys.stderr)


_FINDER: Finder | None = None


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once; not when disabled).
    Every package that holds a hot module calls it first thing, so no hot
    module is found before it, whatever is imported first."""
    global _FINDER
    if _FINDER is not None or not enabled():
        return
    _FINDER = Finder()
    sys.meta_path.insert(0, _FINDER)


def loaded() -> dict[str, str]:
    """Each fast-path module imported so far: ``compiled`` or ``python``."""
    state = {}
    for name in MODULES:
        module = sys.modules.get(name)
        if module is not None:
            state[name] = "compiled" if _is_compiled(module) else "python"
    return state


_PIPELINES: dict[str, ModuleType] = {}


def pipeline_key(source: str) -> str:
    """The module name a generated pipeline's source is built under."""
    return f"p4gen_{_digest(source.encode())}"


def pipeline_path(source: str) -> Path:
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return accel_dir() / "pipelines" / f"{pipeline_key(source)}{suffix}"


def load_pipeline(source: str, depends: tuple[str, ...] = ()) -> ModuleType | None:
    """The compiled module of a generated pipeline, by the source its
    build is keyed by, or None when it was not built, the fast path is off,
    or a module of ``depends`` (those whose declarations the pipeline
    cimports) runs as Python: a built pipeline reads their objects' C
    layout."""
    if not enabled():
        return None
    for name in depends:
        module = sys.modules.get(name)
        if module is None or not _is_compiled(module):
            return None
    key = pipeline_key(source)
    module = _PIPELINES.get(key)
    if module is None:
        path = pipeline_path(source)
        if not path.is_file():
            return None
        module = _PIPELINES[key] = load_extension(key, path)
    return module
