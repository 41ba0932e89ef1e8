"""The results book, ``docs/results.md``: every experiment of ``intbed
list``, each headline with the paper's value, ours with its 95 % interval,
a verdict by ``experiments.stats.verdict`` and the evidence for any
difference, written from the paper-scale runs in ``results/`` that the
experiment's code as it is now made, and nothing else.
``docs/results/book.json`` keeps what each entry was made from (the
commit, the experiment's code digest, the machine, the wall time) so that
a test can flag an entry whose experiment code has changed since, and
keeps the entry itself (headlines, notes, cross-checks): a run that is
not in ``results/`` on this machine (a fresh clone, another machine)
stays in the book for as long as its experiment's code is unchanged, so
rewriting the book after one new run loses none of the others.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.crosscheck import FINDINGS
from experiments.framework import (
    RESULTS_DIR,
    Experiment,
    code_digest,
    get,
    load_all,
    natural_key,
)
from experiments.reproduce import current, finished, run_dir
from experiments.stats import REL_TOLERANCE, VERDICTS

BOOK = Path("docs/results.md")
FIGURES = Path("docs/results")
INDEX_NAME = "book.json"
FIGURE_WIDTH = 640  # pixels: the book's figures stay small in the repository

RULE = (f"A headline is *reproduced* when ours is within the larger of its 95 % half width "
        f"and a tolerance of the paper's value (the experiment's own where it states one, "
        f"else {REL_TOLERANCE:.0%} of the paper's value); *direction only* when it is not, "
        "but the trend or ordering the paper states holds in ours; *not reproduced* "
        "otherwise; *not comparable* where the paper gives no number or ours is not a "
        "number.")


@dataclass
class Entry:
    name: str
    exp: Experiment
    summary: dict[str, Any] | None = None
    config: dict[str, Any] = field(default_factory=dict)
    figure: str | None = None
    crosschecks: list[dict[str, Any]] = field(default_factory=list)
    stale_run: bool = False  # a paper-scale run is there, made by other code
    kept: bool = False  # from the book's index: its run is not in results/ here
    digest: str = ""  # the experiment's code digest now
    # Kept from the book's index although the experiment's code has changed
    # since its run: shown, flagged, and left out of the totals until rerun.
    stale_record: bool = False

    @property
    def run(self) -> bool:
        return self.summary is not None

    def verdicts(self) -> Counter[str]:
        return Counter(h.get("verdict", "not comparable")
                       for h in (self.summary or {}).get("headlines", []))

    def reading(self) -> str:
        counts = self.verdicts()
        total = sum(counts.values())
        parts = [f"{counts[v]} {v}" for v in VERDICTS if counts[v]]
        return f"{self.exp.title}: of {total} headline(s), {', '.join(parts)}."

    def index(self) -> dict[str, Any]:
        checks = [{**{k: c.get(k) for k in ("targets", "seeds", "quick", "agree", "code",
                                            "folder", "settings", "agreements")},
                   **{k: c[k] for k in ("switch_model", "collector_profile",
                                        "points_from_code") if c.get(k)}}
                  for c in self.crosschecks]
        if not self.run:
            return {"run": False, **({"crosschecks": checks} if checks else {})}
        assert self.summary is not None
        return {"run": True, **({"crosschecks": checks} if checks else {}),
                "commit": self.config.get("versions", {}).get("commit"),
                "code": self.config.get("code"), "machine": self.config.get("machine"),
                "started": self.config.get("started"), "wall_s": self.summary.get("wall_s"),
                "jobs": self.config.get("jobs"),
                "headlines": [{k: h.get(k) for k in ("name", "ours", "paper", "verdict")}
                              for h in self.summary["headlines"]],
                "record": {"summary": {k: self.summary.get(k)
                                       for k in ("wall_s", "finished", "headlines", "notes")}}}


def collect(results: Path = RESULTS_DIR, previous: dict[str, Any] | None = None
            ) -> list[Entry]:
    """One entry per experiment, in ``intbed list``'s order; those with a
    finished paper-scale run in ``results`` carry it. ``previous`` (the
    index of the book written before) supplies the entries, and the
    cross-checks, whose runs are not in ``results`` but whose code is the
    experiment's code now."""
    out = []
    previous = previous or {}
    for name, exp in sorted(load_all().items(), key=lambda kv: natural_key(kv[0])):
        digest = code_digest(exp)
        entry = Entry(name, exp, digest=digest)
        path = run_dir(name, results)
        old = previous.get(name) or {}
        record = old.get("record") if old.get("run") else None
        if finished(path) and current(name, path):
            entry.summary = json.loads((path / "summary.json").read_text())
            entry.config = json.loads((path / "config.json").read_text())
        elif record:
            # What the book recorded is never dropped: a record whose code
            # has changed since stays, flagged, until its rerun replaces it.
            entry.summary = dict(record["summary"])
            entry.config = {"versions": {"commit": old.get("commit")},
                            **{k: old.get(k) for k in ("code", "machine", "started", "jobs")}}
            entry.kept = True
            entry.stale_record = old.get("code") != digest
        elif finished(path):
            entry.stale_run = True
        found = _crosschecks(results, name)
        kept = [c for c in old.get("crosschecks", [])
                if not (results / "crosscheck" / _folder(name, c)).exists()]
        entry.crosschecks = sorted([*found, *kept],
                                   key=lambda c: natural_key(_folder(name, c)))
        out.append(entry)
    return out


