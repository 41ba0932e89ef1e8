"""``intbed-switch`` benchmarks: packets/s between two hosts, P4Runtime writes/s.

Two hosts live in network namespaces, each on a veth pair whose other end is
a port of one ``intbed-switch`` process running l3_forward with 1,000 /24
routes (the engine benchmark's table) installed over P4Runtime. A sender
process in the first namespace blasts pre-built IPv4/UDP frames (64..1000
bytes, the engine benchmark's mix) through a raw socket; the second host's
kernel receive counter is read at the start and end of a steady-state
window (after a warm-up), so counting costs the receiver nothing. The
in-process engine runs the same program and mix in the same run, and the
ratio of the two figures is reported with them.

Table writes/s are measured against the same process over gRPC: ready
WriteRequests one per RPC (the switch's own rate), one insert per Write
through the by-name client (what a controller installing routes one by one
sees), and batches of ``BATCH`` modifies per Write; then ``table_add``
through the p4-utils API from a controller's process (``benchmarks.p4utils``),
on this switch and on a sim switch behind its gRPC bridge.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.engine import (
    L3_PROGRAM,
    MAX_SIZE,
    MIN_SIZE,
    ROUTES,
    bench_l3_forward,
    ipv4_udp_packet,
    l3_routes,
)
from benchmarks.p4utils import bench_sim_api, measure_api_writes
from common.paths import child_env
from common.procs import stop_process
from common.rawsock import open_raw_socket
from controller.p4rt.protos import protos
from dataplane.testing.netns import (
    VethHost,
    can_create_namespaces,
    rx_packets,
    veth_hosts,
)

TABLE, KEY, ACTION = "MyIngress.ipv4_lpm", "hdr.ipv4.dstAddr", "MyIngress.ipv4_forward"
DST_NET = 0xC0A80200  # 192.168.2.0/24 behind port 2 (outside the 10/8 benchmark routes)
BATCH = 100  # updates per Write in the batched figure
WARMUP_S = 0.5
FRAMES = 256  # distinct frames the sender cycles through
START_TIMEOUT_S = 60.0


class SwitchProcess:
    """``python -m dataplane.targets.softswitch.main ARGS`` with its output in files
    (a pipe nobody reads would block a chatty switch); the constructor waits
    for the ``Server listening on HOST:PORT`` line."""

    def __init__(self, args: Sequence[str], timeout: float = START_TIMEOUT_S) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="intbed-switch-")
        self.stdout_path = Path(self._dir.name) / "stdout"
        self.stderr_path = Path(self._dir.name) / "stderr"
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "dataplane.targets.softswitch.main", *args],
                stdout=out, stderr=err, env=child_env())
        self.address = ""
        deadline = time.monotonic() + timeout
        while not self.address:
            for line in self.output().splitlines():
                if line.startswith("Server listening on "):
                    self.address = line.split()[-1]
            if self.address:
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                err_text = self.errors().strip()
                self._dir.cleanup()
                raise RuntimeError(f"intbed-switch did not start: {err_text or 'timed out'}")
            time.sleep(0.02)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def output(self) -> str:
        return self.stdout_path.read_text()

    def errors(self) -> str:
        return self.stderr_path.read_text()

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM, then wait; SIGKILL if it has not exited after ``timeout`` s."""
        return stop_process(self.proc, timeout)

    def close(self) -> int:
        code = self.stop()
        self._dir.cleanup()
        return code


@dataclass
class LiveSwitch:
    """A running ``intbed-switch`` with two veth hosts and a P4Runtime client."""

    switch: SwitchProcess
    hosts: list[VethHost]
    client: Any
    transport: Any


