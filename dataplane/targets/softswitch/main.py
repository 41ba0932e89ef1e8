"""``intbed-switch``: one v1model switch process on Linux interfaces.

One thread moves every frame: it waits on all port sockets (epoll), reads a
batch per ready port, runs ingress, queues the egress jobs per port (``tm``)
and serves the queues whose head is due, running egress and sending at
once. On an idle, unlimited queue a packet goes straight from ingress to
egress (``enq_qdepth`` 0), as BMv2 does when its egress thread keeps up.
The gRPC server runs in its own threads; both sides hold ``device.lock``
while they touch the Switch or the service (the data plane once per batch).

P4 timestamps are microseconds since the switch started (BMv2's
``get_ts()``), from ``time.monotonic_ns``. Packet-outs arrive from the gRPC
threads through ``inject`` and enter ingress on the CPU port in the loop;
frames the pipeline sends to the CPU port become PacketIns. SIGTERM and
SIGINT stop the loop; sockets are closed and pcap files flushed on the way
out.
"""

from __future__ import annotations

import logging
import os
import select
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from common.errors import IntbedError
from common.seeds import stream
from dataplane.runtime.switch import EgressJob, Switch
from dataplane.targets.softswitch.cli import SwitchConfigError, SwitchOptions, parse_args
from dataplane.targets.softswitch.device import GrpcDevice, LocalDevice
from dataplane.targets.softswitch.ports import MAX_FRAME, PACKET_OUTGOING, SwitchPort
from dataplane.targets.softswitch.tm import EgressQueue, TrafficManager

# enq_timestamp and deq_timedelta are bit<32> (v1model.p4): they wrap after 71 minutes.
TS32 = 0xFFFFFFFF
BATCH = 64  # frames read from one port before the others get a turn
SPIN_NS = 200_000  # a queue due sooner than this is polled, not slept for (epoll: 1 ms ticks)
IDLE_S = 0.25  # wake-up period with nothing to do: digest timeouts, pcap flushes
LOG = logging.getLogger("intbed-switch")
MakeDevice = Callable[..., "LocalDevice | GrpcDevice"]
_LEVELS = {"trace": 5, "debug": logging.DEBUG, "info": logging.INFO,
           "warn": logging.WARNING, "error": logging.ERROR, "off": logging.CRITICAL + 10}


