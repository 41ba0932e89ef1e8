"""p4src/gpint.p4 behaviour that STF cannot reach (its clock reads 0 and it
runs every recirculation to the end at once): the SQR copy store (a copy
circulates until the next hop's feedback releases it, or becomes a 0x21
notice after t_f), its bound and occupancy, the cost of the loops in
pipeline passes, the queue depth in DLV entries, a three-switch path, and
the program under p4c when p4c is installed.

A ``Rig`` drives one engine Switch through its two halves one pipeline pass
at a time (``Switch.ingress`` / ``Switch.egress``, the same calls
``Switch.process`` chains), so a circulating copy takes one step per pass
and other packets can arrive between its passes. Frames are built here
from docs/gpint_format.md with struct, independently of the switch.
"""

from __future__ import annotations

import shutil
import struct
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from common.checksum import internet_checksum
from controller import routing
from dataplane.compiler.p4info import build_p4info
from dataplane.compiler.pipeline import CompiledProgram, compile_file
from dataplane.runtime.switch import EgressJob, Switch
from p4src import program_path

PROGRAM = program_path("gpint")
PROTO = 254
PROBE, FEEDBACK, NOTICE = 0x17, 0x19, 0x21
SESSION_BASE = 100
COPY_SLOTS = 64
MONITOR = 500
BUSY, RELEASED = 1 << 26, 1 << 25
RECLAIM_SLACK_US = 1000
# gpint_events indices (the program's EV_* constants).
EV = {name: i for i, name in enumerate((
    "probe", "loop", "probe_error", "feedback_sent", "feedback_match", "feedback_other",
    "copy_kept", "copy_no_slot", "copy_released", "copy_timeout", "copy_reclaimed",
    "copy_stale", "copy_pass", "loop_pass"))}


@pytest.fixture(scope="module")
def program() -> CompiledProgram:
    return compile_file(PROGRAM)


# --- frames (docs/gpint_format.md) ------------------------------------------------------------

ETH = bytes.fromhex("000000000101" "000000000aaa" "0800")
Sr = tuple[int, int, int]      # next_port, mea start, mea count
Dlv = tuple[int, int, int]     # switch id, qdepth, values


def ipv4(dscp: int, payload: int, ident: int) -> bytes:
    head = struct.pack("!BBHHHBBH4s4s", 0x45, dscp << 2, 20 + payload, ident, 0, 64, PROTO, 0,
                       bytes([10, 0, 0, 100]), bytes([10, 0, 0, 200]))
    return head[:10] + struct.pack("!H", internet_checksum(head)) + head[12:]


def req(request_id: int, request_type: int) -> bytes:
    return struct.pack("!H", request_id << 1 | request_type)


def probe(request_id: int, request_type: int, sr: Sequence[Sr], dlv: Sequence[Dlv] = (),
          mea: Sequence[int] = (), *, ident: int = 1, dscp: int = PROBE) -> bytes:
    body = (req(request_id, request_type)
            + struct.pack("!H", len(sr)) + b"".join(struct.pack("!BBB", *e) for e in sr)
            + struct.pack("!H", len(dlv)) + b"".join(struct.pack("!BBH", *d) for d in dlv)
            + struct.pack("!H", len(mea)) + b"".join(struct.pack("!I", v) for v in mea))
    return ETH + ipv4(dscp, len(body), ident) + body


def feedback(request_id: int, request_type: int, *, ident: int = 1) -> bytes:
    return ETH + ipv4(FEEDBACK, 2, ident) + req(request_id, request_type)


def user(dst: bytes) -> bytes:
    """UDP 10.0.9.10 -> dst, TTL 64."""
    payload = struct.pack("!HHHH", 1234, 5678, 12, 0) + b"data"
    head = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1, 0, 64, 17, 0,
                       bytes([10, 0, 9, 10]), dst)
    head = head[:10] + struct.pack("!H", internet_checksum(head)) + head[12:]
    return bytes.fromhex("000000000101" "00000000000a" "0800") + head + payload


def dscp_of(frame: bytes) -> int:
    return frame[15] >> 2


# --- a switch run one pass at a time ------------------------------------------------------------

class Clock:
    def __init__(self) -> None:
        self.us = 0

    def __call__(self) -> int:
        return self.us


