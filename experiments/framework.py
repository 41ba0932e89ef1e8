"""Experiments: declared parameters, a run lifecycle and the results layout.

An experiment is one paper figure. It declares its parameters (with the
paper's defaults and a reduced ``--quick`` value), computes rows of metrics
(usually a sweep of independent points, run in a process pool with
``--jobs``), draws its figure, and states the paper's headline numbers
beside ours. ``run_experiment`` writes, under ``results/<name>/<run-id>/``:
``config.json`` (first, so a crashed run still says what it was),
``metrics.csv``, ``figure.png`` and ``.svg``, ``summary.md`` and
``summary.json``. An existing run directory is never overwritten without
``force``.
"""

from __future__ import annotations

import csv
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.errors import IntbedError
from common.host import cores, cpu_model
from common.paths import checkout_root
from experiments.stats import verdict
from orchestration.network import DEFAULT_TARGET, TARGETS, RunEnv, Target, get_target

RESULTS_DIR = Path("results")
POINTS_DIR = "points"  # the journal of finished points (experiments.sweep)
RESUMED_KEYS = ("experiment", "params", "seed", "quick", "target", "switch_model",
                "collector_profile")


class ExperimentError(IntbedError):
    """Bad experiment name, parameter or output directory."""


@dataclass(frozen=True)
class Param:
    """One knob. ``quick`` is its value under ``--quick`` (None: same as
    ``default``); ``check`` returns an error message or None."""

    name: str
    default: Any
    help: str
    quick: Any = None
    check: Callable[[Any, dict[str, Any]], str | None] | None = None

    def convert(self, text: str) -> Any:
        kind = type(self.default)
        try:
            if kind is bool:
                if text.lower() in ("1", "true", "yes", "on"):
                    return True
                if text.lower() in ("0", "false", "no", "off"):
                    return False
                raise ValueError(text)
            if kind in (list, tuple):
                inner = type(self.default[0]) if self.default else float
                body = text.strip()
                if body.startswith("[") and body.endswith("]"):  # as intbed list prints it
                    body = body[1:-1]
                return [inner(x.strip().strip("'\"")) for x in body.split(",") if x.strip()]
            return kind(text)
        except ValueError:
            form = " (comma-separated values, e.g. 20,40)" if kind in (list, tuple) else ""
            raise ExperimentError(f"parameter {self.name}: cannot read {text!r} as "
                                  f"{kind.__name__}{form}") from None


Check = Callable[[Any, dict[str, Any]], "str | None"]


def config_check(config: Callable[..., Any], field: str, scale: float = 1.0,
                 **setup: Any) -> Check:
    """A ``Param`` check answered by a system's run configuration (the one
    place its rules are written): ``config(field=value * scale, **setup)``
    for the value, or for each value of a list; its error message, or None."""
    def check(v: Any, p: dict[str, Any]) -> str | None:
        values = v if isinstance(v, list | tuple) else [v]
        if not values:
            return "give at least one value"
        for x in values:
            try:
                config(**{field: x * scale if scale != 1.0 else x}, **setup)
            except IntbedError as exc:
                return exc.message
        return None
    return check


@dataclass
class Headline:
    """A number the paper states, beside ours (``summary.json`` record)."""

    name: str
    ours: float | None
    paper: float | None
    unit: str = ""
    note: str = ""
    ci95: float | None = None  # ours' 95 % half width over repetitions
    n: int | None = None  # repetitions behind ours
    tolerance: float | None = None  # absolute; None: experiments.stats' default
    direction: bool | None = None  # the trend or ordering the paper states holds in ours

    @property
    def verdict(self) -> str:
        return verdict(self.ours, self.paper, ci95=self.ci95, tolerance=self.tolerance,
                       direction=self.direction)

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "ours": self.ours, "paper": self.paper,
                               "unit": self.unit}
        for key in ("ci95", "n", "tolerance", "direction"):
            value = getattr(self, key)
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                out[key] = value
        out["verdict"] = self.verdict
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class Result:
    rows: list[dict[str, Any]]
    headlines: list[Headline] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Context:
    """What an experiment's ``compute`` gets: parameters, seed, and a
    ``map`` that runs independent points in parallel with progress."""

    params: dict[str, Any]
    seed: int
    quick: bool
    jobs: int
    out_dir: Path
    progress: Callable[[str, int, int], None]
    target: Target = DEFAULT_TARGET
    live: Any = None  # orchestration.live.LiveOptions on a live target
    cluster: str | None = None  # a Dask scheduler address or 'local:N'
    switch_model: str | None = None  # the sim's timing model (None: its default)
    collector_profile: str | None = None  # whose collector the sim prices (None: default)

    @property
    def env(self) -> RunEnv:
        """The run's target, seed, live options, switch model and collector
        profile, as a system's run takes them."""
        return RunEnv(self.target, self.seed, self.live, self.switch_model,
                      self.collector_profile)

    def map(self, fn: Callable[[Any], Any], points: Sequence[Any], label: str = "points"
            ) -> list[Any]:
        """``[fn(p) for p in points]`` in this process, a process pool (jobs >
        1) or on a Dask cluster; in the order of points whatever ran them.
        Each finished point is journaled in ``points/`` as it arrives
        (``experiments.sweep``), and a resumed run reuses it."""
        from experiments.sweep import Journal, run_points

        return run_points(fn, points, label=label, jobs=self.jobs, cluster=self.cluster,
                          journal=Journal(self.out_dir / POINTS_DIR / _slug(label)),
                          progress=self.progress)


