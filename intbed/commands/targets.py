"""``--target``: resolved once, at the command line, into the registry's
``Target`` (``orchestration.network.TARGETS``); commands pass the object
on and ask it what it can do."""

from __future__ import annotations

from typing import Any

import click

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


def switch_model_option(fn: Any) -> Any:
    """``--switch-model NAME|PATH``: the sim switches' timing model, checked
    when given (an unknown name is a usage error naming the models)."""
    from dataplane.targets.sim.timing import DEFAULT_MODEL, available_models

    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None:
            return None
        from dataplane.targets.sim.timing import SwitchModelError, load_model

        try:
            load_model(value)
        except SwitchModelError as exc:
            raise click.BadParameter(exc.message, ctx, param) from None
        return value

    return click.option(
        "--switch-model", "switch_model", metavar="NAME|PROFILE", default=None,
        callback=check,
        help="How long a sim switch takes per packet: a measured profile "
             f"({', '.join(available_models())}) or a profile's YAML path "
             f"[default: {DEFAULT_MODEL}].")(fn)
