"""A private InfluxDB 1.x (``influxd``) for the collector, and the few calls
of InfluxDB's HTTP API intbed needs (ping, create a database, InfluxQL).

``InfluxServer`` runs influxd on loopback on free ports (HTTP and the
backup RPC port, which influxd always binds), with its own configuration,
metadata, data and WAL in a new temporary directory, removed by ``stop()``.
It writes no statistics of its own (``_internal``), reports nothing home
and logs only warnings, so its files hold what the collector wrote.
``halt()`` stops the process but keeps the directory and the port, and
``start()`` then brings the same database back on the same URL: a writer
pointed at it sees an outage and a recovery, as with a restarted server.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from common.errors import IntbedError
from common.procs import stop_process
from orchestration.redis_server import free_port

INSTALL_HINT = "install the Debian package influxdb (InfluxDB 1.x)"
START_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 10.0
DEFAULT_DB = "int"

class InfluxServerError(IntbedError):
    """influxd missing or failing to start, or an InfluxDB that does not
    answer or refuses a request."""


@dataclass(frozen=True)
class Availability:
    """Whether a private influxd can run here; ``reason`` says why not."""

    binary: str | None
    reason: str

    def __bool__(self) -> bool:
        return self.binary is not None


def influxd_path() -> str | None:
    """Path of ``influxd``: on PATH, or where Debian puts it."""
    dirs = [os.environ.get("PATH", ""), "/usr/bin", "/usr/sbin", "/usr/local/bin"]
    return shutil.which("influxd", path=os.pathsep.join(dirs))


def influx_available() -> Availability:
    """An InfluxDB 1.x ``influxd`` is installed (2.x serves another API)."""
    binary = influxd_path()
    if binary is None:
        return Availability(None, f"influxd not found: {INSTALL_HINT}")
    try:
        out = subprocess.run([binary, "version"], capture_output=True, text=True, timeout=10,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Availability(None, f"{binary} version failed: {exc}")
    text = (out.stdout + out.stderr).strip()
    if "v1." not in text:
        return Availability(None, f"{binary} is not InfluxDB 1.x ({text or 'no version'}): "
                            f"{INSTALL_HINT}")
    return Availability(binary, text)


# --------------------------------------------------------------------------- HTTP API


def ping(url: str, timeout_s: float = 2.0) -> str:
    """The server's version if ``url`` answers /ping; InfluxServerError if not."""
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/ping", timeout=timeout_s) as answer:
            if answer.status == 204:
                return str(answer.headers.get("X-Influxdb-Version", "unknown"))
            raise InfluxServerError(f"InfluxDB at {url}: /ping answered {answer.status}")
    except urllib.error.HTTPError as exc:
        raise InfluxServerError(f"InfluxDB at {url}: /ping answered {exc.code}") from None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise InfluxServerError(f"InfluxDB at {url} does not answer: {reason}") from None


def _request(url: str, path: str, params: Mapping[str, str], timeout_s: float,
             post: bool) -> Iterator[dict[str, Any]]:
    """The JSON objects of one /query answer (one per chunk)."""
    body = urllib.parse.urlencode(params)
    endpoint = f"{url.rstrip('/')}{path}"
    request = (urllib.request.Request(endpoint, data=body.encode(), method="POST")
               if post else urllib.request.Request(f"{endpoint}?{body}"))
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            text = answer.read().decode()
    except urllib.error.HTTPError as exc:
        detail = exc.read(300).decode("utf-8", "replace").strip()
        raise InfluxServerError(f"InfluxDB at {url} answered {exc.code}: {detail}") from None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise InfluxServerError(f"InfluxDB at {url} does not answer: {reason}") from None
    for line in text.splitlines():
        if line.strip():
            yield json.loads(line)


