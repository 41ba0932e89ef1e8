"""A ``Store`` that sends points to InfluxDB 1.x: ``POST /write?db=..&
precision=ns`` with line protocol bodies, through ``urllib.request``.

Points wait in a bounded buffer until a request carrying them succeeds.
A failed request (no connection, timeout, 5xx, 429, or any status but 400)
leaves them in the buffer and the writer waits before trying again, the wait
doubling up to ``retry_max_s``; nothing is lost on the way. Only two things
drop points, and both are counted: a full buffer drops its oldest points
(``dropped``), and a 400 answer, InfluxDB's "this batch is malformed or
conflicts with a field type", drops that batch (``rejected``), since sending
it again cannot succeed. A retried batch may have been written already (a
timeout after InfluxDB wrote it): points are keyed by series and time, so
writing one twice stores it once.

The writer never sleeps: ``write`` and ``flush`` send what they can and
return; ``flush`` before its retry time is a no-op, so the caller (the
exporter's timer) can call it as often as it likes.
"""

from __future__ import annotations

import logging
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import islice

from sinks.intcollector.stores.base import Point
from sinks.intcollector.stores.lineprotocol import encode_line

log = logging.getLogger(__name__)


@dataclass
class WriterStats:
    requests: int = 0
    failed_requests: int = 0
    sent: int = 0  # points InfluxDB accepted
    dropped: int = 0  # points dropped at a full buffer
    rejected: int = 0  # points of batches answered 400


class InfluxWriter:
    """Buffering, retrying line-protocol writer for one InfluxDB 1.x database."""

    def __init__(self, url: str = "http://127.0.0.1:8086", db: str = "int", *,
                 buffer_points: int = 1_000_000, batch_points: int = 5_000,
                 timeout_s: float = 5.0, retry_initial_s: float = 0.5,
                 retry_max_s: float = 30.0, now: Callable[[], float] = time.monotonic) -> None:
        if buffer_points < 1 or batch_points < 1:
            raise ValueError("buffer_points and batch_points must be positive")
        query = urllib.parse.urlencode({"db": db, "precision": "ns"})
        self.endpoint = f"{url.rstrip('/')}/write?{query}"
        self.buffer_points = buffer_points
        self.batch_points = batch_points
        self.timeout_s = timeout_s
        self.retry_initial_s = retry_initial_s
        self.retry_max_s = retry_max_s
        self.stats = WriterStats()
        self._now = now
        self._lines: deque[str] = deque()
        self._retry_at = float("-inf")
        self._wait = retry_initial_s

    def __len__(self) -> int:
        """Points waiting to be sent."""
        return len(self._lines)

    def write(self, points: Sequence[Point]) -> None:
        """Encode and buffer ``points`` (ValueError for one line protocol
        cannot carry, before any is buffered), then send what is due."""
        lines = [encode_line(point) for point in points]
        self._lines.extend(lines)
        over = len(self._lines) - self.buffer_points
        if over > 0:
            for _ in range(over):
                self._lines.popleft()
            self.stats.dropped += over
            log.warning("InfluxDB buffer full: dropped the %d oldest points", over)
        self.flush()

    def flush(self) -> None:
        """Send buffered points, a batch per request, until the buffer is
        empty or a request fails; nothing before the retry time."""
        while self._lines and self._now() >= self._retry_at:
            count = min(self.batch_points, len(self._lines))
            body = "\n".join(islice(self._lines, count)).encode() + b"\n"
            status = self._post(body)
            if status is None or (status >= 300 and status != 400):
                self.stats.failed_requests += 1
                self._retry_at = self._now() + self._wait
                self._wait = min(2 * self._wait, self.retry_max_s)
                return
            for _ in range(count):
                self._lines.popleft()
            if status == 400:
                self.stats.rejected += count
            else:
                self.stats.sent += count
            self._wait = self.retry_initial_s
            self._retry_at = float("-inf")

    def _post(self, body: bytes) -> int | None:
        """The HTTP status of one write request, or None without an answer."""
        self.stats.requests += 1
        request = urllib.request.Request(self.endpoint, data=body, method="POST",
                                         headers={"Content-Type": "text/plain; charset=utf-8"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as answer:
                return int(answer.status)
        except urllib.error.HTTPError as error:
            detail = error.read(300).decode("utf-8", "replace")
            log.warning("InfluxDB write answered %d: %s", error.code, detail)
            return int(error.code)
        except (OSError, ValueError) as error:  # URLError, timeouts, refused connections
            log.warning("InfluxDB write failed: %s", error)
            return None

    def close(self) -> None:
        """Try once more to send what is buffered (ignoring the retry wait)."""
        self._retry_at = float("-inf")
        self.flush()
