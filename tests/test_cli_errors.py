"""The command line's one error path, --version, and the small texts users
read first: exit statuses 0/1/2/70/130, one line per error, never a traceback."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from common.errors import IntbedError, Loc
from intbed.cli import EXIT_INTERNAL, cli

REPO = Path(__file__).resolve().parents[1]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), prog_name="intbed")
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture()
def raising_command():
    """A throwaway subcommand that raises what the test names."""
    errors = {
        "bug": lambda: RuntimeError("boom"),
        "missing": lambda: FileNotFoundError(2, "No such file or directory", "/x/y.csv"),
        "denied": lambda: PermissionError(13, "Permission denied", "/root/z"),
        "key": lambda: KeyError("switch"),
        "quoted": lambda: IntbedError("no parameter 'a\nb\x1e'", Loc("f.yaml", 3)),
    }

    @cli.command("_raise")
    @click.argument("what")
    def _raise(what: str) -> None:
        raise errors[what]()

    yield
    cli.commands.pop("_raise")


def test_a_bug_is_one_internal_error_line_and_exit_70(raising_command) -> None:
    assert EXIT_INTERNAL == 70
    code, out, err = run("_raise", "bug")
    assert (code, out) == (70, "")
    assert err == ("internal error: RuntimeError: boom "
                   "(rerun with --debug for the traceback)\n")
    code, _, err = run("_raise", "key")
    assert code == 70 and err.startswith("internal error: KeyError: 'switch' (rerun")


def test_debug_lets_the_traceback_through(raising_command) -> None:
    result = CliRunner().invoke(cli, ["--debug", "_raise", "bug"])
    assert isinstance(result.exception, RuntimeError) and str(result.exception) == "boom"
    assert "internal error" not in result.stderr


def test_a_file_the_machine_refuses_is_a_user_error(raising_command) -> None:
    assert run("_raise", "missing") == (1, "", "/x/y.csv: error: No such file or directory\n")
    assert run("_raise", "denied") == (1, "", "/root/z: error: Permission denied\n")


def test_an_error_quoting_control_characters_stays_one_line(raising_command) -> None:
    assert run("_raise", "quoted") == (
        1, "", "f.yaml:3: error: no parameter 'a\\nb\\x1e'\n")
    code, _, err = run("run", "gpint-fig10", "--out", "/nonexistent/never", "--set", "0\n0=1")
    assert code == 1 and err.count("\n") == 1 and "'0\\n0'" in err


@pytest.mark.parametrize("args", [
    ["--no-such-option"],
    ["p4", "check"],
    ["p4", "check", "/no/such/file.p4"],
    ["topo", "show", "line", "--n", "three"],
    ["run", "intlabel-fig9", "--jobs", "0"],
])
def test_usage_errors_keep_clicks_exit_status_2(args: list[str]) -> None:
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert err.startswith("Usage: intbed") and "Error: " in err and "Traceback" not in err


def test_version_names_code_python_and_tools() -> None:
    from importlib import metadata

    code, out, err = run("--version")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"intbed {metadata.version('intbed')}"
    if (REPO / ".git").exists() and shutil.which("git"):
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        assert lines[1].startswith(f"commit {head}")
    assert f"Python {sys.version.split()[0]} (CPython)" in lines
    for label, program in [("p4c", "p4c"), ("BMv2 (simple_switch_grpc)", "simple_switch_grpc"),
                           ("redis-server", "redis-server"), ("influxd", "influxd"),
                           ("mnexec", "mnexec")]:
        assert f"{label}: {shutil.which(program) or 'not found'}" in lines


def test_help_states_the_exit_statuses() -> None:
    code, out, _ = run("--help")
    assert code == 0
    assert "--debug" in out and "--version" in out
    assert "2 a command-line usage error" in " ".join(out.split())


def test_unknown_experiment_lists_figures_in_natural_order() -> None:
    code, out, err = run("run", "nosuch-fig1", "--out", "/nonexistent/never-written")
    assert code == 1
    names = err.split("(", 1)[1].rstrip(")\n").split(", ")
    assert names.index("intlabel-fig6") < names.index("intlabel-fig10")
    assert names.index("gpint-fig8") < names.index("gpint-fig10")


def test_switch_help_explains_every_option() -> None:
    exe = Path(sys.executable).with_name("intbed-switch")
    if not exe.exists():
        pytest.skip(f"intbed-switch is not installed beside {sys.executable}")
    out = subprocess.run([str(exe), "--help"], capture_output=True, text=True,
                         check=True).stdout
    flat = " ".join(out.split())
    for option, words in [("--interface PORT@IFACE", "attach Linux interface IFACE"),
                          ("--device-id N", "P4Runtime device id"),
                          ("--log-console", "log to standard output"),
                          ("--log-file FILE", "log to FILE")]:
        assert f"{option} {words}" in flat, option


def test_readme_says_as_root_not_sudo_intbed() -> None:
    readme = (REPO / "README.md").read_text()
    commands = [ln for ln in readme.splitlines() if ln.lstrip().startswith("sudo intbed")]
    assert commands == []
    assert "# as root" in readme
    assert "2 a command-line usage error, exactly as click" in " ".join(readme.split())


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path: Path) -> None:
    """``intbed ... | head``: no 'Broken pipe' line, no traceback, exit 1."""
    for ext in (".p4", ".stf"):
        shutil.copy(REPO / "tests" / "p4" / ("exit" + ext), tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "intbed.cli", "p4", "conformance",
                             str(tmp_path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=REPO)
    assert proc.stdout is not None
    # Closed before the command can have written anything (its imports alone
    # take longer), so its first line meets a pipe nobody reads.
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert (proc.returncode, err) == (1, b"")


def test_an_unknown_collector_profile_is_a_usage_error(tmp_path: Path) -> None:
    code, out, err = run("run", "intlabel-fig12", "--quick", "--out", str(tmp_path / "r"),
                         "--collector-profile", "sparc")
    assert code == 2 and "Traceback" not in err
    assert "unknown collector profile 'sparc'" in err and "amd-epyc, intel-xeon" in err
    assert not (tmp_path / "r").exists()  # refused before anything is written
    bad = tmp_path / "host.yaml"
    bad.write_text("item_us: 1\n")
    code, _, err = run("crosscheck", "intlabel-fig12", "--quick", "--collector-profile",
                       str(bad))
    assert code == 2 and f"{bad}: missing item_idle_us, change_us" in err
