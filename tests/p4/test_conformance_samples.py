"""Every p4c STF sample in ``../shared/p4-conformance/samples`` is a test
case of its own, once on the compiled fast path and once in pure Python:
compiled by intbed's front end and run on its engine, it must give BMv2's
recorded output (``intbed p4 conformance`` runs the same cases). A
regression in one sample, on either path, then fails ``make test`` by name.

This process runs the cases of its own path; the other path's cases run
all together in one child process (``INTBED_PURE_PYTHON=1``), started with
the first case, and each case reads its result. Where the fast path is not
built, or this process is pure Python (``make test-pure``), the compiled
cases skip and say so, unless ``INTBED_REQUIRE_ACCEL=1`` makes a missing
build a failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from common.paths import child_env
from dataplane.testing.stf import find_conformance_cases, run_conformance_case
from fastpath import loader

SAMPLES = (Path(__file__).resolve().parents[2] / ".." / "shared" / "p4-conformance"
           / "samples").resolve()
CASES = find_conformance_cases(SAMPLES) if SAMPLES.is_dir() else []
MODES = ("compiled", "pure")
HERE = "compiled" if loader.enabled() else "pure"
ENGINE = "dataplane.runtime.switch"  # a fast-path module every sample runs through

_CHILD = """
import json, sys
from pathlib import Path
from dataplane.testing.stf import run_conformance_case
from fastpath import loader
results = {}
for path in sys.argv[1:]:
    name, passed, reason = run_conformance_case(Path(path))
    results[name] = [passed, reason]
print(json.dumps({"results": results, "modules": loader.loaded()}))
"""


class PurePython:
    """All the samples in a pure-Python child, started at once, read when
    first asked for."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD, *map(str, CASES)], text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=child_env({loader.PURE_ENV: "1"}))
        self._report: dict | None = None

    def report(self) -> dict:
        if self._report is None:
            out, err = self._proc.communicate(timeout=600)
            assert self._proc.returncode == 0, err[-3000:]
            self._report = json.loads(out.strip().splitlines()[-1])
        return self._report

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.communicate()


@pytest.fixture(scope="module")
def pure_child() -> Iterator[PurePython | None]:
    child = PurePython() if HERE == "compiled" and CASES else None
    yield child
    if child is not None:
        child.close()


def _not_compiled(why: str) -> None:
    if HERE == "compiled" and os.environ.get("INTBED_REQUIRE_ACCEL"):
        pytest.fail(why)
    pytest.skip(why)


@pytest.mark.skipif(not CASES, reason=f"no conformance samples at {SAMPLES}")
@pytest.mark.parametrize(("mode", "sample"),
                         [(m, p) for m in MODES for p in CASES] or [("none", None)],
                         ids=[f"{p.stem}-{m}" for m in MODES for p in CASES] or ["none"])
def test_the_sample_gives_bmv2s_output(mode: str, sample: Path,
                                       pure_child: PurePython | None) -> None:
    if mode == "compiled" and HERE == "pure":
        pytest.skip(f"{loader.PURE_ENV} is set: this run is pure Python")
    if mode == HERE:
        name, passed, reason = run_conformance_case(sample)
        modules = loader.loaded()
    else:
        assert pure_child is not None
        report = pure_child.report()
        name = sample.stem
        passed, reason = report["results"][name]
        modules = report["modules"]
    if mode == "compiled" and modules.get(ENGINE) != "compiled":
        _not_compiled(f"{ENGINE} runs as {modules.get(ENGINE)}: run intbed accel build")
    if mode == "pure":
        assert set(modules.values()) <= {"python"}, modules
    assert passed, f"{name} ({mode}): {reason}"


def test_the_samples_are_all_there() -> None:
    if not SAMPLES.is_dir():
        pytest.skip(f"no conformance samples at {SAMPLES}")
    assert len(CASES) == 117
