"""Running an experiment's independent points: one after another, in a
local process pool, or on a Dask ``distributed`` cluster.

Every finished point is written to the run's journal (``points/`` in the
results directory) the moment it arrives, so a sweep that is killed, or
whose points fail, loses nothing finished: ``--resume`` runs only what is
missing. A point's journal key is a digest of its label and its ``repr``
(points are dataclasses and tuples of plain values), so a resumed run
reuses a result only for the very same point.

Results come back in the order of the points whatever ran them, and a
point computes the same result wherever it runs (its seed is part of it),
so a cluster run writes the same files, byte for byte, as a local one.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import pickle
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.errors import IntbedError
from dataplane.compiler.options import CompileOptions, compile_options
from dataplane.compiler.options import current as current_options

CONNECT_TIMEOUT_S = 10
LOCAL_PREFIX = "local:"
Progress = Callable[[str, int, int], None]


class SweepError(IntbedError):
    """Points that could not run, or a cluster that cannot be reached."""


def point_key(label: str, point: Any) -> str:
    return hashlib.sha256(f"{label}\n{point!r}".encode()).hexdigest()[:24]


class Journal:
    """One pickle per finished point, written atomically; one text file per
    failed point with its error."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory

    def get(self, key: str) -> tuple[bool, Any]:
        path = self.dir / f"{key}.pkl"
        if not path.is_file():
            return False, None
        try:
            with path.open("rb") as fh:
                return True, pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            return False, None  # unreadable: run the point again

    def put(self, key: str, value: Any) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / f".{key}.tmp"
        with tmp.open("wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, self.dir / f"{key}.pkl")
        (self.dir / f"{key}.error.txt").unlink(missing_ok=True)

    def fail(self, key: str, point: Any, error: str) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / f"{key}.error.txt").write_text(f"{point!r}\n\n{error}")


@dataclass
class Failure:
    point: Any
    error: str


def _under_options(opts: CompileOptions, fn: Callable[[Any], Any], point: Any) -> Any:
    with compile_options(opts.defines, opts.include_dirs):
        return fn(point)


def run_points(fn: Callable[[Any], Any], points: Sequence[Any], *, label: str, jobs: int,
               cluster: str | None, journal: Journal | None, progress: Progress) -> list[Any]:
    """``[fn(p) for p in points]``; points already in ``journal`` are not run
    again. With ``cluster`` ('local:N' or a scheduler address) on Dask, else
    with ``jobs`` processes. A point failing with an ``IntbedError`` (bad
    input: every point would fail alike) stops the sweep at once; any other
    failure is reported with the others at the end, finished points kept."""
    total = len(points)
    keys = [point_key(label, p) for p in points]
    results: list[Any] = [None] * total
    todo: list[int] = []
    for i, key in enumerate(keys):
        found, value = journal.get(key) if journal is not None else (False, None)
        if found:
            results[i] = value
        else:
            todo.append(i)
    done = total - len(todo)
    progress(label, done, total)
    failures: list[Failure] = []
    opts = current_options()
    if opts:
        # A command's -D/-I travel with each point to whatever runs it
        # (a forked or spawned process, a Dask worker elsewhere).
        fn = functools.partial(_under_options, opts, fn)

    def finished(i: int, value: Any) -> None:
        nonlocal done
        if journal is not None:
            journal.put(keys[i], value)
        results[i] = value
        done += 1
        progress(label, done, total)

    def failed(i: int, exc: BaseException, text: str) -> None:
        if isinstance(exc, IntbedError):
            raise exc
        if journal is not None:
            journal.fail(keys[i], points[i], text)
        failures.append(Failure(points[i], f"{type(exc).__name__}: {exc}"))

    if cluster is not None:
        _on_dask(fn, points, todo, keys, label, cluster, finished, failed)
    elif jobs <= 1 or len(todo) <= 1:
        for i in todo:
            finished(i, fn(points[i]))  # in process: an error is raised as it is
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(fn, points[i]): i for i in todo}
            for fut in as_completed(futures):
                exc = fut.exception()
                if exc is None:
                    finished(futures[fut], fut.result())
                else:
                    failed(futures[fut], exc, "".join(traceback.format_exception(exc)))
    if failures:
        where = f"; their errors are in {journal.dir}" if journal is not None else ""
        raise SweepError(
            f"{len(failures)} of {total} {label} failed (first: {failures[0].point!r}: "
            f"{failures[0].error}){where}. Finished points are kept: run the same command "
            "with --resume to run only the missing ones")
    return results


def _on_dask(fn: Callable[[Any], Any], points: Sequence[Any], todo: list[int],
             keys: list[str], label: str, cluster: str,
             finished: Callable[[int, Any], None],
             failed: Callable[[int, BaseException, str], None]) -> None:
    try:
        from distributed import Client, LocalCluster
        from distributed import as_completed as dask_completed
    except ImportError:
        raise SweepError("--cluster needs Dask's 'distributed' package: pip install "
                         "distributed (make install does)") from None
    local = None
    if cluster.startswith(LOCAL_PREFIX):
        n = local_workers(cluster)
        local = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                             dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(local)
    else:
        client = connect(cluster)
    try:
        futures = []
        index = {}
        for i in todo:
            fut = client.submit(fn, points[i], key=f"{label}-{keys[i]}", pure=False)
            index[fut.key] = i
            futures.append(fut)
        # On this client's loop: as_completed otherwise takes the process's
        # default client's, and with a second client in the process (a
        # notebook's, a test's) a future's state was waited on from two
        # event loops ("bound to a different event loop").
        for fut in dask_completed(futures, loop=client.loop):
            i = index[fut.key]
            if fut.status == "finished":
                finished(i, fut.result())
            else:
                exc = fut.exception()
                failed(i, exc, "".join(traceback.format_exception(exc)))
    finally:
        client.close()
        if local is not None:
            local.close()


def local_workers(cluster: str) -> int:
    text = cluster[len(LOCAL_PREFIX):]
    if not text.isdigit() or int(text) < 1:
        raise SweepError(f"--cluster {cluster!r}: 'local:N' needs a number of workers N >= 1, "
                         "e.g. local:4")
    return int(text)


def check_cluster(cluster: str) -> None:
    """Refuse a malformed ``--cluster`` before anything is written."""
    if cluster.startswith(LOCAL_PREFIX):
        local_workers(cluster)
    elif "://" not in cluster:
        raise SweepError(f"--cluster {cluster!r}: give a scheduler address such as "
                         "tcp://HOST:8786, or local:N for N workers on this machine")


def connect(address: str) -> Any:
    """A client of the scheduler at ``address``, or one clear line within
    ``CONNECT_TIMEOUT_S`` seconds."""
    from distributed import Client

    try:
        return Client(address, timeout=f"{CONNECT_TIMEOUT_S}s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise SweepError(f"--cluster {address}: no Dask scheduler answered within "
                         f"{CONNECT_TIMEOUT_S} s ({type(exc).__name__}); start one with "
                         "'dask scheduler' and its workers with 'dask worker ADDRESS'") from None
