"""The sim target's per-packet behaviour is frozen by a digest: a 10-second
run of the INT-label fabric with rate-limited egress queues, a processing
limit and a lossy link, traced packet by packet (every transmission's
time, switch, port, bytes and the queue it leaves behind; every host
arrival's time and bytes; every drop counter at the end).

A speed-up of the engine, the traffic manager or the event loop must leave
the digest as it is. Only a deliberate change of the model may change it;
then the commit says why and updates ``GOLDEN``
(``pytest tests/sim/test_golden_trace.py -s`` prints the new value). Each
switch timing model has its digest: ``ideal`` (constant service at the
processing rate, no delay: the model intbed had first, kept as it was)
and each shipped profile."""

from __future__ import annotations

import hashlib
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from benchmarks.sim import random_server_traffic
from common.paths import child_env
from fastpath import loader
from orchestration.sim import build
from topologies.generators import build_topology

GOLDEN = {
    "ideal": "7b97085ecd652b5022a8aa0c998f867f1d821b85f49da8bcf11fd8e8f1cf9cec",
    "bmv2": "60c8c45aa39153418e09fcb2c9232a333ea3bbc348d0436170354dbf9b2cdbeb",
}
DURATION_S = 10.0


def traced_run(model: str = "ideal") -> tuple[str, dict[str, int]]:
    topo = build_topology("intlabel-fabric")
    for spec in topo.switches.values():
        spec.queue_depth = 8
        spec.queue_rate_pps = 400.0
        spec.processing_rate_pps = 900.0
    topo.links[0].loss = 0.02
    net = build(topo, "l3_forward", seed=5, switch_model=model)
    for sw in net.switches.values():
        sw.input_depth = 16  # the processing limit drops, too
    h = hashlib.sha256()
    pack = struct.Struct(">qIIII").pack
    names = {name: i for i, name in enumerate(sorted([*topo.switches, *topo.hosts]))}
    counts = {"transmitted": 0, "arrived": 0}

    def on_transmit(t_ns: int, switch: str, port: int, frame: bytes) -> None:
        left = len(net.switches[switch].ports[port].queue)
        h.update(pack(t_ns, names[switch], port, zlib.crc32(frame), left))
        counts["transmitted"] += 1

    def on_arrival(host: object, frame: bytes, t_ns: int) -> None:
        h.update(pack(t_ns, names[host.name], 0, zlib.crc32(frame), len(frame)))  # type: ignore[attr-defined]
        counts["arrived"] += 1

    net.tap_transmitted(on_transmit)
    for host in net.hosts.values():
        host.handlers.append(on_arrival)
    random_server_traffic(net, list(topo.hosts), 2e6, 1000, DURATION_S, seed=11)
    net.run(DURATION_S + 0.5)
    for name in sorted(net.switches):
        sw = net.switches[name]
        h.update(pack(0, names[name], 0, sw.input_drops, sw.rx_packets))
        for port in sorted(sw.ports):
            ep = sw.ports[port]
            h.update(pack(1, names[name], port, ep.drops, ep.max_depth))
    counts["queue_drops"] = sum(ep.drops for sw in net.switches.values()
                                for ep in sw.ports.values())
    counts["input_drops"] = sum(sw.input_drops for sw in net.switches.values())
    counts["link_losses"] = sum(ls.lost for ls in net.link_stats())
    h.update(pack(2, counts["link_losses"], 0, 0, 0))
    return h.hexdigest(), counts


@pytest.mark.parametrize("model", list(GOLDEN))
def test_the_trace_of_a_ten_second_fabric_run_is_unchanged(model: str) -> None:
    digest, counts = traced_run(model)
    print(f"\ngolden trace digest {digest} ({counts})")
    # The run must exercise what the digest guards: queues that fill and
    # drop, a saturated input buffer and a lossy wire.
    assert counts["transmitted"] > 20_000 and counts["arrived"] > 5_000, counts
    assert counts["queue_drops"] > 0 and counts["input_drops"] > 0, counts
    assert counts["link_losses"] > 0, counts
    assert digest == GOLDEN[model], (
        "the sim target's per-packet behaviour changed: a speed-up must not change it; a "
        f"deliberate model change updates GOLDEN[{model!r}] (now {digest}, {counts})")


@pytest.mark.parametrize("model", list(GOLDEN))
def test_the_pure_python_path_gives_the_golden_trace(model: str) -> None:
    """The test above runs the compiled fast path where it is built
    (``intbed accel build``); this one runs the Python source alone."""
    child = ("import json, sys\nsys.path.insert(0, sys.argv[1])\n"
             "from test_golden_trace import traced_run\n"
             "from benchmarks.sim import fast_path\n"
             "print(json.dumps([*traced_run(sys.argv[2]), fast_path()]))")
    proc = subprocess.run([sys.executable, "-c", child, str(Path(__file__).parent), model],
                          capture_output=True, text=True, check=False,
                          env=child_env({loader.PURE_ENV: "1"}))
    assert proc.returncode == 0, proc.stderr[-3000:]
    digest, counts, fast = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(fast["modules"].values()) == {"python"} and not any(fast["pipelines"].values())
    assert digest == GOLDEN[model], (digest, counts)
