"""INT-label's parameters, and their installation on one switch by P4Runtime.

Table and action names are ``p4src/intlabel.p4``'s (docs/intlabel_format.md,
"Control-plane contract"). Installing a switch writes:

- ``MyEgress.int_config`` default action ``set_config(switch_id, T, T1,
  max_hop, f, mode)``, times in microseconds (the switch's clock unit);
- ``MyEgress.last_hop`` entries for the ports whose peer is a host;
- ``MyEgress.report_config`` default action ``set_report`` (the switch's MAC
  and report IP, the collector's MAC and IP, the UDP port);
- clone session 500 to the switch's collector port;
- ``MyEgress.port_shift`` entries with S = 0 for every linked port. The
  table's default already applies S = 0, but P4Runtime MODIFY needs an
  existing entry, so the Pro loop can only change S of ports that have one:
  installing them all up front keeps every later change a MODIFY;
- ``MyIngress.specific_flow`` entries on the first-hop switch of each
  specific flow (section 3.3).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from common.errors import IntbedError
from topologies.model import Topology, ip_to_int

CONFIG_TABLE = "MyEgress.int_config"
CONFIG_ACTION = "MyEgress.set_config"
SHIFT_TABLE = "MyEgress.port_shift"
SHIFT_ACTION = "MyEgress.set_shift"
SHIFT_PARAM = "s"
PORT_KEY = "standard_metadata.egress_port"
LAST_HOP_TABLE = "MyEgress.last_hop"
LAST_HOP_ACTION = "MyEgress.set_last_hop"
REPORT_TABLE = "MyEgress.report_config"
REPORT_ACTION = "MyEgress.set_report"
SPECIFIC_TABLE = "MyIngress.specific_flow"
SPECIFIC_ACTION = "MyIngress.mark_specific"
REPORT_SESSION = 500
DEFAULT_UDP_PORT = 32766
# set_config's mode and f codes (intlabel.p4 MODE_BASE_*, F1..F3).
MODES = {"A": 0, "B": 1}
FUNCTIONS = {"F1": 0, "F2": 1, "F3": 2}
PRO_STYLES = ("shift", "flag")
# Section 5: "Each entry in aging database will be deleted after k * T ... If
# the time-out is triggered, controller will modify the value of Reg2 to 0."
PAPER_RESTORE_FACTOR = 1.0
# The authors' repository (the paper's [28], INT_label/controller/detect1.py)
# re-arms the restore entry with 10 x its time-out instead; no paper text says so.
PROTOTYPE_RESTORE_FACTOR = 10.0
# T and T1 are bit<48> microseconds; INT_num is bit<8> and the paper keeps
# its upper half for specific flows (section 5), so MAX_hop stays below 128.
MAX_TIME_US = (1 << 48) - 1
MAX_MAX_HOP = 127
# Report source addresses: 10.254.0.0/16, one per switch (device id + 1).
REPORT_NET = ip_to_int("10.254.0.0")


class IntLabelConfigError(IntbedError):
    """INT-label parameters that cannot work."""


class _DefaultWriter(Protocol):
    def modify(self, action: str, params: Mapping[str, Any] | None = None) -> Any: ...


class _TableWriter(Protocol):
    @property
    def default(self) -> _DefaultWriter: ...

    def insert(self, match: Mapping[str, Any], action: str,
               params: Mapping[str, Any] | None = None,
               priority: int | None = None) -> Any: ...


class _SessionWriter(Protocol):
    def insert(self, session: int, ports: Any) -> Any: ...


class TableClient(Protocol):
    """What ``configure_switch`` needs of a ``P4RuntimeClient``."""

    @property
    def tables(self) -> Mapping[str, _TableWriter]: ...

    @property
    def clone_sessions(self) -> _SessionWriter: ...


@dataclass(frozen=True)
class SpecificFlow:
    """A flow every hop must label (section 3.3); None fields are wildcards.
    ``proto`` is the original IP protocol."""

    src_ip: str | None = None
    dst_ip: str | None = None
    proto: int | None = None
    sport: int | None = None
    dport: int | None = None
    priority: int = 1

    def match(self) -> dict[str, Any]:
        return {"hdr.ipv4.srcAddr": self.src_ip, "hdr.ipv4.dstAddr": self.dst_ip,
                "meta.l4_proto": self.proto, "meta.l4_sport": self.sport,
                "meta.l4_dport": self.dport}


@dataclass(frozen=True)
class CollectorEndpoint:
    """Where reports go: the collector's addresses and, on every switch, the
    port wired to it (the clone session's port)."""

    mac: str
    ip: str
    switch_port: int


@dataclass(frozen=True)
class IntLabelConfig:
    """INT-label's parameters (paper sections 3 and 5).

    ``mode`` 'A' (interval, Algorithm 1) or 'B' (times-based, Algorithm 2);
    ``f`` the Base B probability function; ``T_ms`` the labeling interval;
    ``T1_ms`` Base B's rest time, in [0, T]; ``max_hop`` MAX_hop. ``pro``
    enables Pro with time-out ``k * T``: ``pro_style`` 'shift' is Algorithm 3
    as printed (S + 1 / S - 1 every k T), 'flag' section 5's implementation
    (label every packet on a time-out, back to S = 0 when the restore entry
    times out ``restore_factor`` x k T later without another). The default
    ``restore_factor`` 1 is the text's reset at the k T time-out;
    ``PROTOTYPE_RESTORE_FACTOR`` (10) is the authors' repository's, which no
    paper text states (docs/intlabel.md). ``switch_ids`` maps switch names
    to the IDs written in items (default: device ids).
    """

    mode: str = "A"
    f: str = "F1"
    T_ms: float = 50.0
    T1_ms: float = 0.0
    max_hop: int = 5
    pro: bool = False
    k: float = 2.0
    pro_style: str = "shift"
    restore_factor: float = PAPER_RESTORE_FACTOR
    udp_port: int = DEFAULT_UDP_PORT
    specific_flows: tuple[SpecificFlow, ...] = ()
    switch_ids: Mapping[str, int] | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        _validate(self)

    @property
    def T_us(self) -> int:
        return round(self.T_ms * 1000)

    @property
    def T1_us(self) -> int:
        return round(self.T1_ms * 1000)

    @property
    def T_s(self) -> float:
        return self.T_ms / 1000

    @property
    def mode_code(self) -> int:
        return MODES[self.mode]

    @property
    def f_code(self) -> int:
        return FUNCTIONS[self.f]

    def switch_id(self, switch: str, device_id: int) -> int:
        if self.switch_ids is not None and switch in self.switch_ids:
            return self.switch_ids[switch]
        return device_id


def _fail(message: str) -> None:
    raise IntLabelConfigError(message)


def _validate(c: IntLabelConfig) -> None:
    if c.mode not in MODES:
        _fail(f"mode must be 'A' or 'B', not {c.mode!r}")
    if c.f not in FUNCTIONS:
        _fail(f"probability function f must be 'F1', 'F2' or 'F3', not {c.f!r}")
    if not c.T_ms > 0:
        _fail(f"labeling interval T must be positive, not {c.T_ms} ms")
    if c.T_us < 1 or c.T_us > MAX_TIME_US:
        _fail(f"labeling interval T = {c.T_ms} ms is not 1 .. 2^48 - 1 microseconds")
    if not c.T1_ms >= 0:
        _fail(f"rest time T1 must not be negative, not {c.T1_ms} ms")
    if c.T1_ms > c.T_ms:
        _fail(f"rest time T1 ({c.T1_ms} ms) must not exceed the labeling interval T "
              f"({c.T_ms} ms)")
    if isinstance(c.max_hop, bool) or not isinstance(c.max_hop, int) or c.max_hop < 1:
        _fail(f"MAX_hop must be an integer of at least 1, not {c.max_hop!r}")
    if c.max_hop > MAX_MAX_HOP:
        _fail(f"MAX_hop must be at most {MAX_MAX_HOP} (INT_num's upper half marks specific "
              f"flows), not {c.max_hop}")
    if c.mode == "B" and c.f in ("F2", "F3") and c.max_hop < 2:
        _fail(f"{c.f} divides by MAX_hop - 1: MAX_hop must be at least 2, not {c.max_hop}")
    if not c.k > 0:
        _fail(f"Pro's k must be positive, not {c.k}")
    if c.pro_style not in PRO_STYLES:
        _fail(f"pro_style must be 'shift' or 'flag', not {c.pro_style!r}")
    if not c.restore_factor > 0:
        _fail(f"restore_factor must be positive, not {c.restore_factor}")
    if not 0 < c.udp_port <= 0xFFFF:
        _fail(f"report UDP port must be 1 .. 65535, not {c.udp_port}")


@dataclass
class SwitchSetup:
    """What ``configure_switch`` installed on one switch."""

    switch: str
    switch_id: int
    last_hop_ports: list[int]
    shift_ports: list[int]
    specific_flows: list[SpecificFlow]


def report_source_ip(device_id: int) -> int:
    """A switch's report source address, 10.254.0.0 + (device id + 1)."""
    return REPORT_NET + ((device_id + 1) & 0xFFFF)


def configure_switch(client: TableClient, topo: Topology, switch: str, cfg: IntLabelConfig,
                     collector: CollectorEndpoint) -> SwitchSetup:
    """Install INT-label on ``switch`` through its P4Runtime ``client``."""
    spec = topo.switches[switch]
    sid = cfg.switch_id(switch, spec.device_id)
    tables = client.tables
    tables[CONFIG_TABLE].default.modify(CONFIG_ACTION, {
        "switch_id": sid, "T": cfg.T_us, "T1": cfg.T1_us, "max_hop": cfg.max_hop,
        "f": cfg.f_code, "mode": cfg.mode_code})
    tables[REPORT_TABLE].default.modify(REPORT_ACTION, {
        "src_mac": spec.mac, "dst_mac": collector.mac,
        "src_ip": report_source_ip(spec.device_id), "dst_ip": collector.ip,
        "udp_port": cfg.udp_port})
    client.clone_sessions.insert(REPORT_SESSION, [collector.switch_port])
    peers = topo.port_peers(switch)
    last_hop = [port for port, peer, _ in peers if peer in topo.hosts]
    for port in last_hop:
        tables[LAST_HOP_TABLE].insert({PORT_KEY: port}, LAST_HOP_ACTION, {})
    shift_ports = [port for port, _, _ in peers]
    for port in shift_ports:
        tables[SHIFT_TABLE].insert({PORT_KEY: port}, SHIFT_ACTION, {SHIFT_PARAM: 0})
    flows = [flow for flow in cfg.specific_flows if _first_hop_here(topo, switch, flow)]
    for flow in flows:
        tables[SPECIFIC_TABLE].insert(flow.match(), SPECIFIC_ACTION, {}, priority=flow.priority)
    return SwitchSetup(switch, sid, last_hop, shift_ports, flows)


def _first_hop_here(topo: Topology, switch: str, flow: SpecificFlow) -> bool:
    """A flow is marked on its source host's switch; without a source, on
    every switch that has hosts."""
    if flow.src_ip is None:
        return any(peer in topo.hosts for _, peer, _ in topo.port_peers(switch))
    return topo.host_switch(topo.host_by_ip(flow.src_ip).name)[0] == switch
