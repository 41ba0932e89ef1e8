"""``intbed bench``: speed and memory benchmarks (logic in ``benchmarks``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click


@click.group()
def bench() -> None:
    """Measure intbed's speed and memory."""


@bench.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@click.option("--packets", type=click.IntRange(min=1), default=20_000, show_default=True,
              help="Packets sent per throughput benchmark.")
@click.option("--samples", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Conformance samples directory [default: ../shared/p4-conformance/samples].")
def engine(as_json: bool, packets: int, samples: Path | None) -> None:
    """Packets/s of one Switch on one core, and the memory of 100 Switches."""
    from benchmarks.engine import run_engine_benchmarks

    report = run_engine_benchmarks(packets=packets, samples_dir=samples)
    if as_json:
        click.echo(json.dumps(report, sort_keys=True))
    else:
        _print_table(report)


@bench.command("sim")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@click.option("--seconds", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
              help="Simulated seconds of the fabric and GPINT benchmarks.")
@click.option("--k", type=click.IntRange(min=2), default=8, show_default=True,
              help="Fat-tree arity of the scale benchmark.")
@click.option("--profile", type=click.Choice(["fabric", "gpint"]), default=None,
              help="Run one case under cProfile and show where the time goes.")
@click.option("--sample", type=click.Choice(["fabric", "gpint"]), default=None,
              help="Sample one case's wall-clock time by native function with perf record "
                   "(compiled code and CPython's own work included; needs perf).")
@click.option("--instructions", type=click.Choice(["fabric", "gpint", "all"]), default=None,
              help="Count the instructions per packet-hop of a case under callgrind (repeatable "
                   "to 0.01%, unlike wall time on a shared machine; needs valgrind). "
                   "--seconds defaults to 2 (fabric) and 0.2 (gpint) here.")
@click.option("--against", type=click.Path(file_okay=False, exists=True, path_type=Path),
              default=None,
              help="Another intbed checkout (an older release) measured the same way: with "
                   "--instructions its count, else --pairs alternating wall-clock runs of "
                   "both; prints the ratios.")
@click.option("--against-pure", is_flag=True,
              help="As --against, for this checkout with the compiled fast path off "
                   "(INTBED_PURE_PYTHON=1).")
@click.option("--bound", type=click.Choice(["fabric", "gpint"]), default=None,
              help="Run one case alternately as it is and with every switch's pipeline "
                   "stubbed by a per-flow memo of its forwarding: how much faster the case "
                   "could get from work on the pipeline alone.")
@click.option("--pairs", type=click.IntRange(min=1), default=3, show_default=True,
              help="With --bound or a wall-clock --against: how many pairs of runs.")
def sim_bench(as_json: bool, seconds: float, k: int, profile: str | None, sample: str | None,
              instructions: str | None, against: Path | None, against_pure: bool,
              bound: str | None, pairs: int) -> None:
    """Simulated seconds per wall second (INT-label fabric, GPINT at 100
    switches and 14,000 packets/s), and a fat-tree's time and memory."""
    from rich.console import Console

    console = Console()
    # Progress on stderr, so --json's standard output stays one object.
    err = Console(stderr=True)
    if (against is not None or against_pure) and (profile or sample or bound):
        raise click.UsageError("--against and --against-pure compare instruction counts "
                               "(with --instructions) or whole bench runs, not --profile, "
                               "--sample or --bound")
    if against is not None and against_pure:
        raise click.UsageError("give one of --against and --against-pure")
    if sum(x is not None for x in (profile, sample, instructions, bound)) > 1:
        raise click.UsageError("give one of --profile, --sample, --instructions and --bound")
    if bound is not None:
        from benchmarks.bound import bound as run_bound

        _show(run_bound(bound, seconds, pairs, progress=lambda m: err.print(m, style="dim")),
              as_json, lambda report: _bound_table(console, report))
        return
    if instructions is not None:
        _instructions(console, as_json, instructions, seconds, against, against_pure)
        return
    if against is not None or against_pure:
        from benchmarks.instructions import check_checkout
        from benchmarks.pairs import compare_wall

        other = None if against is None else check_checkout(against)
        _show(compare_wall(other, pairs, seconds, k, against_pure,
                           progress=lambda m: err.print(m, style="dim")),
              as_json, lambda report: _pairs_table(console, report))
        return
    if sample is not None:
        from benchmarks.sampling import sample as sample_case

        _show(sample_case(sample, seconds), as_json,
              lambda report: _sample_table(console, sample, report))
        return
    if profile is not None:
        from benchmarks.sim import profile_case

        _show(profile_case(profile, seconds), as_json,
              lambda prof: _profile_table(console, profile, prof))
        return
    from benchmarks.sim import ran_as_python, run_sim_benchmarks

    report = run_sim_benchmarks(seconds, k)
    if as_json:
        click.echo(json.dumps(report, sort_keys=True))
        return
    f, g, t = report["fabric"], report["gpint"], report["fat_tree"]
    fast = report["fast_path"]
    compiled = sum(state == "compiled" for state in fast["modules"].values())
    built = ", ".join(name for name, native in fast["pipelines"].items() if native) or "none"
    console.print(f"compiled fast path: {compiled}/{len(fast['modules'])} hot modules, "
                  f"pipelines built: {built} (intbed accel status); "
                  f"Python {fast['interpreter']}")
    _warn_unbuilt(console, "", ran_as_python(report))
    console.print(f"intlabel-fabric, l3_forward, 2 x 5 Mb/s of 1 kB packets: "
                  f"{f['simulated_s']} simulated s in {f['wall_s']} s wall = "
                  f"{f['realtime_factor']}x real time; {f['packet_hops_per_s']:,} packet-hops/s")
    console.print(f"GPINT {g['topology']}, {g['hosts']} hosts, {g['load_pps']:,.0f} packets/s: "
                  f"{g['simulated_s']} simulated s in {g['wall_s']} s wall = "
                  f"{g['realtime_factor']}x real time; {g['packet_hops_per_s']:,} packet-hops/s")
    console.print(f"{t['topology']} ({t['switches']} switches, {t['hosts']} hosts), 100 pps per "
                  f"host for {t['simulated_s']} simulated s: {t['wall_s']} s wall "
                  f"({t['wall_s_with_build']} s with building), peak RSS {t['peak_rss_mb']} MB")


def _show(report: dict[str, Any], as_json: bool, table: Callable[[dict[str, Any]], None]
          ) -> None:
    if as_json:
        click.echo(json.dumps(report, sort_keys=True))
    else:
        table(report)


def _profile_table(console: Any, case: str, prof: dict[str, Any]) -> None:
    r = prof["run"]
    console.print(f"{case}: {r['simulated_s']} simulated s, {r['wall_s']} s wall under "
                  f"the profiler ({prof['profiled_s']} s profiled; the Python source, "
                  "with the compiled fast path off)")
    for part, secs in prof["parts"].items():
        console.print(f"  {part:28} {secs:8.3f} s  {100 * secs / prof['profiled_s']:5.1f} %")
    for row in prof["top"]:
        console.print(f"  {row['own_s']:8.3f} s own {row['cumulative_s']:8.3f} s cum "
                      f"{row['calls']:>9,}  {row['function']}", soft_wrap=True)


def _warn_unbuilt(console: Any, where: str, names: list[str]) -> None:
    """A warning naming the parts of the fast path a run executed as Python."""
    if names:
        console.print(f"[yellow]{where}ran as Python, not built: {', '.join(names)} (changed "
                      "since the last build?). These figures are not the compiled fast "
                      "path's: run `intbed accel build` there first.[/yellow]")


def _pairs_table(console: Any, report: dict[str, Any]) -> None:
    console.print(f"this checkout against {report['against']}, alternating full bench runs "
                  f"({report['simulated_s']} simulated s; ratios above 1: this one is faster)")
    for i, row in enumerate(report["pairs"], 1):
        f, g, t = row["fabric"], row["gpint"], row["fat_tree"]
        console.print(f"  pair {i}: fabric {f['this']}x / {f['against']}x = {f['ratio']}; "
                      f"GPINT {g['this']}x / {g['against']}x = {g['ratio']}; fat-tree "
                      f"{t['this_wall_s']} s / {t['against_wall_s']} s, peak RSS "
                      f"{t['this_peak_rss_mb']} / {t['against_peak_rss_mb']} MB")
    m = report["median"]
    console.print(f"  median: fabric {m['fabric']['this']}x against {m['fabric']['against']}x "
                  f"({m['fabric']['ratio']} per pair); GPINT {m['gpint']['this']}x against "
                  f"{m['gpint']['against']}x ({m['gpint']['ratio']} per pair); fat-tree "
                  f"{m['fat_tree']['ratio']} per pair")
    stale = report.get("ran_as_python", {})
    _warn_unbuilt(console, "this checkout: ", stale.get("this", []))
    _warn_unbuilt(console, f"{report['against']}: ", stale.get("against", []))


def _bound_table(console: Any, report: dict[str, Any]) -> None:
    console.print(f"{report['case']}: {report['simulated_s']} simulated s, real pipeline "
                  "against a per-flow memo of its forwarding (benchmarks/bound.py)")
    for i, row in enumerate(report["pairs"], 1):
        real, stub = row["real"], row["stubbed"]
        same = "" if row["same_run"] else "  (runs differ: the memo does not hold here)"
        console.print(f"  pair {i}: {real['realtime_factor']}x real time as it is, "
                      f"{stub['realtime_factor']}x stubbed: {row['ratio']}x{same}")
    rt = report["median_realtime_factor"]
    console.print(f"  median: {rt['real']}x as it is, {rt['stubbed']}x stubbed; the pipeline "
                  f"alone can gain at most about {report['median_ratio']}x")


def _sample_table(console: Any, case: str, report: dict[str, Any]) -> None:
    r = report["run"]
    console.print(f"{case}: {r['simulated_s']} simulated s in {r['wall_s']} s wall "
                  f"({r['realtime_factor']}x real time) under perf, {report['samples']:,} "
                  f"samples at {report['frequency_hz']} Hz; each sample counts for the native "
                  "function running when it was taken")
    if report["samples"] < 500:
        console.print(f"  (only {report['samples']} samples: raise --seconds for steadier shares)")
    for part, pct in report["parts_pct"].items():
        console.print(f"  {part:46} {pct:5.1f} %")
    for row in report["top"]:
        console.print(f"  {row['pct']:5.2f} %  {row['function']}", soft_wrap=True)


def _instructions(console: Any, as_json: bool, which: str, seconds: float,
                  against: Path | None, against_pure: bool = False) -> None:
    from benchmarks.instructions import CASES, check_checkout, compare

    ctx = click.get_current_context()
    given = ctx.get_parameter_source("seconds") is not click.core.ParameterSource.DEFAULT
    cases = list(CASES) if which == "all" else [which]
    if against is not None:
        against = check_checkout(against)
    report = compare(cases, seconds if given else None, against, against_pure)
    if as_json:
        click.echo(json.dumps(report, sort_keys=True))
        return
    for case, row in report.items():
        this = row["this"]
        console.print(f"{case}: {this['instructions_per_hop']:,} instructions per packet-hop "
                      f"({this['packet_hops']:,} hops in {this['simulated_s']} simulated s)")
        if "against" in row:
            old = row["against"]
            where = "pure Python" if against_pure else old["checkout"]
            console.print(f"  {where}: {old['instructions_per_hop']:,} per hop; "
                          f"this checkout does {row['speedup']}x less work per hop")


@bench.command("prep")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@click.option("--samples", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Conformance samples directory [default: ../shared/p4-conformance/samples].")
@click.option("--repeats", type=click.IntRange(min=1), default=3, show_default=True,
              help="Parses timed; the fastest is reported.")
def prep_bench(as_json: bool, samples: Path | None, repeats: int) -> None:
    """Time to parse a typical P4 program and to build and iterate one
    second of 100,000 packets/s of traffic: a run's cost before packets flow."""
    from benchmarks.prep import run_prep_benchmarks

    report = run_prep_benchmarks(samples, repeats)
    if as_json:
        click.echo(json.dumps(report, sort_keys=True))
        return
    from rich.console import Console

    p, s = report["parse"], report["schedule"]
    console = Console()
    if "skipped" in p:
        console.print(f"parse skipped: {p['skipped']}", soft_wrap=True)
    else:
        console.print(f"parse {p['program']} ({p['lines']:,} lines after cpp): "
                      f"{p['parse_ms']} ms (best of {p['repeats']}; first, loading the "
                      f"grammar, {p['first_parse_ms']} ms; cpp {p['preprocess_ms']} ms)",
                      soft_wrap=True)
    console.print(f"schedule, Poisson {s['rate_pps']:,} packets/s for 1 s ({s['events']:,} "
                  f"events): generated in {s['generate_ms']} ms, iterated in "
                  f"{s['iterate_ms']} ms", soft_wrap=True)


@bench.command("switch")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@click.option("--seconds", type=click.FloatRange(min=0.5), default=5.0, show_default=True,
              help="How long the sender blasts frames.")
def switch_bench(as_json: bool, seconds: float) -> None:
    """intbed-switch packets/s between two veth hosts (root), beside the
    in-process engine, and P4Runtime table writes/s over gRPC."""
    import os

    from benchmarks.switch import run_switch_benchmarks
    from common.errors import IntbedError

    if os.geteuid() != 0:
        raise IntbedError("intbed bench switch needs root (network namespaces and veths)")
    report = run_switch_benchmarks(seconds)
    if as_json:
        click.echo(json.dumps(report, sort_keys=True))
        return
    from rich.console import Console

    p, w = report["pps"], report["writes"]
    console = Console()
    console.print(f"intbed-switch, l3_forward, 1,000 routes: {p['forwarded_pps']:,.0f} packets/s "
                  f"between two veth hosts; in-process engine in the same run "
                  f"{p['engine_pps']:,.0f} packets/s (ratio {p['ratio']:.2f})")
    console.print("P4Runtime table writes/s over gRPC: " + ", ".join(
        f"{k.replace('_', ' ')} {v:,.0f}" for k, v in w.items()
        if isinstance(v, int | float) and k.endswith("per_s")))
    for where, key in (("intbed-switch", "p4utils"), ("sim (gRPC bridge)", "p4utils_sim")):
        a = w.get(key, {})
        if "api_table_add_per_s" in a:
            console.print(f"p4-utils API table_add on {where}, one call per route from a "
                          f"controller process: {a['api_table_add_per_s']:,.0f}/s to the last "
                          f"answer ({a['api_calls_per_s']:,.0f} calls/s, {a['writes']} Writes); "
                          "one synchronous Write each "
                          f"{a['api_unpipelined_table_add_per_s']:,.0f}/s")


@bench.command("pint")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@click.option("--packets", type=click.IntRange(min=5000, max=20_000_000), default=1_000_000,
              show_default=True, help="Packets per case (flows of 5,000 packets).")
def pint_bench(as_json: bool, packets: int) -> None:
    """PINT on one core: hash words, the switches' 36-hop encoding, the
    peeling decoder, the recording module and KLL sketches, per second."""
    from benchmarks.pint import run_pint_benchmarks

    report = run_pint_benchmarks(packets)
    if as_json:
        click.echo(json.dumps(report, sort_keys=True))
        return
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"PINT, {report['packets']:,} packets, {report['hops']}-hop paths, "
                  "one core", box=box.SIMPLE)
    for column in ("case", "items", "items/s CPU", "items/s wall"):
        table.add_column(column, justify="left" if column == "case" else "right", no_wrap=True)
    for case in ("hop_words", "encode", "decode", "ingest", "kll"):
        row = report[case]
        table.add_row(case, f"{row['items']:,}", f"{row['per_s_cpu'] or 0:,}",
                      f"{row['per_s_wall'] or 0:,}")
    Console().print(table)


def _print_table(report: dict[str, Any]) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(title="intbed engine, one Switch on one core", box=box.SIMPLE)
    table.add_column("benchmark", no_wrap=True)
    table.add_column("program", no_wrap=True)
    for column in ("packets", "packets/s", "Mbit/s"):
        table.add_column(column, justify="right", no_wrap=True)
    notes = []
    for key, label in (("l3_forward", "routing"), ("largest_sample", "largest sample")):
        row = report[key]
        if "skipped" in row:
            notes.append(f"{label} skipped: {row['skipped']}")
            continue
        table.add_row(label, row["program"], f"{row['packets']:,}",
                      f"{row['packets_per_s']:,.0f}", f"{row['mbit_per_s']:,.1f}")
    mem = report["memory"]
    notes.append(f"memory: {mem['switches']} l3_forward Switches, {mem['routes']:,} routes "
                 f"each, in one process: RSS {mem['rss_mb']:,.1f} MB")
    console = Console()
    console.print(table)
    for note in notes:
        console.print(note, soft_wrap=True)


@bench.command("collector")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@click.option("--reports", type=click.IntRange(min=1000), default=1_000_000, show_default=True,
              help="Reports replayed from memory in the batch cases.")
@click.option("--seconds", type=click.FloatRange(min=0.5), default=2.0, show_default=True,
              help="How long the sender paces reports at each live rate.")
def collector_bench(as_json: bool, reports: int, seconds: float) -> None:
    """Collector reports/s on one core: batch replay from memory (parse,
    full fast path) and live UDP on loopback, beside the target rates."""
    from benchmarks.collector import run_collector_benchmarks

    report = run_collector_benchmarks(reports, seconds=seconds)
    if as_json:
        click.echo(json.dumps(report, sort_keys=True))
        return
    from rich import box
    from rich.console import Console
    from rich.table import Table

    b, live, target = report["batch"], report["live"], report["target"]
    table = Table(title=f"collector, {b['hops']}-hop TR v2.0 reports ({b['report_bytes']} B), "
                  f"{b['flows']} flows, one core", box=box.SIMPLE)
    for column in ("case", "reports", "reports/s CPU", "reports/s wall", "target"):
        table.add_column(column, justify="left" if column == "case" else "right", no_wrap=True)
    cases = [(b["parse_rows"], "parse_rows"),
             (b["fast_path_batched"], f"fast path, feed({b['batch']:,}) bytes"),
             (b["fast_path_one_call"], "fast path, one feed bytes")]
    cases += [(case, f"fast path, feed_rows({int(size):,})")
              for size, case in b.get("fast_path_rows", {}).items()]
    for row, label in cases:
        table.add_row(label, f"{row['reports']:,}", f"{row['reports_per_s_cpu']:,}",
                      f"{row['reports_per_s_wall']:,}",
                      f"{target['batch_reports_per_s'] / 1e6:g} M/s")
    console = Console()
    console.print(table)
    for run in [*live["runs"], *([live["unpaced"]] if live.get("unpaced") else [])]:
        pace = f"{run['rate']:,.0f}/s" if run["rate"] else "unpaced"
        console.print(f"live UDP at {pace}: sent {run['sent']:,} "
                      f"({run['sent_per_s']:,}/s), received {run['received']:,}, kernel drops "
                      f"{run['kernel_drops']}, loss {100 * run['loss']:.3f} %"
                      + (" (sender limited)" if run["sender_limited"] else ""), soft_wrap=True)
    console.print(f"highest rate with < {100 * live['max_loss']:.1f} % loss: "
                  f"{live['highest_loss_free_rate']:,}/s"
                  + (" (a lower bound: the sender fell short)" if live["sender_limited"] else "")
                  + f"; target {target['live_reports_per_s']:,}/s live, < "
                  f"{100 * target['max_loss']:.1f} % loss at {target['live_loss_free_rate']:,}/s",
                  soft_wrap=True)
    costs = report.get("costs", {})
    if costs.get("available"):
        segmented = (f"; segmented: send {costs['gso_send_us']} µs (UDP_SEGMENT), receive "
                     f"{costs['gro_receive_us']} µs (UDP_GRO)" if "gro_receive_us" in costs
                     else "")
        console.print(f"CPU per datagram on loopback: send {costs['send_us']} µs (sendmmsg), "
                      f"receive {costs['recvmmsg_us']} µs (recvmmsg), "
                      f"{costs['recv_into_us']} µs (recv_into){segmented}; ceilings per core: "
                      f"sender {costs['sender_ceiling_per_s']:,}/s, receiver with the fast path "
                      f"{costs['receiver_ceiling_per_s']:,}/s", soft_wrap=True)
    for name, row in report.get("versus_target", {}).items():  # collector targets
        met = {True: "met", False: "NOT met", None: "not measured"}[row["met"]]
        console.print(f"{name}: measured {row['measured']}, target {row['target']}: {met}")


@bench.command("flowcache")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of lines.")
@click.option("--packets", type=click.IntRange(min=200_000), default=2_000_000,
              show_default=True, help="Packets in the trace (100,000 flows, 5 hops x 4 "
              "instructions).")
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Worker processes, one shard of the flow cache each.")
def flowcache_bench(as_json: bool, packets: int, workers: int) -> None:
    """Flow cache packets/s on one core and over worker processes, and the
    scaling ratio, beside the targets."""
    from benchmarks.flowcache import report_lines, run_flowcache_benchmarks

    report = run_flowcache_benchmarks(packets, workers)
    click.echo(json.dumps(report, sort_keys=True) if as_json else "\n".join(report_lines(report)))
