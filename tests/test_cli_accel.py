"""``intbed accel``: status names each hot module and shipped pipeline and
whether a build of its current source exists; clean removes the builds."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from fastpath import loader
from intbed.cli import cli


def test_status_and_clean_in_an_empty_artifact_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(loader.DIR_ENV, str(tmp_path))
    runner = CliRunner()
    out = runner.invoke(cli, ["accel", "status"])
    assert out.exit_code == 0, out.output
    for name in loader.MODULES:
        assert f"{name} " in out.output
    lines = [ln for ln in out.output.splitlines() if ln.startswith("  ")]
    assert len(lines) >= len(loader.MODULES) + 2 and all(ln.endswith("not built") for ln in lines)
    assert "pipeline l3_forward.p4" in out.output and "pipeline gpint.p4" in out.output

    loader.accel_dir().mkdir(parents=True)
    (loader.accel_dir() / "x.so").write_bytes(b"")
    out = runner.invoke(cli, ["accel", "clean"])
    assert out.exit_code == 0 and not loader.accel_dir().exists(), out.output


def test_the_profile_guided_build_trains_what_its_workload_runs() -> None:
    from benchmarks.sim import PROGRAMS
    from fastpath.build import Job, module_job
    from intbed.commands.accel import TRAINING, _trained

    # Every hot module and the benchmarks' pipelines; no other pipeline.
    pipelines = [(f"{name}.p4", Job(f"p4gen_{name}", "", Path(f"{name}.so")))
                 for name in (*PROGRAMS, "intlabel")]
    trained = _trained(pipelines)
    assert all(module_job(name).name in trained for name in loader.MODULES)
    for name in PROGRAMS:
        assert f"p4gen_{name}" in trained
    assert "p4gen_intlabel" not in trained
    # The workload is a command the CLI takes as it stands.
    ctx = cli.make_context("intbed", list(TRAINING))
    sub = cli.get_command(ctx, TRAINING[0])
    assert sub is not None
    sub_ctx = sub.make_context(TRAINING[0], list(TRAINING[1:]), parent=ctx)
    leaf = sub.get_command(sub_ctx, TRAINING[1])
    params = leaf.make_context(TRAINING[1], list(TRAINING[2:]), parent=sub_ctx).params
    assert params["seconds"] == 1.0 and params["k"] == 4 and params["as_json"] is True
