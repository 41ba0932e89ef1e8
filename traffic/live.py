"""Senders and receivers for the live targets: processes inside host namespaces.

The ``mininet`` and ``bmv2`` targets replay the same ``Schedule`` a
simulated host plays, from a process in the host's network namespace::

    python -m traffic.live send --iface h1-eth0 --schedule h1.json --log h1.sent.csv
    python -m traffic.live recv --iface h2-eth0 --log h2.recv.csv --udp-sink 20000

Both speak a two-line protocol with the orchestrator so that every host
starts on the same instant: once ready (socket open, every frame built) a
process prints ``ready``; it then reads ``start NS`` from stdin, NS being
the ``CLOCK_MONOTONIC`` nanosecond of the schedule's time 0 (one clock for
every namespace of the machine). A sender sends frame i at NS + t_i (an
absolute deadline, so a late frame does not delay the next ones), writes
its ``SentLog`` CSV (scheduled times, the sim's columns) and a JSON summary
(lateness, frames dropped by ``--loss``), and exits. A receiver records
every arriving frame with its time since NS until ``stop`` (or EOF, or
SIGTERM) and writes its ``Receiver`` CSV. SIGTERM makes a sender stop early
and log what it sent.

Frames go out through a raw ``AF_PACKET`` socket: the kernel's checksum
offload never touches them, so their checksums are the ones the schedule
built. ``--loss P`` drops each frame before the wire with probability P
(the host-to-switch direction of a lossy link: the switches emulate the
other direction on their ports). A receiver's ``--udp-sink PORT`` binds a
UDP socket it never reads, so the host's kernel does not answer the
traffic with ICMP port-unreachable messages (the sim's hosts answer
nothing); once its small buffer is full the kernel drops silently.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import random
import select
import signal
import socket
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from common.rawsock import RawSocketError, open_raw_socket
from traffic.errors import TrafficError
from traffic.packets import FlowKey, FlowSpec
from traffic.receiver import Receiver
from traffic.schedules import Schedule
from traffic.sender import Sender, SentLog

SCHEDULE_VERSION = 1
MAX_FRAME = 65536
RECV_BUFFER = 8 << 20  # bytes: rides out a burst while the receiver is descheduled
SINK_BUFFER = 4096  # bytes: the UDP sink only has to exist
SLEEP_SLICE_S = 0.1  # longest sleep between two checks of the stop flag


# --------------------------------------------------------------------------- schedule files


def write_schedule(path: str | Path, schedule: Schedule) -> None:
    """A schedule whose destinations are ``FlowSpec``s, as JSON."""
    flows = []
    for dest in schedule.dests:
        if not isinstance(dest, FlowSpec):
            raise TrafficError(f"a live schedule needs flows as destinations, not {dest!r}")
        flows.append(asdict(dest))
    doc = {"version": SCHEDULE_VERSION, "flows": flows,
           "times_us": schedule.times_us.tolist(), "dest_index": schedule.dest_index.tolist(),
           "seqs": schedule.seqs.tolist(), "sizes": schedule.sizes.tolist()}
    Path(path).write_text(json.dumps(doc, separators=(",", ":")))


def read_schedule(path: str | Path) -> Schedule:
    """The schedule ``write_schedule`` wrote."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise TrafficError(f"{path}: cannot read the schedule: {exc}") from None
    if doc.get("version") != SCHEDULE_VERSION:
        raise TrafficError(f"{path}: schedule version {doc.get('version')!r} is not "
                           f"{SCHEDULE_VERSION}")
    flows = tuple(FlowSpec(**f) for f in doc["flows"])
    return Schedule(np.array(doc["times_us"], dtype=np.int64),
                    np.array(doc["dest_index"], dtype=np.int64),
                    np.array(doc["seqs"], dtype=np.int64),
                    np.array(doc["sizes"], dtype=np.int64), flows)


# --------------------------------------------------------------------------- logs back


def read_sent_log(path: str | Path) -> SentLog:
    """A ``SentLog`` from the CSV ``SentLog.write_csv`` wrote."""
    log = SentLog()
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = FlowKey(row["src_ip"], row["dst_ip"], int(row["proto"]), int(row["sport"]),
                          int(row["dport"]))
            log.record(int(row["time_us"]), key, int(row["seq"]), int(row["size"]))
    return log


