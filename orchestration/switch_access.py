"""What a command file sets that P4Runtime does not carry, per target.

``set_queue_depth``/``set_queue_rate`` change a switch's egress queues: on
``sim`` the running ports at once; on the live targets the ``Topology``'s
port settings, which they apply when the switch starts (so those commands
are applied before ``start()``). ``register_write`` on ``sim`` writes the
engine's cells, because its P4Runtime service refuses register writes as
BMv2's does.
"""

from __future__ import annotations

from typing import Any

from common.errors import InvalidValueError
from topologies.model import PortSpec, Topology


def _ports(topo: Topology, switch: str, port: int | None) -> list[int]:
    used = topo.switches[switch].ports
    if port is None:
        return sorted(used)
    if port not in used:
        raise InvalidValueError(f"switch '{switch}' has no port {port} (ports: "
                                f"{', '.join(map(str, sorted(used))) or 'none'})")
    return [port]


class TopologyQueues:
    """Queue commands written into the Topology (applied when a target starts)."""

    def __init__(self, topo: Topology, switch: str) -> None:
        self.topo, self.switch = topo, switch

    def set_queue_depth(self, depth: int, port: int | None) -> None:
        self._record("queue_depth", depth, port)

    def set_queue_rate(self, rate_pps: float, port: int | None) -> None:
        self._record("queue_rate_pps", rate_pps, port)

    def _record(self, key: str, value: float, port: int | None) -> None:
        """Every port when ``port`` is None (and the switch-wide setting), else that one."""
        spec = self.topo.switches[self.switch]
        if port is None:
            setattr(spec, key, value)
        for p in _ports(self.topo, self.switch, port):
            setattr(spec.ports.setdefault(p, PortSpec()), key, value)


class SimQueues(TopologyQueues):
    """Queue commands on a running sim switch: its egress ports change now,
    and the Topology records the setting."""

    def __init__(self, net: Any, switch: str) -> None:
        super().__init__(net.topo, switch)
        self.ports = net.switches[switch].ports

    def set_queue_depth(self, depth: int, port: int | None) -> None:
        super().set_queue_depth(depth, port)
        for p in _ports(self.topo, self.switch, port):
            self.ports[p].depth = depth

    def set_queue_rate(self, rate_pps: float, port: int | None) -> None:
        super().set_queue_rate(rate_pps, port)
        for p in _ports(self.topo, self.switch, port):
            self.ports[p].set_rate(rate_pps)


class EngineRegisters:
    """Register cells of an in-process engine, by the register's full name."""

    def __init__(self, engine: Any) -> None:
        self._cells = {ext.qname: engine.externs[i]
                       for i, ext in enumerate(engine.program.externs) if ext.kind == "register"}

    def write_register(self, name: str, index: int | None, value: int) -> None:
        cells = self._cells.get(name)
        if cells is None:
            raise InvalidValueError(f"no register '{name}' in the running program")
        if index is None:
            cells.values[:] = [value & cells.mask] * cells.size
        else:
            cells.set(index, value)
