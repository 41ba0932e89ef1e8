"""``intbed flowcache``: the flow-cache INT sink on a capture, and the
synthetic traces it is measured on (logic in ``sinks.flowcache``;
docs/flowcache.md)."""

from __future__ import annotations

import json
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click

from common.errors import InvalidValueError

THRESHOLD_HELP = ("CLASS:METRIC=VALUE, e.g. threshold:queue_occupancy=150 or "
                  "change:e2e_latency=300 (CLASS change or threshold; METRIC hop_latency, "
                  "queue_occupancy, link_utilization or e2e_latency). Repeatable.")


def parse_thresholds(specs: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """--threshold values as FlowCacheConfig.thresholds (checked there)."""
    out: dict[str, dict[str, int]] = {}
    for spec in specs:
        where, _, value = spec.partition("=")
        cls, _, metric = where.partition(":")
        if not value or not metric:
            raise InvalidValueError(f"--threshold {spec!r}: write CLASS:METRIC=VALUE, e.g. "
                                    "threshold:queue_occupancy=150")
        try:
            number = int(value)
        except ValueError:
            raise InvalidValueError(f"--threshold {spec!r}: {value!r} is not an integer") \
                from None
        out.setdefault(cls, {})[metric] = number
    return out


@click.group()
def flowcache() -> None:
    """The flow-cache INT sink (Feng et al.'s SmartNIC design, on the host)."""


@flowcache.command("trace")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--packets", type=click.IntRange(min=1), default=100_000, show_default=True)
@click.option("--flows", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--hops", type=click.IntRange(1, 5), default=5, show_default=True)
@click.option("--instructions", type=click.IntRange(1, 4), default=4, show_default=True,
              help="Switch id, then hop latency, queue occupancy, tx utilization.")
@click.option("--rate", type=click.FloatRange(min=1), default=10_000_000, show_default=True,
              help="Packets per second of capture time.")
@click.option("--seed", type=int, default=1, show_default=True)
def trace_command(out: Path, packets: int, flows: int, hops: int, instructions: int,
                  rate: float, seed: int) -> None:
    """Write a synthetic INT v2.0 trace (64-byte packets, heavy-tailed
    flows, exponential values) as a pcap."""
    from sinks.flowcache.trace import TraceSpec, generate, write_pcap

    if packets < flows:
        raise InvalidValueError(f"--packets {packets} is less than --flows {flows}: every "
                                "flow sends at least one packet")
    trace = generate(TraceSpec(packets=packets, flows=flows, hops=hops,
                               instructions=instructions, rate_pps=rate, seed=seed))
    write_pcap(out, trace)
    click.echo(f"{out}: {packets:,} packets of {trace.rows.shape[1]} B, {flows:,} flows, "
               f"{hops} hops x {instructions} instructions")


@flowcache.command("replay")
@click.argument("pcap", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--rows", type=click.IntRange(min=1), default=1 << 19, show_default=True)
@click.option("--buckets", type=click.IntRange(min=1), default=12, show_default=True)
@click.option("--max-hops", type=click.IntRange(1, 254), default=5, show_default=True)
@click.option("--aging-ms", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Evict flows idle longer than this (capture time); 0: no aging.")
@click.option("--threshold", "thresholds", multiple=True, help=THRESHOLD_HELP)
@click.option("--batch", type=click.IntRange(min=1), default=8192, show_default=True)
@click.option("--redis", "redis_spec", default=None,
              help="Flush rings and histograms to Redis: a redis:// URL or 'private' (a "
              "private redis-server, removed at exit).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def replay_command(pcap: Path, rows: int, buckets: int, max_hops: int, aging_ms: float,
                   thresholds: tuple[str, ...], batch: int, redis_spec: str | None,
                   as_json: bool) -> None:
    """Feed an Ethernet capture of INT packets through the flow cache and
    print what came out: packets taken and skipped, evictions, events by
    type, counters; with --redis, also store them."""
    from sinks.flowcache.cache import Events, Evictions, FlowCache
    from sinks.flowcache.config import FlowCacheConfig
    from sinks.flowcache.ingest import IngestStats, pcap_batches
    from sinks.flowcache.layout import EVENT_BITS, EVICT_REASONS

    period = int(aging_ms * 1_000_000)
    config = FlowCacheConfig(rows=rows, buckets=buckets, max_hops=max_hops,
                             aging_period_ns=period, aging_interval_ns=max(1, period // 2),
                             thresholds=parse_thresholds(thresholds))
    cache = FlowCache(config)
    stats = IngestStats()
    events: Counter[str] = Counter()
    evictions: Counter[str] = Counter()

    def count_events(ev: Events) -> None:
        for name, bit in EVENT_BITS.items():
            events[name] += int(((ev.bitmap & bit) != 0).sum())

    def count_evictions(ev: Evictions) -> None:
        for reason, name in EVICT_REASONS.items():
            evictions[name] += int((ev.reason == reason).sum())

    last = 0
    with ExitStack() as stack:
        sink = None
        if redis_spec is not None:
            sink = _redis_sink(redis_spec, stack)
        for part in pcap_batches(pcap, max_hops, batch, stats=stats):
            cache.process(part)
            last = int(part.ts[-1]) if len(part) else last
            drained, gone = cache.drain_events(), cache.drain_evictions()
            count_events(drained)
            count_evictions(gone)
            if sink is not None:
                sink.write_events(drained)
                sink.write_evictions(gone)

        def export(ev: Evictions) -> None:
            count_evictions(ev)
            if sink is not None:
                sink.write_evictions(ev)

        cache.flush(last + 1, export)
        if sink is not None:
            sink.write_histograms(cache)
    report: dict[str, Any] = {
        "frames": stats.total, "taken": stats.accepted, "skipped": dict(stats.skipped),
        "events": dict(events), "evictions": dict(evictions), "counters": cache.counters,
        "switches": len(cache.histograms())}
    if as_json:
        click.echo(json.dumps(report, sort_keys=True))
        return
    skipped = ", ".join(f"{k} {v:,}" for k, v in stats.skipped.most_common()) or "none"
    click.echo(f"{pcap}: {stats.total:,} frames, {stats.accepted:,} taken, skipped: {skipped}")
    c = cache.counters
    click.echo(f"flows: {c['inserts']:,} inserted, {c['hits']:,} updates; evicted "
               + ", ".join(f"{k} {v:,}" for k, v in sorted(evictions.items()))
               + f"; ring overflows: general {c['general_ring_overflow']:,}, event "
               f"{c['event_ring_overflow']:,}")
    click.echo(f"events: {c['events']:,}"
               + "".join(f", {k} {v:,}" for k, v in sorted(events.items()) if v)
               + f"; histograms for {report['switches']} switches")


def _redis_sink(spec: str, stack: ExitStack) -> Any:
    from orchestration.redis_server import RedisServer, connect
    from sinks.flowcache.redis_sink import RedisSink

    if spec == "private":
        server = stack.enter_context(RedisServer())
        return RedisSink(server.client())
    if not spec.startswith(("redis://", "rediss://", "unix://")):
        raise InvalidValueError(f"--redis {spec!r}: give a redis:// URL or 'private'")
    return RedisSink(connect(spec))
