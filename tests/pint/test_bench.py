"""intbed bench pint: every case reports its items and both rates
(structure only: speed is measured by running the benchmark, not here)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from intbed.commands.bench import bench

CASES = ("hop_words", "encode", "decode", "ingest", "kll")


def test_bench_pint_json() -> None:
    result = CliRunner().invoke(bench, ["pint", "--packets", "10000", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["packets"] == 10000 and report["flows"] == 2 and report["hops"] == 36
    for case in CASES:
        row = report[case]
        assert row["items"] == 10000
        assert row["cpu_s"] >= 0 and row["wall_s"] > 0
        assert row["per_s_wall"] > 0
        assert row["per_s_cpu"] is None or row["per_s_cpu"] > 0  # None: below the CPU clock


def test_bench_pint_refuses_tiny_runs() -> None:
    result = CliRunner().invoke(bench, ["pint", "--packets", "10"])
    assert result.exit_code == 2
    assert "5000<=x<=20000000" in result.output
