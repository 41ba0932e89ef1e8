"""Building the compiled fast path (``common.accel``): Cython turns a Python
source into C, the system's C compiler into an extension.

The directives keep Python's semantics: annotations are not taken as C
types (an ``int`` stays a Python integer of any width), functions stay
introspectable Python callables. What changes is that no bytecode is
interpreted.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from common.accel import MODULES, artifact_path
from common.errors import IntbedError
from common.paths import PACKAGE_ROOT

DIRECTIVES = ("annotation_typing=False", "binding=True", "language_level=3")
OPTIMIZE = "-O2"


@dataclass(frozen=True)
class Job:
    """One extension to build: module ``name`` from ``source`` into ``out``."""

    name: str
    source: str
    out: Path
    label: str = ""
    """What progress lines call it (default: ``name``)."""


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


def build(job: Job) -> Path:
    """Build one extension; the artifact appears whole or not at all."""
    cc = compiler()
    job.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=job.out.parent, prefix=".build-") as tmp:
        src = Path(tmp) / (job.name.rsplit(".", 1)[-1] + ".py")
        src.write_text(job.source, encoding="utf-8")
        c_file = Path(tmp) / "module.c"
        cython = [sys.executable, "-m", "cython", "--module-name", job.name,
                  *(arg for d in DIRECTIVES for arg in ("-X", d)), "-o", str(c_file), str(src)]
        so_file = Path(tmp) / "module.so"
        gcc = [cc, "-shared", "-fPIC", OPTIMIZE, "-fwrapv", "-fno-strict-aliasing", "-DNDEBUG",
               "-I" + sysconfig.get_paths()["include"], str(c_file), "-o", str(so_file)]
        for argv in (cython, gcc):
            proc = subprocess.run(argv, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-6:])
                raise IntbedError(f"building {job.name} failed ({Path(argv[0]).name} exit "
                                  f"{proc.returncode}): {tail}")
        os.replace(so_file, job.out)
    return job.out


def module_jobs(names: Iterable[str] = MODULES) -> list[Job]:
    """A job for each fast-path module whose current source is not built yet."""
    jobs = []
    for name in names:
        path = PACKAGE_ROOT.joinpath(*name.split(".")).with_suffix(".py")
        source = path.read_bytes()
        out = artifact_path(name, source)
        if not out.is_file():
            jobs.append(Job(name, source.decode("utf-8"), out))
    return jobs


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
