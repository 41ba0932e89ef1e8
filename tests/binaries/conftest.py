"""Fake p4c and BMv2 programs on PATH for the target tests.

The fakes live in ``fakebin/`` as Python scripts; ``fake_tools`` puts shell
wrappers named like the real binaries in a temporary directory at the front
of PATH, each running its script with this interpreter, and collects the
events the fakes record (``fakebin/_fakelib.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from common.paths import child_env

HERE = Path(__file__).resolve().parent
FAKEBIN = HERE / "fakebin"
FAKES = {"p4c": "p4c", "simple_switch": "simple_switch",
         "simple_switch_grpc": "simple_switch_grpc", "simple_switch_CLI": "simple_switch_CLI"}


class FakeTools:
    """The fake binaries of one test and what they recorded."""

    def __init__(self, bindir: Path, events: Path) -> None:
        self.bindir = bindir
        self.events_path = events

    def add(self, name: str, script: str, prog: str | None = None) -> Path:
        """A wrapper called ``name`` that runs ``fakebin/<script>.py``."""
        path = self.bindir / name
        env = f'FAKE_PROG="{prog}" ' if prog else ""
        path.write_text(f'#!/bin/sh\n{env}exec "{sys.executable}" '
                        f'"{FAKEBIN / script}.py" "$@"\n')
        path.chmod(0o755)
        return path

    def remove(self, name: str) -> None:
        (self.bindir / name).unlink()

    def events(self, prog: str | None = None) -> list[dict]:
        if not self.events_path.exists():
            return []
        rows = [json.loads(line) for line in self.events_path.read_text().splitlines()]
        return [r for r in rows if prog is None or r["prog"] == prog]


@pytest.fixture
def fake_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeTools:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tools = FakeTools(bindir, tmp_path / "events.jsonl")
    for name, script in FAKES.items():
        tools.add(name, script)
    # Only the fakes and the shell's basics: a real p4c or BMv2 must not be found.
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    monkeypatch.setenv("FAKE_EVENTS", str(tools.events_path))
    monkeypatch.setenv("FAKE_P4C_JSON", str(HERE / "fwd.json"))
    monkeypatch.setenv("PYTHONPATH", child_env()["PYTHONPATH"])  # the fakes import common
    for var in ("FAKE_P4C_STDERR", "FAKE_P4C_VERSION", "FAKE_P4C_P4INFO", "FAKE_SWITCH_EXIT",
                "FAKE_THRIFT_ERROR", "FAKE_SWITCH_MANGLE", "FAKE_PROG"):
        monkeypatch.delenv(var, raising=False)
    return tools


@pytest.fixture
def no_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH without p4c or BMv2."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    return empty
