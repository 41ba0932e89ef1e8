"""A private ``redis-server`` for the live targets' INT-label stores.

The orchestrator runs one unless the user gives ``--redis URL``. The server
listens on loopback, keeps nothing on disk (``save ""``, ``appendonly no``:
the stores are per-run state) and publishes key-expiry events
(``notify-keyspace-events Ex``: ``E`` keyevent channels, ``x`` expired),
which drive INT-label's Pro loop.

``hz 100``: Redis finds expired keys that nobody reads in its active expiry
cycle, which runs ``hz`` times a second (default 10). At the default an
untouched key's expiry event comes up to ~100 ms after its deadline, as
long as the paper's k T itself; at 100 it comes within ~10 ms, for a little
more idle CPU in the server.
"""

from __future__ import annotations

import atexit
import errno
import shutil
import socket
import subprocess
import tempfile
import time
from collections import deque
from pathlib import Path
from types import TracebackType

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from common.errors import IntbedError
from common.procs import stop_process

INSTALL_HINT = "install the Debian package redis-server (make install does it as root)"
DEFAULT_HZ = 100
START_TIMEOUT_S = 5.0
STOP_TIMEOUT_S = 5.0

_running: set[RedisServer] = set()


class RedisServerError(IntbedError):
    """redis-server missing, its port busy, or the server failed to start."""


def redis_available() -> str | None:
    """Path of the ``redis-server`` binary, or None. Debian installs it in
    /usr/bin; /usr/sbin and /usr/local/bin are looked at when not on PATH."""
    found = shutil.which("redis-server")
    if found:
        return found
    for d in ("/usr/bin", "/usr/sbin", "/usr/local/bin"):
        p = Path(d) / "redis-server"
        if p.is_file():
            return str(p)
    return None


RECENT_PORTS = 4096
"""How many ports ``free_port`` remembers having handed out."""
_recent: deque[int] = deque()
_recent_set: set[int] = set()


def free_port(bind: str = "127.0.0.1") -> int:
    """A TCP port the kernel reports free on ``bind`` now (another process
    may still take it before the server binds: ``RedisServer`` retries),
    and not one of the last ``RECENT_PORTS`` this process handed out. The
    kernel often offers a just-closed port again (5.7% of 300 draws of 40
    ports held a duplicate), which would give two switches of one network,
    or a server's two ports, the same number."""
    while True:
        port = _kernel_free_port(bind)
        if port not in _recent_set:
            break
    _recent.append(port)
    _recent_set.add(port)
    if len(_recent) > RECENT_PORTS:
        _recent_set.discard(_recent.popleft())
    return port


def _kernel_free_port(bind: str) -> int:
    with socket.socket(_family(bind), socket.SOCK_STREAM) as s:
        s.bind((bind, 0))
        return int(s.getsockname()[1])


