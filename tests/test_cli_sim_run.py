"""intbed sim ping with programs that need a control plane, and intbed run
--quiet, through the real command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from intbed.cli import cli

INT_LABEL = Path(__file__).resolve().parents[1] / "p4src" / "intlabel.p4"


def ping(*args: str) -> tuple[int, dict, str]:
    result = CliRunner().invoke(cli, ["sim", "ping", "--json", *args], prog_name="intbed")
    return result.exit_code, json.loads(result.stdout), result.stderr


def test_intlabel_gets_its_switch_setup_and_every_pair_answers() -> None:
    code, report, err = ping("--program", str(INT_LABEL))
    summary = report["summary"]
    hosts = summary["hosts"]
    assert summary["pairs"] == hosts * (hosts - 1)
    assert (summary["reachable"], summary["lost"], summary["altered_frames"]) == (
        summary["pairs"], 0, 0)
    # INT-label's headers lengthen frames inside the fabric: reported, not a failure.
    assert code == 0
    if summary["not_matching_link_delays"]:
        assert "adds telemetry headers" in err


def test_without_its_control_plane_altered_frames_earn_a_warning() -> None:
    code, report, err = ping("--program", "intlabel", "--no-control-plane")
    summary = report["summary"]
    assert code == 1 and summary["lost"] > 0 and summary["altered_frames"] > 0
    assert err == (f"warning: {summary['altered_frames']} frame(s) reached hosts altered "
                   "(not an ICMP echo as sent): intlabel needs its control plane "
                   "(drop --no-control-plane)\n")


def test_plain_forwarding_needs_no_setup_and_warns_nothing() -> None:
    code, report, err = ping("--program", "l3_forward", "--topo", "line", "--n", "3")
    summary = report["summary"]
    assert (code, err) == (0, "")
    assert summary["lost"] == 0 and summary["altered_frames"] == 0


def test_run_quiet_prints_no_progress(tmp_path: Path) -> None:
    """stderr is a pipe here, where progress would be plain lines."""
    cmd = [sys.executable, "-m", "intbed.cli", "run", "gpint-fig10", "--quick", "--quiet",
           "--out", str(tmp_path / "r"), "--set", "sizes=20", "--set", "planners=snmp",
           "--set", "sessions=1", "--set", "warmup_s=0.2", "--set", "duration_s=0.5"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith(f"results: {tmp_path / 'r'}\n")
    assert (tmp_path / "r" / "summary.json").is_file()
