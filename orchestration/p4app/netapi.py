"""p4-utils ``network.py`` scripts run unchanged against a stand-in API.

While ``load_script`` runs a script, ``p4utils.mininetlib.network_API`` (and
its parent packages) exist in ``sys.modules`` as a module whose
``NetworkAPI`` records the network the script declares into a
``NetworkSpec``; afterwards the previous entries are put back. Nothing is
installed. Methods about p4-utils' own console, logs, capture files and
compilers are accepted and have no effect; any other method intbed cannot
honour is reported by name, once (at its first call), and ignored.
"""

from __future__ import annotations

import runpy
import sys
import traceback
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from common.errors import IntbedError, Loc
from orchestration.p4app.spec import (
    LinkDecl,
    NetworkSpec,
    P4AppError,
    parse_delay_us,
    parse_number,
)

MODULE = "p4utils.mininetlib.network_API"
_PACKAGES = ("p4utils", "p4utils.mininetlib", MODULE)

# Accepted without effect: p4-utils' console, logging, captures, compilers,
# ARP set-up (intbed's hosts address frames as static ARP would) and ports
# of the switches' own servers.
_QUIET = frozenset({
    "setLogLevel", "enableCli", "disableCli", "enablePcapDump", "enablePcapDumpAll",
    "disablePcapDump", "disablePcapDumpAll", "enableLog", "enableLogAll", "disableLog",
    "disableLogAll", "enableArpTables", "disableArpTables", "enableGwArp", "disableGwArp",
    "setCompiler", "setThriftPort", "setGrpcPort", "enableDebugger", "enableDebuggerAll",
    "disableDebugger", "disableDebuggerAll", "setSwitchDpid", "setIntfName",
    "setTopologyFile", "stopNetwork", "printPortMapping", "setIpBase"})


class _Capture:
    """The spec one script run fills, and where in the script each call was."""

    def __init__(self, script: Path) -> None:
        self.script = script
        self.spec = NetworkSpec(script, script.parent)
        self.started = False
        self.instances = 0
        self.reported: set[str] = set()

    def note_once(self, what: str, text: str) -> None:
        """A note for ``what`` (a method or option name), at its first call only."""
        if what not in self.reported:
            self.reported.add(what)
            self.spec.note(f"{self.loc()}: warning: {text}")

    def loc(self) -> Loc:
        """The script line that called into the API."""
        for frame in reversed(traceback.extract_stack()):
            if Path(frame.filename).resolve() == self.script:
                return Loc(str(self.script), frame.lineno or 0)
        return Loc(str(self.script), 0)


