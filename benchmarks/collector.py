"""Collector speed on one core: reports/s parsed and through the fast path.

(a) batch replay from memory: ``parse_rows`` alone; ``Collector.feed`` of
bytes in the receiver's batch size and in one call; ``Collector.feed_rows``
of the reports in memory in several batch sizes (parse, metrics, event
detection, Info tables; the events go to a ``MemoryStore``, as cheap as
store none), timed by CPU (``time.process_time``, best of 3) and wall clock;
(b) live UDP on loopback: a sender process (``sendmmsg`` from a
preallocated block) paces reports at given rates, then unpaced, to a
``UdpReceiver`` (``recvmmsg``) feeding a ``Collector``; what was received
against what was sent, kernel drops included (received + drops = sent);
(c) the CPU cost per datagram of each side of loopback UDP measured alone,
and the ceilings per core it implies.

Reports are TR v2.0 carrying INT-MD v2.0 over UDP, 6 hops, all nine
baseline instructions (bits 0-8), 100 flows: ``sinks.intcollector.synthetic``'s
template (struct, from ``docs/telemetry_report_format.md``) with the
per-report values written here with numpy, independently of the parser.
Each target (2,000,000 reports/s batch; 1,000,000 reports/s live, and
< 0.1 % loss at 500,000/s) sits beside its measured value in
``versus_target``.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from common.paths import child_env
from common.wallclock import WallClock
from sinks.intcollector import mmsg
from sinks.intcollector.pipeline import Collector, CollectorConfig
from sinks.intcollector.receiver import DEFAULT_BATCH, UdpReceiver, warm_up
from sinks.intcollector.reports import parse_rows
from sinks.intcollector.stores import MemoryStore
from sinks.intcollector.synthetic import (
    GROUP,
    HOP_BYTES,
    HOP_FIELDS,
    STACK,
    UDP,
    report_length,
    template,
)

TARGET = {"batch_reports_per_s": 2_000_000, "live_reports_per_s": 1_000_000,
          "live_loss_free_rate": 500_000, "max_loss": 0.001}
HOPS = 6
FLOWS = 100
FIRST_SPORT = 1000
LIVE_RATES = (100_000, 200_000, 300_000, 500_000, 1_000_000)
REPLAY_BATCHES = (1024, 4096, 8192, 16384)
LIVE_BATCH = 8192  # reports per feed: the fast path's fixed cost per call spread thin

LENGTH = report_length(HOPS)


def _template() -> bytes:
    """One report with the per-report values left zero."""
    return template(HOPS)


def _put(rows: np.ndarray, at: int, size: int, values: np.ndarray) -> None:
    """Big-endian ``values`` into bytes [at, at + size) of every row."""
    values = values.astype(np.uint64)
    for b in range(size):
        rows[:, at + size - 1 - b] = (values >> np.uint64(8 * b)) & np.uint64(0xFF)


def flow_path(flow: np.ndarray | int, hop: int) -> np.ndarray | int:
    """Switch id of ``hop`` (0 = newest) on a flow's path, over 100 switches."""
    return (flow * 7 + hop * 13) % 100 + 1


def hop_values(count: int, seed: int = 3) -> dict[str, np.ndarray]:
    """Per-report, per-hop values, shape (count, HOPS): steady levels with
    +/- 5 of noise and a burst of 400 in one value of a thousand, so event
    detection (thresholds 50) sees mostly quiet reports."""
    rng = np.random.default_rng(seed)
    flow = np.arange(count) % FLOWS
    hop = np.arange(HOPS)

    def noisy(level: int) -> np.ndarray:
        shape = (count, HOPS)
        return (level + rng.integers(-5, 6, shape) + (rng.random(shape) < 0.001) * 400
                ).astype(np.uint64)

    latency = noisy(500)
    ingress = (np.arange(count, dtype=np.uint64)[:, None] * np.uint64(1000)
               + np.uint64(1 << 40) + hop.astype(np.uint64)[None, :] * np.uint64(10_000))
    return {
        "node_id": flow_path(flow[:, None], hop[None, :]).astype(np.uint64),
        "l1_ingress_port": np.broadcast_to(np.uint64(1), (count, HOPS)),
        "l1_egress_port": (2 + flow[:, None] % 4 + 0 * hop[None, :]).astype(np.uint64),
        "hop_latency": latency,
        "queue_id": np.broadcast_to(np.uint64(1), (count, HOPS)),
        "queue_occupancy": noisy(300),
        "ingress_ts": ingress,
        "egress_ts": ingress + latency,
        "l2_ingress_port": np.broadcast_to(np.uint64(1), (count, HOPS)),
        "l2_egress_port": (2 + flow[:, None] % 4 + 0 * hop[None, :]).astype(np.uint64),
        "egress_tx_util": noisy(1000),
        "buffer_id": np.broadcast_to(np.uint64(0), (count, HOPS)),
        "buffer_occupancy": noisy(300),
    }


