"""Profile-guided builds of the compiled fast path (``intbed accel build``).

A packet-hop runs through some forty functions in a dozen extensions and
CPython; their code does not fit the first-level instruction cache, and
callgrind's cache model of the GPINT case counted about 1,400 instruction
fetch misses a hop. gcc, told which branches a real run takes, lays the
taken paths out together and moves error handling and untaken branches
away. So a build is made twice: once instrumented, run on a training
workload that writes each extension's profile beside its object, and once
with that profile. Extensions the workload does not run (a pipeline of a
program it does not load) are built as usual. The profile changes how the
code is laid out, never what it computes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fastpath.build import Job, build, build_all, compiler
from fastpath.loader import accel_dir

GENERATE = ("-fprofile-generate", "-fprofile-update=single")
"""Instrumented build: each extension writes ``module.so-module.gcda``
beside its object when the process that loaded it exits."""

USE = ("-fprofile-use", "-fprofile-partial-training", "-Wno-missing-profile",
       "-Wno-error=coverage-mismatch")
"""Final build of an extension that has a profile. Partial training: a
function the workload never ran is optimized as without a profile, not
for size (another program's path through the engine stays fast)."""

Trainer = Callable[[Path], None]
"""Runs the training workload with ``INTBED_ACCEL_DIR`` set to its
argument (artifacts in the interpreter's subdirectory, as ``accel_dir``
reads it); raises when it fails."""


def build_profiled(jobs: list[Job], train: Trainer, *, workers: int | None = None,
                   instrument: Callable[[Job], bool] = lambda job: True,
                   done: Callable[[Job], None] | None = None,
                   note: Callable[[str], None] = lambda line: None,
                   stage: Callable[[str], None] = lambda line: None) -> int:
    """Build ``jobs``, those for which ``instrument`` is true with a profile
    from ``train``; returns how many were built with one. If training
    fails, every job is built as usual and ``note`` says why; ``stage``
    hears where a long build is (the first two steps report no job done)."""
    if not jobs:
        return 0
    trained = [job for job in jobs if instrument(job)]
    plain = [job for job in jobs if not instrument(job)]
    if not trained:  # nothing the workload runs: no training run at all
        build_all(plain, workers=workers, done=done)
        return 0
    compiler()
    final = accel_dir()
    final.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(dir=final, prefix=".pgo-"))
    pool = ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1)
    try:
        work = {job.name: root / "work" / job.out.name for job in trained}
        train_base = root / "train"
        train_dir = train_base / final.name  # the interpreter's subdirectory
        # The training run loads what is built already from a copy of the
        # artifact tree (hard links), the instrumented builds in place of
        # what is missing.
        shutil.copytree(final, train_dir, copy_function=os.link,
                        ignore=shutil.ignore_patterns(".pgo-*", ".build-*"))

        def instrumented(job: Job) -> Path:
            return build(job, flags=GENERATE, workdir=work[job.name],
                         out=train_dir / job.out.relative_to(final))

        # The plain jobs build while the instrumented ones do; none is
        # reported done until its final artifact is in place.
        stage(f"building {len(trained)} instrumented extension(s)")
        plain_builds = [pool.submit(build, job) for job in plain]
        list(pool.map(instrumented, trained))
        stage("running the training workload on them")
        try:
            train(train_base)
            profiled = {job.name for job in trained if any(work[job.name].glob("*.gcda"))}
        except Exception as exc:  # noqa: BLE001 - any failure: build as usual
            note(f"training run failed ({exc}); building without a profile")
            profiled = set()
        stage(f"building {len(trained)} extension(s) again, {len(profiled)} with a profile")

        def final_build(job: Job) -> Path:
            if job.name in profiled:
                return build(job, flags=USE, workdir=work[job.name])
            return build(job)

        for job, future in zip(plain, plain_builds, strict=True):
            future.result()
            if done is not None:
                done(job)
        for job, _ in zip(trained, pool.map(final_build, trained), strict=True):
            if done is not None:
                done(job)
        return len(profiled)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(root, ignore_errors=True)
