"""Sweeps on Dask and resumed sweeps (``experiments.sweep``): the same
files, byte for byte, as a local run; a worker killed mid-sweep costs no
point; a failed sweep keeps what it finished and ``--resume`` runs only the
rest; bad cluster addresses and foreign ``--resume`` directories are
refused with the reason."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from experiments.framework import ExperimentError, run_experiment
from experiments.sweep import SweepError

distributed = pytest.importorskip("distributed", reason="Dask's distributed is not installed "
                                  "(make install installs it)")

EXP = "gpint-fig10"
SMALL = {"sizes": "20,30", "planners": "gpint-3,snmp", "sessions": "1"}
FILES = ("metrics.csv", "repetitions.csv", "summary.json")


def _run(out: Path, **kw: Any) -> Path:
    return run_experiment(EXP, dict(SMALL), quick=True, out=out, **kw)


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory.mktemp("local") / "run")


def _same_files(a: Path, b: Path) -> None:
    for name in FILES:
        if name == "summary.json":  # all but when the run finished and how long it took
            when = ("wall_s", "finished")
            sa, sb = (json.loads((d / name).read_text()) for d in (a, b))
            assert {k: v for k, v in sa.items() if k not in when} == \
                {k: v for k, v in sb.items() if k not in when}, name
            continue
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_a_local_cluster_run_writes_the_same_files(local_run: Path, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    out = _run(tmp_path / "dask", cluster="local:2",
               progress=lambda label, done, total: seen.append((done, total)))
    _same_files(local_run, out)
    assert seen[0] == (0, 4) and seen[-1] == (4, 4)
    assert len(list((out / "points").rglob("*.pkl"))) == 4  # every point journaled


def test_a_worker_killed_mid_sweep_costs_no_point(local_run: Path, tmp_path: Path) -> None:
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        pids = list(client.run(os.getpid).values())
        killed: list[int] = []

        def progress(label: str, done: int, total: int) -> None:
            if done == 1 and not killed:  # one point in, the others running
                killed.append(pids[0])
                os.kill(pids[0], signal.SIGKILL)

        out = _run(tmp_path / "killed", cluster=cluster.scheduler_address, progress=progress)
    assert killed
    _same_files(local_run, out)


def test_a_failed_sweep_keeps_its_points_and_resume_finishes_it(
        local_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import experiments.gpint.figures as figs

    real = figs.run_point
    calls: list[Any] = []

    def flaky(args: Any) -> dict[str, Any]:
        calls.append(args[0])
        if len(calls) == 3:
            raise RuntimeError("the machine went away")
        return real(args)

    monkeypatch.setattr(figs, "run_point", flaky)
    out = tmp_path / "flaky"
    with pytest.raises(RuntimeError, match="went away"):
        _run(out)
    assert len(list((out / "points").rglob("*.pkl"))) == 2
    with pytest.raises(ExperimentError, match=r"an unfinished run is here \(no summary.json; "
                                              r"2 point\(s\) finished\): finish it with "
                                              r"--resume"):
        _run(out)
    calls.clear()
    _run(out, resume=True)
    assert len(calls) == 2  # only the points the first attempt did not finish
    _same_files(local_run, out)


def test_resume_refuses_another_run_directory(local_run: Path) -> None:
    with pytest.raises(ExperimentError, match=r"--resume refused.*sizes \(\[20, 30\] there, "
                                              r"\[20\] now\)"):
        run_experiment(EXP, {**SMALL, "sizes": "20"}, quick=True, out=local_run, resume=True)
    with pytest.raises(ExperimentError, match=r"--resume refused.*experiment"):
        run_experiment("gpint-fig13", dict(SMALL), quick=True, out=local_run, resume=True)


def test_an_unreachable_scheduler_is_one_clear_line_within_ten_seconds(tmp_path: Path) -> None:
    t0 = time.monotonic()
    with pytest.raises(SweepError, match=r"tcp://127\.0\.0\.1:9: no Dask scheduler answered "
                                         r"within 10 s") as info:
        _run(tmp_path / "nowhere", cluster="tcp://127.0.0.1:9")
    assert time.monotonic() - t0 < 15
    assert "\n" not in str(info.value)
    with pytest.raises(SweepError, match="'local:N' needs a number of workers"):
        _run(tmp_path / "bad", cluster="local:zero")


def test_force_computes_every_point_again(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import experiments.gpint.figures as figs

    out = tmp_path / "run"
    _run(out)
    real = figs.run_point
    calls: list[Any] = []

    def counted(args: Any) -> dict[str, Any]:
        calls.append(args[0])
        return real(args)

    monkeypatch.setattr(figs, "run_point", counted)
    _run(out, force=True)
    finished = len(list((out / "points").rglob("*.pkl")))
    assert len(calls) == finished > 0  # none taken from the earlier run's journal


def test_a_list_parameter_reads_as_intbed_list_prints_it() -> None:
    from experiments.framework import ExperimentError, Param

    sizes = Param("sizes", [20, 40], "network sizes")
    planners = Param("planners", ["gpint-2"], "planners")
    assert sizes.convert("20,40") == sizes.convert("[20, 40]") == [20, 40]
    assert sizes.convert("[20]") == [20]
    assert planners.convert("['gpint-2', 'euler']") == ["gpint-2", "euler"]
    with pytest.raises(ExperimentError, match=r"comma-separated values"):
        sizes.convert("[twenty]")


def test_resume_says_which_code_made_the_points_it_keeps(local_run: Path,
                                                         tmp_path: Path) -> None:
    """Points kept across a change of the experiment's code are the old
    code's results: the resumed run records that code's digest, and keeps
    recording it when resumed again."""
    out = tmp_path / "copy"
    shutil.copytree(local_run, out)
    config = json.loads((out / "config.json").read_text())
    now = config["code"]
    (out / "config.json").write_text(json.dumps({**config, "code": "0" * 16}))
    _run(out, resume=True)
    again = json.loads((out / "config.json").read_text())
    assert again["code"] == now and again["points_from_code"] == ["0" * 16]
    _run(out, resume=True)
    assert json.loads((out / "config.json").read_text())["points_from_code"] == ["0" * 16]
    same = tmp_path / "same"
    shutil.copytree(local_run, same)
    _run(same, resume=True)  # made by the code as it is: nothing to say
    assert "points_from_code" not in json.loads((same / "config.json").read_text())
