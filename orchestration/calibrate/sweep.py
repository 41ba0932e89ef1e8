"""A load sweep of one switch binary on the calibration network.

For each offered rate, h1 sends Poisson traffic through the switch to h2;
``tcpdump`` in each namespace stamps every frame as it leaves h1 and as it
reaches h2 (kernel timestamps, nanoseconds, one clock), and the frames are
matched by their sequence numbers. A point is what one rate gave: the
send times and, per frame, its latency through the switch or -1 (lost).
"""

from __future__ import annotations

import select
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from common.pcap import iter_pcap
from common.procs import stop_process
from orchestration.calibrate.netns import (
    CalibrationError,
    CalibrationNet,
    host_iface,
    in_ns,
    switch_iface,
)
from orchestration.calibrate.send import UDP_DPORT, parse_seq
from p4src import program_path

READY_TIMEOUT_S = 60.0
CAPTURE_READY_S = 30.0
CAPTURE_SETTLE_S = 0.2
DRAIN_S = 1.5  # past libpcap's 1,000 ms buffer timeout


@dataclass
class Point:
    """One offered rate's measurement."""

    rate_pps: float
    tx_ns: np.ndarray  # int64, send times from the first frame's
    latency_ns: np.ndarray  # int64, -1 where the frame never arrived

    @property
    def delivered(self) -> np.ndarray:
        return self.latency_ns >= 0

    @property
    def loss(self) -> float:
        return 1.0 - float(self.delivered.mean()) if len(self.tx_ns) else 0.0

    @property
    def offered_pps(self) -> float:
        span = (self.tx_ns[-1] - self.tx_ns[0]) / 1e9 if len(self.tx_ns) > 1 else 0.0
        return (len(self.tx_ns) - 1) / span if span > 0 else 0.0

    @property
    def delivered_pps(self) -> float:
        return self.offered_pps * (1.0 - self.loss)


def switch_command(binary: str, template: str | None) -> list[str]:
    """The switch under test: ``intbed-switch`` on the calibration program,
    or ``template`` with ``{port1}`` and ``{port2}`` for the interfaces."""
    ports = {"port1": switch_iface(1), "port2": switch_iface(2)}
    if template is not None:
        try:
            return shlex.split(template.format(**ports))
        except (KeyError, IndexError, ValueError) as exc:
            raise CalibrationError(f"--switch-cmd {template!r}: {exc}; use {{port1}} and "
                                   "{port2} for the two interfaces") from None
    if binary != "intbed":
        raise CalibrationError(f"--binary {binary!r}: give 'intbed', or --switch-cmd for "
                               "another switch")
    exe = Path(sys.executable).with_name("intbed-switch")
    return [str(exe), "-i", f"1@{ports['port1']}", "-i", f"2@{ports['port2']}",
            str(program_path("calibrate"))]


