"""Engine benchmarks: packets/s through one Switch on one core, and memory.

Each function returns a plain dict (JSON-ready) so the CLI only renders.
Packets are built before the clock starts; only ``Switch.process`` is timed.
"""

from __future__ import annotations

import json
import random
import struct
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil

from common.checksum import internet_checksum
from common.errors import IntbedError
from common.paths import child_env, shared_dir
from dataplane.compiler.pipeline import CompiledProgram, compile_file
from dataplane.runtime.switch import Switch
from dataplane.runtime.tables import Lpm
from dataplane.testing.stf import (
    Expect,
    Packet,
    apply_command,
    find_conformance_cases,
    parse_stf,
    run_stf,
)
from p4src import program_path

L3_PROGRAM = program_path("l3_forward")
L3_TABLE = "MyIngress.ipv4_lpm"
L3_KEY = "hdr.ipv4.dstAddr"
L3_ACTION = "MyIngress.ipv4_forward"

ROUTES = 1000
SWITCHES = 100
MIN_SIZE, MAX_SIZE = 64, 1000  # bytes on the wire, without the FCS
_ETH = struct.Struct("!6s6sH")
_IPV4 = struct.Struct("!BBHHHBBHII")
_UDP = struct.Struct("!HHHH")
_ROUTER_MAC = bytes.fromhex("020000000001")
_HOST_MAC = bytes.fromhex("020000000002")
_HOST_IP = 0x0A000001  # 10.0.0.1


def default_samples_dir() -> Path:
    """``../shared/p4-conformance/samples`` beside the checkout."""
    return shared_dir() / "p4-conformance" / "samples"


# --- l3_forward -----------------------------------------------------------------------------


def l3_routes(count: int = ROUTES, seed: int = 0) -> list[tuple[int, int, int]]:
    """``count`` distinct /24 routes in 10.0.0.0/8 as (network, next-hop MAC, port)."""
    rng = random.Random(seed)
    nets = rng.sample(range(1 << 16), count)
    return [((10 << 24) | (n << 8), 0x020000000100 | i, 1 + i % 8) for i, n in enumerate(nets)]


def ipv4_udp_packet(dst: int, size: int, ident: int = 0) -> bytes:
    """An Ethernet/IPv4/UDP frame of ``size`` bytes with a valid header checksum."""
    ip_len = size - _ETH.size
    header = _IPV4.pack(0x45, 0, ip_len, ident & 0xFFFF, 0, 64, 17, 0, _HOST_IP, dst)
    header = header[:10] + struct.pack("!H", internet_checksum(header)) + header[12:]
    udp = _UDP.pack(1024, 4789, ip_len - _IPV4.size, 0)
    payload = bytes(ip_len - _IPV4.size - _UDP.size)
    return _ETH.pack(_ROUTER_MAC, _HOST_MAC, 0x0800) + header + udp + payload


def l3_packets(routes: Sequence[tuple[int, int, int]], count: int, seed: int = 0) -> list[bytes]:
    """``count`` frames of 64..1000 bytes, each to a random host of a random route."""
    rng = random.Random(seed + 1)
    return [
        ipv4_udp_packet(rng.choice(routes)[0] | rng.randrange(1, 255),
                        rng.randint(MIN_SIZE, MAX_SIZE), i)
        for i in range(count)
    ]


def install_routes(switch: Switch, routes: Sequence[tuple[int, int, int]]) -> None:
    """One ``ipv4_forward`` entry per route, through ``table_add``."""
    for net, mac, port in routes:
        switch.table_add(L3_TABLE, {L3_KEY: Lpm(net, 24)}, L3_ACTION,
                         {"dstAddr": mac, "port": port})


def bench_l3_forward(packets: int = 20_000, routes: int = ROUTES, seed: int = 0) -> dict[str, Any]:
    """Packets/s of l3_forward with ``routes`` /24 routes installed."""
    table = l3_routes(routes, seed)
    switch = Switch(compile_file(L3_PROGRAM), seed=seed)
    install_routes(switch, table)
    distinct = l3_packets(table, min(packets, 4096), seed)
    work = [(0, distinct[i % len(distinct)]) for i in range(packets)]
    result = _time_process(switch, work)
    result.update(program=L3_PROGRAM.stem, routes=routes)
    return result