class Rig:
    """A gpint switch with clone sessions base + p -> p for ``ports`` whose
    traffic manager is a FIFO of pending passes, served one per ``step``."""

    def __init__(self, program: CompiledProgram, *, switch_id: int = 0x2A, recovery: int = 1,
                 t_f_us: int = 1000, ports: Sequence[int] = (1, 2, 3, 4, MONITOR)) -> None:
        self.clock = Clock()
        self.sw = Switch(program, clock=self.clock)
        self.sw.table_set_default("MyIngress.gpint_config", "MyIngress.set_config",
                                  {"switch_id": switch_id, "monitor_port": MONITOR,
                                   "recovery": recovery, "t_f_us": t_f_us})
        for p in ports:
            self.sw.mirroring_add(SESSION_BASE + p, p)
        self.work: deque[Any] = deque()
        self.out: list[tuple[int, bytes]] = []
        self.qdepth = 0

    def send(self, port: int, frame: bytes) -> None:
        self.work.append((port, frame))

    def step(self) -> None:
        item = self.work.popleft()
        if isinstance(item, EgressJob):
            out, clones, recirc = self.sw.egress(item, deq_qdepth=self.qdepth)
            self.out.extend(out)
            self.work.extend(clones)
            self.work.extend(recirc)
        else:
            jobs, again = self.sw.ingress(*item)
            self.work.extend(jobs)
            self.work.extend(again)

    def run(self, steps: int = 200) -> None:
        """Up to ``steps`` passes, fewer when nothing is left to do."""
        for _ in range(steps):
            if not self.work:
                return
            self.step()

    def rounds(self, n: int = 5) -> None:
        """``n`` times: serve every pass pending now (a circulating copy
        makes one pass per round, whatever else is pending)."""
        for _ in range(n):
            for _ in range(len(self.work)):
                self.step()

    def take(self) -> list[tuple[int, bytes]]:
        out, self.out = self.out, []
        return out

    def register(self, name: str) -> list[int]:
        names = [e.qname for e in self.sw.program.externs]
        return self.sw.externs[names.index(name)].values

    def events(self) -> dict[str, int]:
        names = [e.qname for e in self.sw.program.externs]
        packets = self.sw.externs[names.index("gpint_events")].packets
        return {name: packets[i] for name, i in EV.items() if packets[i]}

    @property
    def occupancy(self) -> int:
        return self.register("copy_store_occupancy")[0]


def forwarded(request_id: int, request_type: int, sr: Sequence[Sr], dlv: Sequence[Dlv],
              mea: Sequence[int], **kw: Any) -> bytes:
    """What a switch sends on: entry 0 popped (the rest given as ``sr``)."""
    return probe(request_id, request_type, sr, dlv, mea, **kw)


PATH = [(2, 0, 0), (3, 0, 0)]  # this switch -> port 2, the next one -> port 3
AFTER = forwarded(5, 1, [(3, 0, 0)], [(0x2A, 0, 0)], [])


def start_copy(rig: Rig, at_us: int = 100, request_id: int = 5) -> None:
    """A probe from port 1 forwarded to port 2 at ``at_us``, its copy stored."""
    rig.clock.us = at_us
    rig.send(1, probe(request_id, 1, PATH))
    rig.run(40)


# --- the copy store ------------------------------------------------------------------------------

def test_copy_circulates_until_the_next_hops_feedback_releases_it(program) -> None:
    rig = Rig(program)
    start_copy(rig)
    # The feedback back out of port 1 and the probe out of port 2; the copy
    # is the one pending pass.
    assert rig.take() == [(1, feedback(5, 1)), (2, AFTER)]
    assert len(rig.work) == 1 and rig.occupancy == 1
    assert rig.register("copy_slot")[5] == BUSY | 2 << 16 | (5 << 1 | 1)
    assert rig.register("copy_sent_us")[5] == 100
    rig.run(40)
    assert rig.take() == [] and len(rig.work) == 1

    # Feedback that is not this copy's: from another port, for another
    # request, or for the same id with the other request type.
    rig.clock.us = 600
    rig.send(3, feedback(5, 1))
    rig.send(2, feedback(6, 1))
    rig.send(2, feedback(5, 0))
    rig.run(40)
    assert rig.events()["feedback_other"] == 3
    assert rig.register("copy_slot")[5] == BUSY | 2 << 16 | 11 and len(rig.work) == 1

    rig.send(2, feedback(5, 1))
    rig.run(40)
    assert not rig.work, "the copy's next pass drops it"
    assert rig.take() == []
    assert rig.occupancy == 0 and rig.register("copy_slot")[5] == 0
    ev = rig.events()
    assert (ev["copy_kept"], ev["feedback_match"], ev["copy_released"]) == (1, 1, 1)
    assert "copy_timeout" not in ev


