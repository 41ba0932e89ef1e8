"""Topology <-> YAML, with every error located at its YAML line.

The file format::

    name: example
    switches:
      - {name: s1, device_id: 0, queue_depth: 32}
      - name: s2
        ports: {1: {queue_depth: 8, queue_rate_pps: 1000}}   # per-port overrides
    hosts:
      - {name: h1, mac: "00:00:00:00:00:01", ip: 10.0.1.1}
    links:
      - {a: h1, b: s1, b_port: 1, bandwidth_mbps: 100, delay_us: 50, loss: 0.01}

Omitted fields take the model's defaults; an omitted switch port is the
switch's next free port. PyYAML's own constructors lose line numbers, so a
loader subclass keeps the mark of every mapping and of each of its keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import yaml

from common.errors import Loc
from common.textfile import read_text
from topologies.model import (
    DEFAULT_HOST_PREFIX_LEN,
    DEFAULT_QUEUE_DEPTH,
    HOST_PORT,
    LinkSpec,
    PortSpec,
    Topology,
    TopologyError,
)

_TOP_KEYS = ("name", "switches", "hosts", "links")
_SWITCH_KEYS = ("name", "device_id", "program", "queue_depth", "queue_rate_pps",
                "processing_rate_pps", "clock_offset_us", "ports")
_PORT_KEYS = ("queue_depth", "queue_rate_pps")
_HOST_KEYS = ("name", "mac", "ip", "prefix_len")
_LINK_KEYS = ("a", "a_port", "b", "b_port", "bandwidth_mbps", "delay_us", "loss")
_LINK_DEFAULTS = {f.name: f.default for f in fields(LinkSpec)}


class LineDict(dict):
    """A YAML mapping that remembers its line and the line of each key."""

    line: int = 0
    key_lines: dict[Any, int]


class LineList(list):
    """A YAML sequence that remembers the line of each item."""

    line: int = 0
    item_lines: list[int]


class _LineLoader(yaml.SafeLoader):
    """SafeLoader whose mappings and sequences carry 1-based line numbers and
    which refuses a key given twice (plain PyYAML keeps the last silently)."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        try:
            hash(key)
        except TypeError:
            raise TopologyError("a mapping key must be a plain value",
                                Loc(_file(loader), line)) from None
        if key in out:
            raise TopologyError(f"key {key!r} given twice (first at line {out.key_lines[key]})",
                                Loc(_file(loader), line))
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = line
    return out


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> LineList:
    out = LineList(loader.construct_object(child, deep=True) for child in node.value)
    out.line = node.start_mark.line + 1
    out.item_lines = [child.start_mark.line + 1 for child in node.value]
    return out


def _file(loader: yaml.SafeLoader) -> str:
    return str(getattr(loader, "intbed_file", "<yaml>"))


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG,
                            _construct_sequence)


def parse_yaml(text: str, file: str = "<yaml>") -> Any:
    """YAML text -> LineDict/LineList tree; a syntax error becomes a located TopologyError."""
    try:
        # The reader checks the characters as the loader is made.
        loader = _LineLoader(text)
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        col = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        raise TopologyError(f"YAML: character U+{exc.character:04X} is not allowed in YAML "
                            "text; is this the right file?", Loc(file, line, col)) from None
    loader.intbed_file = file  # type: ignore[attr-defined]
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        message, line = _syntax_error(exc)
        raise TopologyError(f"YAML syntax: {message}", Loc(file, line)) from None
    except yaml.YAMLError as exc:
        raise TopologyError(f"YAML: {exc}", Loc(file, 1)) from None
    finally:
        loader.dispose()


def _syntax_error(exc: yaml.MarkedYAMLError) -> tuple[str, int]:
    """Message and 1-based line of a YAML syntax error. An unclosed bracket or
    quote is found only where the scanner gives up, lines later (often at the
    end of the file), so it is placed where it was opened."""
    problem, context = exc.problem or exc.context or "", exc.context or ""
    mark = exc.problem_mark or exc.context_mark
    unclosed = context.startswith(("while parsing a flow", "while scanning a quoted"))
    if exc.context_mark is not None and (unclosed or "end of stream" in problem):
        what = context.removeprefix("while parsing a ").removeprefix("while scanning a ")
        after = f" at line {mark.line + 1}" if mark is not None else ""
        return f"{what} not closed ({problem}{after})", exc.context_mark.line + 1
    return problem, mark.line + 1 if mark is not None else 1


def load_yaml(path: str | Path) -> Topology:
    path = Path(path)
    text = read_text(path, "topology file", TopologyError)
    topo = topology_from_dict(parse_yaml(text, str(path)), str(path))
    return topo


def save_yaml(topo: Topology, path: str | Path) -> None:
    Path(path).write_text(dump_yaml(topo))


def dump_yaml(topo: Topology) -> str:
    """YAML text: one flow-style line per host and link, block style above."""
    return yaml.safe_dump(topology_to_dict(topo), sort_keys=False, default_flow_style=None,
                          width=100)


