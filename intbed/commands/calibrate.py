"""``intbed calibrate``: measure a switch binary and write the sim's switch
profile from it (``orchestration.calibrate``)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

DEFAULT_RATES = "500,1000,2000,4000,8000,12000,16000,24000,32000,48000"


def _rates(text: str) -> list[float]:
    try:
        rates = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"{text!r}: a comma-separated list of packets/s") from None
    if not rates or any(not r > 0 for r in rates):
        raise click.BadParameter(f"{text!r}: every rate must be positive")
    return sorted(rates)


@click.command("calibrate")
@click.option("--binary", default="intbed", show_default=True,
              help="The switch to time: 'intbed' (intbed-switch running "
                   "p4src/calibrate.p4); for any other use --switch-cmd.")
@click.option("--switch-cmd", "template", metavar="COMMAND", default=None,
              help="The switch's command line, with {port1} and {port2} for its two "
                   "interfaces, e.g. 'simple_switch -i 1@{port1} -i 2@{port2} router.json'.")
@click.option("--program", "program_name", default=None, metavar="TEXT",
              help="What the switch runs, as the profile records it "
                   "[default: p4src/calibrate.p4 for intbed, the command otherwise].")
@click.option("--rates", default=DEFAULT_RATES, show_default=True,
              help="Offered loads in packets/s (Poisson), low to high; the highest "
                   "should saturate the switch, so that its capacity is measured.")
@click.option("--seconds", type=click.FloatRange(min=0.1), default=3.0, show_default=True,
              help="Traffic per rate.")
@click.option("--size", type=click.IntRange(min=64, max=1500), default=100,
              show_default=True, help="Frame size in bytes.")
@click.option("--name", default=None, help="The profile's name [default: the binary's].")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to write the profile [default: print it].")
@click.option("--raw", "raw_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Also keep every frame's send time and latency here (.npz).")
@click.option("--from-raw", "from_raw", type=click.Path(exists=True, dir_okay=False,
                                                         path_type=Path),
              default=None, help="Fit the measurements a --raw file holds; measure nothing.")
def calibrate(binary: str, template: str | None, program_name: str | None, rates: str,
              seconds: float, size: int, name: str | None, out: Path | None,
              raw_path: Path | None, from_raw: Path | None) -> None:
    """Time a switch on veth pairs under a load sweep and fit the sim's
    switch model to it.

    As root: two hosts in network namespaces of their own send Poisson
    traffic through the switch at each rate; tcpdump stamps every frame
    leaving one host and reaching the other. The profile (YAML) gives the
    per-packet service time of the switch's ingress thread as quantiles
    (its mean the inverse of the measured capacity), the constant pipeline
    delay, and, per rate, the measured latencies and loss beside the
    model's. Use it with `intbed run EXP --switch-model PROFILE.yaml`, or
    ship it in dataplane/targets/sim/profiles/.
    """
    from orchestration.calibrate import fit
    from orchestration.calibrate.sweep import sweep, switch_command

    command = switch_command(binary, template)
    invocation = "intbed calibrate " + " ".join(shlex.quote(a) for a in sys.argv[2:])
    if from_raw is not None:
        points = fit.load_raw(from_raw)
    else:
        points = sweep(command, _rates(rates), seconds=seconds, size=size,
                       progress=lambda line: click.echo(line, err=True))
        if raw_path is not None:
            fit.save_raw(raw_path, points)
    program = program_name or ("p4src/calibrate.p4" if template is None else command[-1])
    raw = str(raw_path or from_raw) if (raw_path or from_raw) else None
    doc = fit.profile(name or (binary if template is None else Path(command[0]).name), points,
                      command=command, invocation=invocation, raw=raw, program=program)
    import yaml

    text = yaml.safe_dump(doc, sort_keys=False, width=100)
    if out is None:
        click.echo(text, nl=False)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        click.echo(f"profile: {out}", err=True)
    from dataplane.targets.sim.timing import model_from_dict

    click.echo(model_from_dict(doc, out or "profile").describe(), err=True)