class _StandIn:
    """The recording NetworkAPI; one class per run, bound to its capture."""

    _capture: _Capture

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._capture.instances += 1
        self._spec = self._capture.spec
        self._keys: dict[tuple[str, str], list[LinkDecl]] = {}

    # ----------------------------------------------------------------- helpers
    def _loc(self) -> Loc:
        return self._capture.loc()

    def _note(self, method: str) -> None:
        self._capture.note_once(method, f"NetworkAPI.{method}() is not supported by intbed, "
                                "ignored")

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in _QUIET:
            return lambda *args, **kwargs: None
        return lambda *args, **kwargs: self._note(name)

    def _node_exists(self, name: str) -> None:
        if name not in self._spec.switches and name not in self._spec.hosts:
            raise P4AppError(f"'{name}' is not a switch or host added before this call "
                             "(add nodes before linking them)", self._loc())

    def _link(self, node1: str, node2: str, key: int | None = None) -> LinkDecl:
        links = self._keys.get((node1, node2)) or self._keys.get((node2, node1))
        if not links:
            raise P4AppError(f"no link between '{node1}' and '{node2}'", self._loc())
        if key is None:
            return links[0]
        if not 0 <= key < len(links):
            raise P4AppError(f"no link {key} between '{node1}' and '{node2}'", self._loc())
        return links[key]

    # ------------------------------------------------------------------- nodes
    def addP4Switch(self, name: str, **opts: Any) -> str:
        for key in opts:
            if key not in ("cli_input", "p4_src"):
                self._capture.note_once(f"addP4Switch:{key}", f"addP4Switch option '{key}' "
                                        "is not used by intbed, ignored")
        self._spec.switches[name] = {k: v for k, v in opts.items()
                                     if k in ("cli_input", "p4_src")}
        self._spec.locs[f"switch:{name}"] = self._loc()
        return name

    addP4RuntimeSwitch = addP4Switch

    def execScript(self, cmd: str, reboot: bool = True) -> None:
        self._spec.scripts.append((cmd, self._loc()))

    def enableCpuPort(self, name: str) -> None:
        self._node_exists(name)
        self._spec.switches[name]["cpu_port"] = True

    def disableCpuPort(self, name: str) -> None:
        self._node_exists(name)
        self._spec.switches[name].pop("cpu_port", None)

    def enableCpuPortAll(self) -> None:
        for opts in self._spec.switches.values():
            opts["cpu_port"] = True

    def disableCpuPortAll(self) -> None:
        for opts in self._spec.switches.values():
            opts.pop("cpu_port", None)

    def addHost(self, name: str, **opts: Any) -> str:
        kept = {}
        for key, value in opts.items():
            if key in ("ip", "mac"):
                kept[key] = value
            elif key == "defaultRoute" and isinstance(value, str) and value.startswith("via "):
                kept["gw"] = value[4:].strip()
            else:
                self._capture.note_once(f"addHost:{key}", f"addHost option '{key}' is not "
                                        "used by intbed, ignored")
        self._spec.hosts[name] = kept
        self._spec.locs[f"host:{name}"] = self._loc()
        return name

    def setP4Source(self, name: str, p4_src: str) -> None:
        self._spec.switches.setdefault(name, {})["p4_src"] = p4_src

    def setP4SourceAll(self, p4_src: str) -> None:
        for opts in self._spec.switches.values():
            opts["p4_src"] = p4_src
        self._spec.default_program = p4_src

    def setP4CliInput(self, name: str, cli_input: str) -> None:
        self._spec.switches.setdefault(name, {})["cli_input"] = cli_input

    def setDefaultRoute(self, name: str, default_route: str) -> None:
        if name in self._spec.hosts:
            self._spec.hosts[name]["gw"] = str(default_route).removeprefix("via ").strip()

    def isSwitch(self, name: str) -> bool:
        return name in self._spec.switches

    isP4Switch = isSwitch

    def isHost(self, name: str) -> bool:
        return name in self._spec.hosts

    def switches(self) -> list[str]:
        return list(self._spec.switches)

    def hosts(self) -> list[str]:
        return list(self._spec.hosts)

    def nodes(self) -> list[str]:
        return [*self._spec.switches, *self._spec.hosts]

    # ------------------------------------------------------------------- links
    def addLink(self, node1: str, node2: str, port1: int | None = None,
                port2: int | None = None, key: int | None = None, **opts: Any) -> int:
        self._node_exists(node1)
        self._node_exists(node2)
        link = LinkDecl(node1, node2, self._loc(), port1, port2)
        for name, value in opts.items():
            if name == "bw":
                link.bandwidth_mbps = parse_number(value, f"link {node1}-{node2}: bw",
                                                   link.loc)
            elif name == "delay":
                link.delay_us = parse_delay_us(value, f"link {node1}-{node2}", link.loc)
            elif name == "loss":  # Mininet's link option: percent
                link.loss = parse_number(value, f"link {node1}-{node2}: loss", link.loc,
                                         100) / 100
            elif name in ("addr1", "addr2"):
                link.addrs.setdefault(node1 if name == "addr1" else node2, {})["mac"] = value
            elif name == "weight":
                link.weight = parse_number(value, f"link {node1}-{node2}: weight", link.loc)
            elif name not in ("intfName1", "intfName2"):
                self._capture.note_once(f"addLink:{name}", f"addLink option '{name}' is not "
                                        "used by intbed, ignored")
        self._spec.links.append(link)
        same = self._keys.setdefault((node1, node2), [])
        same.append(link)
        return len(same) - 1

    def setBw(self, node1: str, node2: str, bw: float, key: int | None = None) -> None:
        link = self._link(node1, node2, key)
        link.bandwidth_mbps = parse_number(bw, f"link {node1}-{node2}: bw", self._loc())

    def setBwAll(self, bw: float) -> None:
        for link in self._spec.links:
            link.bandwidth_mbps = parse_number(bw, "setBwAll: bw", self._loc())

    def setDelay(self, node1: str, node2: str, delay: Any, key: int | None = None) -> None:
        self._link(node1, node2, key).delay_us = parse_delay_us(delay, "setDelay", self._loc())

    def setDelayAll(self, delay: Any) -> None:
        for link in self._spec.links:
            link.delay_us = parse_delay_us(delay, "setDelayAll", self._loc())

    def setLoss(self, node1: str, node2: str, loss: float, key: int | None = None) -> None:
        self._link(node1, node2, key).loss = parse_number(loss, "setLoss: loss (fraction)",
                                                          self._loc(), 1)

    def setLossAll(self, loss: float) -> None:
        for link in self._spec.links:
            link.loss = parse_number(loss, "setLossAll: loss (fraction)", self._loc(), 1)

    def setIntfPort(self, node1: str, node2: str, port: int, key: int | None = None) -> None:
        link = self._link(node1, node2, key)
        if link.a == node1:
            link.a_port = port
        else:
            link.b_port = port

    def setIntfIp(self, node1: str, node2: str, ip: str, key: int | None = None) -> None:
        self._link(node1, node2, key).addrs.setdefault(node1, {})["ip"] = ip

    def setIntfMac(self, node1: str, node2: str, mac: str, key: int | None = None) -> None:
        self._link(node1, node2, key).addrs.setdefault(node1, {})["mac"] = mac

    # --------------------------------------------------------------- addresses
    def l2(self) -> None:
        self._strategy("l2")

    def mixed(self) -> None:
        self._strategy("mixed")

    def l3(self) -> None:
        self._strategy("l3")

    def _strategy(self, name: str) -> None:
        self._spec.strategy = name
        self._spec.locs["strategy"] = self._loc()

    def startNetwork(self) -> None:
        self._capture.started = True


