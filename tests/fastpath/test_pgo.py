"""Profile-guided builds: the instrumented extension runs in the training
workload and writes a profile, the final build uses it and computes what
the plain build computes; a failed training run still leaves every
extension built, and says so."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from common.errors import IntbedError
from common.paths import child_env
from fastpath import loader
from fastpath.build import Job, compiler
from fastpath.pgo import build_profiled

SOURCE = textwrap.dedent("""
    def collatz(n):
        steps = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        return steps
    """)

_RUN = textwrap.dedent("""
    import importlib.util, json, sys
    spec = importlib.util.spec_from_file_location(sys.argv[2], sys.argv[1])
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    print(json.dumps([m.collatz(n) for n in range(1, 2000)]))
    """)


def _run(artifact: Path, name: str) -> list[int]:
    proc = subprocess.run([sys.executable, "-c", _RUN, str(artifact), name],
                          capture_output=True, text=True, check=True, env=child_env())
    return json.loads(proc.stdout)


def _expected() -> list[int]:
    namespace: dict = {}
    exec(SOURCE, namespace)  # noqa: S102 - the test's own source
    return [namespace["collatz"](n) for n in range(1, 2000)]


@pytest.fixture
def jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Job]:
    try:
        compiler()
    except IntbedError as exc:
        pytest.skip(str(exc))
    monkeypatch.setenv(loader.DIR_ENV, str(tmp_path / "accel"))
    return [Job(name, SOURCE, loader.artifact_path(name, SOURCE.encode() + name.encode()))
            for name in ("pgopkg_trained", "pgopkg_plain")]


def test_a_trained_extension_is_built_with_its_profile(jobs: list[Job]) -> None:
    trained, plain = jobs
    seen: list[Path] = []

    def train(base: Path) -> None:
        # The instrumented build sits where the loader looks under the
        # training run's INTBED_ACCEL_DIR; the plain job is not there.
        where = base / loader.accel_dir().name / trained.out.relative_to(loader.accel_dir())
        assert where.is_file() and not (base / loader.accel_dir().name /
                                        plain.out.relative_to(loader.accel_dir())).exists()
        seen.append(where)
        assert _run(where, trained.name) == _expected()

    done: list[str] = []
    stages: list[str] = []
    n = build_profiled(jobs, train, instrument=lambda job: job is trained,
                       done=lambda job: done.append(job.name), stage=stages.append)
    assert n == 1 and len(seen) == 1
    assert stages == ["building 1 instrumented extension(s)",
                      "running the training workload on them",
                      "building 1 extension(s) again, 1 with a profile"]
    assert sorted(done) == sorted(job.name for job in jobs)
    for job in jobs:
        assert _run(job.out, job.name) == _expected()
    # Nothing of the two builds is left beside the artifacts.
    assert sorted(p.name for p in loader.accel_dir().iterdir()) == sorted(
        job.out.name for job in jobs)


def test_a_failed_training_run_builds_everything_without_a_profile(jobs: list[Job]) -> None:
    notes: list[str] = []

    def train(base: Path) -> None:
        raise RuntimeError("exit 1: no such case")

    n = build_profiled(jobs, train, note=notes.append)
    assert n == 0
    assert notes == ["training run failed (exit 1: no such case); building without a profile"]
    for job in jobs:
        assert _run(job.out, job.name) == _expected()
    assert not [p for p in loader.accel_dir().iterdir() if p.name.startswith(".")]


def test_a_training_run_that_never_loads_an_extension_leaves_it_unprofiled(
        jobs: list[Job]) -> None:
    n = build_profiled(jobs, lambda base: None)
    assert n == 0
    for job in jobs:
        assert _run(job.out, job.name) == _expected()


def test_no_training_run_when_no_job_is_one_the_workload_runs(jobs: list[Job]) -> None:
    def train(base: Path) -> None:
        raise AssertionError("a training run with nothing to train")

    assert build_profiled(jobs, train, instrument=lambda job: False) == 0
    for job in jobs:
        assert _run(job.out, job.name) == _expected()
