"""The aging database (paper section 5, Fig. 5): keys that expire.

A key set with a time to live (TTL) disappears once the TTL passes without
a refresh, and every ``on_expire`` callback is then called with it. This is
Redis's ``SET key PX ttl`` with keyspace notifications (``Ex``), the
authors' mechanism; Redis may deliver an expiry late or lose it over a
reconnect, so a store also exposes its deadlines and ``sweep()``, which
expires whatever is overdue (the live store keeps a sorted set of deadlines
for that). ``MemoryAgingStore`` is the ``sim`` target's store, in virtual time.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable
from typing import Protocol

from common.clock import Clock
from common.errors import InvalidValueError

ExpireCallback = Callable[[Hashable], None]
# Deadlines are float seconds; the simulator rounds delays to whole
# nanoseconds, so a timer may fire up to half a nanosecond before its
# deadline: within this margin the deadline counts as reached.
EPSILON_S = 0.75e-9


class AgingStore(Protocol):
    def set(self, key: Hashable, ttl_s: float) -> None:
        """Create or refresh ``key`` to expire ``ttl_s`` from now."""
        ...

    def touch(self, key: Hashable, ttl_s: float | None = None) -> bool:
        """Refresh an existing key (with its last TTL unless given); False
        if the key does not exist."""
        ...

    def delete(self, key: Hashable) -> bool:
        """Remove ``key`` without an expiry notification."""
        ...

    def exists(self, key: Hashable) -> bool: ...

    def ttl(self, key: Hashable) -> float | None:
        """Seconds left, or None for a missing key."""
        ...

    def on_expire(self, callback: ExpireCallback) -> None: ...

    def deadlines(self) -> dict[Hashable, float]:
        """Every live key's expiry time (clock seconds): the backstop view."""
        ...

    def sweep(self) -> list[Hashable]:
        """Expire every overdue key now (with notifications); the keys, by deadline."""
        ...


class _Entry:
    __slots__ = ("deadline", "ttl", "gen", "timer_at")

    def __init__(self, deadline: float, ttl: float, gen: int) -> None:
        self.deadline = deadline
        self.ttl = ttl
        self.gen = gen
        self.timer_at = deadline


class MemoryAgingStore:
    """Expiring keys on a ``Clock``.

    A clock's ``call_later`` cannot be cancelled, so each key holds a
    generation number and at most one live timer: a timer whose generation
    is not the key's current one is stale and does nothing. A refresh only
    moves the deadline; when the timer fires before it, it re-arms for the
    remainder. A shorter TTL, or a key deleted and set again, takes a new
    generation and a new timer. So a key refreshed on every packet costs one
    timer per TTL, not one per refresh.
    """

    __slots__ = ("clock", "_entries", "_callbacks", "_gen", "expired")

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._entries: dict[Hashable, _Entry] = {}
        self._callbacks: list[ExpireCallback] = []
        self._gen = itertools.count(1)
        self.expired = 0

    def set(self, key: Hashable, ttl_s: float) -> None:
        if ttl_s <= 0:
            raise InvalidValueError(f"TTL must be positive, not {ttl_s}")
        deadline = self.clock.now() + ttl_s
        e = self._entries.get(key)
        if e is None:
            e = self._entries[key] = _Entry(deadline, ttl_s, next(self._gen))
            self.clock.call_later(ttl_s, self._fire, key, e.gen)
            return
        e.deadline = deadline
        e.ttl = ttl_s
        if deadline < e.timer_at - EPSILON_S:
            e.gen = next(self._gen)
            e.timer_at = deadline
            self.clock.call_later(ttl_s, self._fire, key, e.gen)

    def touch(self, key: Hashable, ttl_s: float | None = None) -> bool:
        e = self._entries.get(key)
        if e is None or not self._alive(e):
            return False
        self.set(key, e.ttl if ttl_s is None else ttl_s)
        return True

    def delete(self, key: Hashable) -> bool:
        return self._entries.pop(key, None) is not None

    def exists(self, key: Hashable) -> bool:
        e = self._entries.get(key)
        return e is not None and self._alive(e)

    def ttl(self, key: Hashable) -> float | None:
        e = self._entries.get(key)
        if e is None or not self._alive(e):
            return None
        return e.deadline - self.clock.now()

    def on_expire(self, callback: ExpireCallback) -> None:
        self._callbacks.append(callback)

    def deadlines(self) -> dict[Hashable, float]:
        return {k: e.deadline for k, e in self._entries.items()}

    def sweep(self) -> list[Hashable]:
        now = self.clock.now()
        due = sorted(((e.deadline, i, k) for i, (k, e) in enumerate(self._entries.items())
                      if e.deadline <= now + EPSILON_S), key=lambda t: (t[0], t[1]))
        for _, _, key in due:
            self._expire(key)
        return [k for _, _, k in due]

    def __len__(self) -> int:
        return len(self._entries)

    # ---------------------------------------------------------------- inner

    def _alive(self, e: _Entry) -> bool:
        return e.deadline > self.clock.now() + EPSILON_S

    def _fire(self, key: Hashable, gen: int) -> None:
        e = self._entries.get(key)
        if e is None or e.gen != gen:
            return  # deleted, or superseded by a newer timer
        left = e.deadline - self.clock.now()
        if left > EPSILON_S:
            e.timer_at = e.deadline
            self.clock.call_later(left, self._fire, key, gen)
            return
        self._expire(key)

    def _expire(self, key: Hashable) -> None:
        del self._entries[key]
        self.expired += 1
        for cb in self._callbacks:
            cb(key)


