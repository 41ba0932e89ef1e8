"""p4-utils' ``p4app.json`` read into a ``NetworkSpec``.

The format (p4-utils documentation, "JSON"): ``p4_src`` is the default
program; ``topology`` holds ``assignment_strategy`` (l2, mixed, l3,
manual), ``links`` as ``[a, b]`` or ``[a, b, {options}]``, ``hosts`` and
``switches`` as objects of per-node options (a switch's ``cli_input`` and
``p4_src``), and ``default`` link options. Link options are Mininet's:
``bw`` in Mbit/s, ``delay`` as ``"5ms"``, ``loss`` in percent, plus
``port1``/``port2``, ``addr1``/``addr2`` (MACs) and ``params1``/``params2``
(``{"ip": ...}``) for the two ends. Keys intbed does not know are reported
once each, with their JSON path and line, and ignored.
"""

from __future__ import annotations

import json
from collections.abc import Set
from pathlib import Path
from typing import Any

from common.errors import IntbedError, Loc
from common.textfile import read_text
from orchestration.p4app.spec import (
    LinkDecl,
    NetworkSpec,
    P4AppError,
    parse_delay_us,
    parse_number,
)

# Keys that only concern p4-utils' own console, logs and capture files.
_TOP_QUIET = {"cli", "pcap_dump", "pcap_dir", "enable_log", "log_dir"}
_TOP_UNSUPPORTED = {"switch_node", "compiler_module", "host_node",
                    "router_node", "topo_module", "mininet_module", "controller_module",
                    "client_module", "tasks_file"}
_TOPO_QUIET = {"auto_arp_tables", "auto_gw_arp"}
_SWITCH_QUIET = {"cpu_port", "thrift_port", "grpc_port", "log_enabled", "log_dir",
                 "pcap_dump", "pcap_dir", "device_id", "json_path", "p4rt_path"}
_HOST_QUIET = {"log_enabled", "log_dir"}
_LINK_QUIET = {"weight", "intfName1", "intfName2", "key"}
_LINK_UNSUPPORTED = {"max_queue_size", "jitter", "use_htb"}


class _Lines:
    """Line numbers of JSON values by path, from the YAML loader's line
    annotations (JSON is YAML flow syntax)."""

    def __init__(self, text: str, file: str) -> None:
        from topologies.yamlio import parse_yaml

        try:
            # Valid JSON has no raw tab inside a string, and YAML refuses tabs
            # as indentation: blanks instead keep every line where it is.
            self.tree: Any = parse_yaml(text.replace("\t", " "), file)
        except IntbedError:
            self.tree = None

    def line(self, path: tuple[Any, ...]) -> int:
        node, line = self.tree, 0
        for part in path:
            if isinstance(part, int):
                lines = getattr(node, "item_lines", None)
                if lines is None or part >= len(lines):
                    return line
                line, node = lines[part], node[part]
            else:
                lines = getattr(node, "key_lines", None)
                if lines is None or part not in lines:
                    return line
                line, node = lines[part], node[part]
        return line


def _json_path(path: tuple[Any, ...]) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


