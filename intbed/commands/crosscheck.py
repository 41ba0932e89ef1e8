"""``intbed crosscheck``: the same experiment on the sim and a live target
(``experiments.crosscheck``)."""

from __future__ import annotations

from pathlib import Path

import click

from intbed.commands.targets import TargetChoice, collector_profile_option, switch_model_option
from orchestration.network import Target


@click.command("crosscheck")
@click.argument("name")
@click.option("--quick", is_flag=True, help="The experiment's reduced runs.")
@click.option("--seeds", type=click.IntRange(min=2), default=3, show_default=True,
              help="Seeds 0..N-1 on each target; their spread sets the tolerance.")
@click.option("--against", "live", type=TargetChoice(), default="mininet", show_default=True,
              help="The target the sim is compared with.")
@click.option("--set", "settings", multiple=True, metavar="PARAM=VALUE",
              help="Override a parameter on both targets (repeatable).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the runs and crosscheck.json go [default: "
                   "results/crosscheck/NAME[-quick]].")
@click.option("--force", is_flag=True, help="Overwrite runs already in the directory.")
@click.option("--resume", is_flag=True,
              help="Keep the runs in the directory that finished with the same experiment, "
                   "seed and parameters, and run only the rest (a live side kept, a sim "
                   "side priced anew).")
@switch_model_option
@collector_profile_option
def crosscheck(name: str, quick: bool, seeds: int, live: Target, settings: tuple[str, ...],
               out: Path | None, force: bool, resume: bool, switch_model: str | None,
               collector_profile: str | None) -> None:
    """Run experiment NAME on the sim and on a live target (as root) with the
    same seeds and parameters, and print per headline both means, their
    difference and whether it is within the 95 % interval the seeds'
    spread gives (Welch). Exit 0 when every headline agrees, 1 otherwise.
    --switch-model and --collector-profile set the sim's side: a host's
    collector profile makes the sim price the collector as that host's
    live run spends.
    """
    from rich.console import Console
    from rich.table import Table

    from experiments.crosscheck import crosscheck as run
    from experiments.framework import RESULTS_DIR
    from intbed.commands.run import parse_settings
    from orchestration.network import TARGETS

    overrides = parse_settings(settings)
    if not live.live:
        raise click.BadParameter(f"{live} is not a live target", param_hint="--against")
    where = out or RESULTS_DIR / "crosscheck" / f"{name}{'-quick' if quick else ''}"
    results = run(name, targets=(TARGETS["sim"], live), seeds=seeds, quick=quick, out=where,
                  overrides=overrides, switch_model=switch_model,
                  collector_profile=collector_profile, force=force, resume=resume,
                  progress=lambda line: click.echo(line, err=True))
    table = Table("headline", "sim", str(live), "difference", "tolerance", "agrees")
    for r in results:
        table.add_row(r.name, f"{r.mean_a:.4g}", f"{r.mean_b:.4g}", f"{r.difference:+.3g}",
                      f"{r.tolerance:.3g}", "yes" if r.agrees else "NO")
    Console().print(table)
    click.echo(f"crosscheck: {where / 'crosscheck.json'}")
    if not all(r.agrees for r in results):
        raise SystemExit(1)
