"""INT-label's stores in Redis, for the live targets (the authors' mechanism).

``RedisAgingStore`` is an ``AgingStore`` on real Redis expiry: ``set`` is
``SET key ttl PX ttl`` plus a deadline in a sorted set, both in one Lua
script. Expiries arrive as keyevent notifications
(``__keyevent@<db>__:expired``, enabled by ``notify-keyspace-events Ex``)
on a listener thread. Redis may publish an expiry late (its active expiry
runs ``hz`` times a second) or not at all to a subscriber that is
reconnecting, so the sorted set is a backstop: ``sweep()`` expires every
member whose deadline passed. An expiry fires exactly once: whoever removes
the member from the sorted set (the event's claim, a sweep, or a ``set``
that finds the old deadline passed) is the one that calls the callbacks,
and each removal is a single Lua script, so an event and a sweep never both
win.

Deadlines and lags are taken on the Redis server's clock (``TIME`` inside
the scripts), the same clock that expires the keys; ``deadlines()``
translates them to the store's ``Clock``. Lag = when an expiry was claimed
minus its deadline: Redis's expiry delay plus delivery to this process.

Threads: callbacks run on the listener thread (events, periodic and
post-reconnect sweeps) or on the caller's (``sweep()``, ``set``). Pass the
app's ``lock`` (a ``threading.RLock``: ``set`` may fire callbacks while the
caller holds it) and every callback runs under it. A callback that raises
is logged and kept in ``errors``; it never stops the listener.

Key names: ``prefix`` + the encoded key; the sorted set is
``prefix + "#deadlines"``. Scripts touch keys derived from their arguments,
so the stores need a standalone Redis (not a cluster).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Hashable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from common.clock import Clock
from common.errors import IntbedError, InvalidValueError
from sinks.intlabel.aging import ExpireCallback
from sinks.intlabel.database import IntRecord, Key, UpdateListener
from sinks.intlabel.report import IntItem

log = logging.getLogger(__name__)

RedisSource = str | redis.Redis
# An expiry event's deadline may read up to this much (ms) after the
# claim's clock: the script's TIME and Redis's own PX arithmetic differ by
# microseconds. A real refresh moves a deadline by a whole TTL.
CLAIM_TOLERANCE_MS = 1.0
SWEEP_BATCH = 256
_LINK_ERRORS = (redis.ConnectionError, redis.TimeoutError, OSError)


class RedisStoreError(IntbedError):
    """Redis unreachable or not set up for INT-label's stores."""


# ------------------------------------------------------------------------------------- keys

_PAIR = re.compile(r"([^:#][^:]*):(\d+)")


def encode_key(key: Hashable) -> str:
    """``(switch, port)`` -> ``"switch:port"`` (switch an int or a name
    without ``:``); a string is kept as is unless it would read back as a
    pair or starts with ``#`` (reserved for the store's own keys)."""
    if isinstance(key, tuple):
        if len(key) == 2 and _is_uint(key[1]):
            sw = key[0]
            if _is_uint(sw) or (isinstance(sw, str) and sw and ":" not in sw
                                and not sw.startswith("#") and not sw.isdigit()):
                return f"{sw}:{key[1]}"
        raise TypeError(f"aging key tuple must be (switch, port), not {key!r}")
    if isinstance(key, str):
        if not key or key.startswith("#") or _PAIR.fullmatch(key):
            raise InvalidValueError(f"aging key {key!r} is ambiguous: use a (switch, port) tuple")
        return key
    raise TypeError(f"aging keys are strings or (switch, port) tuples, not {type(key).__name__}")


def decode_key(name: str) -> Hashable:
    """Inverse of ``encode_key``."""
    m = _PAIR.fullmatch(name)
    if m is None:
        return name
    sw, port = m.groups()
    return (int(sw) if sw.isdigit() else sw, int(port))


