"""INT packets into the flow cache through the collector's parser: values
against packets built with Scapy; malformed packets counted and skipped,
never raised; the trace generator's frames read back by Scapy and from pcap."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
from scapy.all import IP, UDP, Ether, Raw

from common.pcap import read_pcap
from controller.flowcache.cache import FlowCache, flow_key
from controller.flowcache.config import FlowCacheConfig
from controller.flowcache.ingest import (
    INT_PORT,
    NOT_INT,
    TOO_MANY_HOPS,
    IngestStats,
    frames_to_batch,
    rows_to_batch,
)
from controller.flowcache.trace import QUEUE_MAX, TraceSpec, generate, write_pcap
from tests.collector.report_builders import (
    HopLatency,
    MetadataHeaderV20,
    NodeId,
    Queue,
    ShimV20,
    TxUtil,
)

SRC, DST, SPORT, DPORT = "10.1.2.3", "10.9.8.7", 40000, 5001


def int_frame(hops: list[tuple[int, int, int, int]], *, words: int = 4, shim_extra: int = 0,
              cut: int = 0, dport: int = INT_PORT, sport: int = SPORT) -> bytes:
    """An INT v2.0 over UDP frame; ``hops`` source first, as (switch,
    latency, queue, utilization); the first ``words`` instructions of the
    four. ``shim_extra`` words are added to the shim length, ``cut`` bytes
    cut from the end."""
    items = (NodeId, HopLatency, Queue, TxUtil)[:words]
    bitmap = (0x8000, 0x2000, 0x1000, 0x0100)
    stack = b""
    for hop in reversed(hops):  # newest hop first on the wire
        fields = ({"node_id": hop[0]}, {"hop_latency": hop[1]},
                  {"queue_id": 1, "queue_occupancy": hop[2]}, {"egress_tx_util": hop[3]})
        stack += b"".join(bytes(item(**f)) for item, f in zip(items, fields))
    int_part = bytes(ShimV20(type=1, npt=1, length=3 + len(hops) * words + shim_extra,
                             npt_field=DPORT)
                     / MetadataHeaderV20(hop_ml=words, remaining_hop_cnt=8,
                                         instructions=sum(bitmap[:words]))) + stack
    frame = bytes(Ether() / IP(src=SRC, dst=DST, tos=0) / UDP(sport=sport, dport=dport)
                  / Raw(int_part + bytes(18)))
    return frame[:len(frame) - cut] if cut else frame


def ip(text: str) -> int:
    return int.from_bytes(bytes(int(x) for x in text.split(".")), "big")


def test_values_keys_and_order_from_scapy_packets() -> None:
    hops = [(11, 100, 7, 30), (12, 200, 8, 40), (13, 300, 9, 50)]
    frames = [int_frame(hops), int_frame(hops[:2], words=2, sport=1)]
    stats = IngestStats()
    batch = frames_to_batch(frames, np.array([5, 6]), max_hops=4, stats=stats)
    assert stats.accepted == 2 and not stats.skipped
    k0, k1 = flow_key(ip(SRC), ip(DST), 17, SPORT, DPORT)  # the original port, from the shim
    assert (int(batch.key0[0]), int(batch.key1[0])) == (k0, k1)
    assert batch.values[0].tolist() == [list(h) for h in hops] + [[0, 0, 0, 0]]
    assert batch.hops.tolist() == [3, 2] and batch.present.tolist() == [15, 3]
    assert batch.values[1, :2, :2].tolist() == [[11, 100], [12, 200]]
    assert batch.ts.tolist() == [5, 6]


def test_malformed_packets_are_counted_and_skipped() -> None:
    good = int_frame([(1, 2, 3, 4)])
    frames = [
        good,
        int_frame([(1, 2, 3, 4)], shim_extra=40),  # shim length past the end of the frame
        int_frame([(1, 2, 3, 4), (5, 6, 7, 8)], shim_extra=1),  # not a whole number of hops
        int_frame([(1, 2, 3, 4)] * 3, cut=60),  # cut inside the stack
        good[:30],  # cut inside the IPv4 header
        b"",
        bytes(Ether() / IP(src=SRC, dst=DST) / UDP(sport=1, dport=53) / Raw(bytes(30))),
        int_frame([(1, 2, 3, 4)] * 5),  # more hops than the cache keeps
        good,
    ]
    stats = IngestStats()
    batch = frames_to_batch(frames, np.arange(len(frames)), max_hops=4, stats=stats)
    assert batch.ts.tolist() == [0, 8] and stats.accepted == 2
    assert stats.skipped == {"hops_overflow": 2, "bad_length": 1, "truncated": 2, NOT_INT: 1,
                             TOO_MANY_HOPS: 1}
    assert stats.total == len(frames)
    cache = FlowCache(FlowCacheConfig(rows=4, buckets=2, max_hops=4))
    cache.process(batch)
    assert cache.counters["packets"] == 2


def test_trace_frames_read_back_by_scapy_and_by_the_batch_path(tmp_path: Path) -> None:
    spec = TraceSpec(packets=3000, flows=200, hops=3, instructions=4, seed=5)
    trace = generate(spec)
    for i in (0, 1, 2999):
        pkt = Ether(trace.rows[i].tobytes())
        assert len(trace.rows[i]) == 60 + 4 + 12 + 4 * 4 * 3
        ip_header = pkt[IP]
        checked = IP(bytes(ip_header))
        del checked.chksum
        assert IP(bytes(checked)).chksum == ip_header.chksum
        src, dst, _, sport, dport = trace.tuples[trace.flow[i]].tolist()
        assert (ip(ip_header.src), ip(ip_header.dst), pkt[UDP].sport) == (src, dst, sport)
        assert pkt[UDP].dport == INT_PORT
        raw = bytes(pkt[UDP].payload)
        shim = ShimV20(raw[:4])
        assert (shim.type, shim.npt, shim.length, shim.npt_field) == (1, 1, 3 + 12, dport)
        md = MetadataHeaderV20(raw[4:16])
        assert (md.ver, md.hop_ml, md.instructions) == (2, 4, 0xB100)
        words = struct.unpack("!12I", raw[16:64])
        for k in range(3):  # newest hop first
            hop = trace.values[i, 2 - k]
            assert words[4 * k:4 * k + 4] == tuple(hop.tolist())  # queue id 0 in the top byte
    batch = rows_to_batch(trace.rows, trace.ts, max_hops=3)
    assert np.array_equal(batch.values, trace.values)
    assert np.array_equal(batch.ts, trace.ts)
    write_pcap(tmp_path / "t.pcap", trace)
    records = read_pcap(tmp_path / "t.pcap")
    assert [r.t_ns for r in records] == trace.ts.tolist()
    assert all(r.frame == row.tobytes() for r, row in zip(records, trace.rows))


def test_trace_flow_sizes_are_heavy_tailed_and_values_bounded() -> None:
    trace = generate(TraceSpec(packets=200_000, flows=2000, hops=2, instructions=3, seed=9))
    sizes = np.bincount(trace.flow, minlength=2000)
    assert sizes.min() >= 1 and sizes.sum() == 200_000
    top = np.sort(sizes)[::-1][:200].sum() / sizes.sum()
    # Pareto(1.2): the largest 10 % of flows carry about 0.1 ** (1 - 1 / 1.2) = 68 %
    assert top > 0.5
    queue = trace.values[:, :, 2]
    assert queue.max() <= QUEUE_MAX and queue.min() >= 0
    # floor(Exp(mean 40)) has mean 1 / (exp(1 / 40) - 1) = 39.5; 400,000 draws: +/- 0.5
    assert abs(queue.mean() - 39.5) < 0.5