def _slug(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in label) or "points"


@dataclass
class Experiment:
    """A reproducible paper figure."""

    name: str
    title: str
    paper: str
    params: list[Param]
    compute: Callable[[Context], Result]
    plot: Callable[[Result, dict[str, Any], Any], None]
    description: str = ""
    live: bool = False
    """It runs on the live targets too (its runs are written against the
    ``Network`` interface); otherwise on the sim alone."""
    switch_model: str | None = None
    """The sim switches' timing model when ``--switch-model`` names none
    (None: the sim's default, measured on BMv2); a paper evaluated on
    other switches than BMv2 names the model that matches them."""

    def runs_on(self, target: Target) -> bool:
        return self.live or not target.live

    @property
    def targets(self) -> tuple[str, ...]:
        """The names of the targets it runs on, as the registry lists them."""
        return tuple(name for name, t in TARGETS.items() if self.runs_on(t))

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params) or "none"
        raise ExperimentError(f"{self.name} has no parameter '{name}' (parameters: {known})")

    def resolve(self, overrides: dict[str, Any], quick: bool) -> dict[str, Any]:
        values = {}
        for p in self.params:
            values[p.name] = p.quick if quick and p.quick is not None else p.default
        for key, value in overrides.items():
            p = self.param(key)
            values[key] = p.convert(value) if isinstance(value, str) else value
        for p in self.params:
            if p.check is not None:
                msg = p.check(values[p.name], values)
                if msg:
                    raise ExperimentError(f"{self.name}: parameter {p.name}={values[p.name]!r}: "
                                          f"{msg}")
        return values


REGISTRY: dict[str, Experiment] = {}


def register(exp: Experiment) -> Experiment:
    REGISTRY[exp.name] = exp
    return exp


def load_all() -> dict[str, Experiment]:
    """Import every registered system's figures (``experiments.<system
    id>.figures``, which registers them all)."""
    from importlib import import_module

    from orchestration.systems import SYSTEMS

    for system in SYSTEMS.values():
        import_module(f"experiments.{system.id}.figures")
    return REGISTRY


def natural_key(name: str) -> list[int | str]:
    """Sort key that puts fig6 before fig10: digit runs compare as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


RENAMED = {f"nicsink-fig{n}": f"flowcache-fig{n}" for n in (3, 4, 5, 6)}
"""Experiments whose names changed: the system's one id replaced another."""


def get(name: str) -> Experiment:
    exps = load_all()
    if name in RENAMED:
        raise ExperimentError(f"experiment '{name}' is now '{RENAMED[name]}' (one name per "
                              "system: the flow cache's code, docs and figures are "
                              "'flowcache')")
    if name not in exps:
        raise ExperimentError(f"unknown experiment '{name}': run 'intbed list' to see them "
                              f"({', '.join(sorted(exps, key=natural_key))})")
    return exps[name]


# ------------------------------------------------------------------ running


