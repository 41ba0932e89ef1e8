"""INT-label's Redis stores on a private redis-server, on the wall clock.

The server is started once for the module by ``orchestration.redis_server``; the
tests that need it are skipped, with that reason, only when the
``redis-server`` binary is missing. TTLs are 50-200 ms; upper bounds on
timings leave room for a loaded machine, lower bounds are exact (Redis
never expires a key before its deadline).
"""

from __future__ import annotations

import itertools
import os
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterator
from typing import Any

import pytest
import redis

from common.errors import IntbedError
from common.wallclock import WallClock
from controller.intlabel.pro import LABEL_ALL_SHIFT, ProLoop
from orchestration.redis_server import (
    INSTALL_HINT,
    RedisServer,
    RedisServerError,
    connect,
    free_port,
    redis_available,
)
from sinks.intlabel.database import IntRecord, MemoryIntDatabase
from sinks.intlabel.redis_store import (
    RedisAgingStore,
    RedisIntDatabase,
    decode_key,
    encode_key,
)
from sinks.intlabel.report import IntItem

SKIP_REASON = "redis-server not installed: run make install as root"
SLACK = 0.15  # scheduling allowance on a busy machine (seconds)
_ids = itertools.count()


@pytest.fixture(scope="module")
def server() -> Iterator[RedisServer]:
    if redis_available() is None:
        pytest.skip(SKIP_REASON)
    with RedisServer() as srv:
        yield srv


@pytest.fixture()
def rc(server: RedisServer) -> redis.Redis:
    return server.client()


@pytest.fixture()
def clock() -> Iterator[WallClock]:
    with WallClock() as c:
        yield c


