"""``intbed reproduce``: experiments at their paper defaults, one after the
other, into ``results/``, and the results book written from what they
measured (``experiments.book``).

A run is the experiment's full sweep (``quick`` off, no overrides) at seed
0, in ``results/NAME/seed0``, so the book and ``intbed run NAME`` read and
write the same place. With ``--resume`` a run that finished is kept if the
experiment's code is as it was (its digest, ``code_digest``) and run again
if not; an unfinished one is finished (its journaled points are not run
again). Without it an existing run is refused, never overwritten unless
``--force`` says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from experiments.framework import (
    RESULTS_DIR,
    ExperimentError,
    code_digest,
    get,
    load_all,
    natural_key,
    run_experiment,
)

SEED = 0


@dataclass(frozen=True)
class Reproduced:
    name: str
    path: Path
    reused: bool  # a finished run found in place (--resume)


def run_dir(name: str, results: Path = RESULTS_DIR) -> Path:
    return results / name / f"seed{SEED}"


def finished(path: Path) -> bool:
    """A run that wrote its summary at paper scale."""
    summary = path / "summary.json"
    if not summary.is_file():
        return False
    try:
        return json.loads(summary.read_text()).get("quick") is False
    except (OSError, ValueError):
        return False


def current(name: str, path: Path) -> bool:
    """Whether the run in ``path`` was made by the experiment's code as it
    is now (its recorded digest matches)."""
    try:
        recorded = json.loads((path / "config.json").read_text()).get("code")
    except (OSError, ValueError):
        return False
    return recorded == code_digest(get(name))


def selected(names: Sequence[str], every: bool) -> list[str]:
    """The experiments asked for, in ``intbed list``'s order; all with
    ``every``. Unknown names are refused before anything runs."""
    exps = load_all()
    if every and names:
        raise ExperimentError("give experiment names or --all, not both")
    if not every and not names:
        raise ExperimentError("name the experiments to reproduce (intbed list shows them) "
                              "or give --all")
    wanted = sorted(exps, key=natural_key) if every else list(dict.fromkeys(names))
    unknown = [n for n in wanted if n not in exps]
    if unknown:
        raise ExperimentError(f"unknown experiment(s): {', '.join(unknown)}; run 'intbed "
                              "list' to see them")
    return wanted


def reproduce(names: Sequence[str], *, jobs: int = 1, cluster: str | None = None,
              resume: bool = False, force: bool = False, results: Path = RESULTS_DIR,
              progress: Callable[[str, int, int], None] | None = None,
              announce: Callable[[str], None] = lambda line: None) -> list[Reproduced]:
    """Run each of ``names`` at its paper defaults (see the module's
    docstring for what is kept). One experiment that fails stops the
    sequence with its error; every run finished before it stays."""
    done: list[Reproduced] = []
    for i, name in enumerate(names, 1):
        path = run_dir(name, results)
        rerun = force
        if resume and finished(path):
            if current(name, path):
                announce(f"[{i}/{len(names)}] {name}: finished earlier, kept ({path})")
                done.append(Reproduced(name, path, True))
                continue
            announce(f"[{i}/{len(names)}] {name}: its code changed since the run in {path}; "
                     "running it again")
            rerun = True
        announce(f"[{i}/{len(names)}] {name}: running at paper scale into {path}")
        out = run_experiment(name, seed=SEED, quick=False, out=path, jobs=jobs, force=rerun,
                             progress=progress, cluster=cluster, resume=resume and not rerun)
        done.append(Reproduced(name, out, False))
    return done
