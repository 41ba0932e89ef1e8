"""p4-utils' CPU port on the sim: a veth pair whose ``<switch>-cpu-eth1``
end a controller sniffs (04-L2_Learning's cpu variant does, with Scapy).

The sim switch's pipeline sends to the CPU port, which has no link; its
``unconnected`` hook writes those frames into ``<switch>-cpu-eth0`` with a
raw socket, so they appear on the other end in wall-clock time. Needs root
(the veths live in this host's namespace); without it, ``SimCpuPorts``
says why and the controller finds no CPU interface.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from orchestration.p4app.topojson import cpu_interfaces


class SimCpuPorts:
    """The veths and hooks of every switch with a CPU port; ``close`` removes them."""

    def __init__(self, net: Any, cpu_ports: dict[str, int]) -> None:
        self.net = net
        self.made: list[str] = []
        self._sockets: list[Any] = []
        self.problem: str | None = None
        if cpu_ports and os.geteuid() != 0:
            self.problem = "the sim's CPU ports are veth pairs, which need root"
            return
        for name, port in sorted(cpu_ports.items()):
            self._add(name, port)

    def _add(self, name: str, port: int) -> None:
        from common.rawsock import open_raw_socket
        from orchestration.live.netutil import add_veth_pair

        inner, outer = cpu_interfaces(name)
        self.problem = add_veth_pair(inner, outer)
        if self.problem is not None:
            return
        self.made.append(inner)
        for iface in (inner, outer):  # no router solicitations on a CPU port
            try:
                Path(f"/proc/sys/net/ipv6/conf/{iface}/disable_ipv6").write_text("1\n")
            except OSError:
                pass
        sock = open_raw_socket(inner, receive=False)
        self._sockets.append(sock)
        switch = self.net.switches[name]
        previous = switch.unconnected

        def to_cpu(out_port: int, frame: bytes) -> None:
            if out_port == port:
                sock.send(frame)
            elif previous is not None:
                previous(out_port, frame)
        switch.unconnected = to_cpu

    def close(self) -> None:
        for sock in self._sockets:
            sock.close()
        self._sockets.clear()
        for iface in self.made:
            subprocess.run(["ip", "link", "del", iface], capture_output=True, check=False)
        self.made.clear()