def _is_uint(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


# ---------------------------------------------------------------------------------- scripts

_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
"""

# KEYS: key, zset. ARGV: member, ttl ms. Returns the old deadline when it had
# passed unclaimed (that expiry is this call's to fire), else nil.
_SET = _NOW + """
local old = redis.call('ZSCORE', KEYS[2], ARGV[1])
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], string.format('%.3f', now + tonumber(ARGV[2])), ARGV[1])
if old and tonumber(old) <= now then return old end
return false
"""

# KEYS: key, zset. ARGV: member, ttl ms or '' (the key's last TTL, its value).
_TOUCH = """
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local ttl = ARGV[2]
if ttl == '' then ttl = v end
""" + _NOW + """
redis.call('SET', KEYS[1], ttl, 'PX', ttl)
redis.call('ZADD', KEYS[2], string.format('%.3f', now + tonumber(ttl)), ARGV[1])
return 1
"""

# KEYS: key, zset. ARGV: member.
_DELETE = """
local n = redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[1])
return n
"""

# KEYS: zset. ARGV: member, tolerance ms. An expiry event's claim: {deadline,
# now} if the member's deadline has passed (else the key was set again).
_CLAIM = """
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s then return false end
""" + _NOW + """
if tonumber(s) > now + tonumber(ARGV[2]) then return false end
redis.call('ZREM', KEYS[1], ARGV[1])
return {s, string.format('%.3f', now)}
"""

# KEYS: zset. ARGV: key prefix, grace ms, batch. Overdue members by deadline,
# removed with their keys: {member, deadline, ...}.
_SWEEP = _NOW + """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]),
                       'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[3]))
for i = 1, #due, 2 do
  redis.call('ZREM', KEYS[1], due[i])
  redis.call('DEL', ARGV[1] .. due[i])
