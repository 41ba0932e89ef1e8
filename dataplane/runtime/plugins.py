"""Implementations of the externs a program declares itself, the way BMv2
loads extern libraries (``--load-modules``).

A P4 program may declare ``extern void f(out bit<32> d, bit<32> s);`` or
``extern MyCounter { MyCounter(bit<32> n); void count(); }``; the engine
binds such a name at run time to Python registered here:

    from dataplane.runtime.plugins import extern_function, extern_object

    @extern_function("f")
    def f(s):                 # the in and inout values, in parameter order
        return s + 1          # the results: the return value (if not void),
                              # then each out/inout parameter; one value or
                              # a tuple of several

    @extern_object("MyCounter")
    class MyCounter:
        def __init__(self, n): ...         # the constructor's arguments
        def count(self): ...               # methods follow the same rule

Modules holding such code are loaded from ``INTBED_EXTERN_PLUGINS`` (module
names or ``.py`` paths, separated by ``:``), so switch processes and sweep
workers find the same implementations as the command that started them.
As p4c's BMv2 back end refuses a program's own externs unless it is told
to emit them (``--emit-externs``, with a module to load), the compiler
refuses one that nothing here implements (``bound``), naming the extern
and how to provide it; one unregistered after compiling fails at its call.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common.errors import RuntimeConfigError

ENV = "INTBED_EXTERN_PLUGINS"
_FUNCTIONS: dict[str, Callable[..., Any]] = {}
_OBJECTS: dict[str, Callable[..., Any]] = {}
_loaded: set[str] = set()


def extern_function(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        _FUNCTIONS[name] = fn
        return fn
    return register


def extern_object(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(factory: Callable[..., Any]) -> Callable[..., Any]:
        _OBJECTS[name] = factory
        return factory
    return register


def unregister(name: str) -> None:
    _FUNCTIONS.pop(name, None)
    _OBJECTS.pop(name, None)


def load_plugins(specs: str | None = None) -> None:
    """Import each module named in ``specs`` (default: ``$INTBED_EXTERN_PLUGINS``)
    once; importing registers what it defines."""
    text = os.environ.get(ENV, "") if specs is None else specs
    for spec in filter(None, (s.strip() for s in text.split(":"))):
        if spec in _loaded:
            continue
        try:
            if spec.endswith(".py"):
                path = Path(spec)
                mod_spec = importlib.util.spec_from_file_location(f"intbed_plugin_{path.stem}",
                                                                  path)
                if mod_spec is None or mod_spec.loader is None or not path.is_file():
                    raise FileNotFoundError(spec)
                mod_spec.loader.exec_module(importlib.util.module_from_spec(mod_spec))
            else:
                importlib.import_module(spec)
        except (ImportError, OSError, SyntaxError) as exc:
            raise RuntimeConfigError(f"{ENV}: cannot load extern plugin '{spec}': {exc}") from None
        _loaded.add(spec)


def _missing(what: str, name: str) -> RuntimeConfigError:
    return RuntimeConfigError(
        f"{what} '{name}' has no implementation: register one with "
        f"dataplane.runtime.plugins.extern_{'object' if what.endswith('object') else 'function'}"
        f"('{name}') in a module listed in {ENV}")


def bound(kind: str, name: str) -> bool:
    """Whether extern ``name`` (kind "function" or "object") has an
    implementation, after loading ``$INTBED_EXTERN_PLUGINS``."""
    load_plugins()
    return name in (_FUNCTIONS if kind == "function" else _OBJECTS)


def function(name: str) -> Callable[..., Any]:
    load_plugins()
    fn = _FUNCTIONS.get(name)
    if fn is not None:
        return fn

    def missing(*_args: Any) -> Any:
        # Looked up again at the call, so a plugin registered after the
        # switch was built still serves it.
        late = _FUNCTIONS.get(name)
        if late is None:
            raise _missing("extern function", name)
        return late(*_args)
    return missing


class _Unbound:
    """An extern object with no implementation: every method call says so."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, method: str) -> Any:
        raise _missing("extern object", self._name)


def instance(name: str, args: tuple[Any, ...]) -> Any:
    load_plugins()
    factory = _OBJECTS.get(name)
    return _Unbound(name) if factory is None else factory(*args)
