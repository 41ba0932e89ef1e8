"""The official p4runtime-shell in a virtual environment of its own.

p4runtime-shell pins protobuf < 3.21 (and p4runtime 1.4.1), which cannot
live beside intbed's protobuf, so it gets ``.venv-p4rt-shell`` in the
repository root, made on first use and reused. ``intbed shell`` and the
interoperability tests both start it from here.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

from common.errors import IntbedError
from common.paths import PACKAGE_ROOT

VENV = PACKAGE_ROOT / ".venv-p4rt-shell"
# The release whose pins (protobuf<3.21, p4runtime==1.4.1) intbed was checked against.
SHELL_REQUIREMENT = "p4runtime-shell==0.0.6"
PIP_TIMEOUT_S = 900


class ShellEnvError(IntbedError):
    """The p4runtime-shell environment cannot be made on this machine."""


def clean_env() -> dict[str, str]:
    """No PYTHONPATH or user site, and the shell's venv as the active one:
    the shell sees only its own packages (and IPython does not warn that
    another venv is active)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONNOUSERSITE"] = "1"
    env["VIRTUAL_ENV"] = str(VENV)
    return env


def _run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=clean_env())


def _tail(text: str, lines: int = 8) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])


def is_ready() -> bool:
    """The environment is there, complete, with the pinned release."""
    ready = VENV / ".intbed-ready"
    return ((VENV / "bin" / "python").exists() and ready.exists()
            and ready.read_text() == SHELL_REQUIREMENT)


def shell_python() -> Path:
    """The environment's interpreter, made on first use (under a file lock, so
    parallel callers build it once); a half-made environment is made again."""
    python = VENV / "bin" / "python"
    ready = VENV / ".intbed-ready"
    with open(PACKAGE_ROOT / ".venv-p4rt-shell.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_ready():
            return python
        shutil.rmtree(VENV, ignore_errors=True)
        made = _run([sys.executable, "-m", "venv", str(VENV)], 300)
        if made.returncode != 0:
            raise ShellEnvError(f"cannot create the p4runtime-shell venv ({sys.executable} "
                                f"-m venv failed): {_tail(made.stderr)}")
        try:
            pip = _run([str(python), "-m", "pip", "install", "--disable-pip-version-check",
                        "-q", SHELL_REQUIREMENT], PIP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            shutil.rmtree(VENV, ignore_errors=True)
            raise ShellEnvError(f"cannot create the p4runtime-shell venv: pip install "
                                f"{SHELL_REQUIREMENT} took over {PIP_TIMEOUT_S} s "
                                "(no PyPI access?)") from None
        if pip.returncode != 0:
            shutil.rmtree(VENV, ignore_errors=True)
            raise ShellEnvError(f"cannot create the p4runtime-shell venv: pip install "
                                f"{SHELL_REQUIREMENT} failed (no PyPI access?): "
                                f"{_tail(pip.stderr)}")
        check = _run([str(python), "-c", "import p4runtime_sh.shell"], 120)
        if check.returncode != 0:
            raise ShellEnvError(f"p4runtime-shell does not import in {VENV}: "
                                f"{_tail(check.stderr)}")
        ready.write_text(SHELL_REQUIREMENT)
    return python


def shell_argv(python: Path, grpc_addr: str, device_id: int,
               election_id: tuple[int, int]) -> list[str]:
    """The interactive shell attached to one device (it fetches the P4Info
    from the switch, so the pipeline must already be set)."""
    return [str(python), "-m", "p4runtime_sh", "--grpc-addr", grpc_addr,
            "--device-id", str(device_id), "--election-id", f"{election_id[0]},{election_id[1]}"]