@contextmanager
def live_switch(extra_args: Sequence[str] = (), prefix: str | None = None,
                ) -> Iterator[LiveSwitch]:
    """Two veth hosts, an l3_forward ``intbed-switch`` on their peers (ports
    1 and 2) and a primary P4Runtime client; all torn down on exit."""
    from controller.p4rt.client import P4RuntimeClient
    from controller.p4rt.grpc_transport import GrpcTransport

    prefix = prefix or f"ib{os.getpid() % 100000}"
    with veth_hosts(prefix, 2) as hosts:
        args = ["-i", f"1@{hosts[0].switch_iface}", "-i", f"2@{hosts[1].switch_iface}",
                *extra_args, str(L3_PROGRAM), "--", "--grpc-server-addr", "127.0.0.1:0"]
        switch = SwitchProcess(args)
        transport = client = None
        try:
            transport = GrpcTransport(switch.address)
            client = P4RuntimeClient(transport)
            yield LiveSwitch(switch, hosts, client, transport)
        finally:
            if client is not None:
                client.close()
            if transport is not None:
                transport.close()
            switch.close()


def _route(client: Any, net: int, mac: int | bytes, port: int, kind: str = "insert") -> None:
    table = client.tables[TABLE]
    write = table.insert if kind == "insert" else table.modify
    write({KEY: (net, 24)}, ACTION, {"dstAddr": mac, "port": port})


def _write_requests(client: Any, table: Sequence[tuple[int, int, int]],
                    device_id: int = 0) -> list[Any]:
    """One ready WriteRequest (INSERT into ipv4_lpm) per route, built from the P4Info."""
    pb = protos().p4runtime_pb2
    names = client.names
    info = names.table(TABLE)
    field = names.match_field(info, KEY)
    action = names.action(ACTION)
    params = {p.name: p.id for p in action.params}
    out = []
    for net, mac, port in table:
        request = pb.WriteRequest(device_id=device_id)
        request.election_id.high, request.election_id.low = client.election_id
        update = request.updates.add(type=pb.Update.INSERT)
        te = update.entity.table_entry
        te.table_id = info.preamble.id
        fm = te.match.add(field_id=field.id)
        fm.lpm.value, fm.lpm.prefix_len = net.to_bytes(4, "big"), 24
        te.action.action.action_id = action.preamble.id
        te.action.action.params.add(param_id=params["dstAddr"], value=mac.to_bytes(6, "big"))
        te.action.action.params.add(param_id=params["port"], value=port.to_bytes(2, "big"))
        out.append(request)
    return out


def measure_writes(sw: LiveSwitch, routes: int = ROUTES, seed: int = 0) -> dict[str, Any]:
    """Three rates of ``routes`` table writes into the switch over gRPC:
    ready WriteRequests sent one per RPC (the switch's side alone), routes
    installed one per RPC through the by-name client (what a controller
    sees), and the client's modifies ``BATCH`` per Write."""
    table = l3_routes(routes, seed)
    client = sw.client
    requests = _write_requests(client, table)
    write = sw.transport.write
    start = time.perf_counter()
    for request in requests:
        write(request)
    prebuilt = time.perf_counter() - start
    with client.batch():  # empty the table again
        for net, _, _ in table:
            client.tables[TABLE].delete({KEY: (net, 24)})
    start = time.perf_counter()
    for net, mac, port in table:
        _route(client, net, mac, port)
    single = time.perf_counter() - start
    start = time.perf_counter()
    for i in range(0, len(table), BATCH):
        with client.batch():
            for net, mac, port in table[i:i + BATCH]:
                _route(client, net, mac ^ 1, port, "modify")
    batched = time.perf_counter() - start
    return {
        "routes": routes,
        "rpc_writes_per_s": round(routes / prebuilt, 1),
        "single_writes_per_s": round(routes / single, 1),
        "batched_writes_per_s": round(routes / batched, 1),
        "batch": BATCH,
    }


def _frames(count: int = FRAMES, seed: int = 0) -> list[bytes]:
    rng = random.Random(seed)
    return [ipv4_udp_packet(DST_NET | rng.randrange(1, 255), rng.randint(MIN_SIZE, MAX_SIZE), i)
            for i in range(count)]