def _checked(url: str, objects: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The statements' results, raising on an error in any of them."""
    for obj in objects:
        if "error" in obj:
            raise InfluxServerError(f"InfluxDB at {url}: {obj['error']}")
        for result in obj.get("results", []):
            if "error" in result:
                raise InfluxServerError(f"InfluxDB at {url}: {result['error']}")
            yield result


def create_database(url: str, db: str, timeout_s: float = 10.0) -> None:
    """CREATE DATABASE (a no-op for one that exists)."""
    q = f"CREATE DATABASE {quote_ident(db)}"
    for _ in _checked(url, _request(url, "/query", {"q": q}, timeout_s, post=True)):
        pass


@dataclass(frozen=True)
class InfluxSeries:
    """One series of a query's answer: its tags and (time_ns, value) rows."""

    measurement: str
    tags: dict[str, str]
    points: list[tuple[int, Any]]


def query(url: str, db: str, q: str, timeout_s: float = 30.0) -> list[InfluxSeries]:
    """Run an InfluxQL read (SELECT, SHOW) against ``db``; times in ns.
    Answers come chunked, so no row limit of the server cuts them; chunks
    of one series are joined. Each series keeps its first two columns
    (time and the first value)."""
    params = {"db": db, "q": q, "epoch": "ns", "chunked": "true", "chunk_size": "10000"}
    found: dict[tuple[str, tuple[tuple[str, str], ...]], InfluxSeries] = {}
    for result in _checked(url, _request(url, "/query", params, timeout_s, post=False)):
        for s in result.get("series", []):
            tags = dict(s.get("tags") or {})
            key = (s.get("name", ""), tuple(sorted(tags.items())))
            series = found.get(key)
            if series is None:
                series = found[key] = InfluxSeries(key[0], tags, [])
            series.points.extend((row[0], row[1] if len(row) > 1 else None)
                                 for row in s.get("values", []))
    return list(found.values())


def quote_ident(name: str) -> str:
    """An InfluxQL identifier in double quotes."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def quote_string(text: str) -> str:
    """An InfluxQL string literal in single quotes."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def series_query(measurement: str, tags: Mapping[str, str] | None = None,
                 field: str = "value") -> str:
    """SELECT one field of a measurement, series by series, tags matching."""
    q = f"SELECT {quote_ident(field)} FROM {quote_ident(measurement)}"
    if tags:
        q += " WHERE " + " AND ".join(f"{quote_ident(k)} = {quote_string(v)}"
                                      for k, v in sorted(tags.items()))
    return q + " GROUP BY *"


def measurements(url: str, db: str) -> list[str]:
    return sorted(str(name) for series in query(url, db, "SHOW MEASUREMENTS")
                  for name, _ in series.points)


def count_by_measurement(url: str, db: str, field: str = "value") -> dict[str, int]:
    """Points stored in each measurement of ``db`` (count of ``field``).
    One count per measurement: a count over ``/.*/`` leaves out the
    measurements whose field type differs from the first one's."""
    names = measurements(url, db)
    if not names:
        return {}
    q = "; ".join(f"SELECT count({quote_ident(field)}) FROM {quote_ident(m)}" for m in names)
    out = dict.fromkeys(names, 0)
    for series in query(url, db, q):
        out[series.measurement] += sum(int(v) for _, v in series.points if v is not None)
    return out


# --------------------------------------------------------------------------- the server