def versions() -> dict[str, Any]:
    out: dict[str, Any] = {"python": platform.python_version(), "platform": platform.platform()}
    try:
        from importlib.metadata import version

        out["intbed"] = version("intbed")
    except Exception:  # noqa: BLE001 - not installed: running from a checkout
        out["intbed"] = "checkout"
    checkout = checkout_root()
    try:
        if checkout is not None:
            commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout,
                                    capture_output=True, text=True, timeout=5)
            if commit.returncode == 0:
                out["commit"] = commit.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def code_digest(exp: Experiment) -> str:
    """A digest of the experiment's code (every ``.py`` file of the
    package that defines it, ``experiments/<system>/``): a results book
    made from a run whose digest differs is stale."""
    import hashlib

    module = sys.modules[exp.compute.__module__]
    package = Path(module.__file__ or "").resolve().parent
    h = hashlib.sha256()
    for f in sorted(package.rglob("*.py")):
        h.update(f.relative_to(package).as_posix().encode() + b"\0")
        h.update(f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def machine() -> dict[str, Any]:
    """What a run's wall time depends on: cores and the CPU's model."""
    return {"cores": cores(), "cpu": cpu_model()}


def prepare_dir(path: Path, force: bool) -> Path:
    """Create the run directory, refusing to clobber an earlier run."""
    if path.exists() and any(path.iterdir()) and not force:
        if (path / "config.json").is_file() and not (path / "summary.json").is_file():
            done = sum(1 for _ in (path / POINTS_DIR).rglob("*.pkl")) \
                if (path / POINTS_DIR).is_dir() else 0
            raise ExperimentError(
                f"{path}: an unfinished run is here (no summary.json; {done} point(s) "
                "finished): finish it with --resume and the same arguments, overwrite it with "
                "--force, or choose another directory with --out")
        raise ExperimentError(f"{path}: results already exist; use --force to overwrite them "
                              "or --out to choose another directory")
    if force:
        # Overwriting means computing again: an earlier run's finished points
        # (and its summary, which marks a run as complete) must not be reused.
        shutil.rmtree(path / POINTS_DIR, ignore_errors=True)
        (path / "summary.json").unlink(missing_ok=True)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise ExperimentError(f"{path}: cannot write results here ({exc.strerror}); "
                              "choose another directory with --out") from None
    return path


def write_csv(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    rows = list(rows)
    columns: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _fmt(v) for k, v in row.items()})


def _fmt(v: Any) -> Any:
    if isinstance(v, float):
        return repr(round(v, 9))
    return v


def summary_markdown(exp: Experiment, params: dict[str, Any], seed: int, quick: bool,
                     result: Result, wall_s: float, where: str = "") -> str:
    lines = [f"# {exp.name}: {exp.title}", "", f"Paper: {exp.paper}", ""]
    if exp.description:
        lines += [exp.description, ""]
    lines += [f"Seed {seed}{', quick run' if quick else ''}{where}; {wall_s:.1f} s wall.", "",
              "| figure | ours | 95 % CI | paper | unit | verdict |",
              "| --- | --- | --- | --- | --- | --- |"]
    for h in result.headlines:
        ci = f"± {_num(h.ci95)}" if h.ci95 is not None and math.isfinite(h.ci95) else "-"
        lines.append(f"| {h.name} | {_num(h.ours)} | {ci} | {_num(h.paper)} | {h.unit} "
                     f"| {h.verdict} |")
    notes = [h for h in result.headlines if h.note]
    if notes or result.notes:
        lines += ["", "## Notes", ""]
        lines += [f"- {h.name}: {h.note}" for h in notes]
        lines += [f"- {n}" for n in result.notes]
    lines += ["", "## Parameters", ""]
    lines += [f"- {k} = {v!r}" for k, v in params.items()]
    return "\n".join(lines) + "\n"


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def run_experiment(name: str, overrides: dict[str, Any] | None = None, *, seed: int = 0,
                   quick: bool = False, out: Path | None = None, jobs: int = 1,
                   force: bool = False, target: Target | str = "sim", redis: str | None = None,
                   progress: Callable[[str, int, int], None] | None = None,
                   cluster: str | None = None, resume: bool = False,
                   switch_model: str | None = None,
                   collector_profile: str | None = None) -> Path:
    """Run experiment ``name`` into its results directory. On a live
    ``target`` points run one at a time (their networks share interface
    names), each in ``<out>/live/NNN-...``, with the Redis at ``redis`` or
    a private ``redis-server``. ``cluster``: run the points on Dask
    (``experiments.sweep``). ``resume``: finish an interrupted run in its
    directory, reusing every point it finished. ``switch_model``: the sim
    switches' timing model (a profile's name or path; None, the default).
    ``collector_profile``: whose collector the sim's runs price
    (``orchestration.systems.intlabel.collector_profile``; None, the
    default)."""
    exp = get(name)
    params = exp.resolve(overrides or {}, quick)
    target = get_target(target)
    model = _switch_model(target, switch_model, exp.switch_model)
    profile = _collector_profile(target, collector_profile)
    if not exp.runs_on(target):
        raise ExperimentError(f"{name}: target '{target}' is not available for this "
                              f"experiment (targets: {', '.join(exp.targets)})")
    live_target = target.live
    if live_target:
        _check_live(name, target, redis)
        jobs = 1
        if cluster is not None:
            raise ExperimentError(f"{name}: --cluster runs sim points only; a live target's "
                                  "networks run on this machine, one at a time")
    if cluster is not None:
        from experiments.sweep import check_cluster

        check_cluster(cluster)
    run_id = f"seed{seed}{'-quick' if quick else ''}"
    path = Path(out) if out is not None else RESULTS_DIR / name / run_id
    config = {"experiment": name, "title": exp.title, "paper": exp.paper, "params": params,
              "seed": seed, "quick": quick, "jobs": jobs, "target": target.name,
              "versions": versions(), "machine": machine(), "code": code_digest(exp),
              "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
              "argv": sys.argv}
    if model is not None:
        config["switch_model"] = model.name
    if profile is not None:
        config["collector_profile"] = profile.name
    if cluster is not None:
        config["cluster"] = cluster
    if resume and path.exists() and any(path.iterdir()):
        before = _check_resumable(path, config)
        # Points kept from a run by other code: say so, with its digest.
        earlier = {*before.get("points_from_code", []), before.get("code")} - {
            None, config["code"]}
        if earlier:
            config["points_from_code"] = sorted(earlier)
        out_dir = path
    else:
        out_dir = prepare_dir(path, force)
    if redis is not None:
        config["redis"] = redis
    (out_dir / "config.json").write_text(json.dumps(config, indent=2, default=str) + "\n")
    live = None
    if live_target:
        from orchestration.live.options import LiveOptions

        live = LiveOptions(results_dir=out_dir / "live", redis_url=redis)
    ctx = Context(params, seed, quick, max(1, jobs), out_dir,
                  progress or (lambda label, done, total: None), target, live, cluster,
                  None if model is None else (switch_model or exp.switch_model),
                  collector_profile)
    t0 = time.perf_counter()
    result = exp.compute(ctx)
    wall = time.perf_counter() - t0
    write_csv(out_dir / "metrics.csv", result.rows)
    _plot(exp, result, params, out_dir)
    where = f"; target {target}" + (f", switch model {model.name}" if model is not None else "")
    if profile is not None:
        where += f", collector profile {profile.name}"
    (out_dir / "summary.md").write_text(summary_markdown(exp, params, seed, quick, result, wall,
                                                         where))
    summary = {"experiment": name, "seed": seed, "quick": quick, "wall_s": round(wall, 3),
               "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
               "headlines": [h.record() for h in result.headlines], "notes": result.notes}
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return out_dir


