"""p4-utils' automated address assignment, as its documentation states it.

With hosts named ``h<ID>`` and switches ``s<ID>``:

- ``l2``: every host in ``10.0.0.0/16``; host ``hN`` gets ``10.0.x.y/16``,
  x and y the upper and lower bytes of N. Hosts know each other's MACs
  (static ARP), so a frame goes to the peer's MAC.
- ``mixed``: hosts of one switch share a /24; ``hN`` on switch ``sM`` gets
  ``10.x.y.N/24`` (x, y the upper and lower bytes of M), gateway
  ``10.x.y.254``.
- ``l3``: each host its own /24 shared with its switch port; ``hN`` on
  ``sM`` gets ``10.M.N.2/24``, gateway ``10.M.N.1``.

A host's MAC is ``00:00`` followed by its IPv4 address in hex
(``10.0.1.5`` -> ``00:00:0a:00:01:05``). Without a strategy (``manual``)
hosts take the ``ip``/``mac`` they are given, else ``10.0.0.N/8`` as in
Mininet. Addresses given explicitly always win.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from orchestration.p4app.spec import NetworkSpec, P4AppError

STRATEGIES = ("l2", "mixed", "l3", "manual")
_ID = re.compile(r"(\d+)$")


def mac_of_ip(ip: str) -> str:
    return "00:00:" + ":".join(f"{b:02x}" for b in ipaddress.IPv4Address(ip).packed)


def _node_id(spec: NetworkSpec, name: str, kind: str) -> int:
    m = _ID.search(name)
    if m is None or int(m.group(1)) == 0:
        raise P4AppError(f"{kind} '{name}': assignment strategy '{spec.strategy}' numbers "
                         f"nodes by name: call {kind}s like {kind[0]}1, {kind[0]}2, ... or "
                         "give addresses yourself", spec.locs.get(f"{kind}:{name}"))
    return int(m.group(1))


def _gateway_switch(spec: NetworkSpec, host: str) -> str:
    peers = [link.b if link.a == host else link.a for link in spec.links
             if host in (link.a, link.b)]
    switches = [p for p in peers if p in spec.switches]
    if len(peers) != 1 or len(switches) != 1:
        raise P4AppError(f"host '{host}': assignment strategy '{spec.strategy}' needs each "
                         f"host linked to exactly one switch (links to: "
                         f"{', '.join(peers) or 'nothing'})", spec.locs.get(f"host:{host}"))
    return switches[0]


def _given(spec: NetworkSpec, host: str) -> dict[str, Any]:
    """Addresses written for ``host``: its own options, then its link end's."""
    out: dict[str, Any] = {}
    for link in spec.links:
        out.update(link.addrs.get(host, {}))
    opts = spec.hosts.get(host, {})
    for key in ("ip", "mac"):
        if opts.get(key):
            out[key] = opts[key]
    return out


def _split_ip(text: Any, default_prefix: int, spec: NetworkSpec, host: str) -> tuple[str, int]:
    try:
        iface = ipaddress.IPv4Interface(text if "/" in str(text)
                                        else f"{text}/{default_prefix}")
    except ValueError:
        raise P4AppError(f"host '{host}': ip must be an IPv4 address like 10.0.1.1/24, not "
                         f"{text!r}", spec.locs.get(f"host:{host}")) from None
    return str(iface.ip), iface.network.prefixlen


def assign(spec: NetworkSpec) -> tuple[dict[str, tuple[str, int, str]], dict[str, str]]:
    """(host -> (ip, prefix length, mac), host -> gateway IP)."""
    strategy = spec.strategy or "manual"
    if strategy not in STRATEGIES:
        raise P4AppError(f"unknown assignment_strategy '{strategy}' (known: "
                         f"{', '.join(STRATEGIES)})", spec.locs.get("strategy"))
    addresses: dict[str, tuple[str, int, str]] = {}
    gateways: dict[str, str] = {}
    for order, host in enumerate(spec.hosts, 1):
        if strategy == "l2":
            n = _node_id(spec, host, "host")
            ip, prefix = f"10.0.{n >> 8 & 0xFF}.{n & 0xFF}", 16
        elif strategy == "mixed":
            n = _node_id(spec, host, "host")
            sw = _node_id(spec, _gateway_switch(spec, host), "switch")
            net = f"10.{sw >> 8 & 0xFF}.{sw & 0xFF}"
            ip, prefix, gateways[host] = f"{net}.{n & 0xFF}", 24, f"{net}.254"
        elif strategy == "l3":
            n = _node_id(spec, host, "host")
            sw = _node_id(spec, _gateway_switch(spec, host), "switch")
            net = f"10.{sw & 0xFF}.{n & 0xFF}"
            ip, prefix, gateways[host] = f"{net}.2", 24, f"{net}.1"
        else:
            m = _ID.search(host)
            n = int(m.group(1)) if m else order
            ip, prefix = f"10.0.{n >> 8 & 0xFF}.{n & 0xFF}", 8
        given = _given(spec, host)
        if "ip" in given:
            ip, prefix = _split_ip(given["ip"], prefix, spec, host)
        mac = given.get("mac") or mac_of_ip(ip)
        addresses[host] = (ip, prefix, mac)
        gw = spec.hosts.get(host, {}).get("gw")
        if gw:
            gateways[host] = str(gw).split("/")[0]
    return addresses, gateways