class InfluxServer:
    """``with InfluxServer() as srv: ... srv.url ...``: influxd on free
    loopback ports with database ``db`` created, in a new temporary
    directory under ``dir``, all removed by ``stop()``."""

    def __init__(self, db: str = DEFAULT_DB, dir: str | Path | None = None, *,
                 binary: str | None = None, start_timeout_s: float = START_TIMEOUT_S) -> None:
        self.db = db
        self.parent_dir = None if dir is None else Path(dir)
        self.binary = binary
        self.start_timeout_s = start_timeout_s
        self.bind = "127.0.0.1"
        self.port: int | None = None
        self.rpc_port: int | None = None
        self.dir: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        if self.port is None:
            raise InfluxServerError("influxd is not running")
        return f"http://{self.bind}:{self.port}"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> InfluxServer:
        """Start influxd (again after ``halt``: same port, same data) and
        wait until /ping answers; creates ``db`` on the first start."""
        if self.proc is not None:
            return self
        binary = self.binary or influxd_path()
        if binary is None or not Path(binary).is_file():
            raise InfluxServerError(f"influxd not found: {INSTALL_HINT}")
        first = self.dir is None
        if first:
            self.dir = Path(tempfile.mkdtemp(prefix="intbed-influx-", dir=self.parent_dir))
        try:
            for attempt in range(3):  # a free port can be taken before influxd binds it
                if first:
                    self.port, self.rpc_port = free_port(self.bind), free_port(self.bind)
                if self._launch(binary):
                    break
                if not first or attempt == 2:
                    raise InfluxServerError(f"port {self.port} or {self.rpc_port} on "
                                            f"{self.bind} is busy: cannot start influxd")
            if first:
                create_database(self.url, self.db)
        except BaseException:
            if first:
                self.stop()
            else:
                self.halt()
            raise
        if first:
            atexit.register(self.stop)  # never leave a server behind at exit
        return self

    def halt(self) -> None:
        """Stop the process, keeping its data and port for ``start()``."""
        proc, self.proc = self.proc, None
        if proc is not None:
            stop_process(proc, STOP_TIMEOUT_S)

    def stop(self) -> None:
        """Stop the process and remove its directory."""
        self.halt()
        atexit.unregister(self.stop)
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None
        self.port = self.rpc_port = None

    def __enter__(self) -> InfluxServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def query(self, q: str) -> list[InfluxSeries]:
        return query(self.url, self.db, q)

    def count_by_measurement(self) -> dict[str, int]:
        return count_by_measurement(self.url, self.db)

    def config_text(self) -> str:
        """influxd's configuration: loopback only, everything in ``dir``,
        nothing written but the collector's points."""
        assert self.dir is not None
        d = self.dir
        return "\n".join([
            "reporting-disabled = true",
            f'bind-address = "{self.bind}:{self.rpc_port}"',
            "[meta]",
            f'  dir = "{d / "meta"}"',
            "  logging-enabled = false",
            "[data]",
            f'  dir = "{d / "data"}"',
            f'  wal-dir = "{d / "wal"}"',
            "  query-log-enabled = false",
            '  index-version = "inmem"',
            "  max-series-per-database = 0",
            "  max-values-per-tag = 0",
            "[monitor]",
            "  store-enabled = false",
            "[subscriber]",
            "  enabled = false",
            "[continuous_queries]",
            "  enabled = false",
            "[shard-precreation]",
            "  enabled = false",
            "[http]",
            "  enabled = true",
            f'  bind-address = "{self.bind}:{self.port}"',
            "  auth-enabled = false",
            "  log-enabled = false",
            "  pprof-enabled = false",
            "  max-row-limit = 0",
            "[logging]",
            '  level = "warn"',
            "  suppress-logo = true",
            "",
        ])

    # ---------------------------------------------------------------- inner

    def _launch(self, binary: str) -> bool:
        """Start influxd; False if a port turned out to be taken."""
        assert self.dir is not None
        conf = self.dir / "influxdb.conf"
        conf.write_text(self.config_text())
        env = {k: v for k, v in os.environ.items() if not k.startswith("INFLUXDB_")}
        log = self.dir / "influxd.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen([binary, "-config", str(conf)], cwd=self.dir, env=env,
                                    stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            if proc.poll() is not None:
                text = log.read_text(errors="replace")
                if "address already in use" in text:
                    return False
                last = text.strip().splitlines()[-1:] or ["no output"]
                raise InfluxServerError(f"influxd exited with status {proc.returncode}: "
                                        + last[0].strip())
            try:
                ping(self.url, timeout_s=0.5)
            except InfluxServerError:
                pass
            else:
                self.proc = proc
                return True
            if time.monotonic() > deadline:
                stop_process(proc, STOP_TIMEOUT_S)
                raise InfluxServerError(f"influxd did not answer /ping on {self.url} "
                                        f"within {self.start_timeout_s} s")
            time.sleep(0.05)