def _time_process(switch: Switch, work: Sequence[tuple[int, bytes]]) -> dict[str, Any]:
    process = switch.process
    emitted = 0
    start = time.perf_counter()
    for port, data in work:
        emitted += len(process(port, data))
    seconds = time.perf_counter() - start
    size = sum(len(d) for _, d in work)
    return {
        "packets": len(work),
        "emitted": emitted,
        "seconds": round(seconds, 6),
        "packets_per_s": round(len(work) / seconds, 1) if seconds else None,
        "mbit_per_s": round(size * 8 / seconds / 1e6, 3) if seconds else None,
        "mean_bytes": round(size / len(work), 1) if work else 0,
    }


# --- largest conformance sample ---------------------------------------------------------------


def largest_passing_sample(samples_dir: Path) -> tuple[CompiledProgram, Path] | None:
    """The largest ``.p4`` (by file size) among samples whose STF test passes."""
    for p4_path in sorted(find_conformance_cases(samples_dir), key=lambda p: -p.stat().st_size):
        try:
            program = compile_file(p4_path)
            if run_stf(program, p4_path.with_suffix(".stf")).passed:
                return program, p4_path.with_suffix(".stf")
        except Exception:  # a sample the engine cannot run yet is simply not a candidate
            continue
    return None


def bench_sample(samples_dir: Path, packets: int = 20_000) -> dict[str, Any]:
    """Packets/s replaying the STF packets of the largest passing conformance sample.

    The STF runs once as written (entries installed, packets sent); its
    packets are then sent again, in order, until ``packets`` have been sent.
    """
    if not samples_dir.is_dir():
        return {"skipped": f"{samples_dir} not found"}
    found = largest_passing_sample(samples_dir)
    if found is None:
        return {"skipped": "no conformance sample passes its STF test"}
    program, stf_path = found
    switch = Switch(program)
    sent: list[tuple[int, bytes]] = []
    for cmd in parse_stf(stf_path):
        if isinstance(cmd, Packet):
            sent.append((cmd.port, cmd.data))
            switch.process(cmd.port, cmd.data)
        elif not isinstance(cmd, Expect):
            apply_command(switch, program.schema, cmd)
    if not sent:
        return {"skipped": f"{stf_path.name} sends no packets", "program": program.name}
    result = _time_process(switch, [sent[i % len(sent)] for i in range(packets)])
    result.update(program=program.name, p4_bytes=program.source.stat().st_size)
    return result


# --- memory -----------------------------------------------------------------------------------


def bench_memory(switches: int = SWITCHES, routes: int = ROUTES) -> dict[str, Any]:
    """Resident memory of one fresh process holding ``switches`` l3_forward
    Switches with ``routes`` routes each (measured in a subprocess so nothing
    else this process loaded is counted)."""
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.engine", "memory", str(switches), str(routes)],
        capture_output=True, text=True, env=child_env(), check=False,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise IntbedError(f"memory benchmark subprocess failed: {last}")
    return json.loads(proc.stdout)


def _memory_child(switches: int, routes: int) -> dict[str, Any]:
    program = compile_file(L3_PROGRAM)
    table = l3_routes(routes)
    fleet = []
    for device in range(switches):
        switch = Switch(program, device_id=device)
        install_routes(switch, table)
        fleet.append(switch)
    rss = psutil.Process().memory_info().rss
    return {"switches": len(fleet), "routes": routes, "rss_mb": round(rss / 2**20, 1)}


# --- all --------------------------------------------------------------------------------------


def run_engine_benchmarks(
    packets: int = 20_000, samples_dir: Path | None = None, switches: int = SWITCHES
) -> dict[str, Any]:
    """Every engine benchmark, keyed ``l3_forward``, ``largest_sample``, ``memory``."""
    return {
        "l3_forward": bench_l3_forward(packets),
        "largest_sample": bench_sample(samples_dir or default_samples_dir(), packets),
        "memory": bench_memory(switches),
    }


def _main(argv: Sequence[str]) -> int:
    if len(argv) == 3 and argv[0] == "memory":
        try:
            print(json.dumps(_memory_child(int(argv[1]), int(argv[2]))))
        except IntbedError as exc:
            print(exc, file=sys.stderr)
            return 1
        return 0
    print("usage: python -m benchmarks.engine memory SWITCHES ROUTES", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
