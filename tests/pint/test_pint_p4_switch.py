"""p4src/pint.p4 on a line of three engine switches, configured by
``p4config.configure_switch``, with hop latencies the test chooses.

h1 - s1 (source) - s2 - s3 (sink) - h2. Every packet's report must carry
the digest sinks/pint computes for the same packet: the path field
from ``trace_paths`` over (s1, s2, s3), the per-packet maximum field from
``max_aggregate`` over the three latencies (value approximation with
hash-rounded levels, saturation included), each only in the packets whose
query set holds the query. ``SinkReports`` then feeds the recording module,
whose decoded maxima are within the codec's factor of the true maxima.
Also: the configurator's and the report parser's refusals, one line each.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from common.errors import InvalidValueError
from controller.pint.p4config import (
    REPORT_SESSION,
    configure_switch,
    level_entries,
    pint_writes,
    query_selector,
)
from dataplane.compiler.pipeline import CompiledProgram, compile_file
from dataplane.runtime.switch import Switch
from dataplane.runtime.tables import Exact, Lpm, RangeMatch
from p4src import program_path
from sinks.pint.engine import Aggregation, Query, plan_queries
from sinks.pint.hashing import GlobalHashes, packet_ids
from sinks.pint.pathtrace import PathCoding, trace_paths
from sinks.pint.recorder import Recorder
from sinks.pint.sink_reports import SinkReports
from sinks.pint.values import ValueCodec, max_aggregate

SEED = 23
PLAN = plan_queries([
    Query("path", "switch id", Aggregation.STATIC_PER_FLOW, 16, frequency=0.6),
    Query("max", "hop latency (us)", Aggregation.PER_PACKET, 8, frequency=0.7),
    ], 32)
CODING = PathCoding(16, 32, tau=0.3, p=0.4)
CODEC = ValueCodec(8, 1.0, 1e6)
IDS = [0x1111AAAA, 0x2222BBBB, 0x3333CCCC]
COLLECTOR_PORT = 500
N = 300


class EngineTable:
    """``client.tables[name]`` of an EngineClient: entries and the default
    entry written straight into the engine switch."""

    def __init__(self, sw: Switch, name: str) -> None:
        self.sw = sw
        self.name = name
        self.default = self

    def insert(self, match: dict[str, Any], action: str, params: dict[str, int],
               priority: int | None = None) -> None:
        specs = {k: RangeMatch(*v) if isinstance(v, tuple) else Exact(v)
                 for k, v in match.items()}
        self.sw.table_add(self.name, specs, action, params, priority=priority)

    def modify(self, action: str, params: dict[str, int]) -> None:  # as default.modify
        self.sw.table_set_default(self.name, action, params)


class EngineTables(dict[str, EngineTable]):
    def __init__(self, sw: Switch) -> None:
        super().__init__()
        self.sw = sw

    def __missing__(self, name: str) -> EngineTable:
        table = self[name] = EngineTable(self.sw, name)
        return table


class EngineClient:
    """The P4Runtime calls ``configure_switch`` makes, on an engine switch."""

    def __init__(self, sw: Switch) -> None:
        self.sw = sw
        self.tables = EngineTables(sw)
        self.clone_sessions = self

    def insert(self, session: int, ports: list[int]) -> None:  # as clone_sessions.insert
        [port] = ports
        self.sw.mirroring_add(session, port)


@pytest.fixture(scope="module")
def program() -> CompiledProgram:
    return compile_file(program_path("pint"))


def make_line(program: CompiledProgram) -> list[Switch]:
    switches = []
    for i, switch_id in enumerate(IDS):
        sw = Switch(program, clock=lambda: 0)
        sw.table_add("MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": Lpm(0x0A000200, 24)},
                     "MyIngress.ipv4_forward", {"dstAddr": 0x0200 + i, "port": 2})
        writes = pint_writes(PLAN, SEED, switch_id=switch_id, path_codings={"path": CODING},
                             value_codecs={"max": CODEC}, source_ports=[1] if i == 0 else [],
                             sink_ports=[2] if i == 2 else [], report_macs=(0x3301, 0xFFFFFE))
        configure_switch(EngineClient(sw), writes,
                         collector_port=COLLECTOR_PORT if i == 2 else None)
        switches.append(sw)
    return switches


def send(switches: list[Switch], frame: bytes, latencies: list[int]) -> dict[int, list[bytes]]:
    """One packet along the line; hop i's queue holds it ``latencies[i]`` us."""
    data, out = [frame], {}
    for sw, latency in zip(switches, latencies):
        nxt = []
        for d in data:
            jobs, _ = sw.ingress(1, d)
            pending = list(jobs)
            while pending:
                sent, clones, _ = sw.egress(pending.pop(0), deq_timedelta=latency)
                pending.extend(clones)
                for port, f in sent:
                    (nxt if port == 2 and sw is not switches[-1] else
                     out.setdefault(port, [])).append(f)
        data = nxt
    return out


