"""p4src/hula.p4 behaviour that STF cannot reach (its clock reads 0): the
per-port utilisation estimate, probes picking it up at ingress and egress,
and the best-hop registers."""

from __future__ import annotations

import struct

import pytest

from controller.hula import parse_probe, probe_frame
from dataplane.compiler.pipeline import CompiledProgram, compile_file
from dataplane.runtime.switch import Switch
from dataplane.runtime.tables import Lpm
from p4src import program_path

PROGRAM = program_path("hula")
WINDOW_US = 1 << 10  # UTIL_WINDOW_SHIFT = 10
SW_MAC, HOST_MAC = "02:00:00:00:00:08", "00:00:00:00:00:01"


@pytest.fixture(scope="module")
def program() -> CompiledProgram:
    return compile_file(PROGRAM)


class Clock:
    def __init__(self) -> None:
        self.us = 0

    def __call__(self) -> int:
        return self.us


def ipv4(dst: bytes, size: int) -> bytes:
    """Ethernet + IPv4 (UDP, TTL 64, checksum left 0: not checked for
    forwarding) padded to ``size`` bytes."""
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, size - 14, 1, 0, 64, 17, 0,
                     bytes([192, 168, 1, 10]), dst)
    frame = bytes.fromhex("000000000101" "00000000000a" "0800") + ip + b"\x1f\x90\x04\xd2"
    return frame + bytes(size - len(frame))


def make(program: CompiledProgram) -> tuple[Switch, Clock]:
    clock = Clock()
    sw = Switch(program, clock=clock)
    sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": Lpm(0x0A000003, 32)},
                 "MyIngress.ipv4_forward", {"dstAddr": 0x0C, "port": 3})
    sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": Lpm(0x0A000001, 32)},
                 "MyIngress.ipv4_forward", {"dstAddr": 0x0A, "port": 1})
    node = sw.mc_node_create(0, [1, 2])
    sw.mc_group_create(4)
    sw.mc_node_associate(4, node)
    sw.table_add("MyIngress.probe_replicate", {"standard_metadata.ingress_port": 3},
                 "MyIngress.set_probe_group", {"grp": 4})
    return sw, clock


def register(sw: Switch, name: str) -> list[int]:
    names = [e.qname for e in sw.program.externs]
    return sw.externs[names.index(name)].values


def send_bytes(sw: Switch, clock: Clock, at_us: int, port_dst: bytes, size: int) -> None:
    clock.us = at_us
    out = sw.process(0, ipv4(port_dst, size))
    assert len(out) == 1


TO_PORT3, TO_PORT1 = bytes([10, 0, 0, 3]), bytes([10, 0, 0, 1])


def test_utilisation_windows_and_smoothing(program: CompiledProgram) -> None:
    """Bytes per 1024 us window, smoothed util = util/2 + bytes/2 when a
    window closes, halved once more per idle window, forgotten after 32."""
    sw, clock = make(program)
    util, window, nbytes = (register(sw, n) for n in ("port_util", "util_window", "util_bytes"))
    send_bytes(sw, clock, 0, TO_PORT3, 100)
    send_bytes(sw, clock, 500, TO_PORT3, 300)
    assert (util[3], window[3], nbytes[3]) == (0, 0, 400)
    send_bytes(sw, clock, WINDOW_US, TO_PORT3, 60)  # closes window 0: 0/2 + 400/2
    assert (util[3], window[3], nbytes[3]) == (200, 1, 60)
    send_bytes(sw, clock, 3 * WINDOW_US + 5, TO_PORT3, 60)  # gap 2: (100 + 30) >> 1
    assert (util[3], window[3], nbytes[3]) == (65, 3, 60)
    send_bytes(sw, clock, 35 * WINDOW_US, TO_PORT3, 60)  # gap 32: forgotten
    assert (util[3], window[3], nbytes[3]) == (0, 35, 60)
    assert util[1] == nbytes[1] == 0  # per port


def busy(sw: Switch, clock: Clock) -> None:
    """Port 3: 800 bytes in window 0; port 1: 2000 bytes; at 1024 us both
    close window 0 (util 400 and 1000) with another 100-byte packet."""
    send_bytes(sw, clock, 0, TO_PORT3, 800)
    send_bytes(sw, clock, 0, TO_PORT1, 1000)
    send_bytes(sw, clock, 1, TO_PORT1, 1000)
    send_bytes(sw, clock, WINDOW_US, TO_PORT3, 100)
    send_bytes(sw, clock, WINDOW_US, TO_PORT1, 100)
    assert register(sw, "port_util")[3] == 400 and register(sw, "port_util")[1] == 1000


def test_probe_collects_arrival_and_departure_port_utilisation(program: CompiledProgram) -> None:
    sw, clock = make(program)
    busy(sw, clock)
    clock.us = WINDOW_US + 10
    out = sw.process(3, probe_frame(9, 1, SW_MAC, HOST_MAC, max_util=50))
    # Ingress: max(50, util of arrival port 3 = 400) = 400; learned as such.
    assert register(sw, "MyIngress.best_util")[9] == 400
    assert register(sw, "MyIngress.best_hop")[9] == 3
    # Egress: port 1's copy also folds in port 1's util (1000), port 2's
    # (idle) keeps 400. Copies are otherwise unchanged, 64 bytes.
    assert [(p, parse_probe(f)) for p, f in out] == [(1, (9, 1000, 1)), (2, (9, 400, 1))]
    assert all(len(f) == 64 for _, f in out)
    assert out[1][1] == probe_frame(9, 1, SW_MAC, HOST_MAC, max_util=400)


def test_best_hop_rules(program: CompiledProgram) -> None:
    """A lower path utilisation wins; a higher one from another port does
    not; a probe through the current best hop always refreshes it. Learning
    happens on consumed probes too (ports 5 and 6 have no entry)."""
    sw, _ = make(program)
    known, hop, util = (register(sw, f"MyIngress.{n}")
                        for n in ("best_known", "best_hop", "best_util"))

    def probe(port: int, u: int) -> tuple[int, int, int]:
        assert sw.process(port, probe_frame(9, 0, SW_MAC, HOST_MAC, max_util=u)) == []
        return known[9], hop[9], util[9]

    assert (known[9], hop[9], util[9]) == (0, 0, 0)
    assert probe(5, 50) == (1, 5, 50)   # first probe: learned
    assert probe(6, 70) == (1, 5, 50)   # worse, other port: ignored
    assert probe(6, 20) == (1, 6, 20)   # better: new best hop
    assert probe(6, 90) == (1, 6, 90)   # through the best hop: refreshed
    assert probe(5, 60) == (1, 5, 60)   # now better than 90
    assert probe(5, 60) == (1, 5, 60)
    assert known[8] == 0 and known[10] == 0  # per origin ToR


def test_origin_beyond_the_registers_is_flooded_not_learned(program: CompiledProgram) -> None:
    sw, _ = make(program)
    out = sw.process(3, probe_frame(1024, 7, SW_MAC, HOST_MAC, max_util=3))
    assert [(p, parse_probe(f)) for p, f in out] == [(1, (1024, 3, 7)), (2, (1024, 3, 7))]
    assert sum(register(sw, "MyIngress.best_known")) == 0
