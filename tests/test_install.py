"""intbed installed with ``pip install`` (not editable) into a fresh venv
works from any directory: a checkout is not needed at run time.

The other tests import intbed from the checkout (conftest puts it on
sys.path), so a file missing from the package data, or code that finds its
files from the repository root, passes them and fails only for a user who
installed intbed. This test builds the venv once per session (about a minute
with pip's download cache warm; pip's default cache is reused between runs)
and runs the console scripts from a directory that is not the checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.install

REPO_ROOT = Path(__file__).resolve().parents[1]

# Not part of the source a clean clone builds from (see .gitignore): copying
# them would be slow, and a stale build/lib would leak into the wheel.
_NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", ".venv-*", "results", "build", "dist", "*.egg-info", ".eggs",
    "__pycache__", "*.py[cod]", ".pytest_cache", ".ruff_cache", ".hypothesis")

# Generous caps, so a hung download fails the test instead of the CI job.
VENV_TIMEOUT_S = 120
PIP_TIMEOUT_S = 420
RUN_TIMEOUT_S = 180


def clean_env(venv: Path) -> dict[str, str]:
    """This environment without anything that would make the venv's Python
    find the checkout (PYTHONPATH) or another environment."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    env["MPLBACKEND"] = "Agg"
    return env


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float,
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def explain(proc: subprocess.CompletedProcess[str]) -> str:
    return (f"{' '.join(map(str, proc.args))} exited {proc.returncode}\n"
            f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}")


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plain venv with intbed installed from a copy of this working tree.

    The copy keeps pip's in-tree build from writing build/ and
    intbed.egg-info into the checkout others are working in."""
    base = tmp_path_factory.mktemp("install")
    source = base / "source"
    shutil.copytree(REPO_ROOT, source, ignore=_NOT_SOURCE)
    venv = base / "venv"
    started = time.monotonic()
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True,
                          text=True, timeout=VENV_TIMEOUT_S, check=False)
    assert made.returncode == 0, explain(made)
    env = clean_env(venv)
    python = str(venv / "bin" / "python")
    # Building in the venv itself needs setuptools>=64 (pyproject's
    # build-system) and wheel; without them pip builds in an isolated
    # environment it downloads (or takes from its cache).
    has_backend = run([python, "-c", "import setuptools, wheel, sys; "
                       "sys.exit(int(setuptools.__version__.split('.')[0]) < 64)"],
                      base, env, 60).returncode == 0
    pip = [python, "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    if has_backend:
        pip.append("--no-build-isolation")
    installed = run([*pip, str(source)], base, env, PIP_TIMEOUT_S)
    assert installed.returncode == 0, explain(installed)
    elapsed = time.monotonic() - started
    print(f"\nfresh venv with intbed installed in {elapsed:.0f} s")
    return venv


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A working directory that is neither the checkout nor inside it."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    return cwd


def test_installed_packages_come_from_the_venv(venv: Path, elsewhere: Path) -> None:
    proc = run([str(venv / "bin" / "python"), "-c",
                "import common, intbed, p4src, dataplane; "
                "print(common.__file__, intbed.__file__, p4src.__file__, dataplane.__file__)"],
               elsewhere, clean_env(venv), 60)
    assert proc.returncode == 0, explain(proc)
    for path in proc.stdout.split():
        assert Path(path).resolve().is_relative_to(venv.resolve()), path


def test_run_quick_experiment(venv: Path, elsewhere: Path) -> None:
    out = elsewhere / "fig9"
    proc = run([str(venv / "bin" / "intbed"), "run", "intlabel-fig9", "--quick",
                "--out", str(out)], elsewhere, clean_env(venv), RUN_TIMEOUT_S)
    assert proc.returncode == 0, explain(proc)
    for name in ("config.json", "metrics.csv", "figure.png", "summary.md"):
        assert (out / name).is_file(), f"{name} missing from {sorted(os.listdir(out))}"
    assert not (elsewhere / "results").exists()


def test_p4_check_installed_programs(venv: Path, elsewhere: Path) -> None:
    env = clean_env(venv)
    found = run([str(venv / "bin" / "python"), "-c",
                 "import p4src; print(p4src.program_path('l3_forward'))"], elsewhere, env, 60)
    assert found.returncode == 0, explain(found)
    program = Path(found.stdout.strip())
    assert program.is_file() and program.resolve().is_relative_to(venv.resolve()), program
    # intlabel.p4 #includes include/intlabel_headers.p4, so both must ship.
    for name in ("l3_forward", "intlabel", "hula"):
        proc = run([str(venv / "bin" / "intbed"), "p4", "check",
                    str(program.with_name(f"{name}.p4"))], elsewhere, env, RUN_TIMEOUT_S)
        assert proc.returncode == 0, explain(proc)
        assert proc.stdout.startswith("ok: "), proc.stdout


def test_switch_entry_point(venv: Path, elsewhere: Path) -> None:
    proc = run([str(venv / "bin" / "intbed-switch"), "--help"], elsewhere,
               clean_env(venv), 60)
    assert proc.returncode == 0, explain(proc)
    assert "usage: intbed-switch" in proc.stdout
