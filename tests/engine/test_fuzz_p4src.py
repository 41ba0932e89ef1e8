"""Random packets through every program in p4src/ never raise."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dataplane.compiler.pipeline import compile_file
from dataplane.runtime.switch import Switch
from p4src import programs

PROGRAMS = programs()


def test_p4src_has_programs() -> None:
    assert PROGRAMS, "p4src/ should hold the programs intbed deploys"


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.one_of(
        st.binary(min_size=0, max_size=300),
        # Ethernet + IPv4 ethertype + random bytes, so the deeper parser
        # states and the controls run too.
        st.binary(min_size=0, max_size=200).map(lambda b: bytes(12) + b"\x08\x00" + b),
        st.binary(min_size=0, max_size=200).map(
            lambda b: bytes(12) + b"\x08\x00\x45" + b[:7] + b"\x40\xfd" + b[7:]),
    ),
    port=st.integers(0, 511),
)
def test_random_packets_never_raise(path: Path, data: bytes, port: int) -> None:
    sw = Switch(compile_file(path), seed=1)
    for out_port, packet in sw.process(port, data):
        assert 0 <= out_port < 512
        assert isinstance(packet, bytes)