def _sender(ns: str, iface: str, frames_file: Path, seconds: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["ip", "netns", "exec", ns, sys.executable, "-m", "benchmarks.switch", "send", iface,
         str(frames_file), str(seconds)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())


def measure_pps(sw: LiveSwitch, seconds: float) -> dict[str, Any]:
    """Forwarded packets/s from host 1 to host 2 over a ``seconds`` window."""
    h1, h2 = sw.hosts
    _route(sw.client, DST_NET, h2.mac, 2)
    frames = _frames()
    with tempfile.TemporaryDirectory(prefix="intbed-bench-") as tmp:
        frames_file = Path(tmp) / "frames.json"
        frames_file.write_text(json.dumps([f.hex() for f in frames]))
        sender = _sender(h1.ns, h1.iface, frames_file, WARMUP_S + seconds + WARMUP_S)
        time.sleep(WARMUP_S)
        r0, t0 = rx_packets(h2.ns, h2.iface), time.perf_counter()
        time.sleep(seconds)
        r1, t1 = rx_packets(h2.ns, h2.iface), time.perf_counter()
        out, err = sender.communicate(timeout=seconds + 30)
    if sender.returncode != 0:
        raise RuntimeError(f"sender failed: {err.strip()}")
    sent = json.loads(out)
    return {
        "seconds": round(t1 - t0, 3),
        "forwarded": r1 - r0,
        "forwarded_pps": round((r1 - r0) / (t1 - t0), 1),
        "offered_pps": round(sent["packets"] / sent["seconds"], 1),
        "mean_bytes": round(sum(map(len, frames)) / len(frames), 1),
    }


def bench_switch_pps(seconds: float = 5.0, engine_packets: int = 50_000) -> dict[str, Any]:
    """``intbed-switch`` packets/s between two veth hosts (l3_forward, 1,000
    routes) beside the in-process engine's packets/s of the same run (the
    mean of one measurement before and one after, on a shared machine), and
    the P4Runtime write rates of the same switch under ``"writes"``."""
    reason = can_create_namespaces()
    if reason is not None:
        return {"skipped": reason}
    before = bench_l3_forward(engine_packets)["packets_per_s"]
    with live_switch() as sw:
        writes = measure_writes(sw)
        live = measure_pps(sw, seconds)
        # Last: the API's client takes the primary role and resets the switch.
        writes["p4utils"] = measure_api_writes(sw.switch.address)
    writes["p4utils_sim"] = bench_sim_api()
    after = bench_l3_forward(engine_packets)["packets_per_s"]
    engine_pps = round((before + after) / 2, 1)
    live.update(program=L3_PROGRAM.stem, routes=ROUTES, engine_pps=engine_pps,
                ratio=round(live["forwarded_pps"] / engine_pps, 3))
    live["writes"] = writes
    return live


def run_switch_benchmarks(seconds: float = 5.0) -> dict[str, Any]:
    """Both figures from one switch process: ``{"pps": ..., "writes": ...}``."""
    result = bench_switch_pps(seconds)
    if "skipped" in result:
        return {"skipped": result["skipped"]}
    writes = result.pop("writes")
    return {"pps": result, "writes": writes}


# --------------------------------------------------------------------------- sender


def _send(iface: str, frames_file: Path, seconds: float) -> dict[str, Any]:
    """Blast the frames of ``frames_file`` out of ``iface`` for ``seconds``."""
    frames = [bytes.fromhex(h) for h in json.loads(Path(frames_file).read_text())]
    sock = open_raw_socket(iface, receive=False)
    send = sock.send
    sent = errors = 0
    start = time.perf_counter()
    end = start + seconds
    while time.perf_counter() < end:
        for frame in frames:
            try:
                send(frame)
            except OSError:  # ENOBUFS: the veth's peer is backed up; keep blasting
                errors += 1
        sent += len(frames)
    elapsed = time.perf_counter() - start
    sock.close()
    return {"packets": sent - errors, "errors": errors, "seconds": round(elapsed, 6)}


def _main(argv: Sequence[str]) -> int:
    if len(argv) == 4 and argv[0] == "send":
        print(json.dumps(_send(argv[1], Path(argv[2]), float(argv[3]))))
        return 0
    if not argv:
        print(json.dumps(run_switch_benchmarks()))
        return 0
    print("usage: python -m benchmarks.switch [send IFACE FRAMES.json SECONDS]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
