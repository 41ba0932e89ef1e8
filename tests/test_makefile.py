"""``make install`` makes ``.venv`` with the distribution's interpreter
where it is new enough (the sim runs faster on Debian's optimized build),
else with ``python3`` on PATH, and ``PYTHON=`` overrides both. Checked with
``make -n``, which prints the recipe without running it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SYSTEM_PYTHON = Path("/usr/bin/python3")


def _venv_line(*args: str) -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    env = {k: v for k, v in os.environ.items() if k != "PYTHON"}  # ?= would take it
    proc = subprocess.run(["make", "-n", "-C", str(REPO_ROOT), "install", *args], env=env,
                          capture_output=True, text=True, check=True, timeout=60)
    lines = [ln for ln in proc.stdout.splitlines() if " -m venv " in ln]
    assert len(lines) == 1, proc.stdout
    return lines[0]


def _system_python_is_new_enough() -> bool:
    if not SYSTEM_PYTHON.is_file():
        return False
    proc = subprocess.run([str(SYSTEM_PYTHON), "-c",
                           "import sys; sys.exit(sys.version_info < (3, 11))"], check=False)
    return proc.returncode == 0


def test_the_venv_is_made_with_the_distributions_python_where_it_is_new_enough() -> None:
    expected = str(SYSTEM_PYTHON) if _system_python_is_new_enough() else "python3"
    assert _venv_line().endswith(f"|| {expected} -m venv .venv")


def test_python_on_the_command_line_picks_the_interpreter() -> None:
    assert _venv_line("PYTHON=python3.12").endswith("|| python3.12 -m venv .venv")


def _recipe(target: str) -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    return subprocess.run(["make", "-n", "-C", str(REPO_ROOT), target], capture_output=True,
                          text=True, check=True, timeout=60).stdout


def test_test_pure_runs_the_suite_with_the_fast_path_off() -> None:
    recipe = _recipe("test-pure")
    assert "INTBED_PURE_PYTHON=1" in recipe and "-m pytest -q" in recipe
    assert "exit 5" not in recipe and "rc -eq 5" in recipe  # no tests collected is a failure


def test_accel_builds_and_clean_removes_builds_but_never_results() -> None:
    assert "intbed accel build" in _recipe("accel")
    clean = _recipe("clean")
    assert "intbed accel clean" in clean and ".accel" in clean and "__pycache__" in clean
    assert "results" not in clean
