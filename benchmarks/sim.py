"""Speed of the sim target: simulated seconds per wall second.

(a) INT-label's fabric with l3_forward and the paper's workload (the first
and last server each send 5 Mb/s of 1 kB packets to random servers);
(b) a k=8 fat-tree (80 switches, 128 hosts), every host sending 100
packets/s to random hosts for one simulated second, measured in a fresh
process for its peak memory.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from typing import Any

from common.paths import child_env
from common.seeds import derive_seed


def random_server_traffic(net: Any, senders: list[str], rate_bps: float, size: int,
                          duration_s: float, seed: int) -> list[Any]:
    """A recorder on every host and, from each of ``senders``, ``rate_bps`` of
    ``size``-byte packets to random servers: the paper's workload, public
    because tests check the sim's determinism with it."""
    from orchestration.apps.traffic import play, record
    from traffic.schedules import flows_to_random_servers
    from traffic.sender import Sender

    hosts = list(net.topo.hosts.values())
    receivers = [record(net.hosts[h.name]) for h in hosts]
    for name in senders:
        spec = net.topo.hosts[name]
        sched = flows_to_random_servers(spec, hosts, rate_bps, size, round(duration_s * 1e6),
                                        derive_seed(seed, "traffic", name))
        play(net.sim, net.hosts[name], Sender(sched))
    return receivers


def bench_fabric(duration_s: float = 10.0, seed: int = 0) -> dict[str, Any]:
    from orchestration.sim import build
    from topologies.generators import build_topology

    topo = build_topology("intlabel-fabric")
    net = build(topo, "l3_forward", seed=seed)
    hosts = list(topo.hosts)
    receivers = random_server_traffic(net, [hosts[0], hosts[-1]], 5e6, 1000, duration_s, seed)
    t0 = time.perf_counter()
    net.run(duration_s + 0.1)
    wall = time.perf_counter() - t0
    hops = sum(sw.engine.stats["ingress"] for sw in net.switches.values())
    delivered = sum(len(rx.records()) for rx in receivers)
    return {
        "topology": "intlabel-fabric", "simulated_s": duration_s, "wall_s": round(wall, 3),
        "realtime_factor": round(duration_s / wall, 2),
        "packet_hops": hops, "packet_hops_per_s": round(hops / wall),
        "packets_delivered": delivered, "events": net.sim.events_run,
    }


def bench_fat_tree(k: int = 8, rate_pps: float = 100.0, duration_s: float = 1.0,
                   seed: int = 0) -> dict[str, Any]:
    from orchestration.sim import build
    from topologies.generators import build_topology

    t_build = time.perf_counter()
    topo = build_topology("fat-tree", k=k)
    net = build(topo, "l3_forward", seed=seed)
    size = 1000
    random_server_traffic(net, list(topo.hosts), rate_pps * size * 8, size, duration_s, seed)
    t0 = time.perf_counter()
    net.run(duration_s + 0.1)
    wall = time.perf_counter() - t0
    hops = sum(sw.engine.stats["ingress"] for sw in net.switches.values())
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "topology": f"fat-tree k={k}", "switches": len(topo.switches), "hosts": len(topo.hosts),
        "simulated_s": duration_s, "wall_s": round(wall, 3),
        "wall_s_with_build": round(time.perf_counter() - t_build, 3),
        "packet_hops": hops, "peak_rss_mb": round(peak_kb / 1024, 1),
    }


def run_sim_benchmarks(duration_s: float = 10.0, k: int = 8) -> dict[str, Any]:
    fabric = bench_fabric(duration_s)
    # Peak memory is per process: measure the fat-tree in a fresh one.
    out = subprocess.run([sys.executable, "-m", "benchmarks.sim", "fat-tree", str(k)],
                         capture_output=True, text=True, check=True, env=child_env())
    return {"fabric": fabric, "fat_tree": json.loads(out.stdout)}


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "fat-tree":
        print(json.dumps(bench_fat_tree(int(sys.argv[2]) if len(sys.argv) > 2 else 8)))
    else:
        print(json.dumps(run_sim_benchmarks()))