def test_reports_carry_the_digests_controller_pint_computes(program: CompiledProgram) -> None:
    switches = make_line(program)
    rng = random.Random(SEED)
    # 0, 1, short, long and saturating (above the codec's 1 s) hop latencies in us.
    latencies = np.array([[rng.choice([0, 1, rng.randrange(2, 5000),
                                       rng.randrange(5000, 3_000_000)])
                           for _ in range(N)] for _ in IDS])
    frames, reports = [], []
    for j in range(N):
        frame = bytes(Ether(dst="00:00:00:00:01:01", src="00:00:00:00:00:0a")
                      / IP(src="10.0.1.1", dst="10.0.2.2", id=j, ttl=64)
                      / UDP(sport=1000 + j % 3, dport=5000) / Raw(b"data%d" % j))
        out = send(switches, frame, [int(v) for v in latencies[:, j]])
        assert sorted(out) == [2, COLLECTOR_PORT]
        frames.append((frame, out[2][0]))
        reports.append(out[COLLECTOR_PORT][0])
    pids = packet_ids(0x0A000101, 0x0A000202, 17, 1000 + np.arange(N) % 3, 5000, np.arange(N))
    path, _, _ = trace_paths(CODING, GlobalHashes(SEED, "path"), pids, np.array(IDS))
    maxima, saturated = max_aggregate(pids, latencies, CODEC, GlobalHashes(SEED, "max"))
    sets = PLAN.set_ids(query_selector(SEED).packet_word(pids, "query"))
    want = PLAN.compose(sets, {"path": path, "max": maxima})
    got = np.array([int.from_bytes(r[14 + 21:14 + 25], "big") for r in reports])
    assert (got == want).all(), np.nonzero(got != want)[0][:5]
    assert saturated > 0 and len(set(sets.tolist())) == len(PLAN.sets) + 1
    for sent, delivered in frames:
        ip = IP(sent[14:])
        ip.ttl -= 3
        del ip.chksum
        assert delivered[14:] == bytes(ip)
    sink = SinkReports(Recorder(PLAN, SEED, {"path": CODING}, {"max": CODEC}))
    assert sink.feed(reports) == N and not sink.problems
    batches = sink.recorder.maxima["max"]
    rep_pids = np.concatenate([b[1] for b in batches])
    decoded = np.concatenate([b[2] for b in batches])
    assert rep_pids.shape[0] == np.isin(sets, [s.set_id for s in PLAN.sets if any(
        p.query == "max" for p in s.placements)]).sum()
    true_max = latencies.max(axis=0)
    order = {int(p): j for j, p in enumerate(pids)}
    for pid, value in zip(rep_pids, decoded):
        t = min(float(true_max[order[int(pid)]]), CODEC.hi)
        if t >= CODEC.lo:
            assert t / (1 + CODEC.eps) <= value <= t * (1 + CODEC.eps)


def test_level_entries_tile_the_integers_as_the_codec_rounds() -> None:
    entries = level_entries(CODEC)
    assert entries[0][0] == 0 and entries[-1][1] == 2**32 - 1
    assert all(a[1] + 1 == b[0] for a, b in zip(entries, entries[1:]))
    values = np.array([0, 1, 2, 3, 17, 999, 10**6 - 1, 10**6, 10**6 + 1], dtype=np.float64)
    coins = np.zeros(values.shape[0])  # coin 0 rounds up whenever the fraction is > 0
    codes, _ = CODEC.encode(values, coins)
    for v, code in zip(values, codes):
        lo, _, low_code, base, step = next(e for e in entries if e[0] <= v <= e[1])
        up = base + ((int(v) - lo) * step >> 16) > 0
        assert low_code + int(up and low_code < CODEC.top) == code, v


def test_configurator_refusals_are_one_line() -> None:
    dynamic = plan_queries([Query("lat", "latency", Aggregation.DYNAMIC_PER_FLOW, 8)], 8)
    with pytest.raises(InvalidValueError, match="one path-tracing and one per-packet"):
        pint_writes(dynamic, SEED, switch_id=1)
    with pytest.raises(InvalidValueError, match="bits=16"):
        pint_writes(PLAN, SEED, switch_id=1, path_codings={"path": PathCoding(8)},
                    value_codecs={"max": CODEC})
    with pytest.raises(InvalidValueError, match="needs a ValueCodec"):
        pint_writes(PLAN, SEED, switch_id=1, path_codings={"path": CODING})
    with pytest.raises(InvalidValueError, match="32 bits"):
        pint_writes(PLAN, SEED, switch_id=2**32, path_codings={"path": CODING},
                    value_codecs={"max": CODEC})
    with pytest.raises(InvalidValueError, match="level entries"):
        level_entries(ValueCodec(16, 1.0, 1e9))
    assert REPORT_SESSION == 501


def test_bad_reports_are_counted_not_fed(program: CompiledProgram) -> None:
    switches = make_line(program)
    frame = bytes(Ether(dst="00:00:00:00:01:01") / IP(src="10.0.1.1", dst="10.0.2.2", id=9)
                  / UDP(sport=1, dport=2) / Raw(b"x"))
    [good] = send(switches, frame, [0, 0, 0])[COLLECTOR_PORT]
    forged = good[:14] + (int.from_bytes(good[14:18], "big") ^ 1).to_bytes(4, "big") + good[18:]
    other_budget = good[:14 + 20] + bytes([16]) + good[14 + 21:]
    sink = SinkReports(Recorder(PLAN, SEED, {"path": CODING}, {"max": CODEC}))
    assert sink.feed([good[:-1], forged, other_budget, good]) == 1
    assert dict(sink.problems) == {"not-a-report": 1, "bad-packet-id": 1, "wrong-budget": 1}
    assert all("\n" not in line for line in sink.explanations)
