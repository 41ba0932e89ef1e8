"""``docs/architecture.md``'s recipe "Adding a system", followed by a toy
system: registered in the one place (``orchestration.systems.register``)
with its run written against ``Network``, its figure in
``experiments/toy/figures.py`` and its command group in
``intbed/commands/toy.py``; nothing else is touched, and ``intbed list``,
``intbed run toy-fig1`` and ``intbed toy`` find it."""

from __future__ import annotations

import csv
import importlib
import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import experiments
import intbed.commands
from experiments import framework
from intbed.cli import cli
from orchestration import systems

RUN = textwrap.dedent('''
    """The toy system's run, once for every target: all-pairs ping on a line."""
    from orchestration.apps.ping import all_pairs
    from orchestration.network import RunEnv
    from topologies.generators import build_topology


    def run_toy(env: RunEnv, switches: int) -> dict:
        with env.open(build_topology("line", n=switches), "l3_forward") as net:
            net.start()
            net.install_routes()
            pings = all_pairs(net)
        return {"pairs": len(pings), "reached": sum(p.rtt_us is not None for p in pings)}
    ''')

FIGURES = textwrap.dedent('''
    from experiments.framework import Context, Experiment, Headline, Param, Result, register
    from orchestration.systems import SYSTEMS


    def compute(ctx: Context) -> Result:
        run = SYSTEMS["toy"].run_function()
        rows = [{"switches": n, **run(ctx.env, n)} for n in ctx.params["switches"]]
        return Result(rows, [Headline("pairs reached", float(sum(r["reached"] for r in rows)),
                                      None, "pairs")])


    def plot(result, params, fig):
        ax = fig.add_subplot()
        ax.plot([r["switches"] for r in result.rows], [r["reached"] for r in result.rows])


    register(Experiment("toy-fig1", "pairs reached on a line", "a toy paper",
                        [Param("switches", [2, 3], "line lengths", quick=[2])],
                        compute, plot, live=True))
    ''')

COMMANDS = textwrap.dedent('''
    import click


    @click.group()
    def toy() -> None:
        """The toy system's own commands."""


    @toy.command()
    def hello() -> None:
        click.echo("toy says hello")
    ''')


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The toy's files where a system's go, seen through the packages'
    search paths, and its registration; all undone afterwards."""
    (tmp_path / "experiments" / "toy").mkdir(parents=True)
    (tmp_path / "experiments" / "toy" / "__init__.py").write_text("")
    (tmp_path / "experiments" / "toy" / "figures.py").write_text(FIGURES)
    (tmp_path / "commands").mkdir()
    (tmp_path / "commands" / "toy.py").write_text(COMMANDS)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "toy_run.py").write_text(RUN)
    monkeypatch.setattr(experiments, "__path__", [*experiments.__path__,
                                                  str(tmp_path / "experiments")])
    monkeypatch.setattr(intbed.commands, "__path__", [*intbed.commands.__path__,
                                                      str(tmp_path / "commands")])
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    importlib.invalidate_caches()
    framework.load_all()  # the real figures register in the real registry first
    monkeypatch.setattr(systems, "SYSTEMS", dict(systems.SYSTEMS))
    monkeypatch.setattr(framework, "REGISTRY", dict(framework.REGISTRY))
    systems.register(systems.System("toy", "a toy", "a toy paper", ("l3_forward",),
                                    "toy_run:run_toy", command="toy"))
    yield
    for name in ("experiments.toy", "experiments.toy.figures", "intbed.commands.toy", "toy_run"):
        sys.modules.pop(name, None)


def test_a_system_registered_in_one_place_is_found_everywhere(toy: None,
                                                              tmp_path: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(cli, ["list"])
    assert listed.exit_code == 0 and "toy-fig1" in listed.output
    assert "toy" in runner.invoke(cli, ["--help"]).output
    hello = runner.invoke(cli, ["toy", "hello"])
    assert hello.exit_code == 0 and hello.output == "toy says hello\n"

    out = tmp_path / "results"
    ran = runner.invoke(cli, ["run", "toy-fig1", "--quick", "--quiet", "--out", str(out)])
    assert ran.exit_code == 0, ran.output
    with (out / "metrics.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert rows == [{"switches": "2", "pairs": "2", "reached": "2"}]  # h1<->h2 on a 2-line
    heads = json.loads((out / "summary.json").read_text())["headlines"]
    assert heads == [{"name": "pairs reached", "ours": 2.0, "paper": None, "unit": "pairs",
                      "verdict": "not comparable"}]
    assert framework.get("toy-fig1").targets == ("sim", "mininet", "bmv2")


def test_a_system_id_is_registered_once() -> None:
    with pytest.raises(Exception, match="system 'gpint' is registered already"):
        systems.register(systems.System("gpint", "again", "again"))


def test_every_registered_system_has_its_pieces_under_its_id() -> None:
    """The one name: a system's id names its control plane or its sink (or
    both), its experiments, its docs and its tests, and its command module
    when it has a command group."""
    root = Path(__file__).resolve().parents[1]
    from p4src import program_path

    for system in systems.SYSTEMS.values():
        assert any((root / part / system.id).is_dir() for part in ("controller", "sinks")), \
            system.id
        assert (root / "experiments" / system.id / "figures.py").is_file(), system.id
        assert (root / "docs" / f"{system.id}.md").is_file(), system.id
        assert (root / "tests" / system.id).is_dir(), system.id
        if system.command is not None:
            assert (root / "intbed" / "commands" / f"{system.id}.py").is_file(), system.id
        for program in system.programs:
            assert program_path(program).is_file()
        if system.run is not None:
            assert callable(system.run_function())
        prefix = f"{system.id}-"
        assert any(name.startswith(prefix) for name in framework.load_all()), system.id
    assert all(name.split("-", 1)[0] in systems.SYSTEMS for name in framework.load_all())


def test_a_systems_own_program_and_format_carry_its_id() -> None:
    """A program only one system runs is named after it (``p4src/<id>.p4``,
    whatever else it runs besides); a program several share (``int_md``)
    keeps its own name. Every format page names the program it describes."""
    from collections import Counter

    from p4src import program_path

    root = Path(__file__).resolve().parents[1]
    users = Counter(p for s in systems.SYSTEMS.values() for p in s.programs)
    for system in systems.SYSTEMS.values():
        own = [p for p in system.programs if users[p] == 1]
        assert not own or system.id in own, (system.id, own)
    for page in (root / "docs").glob("*_format.md"):
        name = page.name.removesuffix("_format.md")
        if name != "telemetry_report":  # the Telemetry Report spec, every sink's
            assert program_path(name).is_file(), page.name