def _folder(name: str, check: dict[str, Any]) -> str:
    return check.get("folder") or (f"{name}-quick" if check.get("quick") else name)


def _crosschecks(results: Path, name: str) -> list[dict[str, Any]]:
    """``intbed crosscheck NAME [--quick] [--set ...] [--out ...]``'s
    reports under ``results/crosscheck``, each with the code digest of the
    runs behind it, its folder and the parameters it set apart from the
    experiment's defaults (read from its first run)."""
    out = []
    root = results / "crosscheck"
    if not root.is_dir():
        return out
    exp = get(name)
    for folder in sorted(root.iterdir(), key=lambda f: natural_key(f.name)):
        report = folder / "crosscheck.json"
        if not (folder.name == name or folder.name.startswith(f"{name}-")) or \
                not report.is_file():
            continue
        data = json.loads(report.read_text())
        if data.get("experiment") != name:
            continue
        first = folder / data["targets"][0] / "seed0" / "config.json"
        config = json.loads(first.read_text()) if first.is_file() else {}
        data["code"] = config.get("code")
        data["folder"] = folder.name
        kept = sorted({c for side in data["targets"]
                       for cfg in (folder / side).glob("seed*/config.json")
                       for c in json.loads(cfg.read_text()).get("points_from_code", [])})
        if kept:
            data["points_from_code"] = kept
        params = config.get("params", {})
        defaults = {q.name: (q.quick if data.get("quick") and q.quick is not None else q.default)
                    for q in exp.params}
        data["settings"] = {k: v for k, v in params.items()
                            if k in defaults and _numbers_as_floats(v)
                            != _numbers_as_floats(defaults[k])}
        out.append(data)
    return out


def _numbers_as_floats(v: Any) -> Any:
    """``v`` with its numbers as floats: a run's params (JSON) and a
    ``Param`` default then compare equal however each spelled 10000."""
    if isinstance(v, list | tuple):
        return [_numbers_as_floats(x) for x in v]
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else v


def write(results: Path = RESULTS_DIR, book: Path = BOOK, figures: Path = FIGURES) -> list[Entry]:
    """Write the book, its figures and its index from ``results`` and from
    the entries of the book before whose runs are not there."""
    index_path = figures / INDEX_NAME
    previous = (json.loads(index_path.read_text()).get("experiments", {})
                if index_path.is_file() else {})
    entries = collect(results, previous)
    figures.mkdir(parents=True, exist_ok=True)
    for e in entries:
        src = run_dir(e.name, results) / "figure.png"
        if e.run and not e.kept and src.is_file():
            e.figure = f"{e.name}.png"
            _small_png(src, figures / e.figure)
        elif e.kept and (figures / f"{e.name}.png").is_file():
            e.figure = f"{e.name}.png"
    rel = _relative(figures, book.parent)
    book.parent.mkdir(parents=True, exist_ok=True)
    book.write_text(render(entries, rel))
    index = {"book": book.name, "experiments": {e.name: e.index() for e in entries}}
    (figures / INDEX_NAME).write_text(json.dumps(index, indent=1, default=str) + "\n")
    return entries