def test_copy_becomes_a_notice_to_the_monitor_after_t_f(program) -> None:
    rig = Rig(program, t_f_us=1000)
    start_copy(rig, at_us=100)
    rig.take()
    rig.clock.us = 1100  # waited exactly t_f: not more
    rig.run(40)
    assert rig.take() == [] and len(rig.work) == 1
    rig.clock.us = 1101
    rig.run(40)
    # The stored probe as it left (entry 0 popped, this switch's DLV entry),
    # DSCP 0x21, to the monitor port.
    notice = forwarded(5, 1, [(3, 0, 0)], [(0x2A, 0, 0)], [], dscp=NOTICE)
    assert rig.take() == [(MONITOR, notice)]
    assert not rig.work and rig.occupancy == 0 and rig.register("copy_slot")[5] == 0
    assert rig.events()["copy_timeout"] == 1
    # A late feedback finds nothing.
    rig.send(2, feedback(5, 1))
    rig.run()
    assert rig.events()["feedback_other"] == 1 and rig.take() == []


def test_no_copy_without_recovery_at_the_last_hop_or_on_a_loop(program) -> None:
    off = Rig(program, recovery=0)
    start_copy(off)
    assert off.take() == [(2, AFTER)] and not off.work and off.occupancy == 0

    on = Rig(program)
    on.send(1, probe(9, 1, [(0, 0, 0)]))  # last hop: to the monitor, no copy
    on.run()
    assert on.take() == [(1, feedback(9, 1)),
                         (MONITOR, forwarded(9, 1, [], [(0x2A, 0, 0)], []))]
    assert not on.work and on.occupancy == 0
    on.send(1, probe(9, 1, PATH))  # request 9 seen in session 1: passed on
    on.run()
    assert on.take() == [(2, forwarded(9, 1, [(3, 0, 0)], [], []))]
    assert not on.work and on.occupancy == 0


def test_store_is_bounded_four_candidate_slots_per_request(program) -> None:
    """Request r may use slots r, r+1, r+2, r+3 (mod 64): requests 0, 64,
    128, 192 fill slots 0..3, and 256 finds none free. A release frees one."""
    rig = Rig(program)
    for r in (0, 64, 128, 192):
        rig.send(1, probe(r, 0, PATH))
        rig.run(10)
    slots = rig.register("copy_slot")
    assert [slots[i] & 0xFFFF for i in range(5)] == [0 << 1, 64 << 1, 128 << 1, 192 << 1, 0]
    assert rig.occupancy == 4 and len(rig.work) == 4
    rig.take()

    rig.send(1, probe(256, 0, PATH))
    rig.run(20)
    out = rig.take()
    assert (2, forwarded(256, 0, [(3, 0, 0)], [(0x2A, 0, 0)], [])) in out
    assert rig.events()["copy_no_slot"] == 1 and rig.occupancy == 4 and len(rig.work) == 4

    rig.send(2, feedback(64, 0))
    rig.run(20)
    assert rig.occupancy == 3 and len(rig.work) == 3 and slots[1] == 0
    rig.send(1, probe(256, 0, PATH, ident=2))
    rig.run(20)
    assert slots[1] == BUSY | 2 << 16 | 256 << 1 and rig.occupancy == 4
    ev = rig.events()
    assert ev["copy_kept"] - ev["copy_released"] - ev.get("copy_timeout", 0) == rig.occupancy


