"""``intbed accel``: status names each hot module and shipped pipeline and
whether a build of its current source exists; clean removes the builds."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from common import accel
from intbed.cli import cli


def test_status_and_clean_in_an_empty_artifact_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(accel.DIR_ENV, str(tmp_path))
    runner = CliRunner()
    out = runner.invoke(cli, ["accel", "status"])
    assert out.exit_code == 0, out.output
    for name in accel.MODULES:
        assert f"{name} " in out.output
    lines = [ln for ln in out.output.splitlines() if ln.startswith("  ")]
    assert len(lines) >= len(accel.MODULES) + 2 and all(ln.endswith("not built") for ln in lines)
    assert "pipeline l3_forward.p4" in out.output and "pipeline gpint.p4" in out.output

    accel.accel_dir().mkdir(parents=True)
    (accel.accel_dir() / "x.so").write_bytes(b"")
    out = runner.invoke(cli, ["accel", "clean"])
    assert out.exit_code == 0 and not accel.accel_dir().exists(), out.output
