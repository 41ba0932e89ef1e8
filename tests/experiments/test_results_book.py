"""The results book: written from runs only, flagged when stale, and the
committed one current and complete for the runs it holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from experiments import book
from experiments.framework import ExperimentError, code_digest, get, load_all
from experiments.reproduce import reproduce, run_dir, selected
from intbed.cli import cli

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "results.md"
INDEX = ROOT / "docs" / "results" / book.INDEX_NAME
NAME = "pint-quantiles"


def _fake_run(results: Path, name: str, heads: list[dict], code: str | None = None,
              quick: bool = False) -> Path:
    path = run_dir(name, results)
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({
        "experiment": name, "versions": {"commit": "0123456789abcdef"}, "jobs": 2,
        "machine": {"cores": 2, "cpu": "a test CPU"}, "started": "2026-12-02T10:00:00",
        "code": code if code is not None else code_digest(get(name))}))
    (path / "summary.json").write_text(json.dumps({
        "experiment": name, "quick": quick, "wall_s": 125.0, "headlines": heads,
        "notes": ["a note of the run"]}))
    return path


HEADS = [
    {"name": "a matched value", "ours": 10.5, "paper": 10.0, "unit": "%", "ci95": 0.3,
     "verdict": "reproduced"},
    {"name": "an unmatched | value", "ours": 43.0, "paper": 15.0, "unit": "%",
     "verdict": "not reproduced", "note": "Euler's paths are long"},
]


def test_the_book_is_written_from_the_runs_and_names_the_rest_not_run(tmp_path: Path) -> None:
    results = tmp_path / "results"
    _fake_run(results, NAME, HEADS)
    _fake_run(results, "pint-cc", HEADS, quick=True)  # not paper scale: not in the book
    target = tmp_path / "docs" / "results.md"
    entries = book.write(results, target, tmp_path / "docs" / "results")
    text = target.read_text()
    assert [e.name for e in entries if e.run] == [NAME]
    assert len(entries) == len(load_all())
    assert f"1 of {len(entries)} experiments have a paper-scale run" in text
    assert "| a matched value | 10 % | 10.5 % | ± 0.3 | reproduced |" in text
    assert "an unmatched \\| value" in text and "Euler's paths are long" in text
    assert "2.1 min wall with 2 job(s) on 2 cores (a test CPU)" in text
    assert "Not run at paper scale at this commit: `intbed reproduce pint-cc`" in text
    index = json.loads((tmp_path / "docs" / "results" / book.INDEX_NAME).read_text())
    assert index["experiments"][NAME]["commit"] == "0123456789abcdef"
    assert index["experiments"]["pint-cc"] == {"run": False}


def test_an_entry_whose_experiment_code_changed_is_stale(tmp_path: Path) -> None:
    results = tmp_path / "results"
    _fake_run(results, NAME, HEADS)
    book.write(results, tmp_path / "results.md", tmp_path / "figs")
    index = tmp_path / "figs" / book.INDEX_NAME
    assert book.stale(index) == {}
    data = json.loads(index.read_text())
    data["experiments"][NAME]["code"] = "0" * 16  # as if the code changed since
    index.write_text(json.dumps(data))
    flagged = book.stale(index)
    assert list(flagged) == [NAME]
    assert "intbed reproduce pint-quantiles" in flagged[NAME]


def test_a_run_made_by_other_code_is_left_out_of_the_book(tmp_path: Path) -> None:
    results = tmp_path / "results"
    _fake_run(results, NAME, HEADS, code="0" * 16)
    entries = book.write(results, tmp_path / "results.md", tmp_path / "figs")
    assert not any(e.run for e in entries)
    assert "Not run at paper scale at this commit (the run in results/ was made before" in \
        (tmp_path / "results.md").read_text()


def _fake_crosscheck(results: Path, name: str, code: str, folder: str | None = None,
                     params: dict | None = None, **report: str) -> None:
    where = results / "crosscheck" / (folder or f"{name}-quick")
    (where / "sim" / "seed0").mkdir(parents=True)
    (where / "sim" / "seed0" / "config.json").write_text(json.dumps({"code": code,
                                                                     "params": params or {}}))
    (where / "crosscheck.json").write_text(json.dumps({
        "experiment": name, "targets": ["sim", "mininet"], "seeds": 3, "quick": True,
        "agree": False, "agreements": [
            {"name": "coverage", "mean_a": 0.99, "mean_b": 0.97, "difference": -0.02,
             "tolerance": 0.01, "agrees": False}], **report}))


def test_a_crosscheck_is_in_the_book_and_goes_stale_with_its_code(tmp_path: Path) -> None:
    results = tmp_path / "results"
    _fake_crosscheck(results, NAME, code_digest(get(NAME)))
    _fake_crosscheck(results, "pint-cc", "0" * 16)  # by other code: shown, flagged
    book.write(results, tmp_path / "results.md", tmp_path / "figs")
    text = (tmp_path / "results.md").read_text()
    assert "`intbed crosscheck pint-quantiles --quick`, quick runs, seeds 0-2): headlines " \
           "disagree. A headline agrees when the difference of the means is within Welch's " \
           "95 % interval of the seeds' spread.\n" in text
    assert "| coverage | 0.99 | 0.97 | -0.02 | 0.01 | no |" in text
    assert (f"seeds' spread. **Stale:** made by the experiment's code as it was then (digest "
            f"{'0' * 16}; {code_digest(get('pint-cc'))} now); `intbed crosscheck pint-cc "
            "--quick` makes it again.") in text
    index = tmp_path / "figs" / book.INDEX_NAME
    data = json.loads(index.read_text())
    data["experiments"][NAME]["crosschecks"][0]["code"] = "0" * 16
    index.write_text(json.dumps(data))
    assert set(book.stale(index)) == {f"{NAME} (crosscheck)", "pint-cc (crosscheck)"}


def test_resume_keeps_a_finished_run_and_runs_nothing(tmp_path: Path) -> None:
    path = _fake_run(tmp_path, NAME, HEADS)
    done = reproduce([NAME], resume=True, results=tmp_path)
    assert [(d.name, d.path, d.reused) for d in done] == [(NAME, path, True)]


def test_resume_runs_again_a_run_whose_code_changed(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import experiments.reproduce as rep

    _fake_run(tmp_path, NAME, HEADS, code="0" * 16)
    calls = []
    monkeypatch.setattr(rep, "run_experiment", lambda name, **kw: calls.append((name, kw))
                        or tmp_path)
    done = reproduce([NAME], resume=True, results=tmp_path)
    assert [d.reused for d in done] == [False]
    assert calls[0][0] == NAME and calls[0][1]["force"] is True
    assert calls[0][1]["resume"] is False and calls[0][1]["quick"] is False


def test_names_are_checked_before_anything_runs() -> None:
    with pytest.raises(ExperimentError, match="unknown experiment"):
        selected(["pint-quantiles", "no-such-figure"], False)
    with pytest.raises(ExperimentError, match="or give --all"):
        selected([], False)
    assert selected([], True)[0] == "flowcache-fig3"


def test_the_command_refuses_conflicting_options(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["reproduce", "--resume", "--force", NAME])
    assert result.exit_code == 2 and "give one" in result.output


def test_the_committed_book_is_current() -> None:
    assert book.stale(INDEX) == {}


def test_the_committed_book_covers_every_experiment_and_headline() -> None:
    index = json.loads(INDEX.read_text())["experiments"]
    assert set(index) == set(load_all())
    text = COMMITTED.read_text()
    for name, info in index.items():
        assert f"## {name}\n" in text
        for h in info.get("headlines", []):
            assert f"| {book._cell(h['name'])} |" in text, (name, h["name"])
            assert h["verdict"] in book.VERDICTS


def test_the_readme_names_every_experiment() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = [n for n in load_all() if f"`{n}`" not in readme]
    assert not missing, f"README.md's experiment list lacks {missing}"


def test_rewriting_the_book_keeps_entries_whose_runs_are_elsewhere(tmp_path: Path) -> None:
    results, figs, target = tmp_path / "results", tmp_path / "figs", tmp_path / "results.md"
    _fake_run(results, NAME, HEADS)
    _fake_crosscheck(results, NAME, code_digest(get(NAME)))
    book.write(results, target, figs)
    first = target.read_text()
    # Another machine, or a fresh clone: no results/, the book rewritten.
    entries = book.write(tmp_path / "elsewhere", target, figs)
    assert target.read_text() == first
    assert [e.name for e in entries if e.kept] == [NAME]
    # An entry whose code has changed since is kept, flagged and left out of
    # the totals, and the book stays stale until it is run again.
    data = json.loads((figs / book.INDEX_NAME).read_text())
    data["experiments"][NAME]["code"] = "0" * 16
    data["experiments"][NAME]["crosschecks"][0]["code"] = "0" * 16
    (figs / book.INDEX_NAME).write_text(json.dumps(data))
    entries = book.write(tmp_path / "elsewhere", target, figs)
    text = target.read_text()
    assert [e.name for e in entries if e.stale_record] == [NAME]
    assert f"0 of {len(entries)} experiments have a paper-scale run here." in text
    assert f"**Stale:** 1 more ({NAME}) were run by code that has changed since" in text
    assert "| a matched value | 10 % | 10.5 % | ± 0.3 | reproduced |" in text
    assert "intbed crosscheck pint-quantiles --quick` makes it again." in text
    assert set(book.stale(figs / book.INDEX_NAME)) == {NAME, f"{NAME} (crosscheck)"}
    # Its run and cross-check by the code as it is (in results/) replace it.
    entries = book.write(results, target, figs)
    assert not any(e.stale_record for e in entries)
    assert "**Stale:**" not in target.read_text()
    assert book.stale(figs / book.INDEX_NAME) == {}


def test_a_crosscheck_with_its_own_settings_says_them_and_its_finding(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = tmp_path / "results"
    exp = get(NAME)
    param = exp.params[0]
    quick = param.quick if param.quick is not None else param.default
    other = [7.0] if isinstance(quick, list) else 7
    _fake_crosscheck(results, NAME, code_digest(exp))
    _fake_crosscheck(results, NAME, code_digest(exp), folder=f"{NAME}-quick-other",
                     params={param.name: other})
    _fake_crosscheck(results, "pint-quantiles-x", code_digest(exp), folder=f"{NAME}x")
    _fake_crosscheck(results, NAME, code_digest(exp), folder=f"{NAME}-quick-host",
                     collector_profile="amd-epyc")
    live_seed = results / "crosscheck" / f"{NAME}-quick-host" / "mininet" / "seed0"
    live_seed.mkdir(parents=True)
    (live_seed / "config.json").write_text(json.dumps({"points_from_code": ["f" * 16]}))
    monkeypatch.setitem(book.FINDINGS, f"{NAME}-quick-other", "found: the host's CPU")
    entries = book.write(results, tmp_path / "results.md", tmp_path / "figs")
    text = (tmp_path / "results.md").read_text()
    assert f"`intbed crosscheck {NAME} --quick`," in text
    # Its own folder and the sim's collector profile are in the command.
    assert (f"`intbed crosscheck {NAME} --quick --set {param.name}=7 --out "
            f"results/crosscheck/{NAME}-quick-other`,") in text
    assert (f"`intbed crosscheck {NAME} --quick --collector-profile amd-epyc --out "
            f"results/crosscheck/{NAME}-quick-host`,") in text
    assert text.count("*Finding:* found: the host's CPU") == 1
    assert text.count("Some of its runs keep points made by the experiment's code at "
                      f"digest {'f' * 16} (`--resume`).") == 1
    assert [c["folder"] for e in entries if e.name == NAME for c in e.crosschecks] == [
        f"{NAME}-quick", f"{NAME}-quick-host", f"{NAME}-quick-other"]