class _Reader:
    def __init__(self, path: Path, text: str) -> None:
        self.file = str(path)
        self.lines = _Lines(text, self.file)
        self.spec = NetworkSpec(path, path.parent)

    def loc(self, path: tuple[Any, ...]) -> Loc:
        return Loc(self.file, self.lines.line(path))

    def warn(self, path: tuple[Any, ...], what: str) -> None:
        self.spec.note(f"{self.loc(path)}: warning: {_json_path(path)}: {what}")

    def keys(self, obj: dict[str, Any], path: tuple[Any, ...], known: set[str],
             quiet: Set[str] = frozenset(), unsupported: Set[str] = frozenset()) -> None:
        for key in obj:
            if key in known or key in quiet:
                continue
            if key in unsupported:
                self.warn((*path, key), "not supported by intbed, ignored")
            else:
                self.warn((*path, key), "unknown key, ignored")

    def obj(self, value: Any, path: tuple[Any, ...], what: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise P4AppError(f"{_json_path(path)}: {what} must be a JSON object, not "
                             f"{type(value).__name__}", self.loc(path))
        return value

    def read(self, data: Any) -> NetworkSpec:
        spec = self.spec
        top = self.obj(data, (), "the file")
        self.keys(top, (), {"p4_src", "topology", "exec_scripts"}, _TOP_QUIET, _TOP_UNSUPPORTED)
        for i, item in enumerate(top.get("exec_scripts") or []):
            loc = self.loc(("exec_scripts", i))
            if not isinstance(item, dict) or not isinstance(item.get("cmd"), str):
                raise P4AppError("$.exec_scripts: each entry is {\"cmd\": \"python X.py\", "
                                 f"...}}, not {json.dumps(item)}", loc)
            spec.scripts.append((item["cmd"], loc))
        if "p4_src" in top:
            spec.default_program = top["p4_src"]
        if "topology" not in top:
            raise P4AppError("$.topology is missing: the file declares no network",
                             Loc(self.file, 1))
        topo = self.obj(top["topology"], ("topology",), "topology")
        self.keys(topo, ("topology",), {"assignment_strategy", "links", "hosts", "switches",
                                        "default"}, _TOPO_QUIET, {"routers"})
        if "assignment_strategy" in topo:
            spec.strategy = topo["assignment_strategy"]
            spec.locs["strategy"] = self.loc(("topology", "assignment_strategy"))
        for kind, quiet in (("switches", _SWITCH_QUIET), ("hosts", _HOST_QUIET)):
            nodes = self.obj(topo.get(kind), ("topology", kind), kind)
            table = spec.switches if kind == "switches" else spec.hosts
            for name, opts in nodes.items():
                path = ("topology", kind, name)
                opts = self.obj(opts, path, f"options of {name}")
                known = ({"cli_input", "p4_src"} if kind == "switches"
                         else {"ip", "mac", "gw", "defaultRoute"})
                self.keys(opts, path, known, quiet)
                table[name] = dict(opts)
                route = opts.get("defaultRoute")
                if kind == "hosts" and isinstance(route, str) and route.startswith("via "):
                    table[name].setdefault("gw", route[4:].strip())
                singular = "switch" if kind == "switches" else "host"
                spec.locs[f"{singular}:{name}"] = self.loc(path)
        defaults = self.obj(topo.get("default"), ("topology", "default"), "default")
        self.keys(defaults, ("topology", "default"), {"bw", "delay", "loss"},
                  _TOPO_QUIET | _LINK_QUIET, _LINK_UNSUPPORTED)
        links = topo.get("links", [])
        if not isinstance(links, list):
            raise P4AppError("$.topology.links must be a list of [node, node] pairs",
                             self.loc(("topology", "links")))
        for i, item in enumerate(links):
            spec.links.append(self.link(item, ("topology", "links", i), defaults))
        return spec

    def link(self, item: Any, path: tuple[Any, ...], defaults: dict[str, Any]) -> LinkDecl:
        loc = self.loc(path)
        ok = (isinstance(item, list) and len(item) in (2, 3)
              and all(isinstance(n, str) for n in item[:2]))
        if not ok:
            raise P4AppError(f"{_json_path(path)}: a link is [\"a\", \"b\"] or "
                             f"[\"a\", \"b\", {{options}}], not {json.dumps(item)}", loc)
        a, b = item[0], item[1]
        opts = self.obj(item[2] if len(item) == 3 else {}, (*path, 2), "link options")
        self.keys(opts, (*path, 2), {"bw", "delay", "loss", "port1", "port2", "addr1", "addr2",
                                     "params1", "params2"}, _LINK_QUIET, _LINK_UNSUPPORTED)
        merged = {**{k: v for k, v in defaults.items() if k in ("bw", "delay", "loss")},
                  **opts}
        where = f"link {a}-{b}"
        link = LinkDecl(a, b, loc)
        if "bw" in merged:
            link.bandwidth_mbps = parse_number(merged["bw"], f"{where}: bw", loc)
            if link.bandwidth_mbps == 0:
                raise P4AppError(f"{where}: bw must be above 0 Mbit/s", loc)
        if "delay" in merged:
            link.delay_us = parse_delay_us(merged["delay"], where, loc)
        if "loss" in merged:
            link.loss = parse_number(merged["loss"], f"{where}: loss (percent)", loc, 100) / 100
        if "weight" in opts:
            link.weight = parse_number(opts["weight"], f"{where}: weight", loc)
        for end, node in (("1", a), ("2", b)):
            port = opts.get(f"port{end}")
            if port is not None:
                if isinstance(port, bool) or not isinstance(port, int):
                    raise P4AppError(f"{where}: port{end} must be an integer, not {port!r}", loc)
                setattr(link, "a_port" if end == "1" else "b_port", port)
            addrs: dict[str, str] = {}
            if opts.get(f"addr{end}"):
                addrs["mac"] = opts[f"addr{end}"]
            params = opts.get(f"params{end}")
            if isinstance(params, dict) and params.get("ip"):
                addrs["ip"] = params["ip"]
            if addrs:
                link.addrs[node] = addrs
        return link


def load_p4app(path: str | Path) -> NetworkSpec:
    """Read ``path`` (a p4app.json); not JSON, or JSON that is not a network,
    is one located ``P4AppError``."""
    path = Path(path)
    text = read_text(path, "p4app.json", P4AppError)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise P4AppError(f"not JSON: {exc.msg}", Loc(str(path), exc.lineno, exc.colno)) from None
    return _Reader(path, text).read(data)