end
return due
"""

# KEYS: zset. Returns {now, member, deadline, ...}.
_DEADLINES = _NOW + """
local out = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
table.insert(out, 1, string.format('%.3f', now))
return out
"""

# KEYS: zset. ARGV: key prefix.
_CLEAR = """
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, m in ipairs(members) do redis.call('DEL', ARGV[1] .. m) end
redis.call('DEL', KEYS[1])
return #members
"""


# ------------------------------------------------------------------------------ connections


def make_client(source: RedisSource, db: int | None = None) -> tuple[redis.Redis, bool]:
    """``(client, owned)``: a client from a URL (string replies) or the one given."""
    if isinstance(source, redis.Redis):
        return source, False
    kw: dict[str, Any] = {"decode_responses": True}
    if db is not None:
        kw["db"] = db
    try:
        return redis.Redis.from_url(source, **kw), True
    except ValueError as exc:
        raise RedisStoreError(f"invalid Redis URL {source!r}: {exc}") from None


def client_db(client: redis.Redis) -> int:
    return int(client.connection_pool.connection_kwargs.get("db", 0) or 0)


def ensure_expiry_events(client: redis.Redis) -> str:
    """Make Redis publish keyevent ``expired`` notifications (flags ``E`` and
    ``x``, or ``A``), keeping flags already set; returns the flags."""
    try:
        got = client.config_get("notify-keyspace-events")
    except _LINK_ERRORS as exc:
        raise RedisStoreError(f"cannot reach Redis: {exc}") from None
    flags = _str(next(iter(got.values()), ""))
    if "E" in flags and ("x" in flags or "A" in flags):
        return flags
    new = "".join(sorted(set(flags) | {"E", "x"}))
    try:
        client.config_set("notify-keyspace-events", new)
    except redis.ResponseError as exc:
        raise RedisStoreError("Redis does not publish key expiry events and refuses CONFIG "
                              f"SET ({exc}): configure notify-keyspace-events Ex") from None
    return new


def _str(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


# ------------------------------------------------------------------------------ aging store


@dataclass
class ExpiryStats:
    """How expiries were found. ``lag_s``: per event, claim time minus
    deadline (seconds, Redis clock): the Redis expiry lag to add to k T."""

    events: int = 0        # fired by a keyevent notification
    swept: int = 0         # fired by a sweep: the event was late or lost
    superseded: int = 0    # fired by a set() that found the deadline passed
    stale_events: int = 0  # notifications for expiries already fired or keys set again
    reconnects: int = 0
    listener_errors: int = 0
    lag_s: list[float] = field(default_factory=list)

    def lag_summary(self) -> dict[str, float]:
        """count, mean, p50, p99 and max of ``lag_s`` (zeros when empty)."""
        lags = sorted(self.lag_s)
        n = len(lags)
        if n == 0:
            return {"count": 0, "mean": 0.0, "p50": 0.0, "p99": 0.0, "max": 0.0}
        return {"count": n, "mean": sum(lags) / n, "p50": lags[(n - 1) // 2],
                "p99": lags[min(n - 1, round(0.99 * (n - 1)))], "max": lags[-1]}


class RedisAgingStore:
    """``AgingStore`` on Redis key expiry.

    ``source``: a Redis URL or client; ``db``: the database (default: the URL's
    or client's). ``poll_s``: how often the listener sweeps for members
    overdue by more than ``grace_s`` (None: never; the grace leaves the
    event path time to deliver, so ``lag_s`` measures Redis, not the
    sweep). ``listen=False`` subscribes to nothing: expiries then come from
    ``sweep()`` and ``set`` only. After a dropped subscription the listener
    waits ``reconnect_backoff_s`` (doubling up to ``max_backoff_s`` while
    Redis stays away), subscribes again, then sweeps with no grace.
    """

    __slots__ = ("client", "clock", "db", "prefix", "zset", "channel", "poll_s", "grace_s",
                 "reconnect_backoff_s", "max_backoff_s", "stats", "errors", "_owned",
                 "_guard", "_callbacks", "_mutex", "_stop", "_subscribed", "_thread",
                 "_set", "_touch", "_delete", "_claim", "_sweep_script", "_deadlines",
                 "_clear")

    def __init__(self, source: RedisSource, clock: Clock, *, db: int | None = None,
                 prefix: str = "intbed:age:", poll_s: float | None = 0.05,
                 grace_s: float = 0.05, listen: bool = True,
                 lock: AbstractContextManager[Any] | None = None,
                 reconnect_backoff_s: float = 0.05, max_backoff_s: float = 2.0,
                 subscribe_timeout_s: float = 5.0) -> None:
        self.client, self._owned = make_client(source, db)
        self.clock = clock
        self.db = client_db(self.client)
        self.prefix = prefix
        self.zset = prefix + "#deadlines"
        self.channel = f"__keyevent@{self.db}__:expired"
        self.poll_s = poll_s
        self.grace_s = grace_s
        self.reconnect_backoff_s = reconnect_backoff_s
        self.max_backoff_s = max_backoff_s
        self.stats = ExpiryStats()
        self.errors: list[BaseException] = []
        self._guard = lock if lock is not None else nullcontext()
        self._callbacks: list[ExpireCallback] = []
        self._mutex = threading.Lock()
        self._stop = threading.Event()
        self._subscribed = threading.Event()
        self._thread: threading.Thread | None = None
        reg = self.client.register_script
        self._set, self._touch, self._delete = reg(_SET), reg(_TOUCH), reg(_DELETE)
        self._claim, self._sweep_script = reg(_CLAIM), reg(_SWEEP)
        self._deadlines, self._clear = reg(_DEADLINES), reg(_CLEAR)
        if not listen:
            return
        ensure_expiry_events(self.client)
        self._thread = threading.Thread(target=self._listen_loop, daemon=True,
                                        name=f"intbed-redis-expiry:{prefix}")
        self._thread.start()
        if not self._subscribed.wait(subscribe_timeout_s):
            self.close()
            raise RedisStoreError(f"could not subscribe to {self.channel} "
                                  f"within {subscribe_timeout_s} s")

    # ------------------------------------------------------------ AgingStore

    def set(self, key: Hashable, ttl_s: float) -> None:
        member = encode_key(key)
        old = self._set(keys=[self.prefix + member, self.zset], args=[member, _ttl_ms(ttl_s)])
        if old is not None:
            with self._mutex:
                self.stats.superseded += 1
            self._fire([key])

    def touch(self, key: Hashable, ttl_s: float | None = None) -> bool:
        member = encode_key(key)
        ttl = "" if ttl_s is None else _ttl_ms(ttl_s)
        return bool(int(self._touch(keys=[self.prefix + member, self.zset], args=[member, ttl])))

    def delete(self, key: Hashable) -> bool:
        member = encode_key(key)
        return bool(int(self._delete(keys=[self.prefix + member, self.zset], args=[member])))

    def exists(self, key: Hashable) -> bool:
        return bool(self.client.exists(self.prefix + encode_key(key)))

    def ttl(self, key: Hashable) -> float | None:
        ms = int(self.client.pttl(self.prefix + encode_key(key)))
        return None if ms < 0 else ms / 1000.0

    def on_expire(self, callback: ExpireCallback) -> None:
        self._callbacks.append(callback)

    def deadlines(self) -> dict[Hashable, float]:
        out = [_str(v) for v in self._deadlines(keys=[self.zset])]
        base, server_now = self.clock.now(), float(out[0])
        return {decode_key(out[i]): base + (float(out[i + 1]) - server_now) / 1000.0
                for i in range(1, len(out), 2)}

    def sweep(self) -> list[Hashable]:
        return self._sweep(0.0)

    # ---------------------------------------------------------------- extras

    def __len__(self) -> int:
        return int(self.client.zcard(self.zset))

    def clear(self) -> int:
        """Remove every key of this store without notifications; the count."""
        return int(self._clear(keys=[self.zset], args=[self.prefix]))

    @property
    def subscribed(self) -> bool:
        return self._subscribed.is_set()

    def close(self) -> None:
        """Stop the listener (and close the client if the store made it)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        if self._owned:
            self.client.close()

    def __enter__(self) -> RedisAgingStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- inner

    def _fire(self, keys: list[Hashable]) -> None:
        with self._guard:
            for key in keys:
                for cb in tuple(self._callbacks):
                    try:
                        cb(key)
                    except Exception as exc:  # one failing callback must not stop the others
                        self.errors.append(exc)
                        log.exception("expiry callback %r failed for %r", cb, key)

    def _sweep(self, grace_s: float) -> list[Hashable]:
        fired: list[Hashable] = []
        while True:
            due = self._sweep_script(keys=[self.zset],
                                     args=[self.prefix, grace_s * 1000.0, SWEEP_BATCH])
            keys = [decode_key(_str(due[i])) for i in range(0, len(due), 2)]
            if keys:
                with self._mutex:
                    self.stats.swept += len(keys)
                self._fire(keys)
                fired.extend(keys)
            if len(keys) < SWEEP_BATCH:
                return fired

    def _on_event(self, name: str) -> None:
        if not name.startswith(self.prefix):
            return
        member = name[len(self.prefix):]
        got = self._claim(keys=[self.zset], args=[member, CLAIM_TOLERANCE_MS])
        if not got:
            with self._mutex:
                self.stats.stale_events += 1
            return
        lag = max(0.0, (float(_str(got[1])) - float(_str(got[0]))) / 1000.0)
        with self._mutex:
            self.stats.events += 1
            self.stats.lag_s.append(lag)
        self._fire([decode_key(member)])

    def _listen_loop(self) -> None:
        backoff = self.reconnect_backoff_s
        first = True
        while not self._stop.is_set():
            ps = conn = None
            try:
                ps = self.client.pubsub(ignore_subscribe_messages=True)
                ps.subscribe(self.channel)
                # redis-py would reconnect and resubscribe silently; the store
                # must see the drop to sweep for the events missed meanwhile.
                conn, retry = ps.connection, ps.connection.retry
                conn.retry = Retry(NoBackoff(), 0)
                self._subscribed.set()
                if not first:
                    with self._mutex:
                        self.stats.reconnects += 1
                    self._sweep(0.0)
                first = False
                backoff = self.reconnect_backoff_s
                self._listen(ps)
            except (redis.RedisError, OSError) as exc:
                self._subscribed.clear()
                with self._mutex:
                    self.stats.listener_errors += 1
                log.warning("Redis expiry subscription lost (%s); retrying in %.2f s",
                            exc, backoff)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, self.max_backoff_s)
            finally:
                if conn is not None:
                    conn.retry = retry  # the connection goes back to the client's pool
                if ps is not None:
                    _close_quietly(ps)
        self._subscribed.clear()

    def _listen(self, ps: redis.client.PubSub) -> None:
        poll = self.poll_s
        next_sweep = time.monotonic() + poll if poll else float("inf")
        while not self._stop.is_set():
            wait = min(0.1, max(0.0, next_sweep - time.monotonic()))
            msg = ps.get_message(timeout=wait)
            if msg is not None and msg.get("type") == "message":
                self._on_event(_str(msg["data"]))
            if poll and time.monotonic() >= next_sweep:
                self._sweep(self.grace_s)
                next_sweep = time.monotonic() + poll


