"""p4app.json and NetworkAPI scripts: the addresses p4-utils documents for
the l2, mixed and l3 strategies, link options, and one located line for bad
input."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from intbed.cli import cli
from orchestration.p4app.load import load_app
from orchestration.p4app.spec import P4App, P4AppError

# Hosts h1, h2 on s1; h300 on s258 (a two-byte switch id); h7 on s3.
LINKS = [["h1", "s1"], ["h2", "s1"], ["s1", "s258"], ["h300", "s258"], ["s258", "s3"],
         ["h7", "s3"]]


def write_json(tmp_path: Path, strategy: str, **extra: Any) -> Path:
    (tmp_path / "prog.p4").write_text("// not compiled by these tests\n")
    topo = {"assignment_strategy": strategy, "links": LINKS,
            "hosts": {h: {} for h in ("h1", "h2", "h300", "h7")},
            "switches": {s: {} for s in ("s1", "s258", "s3")}, **extra}
    path = tmp_path / "p4app.json"
    path.write_text(json.dumps({"p4_src": "prog.p4", "topology": topo}, indent=2))
    return path


def write_script(tmp_path: Path, strategy: str) -> Path:
    (tmp_path / "prog.p4").write_text("// not compiled by these tests\n")
    lines = ["from p4utils.mininetlib.network_API import NetworkAPI", "net = NetworkAPI()"]
    lines += [f"net.addP4Switch('{s}')" for s in ("s1", "s258", "s3")]
    lines += ["net.setP4SourceAll('prog.p4')"]
    lines += [f"net.addHost('{h}')" for h in ("h1", "h2", "h300", "h7")]
    lines += [f"net.addLink('{a}', '{b}')" for a, b in LINKS]
    lines += [f"net.{strategy}()", "net.startNetwork()"]
    path = tmp_path / "network.py"
    path.write_text("\n".join(lines) + "\n")
    return path


def addresses(app: P4App) -> dict[str, tuple[str, int, str, str | None]]:
    return {h.name: (h.ip, h.prefix_len, h.mac, app.gateways.get(h.name))
            for h in app.topo.hosts.values()}


# p4-utils documentation, "Automated Assignment Strategies":
# l2: 10.0.x.y/16 (x, y: upper and lower byte of the host id);
# mixed: 10.x.y.z/24 (x, y: bytes of the switch id, z: host id), gateway .254;
# l3: 10.x.y.2/24 (x: switch id, y: host id), gateway 10.x.y.1.
# MAC: 00:00 and the IPv4 address in hex (the exercises' README).
EXPECTED = {
    "l2": {"h1": ("10.0.0.1", 16, "00:00:0a:00:00:01", None),
           "h2": ("10.0.0.2", 16, "00:00:0a:00:00:02", None),
           "h300": ("10.0.1.44", 16, "00:00:0a:00:01:2c", None),
           "h7": ("10.0.0.7", 16, "00:00:0a:00:00:07", None)},
    "mixed": {"h1": ("10.0.1.1", 24, "00:00:0a:00:01:01", "10.0.1.254"),
              "h2": ("10.0.1.2", 24, "00:00:0a:00:01:02", "10.0.1.254"),
              "h300": ("10.1.2.44", 24, "00:00:0a:01:02:2c", "10.1.2.254"),
              "h7": ("10.0.3.7", 24, "00:00:0a:00:03:07", "10.0.3.254")},
    "l3": {"h1": ("10.1.1.2", 24, "00:00:0a:01:01:02", "10.1.1.1"),
           "h2": ("10.1.2.2", 24, "00:00:0a:01:02:02", "10.1.2.1"),
           "h300": ("10.2.44.2", 24, "00:00:0a:02:2c:02", "10.2.44.1"),
           "h7": ("10.3.7.2", 24, "00:00:0a:03:07:02", "10.3.7.1")},
}


@pytest.mark.parametrize("strategy", ["l2", "mixed", "l3"])
def test_assignment_strategies_give_the_documented_addresses(tmp_path: Path,
                                                             strategy: str) -> None:
    from_json = load_app(write_json(tmp_path, strategy))
    assert addresses(from_json) == EXPECTED[strategy]
    from_script = load_app(write_script(tmp_path, strategy))
    assert addresses(from_script) == EXPECTED[strategy]


def test_ports_count_from_one_in_link_order(tmp_path: Path) -> None:
    app = load_app(write_json(tmp_path, "l2"))
    assert [(p, peer) for p, peer, _ in app.topo.port_peers("s258")] == [
        (1, "s1"), (2, "h300"), (3, "s3")]
    assert app.topo.host_switch("h7") == ("s3", 2)


def test_link_options_in_json_and_in_the_api(tmp_path: Path) -> None:
    path = write_json(tmp_path, "l2", default={"bw": 20})
    data = json.loads(path.read_text())
    data["topology"]["links"][0] = ["h1", "s1", {"bw": 5, "delay": "2ms", "loss": 1,
                                                 "port2": 7}]
    data["topology"]["links"][1] = ["h2", "s1", {"delay": "150us"}]
    path.write_text(json.dumps(data))
    links = load_app(path).topo.links
    assert (links[0].bandwidth_mbps, links[0].delay_us, links[0].loss, links[0].b_port) == (
        5.0, 2000.0, 0.01, 7)
    assert (links[1].bandwidth_mbps, links[1].delay_us, links[1].b_port) == (20.0, 150.0, 1)
    script = write_script(tmp_path, "l2")
    text = script.read_text().replace("net.l2()", "net.l2()\nnet.setBw('h1', 's1', 3)\n"
                                      "net.setDelay('s1', 'h2', 4)\nnet.setLoss('h1', 's1', 0.25)")
    script.write_text(text)
    links = load_app(script).topo.links
    assert (links[0].bandwidth_mbps, links[0].loss, links[1].delay_us) == (3.0, 0.25, 4000.0)


def test_unknown_keys_are_reported_once_with_path_and_line(tmp_path: Path) -> None:
    path = write_json(tmp_path, "l2")
    text = path.read_text().replace('"h2": {}', '"h2": {"colour": "red"}')
    text = text.replace('"p4_src"', '"tasks_file": "tasks.txt", "cli": true, "p4_src"')
    path.write_text(text)
    app = load_app(path)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "colour" in t)
    assert f"{path}:{line}: warning: $.topology.hosts.h2.colour: unknown key, ignored" \
        in app.notes
    assert any("$.tasks_file: not supported by intbed" in n for n in app.notes)
    assert len(app.notes) == 2  # "cli" is p4-utils' console: accepted quietly


def one_error_line(path: Path) -> str:
    result = CliRunner().invoke(cli, ["topo", "import", str(path)])
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines() if hasattr(result, "stderr") else \
        result.output.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_not_json_is_one_located_line(tmp_path: Path) -> None:
    path = tmp_path / "p4app.json"
    path.write_text('{\n  "p4_src": "a.p4",\n  "topology": {"links": [["h1", "s1"],]}\n}\n')
    line = one_error_line(path)
    assert line.startswith(f"{path}:3:")
    assert "error: not JSON" in line


def test_link_to_an_undefined_node_is_one_located_line(tmp_path: Path) -> None:
    path = tmp_path / "p4app.json"
    (tmp_path / "prog.p4").write_text("")
    path.write_text('{"p4_src": "prog.p4",\n'
                    ' "topology": {"assignment_strategy": "l2",\n'
                    '  "hosts": {"h1": {}}, "switches": {"s1": {}},\n'
                    '  "links": [["h1", "s1"],\n'
                    '            ["s1", "s9"]]}}\n')
    line = one_error_line(path)
    assert line == (f"{path}:5: error: link s1-s9: 's9' is not a switch or a host declared "
                    "in this network")


def test_script_link_to_an_undefined_node_points_at_the_call(tmp_path: Path) -> None:
    script = write_script(tmp_path, "l2")
    lines = script.read_text().splitlines()
    lines.insert(10, "net.addLink('h1', 's9')")
    script.write_text("\n".join(lines) + "\n")
    with pytest.raises(P4AppError) as err:
        load_app(script)
    assert err.value.line().startswith(f"{script.resolve()}:11: error: 's9' is not a switch")


def test_unsupported_api_methods_are_named_once_and_the_module_is_removed(
        tmp_path: Path) -> None:
    script = write_script(tmp_path, "l2")
    script.write_text(script.read_text() + "net.addTask('h1', 'iperf')\n"
                      "net.addTask('h2', 'iperf')\nnet.enablePcapDumpAll()\n")
    before = {m for m in sys.modules if m.startswith("p4utils")}
    app = load_app(script)
    after = {m for m in sys.modules if m.startswith("p4utils")}
    assert before == after == set()
    first = len(script.read_text().splitlines()) - 2
    assert [n for n in app.notes if "addTask" in n] == [
        f"{script.resolve()}:{first}: warning: NetworkAPI.addTask() is not supported by "
        "intbed, ignored"]  # once, at the first call
    assert not any("enablePcapDumpAll" in n for n in app.notes)


def test_script_failures_are_located(tmp_path: Path) -> None:
    script = write_script(tmp_path, "l2")
    script.write_text(script.read_text() + "from p4utils.utils.helper import load_topo\n")
    with pytest.raises(P4AppError) as err:
        load_app(script)
    n = len(script.read_text().splitlines())
    assert err.value.line().startswith(f"{script.resolve()}:{n}: error: the script imports "
                                       "p4utils.utils")


def test_lines_are_found_in_tab_indented_json(tmp_path: Path) -> None:
    path = write_json(tmp_path, "l2")
    data = json.loads(path.read_text())
    data["topology"]["hosts"]["h7"] = {"colour": "red"}
    text = json.dumps(data, indent="\t")
    path.write_text(text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "colour" in t)
    assert load_app(path).notes == [
        f"{path}:{line}: warning: $.topology.hosts.h7.colour: unknown key, ignored"]
