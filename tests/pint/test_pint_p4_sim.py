"""Path tracing decodes the true path of every flow in a 1,000-flow fat-tree
sim run (p4src/pint.p4 on a k=4 fat-tree, the sim target).

1,000 flows between random host pairs (1, 3 or 5 switches), hybrid coding
tuned for 5 hops in a 32-bit digest. The sinks' reports are parsed by
``sinks.pint.sink_reports`` and decoded by the recording module
(``inference.decode_flow``); the true path is the switches that transmitted
each flow's first packet, from the simulator's taps. To stay within the
time of a unit test, a flow does not send a fixed number of packets: it
sends the number the decoder needs for its hop count, computed beforehand
from the hash decisions alone (``trace_paths`` and the peeling decoder over
ids that are not the switches') plus 2: 9,022 packets in all, 9.0 per flow
on average, 21 at most (about 10 s of CPU; 21 s wall at load average 7).
The decoded switch ids come only from the digests the switches wrote, so a
data plane whose hashes or writes differ from sinks/pint's decodes
wrong ids, conflicts or nothing.
"""

from __future__ import annotations

import struct

import networkx as nx
import numpy as np
import pytest

from orchestration.network import open_network
from orchestration.systems.pint import (
    QUERY,
    HostFlow,
    PintRunResult,
    flow_frame,
    frame_flow,
    random_flows,
    run_pint,
)
from sinks.pint.analysis import tuned_hybrid
from sinks.pint.hashing import GlobalHashes, packet_ids
from sinks.pint.inference import decode_flow
from sinks.pint.pathtrace import PathCoding, trace_paths
from sinks.pint.peeling import PathDecode
from topologies.generators import fat_tree
from topologies.model import Topology, ip_to_int

SEED = 4
FLOWS = 1000
SPARE = 2
CODING = PathCoding(32, 32, *tuned_hybrid(5))


def hop_count(topo: Topology, flow: HostFlow) -> int:
    a, b = topo.host_switch(flow.src)[0], topo.host_switch(flow.dst)[0]
    return int(nx.shortest_path_length(topo.switch_graph(), a, b)) + 1


def packets_needed(topo: Topology, flow: HostFlow, limit: int = 200) -> int:
    """Packets after which the decoder knows every hop of this flow, from
    the hash decisions alone (any ids will do: random ones here)."""
    k = hop_count(topo, flow)
    src, dst = (ip_to_int(topo.hosts[h].ip) for h in (flow.src, flow.dst))
    pids = packet_ids(src, dst, 17, flow.sport, flow.dport, np.arange(limit))
    ids = np.random.default_rng(k).integers(1, 2**32, k, dtype=np.uint64)
    hashes = GlobalHashes(SEED, QUERY)
    digests, _, _ = trace_paths(CODING, hashes, pids, ids)
    result = decode_flow(CODING, hashes, pids, k, digests)
    assert result.complete, flow
    return int(result.packets_needed)


@pytest.fixture(scope="module")
def run() -> tuple[Topology, dict[HostFlow, int], PintRunResult]:
    topo = fat_tree(4)
    flows = {f: packets_needed(topo, f) + SPARE for f in random_flows(topo, FLOWS, SEED)}
    # The paper's switches (ns-3) take no time of their own; with BMv2's,
    # this test's bursts would overrun their input buffers.
    net = open_network("sim", topo, "pint", seed=SEED, switch_model="ideal")
    return topo, flows, run_pint(net, topo, flows=flows, coding=CODING, seed=SEED)


def test_every_flow_decodes_to_its_true_path(run) -> None:  # type: ignore[no-untyped-def]
    topo, flows, result = run
    assert result.problems == {}
    assert len(result.decoded) == len(result.true_paths) == FLOWS
    lengths = {len(p) for p in result.true_paths.values()}
    assert lengths == {1, 3, 5}
    for flow, decoded in result.decoded.items():
        assert isinstance(decoded, PathDecode), decoded
        assert decoded.complete and decoded.conflicts == 0, flow
        assert decoded.path == result.true_paths[flow], flow
    assert set(result.switch_ids.values()) >= {i for p in result.true_paths.values() for i in p}


def test_every_packet_reported_once_and_delivered_as_sent(run) -> None:  # type: ignore[no-untyped-def]
    topo, flows, result = run
    assert result.sent == sum(flows.values()) and result.reports == result.sent
    assert len(result.delivered) == result.sent
    by_key = {}
    for flow in flows:
        frame = flow_frame(topo, flow, 0)
        parsed = frame_flow(frame)
        assert parsed is not None
        by_key[parsed[0]] = flow
    seen = set()
    for got in result.delivered:
        parsed = frame_flow(got)
        assert parsed is not None and parsed[0][2] == 17
        flow = by_key[parsed[0]]
        sent = flow_frame(topo, flow, parsed[1])
        hops = len(result.true_paths[parsed[0]])
        # The IPv4 header as routed (TTL down by the hop count, checksum
        # anew); everything after it byte-exact.
        assert got[34:] == sent[34:]
        assert got[22] == sent[22] - hops
        assert got[14:22] == sent[14:22] and got[23:24] == sent[23:24]
        assert got[26:34] == sent[26:34]
        words = struct.unpack("!10H", got[14:34])
        total = sum(words)
        while total > 0xFFFF:
            total = (total & 0xFFFF) + (total >> 16)
        assert total == 0xFFFF
        seen.add((flow, parsed[1]))
    assert len(seen) == result.sent
