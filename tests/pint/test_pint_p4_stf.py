"""The STF tests of p4src/pint.p4 (tests/p4/pint_*.stf) and their generator.

Every byte an STF file expects comes from sinks/pint/, never from the
program: the table entries are ``p4config.pint_writes`` of one plan, the
digest a packet carries after hop h is ``plan.compose`` of the query sets
``q`` selects and of ``pathtrace.trace_paths`` over h hops (and of
``values.max_aggregate`` with the hop latency STF gives, 0), the packets
are built with Scapy. Three switches: a source (hop 1, from a host), a
transit (hops 2-7, one switch id, upstream ids random), a sink (hops
1-6, the digest removed and reported). The test asserts the files are what
this generator writes, that they pass, and that they cover what they are
meant to: writes and no writes as g says, Baseline and XOR packets, every
query set, the same packet id at several hops. Regenerate with
``python tests/pint/test_pint_p4_stf.py``.
"""

from __future__ import annotations

import random
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from controller.pint.p4config import REPORT_SESSION, TableWrite, pint_writes, query_selector
from dataplane.compiler.pipeline import compile_file
from dataplane.testing.stf import run_stf
from orchestration.binaries.bmv2_stf import program_for
from p4src import program_path
from sinks.pint.engine import Aggregation, Query, plan_queries
from sinks.pint.hashing import GlobalHashes, below, packet_ids
from sinks.pint.pathtrace import PathCoding, participants, trace_paths
from sinks.pint.values import ValueCodec, max_aggregate

STF_DIR = Path(__file__).resolve().parents[1] / "p4"
SEED = 11
BUDGET = 16
PLAN = plan_queries([
    Query("path", "switch id", Aggregation.STATIC_PER_FLOW, 8, frequency=0.75),
    Query("max", "hop latency (us)", Aggregation.PER_PACKET, 8, frequency=0.5),
], BUDGET)
CODING = PathCoding(bits=8, value_bits=32, tau=0.5, p=0.3)
CODEC = ValueCodec(8, 1.0, 1e6)
SWITCH_ID = 0x5A17C0DE
INIT_TTL = 64
ROUTER_MAC, NEXT_MAC, HOST_MAC = 0x000000000101, 0x000000000002, 0x00000000000A
REPORT_SRC_MAC, COLLECTOR_MAC = 0x000000003301, 0x000000FFFFFE
COLLECTOR_PORT = 500
UPSTREAM = random.Random(SEED).sample(range(1, 2**32), 8)  # the ids of hops before this one


def mac(value: int) -> str:
    return ":".join(f"{b:02x}" for b in value.to_bytes(6, "big"))


@dataclass(frozen=True)
class Pkt:
    """One host packet: its 5-tuple, identification and payload."""

    src: str
    dst: str
    proto: int
    sport: int
    dport: int
    ident: int

    def ip(self, ttl: int) -> IP:
        l4 = (UDP(sport=self.sport, dport=self.dport) if self.proto == 17
              else TCP(sport=self.sport, dport=self.dport, flags="A", seq=self.ident))
        return IP(src=self.src, dst=self.dst, id=self.ident, ttl=ttl, tos=0x28) / l4 / Raw(
            b"pint" + struct.pack("!H", self.ident) + bytes(self.ident % 11))

    def pid(self) -> int:
        a = [int.from_bytes(bytes(map(int, x.split("."))), "big") for x in (self.src, self.dst)]
        return int(packet_ids(a[0], a[1], self.proto, self.sport, self.dport, self.ident))


def packets(n: int, start: int = 0) -> list[Pkt]:
    flows = [("10.0.1.1", "10.0.2.2", 17, 1111, 5555), ("10.0.1.7", "10.0.2.9", 6, 40000, 80)]
    return [Pkt(*flows[i % 2], ident=start + 37 * i) for i in range(n)]


def digests_after(pkts: list[Pkt], hops: list[int], here: list[int]) -> np.ndarray:
    """Whole digests after each packet's first ``hops`` hops of a path whose
    hop ``here`` is this switch and the ones before have the UPSTREAM ids
    (0 hops: none)."""
    pids = np.array([p.pid() for p in pkts], dtype=np.uint32)
    rows = np.array([UPSTREAM[: h - 1] + [SWITCH_ID] + [0] * (8 - h) for h in here],
                    dtype=np.uint64)
    limit = np.maximum(np.array(hops), 1)
    path, _, _ = trace_paths(CODING, GlobalHashes(SEED, "path"), pids, rows,
                             np.arange(len(pkts)), limit)
    path = np.where(np.array(hops) > 0, path, 0)
    # STF's queues take no time: every hop's latency is 0.
    maxima, _ = max_aggregate(pids, np.zeros((8, len(pkts))), CODEC, GlobalHashes(SEED, "max"),
                              limit)
    sets = PLAN.set_ids(query_selector(SEED).packet_word(pids, "query"))
    return PLAN.compose(sets, {"path": path, "max": maxima})