@contextmanager
def _stand_in(capture: _Capture) -> Iterator[None]:
    """The stand-in modules in ``sys.modules`` for the duration of the block."""
    saved = {name: sys.modules.get(name) for name in _PACKAGES}
    api = type("NetworkAPI", (_StandIn,), {"_capture": capture, "__module__": MODULE})
    modules = {name: types.ModuleType(name, "intbed's stand-in for p4-utils' NetworkAPI")
               for name in _PACKAGES}
    modules["p4utils"].__path__ = []  # type: ignore[attr-defined]
    modules["p4utils.mininetlib"].__path__ = []  # type: ignore[attr-defined]
    modules["p4utils"].mininetlib = modules["p4utils.mininetlib"]  # type: ignore[attr-defined]
    modules["p4utils.mininetlib"].network_API = modules[MODULE]  # type: ignore[attr-defined]
    modules[MODULE].NetworkAPI = api  # type: ignore[attr-defined]
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def load_script(path: str | Path) -> NetworkSpec:
    """Run the NetworkAPI script at ``path`` and return the network it declares."""
    script = Path(path).resolve()
    if not script.is_file():
        raise P4AppError("no such file", Loc(str(path), 0))
    capture = _Capture(script)
    argv = sys.argv
    sys.argv = [str(script)]
    try:
        with _stand_in(capture):
            runpy.run_path(str(script), run_name="__main__")
    except IntbedError:
        raise
    except SyntaxError as exc:
        raise P4AppError(f"Python syntax: {exc.msg}",
                         Loc(str(script), exc.lineno or 0, exc.offset or 0)) from None
    except ModuleNotFoundError as exc:
        what = (f"imports {exc.name}, which intbed does not provide (only "
                f"{MODULE}.NetworkAPI)" if (exc.name or "").startswith("p4utils")
                else f"imports {exc.name}, which is not installed")
        raise P4AppError(f"the script {what}", _script_loc(exc, script)) from None
    except SystemExit as exc:
        if exc.code not in (None, 0):
            raise P4AppError(f"the script exited with status {exc.code}",
                             Loc(str(script), 0)) from None
    except Exception as exc:
        raise P4AppError(f"the script raised {type(exc).__name__}: {exc}",
                         _script_loc(exc, script)) from None
    finally:
        sys.argv = argv
    if capture.instances == 0:
        raise P4AppError(f"the script never created a NetworkAPI (from {MODULE} import "
                         "NetworkAPI; net = NetworkAPI())", Loc(str(script), 0))
    return capture.spec


def _script_loc(exc: BaseException, script: Path) -> Loc:
    """The deepest line of ``script`` in the exception's traceback."""
    line = 0
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).resolve() == script:
            line = frame.lineno or 0
    return Loc(str(script), line)