def generate(count: int, seed: int = 3) -> tuple[np.ndarray, list[bytes]]:
    """``count`` reports of FLOWS flows (report i is flow i % FLOWS, inner
    source port FIRST_SPORT + flow), as (count, LENGTH) uint8 rows and as
    bytes. The group header's node id is the newest hop, seq is i mod 2**22."""
    rows = np.tile(np.frombuffer(_template(), dtype=np.uint8), (count, 1))
    index = np.arange(count, dtype=np.uint64)
    flow = np.arange(count) % FLOWS
    values = hop_values(count, seed)
    _put(rows, GROUP, 4, (np.uint64(2 << 28) | (index & np.uint64((1 << 22) - 1))))
    _put(rows, GROUP + 4, 4, values["node_id"][:, 0])
    _put(rows, UDP, 2, FIRST_SPORT + flow)
    for name, (offset, size) in HOP_FIELDS.items():
        for h in range(HOPS):
            _put(rows, STACK + h * HOP_BYTES + offset, size, values[name][:, h])
    return rows, [row.tobytes() for row in rows]


# --- (a) batch replay from memory ---------------------------------------------------------

def _timed(work: Any) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    work()
    return time.process_time() - cpu, time.perf_counter() - wall


def _rates(count: int, cpu: float, wall: float) -> dict[str, float]:
    return {"reports": count, "cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
            "reports_per_s_cpu": round(count / max(cpu, 1e-9)),
            "reports_per_s_wall": round(count / max(wall, 1e-9))}


def _feed_case(count: int, feed: Any, repeat: int) -> dict[str, Any]:
    """Best of ``repeat`` runs (by CPU time; a shared machine only slows a
    run down), each on a fresh collector; its counters with the rates."""
    best: dict[str, Any] | None = None
    for _ in range(repeat):
        collector = Collector(MemoryStore(), WallClock(), CollectorConfig(event_detection=True))
        case = _rates(count, *_timed(lambda c=collector: feed(c)))
        counters = collector.counters
        case["accepted"] = counters.reports.accepted
        case["events"] = sum(counters.events.values())
        case["values"] = counters.values
        collector.stop()
        collector.clock.close()  # type: ignore[attr-defined]
        if best is None or case["cpu_s"] < best["cpu_s"]:
            best = case
    assert best is not None
    return best


def bench_batch(count: int = 1_000_000, batch: int = DEFAULT_BATCH,
                replay_batches: Sequence[int] = REPLAY_BATCHES,
                repeat: int = 3) -> dict[str, Any]:
    """parse_rows on all reports at once; Collector.feed (event detection
    on, events to a MemoryStore) of bytes in ``batch``-sized calls and in
    one call; Collector.feed_rows of the reports in memory (a 2-D array, as
    replay and the receiver hand them over) in each of ``replay_batches``.
    ``fast_path`` is the best of the rows cases (the target's measure)."""
    warm_up()  # numba loads the compiled loops at their first call: not in a timed case
    rows, payloads = generate(count)
    times = np.arange(count) * 1e-6
    out: dict[str, Any] = {"report_bytes": LENGTH, "hops": HOPS, "flows": FLOWS,
                           "batch": batch, "repeat": repeat}
    result = None

    def parse() -> None:
        nonlocal result
        result = parse_rows(rows)

    out["parse_rows"] = min((_rates(count, *_timed(parse)) for _ in range(repeat)),
                            key=lambda case: case["cpu_s"])
    assert result is not None and result.stats.accepted == count, "generated reports rejected"
    for label, size in (("fast_path_batched", batch), ("fast_path_one_call", count)):
        def feed(c: Collector, size: int = size) -> None:
            for start in range(0, count, size):
                c.feed(payloads[start:start + size], times[start:start + size])

        out[label] = _feed_case(count, feed, 1)
    by_batch = {}
    for size in replay_batches:
        def feed_rows(c: Collector, size: int = size) -> None:
            for start in range(0, count, size):
                c.feed_rows(rows[start:start + size], times[start:start + size])

        by_batch[str(size)] = _feed_case(count, feed_rows, repeat)
    out["fast_path_rows"] = by_batch
    best = max(by_batch, key=lambda size: by_batch[size]["reports_per_s_cpu"])
    out["fast_path"] = {**by_batch[best], "batch": int(best)}
    return out