def with_digest(p: Pkt, ttl: int, digest: int, budget: int = BUDGET) -> bytes:
    """IPv4 onward as PINT carries it: protocol 253, shim, digest, the L4 bytes
    (a budget byte other than 8, 16, 32 stands for a broken shim)."""
    inner = p.ip(ttl)
    l4 = bytes(inner.payload)
    shim = struct.pack("!BB", p.proto, budget) + digest.to_bytes(BUDGET // 8, "big")
    ip = IP(src=p.src, dst=p.dst, id=p.ident, ttl=ttl, tos=0x28, proto=253) / Raw(shim + l4)
    return bytes(ip)


def plain(p: Pkt, ttl: int) -> bytes:
    return bytes(p.ip(ttl))


def frame(dst: int, src: int, ip: bytes) -> bytes:
    return bytes(Ether(dst=mac(dst), src=mac(src), type=0x0800)) + ip


def report(p: Pkt, hops: int, digest: int) -> bytes:
    a = [bytes(map(int, x.split("."))) for x in (p.src, p.dst)]
    body = struct.pack("!I4s4sBHHHBBII", p.pid(), a[0], a[1], p.proto, p.sport, p.dport,
                       p.ident, hops, BUDGET, digest, SWITCH_ID)
    return bytes(Ether(dst=mac(COLLECTOR_MAC), src=mac(REPORT_SRC_MAC), type=0x88B5)) + body


def stf_line(w: TableWrite) -> str:
    params = ", ".join(f"{k}:{v}" for k, v in w.params.items())
    if not w.match:
        return f"setdefault {w.table} {w.action}({params})"
    keys = " ".join(f"{k}:{v[0]}->{v[1]}" if isinstance(v, tuple) else f"{k}:{v}"
                    for k, v in w.match.items())
    prio = "" if w.priority is None else f" {w.priority}"
    return f"add {w.table}{prio} {keys} {w.action}({params})"


def config_lines(source_ports: list[int], sink_ports: list[int]) -> list[str]:
    writes = pint_writes(PLAN, SEED, switch_id=SWITCH_ID, path_codings={"path": CODING},
                         value_codecs={"max": CODEC}, source_ports=source_ports,
                         sink_ports=sink_ports, init_ttl=INIT_TTL,
                         report_macs=(REPORT_SRC_MAC, COLLECTOR_MAC))
    lines = ["add MyIngress.ipv4_lpm hdr.ipv4.dstAddr:0x0a000200/24 "
             f"MyIngress.ipv4_forward(dstAddr:{NEXT_MAC}, port:2)"]
    lines += [stf_line(w) for w in writes]
    if sink_ports:
        lines.append(f"mirroring_add {REPORT_SESSION} {COLLECTOR_PORT}")
    return lines


def packet(port: int, dst: int, src: int, ip: bytes) -> str:
    return f"packet {port} {frame(dst, src, ip).hex()}"


def expect(port: int, data: bytes) -> str:
    return f"expect {port} {data.hex()} $"


HEADER = """# Generated by tests/pint/test_pint_p4_stf.py from sinks/pint/ (do not edit):
# plan = path 8 bits on 0.75 and max 8 bits on 0.5 of the packets in 16 bits,
# hybrid path coding (tau 0.5, p 0.3, 4 fragments of a 32-bit id), seed 11.
"""


def source_stf() -> str:
    """Hop 1: host packets on port 1 get the shim and this hop's writes."""
    pkts = packets(16)
    digests = digests_after(pkts, [1] * len(pkts), [1] * len(pkts))
    out = [HEADER + "# Source: packets from the host on port 1 leave port 2 carrying the digest.",
           *config_lines([1], [])]
    for p, d in zip(pkts, digests):
        out.append(packet(1, ROUTER_MAC, HOST_MAC, plain(p, INIT_TTL)))
        out.append(expect(2, frame(NEXT_MAC, ROUTER_MAC, with_digest(p, INIT_TTL - 1, int(d)))))
    icmp = bytes(IP(src="10.0.1.1", dst="10.0.2.2", ttl=INIT_TTL) / ICMP() / Raw(b"ping"))
    routed = IP(icmp)
    routed.ttl -= 1
    del routed.chksum
    out.append("# Not TCP or UDP: routed only.")
    out.append(packet(1, ROUTER_MAC, HOST_MAC, icmp))
    out.append(expect(2, frame(NEXT_MAC, ROUTER_MAC, bytes(routed))))
    return "\n".join(out) + "\n"


def arrivals(pkts: list[Pkt], hops: list[int]) -> list[tuple[Pkt, int, int, int, int]]:
    """(packet, hop, TTL on arrival, digest before, digest after this hop)."""
    before = digests_after(pkts, [h - 1 for h in hops], hops)
    after = digests_after(pkts, hops, hops)
    return [(p, h, INIT_TTL - h + 1, int(d0), int(d1))
            for p, h, d0, d1 in zip(pkts, hops, before, after)]


def transit_hops(n: int) -> list[int]:
    return [2 + i % 6 for i in range(n)]


def transit_stf() -> str:
    """Hops 2-7: the digest as upstream left it, then this hop's writes."""
    pkts = packets(12, start=5)
    pkts = [p for p in pkts for _ in range(2)]  # each packet id at two hop numbers
    out = [HEADER + "# Transit: the same packet ids at hops 2-7 (TTL 64 - hop + 1).",
           *config_lines([], [])]
    for p, _, ttl, d0, d1 in arrivals(pkts, transit_hops(len(pkts))):
        out.append(packet(1, ROUTER_MAC, NEXT_MAC, with_digest(p, ttl, d0)))
        out.append(expect(2, frame(NEXT_MAC, ROUTER_MAC, with_digest(p, ttl - 1, d1))))
    broken = packets(1, start=999)[0]
    out.append("# A shim with budget 24, which no parser knows: routed as it came.")
    out.append(packet(1, ROUTER_MAC, NEXT_MAC, with_digest(broken, 60, 0x1234, budget=24)))
    out.append(expect(2, frame(NEXT_MAC, ROUTER_MAC, with_digest(broken, 59, 0x1234, budget=24))))
    return "\n".join(out) + "\n"


def sink_hops(n: int) -> list[int]:
    return [1 + i % 6 for i in range(n)]


def sink_stf() -> str:
    """Hops 1-6 ending here: the host gets the packet as sent (routed), the
    collector the report. Hop 1 comes from the host on port 3 (source and
    sink in one switch)."""
    pkts = packets(12, start=3)
    out = [HEADER + "# Sink: port 2 faces the host; port 3 is a source (hop 1 packets).",
           *config_lines([3], [2])]
    for p, h, ttl, d0, d1 in arrivals(pkts, sink_hops(len(pkts))):
        if h == 1:
            out.append(packet(3, ROUTER_MAC, HOST_MAC, plain(p, ttl)))
        else:
            out.append(packet(1, ROUTER_MAC, NEXT_MAC, with_digest(p, ttl, d0)))
        out.append(expect(2, frame(NEXT_MAC, ROUTER_MAC, plain(p, ttl - 1))))
        out.append(expect(COLLECTOR_PORT, report(p, h, d1)))
    broken = packets(1, start=999)[0]
    out.append("# A shim with budget 24, which no parser knows: dropped, not given to the host.")
    out.append(packet(1, ROUTER_MAC, NEXT_MAC, with_digest(broken, 60, 0x1234, budget=24)))
    return "\n".join(out) + "\n"


GENERATORS = {"pint_source": source_stf, "pint_transit": transit_stf, "pint_sink": sink_stf}


def write_all() -> None:
    for name, gen in GENERATORS.items():
        (STF_DIR / f"{name}.stf").write_text(gen())


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_stf_file_is_what_the_pint_sink_derives(name: str) -> None:
    path = STF_DIR / f"{name}.stf"
    assert path.read_text() == GENERATORS[name](), f"regenerate {path.name}"
    assert program_for(path) == program_path("pint")


@pytest.fixture(scope="module")
def program():  # type: ignore[no-untyped-def]
    return compile_file(program_path("pint"))


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_stf_passes(program, name: str) -> None:  # type: ignore[no-untyped-def]
    result = run_stf(program, STF_DIR / f"{name}.stf")
    assert result.passed, result.diff


def test_transit_corpus_covers_g_and_query_selection() -> None:
    """The transit file checks both outcomes of every decision: hops that
    write and hops g tells to stay out, Baseline and XOR packets, every query
    set and none, and each packet id at two hop numbers (so its query set,
    recomputed at each, must agree)."""
    pkts = [p for p in packets(12, start=5) for _ in range(2)]
    hops = transit_hops(len(pkts))
    pids = np.array([p.pid() for p in pkts], dtype=np.uint32)
    sets = PLAN.set_ids(query_selector(SEED).packet_word(pids, "query"))
    path_sets = {s.set_id for s in PLAN.sets if any(q.query == "path" for q in s.placements)}
    runs_path = np.isin(sets, list(path_sets))
    masks, _ = participants(CODING, GlobalHashes(SEED, "path"), pids, np.array(hops))
    writes = np.array([bool(int(m) >> (h - 1) & 1) for m, h in zip(masks, hops)])
    baseline = below(GlobalHashes(SEED, "path").packet_word(pids, "scheme"), CODING.tau)
    before = digests_after(pkts, [h - 1 for h in hops], hops)
    after = digests_after(pkts, hops, hops)
    changed = before != after
    assert (changed == (writes & runs_path)).all()
    assert (writes & runs_path).any() and (~writes & runs_path).any()
    assert baseline[runs_path].any() and (~baseline[runs_path]).any()
    assert set(sets.tolist()) == {0, *(s.set_id for s in PLAN.sets)}
    assert len({(pid, h) for pid, h in zip(pids.tolist(), hops)}) == len(pkts)
    assert len(set(pids.tolist())) == len(pkts) // 2


if __name__ == "__main__":
    write_all()
    sys.exit(0)
