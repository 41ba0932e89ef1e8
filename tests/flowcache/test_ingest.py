"""INT packets into the flow cache through the collector's parser: values
against packets built with Scapy; malformed packets counted and skipped,
never raised; the trace generator's frames read back by Scapy and from pcap."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from scapy.all import IP, UDP, Ether, Raw

from common.pcap import LINKTYPE_NULL, PcapError, PcapWriter, read_pcap
from sinks.flowcache.cache import FlowCache, flow_key
from sinks.flowcache.config import FlowCacheConfig
from sinks.flowcache.ingest import (
    INT_PORT,
    NOT_INT,
    TOO_MANY_HOPS,
    IngestStats,
    frames_to_batch,
    pcap_batches,
    rows_to_batch,
)
from sinks.flowcache.trace import QUEUE_MAX, TraceSpec, generate, write_pcap
from tests.intcollector.report_builders import (
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


def test_pcap_batches_equal_the_trace(tmp_path: Path) -> None:
    trace = generate(TraceSpec(packets=2500, flows=100, hops=2, instructions=3, seed=6))
    write_pcap(tmp_path / "t.pcap", trace)
    stats = IngestStats()
    batches = list(pcap_batches(tmp_path / "t.pcap", max_hops=2, batch=1000, stats=stats))
    assert [len(b) for b in batches] == [1000, 1000, 500] and stats.accepted == 2500
    values = np.concatenate([b.values for b in batches])
    assert np.array_equal(values[:, :, :3], trace.values[:, :, :3])
    assert not values[:, :, 3].any()  # the fourth instruction was not in the packets
    assert np.array_equal(np.concatenate([b.ts for b in batches]), trace.ts)
    assert {int(p) for b in batches for p in b.present} == {0b0111}


def test_pcap_that_is_not_ethernet_or_not_pcap_is_one_line(tmp_path: Path) -> None:
    with PcapWriter(tmp_path / "null.pcap", linktype=LINKTYPE_NULL) as out:
        out.write(bytes(40), 0)
    (tmp_path / "text.pcap").write_text("hello, this is not a capture\n")
    for name, message in (("null.pcap", "link type 0"), ("text.pcap", "not a pcap file"),
                          ("absent.pcap", "cannot read")):
        with pytest.raises(PcapError) as err:
            list(pcap_batches(tmp_path / name, max_hops=2))
        assert message in err.value.line() and "\n" not in err.value.line()


def test_corrupted_bytes_never_raise() -> None:
    """Every byte of valid frames flipped at random, lengths cut at random:
    each frame is taken or counted, never an exception."""
    rng = np.random.default_rng(12)
    base = [int_frame([(1, 2, 3, 4)] * h, words=w) for h in (1, 2, 3) for w in (1, 2, 4)]
    frames = []
    for _ in range(3000):
        frame = bytearray(base[rng.integers(len(base))])
        for at in rng.integers(0, len(frame), rng.integers(1, 4)):
            frame[at] = rng.integers(256)
        if rng.random() < 0.3:
            frame = frame[:rng.integers(0, len(frame))]
        frames.append(bytes(frame))
    stats = IngestStats()
    batch = frames_to_batch(frames, np.arange(len(frames)), max_hops=3, stats=stats)
    assert stats.total == len(frames) == len(batch) + sum(stats.skipped.values())
    assert len(batch) > 300 and sum(stats.skipped.values()) > 300
    FlowCache(FlowCacheConfig(rows=8, buckets=2, max_hops=3)).process(batch)


def test_an_empty_input_is_an_empty_batch() -> None:
    stats = IngestStats()
    batch = frames_to_batch([], np.zeros(0), max_hops=3, stats=stats)
    assert len(batch) == 0 and stats.total == 0
    assert len(rows_to_batch(np.zeros((0, 120), np.uint8), np.zeros(0), max_hops=3)) == 0
    cache = FlowCache(FlowCacheConfig(rows=4, buckets=2, max_hops=3))
    cache.process(batch)
    assert cache.counters["packets"] == 0 and len(cache.drain_events()) == 0