def test_store_fills_all_slots_and_reports_occupancy(program) -> None:
    rig = Rig(program)
    for r in range(COPY_SLOTS):
        rig.send(1, probe(r, 1, PATH))
        rig.rounds()
    assert rig.occupancy == COPY_SLOTS and len(rig.work) == COPY_SLOTS
    assert all(v & BUSY for v in rig.register("copy_slot"))
    rig.send(1, probe(1000, 1, PATH))
    rig.rounds()
    assert rig.events()["copy_no_slot"] == 1 and rig.occupancy == COPY_SLOTS
    # Every copy times out: the store empties and the monitor gets 64 notices.
    rig.take()
    rig.clock.us = 10_000
    rig.run(1000)
    notices = rig.take()
    assert len(notices) == COPY_SLOTS and {p for p, _ in notices} == {MONITOR}
    assert all(dscp_of(f) == NOTICE for _, f in notices)
    assert rig.occupancy == 0 and not rig.work


def test_slot_of_a_lost_copy_is_taken_over_and_the_copy_dropped_if_it_returns(program) -> None:
    t_f = 1000
    rig = Rig(program, t_f_us=t_f)
    for r in (0, 64, 128, 192):  # slots 0..3
        rig.send(1, probe(r, 0, PATH))
        rig.run(10)
    assert len(rig.work) == 4
    lost = list(rig.work)
    rig.work.clear()  # all four copies lost (say, a full recirculation path)
    overdue = 2 * t_f + RECLAIM_SLACK_US
    rig.clock.us = overdue  # sent at 0: not yet more than overdue
    rig.send(1, probe(256, 0, PATH))
    rig.run(20)
    assert rig.events()["copy_no_slot"] == 1
    rig.clock.us = overdue + 1
    rig.send(1, probe(256, 0, PATH, ident=2))
    rig.run(20)
    slots, gens = rig.register("copy_slot"), rig.register("copy_gen")
    assert slots[0] == BUSY | 2 << 16 | 256 << 1 and gens[0] == 2
    assert rig.events()["copy_reclaimed"] == 1 and rig.occupancy == 4
    # The lost copy of slot 0 comes back: its generation is old, so it is
    # dropped and the slot stays with request 256.
    rig.take()
    rig.work.appendleft(lost[0])
    rig.run(4)
    assert rig.events()["copy_stale"] == 1 and slots[0] == BUSY | 2 << 16 | 256 << 1
    assert rig.take() == [] and rig.occupancy == 4
    ev = rig.events()
    assert ev["copy_kept"] - ev["copy_reclaimed"] == rig.occupancy == 4


# --- cost and queue depth -------------------------------------------------------------------------

@pytest.mark.parametrize(("count", "passes"), [(0, 1), (4, 1), (5, 2), (9, 3), (128, 32)])
def test_measurement_loop_takes_one_pass_per_four_values(program, count: int, passes: int) -> None:
    sw = Switch(program)
    sw.table_set_default("MyIngress.gpint_config", "MyIngress.set_config",
                         {"switch_id": 1, "monitor_port": MONITOR, "recovery": 0, "t_f_us": 0})
    out = sw.process(1, probe(1, 0, [(0, 0, count)]))
    assert out == [(MONITOR, forwarded(1, 0, [], [(1, 0, count)], [0] * count))]
    assert (sw.stats["ingress"], sw.stats["egress"]) == (passes, passes)


def test_copy_costs_one_ingress_and_one_egress_pass_per_check(program) -> None:
    rig = Rig(program)
    start_copy(rig)
    # 40 steps: the probe's ingress and egress, the feedback's egress, the
    # clone's egress, then 18 checks of two steps each.
    stats = rig.sw.stats
    assert (stats["ingress"], stats["egress"]) == (1 + 18, 3 + 18)
    rig.run(100)
    assert (stats["ingress"], stats["egress"]) == (1 + 68, 3 + 68)
    assert rig.events()["copy_pass"] == 68


@pytest.mark.parametrize(("qdepth", "carried"), [(0, 0), (7, 7), (255, 255), (300, 255)])
def test_dlv_queue_depth_is_the_last_pass_dequeue_depth_saturated(program, qdepth: int,
                                                                  carried: int) -> None:
    rig = Rig(program, recovery=0)
    rig.qdepth = qdepth
    rig.send(1, probe(3, 1, [(0, 0, 0)]))
    rig.run()
    assert rig.take() == [(MONITOR, forwarded(3, 1, [], [(0x2A, carried, 0)], []))]


# --- a path of three switches ---------------------------------------------------------------------