class LateExpiries:
    """``store`` with its expiries reaching the callbacks ``lag()`` seconds
    after the deadline, as they reach the Pro loop from the live target's
    Redis store (Redis's own expiry, the key-event's delivery, the backstop
    sweep): the key is gone at its deadline (``exists`` is False, as Redis's
    EXISTS answers), only the notification is late. A ``set`` of a key whose
    expiry is still on its way delivers that expiry first and a ``delete``
    drops it, as ``RedisAgingStore`` claims an overdue member; ``sweep``
    delivers every expiry due by now."""

    __slots__ = ("_store", "_clock", "_lag", "_callbacks", "_pending", "_tokens", "_now")

    def __init__(self, store: AgingStore, clock: Clock, lag: Callable[[], float]) -> None:
        self._store = store
        self._clock = clock
        self._lag = lag
        self._callbacks: list[ExpireCallback] = []
        self._pending: dict[Hashable, int] = {}
        self._tokens = itertools.count(1)
        self._now = False
        store.on_expire(self._expired)

    def set(self, key: Hashable, ttl_s: float) -> None:
        token = self._pending.get(key)
        if token is not None:
            self._deliver(key, token)
        self._store.set(key, ttl_s)

    def touch(self, key: Hashable, ttl_s: float | None = None) -> bool:
        return self._store.touch(key, ttl_s)

    def delete(self, key: Hashable) -> bool:
        pending = self._pending.pop(key, None) is not None
        return self._store.delete(key) or pending

    def exists(self, key: Hashable) -> bool:
        return self._store.exists(key)

    def ttl(self, key: Hashable) -> float | None:
        return self._store.ttl(key)

    def on_expire(self, callback: ExpireCallback) -> None:
        self._callbacks.append(callback)

    def deadlines(self) -> dict[Hashable, float]:
        return self._store.deadlines()

    def sweep(self) -> list[Hashable]:
        self._now = True  # what the store expires now waits for no lag
        try:
            self._store.sweep()
        finally:
            self._now = False
        due = list(self._pending)  # the earlier expiries first, as they came
        for key in due:
            self._deliver(key, self._pending[key])
        return due

    def _expired(self, key: Hashable) -> None:
        token = next(self._tokens)
        self._pending[key] = token
        if not self._now:
            self._clock.call_later(max(self._lag(), 0.0), self._deliver, key, token)

    def _deliver(self, key: Hashable, token: int) -> None:
        if self._pending.get(key) != token:
            return  # delivered already by a set or a sweep, or deleted
        del self._pending[key]
        for cb in self._callbacks:
            cb(key)