def render(entries: list[Entry], figures: str) -> str:
    ran = [e for e in entries if e.run and not e.stale_record]
    stale = [e.name for e in entries if e.stale_record]
    lines = ["# Results book", "",
             "Every experiment of `intbed list`, run at the paper's defaults (the full sweep, "
             "every repetition) by `intbed reproduce --all` on the machine named with each "
             "run; this page is written from those runs by `intbed reproduce --book-only` and "
             "by nothing else. Each headline gives the paper's value, ours with its 95 % "
             "interval over the repetitions where it has them, a verdict and, where the two "
             "differ, the cause with its evidence.", "", f"**Verdicts.** {RULE}", "",
             f"{len(ran)} of {len(entries)} experiments have a paper-scale run here."]
    if stale:
        lines += ["", f"**Stale:** {len(stale)} more ({', '.join(stale)}) were run by code "
                  "that has changed since; their numbers are shown, flagged, and left out of "
                  "the totals until `intbed reproduce` runs them again."]
    total: Counter[str] = Counter()
    for e in ran:
        total += e.verdicts()
    if ran:
        lines += ["Headlines: " + ", ".join(f"{total[v]} {v}" for v in VERDICTS) + ".", ""]
    lines += ["| experiment | headlines | " + " | ".join(VERDICTS) + " | wall | commit |",
              "| --- | --- | " + " | ".join("---" for _ in VERDICTS) + " | --- | --- |"]
    for e in entries:
        if not e.run:
            lines.append(f"| [{e.name}](#{e.name}) | not run | " +
                         " | ".join("" for _ in VERDICTS) + " | | |")
            continue
        c = e.verdicts()
        commit = (e.index()["commit"] or "?")[:10] + ("` (stale) `" if e.stale_record else "")
        lines.append(f"| [{e.name}](#{e.name}) | {sum(c.values())} | " +
                     " | ".join(str(c[v]) for v in VERDICTS) +
                     f" | {_duration(e.summary.get('wall_s') if e.summary else None)} "
                     f"| `{commit}` |")
    for e in entries:
        lines += ["", f"## {e.name}", "", f"{e.exp.title}. Paper: {e.exp.paper}.", ""]
        if not e.run:
            why = (" (the run in results/ was made before its experiment's code last changed)"
                   if e.stale_run else "")
            lines += [f"Not run at paper scale at this commit{why}: `intbed reproduce "
                      f"{e.name}` runs it and rewrites this page.", ""]
        else:
            lines += _entry(e, figures)
        lines += _crosscheck_lines(e)
    return "\n".join(lines).rstrip() + "\n"


def _entry(e: Entry, figures: str) -> list[str]:
    assert e.summary is not None
    info = e.index()
    m = info.get("machine") or {}
    out = [f"Run: commit `{(info['commit'] or '?')[:12]}`, started {info.get('started')}, "
           f"{_duration(info.get('wall_s'))} wall with {info.get('jobs')} job(s) on "
           f"{m.get('cores', '?')} cores ({m.get('cpu', 'unknown CPU')}).", ""]
    if e.stale_record:
        out += [f"**Stale:** this run was made by the experiment's code as it was then "
                f"(digest {info.get('code')}; {e.digest} now). `intbed reproduce {e.name}` "
                "runs it again and replaces these numbers.", ""]
    if e.figure:
        out += [f"![{e.name}]({figures}/{e.figure})", ""]
    out += [f"*Reading:* {e.reading()}", "",
            "| headline | paper | ours | 95 % CI | verdict | evidence for a difference |",
            "| --- | --- | --- | --- | --- | --- |"]
    for h in e.summary["headlines"]:
        ci = h.get("ci95")
        ci_text = f"± {_num(ci)}" if isinstance(ci, int | float) and math.isfinite(ci) else "-"
        if h.get("n"):
            ci_text += f" (n={h['n']})"
        out.append(f"| {_cell(h['name'])} | {_value(h.get('paper'), h.get('unit'))} "
                   f"| {_value(h.get('ours'), h.get('unit'))} | {ci_text} "
                   f"| {h.get('verdict', 'not comparable')} | {_cell(h.get('note', ''))} |")
    notes = e.summary.get("notes") or []
    if notes:
        out += ["", *[f"- {_cell(n)}" for n in notes]]
    out.append("")
    return out


