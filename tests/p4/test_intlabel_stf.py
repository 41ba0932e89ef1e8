"""p4src/intlabel.p4: its STF tests are there, and the behaviour STF cannot reach.

The intlabel_*.stf files are run by test_stf_programs.py with every other
STF file; this module checks that the set is complete and that each of them
runs against intlabel.p4.

intbed's STF runner holds the switch clock at 0 and has no queues; the STF
files are written to hold on real BMv2 as well (timestamps as ``*``, T so
large that time never decides), except intlabel_clock0.stf. So the
time-dependent rules (Base A's interval, Base B's rest time and F2/F3
probabilities, Pro's shortened interval), the queue metadata in an item and
the cost of the last hop in pipeline passes are checked here on a Switch
with a controlled clock. Formats: docs/intlabel_format.md.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from common.checksum import internet_checksum
from dataplane.compiler.pipeline import CompiledProgram, compile_file
from dataplane.runtime.switch import Switch
from dataplane.runtime.tables import Lpm
from orchestration.binaries.bmv2_stf import program_for
from p4src import program_path

HERE = Path(__file__).resolve().parent
PROGRAM = program_path("intlabel")
STF_FILES = sorted(HERE.glob("intlabel_*.stf"))

INT_TYPE = 253
ITEM_BYTES = 32
SWITCH_ID = 0x0A0B0C0D
HOST_PORT, COLLECTOR_PORT, REPORT_SESSION = 3, 9, 500
F1, F2, F3 = 0, 1, 2
BASE_A, BASE_B = 0, 1


@pytest.fixture(scope="module")
def program() -> CompiledProgram:
    return compile_file(PROGRAM)


def test_intlabel_stf_files_exist_and_target_intlabel_p4() -> None:
    names = {p.stem for p in STF_FILES}
    assert {"intlabel_encap", "intlabel_base_a", "intlabel_base_b", "intlabel_pro",
            "intlabel_specific", "intlabel_last_hop", "intlabel_ecmp"} <= names
    # program_for picks a program by name prefix; a new p4src/intlabel_*.p4
    # must not take these files away from intlabel.p4 unnoticed.
    assert {stf.name: program_for(stf) for stf in STF_FILES} == {
        stf.name: PROGRAM for stf in STF_FILES}


# --- packets --------------------------------------------------------------------------------


def _ipv4(proto: int, total: int, ttl: int = 64) -> bytes:
    head = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 1, 0, ttl, proto, 0,
                       bytes([10, 0, 1, 10]), bytes([10, 0, 3, 3]))
    return head[:10] + struct.pack("!H", internet_checksum(head)) + head[12:]


UDP = struct.pack("!HHHH", 1234, 5678, 12, 0) + b"data"
ETH = bytes.fromhex("000000000101" "00000000000a" "0800")


def item(switch_id: int, bottom: bool = False) -> bytes:
    return struct.pack("!IHH", switch_id, 5, 2) + bytes(12) + struct.pack(
        "!IB3sB3s", 0, 0x80 if bottom else 0, bytes(3), 0, bytes(3))


def plain() -> bytes:
    return ETH + _ipv4(17, 20 + len(UDP)) + UDP


def labeled(int_num: int, items: list[bytes]) -> bytes:
    body = bytes([17, int_num]) + b"".join(items) + UDP
    return ETH + _ipv4(INT_TYPE, 20 + len(body)) + body


def int_num_of(out: bytes) -> int | None:
    """INT_num of a forwarded packet, None when it carries no INT."""
    return out[35] if out[23] == INT_TYPE else None


class Clock:
    """Switch clock in microseconds, moved by the test."""

    def __init__(self) -> None:
        self.t = 0

    def __call__(self) -> int:
        return self.t


def make_switch(program: CompiledProgram, clock: Callable[[], int] | None = None, *,
                T: int = 1000, T1: int = 0, max_hop: int = 5, f: int = F1,
                mode: int = BASE_A, seed: int = 7) -> Switch:
    sw = Switch(program, seed=seed, clock=clock)
    sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": Lpm(0x0A000300, 24)},
                 "MyIngress.ipv4_forward", {"dstAddr": 3, "port": HOST_PORT})
    sw.table_set_default("MyEgress.int_config", "MyEgress.set_config", {
        "switch_id": SWITCH_ID, "T": T, "T1": T1, "max_hop": max_hop, "f": f, "mode": mode})
    return sw


def send(sw: Switch, data: bytes) -> bytes:
    """Forward one packet that must come out on HOST_PORT alone."""
    out = sw.process(1, data)
    assert [port for port, _ in out] == [HOST_PORT]
    return out[0][1]


# --- time-dependent labeling ----------------------------------------------------------------


def test_base_a_labels_again_only_after_more_than_t(program: CompiledProgram) -> None:
    clock = Clock()
    sw = make_switch(program, clock, T=1000)
    expected = {5000: 1, 5500: None, 6000: None, 6001: 1, 7001: None, 7002: 1}
    for t, want in expected.items():
        clock.t = t
        out = send(sw, plain())
        assert int_num_of(out) == want, t
        if want:
            # Label time = egress timestamp, ingress timestamp beside it (bytes 8..19).
            assert out[44:56] == t.to_bytes(6, "big") * 2


def test_pro_shift_divides_the_interval(program: CompiledProgram) -> None:
    clock = Clock()
    sw = make_switch(program, clock, T=1000)
    sw.table_add("MyEgress.port_shift", {"standard_metadata.egress_port": HOST_PORT},
                 "MyEgress.set_shift", {"s": 2})  # T / 4 = 250
    for t, want in {100: 1, 350: None, 351: 1, 601: None, 602: 1}.items():
        clock.t = t
        assert int_num_of(send(sw, plain())) == want, t


def test_base_b_rest_time_t1(program: CompiledProgram) -> None:
    clock = Clock()
    sw = make_switch(program, clock, T=1000, T1=400, f=F1, mode=BASE_B)
    clock.t = 10
    assert int_num_of(send(sw, plain())) == 1  # first label of the port
    clock.t = 409  # CT - LT = 399 < T1: resting
    assert int_num_of(send(sw, labeled(1, [item(1, True)]))) == 1
    clock.t = 410  # CT - LT = 400 >= T1: F1(1) = 1
    assert int_num_of(send(sw, labeled(1, [item(1, True)]))) == 2


def _labeled_fraction(sw: Switch, packet: bytes, trials: int) -> float:
    """Share of ``trials`` copies of a labeled ``packet`` that get one more label."""
    before = int_num_of(packet)
    assert before is not None
    return sum(int_num_of(send(sw, packet)) == before + 1 for _ in range(trials)) / trials


@pytest.mark.parametrize(("int_num", "p"), [(1, 0.25), (2, 0.5), (3, 0.75)])
def test_base_b_f2_probability(program: CompiledProgram, int_num: int, p: float) -> None:
    # F2 = INT_num / (MAX_hop - 1) with MAX_hop 5; clock 0, so CT - LT = 0 <= T.
    sw = make_switch(program, T=1000, f=F2, mode=BASE_B)
    send(sw, plain())  # the port's first label
    items = [item(i) for i in range(1, int_num)] + [item(int_num, True)]
    frac = _labeled_fraction(sw, labeled(int_num, items), 4000)
    assert abs(frac - p) < 0.03, frac


def test_base_b_f3_scales_with_elapsed_time(program: CompiledProgram) -> None:
    # INT_num 4 = MAX_hop - 1 makes F2 = 1, so F3 = (CT - LT) / T = 500 / 1000.
    clock = Clock()
    sw = make_switch(program, clock, T=1000, f=F3, mode=BASE_B)
    four = labeled(4, [item(1), item(2), item(3), item(4, True)])
    specific = labeled(6, [item(1, True)])  # labeled at every hop: resets LT
    hits, trials = 0, 2000
    for i in range(trials):
        clock.t = 10_000 + 2000 * i
        assert int_num_of(send(sw, specific)) == 7
        clock.t += 500
        hits += int_num_of(send(sw, four)) == 5
    assert abs(hits / trials - 0.5) < 0.04, hits / trials


# --- item contents --------------------------------------------------------------------------


def test_item_carries_queue_metadata(program: CompiledProgram) -> None:
    clock = Clock()
    clock.t = 0x123456789A
    sw = make_switch(program, clock)
    jobs, _ = sw.ingress(1, plain())
    clock.t += 0x42
    out, _, _ = sw.egress(jobs[0], enq_timestamp=7, enq_qdepth=0x7FFFF,
                          deq_timedelta=0x42, deq_qdepth=0x12345)
    data = out[0][1]
    got = data[36:36 + ITEM_BYTES]
    want = (struct.pack("!IHH", SWITCH_ID, 1, HOST_PORT)
            + (0x123456789A).to_bytes(6, "big") + (0x123456789A + 0x42).to_bytes(6, "big")
            + struct.pack("!IB", 0x42, 0x80) + (0x7FFFF).to_bytes(3, "big")
            + b"\x00" + (0x12345).to_bytes(3, "big"))
    assert got == want


# --- last hop: passes per packet ------------------------------------------------------------


def _sink(program: CompiledProgram) -> Switch:
    sw = make_switch(program)
    sw.table_add("MyEgress.last_hop", {"standard_metadata.egress_port": HOST_PORT},
                 "MyEgress.set_last_hop")
    sw.mirroring_add(REPORT_SESSION, COLLECTOR_PORT)
    return sw


def _passes(sw: Switch, data: bytes) -> tuple[int, int, list[int]]:
    before = dict(sw.stats)
    ports = [port for port, _ in sw.process(1, data)]
    return (sw.stats["ingress"] - before["ingress"], sw.stats["egress"] - before["egress"],
            sorted(ports))


def test_last_hop_costs_one_extra_egress_pass(program: CompiledProgram) -> None:
    """The E2E clone that becomes the report is the only extra pass: 1 ingress and
    2 egress passes for a packet that carries INT at its last hop (whether or
    not the sink labels it), 1 and 1 otherwise."""
    sink = _sink(program)
    # Port never labeled: the sink labels this plain packet, then reports it.
    assert _passes(sink, plain()) == (1, 2, [HOST_PORT, COLLECTOR_PORT])
    # Within T: no label, no INT, no report.
    assert _passes(sink, plain()) == (1, 1, [HOST_PORT])
    # INT from upstream, not labeled here: still one report.
    assert _passes(sink, labeled(2, [item(2), item(1, True)])) == (
        1, 2, [HOST_PORT, COLLECTOR_PORT])
    # A transit switch labels without any extra pass.
    transit = make_switch(program)
    assert _passes(transit, plain()) == (1, 1, [HOST_PORT])
    assert _passes(transit, labeled(1, [item(1, True)])) == (1, 1, [HOST_PORT])


def test_last_hop_restores_the_packet_and_reports_every_item(program: CompiledProgram) -> None:
    sink = _sink(program)
    items = [item(2), item(1, True)]
    out = dict(sink.process(1, labeled(2, items)))
    sent = plain()
    # The host gets the original packet, forwarded by one router.
    want_host = (bytes.fromhex("000000000003" "000000000101" "0800")
                 + _ipv4(17, 20 + len(UDP), ttl=63) + UDP)
    assert out[HOST_PORT] == want_host
    report = out[COLLECTOR_PORT]
    n = 3  # two from upstream, one from the sink (its first packet on port 3)
    assert len(report) == 74 + ITEM_BYTES * n
    assert report[42:50] == bytes([0x10, 3, n, 5]) + SWITCH_ID.to_bytes(4, "big")
    body = report[50:50 + ITEM_BYTES * n]
    assert body[:4] == SWITCH_ID.to_bytes(4, "big")  # newest (the sink's) first
    assert body[ITEM_BYTES:] == b"".join(items)
    assert report[-24:-4] == want_host[14:34] and report[-4:] == sent[34:38]
