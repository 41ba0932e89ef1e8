"""The embedded store: points in one SQLite file in WAL mode, so queries
(and other processes, e.g. an analysis notebook) read while the collector
writes.

Layout, after InfluxDB's data model: a series is a measurement and a tag
set; a point is (series, field, time, value). ``points`` is clustered by
(series, field, time), so reading one series over a time range is one
index range scan, and writing a point twice (same series, field and time)
keeps the last value, as InfluxDB does.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sinks.intcollector.stores.base import FieldValue, Point

_SCHEMA = """
CREATE TABLE IF NOT EXISTS series (
    id INTEGER PRIMARY KEY,
    measurement TEXT NOT NULL,
    tags TEXT NOT NULL,  -- JSON list of [name, value] pairs, sorted by name
    UNIQUE (measurement, tags)
);
CREATE TABLE IF NOT EXISTS points (
    series INTEGER NOT NULL REFERENCES series (id),
    field TEXT NOT NULL,
    time_ns INTEGER NOT NULL,
    value,
    PRIMARY KEY (series, field, time_ns)
) WITHOUT ROWID;
"""


@dataclass(frozen=True, slots=True)
class Series:
    """One series read back: its tags and its (time_ns, value) pairs in time order."""

    measurement: str
    tags: dict[str, str]
    points: list[tuple[int, FieldValue]]


def _tag_text(tags: Sequence[tuple[str, str]]) -> str:
    return json.dumps(sorted(tags), separators=(",", ":"))


class SqliteStore:
    """``Store`` on a SQLite file. Each ``write`` is one transaction; the
    connection is shared by threads under a lock."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise OSError(f"{self.path}: SQLite refused WAL mode (got {mode})")
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints, never corrupt
        self._db.executescript(_SCHEMA)
        self._series: dict[tuple[str, str], int] = {
            (m, t): i for i, m, t in self._db.execute("SELECT id, measurement, tags FROM series")}

    def _series_id(self, measurement: str, tags: str) -> int:
        found = self._series.get((measurement, tags))
        if found is None:
            cursor = self._db.execute("INSERT INTO series (measurement, tags) VALUES (?, ?)",
                                      (measurement, tags))
            found = self._series[(measurement, tags)] = int(cursor.lastrowid or 0)
        return found

    def write(self, points: Sequence[Point]) -> None:
        if not points:
            return
        with self._lock:
            self._db.execute("BEGIN")
            try:
                rows = []
                text: dict[tuple[tuple[str, str], ...], str] = {}
                for measurement, tags, fields, time_ns in points:
                    tag_text = text.get(tags)
                    if tag_text is None:
                        tag_text = text[tags] = _tag_text(tags)
                    series = self._series_id(measurement, tag_text)
                    rows.extend((series, key, time_ns, value) for key, value in fields.items())
                self._db.executemany("INSERT OR REPLACE INTO points VALUES (?, ?, ?, ?)", rows)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                self._series = {(m, t): i for i, m, t in
                                self._db.execute("SELECT id, measurement, tags FROM series")}
                raise

    def flush(self) -> None:
        """Nothing to do: every write is committed."""

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def query(self, measurement: str, tags: Mapping[str, str] | None = None,
              field: str = "value", start_ns: int | None = None,
              end_ns: int | None = None) -> list[Series]:
        """Series of ``measurement`` whose tags include ``tags``, with their
        ``field`` values in [start_ns, end_ns), in time order."""
        want = set((tags or {}).items())
        low = -(1 << 63) if start_ns is None else start_ns
        high = (1 << 63) - 1 if end_ns is None else end_ns
        out = []
        with self._lock:
            found = self._db.execute("SELECT id, tags FROM series WHERE measurement = ? "
                                     "ORDER BY tags", (measurement,)).fetchall()
            for series, tag_text in found:
                pairs = {name: value for name, value in json.loads(tag_text)}
                if not want <= pairs.items():
                    continue
                points = self._db.execute(
                    "SELECT time_ns, value FROM points WHERE series = ? AND field = ? "
                    "AND time_ns >= ? AND time_ns < ? ORDER BY time_ns",
                    (series, field, low, high)).fetchall()
                out.append(Series(measurement, pairs, points))
        return out

    def read(self, measurement: str, tags: Mapping[str, str], field: str = "value",
             start_ns: int | None = None, end_ns: int | None = None
             ) -> list[tuple[int, FieldValue]]:
        """The (time_ns, value) pairs of the one series with exactly these tags."""
        for series in self.query(measurement, tags, field, start_ns, end_ns):
            if series.tags == dict(tags):
                return series.points
        return []

    def count(self, measurement: str | None = None) -> int:
        """Stored values, of one measurement or of all."""
        with self._lock:
            if measurement is None:
                return int(self._db.execute("SELECT count(*) FROM points").fetchone()[0])
            return int(self._db.execute(
                "SELECT count(*) FROM points JOIN series ON series.id = points.series "
                "WHERE measurement = ?", (measurement,)).fetchone()[0])

    def measurements(self) -> list[str]:
        with self._lock:
            return [m for (m,) in self._db.execute(
                "SELECT DISTINCT measurement FROM series ORDER BY measurement")]
