"""``--target``: resolved once, at the command line, into the registry's
``Target`` (``orchestration.network.TARGETS``); commands pass the object
on and ask it what it can do. Beside it, the options that pick the
profiles the sim target prices its switches and collector with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from common.errors import IntbedError
from orchestration.network import DEFAULT_TARGET, TARGETS, Target, get_target


class TargetChoice(click.Choice):
    """One of the registry's names on the command line, a ``Target`` after."""

    name = "target"

    def __init__(self) -> None:
        super().__init__(list(TARGETS))

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Target:
        if isinstance(value, Target):
            return value
        return get_target(super().convert(value, param, ctx))


def target_option(help_text: str) -> Any:
    """``--target NAME`` (default: the sim) as a ``Target``."""
    return click.option("--target", type=TargetChoice(), default=DEFAULT_TARGET.name,
                        show_default=True, help=help_text)


def _profile_option(flag: str, check_spec: Callable[[str], object],
                    errors: type[IntbedError], help_text: str) -> Any:
    """``flag NAME|PROFILE``, checked by ``check_spec`` when given: its
    ``errors`` become usage errors, with their message."""
    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            check_spec(value)
        except errors as exc:
            raise click.BadParameter(exc.message, ctx, param) from None
        return value

    return click.option(flag, flag.lstrip("-").replace("-", "_"), metavar="NAME|PROFILE",
                        default=None, callback=check, help=help_text)


def switch_model_option(fn: Any) -> Any:
    """``--switch-model NAME|PATH``: the sim switches' timing model."""
    from dataplane.targets.sim.timing import (
        DEFAULT_MODEL,
        SwitchModelError,
        available_models,
        load_model,
    )

    return _profile_option(
        "--switch-model", load_model, SwitchModelError,
        "How long a sim switch takes per packet: a measured profile "
        f"({', '.join(available_models())}) or a profile's YAML path "
        f"[default: {DEFAULT_MODEL}].")(fn)


def collector_profile_option(fn: Any) -> Any:
    """``--collector-profile NAME|PATH``: whose collector the sim prices."""
    from orchestration.systems.intlabel.collector_profile import (
        DEFAULT_COLLECTOR_PROFILE,
        CollectorProfileError,
        available_profiles,
        load_collector_profile,
    )

    return _profile_option(
        "--collector-profile", load_collector_profile, CollectorProfileError,
        "How long the sim's INT-label collector takes per INT item and per change "
        f"of S: a host's measured profile ({', '.join(available_profiles())}) or a "
        "YAML path (python -m experiments.intlabel.collector_cost writes one) "
        f"[default: {DEFAULT_COLLECTOR_PROFILE}].")(fn)
