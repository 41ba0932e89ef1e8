"""Building the compiled fast path (``fastpath.loader``): Cython turns a Python
source into C, the system's C compiler into an extension.

The directives keep Python's semantics: annotations are not taken as C
types (an ``int`` stays a Python integer of any width), functions stay
introspectable Python callables. What changes is that no bytecode is
interpreted.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from common.errors import IntbedError
from common.paths import PACKAGE_ROOT
from fastpath.loader import MODULES, artifact_path, module_source

DIRECTIVES = ("annotation_typing=False", "binding=True", "language_level=3")
OPTIMIZE = "-O2"
NO_PLT = "-fno-plt"
"""Calls into CPython through the global offset table, bound when the
extension loads, instead of through a stub per symbol (0.7% fewer
instructions a packet-hop in both benchmarks, docs/sim_performance.md)."""


def declarations() -> str:
    """A digest of the project's ``.pxd`` files. Cython reads those a module
    or a pipeline cimports from the tree while it builds, but the artifact's
    name (its key) was taken from them when the job was made."""
    h = hashlib.sha256()
    for top in sorted({name.split(".")[0] for name in MODULES} | {"dataplane"}):
        for pxd in sorted(PACKAGE_ROOT.joinpath(top).rglob("*.pxd")):
            h.update(str(pxd.relative_to(PACKAGE_ROOT)).encode() + b"\0" + pxd.read_bytes())
    return h.hexdigest()


@dataclass(frozen=True)
class Job:
    """One extension to build: module ``name`` from ``source`` into ``out``."""

    name: str
    source: str
    out: Path
    label: str = ""
    """What progress lines call it (default: ``name``)."""
    pxd: str | None = None
    """Declarations Cython reads beside the source (``module.pxd``)."""
    declared: str = field(default_factory=declarations)
    """``declarations()`` when the job was made: an extension compiled after
    they changed is not put under a key taken before (it would load against
    another layout, or be refused at import)."""


def compiler() -> str:
    """The C compiler, or a clear error naming the package that brings it."""
    cc = os.environ.get("CC") or (sysconfig.get_config_var("CC") or "gcc").split()[0]
    if shutil.which(cc) is None:
        raise IntbedError(f"no C compiler ({cc}) for the compiled fast path; install it "
                          "(apt-get install gcc) or run in pure Python (INTBED_PURE_PYTHON=1)")
    header = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not header.is_file():
        raise IntbedError(f"{header} is missing: the compiled fast path needs Python's "
                          "headers (apt-get install python3-dev)")
    return cc


def build(job: Job, *, flags: Sequence[str] = (), workdir: Path | None = None,
          out: Path | None = None) -> Path:
    """Build one extension; the artifact appears whole or not at all.

    ``flags`` go to the C compiler after the usual ones; ``workdir`` is where
    the C file and the object are made (a temporary directory by default;
    a profile-guided build needs the same one twice, ``fastpath.pgo``);
    ``out`` replaces ``job.out``."""
    cc = compiler()
    out = job.out if out is None else out
    out.parent.mkdir(parents=True, exist_ok=True)
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)
    where_built = (tempfile.TemporaryDirectory(dir=out.parent, prefix=".build-")
                   if workdir is None else contextlib.nullcontext(str(workdir)))
    with where_built as tmp:
        src = Path(tmp) / (job.name.rsplit(".", 1)[-1] + ".py")
        src.write_text(job.source, encoding="utf-8")
        include = []
        if job.pxd is not None:
            # Cython finds a module's own .pxd by its dotted name, in a
            # package tree on the include path.
            *packages, last = job.name.split(".")
            where = Path(tmp, "include", *packages)
            where.mkdir(parents=True, exist_ok=True)
            for depth in range(1, len(packages) + 1):
                Path(tmp, "include", *packages[:depth], "__init__.py").touch()
            (where / f"{last}.pxd").write_text(job.pxd, encoding="utf-8")
            include = ["-I", str(Path(tmp, "include"))]
        # The project's own .pxd files that a module or a pipeline cimports
        # (the simulator's layout, the table entry), wherever the build is
        # started from: Cython looks for them on its include path.
        include += ["-I", str(PACKAGE_ROOT)]
        c_file = Path(tmp) / "module.c"
        cython = [sys.executable, "-m", "cython", "--module-name", job.name, *include,
                  *(arg for d in DIRECTIVES for arg in ("-X", d)), "-o", str(c_file), str(src)]
        so_file = Path(tmp) / "module.so"
        gcc = [cc, "-shared", "-fPIC", OPTIMIZE, NO_PLT, "-fwrapv", "-fno-strict-aliasing",
               "-DNDEBUG", "-I" + sysconfig.get_paths()["include"], *flags, str(c_file), "-o",
               str(so_file)]
        for argv in (cython, gcc):
            proc = subprocess.run(argv, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-6:])
                raise IntbedError(f"building {job.name} failed ({Path(argv[0]).name} exit "
                                  f"{proc.returncode}): {tail}")
        if declarations() != job.declared:
            raise IntbedError(f"building {job.name}: the project's .pxd files changed while "
                              "it was being built; run intbed accel build again")
        # An instrumented extension writes its profile where its object was
        # made (a path compiled in), wherever the extension is moved.
        os.replace(so_file, out)
    return out


def module_job(name: str) -> Job:
    """The build of fast-path module ``name`` from its current source."""
    path = PACKAGE_ROOT.joinpath(*name.split(".")).with_suffix(".py")
    pxd = path.with_suffix(".pxd")
    return Job(name, path.read_text(encoding="utf-8"), artifact_path(name, module_source(path)),
               name, pxd.read_text(encoding="utf-8") if pxd.is_file() else None)


def module_jobs(names: Iterable[str] = MODULES) -> list[Job]:
    """A job for each fast-path module whose current source is not built yet."""
    return [job for job in map(module_job, names) if not job.out.is_file()]


def build_all(jobs: list[Job], workers: int | None = None,
              done: Callable[[Job], None] | None = None) -> None:
    """Build ``jobs`` in parallel (one per core by default)."""
    if not jobs:
        return
    compiler()
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        for job, _ in zip(jobs, pool.map(build, jobs), strict=True):
            if done is not None:
                done(job)
