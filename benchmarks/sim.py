"""Speed of the sim target: simulated seconds per wall second.

(a) INT-label's fabric with l3_forward and the paper's workload (the first
and last server each send 5 Mb/s of 1 kB packets to random servers);
(b) GPINT's scale (section V-A): a connected Watts-Strogatz network of 100
switches and 60 hosts running ``p4src/gpint.p4`` with 14,000 packets/s of
UDP background between random hosts, every switch at its processing
capacity (the run's default), no probes;
(c) a k=8 fat-tree (80 switches, 128 hosts), every host sending 100
packets/s to random hosts for one simulated second, measured in a fresh
process for its peak memory.

``profile_case`` runs one case under cProfile and says where the time
goes, by function and by part of the simulator.
"""

from __future__ import annotations

import json
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from common.errors import IntbedError
from common.paths import child_env
from common.seeds import derive_seed
from fastpath import loader


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


def bench_fabric(duration_s: float = 10.0, seed: int = 0,
                 around: Callable[[], AbstractContextManager[Any]] = nullcontext,
                 prepare: Callable[[Any], None] | None = None) -> dict[str, Any]:
    """``around`` wraps the simulated run alone (a profiler, say): not the
    imports, the P4 compilation or building the network. ``prepare`` gets
    the network just before the run (``benchmarks.bound`` stubs its
    pipelines there)."""
    from orchestration.sim import build
    from topologies.generators import build_topology

    topo = build_topology("intlabel-fabric")
    net = build(topo, "l3_forward", seed=seed)
    hosts = list(topo.hosts)
    receivers = random_server_traffic(net, [hosts[0], hosts[-1]], 5e6, 1000, duration_s, seed)
    if prepare is not None:
        prepare(net)
    with around():
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


def bench_gpint(n: int = 100, load_pps: float = 14_000.0, duration_s: float = 10.0,
                seed: int = 0, around: Callable[[], AbstractContextManager[Any]] = nullcontext,
                tap: Callable[[int, str, int, bytes], None] | None = None,
                prepare: Callable[[Any], None] | None = None) -> dict[str, Any]:
    """``tap`` sees every frame a switch transmits (``Network.tap_transmitted``);
    ``around`` and ``prepare`` as for ``bench_fabric``."""
    from orchestration.network import open_network
    from orchestration.systems.gpint import (
        PROGRAM,
        GpintRunConfig,
        background,
        configure_switches,
        run_topology,
    )

    cfg = GpintRunConfig(n=n, load_pps=load_pps, duration_s=duration_s, warmup_s=0.0)
    topo = run_topology(cfg, seed)
    net = open_network("sim", topo, PROGRAM, seed=seed)
    with net:
        net.install_routes()
        configure_switches(net, cfg)
        background(net, cfg, seed)
        if tap is not None:
            net.tap_transmitted(tap)
        net.start_traffic()
        if prepare is not None:
            prepare(net)
        with around():
            t0 = time.perf_counter()
            net.run_traffic(duration_s, 0.1)
            wall = time.perf_counter() - t0
        counters = net.finish()
        hops = sum(sw.engine.stats["ingress"] for sw in net.switches.values())  # type: ignore[attr-defined]
    return {
        "topology": f"gpint-ws n={n}", "switches": len(topo.switches), "hosts": len(topo.hosts),
        "load_pps": load_pps, "simulated_s": duration_s, "wall_s": round(wall, 3),
        "realtime_factor": round(duration_s / wall, 2),
        "packet_hops": hops, "packet_hops_per_s": round(hops / wall),
        "background_loss": round(1 - counters.delivered / max(1, counters.sent), 4),
        "events": counters.events,
    }


CASES = {"fabric": bench_fabric, "gpint": bench_gpint}