class Line:
    """s1 -2-1- s2 -2-1- s3, monitor on port 500 of each; ``cut`` loses
    what s2 sends on port 2."""

    def __init__(self, program: CompiledProgram, t_f_us: int) -> None:
        self.s = [Rig(program, switch_id=i + 1, t_f_us=t_f_us) for i in range(3)]
        self.monitor: list[tuple[int, bytes]] = []
        self.cut = False

    def run(self, rounds: int = 200) -> None:
        for _ in range(rounds):
            for i, rig in enumerate(self.s):
                if rig.work:
                    rig.step()
                for port, frame in rig.take():
                    if port == MONITOR:
                        self.monitor.append((i + 1, frame))
                    elif port == 2 and i < 2 and not (self.cut and i == 1):
                        self.s[i + 1].send(1, frame)
                    elif port == 1 and i > 0:
                        self.s[i - 1].send(2, frame)


def test_three_switch_path_with_recovery(program) -> None:
    line = Line(program, t_f_us=1000)
    # Switches 1 and 2 insert port 1's packet counter (0 here), switch 3
    # ports 1 and 2's.
    sr = [(2, 1, 1), (2, 1, 1), (0, 1, 2)]
    for rig in line.s:
        rig.clock.us = 50
    line.s[0].send(MONITOR, probe(42, 1, sr))
    line.run()
    final = forwarded(42, 1, [], [(1, 0, 1), (2, 0, 1), (3, 0, 2)], [0, 0, 0, 0])
    assert line.monitor == [(1, feedback(42, 1)), (3, final)]
    for rig in line.s:
        assert not rig.work and rig.occupancy == 0
    assert [r.events().get("copy_released", 0) for r in line.s] == [1, 1, 0]

    # Paper Fig. 7: the link s2 -> s3 loses the probe. s1's copy is
    # released by s2's feedback, s2's becomes a notice after t_f.
    line.monitor.clear()
    line.cut = True
    line.s[0].send(MONITOR, probe(43, 1, sr))
    line.run()
    assert line.monitor == [(1, feedback(43, 1))]
    assert line.s[0].occupancy == 0 and line.s[1].occupancy == 1
    for rig in line.s:
        rig.clock.us = 50 + 1001
    line.run()
    notice = forwarded(43, 1, [(0, 1, 2)], [(1, 0, 1), (2, 0, 1)], [0, 0], dscp=NOTICE)
    assert line.monitor == [(1, feedback(43, 1)), (2, notice)]
    assert line.s[1].occupancy == 0 and not line.s[1].work


# --- user traffic, contract, p4c ------------------------------------------------------------------

def test_user_traffic_counts_and_routing_entries_install_unchanged(program) -> None:
    """controller/routing.py's entries fit gpint.p4 as they fit l3_forward.p4;
    rule hits count by the rule's egress port, packets by ingress port."""
    sw = Switch(program)
    entries = routing.table_entries([
        routing.Route("10.0.3.3", 32, [(3, "00:00:00:00:00:03")]),
        routing.Route("10.0.4.4", 32, [(2, "00:00:00:00:00:02"), (4, "00:00:00:00:00:04")]),
    ])
    for e in entries:
        match = {k: (routing_match(v)) for k, v in e.match.items()}
        sw.table_add(e.table, match, e.action, e.params)
    assert [p for p, _ in sw.process(5, user(bytes([10, 0, 3, 3])))] == [3]
    assert [p for p, _ in sw.process(5, user(bytes([10, 0, 3, 3])))] == [3]
    [(port, _)] = sw.process(6, user(bytes([10, 0, 4, 4])))
    assert port in (2, 4)
    names = [e.qname for e in program.externs]
    hits = sw.externs[names.index("rule_hits")].values
    packets = sw.externs[names.index("port_packets")].values
    assert (hits[3], hits[port], packets[5], packets[6]) == (2, 1, 2, 1)


def routing_match(value: Any) -> Any:
    from dataplane.runtime.tables import Exact, Lpm
    if isinstance(value, tuple):
        return Lpm(*value)
    return Exact(value)