def _crosscheck_lines(e: Entry) -> list[str]:
    out = []
    for c in e.crosschecks:
        a, b = c["targets"]
        scale = "quick runs" if c.get("quick") else "paper-scale runs"
        verdict = "every headline agrees" if c.get("agree") else "headlines disagree"
        sets = "".join(f" --set {k}={_setting(v)}" for k, v in (c.get("settings") or {}).items())
        for option in ("switch_model", "collector_profile"):
            if c.get(option):
                sets += f" --{option.replace('_', '-')} {c[option]}"
        default_folder = f"{e.name}-quick" if c.get("quick") else e.name
        if c.get("folder") and c["folder"] != default_folder:
            sets += f" --out results/crosscheck/{c['folder']}"
        command = f"intbed crosscheck {e.name}{' --quick' if c.get('quick') else ''}{sets}"
        stale = (f" **Stale:** made by the experiment's code as it was then (digest "
                 f"{c.get('code')}; {e.digest} now); `{command}` makes it again."
                 if c.get("code") != e.digest else "")
        if c.get("points_from_code"):
            stale += (" Some of its runs keep points made by the experiment's code at digest "
                      f"{', '.join(c['points_from_code'])} (`--resume`).")
        out += [f"**Cross-target check** (`{command}`, {scale}, "
                f"seeds 0-{c['seeds'] - 1}): "
                f"{verdict}. A headline agrees when the difference of the means is within "
                f"Welch's 95 % interval of the seeds' spread.{stale}", "",
                f"| headline | {a} | {b} | difference | tolerance | agrees |",
                "| --- | --- | --- | --- | --- | --- |"]
        for r in c["agreements"]:
            out.append(f"| {_cell(r['name'])} | {_num(r['mean_a'])} | {_num(r['mean_b'])} "
                       f"| {_num(r['difference'])} | {_num(r['tolerance'])} "
                       f"| {'yes' if r['agrees'] else 'no'} |")
        out.append("")
        finding = FINDINGS.get(_folder(e.name, c))
        if finding:
            out += [f"*Finding:* {finding}", ""]
    return out


def _setting(v: Any) -> str:
    if isinstance(v, list | tuple):
        return ",".join(_setting(x) for x in v)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def stale(index_path: Path = FIGURES / INDEX_NAME) -> dict[str, str]:
    """Entries made from a run whose experiment code has changed since:
    name to the reason."""
    index = json.loads(index_path.read_text())["experiments"]
    exps = load_all()
    out = {}
    for name, info in index.items():
        if name not in exps:
            out[name] = "the experiment no longer exists"
            continue
        now = code_digest(exps[name])
        for c in info.get("crosschecks", []):
            if c.get("code") != now:
                out[f"{name} (crosscheck)"] = (
                    f"its code changed since the cross-check: rerun intbed crosscheck {name}"
                    f"{' --quick' if c.get('quick') else ''}")
        if not info.get("run"):
            continue
        if info.get("code") != now:
            out[name] = (f"its code changed since the run (digest {info.get('code')} then, "
                         f"{code_digest(exps[name])} now): rerun it with intbed reproduce "
                         f"{name}")
    return out


def _small_png(src: Path, dst: Path) -> None:
    from PIL import Image

    with Image.open(src) as im:
        if im.width > FIGURE_WIDTH:
            im = im.resize((FIGURE_WIDTH, round(im.height * FIGURE_WIDTH / im.width)),
                           Image.Resampling.LANCZOS)
        im.convert("P", palette=Image.Palette.ADAPTIVE, colors=128).save(dst, optimize=True)


def _relative(path: Path, start: Path) -> str:
    import os

    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()


def _num(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else "-"
    return str(v)


def _value(v: Any, unit: str | None) -> str:
    return _num(v) + (f" {unit}" if unit and v is not None else "")


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _duration(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 120:
        return f"{s:.0f} s"
    return f"{s / 60:.1f} min"