def profile_case(case: str, duration_s: float, top: int = 25) -> dict[str, Any]:
    """One case's simulated run (not its start-up) under cProfile: the
    functions with the most time of their own, and that time summed by part
    (pipeline code generated from P4, engine, traffic manager and wires,
    event loop, traffic, other).

    cProfile sees Python functions only, so with the compiled fast path on
    the case runs in a child process that has it off."""
    if loader.enabled():
        argv = [sys.executable, "-c", _PROFILE_CHILD, case, repr(duration_s), str(top)]
        proc = subprocess.run(argv, capture_output=True, text=True, check=False,
                              env=child_env({loader.PURE_ENV: "1"}))
        if proc.returncode != 0:
            tail = " | ".join(proc.stderr.strip().splitlines()[-4:])
            raise IntbedError(f"profiling the {case} case failed (exit {proc.returncode}): {tail}")
        return json.loads(proc.stdout.strip().splitlines()[-1])
    import cProfile
    import pstats

    prof = cProfile.Profile()

    @contextmanager
    def profiled() -> Iterator[None]:
        prof.enable()
        try:
            yield
        finally:
            prof.disable()

    report = CASES[case](duration_s=duration_s, around=profiled)
    stats = pstats.Stats(prof)
    rows = []
    parts: dict[str, float] = {}
    total = 0.0
    for (file, line, func), (_cc, calls, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        total += tt
        part = _part(file)
        parts[part] = parts.get(part, 0.0) + tt
        rows.append({"function": f"{Path(file).name}:{line}({func})", "calls": calls,
                     "own_s": round(tt, 3), "cumulative_s": round(ct, 3), "part": part})
    rows.sort(key=lambda r: -r["own_s"])
    return {"case": case, "run": report, "profiled_s": round(total, 3),
            "parts": {k: round(v, 3) for k, v in sorted(parts.items(), key=lambda kv: -kv[1])},
            "top": rows[:top]}


_PROFILE_CHILD = ("import json, sys\nfrom benchmarks.sim import profile_case\n"
                  "print(json.dumps(profile_case(sys.argv[1], float(sys.argv[2]), "
                  "int(sys.argv[3]))))")


PROGRAMS = ("l3_forward", "gpint")
"""The programs the benchmarks run (``intbed accel build --pgo`` trains
their pipelines on them)."""


def ran_as_python(report: dict[str, Any]) -> list[str]:
    """The hot modules and pipelines a bench report's run executed as
    Python although its fast path was on: parts changed since their last
    build, whose figures are not the compiled path's. A report without
    the fast path's section (an older checkout's) names none."""
    fast = report.get("fast_path") or {}
    if not fast.get("enabled"):
        return []
    names = [name for name, state in fast.get("modules", {}).items() if state == "python"]
    return names + [f"{name}.p4" for name, native in fast.get("pipelines", {}).items()
                    if not native]


def fast_path() -> dict[str, Any]:
    """What of the compiled fast path this process runs: each hot module
    compiled or Python, and whether the benchmarks' pipelines are built."""
    from dataplane.compiler.pipeline import compile_file
    from p4src import program_path

    return {"enabled": loader.enabled(), "modules": loader.loaded(),
            # Some 44% of a packet-hop's instructions are CPython's: which
            # interpreter ran is part of the figure (Makefile, PYTHON).
            "interpreter": f"{platform.python_version()} ({sys.executable})",
            "pipelines": {name: compile_file(program_path(name)).native
                          for name in PROGRAMS}}


MODULE_PARTS: tuple[tuple[str, str], ...] = (
    ("dataplane.runtime", "engine"),
    ("dataplane.targets.sim.events", "event loop"),
    ("dataplane.targets.sim", "traffic manager and wires"),
    ("orchestration.apps.traffic", "traffic"),
    ("traffic", "traffic"),
    ("orchestration", "orchestration"),
    ("controller", "controller"),
    ("sinks", "sinks"),
)
"""The sim's parts by module (a longer prefix before a shorter one): how
``--profile`` and ``--sample`` group time."""

PIPELINE_PART = "pipeline (generated)"


def module_part(module: str) -> str | None:
    """The part of the sim dotted module ``module`` belongs to, or None."""
    for prefix, part in MODULE_PARTS:
        if module == prefix or module.startswith(prefix + "."):
            return part
    return None


def _part(file: str) -> str:
    if file.startswith("<p4:"):
        return PIPELINE_PART
    for prefix, part in MODULE_PARTS:
        marker = "/" + prefix.replace(".", "/")
        if marker + "/" in file or marker + ".py" in file:
            return part
    if file.startswith("~") or file.startswith("<built-in") or file.startswith("{"):
        return "builtins"
    return "other"


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
    # Peak memory is per process: measure the fat-tree in a fresh one, and
    # first, while this process is small (Linux carries a process's peak RSS
    # across fork and exec into the child's).
    out = subprocess.run([sys.executable, "-m", "benchmarks.sim", "fat-tree", str(k)],
                         capture_output=True, text=True, check=True, env=child_env())
    fabric = bench_fabric(duration_s)
    gpint = bench_gpint(duration_s=duration_s)
    return {"fabric": fabric, "gpint": gpint, "fat_tree": json.loads(out.stdout),
            "fast_path": fast_path()}


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "fat-tree":
        print(json.dumps(bench_fat_tree(int(sys.argv[2]) if len(sys.argv) > 2 else 8)))
    else:
        print(json.dumps(run_sim_benchmarks()))
