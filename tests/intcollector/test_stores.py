"""Stores: the line-protocol encoder against hand-written lines, the
InfluxDB HTTP writer against a local server that fails on purpose, and the
SQLite store writing and reading series back."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import numpy as np
import pytest

from sinks.intcollector.stores import (
    InfluxWriter,
    MemoryStore,
    Point,
    SqliteStore,
    encode_line,
    encode_lines,
)

# --- line protocol ------------------------------------------------------------


def test_fig7_queue_occupancy_line() -> None:
    point = Point("queue_occupancy", (("sw_id", "4"), ("queue_id", "1")), {"value": 1200},
                  1_536_000_000_123_456_789)
    assert encode_line(point) == (
        "queue_occupancy,queue_id=1,sw_id=4 value=1200i 1536000000123456789")


def test_flow_metric_line() -> None:
    tags = (("dst_ip", "10.0.2.2"), ("dst_port", "80"), ("proto", "17"), ("src_ip", "10.0.1.1"),
            ("src_port", "1234"))
    assert encode_line(Point("flow_path", tags, {"value": "3,2,1"}, 5)) == (
        'flow_path,dst_ip=10.0.2.2,dst_port=80,proto=17,src_ip=10.0.1.1,src_port=1234 '
        'value="3,2,1" 5')


def test_escaping() -> None:
    point = Point("my measure,x=1", (("t a,g", "a=b,c d"), ("empty", "")),
                  {"f=1 x": 'say "hi" \\ok', "n,m": 1.5, "flag": True}, 0)
    assert encode_line(point) == (
        'my\\ measure\\,x=1,t\\ a\\,g=a\\=b\\,c\\ d '
        'f\\=1\\ x="say \\"hi\\" \\\\ok",n\\,m=1.5,flag=true 0')


def test_value_types() -> None:
    fields = {"i": -3, "u": np.uint32(7), "f": np.float64(2.5), "e": 1e-07, "b": False}
    assert encode_line(Point("m", (), fields, 1)) == "m i=-3i,u=7i,f=2.5,e=1e-07,b=false 1"


def test_backslashes_inside_names_pass_unchanged() -> None:
    assert encode_line(Point("a\\b", (("k", "c\\d"),), {"v": 1}, 2)) == "a\\b,k=c\\d v=1i 2"


@pytest.mark.parametrize("point", [
    Point("m", (), {}, 0),
    Point("", (), {"v": 1}, 0),
    Point("m", (("k", "a\nb"),), {"v": 1}, 0),
    Point("m", (("k", "ends\\"),), {"v": 1}, 0),
    Point("m", (("", "v"),), {"v": 1}, 0),
    Point("m", (), {"v": "two\nlines"}, 0),
    Point("m", (), {"v": float("nan")}, 0),
    Point("m", (), {"v": float("inf")}, 0),
    Point("m", (), {"v": 1 << 63}, 0),
    Point("m", (), {"v": None}, 0),  # type: ignore[dict-item]
])
def test_what_line_protocol_cannot_carry(point: Point) -> None:
    with pytest.raises(ValueError):
        encode_line(point)


def test_encode_lines() -> None:
    points = [Point("a", (), {"v": 1}, 1), Point("b", (("t", "x"),), {"v": 2}, 2)]
    assert encode_lines(points) == "a v=1i 1\nb,t=x v=2i 2\n"


# --- the HTTP writer ------------------------------------------------------------


class FakeInflux:
    """A local /write endpoint answering ``statuses`` in turn (then 204),
    keeping the lines of requests it answered 204."""

    def __init__(self) -> None:
        self.statuses: list[int] = []
        self.lines: list[str] = []
        self.requests: list[str] = []
        state = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                state.requests.append(self.path)
                status = state.statuses.pop(0) if state.statuses else 204
                if status == 204:
                    state.lines += body.splitlines()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,),
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def influx() -> Iterator[FakeInflux]:
    server = FakeInflux()
    yield server
    server.close()


class Time:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def points(count: int, start: int = 0) -> list[Point]:
    return [Point("queue_occupancy", (("queue_id", "0"), ("sw_id", str(i % 3))), {"value": i},
                  1000 + i) for i in range(start, start + count)]


def test_writer_retries_and_loses_nothing(influx: FakeInflux) -> None:
    influx.statuses = [500, 503, 500]
    clock = Time()
    writer = InfluxWriter(influx.url, "intdb", batch_points=4, retry_initial_s=1,
                          retry_max_s=3, now=clock)
    writer.write(points(10))  # the first request fails
    assert len(writer) == 10 and writer.stats.failed_requests == 1
    writer.flush()  # before the retry time: nothing is sent
    assert writer.stats.requests == 1
    clock.now = 1.0
    writer.flush()  # second failure; the wait doubles to 2 s
    clock.now = 2.5
    writer.flush()
    assert writer.stats.requests == 2
    clock.now = 3.0
    writer.flush()  # third failure, wait 3 s (the cap)
    writer.write(points(3, start=10))  # buffered behind the others
    clock.now = 5.9
    writer.flush()
    assert writer.stats.requests == 3 and len(writer) == 13
    clock.now = 6.0
    writer.flush()
    assert len(writer) == 0
    assert influx.lines == [encode_line(p) for p in points(13)]
    assert writer.stats.sent == 13 and writer.stats.failed_requests == 3
    assert writer.stats.requests == 3 + 4  # batches of 4, 4, 4, 1
    assert all(path == "/write?db=intdb&precision=ns" for path in influx.requests)


def test_writer_survives_a_server_that_is_down(influx: FakeInflux) -> None:
    clock = Time()
    url = influx.url
    influx.close()  # nothing listens: connections are refused
    writer = InfluxWriter(url, batch_points=100, retry_initial_s=0.5, now=clock)
    writer.write(points(5))
    assert writer.stats.failed_requests == 1 and len(writer) == 5
    again = FakeInflux()  # back, on another port: aim the writer there
    try:
        writer.endpoint = writer.endpoint.replace(url, again.url)
        clock.now = 0.5
        writer.flush()
        assert again.lines == [encode_line(p) for p in points(5)] and len(writer) == 0
    finally:
        again.close()


def test_writer_buffer_is_bounded_and_drops_the_oldest(influx: FakeInflux) -> None:
    influx.statuses = [500] * 3
    clock = Time()
    writer = InfluxWriter(influx.url, buffer_points=6, batch_points=100, retry_initial_s=1,
                          now=clock)
    writer.write(points(4))
    writer.write(points(4, start=4))  # failing still (retry time not reached): 8 > 6
    assert writer.stats.dropped == 2 and len(writer) == 6
    for step in range(1, 10):
        clock.now = step * 10.0
        writer.flush()
    assert influx.lines == [encode_line(p) for p in points(6, start=2)]
    assert writer.stats.sent == 6 and writer.stats.dropped == 2


def test_writer_drops_a_batch_influx_rejects(influx: FakeInflux) -> None:
    influx.statuses = [400]
    writer = InfluxWriter(influx.url, batch_points=2, now=Time())
    writer.write(points(5))
    assert writer.stats.rejected == 2 and writer.stats.sent == 3
    assert influx.lines == [encode_line(p) for p in points(5)[2:]]


def test_writer_refuses_a_bad_point_before_buffering(influx: FakeInflux) -> None:
    writer = InfluxWriter(influx.url, now=Time())
    with pytest.raises(ValueError):
        writer.write([*points(2), Point("m", (), {"v": float("nan")}, 0)])
    assert len(writer) == 0 and writer.stats.requests == 0


# --- SQLite ---------------------------------------------------------------------


def test_sqlite_writes_and_reads_a_series_back(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "int.db")
    series = [(1000 * i, 100 + i % 7) for i in range(50)]
    store.write([Point("flow_hop_latency", (("flow", "a"), ("sw_id", "1")), {"value": v}, t)
                 for t, v in series])
    store.write([Point("flow_hop_latency", (("flow", "a"), ("sw_id", "2")), {"value": 9}, 5)])
    store.write([Point("flow_path", (("flow", "a"),), {"value": "3,2,1"}, 7)])
    assert store.read("flow_hop_latency", {"flow": "a", "sw_id": "1"}) == series
    assert store.read("flow_hop_latency", {"flow": "a", "sw_id": "1"}, start_ns=2000,
                      end_ns=5000) == series[2:5]
    assert store.read("flow_path", {"flow": "a"}) == [(7, "3,2,1")]
    found = store.query("flow_hop_latency", {"flow": "a"})
    assert [s.tags["sw_id"] for s in found] == ["1", "2"]
    assert store.count() == 52 and store.count("flow_path") == 1
    assert store.measurements() == ["flow_hop_latency", "flow_path"]
    store.close()


def test_sqlite_is_wal_and_readable_while_open(tmp_path: Path) -> None:
    path = tmp_path / "int.db"
    store = SqliteStore(path)
    store.write(points(3))
    other = sqlite3.connect(path)
    try:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert other.execute("SELECT count(*) FROM points").fetchone()[0] == 3
    finally:
        other.close()
    store.close()


def test_sqlite_same_time_overwrites_and_reopening_keeps_series(tmp_path: Path) -> None:
    path = tmp_path / "int.db"
    store = SqliteStore(path)
    tags = (("queue_id", "0"), ("sw_id", "1"))
    store.write([Point("queue_occupancy", tags, {"value": 1}, 10)])
    store.write([Point("queue_occupancy", tags, {"value": 2}, 10)])
    store.close()
    store = SqliteStore(path)
    store.write([Point("queue_occupancy", tuple(reversed(tags)), {"value": 3}, 20)])
    assert store.read("queue_occupancy", dict(tags)) == [(10, 2), (20, 3)]
    assert len(store.query("queue_occupancy")) == 1
    store.close()


def test_sqlite_several_fields(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "int.db")
    store.write([Point("m", (("k", "v"),), {"a": 1, "b": 2.5, "c": "x"}, 1)])
    assert [store.read("m", {"k": "v"}, field) for field in "abc"] == [
        [(1, 1)], [(1, 2.5)], [(1, "x")]]
    store.close()


def test_memory_store_counts_writes() -> None:
    store = MemoryStore()
    store.write(points(2))
    store.write(points(1))
    assert store.writes == 2 and len(store.points) == 3
