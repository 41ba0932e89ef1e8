"""The compiled fast path: the sim's hot modules and generated pipelines as
C extensions built by Cython, loaded in place of their Python source.

The Python source stays the reference. An extension is found by the hash
of the exact source it was built from, so a module edited since the last
``intbed accel build`` quietly runs as Python again (``intbed accel status``
says which), and two checkouts never load each other's build by mistake.
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
from pathlib import Path
from types import ModuleType

from common.paths import PACKAGE_ROOT

MODULES: tuple[str, ...] = (
    "dataplane.runtime.support",
    "dataplane.runtime.tables",
    "dataplane.runtime.externs",
    "dataplane.runtime.switch",
    "dataplane.targets.sim.events",
    "dataplane.targets.sim.network",
    "traffic.packets",
    "traffic.receiver",
    "traffic.sender",
    "orchestration.apps.traffic",
)
"""What a packet-hop runs through (``intbed bench sim --profile``). A
module is found here only if it is imported after ``install``: the
``dataplane`` and ``traffic`` packages install the finder first thing."""

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


_CIMPORT = re.compile(rb"^\s*(?:from\s+([\w.]+)\s+cimport|cimport\s+([\w.]+))", re.MULTILINE)


def module_source(py_file: Path) -> bytes:
    """What a module's build is made from: its source, the ``.pxd`` beside
    it if there is one (Cython's declarations for its classes), and the
    project's ``.pxd`` files those declarations cimport, to any depth: an
    extension compiled against another's declarations (the sim's network
    against the simulator's layout) must be built again when they change."""
    source = py_file.read_bytes()
    pxd = py_file.with_suffix(".pxd")
    if not pxd.is_file():
        return source
    parts = [source]
    seen: set[Path] = set()
    todo = [pxd]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        text = path.read_bytes()
        parts.append(b"\0pxd\0" + text)
        for m in _CIMPORT.finditer(text):
            name = (m.group(1) or m.group(2)).decode()
            dep = PACKAGE_ROOT.joinpath(*name.split(".")).with_suffix(".pxd")
            if dep.is_file():
                todo.append(dep)
    return b"".join(parts)


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


class Finder(importlib.abc.MetaPathFinder):
    """Loads a module of ``names`` from the extension built from its
    current source, if there is one; otherwise leaves it to Python."""

    def __init__(self, names: tuple[str, ...] = MODULES) -> None:
        self.names = frozenset(names)
        self.missing: dict[str, Path] = {}
        """Modules that ran as Python, with the build looked for."""

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)  # type: ignore[arg-type]
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            return None
        try:
            source = module_source(Path(spec.origin))
        except OSError:
            return None
        built = artifact_path(fullname, source)
        if not built.is_file():
            self.missing[fullname] = built
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(built))
        return importlib.util.spec_from_file_location(fullname, built, loader=loader)


_FINDER: Finder | None = None


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once; not when disabled)."""
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
            origin = getattr(module, "__file__", "") or ""
            state[name] = "python" if origin.endswith(".py") else "compiled"
    return state


_PIPELINES: dict[str, ModuleType] = {}


def pipeline_key(source: str) -> str:
    """The module name a generated pipeline's source is built under."""
    return f"p4gen_{_digest(source.encode())}"


def pipeline_path(source: str) -> Path:
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return accel_dir() / "pipelines" / f"{pipeline_key(source)}{suffix}"


def load_pipeline(source: str) -> ModuleType | None:
    """The compiled module of a generated pipeline's full source, or None
    when it was not built (or the fast path is off)."""
    if not enabled():
        return None
    key = pipeline_key(source)
    module = _PIPELINES.get(key)
    if module is None:
        path = pipeline_path(source)
        if not path.is_file():
            return None
        module = _PIPELINES[key] = load_extension(key, path)
    return module
