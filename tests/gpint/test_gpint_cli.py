"""``intbed gpint plan``: output, JSON, drawings and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from controller.gpint.planners import PLANNERS, path_stats, plan
from intbed.cli import cli
from intbed.commands.gpint import PLANNER_HELP
from topologies.generators import gpint_ws, line

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["gpint", "plan", *args])
    return result.exit_code, result.stdout, result.stderr


def test_prints_paths_and_balance() -> None:
    code, out, err = run("--topo", "gpint-ws", "--n", "50", "--seed", "0", "--planner",
                         "gpint-3")
    assert (code, err) == (0, "")
    expected = plan("gpint-3", gpint_ws(50, seed=0).switch_graph(), 0)
    lines = out.splitlines()
    assert lines[:len(expected)] == [f"path {i} ({len(p)}): {' '.join(p)}"
                                     for i, p in enumerate(expected, 1)]
    rows = {" ".join(row.strip("│ ").split()) for row in lines[len(expected):]}
    for row in ("paths │ 15", "switches covered │ 50 of 50"):
        assert row in rows, rows
    assert any(row.startswith("balance (max - min) │ ") for row in rows)


def test_json_matches_the_library() -> None:
    code, out, err = run("--n", "30", "--seed", "4", "--planner", "euler", "--json")
    assert (code, err) == (0, "")
    report = json.loads(out)
    graph = gpint_ws(30, seed=4).switch_graph()
    paths = plan("euler", graph, 4)
    assert report == {"topology": "gpint-ws-n30-k4-p0.1-s4", "planner": "euler", "seed": 4,
                      "paths": paths, "stats": path_stats(paths, graph).as_dict()}
    code, out, _ = run("--n", "30", "--planner", "gpint-k", "--paths", "7", "--json")
    assert code == 0 and len(json.loads(out)["paths"]) == 7
    code, out, _ = run("--n", "30", "--planner", "snmp", "--json")
    assert code == 0 and json.loads(out)["stats"]["lengths"] == [1] * 30


def test_yaml_topology_takes_no_seed(tmp_path: Path) -> None:
    path = tmp_path / "line.yaml"
    line(6).save_yaml(path)
    code, out, err = run("--topo", str(path), "--planner", "gpint-k", "--paths", "2",
                         "--seed", "3", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["stats"]["lengths"] == [3, 3]


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_drawing(tmp_path: Path, suffix: str) -> None:
    file = tmp_path / f"plan.{suffix}"
    code, out, err = run("--n", "20", "--planner", "gpint-2", "--png", str(file))
    assert (code, err) == (0, "")
    assert out.endswith(f"drawing written to {file}\n")
    data = file.read_bytes()
    assert data[:8] == PNG_MAGIC if suffix == "png" else b"<svg" in data[:2000]
    # Many paths (hue circle, no legend), and no stray output around the JSON.
    many = tmp_path / "many.png"
    code, out, _ = run("--n", "100", "--planner", "euler", "--png", str(many), "--json")
    assert code == 0 and json.loads(out)["planner"] == "euler"
    assert many.read_bytes()[:8] == PNG_MAGIC


def disconnected(tmp_path: Path) -> str:
    path = tmp_path / "islands.yaml"
    path.write_text("switches:\n  - {name: s1}\n  - {name: s2}\n  - {name: s3}\n"
                    "links:\n  - {a: s1, b: s2}\n")
    return str(path)


@pytest.mark.parametrize(("args", "message"), [
    (["--planner", "ospf"], "error: unknown planner 'ospf': choose one of gpint-2, gpint-3, "
                            "gpint-5, gpint-k, euler, snmp"),
    (["--planner", "gpint-k", "--paths", "21"], "error: k>|V|: 21 paths for 20 switches; "
                                                "choose k <= 20 or a larger network"),
    (["--planner", "gpint-k"], "error: --planner gpint-k needs --paths K, the number of paths"),
    (["--planner", "euler", "--paths", "3"],
     "error: --paths sets k for --planner gpint-k, not for euler"),
    (["--topo", "ISLANDS"], "error: the switch graph is not connected: 2 components; every "
                            "switch must be reachable for probes to visit it"),
    (["--png", "MISSING/plan.png"], "error: cannot write the drawing MISSING/plan.png: "
                                    "No such file or directory"),
    (["--png", "TMP"], "error: cannot write the drawing TMP: Is a directory"),
    (["--topo", "fat-tree", "--n", "3"],
     "error: topology 'fat-tree' takes no parameter n (it takes: k, pods)"),
])
def test_bad_input_is_one_error_line(tmp_path: Path, args: list[str], message: str) -> None:
    names = {"ISLANDS": disconnected(tmp_path), "MISSING": str(tmp_path / "missing"),
             "TMP": str(tmp_path)}
    args = [next((arg.replace(k, v) for k, v in names.items() if k in arg), arg)
            for arg in args]
    message = next((message.replace(k, v) for k, v in names.items() if k in message), message)
    code, out, err = run(*args)
    assert (code, out, err) == (1, "", message + "\n")


def test_help_names_every_planner() -> None:
    assert [name.split(" ")[0] for name in PLANNER_HELP.split(", ")] == list(PLANNERS)
    result = CliRunner().invoke(cli, ["gpint", "plan", "--help"])
    assert result.exit_code == 0 and "--planner" in result.stdout
    assert "gpint" in CliRunner().invoke(cli, ["--help"]).stdout