def port_busy(port: int, bind: str = "127.0.0.1") -> bool:
    """True if ``port`` cannot be bound on ``bind``."""
    with socket.socket(_family(bind), socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((bind, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return True
            raise
    return False


def redis_url(host: str, port: int, db: int = 0) -> str:
    return f"redis://{_host_part(host)}:{port}/{db}"


def connect(url: str, *, timeout_s: float = 2.0) -> redis.Redis:
    """A client for ``url`` (string replies), checked with one PING first:
    the check does not retry, so a wrong URL fails at once (the client
    returned keeps redis-py's retries for transient errors)."""
    try:
        probe = redis.Redis.from_url(url, socket_timeout=timeout_s,
                                     socket_connect_timeout=timeout_s,
                                     retry=Retry(NoBackoff(), 0))
    except ValueError as exc:
        raise RedisServerError(f"invalid Redis URL {url!r}: {exc}") from None
    try:
        probe.ping()
    except redis.RedisError as exc:
        raise RedisServerError(f"cannot reach Redis at {url}: {exc}") from None
    finally:
        probe.close()
    return redis.Redis.from_url(url, decode_responses=True, socket_timeout=timeout_s,
                                socket_connect_timeout=timeout_s)


class RedisServer:
    """``with RedisServer() as srv: ... srv.url ...``: a redis-server on a
    free port (or ``port``) with its config, log and working directory in a
    new temporary directory under ``dir``, all removed by ``stop()``."""

    def __init__(self, port: int | None = None, bind: str = "127.0.0.1",
                 dir: str | Path | None = None, *, hz: int = DEFAULT_HZ,
                 binary: str | None = None, start_timeout_s: float = START_TIMEOUT_S) -> None:
        self.requested_port = port
        self.bind = bind
        self.parent_dir = None if dir is None else Path(dir)
        self.hz = hz
        self.binary = binary
        self.start_timeout_s = start_timeout_s
        self.port: int | None = None
        self.dir: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None

    # ------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        if self.port is None:
            raise RedisServerError("redis-server is not running")
        return redis_url(self.bind, self.port)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> RedisServer:
        if self.proc is not None:
            return self
        binary = self.binary or redis_available()
        if binary is None or not Path(binary).is_file():
            raise RedisServerError(f"redis-server not found: {INSTALL_HINT}")
        if self.requested_port is not None and port_busy(self.requested_port, self.bind):
            raise RedisServerError(
                f"port {self.requested_port} on {self.bind} is busy: cannot start redis-server")
        self.dir = Path(tempfile.mkdtemp(prefix="intbed-redis-", dir=self.parent_dir))
        try:
            # A free port can be taken between the check and the bind: retry then.
            for attempt in range(3):
                port = self.requested_port or free_port(self.bind)
                if self._launch(binary, port):
                    break
                if self.requested_port is not None or attempt == 2:
                    raise RedisServerError(
                        f"port {port} on {self.bind} is busy: cannot start redis-server")
        except BaseException:
            self._cleanup()
            raise
        _running.add(self)
        return self

    def stop(self) -> None:
        """SIGTERM, wait, SIGKILL if it does not exit; then remove the files."""
        proc, self.proc = self.proc, None
        _running.discard(self)
        if proc is not None:
            stop_process(proc, STOP_TIMEOUT_S)
        self._cleanup()

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def client(self, db: int = 0) -> redis.Redis:
        """A client of this server (string replies)."""
        return connect(redis_url(self.bind, self._port(), db))

    def config_text(self, port: int) -> str:
        """The server's configuration file."""
        assert self.dir is not None
        return "\n".join([
            f"bind {self.bind}",
            f"port {port}",
            "daemonize no",
            "protected-mode yes",
            'save ""',
            "appendonly no",
            f'dir "{self.dir}"',
            'logfile "redis.log"',
            "notify-keyspace-events Ex",
            f"hz {self.hz}",
            "",
        ])

    # ---------------------------------------------------------------- inner

    def _port(self) -> int:
        if self.port is None:
            raise RedisServerError("redis-server is not running")
        return self.port

    def _launch(self, binary: str, port: int) -> bool:
        """Start on ``port``; False if the port turned out to be taken."""
        assert self.dir is not None
        conf = self.dir / "redis.conf"
        conf.write_text(self.config_text(port))
        (self.dir / "redis.log").unlink(missing_ok=True)
        with open(self.dir / "redis.out", "wb") as out:
            proc = subprocess.Popen([binary, str(conf)], cwd=self.dir, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            if proc.poll() is not None:
                text = self._output()
                if "Address already in use" in text:
                    return False
                raise RedisServerError(f"redis-server exited with status {proc.returncode}: "
                                       + (_last_lines(text) or "no output"))
            if _pings(self.bind, port):
                self.proc, self.port = proc, port
                return True
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                raise RedisServerError(f"redis-server did not answer PING on {self.bind}:{port} "
                                       f"within {self.start_timeout_s} s")
            time.sleep(0.01)

    def _output(self) -> str:
        assert self.dir is not None
        parts = []
        for name in ("redis.out", "redis.log"):
            p = self.dir / name
            if p.is_file():
                parts.append(p.read_text(errors="replace"))
        return "\n".join(parts)

    def _cleanup(self) -> None:
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None
        self.port = None


def _pings(host: str, port: int) -> bool:
    """True once the server answers an inline PING with +PONG."""
    try:
        with socket.create_connection((host, port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _host_part(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _last_lines(text: str, n: int = 3) -> str:
    return " | ".join(line.strip() for line in text.strip().splitlines()[-n:])


@atexit.register
def _stop_all() -> None:
    """Never leave a server behind when the process exits without stop()."""
    for srv in list(_running):
        srv.stop()