def read_receiver(path: str | Path, name: str = "") -> Receiver:
    """A ``Receiver`` from the CSV ``Receiver.write_csv`` wrote."""
    rx = Receiver(name)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            rx.times_us.append(int(row["arrival_us"]))
            rx.sizes.append(int(row["size"]))
            rx.hashes.append(bytes.fromhex(row["hash"]))
            if row["src_ip"]:
                rx.keys.append(FlowKey(row["src_ip"], row["dst_ip"], int(row["proto"]),
                                       int(row["sport"]), int(row["dport"])))
            else:
                rx.keys.append(None)
            rx.seqs.append(int(row["seq"]) if row["seq"] else None)
    return rx


# --------------------------------------------------------------------------- sending


@dataclass
class SendStats:
    """What a sender did. Lateness is actual minus scheduled send time (µs)."""

    scheduled: int = 0
    sent: int = 0
    host_lost: int = 0
    send_errors: int = 0
    late_p50_us: float = 0.0
    late_p99_us: float = 0.0
    late_max_us: float = 0.0
    stopped_early: bool = False

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SendStats:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def build_frames(schedule: Schedule) -> tuple[list[int], list[bytes], SentLog]:
    """Every ``(time_us, frame)`` of the schedule, built before the first send."""
    sender = Sender(schedule)
    times: list[int] = []
    frames: list[bytes] = []
    for t, frame in sender:
        times.append(t)
        frames.append(frame)
    return times, frames, sender.log


def pace(send: Callable[[bytes], object], times_us: Sequence[int], frames: Sequence[bytes],
         start_ns: int, *, loss: float = 0.0, rng: random.Random | None = None,
         stopped: Callable[[], bool] = lambda: False) -> tuple[int, SendStats]:
    """Send ``frames[i]`` at ``start_ns + times_us[i]`` on the monotonic clock.

    Deadlines are absolute, so lateness never accumulates. Returns how many
    frames were handled (sent or dropped by ``loss``) and the statistics.
    """
    stats = SendStats(scheduled=len(frames))
    late: list[int] = []
    now_ns = time.monotonic_ns
    draw = (rng or random.Random(0)).random
    handled = 0
    for t_us, frame in zip(times_us, frames):
        due = start_ns + t_us * 1000
        while True:
            if stopped():
                stats.stopped_early = True
                break
            wait = due - now_ns()
            if wait <= 0:
                break
            time.sleep(min(wait / 1e9, SLEEP_SLICE_S))
        if stats.stopped_early:
            break
        late.append(now_ns() - due)
        handled += 1
        if loss and draw() < loss:
            stats.host_lost += 1
            continue
        try:
            send(frame)
            stats.sent += 1
        except OSError:
            stats.send_errors += 1
    if late:
        arr = np.asarray(late, dtype=np.float64) / 1000.0
        stats.late_p50_us = float(np.percentile(arr, 50))
        stats.late_p99_us = float(np.percentile(arr, 99))
        stats.late_max_us = float(arr.max())
    return handled, stats


def packet_socket(iface: str, rcvbuf: int | None = None) -> socket.socket:
    """A blocking raw socket on ``iface`` for every EtherType, outgoing
    frames hidden where the kernel can (``receive`` skips the rest)."""
    try:
        return open_raw_socket(iface, rcvbuf=rcvbuf)
    except RawSocketError as exc:
        raise TrafficError(exc.message) from None


def _read_line(fd: int) -> str:
    """One line from ``fd``, unbuffered (what follows stays in the pipe)."""
    out = bytearray()
    while True:
        b = os.read(fd, 1)
        if not b or b == b"\n":
            return out.decode(errors="replace")
        out += b


def _await_start(stdin: TextIO, stdout: TextIO) -> int | None:
    """Say ``ready``, then read ``start NS``; None when stdin closes first."""
    print("ready", file=stdout, flush=True)
    line = _read_line(stdin.fileno()).strip()
    if not line:
        return None
    word, _, value = line.partition(" ")
    if word != "start" or not value.lstrip("-").isdigit():
        raise TrafficError(f"expected 'start NS' on stdin, got {line!r}")
    return int(value)


def _sent_prefix(log: SentLog, n: int) -> SentLog:
    out = SentLog()
    out.times_us, out.keys = log.times_us[:n], log.keys[:n]
    out.seqs, out.sizes = log.seqs[:n], log.sizes[:n]
    return out


