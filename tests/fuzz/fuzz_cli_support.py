"""What every fuzz test of the command line shares: the hypothesis profiles
and the one judgement of a run (a known exit status, never a traceback).

Profiles: ``ci`` (the default) has a fixed seed (``derandomize``) and few
examples, so the suite stays within a few minutes and fails the same way
twice; ``long`` (``make fuzz``, or ``INTBED_FUZZ_PROFILE=long``) draws fresh
random examples, twenty times as many.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from click.testing import CliRunner
from hypothesis import HealthCheck, settings

from intbed.cli import cli

_COMMON = {"deadline": None, "database": None, "print_blob": True,
           "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture]}
settings.register_profile("intbed-fuzz-ci", derandomize=True, **_COMMON)
settings.register_profile("intbed-fuzz-long", derandomize=False, **_COMMON)
PROFILE = os.environ.get("INTBED_FUZZ_PROFILE", "ci")
if PROFILE not in ("ci", "long"):
    raise ValueError(f"INTBED_FUZZ_PROFILE={PROFILE!r}: expected 'ci' or 'long'")
SCALE = 20 if PROFILE == "long" else 1


def fuzz_settings(examples: int) -> settings:
    """``examples`` draws in the ci profile, twenty times as many in long."""
    return settings(settings.get_profile(f"intbed-fuzz-{PROFILE}"),
                    max_examples=examples * SCALE)


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str


def invoke(*args: str) -> Outcome:
    """Run ``intbed ARGS`` in this process, as a user would from a shell."""
    result = CliRunner().invoke(cli, list(args), prog_name="intbed")
    return Outcome(result.exit_code, result.stdout, result.stderr)


def assert_handled(outcome: Outcome, usage: bool = False) -> None:
    """Exit 0 or 1 (2 too where the arguments themselves are fuzzed), an
    error as one ``location: error: message`` line, never a traceback or an
    internal error."""
    allowed = {0, 1, 2} if usage else {0, 1}
    text = outcome.stdout + outcome.stderr
    assert "Traceback" not in text, text
    assert not outcome.stderr.startswith("internal error"), outcome.stderr
    assert outcome.code in allowed, (outcome.code, outcome.stderr)
    # Lines end at "\n" only: a message may quote a user's control characters.
    errors = [line for line in outcome.stderr.split("\n")
              if line and not line.startswith(("warning: ", "note: "))]
    if outcome.code == 1 and errors:
        assert len(errors) == 1, outcome.stderr
        assert errors[0].startswith("error: ") or ": error: " in errors[0], outcome.stderr