def _ttl_ms(ttl_s: float) -> int:
    """Redis PX takes whole milliseconds; a positive TTL is at least 1 ms."""
    if not ttl_s > 0:
        raise InvalidValueError(f"TTL must be positive, not {ttl_s}")
    return max(1, round(ttl_s * 1000.0))


def _close_quietly(ps: redis.client.PubSub) -> None:
    try:
        ps.close()
    except Exception:  # the connection is already gone
        pass


# ------------------------------------------------------------------------------ INT database

# KEYS: hash, index set. ARGV: label time, hop latency, enq depth, deq depth,
# ingress port, arrival, member. Algorithm 4 lines 11-17: replace only with
# a later label time (48-bit µs: exact in Lua's doubles).
_UPDATE = """
local rt = redis.call('HGET', KEYS[1], 'label_time')
if rt and tonumber(rt) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'label_time', ARGV[1], 'hop_latency', ARGV[2],
           'enq_qdepth', ARGV[3], 'deq_qdepth', ARGV[4], 'ingress_port', ARGV[5],
           'arrival_s', ARGV[6])
redis.call('SADD', KEYS[2], ARGV[7])
return 1
"""

# KEYS: index set. ARGV: prefix.
_DB_CLEAR = """
local members = redis.call('SMEMBERS', KEYS[1])
for _, m in ipairs(members) do redis.call('DEL', ARGV[1] .. m) end
redis.call('DEL', KEYS[1])
return #members
"""