# --- (b) live UDP on loopback -------------------------------------------------------------

def send(port: int, rate: float, seconds: float, host: str = "127.0.0.1") -> dict[str, float]:
    """Send reports to ``host:port`` at ``rate``/s (0: as fast as it can)
    for ``seconds``, paced in slices of a millisecond: segmented sends
    (``UDP_SEGMENT``, 64 reports a call) where the kernel has them, else
    ``sendmmsg`` from a preallocated block, else one ``send`` per report.
    Counts what the kernel took (``sent``) and what it refused
    (``send_errors``: a full send buffer; not retried)."""
    _, payloads = generate(10_000)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect((host, port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    n = len(payloads)

    def one_by_one(first: int, count: int) -> int:
        done = 0
        for i in range(first, first + count):
            try:
                sock.send(payloads[i % n])
                done += 1
            except OSError:  # ENOBUFS: the send buffer is full
                pass
        return done

    send_many: Any = one_by_one
    how = "send"
    try:  # segmentation offload: GSO_SEGMENTS reports per system call
        send_many, how = mmsg.GsoSender(sock, payloads).send, "UDP_SEGMENT"
    except (OSError, ValueError):
        if mmsg.available():
            send_many, how = mmsg.MmsgSender(sock, payloads).send, "sendmmsg"
    total = int(rate * seconds) if rate > 0 else None
    step = max(1, int(rate / 1000)) if rate > 0 else mmsg.MAX_VLEN
    attempted = sent = 0
    start = time.perf_counter()
    cpu = time.process_time()
    while total is None or attempted < total:
        now = time.perf_counter()
        if total is None:
            if now - start >= seconds:
                break
        else:
            due = start + attempted / rate
            if due > now:
                time.sleep(due - now)
        count = step if total is None else min(step, total - attempted)
        sent += send_many(attempted % n, count)
        attempted += count
    elapsed = time.perf_counter() - start
    sock.close()
    return {"sent": sent, "send_errors": attempted - sent, "send_s": elapsed,
            "send_cpu_s": time.process_time() - cpu, "sendmmsg": mmsg.available(),
            "send_call": how}


def live_case(rate: float, seconds: float = 2.0, batch: int = LIVE_BATCH) -> dict[str, Any]:
    """One paced run: a sender process at ``rate`` (0: unpaced) to a
    receiver feeding a collector (event detection on, events to a
    MemoryStore) in this process, ``batch`` reports per feed."""
    clock = WallClock()
    collector = Collector(MemoryStore(), clock, CollectorConfig(event_detection=True))
    receiver = UdpReceiver(collector, "127.0.0.1", 0, batch=batch, max_datagram=LENGTH + 64)
    try:
        collector.start()
        receiver.start()
        proc = subprocess.run([sys.executable, "-m", "benchmarks.collector", "send",
                               str(receiver.port), str(rate), str(seconds)],
                              capture_output=True, text=True, check=True, env=child_env(),
                              timeout=120 + 4 * seconds)
        sender = json.loads(proc.stdout)
        last = -1
        while receiver.stats.datagrams != last:  # until the receiver is idle
            last = receiver.stats.datagrams
            time.sleep(0.2)
    finally:
        receiver.close()
        collector.stop()
        clock.close()
    stats = receiver.stats
    sent, received = int(sender["sent"]), stats.datagrams
    drops = stats.kernel_drops or 0
    loss = 1 - received / sent if sent else 0.0
    return {"rate": rate, "seconds": seconds, "batch": batch, "sent": sent,
            "sent_per_s": round(sent / sender["send_s"]),
            "sender_cpu_s": round(sender["send_cpu_s"], 3),
            "sendmmsg": sender["sendmmsg"], "recvmmsg": mmsg.available(),
            "send_call": sender["send_call"], "gro": receiver.gro,
            "received": received, "received_per_s": round(stats.span_rate),
            "kernel_drops": stats.kernel_drops, "loss": round(loss, 6),
            "counted_exactly": received + drops == sent,
            "accepted": collector.counters.reports.accepted,
            "events": sum(collector.counters.events.values()),
            "sender_limited": rate > 0 and sent / sender["send_s"] < 0.95 * rate,
            "batches": stats.batches, "cpu_s": round(stats.cpu_s, 3),
            "receive_cpu_s": round(stats.cpu_s - stats.feed_cpu_s, 3),
            "fast_path_cpu_s": round(stats.feed_cpu_s, 3),
            "reports_per_cpu_s": round(stats.cpu_capacity),
            "receive_per_cpu_s": round(received / max(stats.cpu_s - stats.feed_cpu_s, 1e-9))}


def bench_live(rates: Sequence[float] = LIVE_RATES, seconds: float = 2.0,
               max_loss: float = TARGET["max_loss"], batch: int = LIVE_BATCH) -> dict[str, Any]:
    """Every rate in ``rates`` (ascending), stopping after one the sender
    could not reach (within 5 %), then one unpaced run (the sender as fast
    as it can: the highest rate received). The highest loss-free rate is the
    highest *achieved* send rate with loss under ``max_loss``."""
    runs = []
    best: dict[str, Any] | None = None
    for rate in sorted(rates):
        run = live_case(rate, seconds, batch)
        runs.append(run)
        if run["loss"] < max_loss and (best is None or run["sent_per_s"] > best["sent_per_s"]):
            best = run
        if run["sender_limited"]:
            break
    unpaced = live_case(0, seconds, batch)
    limited = any(r["sender_limited"] for r in runs)
    at_100k = next((r for r in runs if r["rate"] == 100_000), None)
    at_500k = next((r for r in runs if r["rate"] == 500_000), None)
    return {"runs": runs, "unpaced": unpaced, "sender_limited": limited, "at_100k": at_100k,
            "at_500k": at_500k, "max_loss": max_loss,
            "highest_received_per_s": max(r["received_per_s"] for r in [*runs, unpaced]),
            "highest_loss_free_rate": best["sent_per_s"] if best else 0,
            "highest_loss_free_run": best}


@contextmanager
def _loopback_pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    """A non-blocking receiver with a 16 MiB buffer and a sender connected
    to it, on loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
        rx.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE (root)
        rx.bind(("127.0.0.1", 0))
        rx.setblocking(False)
        tx.connect(rx.getsockname())
        yield rx, tx


def receive_costs(rounds: int = 5) -> dict[str, Any]:
    """CPU per datagram of each side of loopback UDP, measured alone: the
    socket is filled by ``sendmmsg`` (timed: the sender's system call also
    runs the receiving side's kernel path on loopback), then drained by
    ``recvmmsg`` into the receiver's slots, and once more by one
    ``recv_into`` per datagram. Best of ``rounds`` rounds of about 10,000
    datagrams (what a 16 MiB buffer holds)."""
    _, payloads = generate(10_000)
    out: dict[str, float] = {}
    best = {"send": float("inf"), "recvmmsg": float("inf"), "recv_into": float("inf")}
    with _loopback_pair() as (rx, tx):
        if not mmsg.available():
            return {"available": False}
        sender = mmsg.MmsgSender(tx, payloads)
        receiver = mmsg.MmsgReceiver(rx, 1024, LENGTH + 64)
        slot = memoryview(bytearray(LENGTH + 64))
        for r in range(2 * rounds):
            cpu = time.process_time()
            sent = sender.send(0, len(payloads))
            send_s = time.process_time() - cpu
            cpu, taken = time.process_time(), 0
            if r % 2 == 0:
                while got := receiver.receive(0):
                    taken += got
                way = "recvmmsg"
            else:
                while True:
                    try:
                        rx.recv_into(slot)
                    except BlockingIOError:
                        break
                    taken += 1
                way = "recv_into"
            took = time.process_time() - cpu
            if taken:
                best[way] = min(best[way], took / taken)
            best["send"] = min(best["send"], send_s / max(sent, 1))
    for way, seconds in best.items():
        out[f"{way}_us"] = round(seconds * 1e6, 3)
    out.update(_segmented_costs(payloads, rounds))
    return {"available": True, **out}


def _segmented_costs(payloads: list[bytes], rounds: int) -> dict[str, float]:
    """The same with segmentation offload, as the live case runs: the socket
    filled by ``UDP_SEGMENT`` sends, drained as ``UDP_GRO`` runs. Empty
    where the kernel has neither."""
    best = {"gso_send": float("inf"), "gro_receive": float("inf")}
    with _loopback_pair() as (rx, tx):
        if not mmsg.enable_gro(rx):
            return {}
        try:
            sender = mmsg.GsoSender(tx, payloads)
        except (OSError, ValueError):
            return {}
        buf = bytearray(mmsg.GRO_BUFFER)
        rows = np.zeros((mmsg.GSO_SEGMENTS, LENGTH), dtype=np.uint8)
        view = np.frombuffer(buf, dtype=np.uint8)
        space = socket.CMSG_SPACE(4)
        for _ in range(rounds):
            cpu = time.process_time()
            sent = sender.send(0, len(payloads))
            best["gso_send"] = min(best["gso_send"], (time.process_time() - cpu) / max(sent, 1))
            cpu, taken = time.process_time(), 0
            while True:
                try:
                    nbytes, anc, _, _ = rx.recvmsg_into([buf], space)
                except BlockingIOError:
                    break
                seg = mmsg.gro_segment(anc, nbytes) or LENGTH
                whole = nbytes // seg
                rows[:whole, :seg] = view[:whole * seg].reshape(whole, seg)  # as the receiver
                taken += whole
            if taken:
                best["gro_receive"] = min(best["gro_receive"],
                                          (time.process_time() - cpu) / taken)
    return {f"{way}_us": round(seconds * 1e6, 3) for way, seconds in best.items()
            if seconds != float("inf")}


def versus_target(batch: dict[str, Any], live: dict[str, Any] | None) -> dict[str, Any]:
    """Each target beside the measured value, and whether it is met."""
    def row(measured: float | None, target: float, higher: bool = True) -> dict[str, Any]:
        met = None if measured is None else (measured >= target if higher else measured < target)
        return {"measured": measured, "target": target, "met": met}

    out = {"batch_reports_per_s": row(batch["fast_path"]["reports_per_s_cpu"],
                                      TARGET["batch_reports_per_s"])}
    if live is not None:
        at_500k = live["at_500k"]
        out["live_reports_per_s"] = row(live["highest_received_per_s"],
                                        TARGET["live_reports_per_s"])
        out["loss_at_500k"] = row(None if at_500k is None else at_500k["loss"],
                                  TARGET["max_loss"], higher=False)
    return out


def run_collector_benchmarks(reports: int = 1_000_000, rates: Sequence[float] = LIVE_RATES,
                             seconds: float = 2.0) -> dict[str, Any]:
    """Both cases and the targets, as one JSON-ready dict."""
    batch = bench_batch(reports)
    live = bench_live(rates, seconds)
    costs = receive_costs()
    fast = batch["fast_path_rows"].get(str(LIVE_BATCH), batch["fast_path"])
    if costs["available"]:  # the receiving core's ceiling: receive + fast path per report
        receive_us = costs.get("gro_receive_us", costs["recvmmsg_us"])
        per_report_us = receive_us + 1e6 / fast["reports_per_s_cpu"]
        costs["receiver_ceiling_per_s"] = round(1e6 / per_report_us)
        costs["sender_ceiling_per_s"] = round(1e6 / costs.get("gso_send_us", costs["send_us"]))
    return {"batch": batch, "live": live, "costs": costs, "target": dict(TARGET),
            "versus_target": versus_target(batch, live)}


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "send":
        print(json.dumps(send(int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]))))
    else:
        print(json.dumps(run_collector_benchmarks()))
