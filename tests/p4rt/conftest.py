"""Fixtures: a compiled program in a Switch, its RuntimeService, and a client
talking to it through the in-process transport."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from common.paths import shared_dir
from controller.p4rt import InProcessTransport, P4RuntimeClient
from dataplane.compiler.pipeline import compile_file
from dataplane.control.service import RuntimeService
from dataplane.runtime.switch import Switch
from p4src import program_path

HERE = Path(__file__).resolve().parent
SAMPLES = shared_dir() / "p4-conformance" / "samples"
PACKET_IO = HERE / "packet_io.p4"
CPU_PORT = 64


@dataclass
class Rig:
    switch: Switch
    service: RuntimeService
    client: P4RuntimeClient


def make_rig(path: Path, p4info: Any = None, **service_args: Any) -> Rig:
    switch = Switch(compile_file(path))
    service = RuntimeService(switch, p4info, **service_args)
    client = P4RuntimeClient(InProcessTransport(service), service.p4info)
    return Rig(switch, service, client)


@pytest.fixture
def l3() -> Rig:
    return make_rig(program_path("l3_forward"))


@pytest.fixture
def io() -> Rig:
    return make_rig(PACKET_IO, cpu_port=CPU_PORT)


@pytest.fixture
def samples() -> Path:
    if not SAMPLES.is_dir():
        pytest.skip("p4c's samples are not checked out beside the repository")
    return SAMPLES.resolve()


@pytest.fixture
def make() -> Any:
    """``make(path, p4info=None, **service_args) -> Rig``."""
    return make_rig