class RedisIntDatabase:
    """``IntDatabase`` in Redis: one hash per ``prefix + "switch:port"``
    and the set ``prefix + "#keys"`` of ports seen; Algorithm 4's
    compare-and-replace is one Lua script, so controllers sharing the
    database agree on each port's newest label.

    Listeners and the arrival log are this process's (as in
    ``MemoryIntDatabase``: ``log_times``, ``log_keys``, ``log_accepted``).
    Listeners run under ``lock`` when one is given. ``update`` is meant to
    be called from one thread (the collector's).
    """

    __slots__ = ("client", "prefix", "index", "keep_log", "log_times", "log_keys",
                 "log_accepted", "arrived", "accepted", "_owned", "_guard", "_listeners",
                 "_update", "_clear")

    def __init__(self, source: RedisSource, *, db: int | None = None,
                 prefix: str = "intbed:int:", keep_log: bool = True,
                 lock: AbstractContextManager[Any] | None = None) -> None:
        self.client, self._owned = make_client(source, db)
        self.prefix = prefix
        self.index = prefix + "#keys"
        self.keep_log = keep_log
        self.log_times: list[float] = []
        self.log_keys: list[Key] = []
        self.log_accepted: list[bool] = []
        self.arrived = 0
        self.accepted = 0
        self._guard = lock if lock is not None else nullcontext()
        self._listeners: list[UpdateListener] = []
        self._update = self.client.register_script(_UPDATE)
        self._clear = self.client.register_script(_DB_CLEAR)

    def update(self, item: IntItem, arrival_s: float) -> bool:
        return self.update_many([(item, arrival_s)])[0]

    def update_many(self, batch: list[tuple[IntItem, float]]) -> list[bool]:
        """Algorithm 4 for each (item, arrival) in order, as one pipeline:
        one round trip however many items (Pro labelling every packet sends
        thousands a second)."""
        if len(batch) == 1:
            item, arrival_s = batch[0]
            results = [self._update(keys=self._keys(item), args=self._args(item, arrival_s))]
        else:
            pipe = self.client.pipeline(transaction=False)
            for item, arrival_s in batch:
                self._update(keys=self._keys(item), args=self._args(item, arrival_s),
                             client=pipe)
            results = pipe.execute()
        out = []
        for (item, arrival_s), got in zip(batch, results):
            ok = bool(int(got))
            out.append(ok)
            key = (item.switch_id, item.egress_port)
            self.arrived += 1
            if self.keep_log:
                self.log_times.append(arrival_s)
                self.log_keys.append(key)
                self.log_accepted.append(ok)
            if not ok:
                continue
            self.accepted += 1
            if self._listeners:
                rec = IntRecord(item.label_time, item.hop_latency, item.enq_qdepth,
                                item.deq_qdepth, item.ingress_port, arrival_s)
                with self._guard:
                    for listener in self._listeners:
                        listener(key, rec)
        return out

    def _keys(self, item: IntItem) -> list[str]:
        return [f"{self.prefix}{item.switch_id}:{item.egress_port}", self.index]

    @staticmethod
    def _args(item: IntItem, arrival_s: float) -> list[Any]:
        return [item.label_time, item.hop_latency, item.enq_qdepth, item.deq_qdepth,
                item.ingress_port, repr(float(arrival_s)), f"{item.switch_id}:{item.egress_port}"]

    def get(self, key: Key) -> IntRecord | None:
        h = self.client.hgetall(f"{self.prefix}{key[0]}:{key[1]}")
        if not h:
            return None
        f = {_str(k): _str(v) for k, v in h.items()}
        return IntRecord(int(f["label_time"]), int(f["hop_latency"]), int(f["enq_qdepth"]),
                         int(f["deq_qdepth"]), int(f["ingress_port"]), float(f["arrival_s"]))

    def keys(self) -> list[Key]:
        """Every port with an entry, sorted."""
        out = []
        for m in self.client.smembers(self.index):
            sw, port = _str(m).split(":")
            out.append((int(sw), int(port)))
        return sorted(out)

    def on_update(self, listener: UpdateListener) -> None:
        self._listeners.append(listener)

    def arrivals(self) -> Iterator[tuple[float, Key, bool]]:
        """``(arrival_s, key, accepted)`` per logged item, in arrival order."""
        return zip(self.log_times, self.log_keys, self.log_accepted)

    def __len__(self) -> int:
        return int(self.client.scard(self.index))

    def __contains__(self, key: object) -> bool:
        if not (isinstance(key, tuple) and len(key) == 2):
            return False
        return bool(self.client.sismember(self.index, f"{key[0]}:{key[1]}"))

    def clear(self) -> int:
        """Remove every entry (a new run); the count removed."""
        return int(self._clear(keys=[self.index], args=[self.prefix]))

    def close(self) -> None:
        if self._owned:
            self.client.close()
