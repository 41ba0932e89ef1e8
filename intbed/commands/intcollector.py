"""``intbed collector``: the INT collector on live UDP reports or a pcap,
writing to SQLite or InfluxDB 1.x, and reading a series back (logic in
``sinks.intcollector``; the private influxd in ``orchestration``)."""

from __future__ import annotations

import json
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from common.errors import IntbedError

if TYPE_CHECKING:
    from orchestration.influx_server import InfluxServer
    from sinks.intcollector.pipeline import CollectorConfig, Counters
    from sinks.intcollector.stores.base import Point, Store

STORE_HELP = ("Where points go: sqlite:PATH, influx:http://HOST:PORT/DB, influx:private "
              "(a private influxd, removed at exit) or none (counted only).")
DEFAULT_REPORT_PORT = 32766  # sinks.intcollector.receiver.DEFAULT_PORT, for --help


class StoreSpecError(IntbedError):
    """A --store value that names no store, or a store that cannot be used."""


class CountingStore:
    """``--store none``: points are counted and dropped."""

    def __init__(self) -> None:
        self.points = 0

    def write(self, points: Sequence[Point]) -> None:
        self.points += len(points)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass
class OpenedStore:
    """A store made from --store, and what closing it involves."""

    spec: str
    store: Store
    influx: tuple[str, str] | None = None  # (url, db) of an InfluxDB store
    server: InfluxServer | None = None
    notes: list[str] = field(default_factory=list)

    def close(self) -> None:
        """Close the store; for InfluxDB say what was sent, counting the
        points stored per measurement, before a private server goes away."""
        self.store.close()
        stats = getattr(self.store, "stats", None)
        if self.influx is not None and stats is not None:
            left = len(self.store)  # type: ignore[arg-type]
            self.notes.append(f"influx: sent {stats.sent} points in {stats.requests} requests "
                              f"({stats.failed_requests} failed), unsent {left}, dropped "
                              f"{stats.dropped}, rejected {stats.rejected}")
        if self.server is not None:
            from orchestration.influx_server import InfluxServerError

            try:
                stored = self.server.count_by_measurement()
                self.notes.append("influx: stored " + (", ".join(
                    f"{m} {n}" for m, n in stored.items()) or "nothing"))
            except InfluxServerError as exc:
                self.notes.append(f"influx: cannot count what was stored: {exc.message}")
            finally:
                self.server.stop()


def parse_influx(spec: str) -> tuple[str, str]:
    """``influx:http://HOST:PORT/DB`` (scheme optional) to (url, db)."""
    rest = spec.removeprefix("influx:")
    if "://" not in rest:
        rest = "http://" + rest
    scheme_end = rest.index("://") + 3
    url, sep, db = rest.rpartition("/")
    if not sep or len(url) < scheme_end or not db or not url[scheme_end:]:
        raise StoreSpecError(f"--store {spec}: want influx:http://HOST:PORT/DB")
    return url, db


def open_store(spec: str, *, for_writing: bool = True) -> OpenedStore:
    """The store --store names; an InfluxDB must answer /ping first."""
    kind, sep, rest = spec.partition(":")
    if spec == "none":
        return OpenedStore(spec, CountingStore())
    if kind == "sqlite" and sep and rest:
        path = Path(rest)
        if not for_writing and not path.is_file():
            raise StoreSpecError(f"--store {spec}: no such SQLite file {path}")
        from sinks.intcollector.stores.sqlite import SqliteStore

        try:
            return OpenedStore(spec, SqliteStore(path))
        except (sqlite3.Error, OSError) as exc:
            raise StoreSpecError(f"--store {spec}: cannot open {path}: {exc}") from None
    if kind == "influx" and rest == "private":
        if not for_writing:
            raise StoreSpecError("--store influx:private is removed when its run ends: "
                                 "query a server that keeps running (influx:URL/DB)")
        from orchestration.influx_server import InfluxServer
        from sinks.intcollector.stores.influx import InfluxWriter

        server = InfluxServer().start()
        return OpenedStore(spec, InfluxWriter(server.url, server.db), (server.url, server.db),
                           server)
    if kind == "influx" and sep and rest:
        from orchestration.influx_server import ping
        from sinks.intcollector.stores.influx import InfluxWriter

        url, db = parse_influx(spec)
        ping(url)
        return OpenedStore(spec, InfluxWriter(url, db), (url, db))
    raise StoreSpecError(f"--store {spec}: want sqlite:PATH, influx:http://HOST:PORT/DB, "
                         "influx:private or none")


