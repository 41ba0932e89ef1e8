"""What the flow-cache tests share: a private redis-server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from orchestration.redis_server import RedisServer, redis_available


@pytest.fixture
def server() -> Iterator[RedisServer]:
    if redis_available() is None:
        pytest.skip("redis-server is not installed: install the Debian package redis-server")
    with RedisServer() as srv:
        yield srv
