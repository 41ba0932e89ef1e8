"""Where INT-label keeps its INT database and aging store: in memory (the
``sim`` target, virtual-time expiry) or in Redis (live targets, keyspace
expiry events). A run is handed one of these; it never picks by target."""

from __future__ import annotations

import uuid
from contextlib import AbstractContextManager
from typing import Any, Protocol

from common.clock import Clock
from sinks.intlabel.aging import AgingStore, MemoryAgingStore
from sinks.intlabel.database import IntDatabase, MemoryIntDatabase


class IntLabelStores(Protocol):
    def int_database(self) -> IntDatabase: ...

    def aging_store(self, clock: Clock) -> AgingStore: ...

    def close(self) -> None:
        """Drop what the run stored and release connections."""


class MemoryStores:
    """Both stores in this process."""

    def int_database(self) -> MemoryIntDatabase:
        return MemoryIntDatabase()

    def aging_store(self, clock: Clock) -> MemoryAgingStore:
        return MemoryAgingStore(clock)

    def close(self) -> None:
        pass


class RedisStores:
    """Both stores in one Redis under a fresh key prefix, sharing ``lock``
    with the clock that runs the apps' callbacks."""

    def __init__(self, url: str, lock: AbstractContextManager[Any] | None = None) -> None:
        self.url = url
        self.lock = lock
        self.prefix = f"intbed:{uuid.uuid4().hex[:12]}:"
        self._opened: list[Any] = []

    def int_database(self) -> IntDatabase:
        from sinks.intlabel.redis_store import RedisIntDatabase

        db = RedisIntDatabase(self.url, prefix=self.prefix + "int:", lock=self.lock)
        self._opened.append(db)
        return db

    def aging_store(self, clock: Clock) -> AgingStore:
        from sinks.intlabel.redis_store import RedisAgingStore

        store = RedisAgingStore(self.url, clock, prefix=self.prefix + "age:", lock=self.lock)
        self._opened.append(store)
        return store

    def close(self) -> None:
        for store in self._opened:
            try:
                store.clear()
                store.close()
            except Exception:  # noqa: BLE001 - Redis may be gone already
                pass
        self._opened.clear()


def stores_for(redis_url: str | None,
               lock: AbstractContextManager[Any] | None = None) -> IntLabelStores:
    """Redis where the network offers one, memory otherwise."""
    return MemoryStores() if redis_url is None else RedisStores(redis_url, lock)