def test_p4info_names_the_control_plane_contract(program) -> None:
    p4info = build_p4info(program.schema)
    tables = {t.preamble.name: t for t in p4info.tables}
    assert set(tables) == {"MyIngress.ipv4_lpm", "MyIngress.ecmp_nhop", "MyIngress.gpint_config"}
    actions = {a.preamble.name: [(p.name, p.bitwidth) for p in a.params] for a in p4info.actions}
    assert actions["MyIngress.set_config"] == [("switch_id", 8), ("monitor_port", 9),
                                               ("recovery", 1), ("t_f_us", 48)]
    assert actions[routing.FORWARD_ACTION] == [(routing.FORWARD_MAC_PARAM, 48),
                                               (routing.FORWARD_PORT_PARAM, 9)]
    assert actions[routing.ECMP_ACTION] == [(routing.ECMP_GROUP_PARAM, 16),
                                            (routing.ECMP_COUNT_PARAM, 16)]
    registers = {r.preamble.name: (r.size, r.type_spec.bitstring.bit.bitwidth)
                 for r in p4info.registers}
    assert registers == {
        "rule_hits": (512, 32), "port_packets": (512, 32),
        "copy_slot": (COPY_SLOTS, 32), "copy_sent_us": (COPY_SLOTS, 48),
        "copy_gen": (COPY_SLOTS, 16), "copy_store_occupancy": (1, 32),
        "MyIngress.seen_request": (32768, 17)}
    counters = {c.preamble.name: c.size for c in p4info.counters}
    assert counters == {"gpint_events": 16}


def test_compiles_with_p4c(tmp_path: Path) -> None:
    if shutil.which("p4c") is None:
        pytest.skip("p4c not found on PATH (build p4c to run this)")
    from orchestration.binaries.p4c import compile_bmv2
    artifacts = compile_bmv2(PROGRAM, tmp_path)
    text = artifacts.p4info.read_text()
    for name in ("MyIngress.gpint_config", "MyIngress.set_config", "copy_store_occupancy",
                 "gpint_events", "MyIngress.seen_request"):
        assert name in text


# --- the STF files' expectations, checked with Scapy ----------------------------------------------

STF_FILES = sorted((Path(__file__).resolve().parents[1] / "p4").glob("gpint_*.stf"))


def test_stf_expectations_are_consistent_frames() -> None:
    """Every frame a gpint_*.stf file sends or expects is an IPv4 frame whose
    header checksum (recomputed by Scapy) and total length hold, and whose
    GPINT part, if any, has exactly the length its counts say (but for the
    one probe sent cut short)."""
    from scapy.layers.inet import IP
    from scapy.layers.l2 import Ether

    from dataplane.testing.stf import Expect, Packet, parse_stf

    assert {p.stem for p in STF_FILES} == {"gpint_measure", "gpint_sr", "gpint_feedback",
                                           "gpint_loop"}
    checked = 0
    cut: list[str] = []
    for stf in STF_FILES:
        for cmd in parse_stf(stf):
            if isinstance(cmd, Packet):
                frame = cmd.data
            elif isinstance(cmd, Expect) and cmd.nibbles:
                frame = bytes.fromhex(cmd.nibbles.replace("*", "0"))
            else:
                continue
            eth = Ether(frame)
            if eth.type != 0x0800:
                continue
            ip = eth[IP]
            header = frame[14:34]
            again = IP(header[:10] + b"\0\0" + header[12:])
            again.chksum = None
            assert bytes(again)[10:12] == header[10:12], f"{stf.name}:{cmd.loc.line}"
            if ip.proto != PROTO or ip.tos >> 2 not in (PROBE, FEEDBACK, NOTICE):
                continue
            body = frame[34:]
            if ip.tos >> 2 == FEEDBACK:
                assert ip.len == 22 and len(body) == 2, f"{stf.name}:{cmd.loc.line}"
                continue
            if ip.len != len(frame) - 14:
                cut.append(f"{stf.name}:{cmd.loc.line}")
                continue
            (nsr,) = struct.unpack_from("!H", body, 2)
            (ndlv,) = struct.unpack_from("!H", body, 4 + 3 * nsr)
            (nmea,) = struct.unpack_from("!H", body, 6 + 3 * nsr + 4 * ndlv)
            expected = 8 + 3 * nsr + 4 * ndlv + 4 * nmea
            if nsr <= 200 and ndlv <= 200 and nmea <= 128:
                assert len(body) == expected == ip.len - 20, f"{stf.name}:{cmd.loc.line}"
            checked += 1
    assert checked > 40
    # The one probe gpint_sr.stf sends cut short, on purpose.
    assert len(cut) == 1 and cut[0].startswith("gpint_sr.stf:")
