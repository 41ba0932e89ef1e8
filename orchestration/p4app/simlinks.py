"""Interface state of a sim network for controllers that call ``ip``.

Controllers written for Mininet read and set link state with ``ip link``
(12-Fast-Reroute's CLI fails a link by taking its interfaces down, with
sudo: ``sudobin/``). On the sim target ``simbin/`` is first on the
controller's PATH: its ``ip`` asks
this server, over a UNIX socket, about interfaces named as p4-utils names
them (``s1-eth2``); taking one down fails its link both ways
(``SimNetwork.fail_link``), bringing both ends up restores it.
"""

from __future__ import annotations

import re
import socketserver
import threading
from pathlib import Path
from typing import Any

SIMBIN = Path(__file__).resolve().parent / "simbin"
_INTF = re.compile(r"^(.+)-eth(\d+)$")


class LinkStates:
    """Which sim interfaces are down, and the links they take with them."""

    def __init__(self, net: Any, lock: Any) -> None:
        self.net, self.lock = net, lock
        self.down: set[tuple[str, int]] = set()
        self.index = {}
        for i, (node, port) in enumerate(sorted(
                (end for ln in net.topo.links for end in ((ln.a, ln.a_port), (ln.b, ln.b_port))
                 ), key=str), 2):
            self.index[(node, port)] = i

    def _end(self, intf: str) -> tuple[str, int, str]:
        m = _INTF.match(intf)
        if m is None or (m.group(1), int(m.group(2))) not in self.index:
            raise LookupError(f'Device "{intf}" does not exist.')
        node, port = m.group(1), int(m.group(2))
        for ln in self.net.topo.links:
            if (ln.a, ln.a_port) == (node, port):
                return node, port, ln.b
            if (ln.b, ln.b_port) == (node, port):
                return node, port, ln.a
        raise LookupError(f'Device "{intf}" does not exist.')

    def answer(self, line: str) -> str:
        words = line.split()
        try:
            node, port, peer = self._end(words[1])
        except (LookupError, IndexError) as exc:
            return f"error {exc}"
        if words[0] == "show":
            state = "DOWN" if (node, port) in self.down else "UP"
            flags = "BROADCAST,MULTICAST" + (",UP,LOWER_UP" if state == "UP" else "")
            return (f"{self.index[(node, port)]}: {words[1]}: <{flags}> mtu 1500 qdisc noqueue "
                    f"state {state} mode DEFAULT group default qlen 1000")
        with self.lock:
            if words[2] == "down":
                self.down.add((node, port))
                self.net.fail_link(node, peer)
            else:
                self.down.discard((node, port))
                if not any(end in self.down for end in self._ends(node, peer)):
                    self.net.restore_link(node, peer)
        return ""

    def _ends(self, a: str, b: str) -> list[tuple[str, int]]:
        return [end for ln in self.net.topo.links if {ln.a, ln.b} == {a, b}
                for end in ((ln.a, ln.a_port), (ln.b, ln.b_port))]


class LinkServer:
    """Serves ``LinkStates`` on a UNIX socket at ``path``, one line per request."""

    def __init__(self, states: LinkStates, path: Path) -> None:
        self.path = path

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                line = self.rfile.readline().decode()
                self.wfile.write((states.answer(line) + "\n").encode())

        self._server = socketserver.ThreadingUnixStreamServer(str(path), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="sim-links",
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