@pytest.fixture()
def stores(server: RedisServer, clock: WallClock) -> Iterator[Callable[..., RedisAgingStore]]:
    """Makes aging stores with a prefix of their own; closes them after the test."""
    made: list[RedisAgingStore] = []

    def make(prefix: str | None = None, **kw: Any) -> RedisAgingStore:
        p = prefix or f"t{next(_ids)}:age:"
        s = RedisAgingStore(server.url, kw.pop("clock", clock), prefix=p, **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def recorder(store: RedisAgingStore, clock: WallClock) -> list[tuple[Hashable, float]]:
    out: list[tuple[Hashable, float]] = []
    store.on_expire(lambda key: out.append((key, clock.now())))
    return out


def wait_for(cond: Callable[[], bool], timeout: float = 2.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.005)
    return cond()


# ------------------------------------------------------------------------------ the server


def test_server_runs_with_the_stores_configuration(server: RedisServer, rc: redis.Redis) -> None:
    assert server.url == f"redis://127.0.0.1:{server.port}/0"
    assert rc.ping() is True
    assert set(rc.config_get("notify-keyspace-events")["notify-keyspace-events"]) == {"E", "x"}
    assert rc.config_get("hz") == {"hz": "100"}
    assert rc.config_get("save") == {"save": ""}
    assert rc.config_get("appendonly") == {"appendonly": "no"}
    assert rc.config_get("bind") == {"bind": "127.0.0.1"}


def test_stop_removes_the_process_and_its_files(server: RedisServer) -> None:
    srv = RedisServer(hz=10).start()
    proc, d, port = srv.proc, srv.dir, srv.port
    assert proc is not None and d is not None and port is not None
    assert sorted(p.name for p in d.iterdir()) == ["redis.conf", "redis.log", "redis.out"]
    assert connect(srv.url).config_get("hz") == {"hz": "10"}
    srv.stop()
    assert proc.returncode == 0  # SIGTERM: a clean shutdown, nothing saved
    assert not d.exists() and not srv.running
    with pytest.raises(RedisServerError, match="not running"):
        _ = srv.url
    srv.stop()  # twice is harmless


def test_busy_port_is_a_clear_error(server: RedisServer) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(RedisServerError) as exc:
            RedisServer(port=port).start()
    assert str(exc.value) == f"error: port {port} on 127.0.0.1 is busy: cannot start redis-server"
    # The server's own port, taken by the running server, is refused the same way.
    with pytest.raises(RedisServerError, match=f"port {server.port} on 127.0.0.1 is busy"):
        RedisServer(port=server.port).start()


def test_missing_binary_names_the_debian_package(tmp_path: Any) -> None:
    with pytest.raises(IntbedError) as exc:
        RedisServer(binary=str(tmp_path / "redis-server"), dir=tmp_path).start()
    assert str(exc.value) == f"error: redis-server not found: {INSTALL_HINT}"
    assert list(tmp_path.iterdir()) == []  # nothing created


def test_connect_refuses_a_dead_or_malformed_url() -> None:
    port = free_port()
    t0 = time.monotonic()
    with pytest.raises(RedisServerError, match=f"cannot reach Redis at redis://127.0.0.1:{port}"):
        connect(f"redis://127.0.0.1:{port}/0")
    assert time.monotonic() - t0 < 1.0  # no retries on the check
    with pytest.raises(RedisServerError, match="invalid Redis URL 'http://x'"):
        connect("http://x")


# ------------------------------------------------------------------------------------ keys


def test_keys_round_trip() -> None:
    assert encode_key((7, 2)) == "7:2" and decode_key("7:2") == (7, 2)
    assert encode_key(("s1", 3)) == "s1:3" and decode_key("s1:3") == ("s1", 3)
    # ProLoop's own keys are plain strings and read back unchanged.
    assert encode_key("aging:7:2") == "aging:7:2" and decode_key("aging:7:2") == "aging:7:2"
    for bad in ("7:2", "s1:3", "#deadlines", ""):
        with pytest.raises(ValueError):
            encode_key(bad)
    for bad_key in ((1, 2, 3), ("a:b", 1), ("12", 1), (1, -1), (True, 1), 5):
        with pytest.raises(TypeError):
            encode_key(bad_key)


# ---------------------------------------------------------------------------- aging store


def test_set_touch_delete_ttl_exists(stores: Callable[..., RedisAgingStore], rc: redis.Redis,
                                     clock: WallClock) -> None:
    st = stores(listen=False)
    fired = recorder(st, clock)
    st.set((1, 2), 0.2)
    assert st.exists((1, 2)) and not st.exists((1, 3))
    assert rc.get(st.prefix + "1:2") == "200"  # the value is the TTL in ms: touch reuses it
    assert 0.15 < st.ttl((1, 2)) <= 0.2 and st.ttl((1, 3)) is None
    (key, deadline), = st.deadlines().items()
    assert key == (1, 2) and abs(deadline - (clock.now() + st.ttl((1, 2)))) < 0.01
    time.sleep(0.05)
    assert st.touch((1, 2)) is True and st.ttl((1, 2)) > 0.18
    assert st.touch((1, 2), 0.5) is True and 0.45 < st.ttl((1, 2)) <= 0.5
    assert rc.get(st.prefix + "1:2") == "500"
    assert st.touch((1, 3)) is False and not st.exists((1, 3))
    assert len(st) == 1
    assert st.delete((1, 2)) is True and st.delete((1, 2)) is False
    assert not st.exists((1, 2)) and len(st) == 0 and st.deadlines() == {}
    assert st.sweep() == [] and fired == []
    with pytest.raises(ValueError, match="TTL must be positive"):
        st.set((1, 2), 0)


def test_expiry_callback_after_the_ttl(stores: Callable[..., RedisAgingStore],
                                       clock: WallClock) -> None:
    st = stores(poll_s=None)
    fired = recorder(st, clock)
    t0 = clock.now()
    st.set((3, 4), 0.1)
    st.set("aging:3:5", 0.05)
    assert wait_for(lambda: len(fired) == 2)
    assert [k for k, _ in fired] == ["aging:3:5", (3, 4)]
    assert 0.05 <= fired[0][1] - t0 <= 0.05 + SLACK
    assert 0.1 <= fired[1][1] - t0 <= 0.1 + SLACK
    assert (st.stats.events, st.stats.swept, st.stats.superseded) == (2, 0, 0)
    assert len(st.stats.lag_s) == 2 and all(0 <= lag < 0.1 for lag in st.stats.lag_s)
    summary = st.stats.lag_summary()
    assert summary["count"] == 2 and summary["max"] == max(st.stats.lag_s)
    assert not st.exists((3, 4)) and len(st) == 0 and st.errors == []


def test_touch_postpones_the_expiry(stores: Callable[..., RedisAgingStore],
                                    clock: WallClock) -> None:
    st = stores(poll_s=None)
    fired = recorder(st, clock)
    t0 = clock.now()
    st.set((5, 1), 0.1)
    time.sleep(0.06)
    assert st.touch((5, 1))
    assert wait_for(lambda: fired != [])
    assert fired[0][0] == (5, 1) and fired[0][1] - t0 >= 0.16
    time.sleep(0.05)
    assert len(fired) == 1


def test_sweep_fires_an_expiry_whose_event_was_lost(stores: Callable[..., RedisAgingStore],
                                                    clock: WallClock) -> None:
    st = stores(listen=False)  # subscribed to nothing: every event is lost
    fired = recorder(st, clock)
    st.set((2, 1), 0.05)
    st.set((2, 2), 0.08)
    st.set((2, 3), 5.0)
    time.sleep(0.12)
    assert fired == [] and not st.exists((2, 1))
    assert st.sweep() == [(2, 1), (2, 2)]  # by deadline
    assert [k for k, _ in fired] == [(2, 1), (2, 2)]
    assert st.sweep() == [] and len(fired) == 2 and st.stats.swept == 2
    assert list(st.deadlines()) == [(2, 3)]


def test_set_after_a_passed_deadline_fires_that_expiry_once(
        stores: Callable[..., RedisAgingStore], clock: WallClock) -> None:
    st = stores(listen=False)
    fired = recorder(st, clock)
    st.set((4, 4), 0.05)
    time.sleep(0.08)
    st.set((4, 4), 0.05)  # the old deadline passed unclaimed: this set fires it
    assert [k for k, _ in fired] == [(4, 4)] and st.stats.superseded == 1
    assert st.exists((4, 4)) and st.sweep() == []
    time.sleep(0.08)
    assert st.sweep() == [(4, 4)] and len(fired) == 2


def test_resubscribes_after_the_pubsub_connection_is_killed(
        stores: Callable[..., RedisAgingStore], rc: redis.Redis, clock: WallClock) -> None:
    st = stores(poll_s=None, reconnect_backoff_s=0.3)
    fired = recorder(st, clock)
    st.set((6, 1), 0.05)
    assert rc.client_kill_filter(_type="pubsub") >= 1
    # The key expires while the listener waits to reconnect: its event goes
    # nowhere, and the sweep after resubscribing fires it.
    assert wait_for(lambda: fired != [], timeout=3.0)
    assert [k for k, _ in fired] == [(6, 1)]
    s = st.stats
    assert (s.events, s.swept, s.reconnects) == (0, 1, 1) and s.listener_errors >= 1
    assert st.subscribed
    st.set((6, 2), 0.05)  # and events flow again
    assert wait_for(lambda: len(fired) == 2)
    assert fired[1][0] == (6, 2) and st.stats.events == 1


def test_resubscribes_after_the_server_restarts(stores: Callable[..., RedisAgingStore],
                                                clock: WallClock, tmp_path: Any) -> None:
    port = free_port()
    srv = RedisServer(port=port, dir=tmp_path).start()
    try:
        st = RedisAgingStore(srv.url, clock, prefix="restart:", poll_s=None,
                             reconnect_backoff_s=0.05, max_backoff_s=0.2)
        fired = recorder(st, clock)
        srv.stop()
        assert wait_for(lambda: not st.subscribed)
        srv = RedisServer(port=port, dir=tmp_path).start()
        assert wait_for(lambda: st.subscribed, timeout=5.0)
        assert st.stats.reconnects == 1
        st.set((8, 1), 0.05)
        assert wait_for(lambda: fired != [])
        assert fired[0][0] == (8, 1) and st.stats.events == 1
        st.close()
    finally:
        srv.stop()


def test_an_expiry_fires_once_when_sweeps_race_the_events(
        stores: Callable[..., RedisAgingStore], clock: WallClock) -> None:
    lock = threading.RLock()
    a = stores(poll_s=None, lock=lock)
    b = stores(prefix=a.prefix, poll_s=None, lock=lock)  # a second controller, same keys
    counts: Counter[Hashable] = Counter()
    a.on_expire(lambda k: counts.update([k]))
    b.on_expire(lambda k: counts.update([k]))
    keys = [(9, p) for p in range(100)]
    for k in keys:
        a.set(k, 0.05)
    stop = threading.Event()

    def sweeper(st: RedisAgingStore) -> None:
        while not stop.is_set():
            st.sweep()

    threads = [threading.Thread(target=sweeper, args=(s,)) for s in (a, b, a, b)]
    for t in threads:
        t.start()
    try:
        assert wait_for(lambda: sum(counts.values()) >= 100)
        time.sleep(0.1)  # late events must find nothing left to fire
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert counts == Counter({k: 1 for k in keys})
    fired = sum(s.stats.events + s.stats.swept for s in (a, b))
    assert fired == 100 and a.errors == b.errors == []


# ---------------------------------------------------------------------------- INT database


def item(switch: int, port: int, label_time: int, latency: int = 0) -> IntItem:
    return IntItem(switch, 1, port, label_time - 3, label_time, latency, 2, 1, False)


def test_algorithm_4_in_redis(server: RedisServer) -> None:
    prefix = f"t{next(_ids)}:int:"
    db = RedisIntDatabase(server.url, prefix=prefix)
    seen: list[tuple[tuple[int, int], int]] = []
    db.on_update(lambda key, rec: seen.append((key, rec.label_time)))
    big = (1 << 48) - 5  # 48-bit label times compare exactly in the script
    assert db.update(item(1, 2, 1000, latency=10), 0.010) is True   # new key
    assert db.update(item(1, 2, 3000, latency=30), 0.011) is True   # newer
    assert db.update(item(1, 2, 2000, latency=20), 0.012) is False  # late arrival, older
    assert db.update(item(1, 2, 3000, latency=99), 0.013) is False  # same time: not newer
    assert db.update(item(1, 3, 500), 0.014) is True
    assert db.update(item(2, 1, big), 0.015) is True
    assert db.update(item(2, 1, big - 1), 0.016) is False
    assert db.get((1, 2)) == IntRecord(3000, 30, 2, 1, 1, 0.011)
    assert db.get((2, 1)) == IntRecord(big, 0, 2, 1, 1, 0.015) and db.get((5, 5)) is None
    assert db.keys() == [(1, 2), (1, 3), (2, 1)] and len(db) == 3 and (1, 3) in db
    assert (db.arrived, db.accepted) == (7, 4)
    assert seen == [((1, 2), 1000), ((1, 2), 3000), ((1, 3), 500), ((2, 1), big)]
    assert [a for _, _, a in db.arrivals()] == [True, True, False, False, True, True, False]
    # A second controller on the same keys obeys the first one's label times.
    other = RedisIntDatabase(server.url, prefix=prefix, keep_log=False)
    assert other.get((1, 2)) == IntRecord(3000, 30, 2, 1, 1, 0.011)
    assert other.update(item(1, 2, 2500), 0.02) is False
    assert other.update(item(1, 2, 3500, latency=35), 0.021) is True
    assert db.get((1, 2)) == IntRecord(3500, 35, 2, 1, 1, 0.021)
    assert list(other.arrivals()) == []
    assert db.clear() == 3 and db.keys() == [] and db.get((1, 2)) is None
    db.close()
    other.close()


# ------------------------------------------------------------------------------- wall clock


def test_wall_clock_runs_callbacks_in_due_order() -> None:
    order: list[str] = []
    lock = threading.RLock()
    with WallClock(lock=lock) as c:
        t0 = c.now()
        c.call_later(0.06, order.append, "c")
        c.call_later(0.02, order.append, "a")
        c.call_later(0.02, order.append, "b")  # a tie runs in call order
        c.call_later(0.01, lambda: 1 / 0)       # a failing callback is recorded
        assert wait_for(lambda: len(order) == 3)
        assert order == ["a", "b", "c"] and c.now() - t0 >= 0.06
        assert len(c.errors) == 1 and isinstance(c.errors[0], ZeroDivisionError)
        c.call_later(10.0, order.append, "never")
        assert c.pending() == 1
    assert c.pending() == 0
    c.call_later(0.0, order.append, "x")  # after close: dropped
    time.sleep(0.02)
    assert order == ["a", "b", "c"] and c.pending() == 0


# --------------------------------------------------------------------------- the Pro loop


class FakeClient:
    """Records P4Runtime MODIFYs of the shift table (the client is its only
    table) with the clock's time."""

    def __init__(self, device_id: int, clock: WallClock) -> None:
        self.device_id = device_id
        self.clock = clock
        self.writes: list[tuple[float, int, int]] = []
        self.tables = {"MyEgress.port_shift": self}

    def modify(self, match, action, params=None, priority=None):  # type: ignore[no-untyped-def]
        assert action == "MyEgress.set_shift"
        self.writes.append((self.clock.now(), match["standard_metadata.egress_port"],
                            params["s"]))

    def insert(self, match, action, params=None, priority=None):  # type: ignore[no-untyped-def]
        raise AssertionError("the entries exist")


T, K = 0.05, 2.0  # k T = 100 ms


def test_pro_raises_s_on_a_silent_port_within_kt(server: RedisServer,
                                                 stores: Callable[..., RedisAgingStore]) -> None:
    lock = threading.RLock()
    with WallClock(lock=lock) as clock:
        store = stores(clock=clock, lock=lock)
        db = RedisIntDatabase(server.url, prefix=f"t{next(_ids)}:int:", lock=lock)
        client = FakeClient(7, clock)
        pro = ProLoop({"s1": client}, db, store, clock, T_s=T, k=K, ports=[("s1", 2), ("s1", 3)])
        with lock:
            t0 = clock.now()
            pro.start()
        # Port 3 is updated every 30 ms; port 2 never.
        end = time.monotonic() + 0.45
        while time.monotonic() < end:
            db.update(item(7, 3, round(clock.now() * 1e6)), clock.now())
            time.sleep(0.03)
        with lock:
            pro.stop()
    lag = store.stats.lag_summary()["max"]
    assert client.writes, "S was never raised"
    assert {p for _, p, _ in client.writes} == {2}
    first_t, _, first_s = client.writes[0]
    # Not before k T, and at the loop's first check after it.
    assert K * T <= first_t - t0 <= K * T + T + lag + SLACK
    assert first_s == 1
    assert [s for _, _, s in client.writes] == list(range(1, len(client.writes) + 1))
    assert clock.errors == [] and store.errors == []
    db.close()


def test_pro_flag_style_follows_redis_expiry_events(stores: Callable[..., RedisAgingStore]) -> None:
    lock = threading.RLock()
    with WallClock(lock=lock) as clock:
        store = stores(clock=clock, lock=lock)
        client = FakeClient(7, clock)
        pro = ProLoop({"s1": client}, MemoryIntDatabase(), store, clock, T_s=T, k=K,
                      ports=[("s1", 4)], style="flag", restore_factor=2.0)
        with lock:
            t0 = clock.now()
            pro.start()
        assert wait_for(lambda: len(client.writes) == 2, timeout=3.0)
        with lock:
            pro.stop()
    (t_flag, port, s_flag), (t_back, _, s_back) = client.writes
    lags = store.stats.lag_s
    assert (port, s_flag, s_back) == (4, LABEL_ALL_SHIFT, 0)
    assert store.stats.events == 2 and len(lags) == 2  # both by keyevent, none by sweep
    # Raised by the aging key's expiry: k T plus the measured Redis expiry lag.
    assert K * T <= t_flag - t0 <= K * T + lags[0] + SLACK
    # Restored when the restore key (2 x k T, armed at the flag) expires.
    assert 2 * K * T <= t_back - t_flag <= 2 * K * T + lags[1] + SLACK
    assert pro.shift("s1", 4) == 0 and store.errors == []


def test_store_survives_a_failing_callback(stores: Callable[..., RedisAgingStore],
                                           clock: WallClock) -> None:
    st = stores(poll_s=None)
    fired = recorder(st, clock)
    st.on_expire(lambda k: 1 / 0)
    st.set((1, 1), 0.05)
    assert wait_for(lambda: len(st.errors) == 1)
    st.set((1, 2), 0.05)
    assert wait_for(lambda: len(fired) == 2) and isinstance(st.errors[0], ZeroDivisionError)


def test_no_redis_server_left_behind(server: RedisServer) -> None:
    """Every server a test started and stopped is gone (the module's own excepted)."""
    assert server.proc is not None
    mine = server.proc.pid
    for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv0 = f.read().split(b"\0")[0]
        except OSError:
            continue
        if ppid == os.getpid() and argv0.endswith(b"redis-server"):
            assert pid == mine