def collector_config(thresholds: Sequence[str], period: float, no_events: bool,
                     time_origin_ns: int = 0) -> CollectorConfig:
    """CollectorConfig from the options; a bad threshold or period is one line."""
    from sinks.intcollector.events import Thresholds
    from sinks.intcollector.pipeline import CollectorConfig

    values: dict[str, float] = {}
    for item in thresholds:
        name, sep, text = item.partition("=")
        try:
            values[name.strip()] = float(text)
        except ValueError:
            raise IntbedError(f"--threshold {item}: want METRIC=VALUE") from None
        if not sep:
            raise IntbedError(f"--threshold {item}: want METRIC=VALUE")
    try:
        Thresholds(values)
    except KeyError as exc:
        raise IntbedError(f"--threshold: {exc.args[0]}") from None
    except ValueError as exc:
        raise IntbedError(f"--threshold: {exc}") from None
    if not period > 0:
        raise IntbedError(f"--period {period}: must be positive")
    return CollectorConfig(push_period_s=period, event_detection=not no_events,
                           thresholds=values, time_origin_ns=time_origin_ns)


def counters_dict(counters: Counters) -> dict[str, Any]:
    reports = counters.reports
    return {"reports": reports.total, "accepted": reports.accepted,
            "rejected": dict(reports.rejected.most_common()), "values": counters.values,
            "events": sum(counters.events.values()), "events_by_metric": dict(counters.events),
            "exported_points": counters.exported_points, "store_writes": counters.store_writes,
            "pushes": counters.pushes, "queue_drops": counters.queue_drops,
            "queue_dropped_batches": counters.queue_dropped_batches,
            "store_errors": counters.store_errors}


def _counter_lines(c: dict[str, Any]) -> list[str]:
    rejected = ", ".join(f"{reason} {n}" for reason, n in c["rejected"].items())
    events = ", ".join(f"{m} {n}" for m, n in sorted(c["events_by_metric"].items()))
    return [
        f"reports {c['reports']}: accepted {c['accepted']}, rejected "
        f"{c['reports'] - c['accepted']}" + (f" ({rejected})" if rejected else ""),
        f"values {c['values']}; events {c['events']}" + (f" ({events})" if events else ""),
        f"exported {c['exported_points']} points in {c['store_writes']} writes, "
        f"{c['pushes']} pushes; queue drops {c['queue_drops']} values in "
        f"{c['queue_dropped_batches']} batches; store errors {c['store_errors']}",
    ]