def run_sender(args: argparse.Namespace, stdin: TextIO = sys.stdin,
               stdout: TextIO = sys.stdout) -> int:
    stop = _StopFlag()
    schedule = read_schedule(args.schedule)
    times, frames, log = build_frames(schedule)
    sock = packet_socket(args.iface)
    try:
        start_ns = _await_start(stdin, stdout)
        if start_ns is None:
            return 1
        rng = random.Random(args.seed)
        handled, stats = pace(sock.send, times, frames, start_ns, loss=args.loss, rng=rng,
                              stopped=stop)
    finally:
        sock.close()
    _sent_prefix(log, handled).to_csv(args.log)
    if args.summary:
        Path(args.summary).write_text(json.dumps(asdict(stats), indent=1) + "\n")
    print(f"done {stats.sent}", file=stdout, flush=True)
    return 0


# --------------------------------------------------------------------------- receiving


def _udp_sinks(ports: Sequence[int]) -> list[socket.socket]:
    socks = []
    for port in ports:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SINK_BUFFER)
        s.bind(("0.0.0.0", port))
        socks.append(s)
    return socks


def receive(sock: socket.socket, rx: Receiver, start_ns: int, control: TextIO | None,
            stopped: Callable[[], bool]) -> None:
    """Record frames of ``sock`` into ``rx`` (µs since ``start_ns``) until a
    ``stop`` line or EOF on ``control``, or ``stopped()``."""
    ep = select.epoll()
    sock.setblocking(False)
    ep.register(sock.fileno(), select.EPOLLIN)
    ctl_fd = control.fileno() if control is not None else -1
    if ctl_fd >= 0:
        ep.register(ctl_fd, select.EPOLLIN | select.EPOLLHUP)
    now_ns = time.monotonic_ns
    recv = sock.recvfrom
    record = rx.receive
    try:
        while not stopped():
            for fd, _ in ep.poll(SLEEP_SLICE_S):
                if fd == ctl_fd:
                    line = os.read(ctl_fd, 4096)
                    if not line or b"stop" in line:
                        return
                    continue
                while True:
                    try:
                        frame, addr = recv(MAX_FRAME)
                    except BlockingIOError:
                        break
                    if addr[2] == socket.PACKET_OUTGOING:
                        continue
                    record(frame, (now_ns() - start_ns) // 1000)
    finally:
        ep.close()


def run_receiver(args: argparse.Namespace, stdin: TextIO = sys.stdin,
                 stdout: TextIO = sys.stdout) -> int:
    stop = _StopFlag()
    sock = packet_socket(args.iface, RECV_BUFFER)
    sinks = _udp_sinks(args.udp_sink)
    rx = Receiver(args.name or args.iface)
    try:
        start_ns = _await_start(stdin, stdout)
        if start_ns is not None:
            receive(sock, rx, start_ns, stdin, stop)
    finally:
        sock.close()
        for s in sinks:
            s.close()
    rx.to_csv(args.log)
    print(f"done {len(rx)}", file=stdout, flush=True)
    return 0


# --------------------------------------------------------------------------- entry point


class _StopFlag:
    """True once SIGTERM or SIGINT arrived; the loops poll it."""

    def __init__(self) -> None:
        self.set = False
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, *_: object) -> None:
        self.set = True

    def __call__(self) -> bool:
        return self.set


def _probability(text: str) -> float:
    p = float(text)
    if not 0.0 <= p <= 1.0 or math.isnan(p):
        raise argparse.ArgumentTypeError(f"{text} is not a probability in [0, 1]")
    return p


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m traffic.live",
                                description="Live senders and receivers in host namespaces.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("send", help="send a schedule's frames on the wall clock")
    s.add_argument("--iface", required=True)
    s.add_argument("--schedule", required=True, type=Path)
    s.add_argument("--log", required=True, type=Path, help="SentLog CSV to write")
    s.add_argument("--summary", type=Path, default=None, help="JSON statistics to write")
    s.add_argument("--loss", type=_probability, default=0.0,
                   help="drop each frame before the wire with this probability")
    s.add_argument("--seed", type=int, default=0, help="seed of the loss draws")
    r = sub.add_parser("recv", help="record arriving frames until 'stop'")
    r.add_argument("--iface", required=True)
    r.add_argument("--log", required=True, type=Path, help="Receiver CSV to write")
    r.add_argument("--name", default="")
    r.add_argument("--udp-sink", type=int, action="append", default=[], metavar="PORT",
                   help="bind UDP PORT so the kernel stays silent about the traffic")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.command == "send":
            return run_sender(args)
        return run_receiver(args)
    except TrafficError as exc:
        print(str(exc), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
