"""``intbed topo`` and the drawing helpers."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from intbed.cli import IntbedGroup
from intbed.commands.topo import topo
from topologies.draw import layout, summarize, tiers
from topologies.generators import fat_tree, intlabel_fabric, line
from topologies.model import Topology

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(*args: str) -> tuple[int, str, str]:
    # The group is wrapped like the main CLI so user errors print as one line.
    group = IntbedGroup(commands={"topo": topo})
    result = CliRunner().invoke(group, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_show_intlabel_fabric_with_drawing(tmp_path: Path) -> None:
    png = tmp_path / "fabric.png"
    code, out, err = run("topo", "show", "intlabel-fabric", "--png", str(png))
    assert (code, err) == (0, "")
    lines = {" ".join(row.strip("│ ").split()) for row in out.splitlines()}
    for row in ("switches │ 12", "hosts │ 8", "links │ 24", "switch ports │ 40",
                "diameter (switch hops) │ 4", "diameter (host to host links) │ 6"):
        assert any(row in text for text in lines), row
    assert png.read_bytes()[:8] == PNG_MAGIC


def test_show_generator_params_and_yaml(tmp_path: Path) -> None:
    code, out, _ = run("topo", "show", "fat-tree", "--k", "8")
    assert code == 0 and "128" in out and "640" in out
    code, out, _ = run("topo", "show", "watts-strogatz", "--n", "10", "--k", "4", "--p",
                       "0.2", "--seed", "1", "--hosts-per-switch", "2")
    assert code == 0 and "20" in out
    path = tmp_path / "line.yaml"
    code, out, _ = run("topo", "save", "line", "--n", "3", "-o", str(path))
    assert (code, out) == (0, f"line-3 written to {path}\n")
    assert Topology.load_yaml(path).to_dict() == line(3).to_dict()
    code, out, _ = run("topo", "show", str(path))
    assert code == 0 and "line-3" in out


def test_show_errors_are_one_line(tmp_path: Path) -> None:
    code, out, err = run("topo", "show", "torus")
    assert (code, out) == (1, "")
    assert err.startswith("error: unknown topology 'torus': choose one of intlabel-fabric")
    bad = tmp_path / "bad.yaml"
    bad.write_text("switches:\n  - {name: s1}\nlinks:\n  - {a: s1, b: s2}\n")
    code, _, err = run("topo", "show", str(bad))
    assert (code, err) == (1, f"{bad}:4: error: link end b: unknown node 's2' (dangling link: "
                              "no switch or host of that name)\n")
    code, _, err = run("topo", "show", "line", "--p", "0.5")
    assert code == 1 and "takes no parameter p" in err


def test_layout_rows_for_fat_trees_spring_otherwise() -> None:
    tier = tiers(intlabel_fabric())
    assert tier is not None
    assert (tier["h1"], tier["tor1"], tier["leaf1"], tier["spine1"]) == (0, 1, 2, 3)
    pos = layout(fat_tree(4))
    assert {pos[f"spine{i}"][1] for i in range(1, 5)} == {3.0}
    assert {pos[f"h{i}"][1] for i in range(1, 17)} == {0.0}
    assert pos["h1"][0] < pos["h2"][0] < pos["h16"][0]
    assert tiers(line(3)) is None  # switch links within one tier
    assert layout(line(3)) == layout(line(3))  # seeded spring layout


def test_summary_of_disconnected_topology() -> None:
    topo = Topology("split")
    topo.add_switch("s1")
    topo.add_switch("s2")
    summary = summarize(topo)
    assert (summary.diameter, summary.connected, summary.switch_ports) == (None, False, 0)
