"""p4-utils artifacts on sim: command-file lines/s and the phases of
``intbed p4app run`` on the p4-learning exercises.

- ``commands``: ``table_add`` lines into the ECMP exercise's ``ipv4_lpm``
  (lpm, 1,024 slots) through the in-process P4Runtime service, parsed,
  resolved and written one Write per line as a command file is, then
  ``table_delete`` of each by handle;
- ``exercises``: for each exercise and front door (p4app.json, network.py),
  seconds to load and build the description, to compile, start and apply
  the command files, and to ping every pair in virtual time.
"""

from __future__ import annotations

import time
from typing import Any

from common.paths import shared_dir

EXERCISES = shared_dir() / "third-party" / "p4-learning"
CASES = (("03-L2_Basic_forwarding", "p4app.json"), ("03-L2_Basic_forwarding", "network.py"),
         ("05-ECMP", "p4app.json"), ("05-ECMP", "network.py"))


def bench_commands(n: int = 1000) -> dict[str, Any]:
    from controller.bmcli import CommandRunner
    from controller.bmcli.parse import parse_commands
    from orchestration.p4app.load import load_app
    from orchestration.p4app.run import open_app

    app = load_app(EXERCISES / "05-ECMP" / "p4app.json")
    net = open_app(app, "sim")
    try:
        runner = CommandRunner(net.clients["s2"])
        runner.run(parse_commands("table_clear ipv4_lpm\n", "setup"))
        adds = parse_commands("".join(
            f"table_add ipv4_lpm set_nhop 11.{i >> 8 & 255}.{i & 255}.0/24 => "
            f"00:00:00:00:01:01 {i % 8 + 1}\n" for i in range(n)), "adds")
        deletes = parse_commands("".join(f"table_delete ipv4_lpm {i}\n" for i in range(n)),
                                 "deletes")
        t0 = time.perf_counter()
        runner.run(adds)
        t1 = time.perf_counter()
        runner.run(deletes)
        t2 = time.perf_counter()
    finally:
        net.stop()
    return {"lines": n, "table_add_per_s": round(n / (t1 - t0), 1),
            "table_delete_per_s": round(n / (t2 - t1), 1)}


def bench_exercises() -> list[dict[str, Any]]:
    from dataplane.compiler.pipeline import compile_file
    from orchestration.p4app.load import load_app
    from orchestration.p4app.reach import ping_all
    from orchestration.p4app.run import open_app

    rows = []
    for folder, file in CASES:
        t0 = time.perf_counter()
        app = load_app(EXERCISES / folder / file)
        t1 = time.perf_counter()
        compile_file(app.program)  # cached per process: time it once, apart
        t2 = time.perf_counter()
        net = open_app(app, "sim")
        t3 = time.perf_counter()
        pings = ping_all(net, app)
        t4 = time.perf_counter()
        net.stop()
        rows.append({"exercise": folder, "file": file, "load_s": round(t1 - t0, 4),
                     "compile_s": round(t2 - t1, 4), "open_and_commands_s": round(t3 - t2, 4),
                     "ping_s": round(t4 - t3, 4), "pairs": len(pings),
                     "reached": sum(p.rtt_us is not None for p in pings)})
    return rows


def run_p4app_benchmarks(lines: int = 1000) -> dict[str, Any]:
    if not EXERCISES.is_dir():
        return {"error": f"the p4-learning exercises are not at {EXERCISES}"}
    exercises = bench_exercises()  # first: the compile times are of a cold cache
    return {"commands": bench_commands(lines), "exercises": exercises}