class SoftSwitch:
    """The data plane of one ``intbed-switch`` over a device (lock, switch, service)."""

    def __init__(self, options: SwitchOptions, make_device: MakeDevice | None = None) -> None:
        """``make_device(device_id, cpu_port, clock=, inject=, seed=)`` builds the
        control side (default ``LocalDevice``); it gets this switch's clock and
        packet-out entry."""
        self.options = options
        self.t0_ns = time.monotonic_ns()
        self._wake = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._inbox: deque[tuple[int, bytes]] = deque()
        make = make_device or LocalDevice
        self.device: LocalDevice | GrpcDevice = make(
            options.device_id, options.cpu_port, clock=self.now_us, inject=self.inject,
            seed=options.seed)
        self.cpu_port = options.cpu_port
        self.ports: dict[int, SwitchPort] = {}
        self.tm = TrafficManager(options.depth_of, options.rate_of)
        self._switch: Switch | None = None
        self._service: Any = None
        self._stopping = False
        self._closed = False
        self._debug = LOG.isEnabledFor(logging.DEBUG)
        self._rng = {p: stream(options.seed, "softswitch", "loss", p)
                     for p in options.interfaces}
        self._again: deque[tuple] = deque()
        self.unconnected = 0  # frames sent to a port with no interface
        self.no_pipeline = 0  # frames received before any program was set

    # ------------------------------------------------------------------ setup

    def now_us(self) -> int:
        """The P4 clock: microseconds since the switch started."""
        return (time.monotonic_ns() - self.t0_ns) // 1000

    def open(self) -> None:
        """Open every port; on a failure close those already open and raise."""
        opts = self.options
        try:
            for port, iface in sorted(opts.interfaces.items()):
                self.ports[port] = SwitchPort(port, iface, opts.pcap_dir, opts.loss_of(port))
                LOG.info("port %d: interface %s", port, iface)
        except SwitchConfigError:
            self.close()
            raise

    def inject(self, port: int, frame: bytes) -> None:
        """A frame for ingress on ``port`` (a packet-out), from any thread."""
        if self._closed:
            return
        self._inbox.append((port, frame))
        os.eventfd_write(self._wake, 1)

    def stop(self) -> None:
        """End ``run`` soon; safe from signal handlers and other threads."""
        self._stopping = True
        if not self._closed:
            os.eventfd_write(self._wake, 1)

    # -------------------------------------------------------------- data plane

    def _sync(self) -> None:
        """Pick up the device's current pipeline; queued jobs of a replaced
        program are dropped (their state belongs to the old layout)."""
        sw = self.device.switch
        if sw is not self._switch:
            if self._switch is not None:
                for q in self.tm.queues.values():
                    q.drops += len(q.fifo)
                    q.fifo.clear()
                self.tm.busy.clear()
                self._again.clear()
            self._switch = sw
            if sw is not None:
                LOG.info("pipeline: %s", sw.program.name)
        self._service = self.device.service

    def _receive(self, p: SwitchPort) -> int:
        """Read and run up to BATCH frames of port ``p``; returns how many."""
        sock = p.sock
        port = p.port
        pcap = p.pcap_in
        sw = self._switch
        ingress = sw.ingress if sw is not None else None
        enqueue = self._enqueue
        debug = self._debug
        filter_outgoing = not p.ignores_outgoing
        recv = sock.recvfrom if filter_outgoing else sock.recv
        n = 0
        while n < BATCH:
            try:
                if filter_outgoing:
                    frame, addr = recv(MAX_FRAME)
                    if addr[2] == PACKET_OUTGOING:
                        continue
                else:
                    frame = recv(MAX_FRAME)
            except BlockingIOError:
                break
            except OSError as exc:
                LOG.warning("port %d (%s): receive failed: %s", port, p.iface, exc)
                break
            n += 1
            if pcap is not None:
                pcap.write(frame)
            if debug:
                LOG.debug("port %d: in %d bytes", port, len(frame))
            if ingress is None:
                self.no_pipeline += 1
                continue
            jobs, again = ingress(port, frame)
            if again:
                self._again.extend(again)
            for job in jobs:
                enqueue(job)
        p.rx += n
        if self._again:
            self._feedback()
        return n

    def _feedback(self) -> None:
        """Resubmitted and recirculated packets, through ingress again."""
        again = self._again
        sw = self._switch
        while again and sw is not None:
            jobs, more = sw.ingress(*again.popleft())
            again.extend(more)
            for job in jobs:
                self._enqueue(job)

    def _enqueue(self, job: EgressJob) -> None:
        tm = self.tm
        q = tm.queues.get(job.port)
        if q is None:
            q = tm.queue(job.port)
        now = time.monotonic_ns()
        if not q.fifo and q.last_send + q.gap_ns <= now:
            # Empty queue whose rate allows a departure now: straight to egress.
            q.last_send = now
            q.enqueued += 1
            self._egress(job, ((now - self.t0_ns) // 1000) & TS32, 0, 0, 0)
        elif q.push(job, now):
            tm.busy.add(q)

    def _egress(self, job: EgressJob, enq_ts: int, enq_depth: int, delta_us: int,
                deq_depth: int) -> None:
        sw = self._switch
        assert sw is not None  # jobs exist only while a pipeline runs
        out, clones, recirc = sw.egress(job, enq_ts, enq_depth, delta_us, deq_depth)
        ports = self.ports
        for port, frame in out:
            p = ports.get(port)
            if p is not None and p.plain and not self._debug:
                try:  # the common case of _transmit, inline
                    p.send(frame)
                    p.tx += 1
                except OSError:
                    p.tx_errors += 1
            else:
                self._transmit(port, frame)
        for c in clones:
            self._enqueue(c)
        if recirc:
            self._again.extend(recirc)

    def _transmit(self, port: int, frame: bytes) -> None:
        p = self.ports.get(port)
        if p is None:
            if port == self.cpu_port and self._service is not None:
                self._service.packet_in(frame)
            else:
                self.unconnected += 1
            return
        if p.pcap_out is not None:
            p.pcap_out.write(frame)
        if p.loss and self._rng[port].random() < p.loss:
            p.lost += 1
            return
        try:
            p.send(frame)
            p.tx += 1
        except OSError as exc:
            p.tx_errors += 1
            if self._debug:
                LOG.debug("port %d: send failed: %s", port, exc)
        if self._debug:
            LOG.debug("port %d: out %d bytes", port, len(frame))

    def _serve(self) -> None:
        """Run egress for every queue head whose departure time has come."""
        tm = self.tm
        if not tm.busy:
            return
        t0 = self.t0_ns
        now = time.monotonic_ns()
        for q in list(tm.busy):
            fifo = q.fifo
            while fifo and fifo[0][3] <= now:
                job, enq_ns, enq_depth, _ = fifo.popleft()
                self._egress(job, ((enq_ns - t0) // 1000) & TS32, enq_depth,
                             ((now - enq_ns) // 1000) & TS32, len(fifo))
            if not fifo:
                tm.busy.discard(q)
        if self._again:
            self._feedback()

    def _drain_inbox(self) -> None:
        inbox = self._inbox
        sw = self._switch
        while inbox:
            port, frame = inbox.popleft()
            if sw is None:
                continue
            jobs, again = sw.ingress(port, frame)
            self._again.extend(again)
            for job in jobs:
                self._enqueue(job)
        if self._again:
            self._feedback()

    def _after_batch(self) -> None:
        sw = self._switch
        if sw is None:
            return
        if sw.logs:
            for line in sw.logs:
                LOG.info("log_msg: %s", line)
            sw.logs.clear()
        if self._service is not None:
            self._service.poll_digests()
        elif sw.digests:
            sw.digests.clear()

    def _timeout(self) -> float:
        t = self.tm.next_send()
        if t is None:
            return IDLE_S
        delta = t - time.monotonic_ns()
        if delta < SPIN_NS:
            return 0.0
        return min(delta / 1e9, IDLE_S)

    def run(self) -> None:
        """Move frames until ``stop``."""
        ep = select.epoll()
        by_fd: dict[int, SwitchPort | None] = {self._wake: None}
        ep.register(self._wake, select.EPOLLIN)
        for p in self.ports.values():
            ep.register(p.fileno(), select.EPOLLIN)
            by_fd[p.fileno()] = p
        lock = self.device.lock
        poll = ep.poll
        last_flush = time.monotonic()
        try:
            while not self._stopping:
                events = poll(self._timeout())
                with lock:
                    self._sync()
                    for fd, _ in events:
                        p = by_fd[fd]
                        if p is None:
                            try:
                                os.eventfd_read(self._wake)
                            except BlockingIOError:
                                pass
                        else:
                            self._receive(p)
                    if self._inbox:
                        self._drain_inbox()
                    self._serve()
                    self._after_batch()
                if not events or time.monotonic() - last_flush > IDLE_S:
                    self.flush()
                    last_flush = time.monotonic()
        finally:
            ep.close()

    # -------------------------------------------------------------- shutdown

    def flush(self) -> None:
        for p in self.ports.values():
            p.flush()

    def close(self) -> None:
        """Close sockets and pcap files (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for p in self.ports.values():
            p.close()
        os.close(self._wake)

    def counters(self) -> dict[str, Any]:
        return {
            "ports": {p.port: p.counters() for p in self.ports.values()},
            "queue_drops": {q.port: q.drops for q in self.tm.queues.values() if q.drops},
            "unconnected": self.unconnected,
            "no_pipeline": self.no_pipeline,
        }

    def queue(self, port: int) -> EgressQueue:
        return self.tm.queue(port)


# ------------------------------------------------------------------ process


def _setup_logging(opts: SwitchOptions) -> None:
    logging.addLevelName(5, "TRACE")
    LOG.setLevel(_LEVELS[opts.log_level])
    LOG.propagate = False
    fmt = logging.Formatter("[%(asctime)s.%(msecs)03d] [intbed-switch] [%(levelname).1s] "
                            "%(message)s", "%H:%M:%S")
    handlers: list[logging.Handler] = []
    if opts.log_console:
        handlers.append(logging.StreamHandler(sys.stdout))
    if opts.log_file is not None:
        handlers.append(logging.FileHandler(opts.log_file))
    if not handlers:
        handlers.append(logging.NullHandler())
    for h in handlers:
        h.setFormatter(fmt)
        LOG.addHandler(h)


def serve(opts: SwitchOptions) -> int:
    """Run a switch with its P4Runtime server until SIGTERM/SIGINT; returns
    the exit status."""
    try:
        switch = SoftSwitch(opts, partial(GrpcDevice, opts.grpc_addr,
                                          register_writes=opts.register_writes))
    except ImportError as exc:  # grpcio missing
        raise SwitchConfigError(f"P4Runtime server unavailable: {exc}") from None
    previous = {sig: signal.signal(sig, lambda *_: switch.stop())
                for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        return _serve(switch, opts)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _serve(switch: SoftSwitch, opts: SwitchOptions) -> int:
    from dataplane.compiler.pipeline import compile_file

    device = switch.device
    try:
        switch.open()  # first, so a missing interface fails before a long compile
        if opts.program is not None:
            device.set_pipeline(compile_file(opts.program))
        try:
            bound = device.start()
        except (RuntimeError, ValueError) as exc:
            raise SwitchConfigError(f"--grpc-server-addr {opts.grpc_addr}: {exc}") from None
    except BaseException:
        switch.close()
        raise
    if bound is not None:
        host = opts.grpc_addr.rpartition(":")[0]
        print(f"Server listening on {host}:{bound}", flush=True)
    LOG.info("device %d running %s on %d port(s)", opts.device_id,
             device.switch.program.name if device.switch is not None
             else "no program (waiting for a pipeline)",
             len(switch.ports))
    try:
        switch.run()
    finally:
        device.stop()
        switch.flush()
        LOG.info("stopped: %s", switch.counters())
        switch.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point of ``intbed-switch``."""
    args = list(sys.argv[1:] if argv is None else argv)
    # gRPC's core logs its own copy of a bind failure; ours is the one line.
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    try:
        opts = parse_args(args)
        _setup_logging(opts)
        return serve(opts)
    except IntbedError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())