# ---------------------------------------------------------------- from dict
class _Reader:
    """Turns a (possibly line-annotated) dict tree into a Topology."""

    def __init__(self, file: str) -> None:
        self.file = file

    def loc(self, line: int | None) -> Loc | None:
        return Loc(self.file, line) if line else None

    def key_loc(self, item: Any, key: Any) -> Loc | None:
        lines = getattr(item, "key_lines", None)
        if lines and key in lines:
            return self.loc(lines[key])
        return self.loc(getattr(item, "line", None))

    def mapping(self, item: Any, what: str, keys: tuple[str, ...], line: int | None,
                required: tuple[str, ...] = ()) -> Mapping[Any, Any]:
        if not isinstance(item, Mapping):
            raise TopologyError(f"{what} must be a mapping, not {_kind(item)}", self.loc(line))
        for key in item:
            if key not in keys:
                raise TopologyError(f"{what}: unknown key {key!r} (known: {', '.join(keys)})",
                                    self.key_loc(item, key))
        for key in required:
            if key not in item:
                raise TopologyError(f"{what}: missing key '{key}'", self.loc(line))
        return item

    def section(self, data: Mapping[Any, Any], key: str) -> list[tuple[Any, int | None]]:
        value = data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise TopologyError(f"'{key}' must be a list, not {_kind(value)}",
                                self.key_loc(data, key))
        lines = getattr(value, "item_lines", [None] * len(value))
        return list(zip(value, lines))

    def relocate(self, exc: TopologyError, item: Any) -> TopologyError:
        """Point an error raised by the model at the line of the key at fault."""
        if exc.key is not None:
            loc = self.key_loc(item, exc.key)
            if loc is not None:
                exc.loc = loc
        return exc


def topology_from_dict(data: Any, file: str = "<dict>") -> Topology:
    """Build and validate a Topology from the dict form (see module docstring)."""
    r = _Reader(file)
    top = r.mapping(data, "topology", _TOP_KEYS, getattr(data, "line", 1))
    name = top.get("name", Path(file).stem if file.endswith((".yaml", ".yml")) else "topology")
    if not isinstance(name, str):
        raise TopologyError(f"name must be a string, not {name!r}", r.key_loc(top, "name"))
    topo = Topology(name)
    for item, line in r.section(top, "switches"):
        sw = r.mapping(item, "switch", _SWITCH_KEYS, line, ("name",))
        params = {k: sw[k] for k in _SWITCH_KEYS[2:] if k in sw and k != "ports"}
        params["ports"] = _port_overrides(r, sw)
        try:
            topo.add_switch(sw["name"], sw.get("device_id"), loc=r.loc(line), **params)
        except TopologyError as exc:
            raise r.relocate(exc, sw) from None
    for item, line in r.section(top, "hosts"):
        host = r.mapping(item, "host", _HOST_KEYS, line, ("name", "mac", "ip"))
        try:
            topo.add_host(host["name"], host["mac"], host["ip"],
                          host.get("prefix_len", DEFAULT_HOST_PREFIX_LEN), loc=r.loc(line))
        except TopologyError as exc:
            raise r.relocate(exc, host) from None
    for item, line in r.section(top, "links"):
        link = r.mapping(item, "link", _LINK_KEYS, line, ("a", "b"))
        params = {k: link[k] for k in _LINK_KEYS[4:] if k in link}
        try:
            topo.add_link(link["a"], link["b"], link.get("a_port"), link.get("b_port"),
                          loc=r.loc(line), **params)
        except TopologyError as exc:
            raise r.relocate(exc, link) from None
    topo.validate()
    return topo


def _port_overrides(r: _Reader, sw: Mapping[Any, Any]) -> dict[int, PortSpec]:
    ports = sw.get("ports")
    if ports is None:
        return {}
    if not isinstance(ports, Mapping):
        raise TopologyError("ports must map port numbers to settings",
                            r.key_loc(sw, "ports"))
    out: dict[int, PortSpec] = {}
    for port, settings in ports.items():
        line = getattr(ports, "key_lines", {}).get(port)
        if isinstance(port, bool) or not isinstance(port, int):
            raise TopologyError(f"port number must be an integer, not {port!r}", r.loc(line))
        spec = r.mapping(settings, f"port {port}", _PORT_KEYS, line)
        out[port] = PortSpec(spec.get("queue_depth"), spec.get("queue_rate_pps"))
    return out


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


# ------------------------------------------------------------------ to dict
def topology_to_dict(topo: Topology) -> dict[str, Any]:
    """Plain dict form, defaults left out so the YAML stays short."""
    switches = []
    for sw in topo.switches.values():
        item: dict[str, Any] = {"name": sw.name, "device_id": sw.device_id}
        if sw.program is not None:
            item["program"] = sw.program
        if sw.queue_depth != DEFAULT_QUEUE_DEPTH:
            item["queue_depth"] = sw.queue_depth
        for key in ("queue_rate_pps", "processing_rate_pps"):
            if getattr(sw, key) is not None:
                item[key] = getattr(sw, key)
        if sw.clock_offset_us:
            item["clock_offset_us"] = sw.clock_offset_us
        overrides = {}
        for port in sorted(sw.ports):
            spec = sw.ports[port]
            fields = {k: getattr(spec, k) for k in _PORT_KEYS if getattr(spec, k) is not None}
            if fields:
                overrides[port] = fields
        if overrides:
            item["ports"] = overrides
        switches.append(item)
    hosts = []
    for host in topo.hosts.values():
        entry: dict[str, Any] = {"name": host.name, "mac": host.mac, "ip": host.ip}
        if host.prefix_len != DEFAULT_HOST_PREFIX_LEN:
            entry["prefix_len"] = host.prefix_len
        hosts.append(entry)
    links = []
    for link in topo.links:
        row: dict[str, Any] = {"a": link.a}
        if link.a_port != HOST_PORT or link.a in topo.switches:
            row["a_port"] = link.a_port
        row["b"] = link.b
        if link.b_port != HOST_PORT or link.b in topo.switches:
            row["b_port"] = link.b_port
        for key in _LINK_KEYS[4:]:
            value = getattr(link, key)
            if value != _LINK_DEFAULTS[key]:
                row[key] = value
        links.append(row)
    return {"name": topo.name, "switches": switches, "hosts": hosts, "links": links}

