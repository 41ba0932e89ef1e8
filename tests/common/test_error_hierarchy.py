"""One error hierarchy: every user-facing error is an IntbedError and reaches
the user as one line through the CLI's single error path."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from common.errors import IntbedError, InvalidValueError, Loc
from controller.p4rt.errors import P4RuntimeError, UnknownNameError
from dataplane.testing.netns import NamespaceError
from intbed.cli import IntbedGroup
from traffic.errors import TrafficError


def test_line_forms() -> None:
    assert IntbedError("bad").line() == "error: bad"
    assert IntbedError("bad", Loc("a.p4", 3, 7)).line() == "a.p4:3:7: error: bad"
    err = P4RuntimeError("NOT_FOUND", "no such table", index=2)
    assert str(err) == "NOT_FOUND (update 2): no such table"
    assert err.line() == "error: NOT_FOUND (update 2): no such table"


@pytest.mark.parametrize("exc", [
    P4RuntimeError("PERMISSION_DENIED", "not primary"),
    UnknownNameError("no table 'x'"),
    InvalidValueError("TTL must be positive"),
    TrafficError("rate must be positive"),
    NamespaceError("ip link failed"),
])
def test_user_facing_errors_share_the_base(exc: Exception) -> None:
    assert isinstance(exc, IntbedError)


def test_library_callers_keep_their_builtin_classes() -> None:
    assert isinstance(InvalidValueError("x"), ValueError)
    assert isinstance(UnknownNameError("x"), KeyError)
    assert isinstance(NamespaceError("x"), RuntimeError)


@pytest.mark.parametrize("exc, line", [
    (P4RuntimeError("PERMISSION_DENIED", "not primary"), "error: PERMISSION_DENIED: not primary"),
    (InvalidValueError("TTL must be positive"), "error: TTL must be positive"),
    (IntbedError("bad", Loc("t.yaml", 4)), "t.yaml:4: error: bad"),
])
def test_the_cli_prints_one_line_and_exits_1(exc: Exception, line: str) -> None:
    @click.group(cls=IntbedGroup)
    def cli() -> None:
        pass

    @cli.command()
    def boom() -> None:
        raise exc

    result = CliRunner().invoke(cli, ["boom"])
    assert result.exit_code == 1
    assert result.stderr.strip() == line
