"""``intbed bench sim --against``/``--against-pure`` without
``--instructions``: alternating wall-clock runs of two versions, each pair
with its ratios, and their medians."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from benchmarks import pairs
from benchmarks.pairs import bench_once, compare_wall, pair_row
from benchmarks.sim import ran_as_python
from common.errors import IntbedError
from intbed.cli import cli
from intbed.commands.bench import _pairs_table


def _report(fabric: float, gpint: float, wall: float, rss: float) -> dict[str, Any]:
    return {"fabric": {"realtime_factor": fabric}, "gpint": {"realtime_factor": gpint},
            "fat_tree": {"wall_s": wall, "peak_rss_mb": rss}}


def test_a_pair_is_ratios_of_rates_and_of_times_inverted() -> None:
    row = pair_row(_report(60.0, 2.0, 0.5, 88.0), _report(40.0, 1.6, 0.75, 89.0))
    assert row["fabric"] == {"this": 60.0, "against": 40.0, "ratio": 1.5}
    assert row["gpint"]["ratio"] == 1.25
    # Less wall time is faster: the other run's time over this one's.
    assert row["fat_tree"]["ratio"] == 1.5
    assert (row["fat_tree"]["this_peak_rss_mb"], row["fat_tree"]["against_peak_rss_mb"]) == (
        88.0, 89.0)


def test_this_checkout_against_itself_without_its_fast_path() -> None:
    report = compare_wall(None, 1, seconds=0.1, k=2, against_pure=True)
    assert report["against"] == "pure Python" and len(report["pairs"]) == 1
    row = report["pairs"][0]
    for case in ("fabric", "gpint"):
        assert row[case]["this"] > 0 and row[case]["against"] > 0
        assert row[case]["ratio"] == round(row[case]["this"] / row[case]["against"], 3)
        assert report["median"][case]["ratio"] == row[case]["ratio"]


def test_a_failing_checkout_is_reported_with_its_error(tmp_path: Path) -> None:
    pkg = tmp_path / "intbed"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "cli.py").write_text("import sys\nprint('no such command', file=sys.stderr)\n"
                                "sys.exit(3)\n")
    with pytest.raises(IntbedError, match=r"failed \(exit 3\): no such command"):
        bench_once(tmp_path, 0.1, 2)


def test_one_baseline_at_a_time() -> None:
    with pytest.raises(IntbedError, match="one of another checkout and --against-pure"):
        compare_wall(None, 1)


def test_the_command_prints_one_json_object() -> None:
    result = CliRunner().invoke(cli, ["bench", "sim", "--against-pure", "--pairs", "1",
                                      "--seconds", "0.1", "--k", "2", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["against"] == "pure Python" and len(report["pairs"]) == 1


def test_a_wall_clock_baseline_does_not_mix_with_bound() -> None:
    result = CliRunner().invoke(cli, ["bench", "sim", "--against-pure", "--bound", "fabric"])
    assert result.exit_code == 2
    assert "not --profile, --sample or --bound" in result.output


def _with_fast_path(report: dict[str, Any], python: list[str], unbuilt: list[str],
                    enabled: bool = True) -> dict[str, Any]:
    return {**report, "fast_path": {
        "enabled": enabled, "modules": {"traffic.sender": "compiled",
                                        **dict.fromkeys(python, "python")},
        "pipelines": {"l3_forward": True, **dict.fromkeys(unbuilt, False)}}}


def test_the_parts_either_side_ran_as_python_are_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout whose build is stale benches its changed parts as Python:
    the comparison names them for each side, over all its pairs, and the
    table warns; a run with the fast path off (or a report without the
    section, an older checkout's) names none."""
    runs = iter([
        _with_fast_path(_report(60.0, 3.0, 0.5, 87.0), [], ["gpint"]),
        _with_fast_path(_report(50.0, 2.0, 0.6, 87.0), ["traffic.receiver"], []),
        _with_fast_path(_report(60.0, 3.0, 0.5, 87.0), [], []),
        _report(50.0, 2.0, 0.6, 87.0),
    ])
    monkeypatch.setattr(pairs, "bench_once", lambda root, seconds, k, pure=False: next(runs))
    report = compare_wall(tmp_path, 2, seconds=0.1, k=2)
    assert report["ran_as_python"] == {"this": ["gpint.p4"], "against": ["traffic.receiver"]}
    lines: list[str] = []
    console = type("C", (), {"print": staticmethod(lines.append)})()
    _pairs_table(console, report)
    warnings = [line for line in lines if "ran as Python, not built" in line]
    assert len(warnings) == 2
    assert "this checkout" in warnings[0] and "gpint.p4" in warnings[0]
    assert str(tmp_path) in warnings[1] and "traffic.receiver" in warnings[1]
    off = _with_fast_path(_report(1.0, 1.0, 1.0, 1.0), ["traffic.receiver"], ["gpint"], False)
    assert ran_as_python(off) == [] and ran_as_python(_report(1.0, 1.0, 1.0, 1.0)) == []