@contextmanager
def _stop_on_signals(stop: Callable[[], None]) -> Iterator[None]:
    """Ctrl-C and SIGTERM end the run cleanly (counters printed) instead of
    raising; only the main thread can install handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, lambda *_: stop())
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@click.group()
def collector() -> None:
    """INTCollector: telemetry reports to events and metric series."""


def _store_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--no-events", is_flag=True,
                      help="Export every metric value (no event detection, no push).")(fn)
    fn = click.option("--period", type=float, default=10.0, show_default=True,
                      help="P: seconds between pushes of the latest values.")(fn)
    fn = click.option("--threshold", "thresholds", multiple=True, metavar="METRIC=VALUE",
                      help="Event threshold T of a metric (default 50 each); repeatable.")(fn)
    return click.option("--store", "store_spec", default="none", show_default=True,
                        help=STORE_HELP)(fn)


@collector.command("run")
@click.option("--listen", default=f"0.0.0.0:{DEFAULT_REPORT_PORT}", show_default=True,
              help="UDP address the reports come to (HOST:PORT).")
@_store_options
@click.option("--seconds", type=float, default=None,
              help="Stop after this many seconds (default: at Ctrl-C).")
@click.option("--batch", type=int, default=1024, show_default=True,
              help="Datagrams taken per wakeup at most.")
@click.option("--max-datagram", type=int, default=2048, show_default=True,
              help="Longest report taken, in bytes (longer ones are counted and dropped).")
@click.option("--linger", type=float, default=0.01, show_default=True,
              help="Seconds a batch may wait to fill before it is fed.")
@click.option("--prometheus", "prometheus_port", type=click.IntRange(0, 65535), default=None,
              help="Serve the counters and switch-level values for Prometheus on this "
                   "TCP port (/metrics).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object at the end.")
def run_command(listen: str, store_spec: str, thresholds: tuple[str, ...], period: float,
                no_events: bool, seconds: float | None, batch: int, max_datagram: int,
                linger: float, prometheus_port: int | None, as_json: bool) -> None:
    """Collect reports from a UDP socket until Ctrl-C or --seconds, then
    print the counters."""
    from common.wallclock import WallClock
    from sinks.intcollector.pipeline import Collector
    from sinks.intcollector.receiver import UdpReceiver, parse_listen

    if batch < 1 or max_datagram < 1 or not linger >= 0:
        raise IntbedError("--batch and --max-datagram must be positive, --linger >= 0")
    host, port = parse_listen(listen)
    clock = WallClock(name="intbed-collector")
    config = collector_config(thresholds, period, no_events,
                              time.time_ns() - round(clock.now() * 1e9))
    opened: OpenedStore | None = None
    receiver: UdpReceiver | None = None
    closers: list[Callable[[], None]] = []
    try:
        opened = open_store(store_spec)
        coll = Collector(opened.store, clock, config)
        receiver = UdpReceiver(coll, host, port, batch=batch, max_datagram=max_datagram,
                               linger_s=linger)
        where = f"{receiver.address[0]}:{receiver.port}"
        if prometheus_port is not None:
            from sinks.intcollector.prometheus import PrometheusEndpoint

            try:
                endpoint = PrometheusEndpoint(coll, prometheus_port, host, receiver)
            except OSError as exc:
                raise IntbedError(f"--prometheus {prometheus_port}: cannot listen on TCP "
                                  f"{host}:{prometheus_port}: {exc.strerror or exc}") from None
            closers.append(endpoint.close)
            if not as_json:
                click.echo(f"prometheus metrics on http://{host}:{endpoint.port}/metrics")
        if not as_json:
            click.echo(f"listening on udp {where}, store {store_spec}"
                       + ("" if seconds is not None else "; Ctrl-C stops"))
        started = time.monotonic()
        coll.start()
        with _stop_on_signals(receiver.stop):
            receiver.run(seconds)
        elapsed = time.monotonic() - started
        receiver.close()
        coll.stop()
    finally:
        for close in closers:
            close()
        clock.close()
        if receiver is not None:
            receiver.close()
        if opened is not None:
            opened.close()
    stats = receiver.stats
    counts = counters_dict(coll.counters)
    if as_json:
        click.echo(json.dumps({"listen": where, "store": store_spec, "seconds": elapsed,
                               "receiver": stats.as_dict(), "counters": counts,
                               "notes": opened.notes}))
        return
    lost = "not measurable" if stats.kernel_drops is None else str(stats.kernel_drops)
    span = (stats.last_s or 0.0) - (stats.first_s or 0.0)
    click.echo(f"{elapsed:.1f} s: datagrams {stats.datagrams} ({stats.bytes} bytes) in "
               f"{stats.batches} batches; oversize {stats.oversize}; lost in the kernel {lost}")
    if stats.datagrams:
        click.echo(f"rate {stats.span_rate:.0f}/s over the {span:.2f} s from the first batch "
                   f"to the last; busy {stats.busy_s:.2f} s ({stats.capacity:.0f}/s), "
                   f"{stats.cpu_s:.2f} s CPU ({stats.cpu_capacity:.0f}/s)")
    for line in _counter_lines(counts) + opened.notes:
        click.echo(line)


@collector.command("replay")
@click.argument("pcap", type=click.Path(path_type=Path))
@_store_options
@click.option("--port", type=int, default=DEFAULT_REPORT_PORT, show_default=True,
              help="UDP destination port of the reports in the capture.")
@click.option("--batch", type=int, default=4096, show_default=True,
              help="Reports per fast-path call at most.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def replay_command(pcap: Path, store_spec: str, thresholds: tuple[str, ...], period: float,
                   no_events: bool, port: int, batch: int, as_json: bool) -> None:
    """Replay the reports of a pcap file as fast as possible, in the
    capture's time, and print reports/s and the counters."""
    from sinks.intcollector.replay import replay

    if batch < 1:
        raise IntbedError("--batch must be positive")
    config = collector_config(thresholds, period, no_events)
    opened = open_store(store_spec)
    try:
        done = replay(pcap, opened.store, config, port=port, batch=batch)
    finally:
        opened.close()
    stats = done.stats
    counts = counters_dict(done.collector.counters)
    if as_json:
        click.echo(json.dumps({"pcap": str(pcap), "store": store_spec,
                               "replay": stats.as_dict(), "counters": counts,
                               "notes": opened.notes}))
        return
    skipped = ", ".join(f"{r} {n}" for r, n in stats.skipped.most_common())
    span = ((stats.last_ns or 0) - (stats.first_ns or 0)) / 1e9
    click.echo(f"{stats.reports} reports of {stats.frames} frames"
               + (f" (skipped: {skipped})" if skipped else "")
               + f", {span:.3f} s of capture, in {stats.wall_s:.3f} s: "
               f"{stats.reports_per_s:.0f} reports/s")
    for line in _counter_lines(counts) + opened.notes:
        click.echo(line)