def _switch_model(target: Target, spec: str | None, default: str | None) -> Any:
    """The run's timing model (``spec``, else the experiment's ``default``),
    checked before anything is written; None where the switches are real."""
    if not target.models_timing:
        if spec is not None:
            raise ExperimentError(f"--switch-model applies to the sim target; {target}'s "
                                  "switches take the time they take")
        return None
    from dataplane.targets.sim.timing import load_model

    return load_model(spec or default)


def _collector_profile(target: Target, spec: str | None) -> Any:
    """The profile named (checked before anything is written); None where
    none is named, or an error where the collector is real."""
    if spec is None:
        return None
    if not target.models_timing:
        raise ExperimentError(f"--collector-profile applies to the sim target; {target}'s "
                              "collector takes the time it takes")
    from orchestration.systems.intlabel.collector_profile import load_collector_profile

    return load_collector_profile(spec)


def _check_resumable(path: Path, config: dict[str, Any]) -> dict[str, Any]:
    """``--resume`` continues only the run that is in ``path`` (its config,
    returned)."""
    try:
        before = json.loads((path / "config.json").read_text())
    except (OSError, ValueError):
        raise ExperimentError(f"{path}: --resume needs the config.json of an earlier run here, "
                              "and there is none readable; use another --out") from None
    # Through JSON, as it was written, so tuples and lists compare alike.
    now = json.loads(json.dumps(config, default=str))
    for key in RESUMED_KEYS:
        if before.get(key) != now.get(key):
            if key == "params":
                diff = sorted(k for k in {**before.get(key, {}), **now[key]}
                              if before.get(key, {}).get(k) != now[key].get(k))
                what = "parameters " + ", ".join(
                    f"{k} ({before.get(key, {}).get(k)!r} there, {now[key].get(k)!r} now)"
                    for k in diff)
            else:
                what = f"{key} ({before.get(key)!r} there, {now.get(key)!r} now)"
            raise ExperimentError(f"{path}: --resume refused: that run differs in {what}; "
                                  "resume with the same arguments, or use another --out")
    return before


def _check_live(name: str, target: Target, redis: str | None) -> None:
    """Fail before any output when a live target cannot run here."""
    problem = target.available()
    if problem is not None:
        raise ExperimentError(f"{name}: {problem}")
    if redis is not None:
        from orchestration.redis_server import connect

        connect(redis).close()


def _plot(exp: Experiment, result: Result, params: dict[str, Any], out_dir: Path) -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "intbed"  # reproducible SVG ids
    fig = plt.figure(figsize=(6.4, 4.2))
    try:
        exp.plot(result, params, fig)
        fig.tight_layout()
        fig.savefig(out_dir / "figure.png", dpi=130)
        fig.savefig(out_dir / "figure.svg", metadata={"Date": None})
    finally:
        plt.close(fig)
