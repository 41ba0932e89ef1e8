"""Recirculation on the sim target takes virtual time: a packet that loops
until a timestamp moves (as GPINT's copy store does) ends, and each pass
costs one ``recirculation_ns``."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.errors import IntbedError
from dataplane.compiler.pipeline import compile_file
from dataplane.runtime.switch import Switch
from dataplane.targets.sim.events import Simulator
from dataplane.targets.sim.network import RECIRCULATION_NS, SimSwitch

# Recirculates until the switch's clock has moved WAIT_US past the time the
# packet first arrived (kept in a preserved field list), then sends it out.
PROGRAM = r"""
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers_t { eth_t eth; }
struct meta_t { @field_list(1) bit<48> first; @field_list(1) bit<16> passes; }
parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (m.passes == 0) { m.first = sm.ingress_global_timestamp; }
        sm.egress_spec = 2;
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (sm.egress_global_timestamp - m.first < WAIT_US) {
            m.passes = m.passes + 1;
            recirculate_preserving_field_list(1);
        } else {
            h.eth.type = m.passes;
        }
    }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


class Sink:
    def __init__(self) -> None:
        self.got: list[tuple[int, bytes]] = []

    def receive(self, port: int, packet: bytes) -> None:
        self.got.append((port, packet))


@pytest.mark.parametrize("wait_us, recirc_ns", [(1000, RECIRCULATION_NS), (1000, 30_000),
                                                (0, RECIRCULATION_NS)])
def test_a_loop_until_a_deadline_ends_after_the_expected_passes(
        tmp_path: Path, wait_us: int, recirc_ns: int) -> None:
    import random

    from dataplane.targets.sim.network import Wire

    src = tmp_path / "loop.p4"
    src.write_text(PROGRAM.replace("WAIT_US", str(wait_us)))
    sim = Simulator()
    engine = Switch(compile_file(src), clock=lambda: sim.now_ns // 1000)
    sw = SimSwitch(sim, "s1", engine, recirculation_ns=recirc_ns)
    sink = Sink()
    sw.add_port(2, Wire(sim, sink, 0, bandwidth_bps=10**9, delay_ns=0, loss=0.0,
                        rng=random.Random(0)))
    sw.receive(1, bytes(12) + b"\x00\x00" + bytes(50))
    sim.run(None)
    [(_, out)] = sink.got
    passes = int.from_bytes(out[12:14], "big")
    # Each pass advances virtual time by recirc_ns: the first pass whose
    # egress sees now - first >= wait ends the loop.
    expected = -(-wait_us * 1000 // recirc_ns) if wait_us else 0
    assert passes == expected == sw.recirculated
    assert sim.now_ns >= wait_us * 1000


def test_a_recirculation_pass_must_take_time() -> None:
    with pytest.raises(IntbedError, match="must take time"):
        SimSwitch(Simulator(), "s1", None, recirculation_ns=0)  # type: ignore[arg-type]