@collector.command("query")
@click.option("--store", "store_spec", required=True,
              help="sqlite:PATH or influx:http://HOST:PORT/DB.")
@click.argument("measurement")
@click.option("--tag", "tag_items", multiple=True, metavar="K=V",
              help="Only series with this tag value; repeatable.")
@click.option("--png", type=click.Path(path_type=Path), default=None,
              help="Also plot the series (PNG, or SVG/PDF by suffix).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def query_command(store_spec: str, measurement: str, tag_items: tuple[str, ...],
                  png: Path | None, as_json: bool) -> None:
    """Read the series of MEASUREMENT back from a store and print them."""
    tags: dict[str, str] = {}
    for item in tag_items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise IntbedError(f"--tag {item}: want KEY=VALUE")
        tags[key] = value
    found = read_series(store_spec, measurement, tags)
    if png is not None:
        plot_series(found, measurement, png)
    if as_json:
        click.echo(json.dumps({"measurement": measurement, "series": [
            {"tags": t, "points": [[ts, v] for ts, v in pts]} for t, pts in found]}))
        return
    if not found:
        click.echo(f"no series of {measurement}"
                   + (f" with {', '.join(tag_items)}" if tags else ""))
    for series_tags, points in found:
        label = ",".join(f"{k}={v}" for k, v in sorted(series_tags.items()))
        click.echo(f"{measurement}{',' if label else ''}{label}: {len(points)} points")
        for t_ns, value in points:
            click.echo(f"  {t_ns} {value}")
    if png is not None:
        click.echo(f"plot written to {png}")


Series = tuple[dict[str, str], list[tuple[int, Any]]]


def read_series(store_spec: str, measurement: str, tags: dict[str, str]) -> list[Series]:
    """(tags, points) of every series of ``measurement`` matching ``tags``."""
    opened = open_store(store_spec, for_writing=False)
    try:
        if opened.influx is not None:
            from orchestration.influx_server import query, series_query

            url, db = opened.influx
            return [(s.tags, s.points) for s in query(url, db, series_query(measurement, tags))]
        store_query = getattr(opened.store, "query", None)
        if store_query is None:
            raise StoreSpecError(f"--store {store_spec} keeps nothing to query")
        return [(s.tags, [(int(t), v) for t, v in s.points])
                for s in store_query(measurement, tags)]
    finally:
        opened.store.close()


def plot_series(found: list[Series], measurement: str, path: Path) -> None:
    """One step line per series over seconds since the first point: a value
    holds until the next event. Text values (paths) get one level each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    starts = [pts[0][0] for _, pts in found if pts]
    t0 = min(starts) if starts else 0
    levels: dict[str, int] = {}
    fig, ax = plt.subplots(figsize=(9, 4.5))
    try:
        for series_tags, points in found:
            if not points:
                continue
            xs = [(t - t0) / 1e9 for t, _ in points]
            ys = [levels.setdefault(v, len(levels)) if isinstance(v, str) else v
                  for _, v in points]
            label = ",".join(f"{k}={v}" for k, v in sorted(series_tags.items()))
            ax.step(xs, ys, where="post", marker=".", label=label or measurement)
        if levels:  # the tick labels name the values
            ax.set_yticks(list(levels.values()), list(levels))
        else:
            ax.set_ylabel(measurement)
        ax.set_xlabel("seconds since the first point")
        ax.set_title(f"{measurement}: {len(found)} series")
        if 0 < len(found) <= 10:
            ax.legend(fontsize="small")
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        try:
            fig.savefig(path)
        except (OSError, ValueError) as exc:  # ValueError: a suffix matplotlib cannot write
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise IntbedError(f"cannot write the plot {path}: {reason}") from None
    finally:
        plt.close(fig)