def _capture(host: str, direction: str, path: Path) -> subprocess.Popen[bytes]:
    """tcpdump on ``host``'s interface, returned once it says it listens
    (on a busy machine that takes longer than any fixed pause). Not in
    immediate mode, whose wake-up per packet would take the cores from the
    switch under test: libpcap hands packets over in blocks up to its
    1 s timeout late, so a capture is stopped ``DRAIN_S`` after the last
    send."""
    argv = in_ns(host, ["tcpdump", "-i", host_iface(host), "-Q", direction, "-n", "-s", "96",
                        "-B", "32768", "-j", "host", "--time-stamp-precision=nano",
                        "-w", str(path), "udp", "dst", "port", str(UDP_DPORT)])
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    ready, _, _ = select.select([proc.stderr], [], [], CAPTURE_READY_S)
    line = proc.stderr.readline().decode(errors="replace") if ready else ""
    if "listening on" not in line:
        _stop(proc)
        raise CalibrationError(f"tcpdump on {host} did not start: {line.strip() or 'no answer'}")
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT: tcpdump writes out what it holds and exits."""
    stop_process(proc, 10.0, sig=signal.SIGINT)


def _stamps(path: Path) -> dict[int, int]:
    out: dict[int, int] = {}
    for rec in iter_pcap(path, truncated_ok=True, missing_ok=True):
        seq = parse_seq(rec.frame)
        if seq is not None and seq not in out:
            out[seq] = rec.t_ns
    return out


def _send(rate_pps: float, seconds: float, size: int, seed: int, seq0: int) -> int:
    argv = in_ns("h1", [sys.executable, "-m", "orchestration.calibrate.send", host_iface("h1"),
                        repr(rate_pps), repr(seconds), str(size), str(seed), str(seq0)])
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise CalibrationError(f"the sender failed: {done.stderr.strip()[-400:]}")
    return int(done.stdout.strip() or 0)


def measure(rate_pps: float, seconds: float, size: int, seed: int, seq0: int,
            work: Path) -> Point:
    """One rate: captures on both hosts around one sender run."""
    tx_path, rx_path = work / f"tx-{seq0}.pcap", work / f"rx-{seq0}.pcap"
    caps = [_capture("h1", "out", tx_path), _capture("h2", "in", rx_path)]
    try:
        time.sleep(CAPTURE_SETTLE_S)
        _send(rate_pps, seconds, size, seed, seq0)
        time.sleep(DRAIN_S)
    finally:
        for proc in caps:
            _stop(proc)
    tx, rx = _stamps(tx_path), _stamps(rx_path)
    seqs = sorted(tx)
    if not seqs:
        err = b"".join(p.stderr.read() if p.stderr else b"" for p in caps).decode()[-300:]
        raise CalibrationError(f"no frame was captured leaving h1 ({err.strip()})")
    t = np.asarray([tx[s] for s in seqs], dtype=np.int64)
    lat = np.asarray([rx[s] - tx[s] if s in rx else -1 for s in seqs], dtype=np.int64)
    return Point(rate_pps, t - t[0], lat)


def _wait_ready(size: int, work: Path, proc: subprocess.Popen[bytes]) -> None:
    """Until a frame gets through the switch (it has loaded its program)."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    seq = 1 << 40
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode()[-400:] if proc.stderr else ""
            raise CalibrationError(f"the switch exited ({proc.returncode}) before forwarding: "
                                   f"{err.strip()}")
        point = measure(200.0, 0.2, size, 0, seq, work)
        if point.delivered.any():
            return
        seq += 1000
    raise CalibrationError(f"the switch forwarded nothing within {READY_TIMEOUT_S:g} s")


def sweep(command: Sequence[str], rates: Sequence[float], *, seconds: float, size: int,
          seed: int = 0, progress: Callable[[str], None] = lambda line: None) -> list[Point]:
    """Start the switch on the calibration network and measure every rate."""
    with CalibrationNet(), tempfile.TemporaryDirectory(prefix="intbed-cal-") as tmp:
        work = Path(tmp)
        log = open(work / "switch.log", "wb")  # noqa: SIM115 - closed below
        try:
            proc = subprocess.Popen(list(command), stdout=log, stderr=subprocess.PIPE)
        except OSError as exc:
            raise CalibrationError(f"cannot start {command[0]}: {exc.strerror}") from None
        try:
            _wait_ready(size, work, proc)
            points = []
            for i, rate in enumerate(rates):
                point = measure(rate, seconds, size, seed + i, (i + 1) << 32, work)
                progress(f"{rate:>10,.0f} pps offered: {point.offered_pps:>10,.0f} sent, "
                         f"loss {point.loss:6.2%}, median latency "
                         f"{_median_us(point):8.1f} us")
                points.append(point)
            return points
        finally:
            stop_process(proc, 10.0)
            log.close()


def _median_us(point: Point) -> float:
    lat = point.latency_ns[point.delivered]
    return float(np.median(lat)) / 1000 if len(lat) else float("nan")
