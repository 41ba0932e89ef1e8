"""Hosts in network namespaces, each on a veth pair to the root namespace.

The tests and ``intbed bench switch`` put ``intbed-switch`` on the root ends
and talk through the namespace ends with raw sockets. ``ns_socket`` opens a
socket inside a namespace without a subprocess (``common.rawsock``).
IPv6 is switched off on both ends so the kernel's neighbour discovery does
not add frames of its own.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from common.errors import IntbedError
from common.rawsock import in_namespace, open_raw_socket

NETNS_DIR = Path("/var/run/netns")  # where ``ip netns add NAME`` puts NAME


class NamespaceError(IntbedError, RuntimeError):
    """An ``ip`` command failed."""


def _run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise NamespaceError(f"{' '.join(cmd)}: {proc.stderr.strip()}")


def _ip(*args: str, ns: str | None = None) -> None:
    _run(["ip", *(["-n", ns] if ns else []), *args])


def _sysctl(name: str, value: str, ns: str | None = None) -> None:
    _run([*(["ip", "netns", "exec", ns] if ns else []), "sysctl", "-qw", f"{name}={value}"])


def can_create_namespaces() -> str | None:
    """None when this process may create namespaces and veths, else why not."""
    if os.geteuid() != 0:
        return "needs root (network namespaces and veth pairs)"
    for tool in ("ip",):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            return f"'{tool}' (iproute2) is not installed"
    return None


@dataclass(frozen=True)
class VethHost:
    """Namespace ``ns`` holding ``iface``; its peer ``switch_iface`` stays in
    the root namespace for the switch."""

    ns: str
    iface: str
    switch_iface: str
    mac: bytes


def _mac(index: int) -> bytes:
    return bytes((0x02, 0, 0, 0, 0xA0, index))


def create_host(ns: str, iface: str, switch_iface: str, index: int) -> VethHost:
    """One namespace and veth pair, both ends up, IPv6 off."""
    _ip("netns", "add", ns)
    try:
        _ip("link", "add", switch_iface, "type", "veth", "peer", "name", iface, "netns", ns)
        mac = _mac(index)
        _ip("link", "set", iface, "address", mac.hex(":"), ns=ns)
        for name, where in ((iface, ns), (switch_iface, None)):
            _sysctl(f"net.ipv6.conf.{name}.disable_ipv6", "1", ns=where)
            _ip("link", "set", name, "up", ns=where)
        _ip("link", "set", "lo", "up", ns=ns)
    except NamespaceError:
        delete_host(ns, switch_iface)
        raise
    return VethHost(ns, iface, switch_iface, mac)


def delete_host(ns: str, switch_iface: str) -> None:
    """Remove the namespace (its veth end and with it the peer go too)."""
    subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
    subprocess.run(["ip", "link", "del", switch_iface], capture_output=True, check=False)


@contextmanager
def veth_hosts(prefix: str, count: int) -> Iterator[list[VethHost]]:
    """``count`` hosts ``<prefix>h1``.. with switch ends ``<prefix>s1``..;
    everything is removed on exit. Names must fit 15 characters."""
    hosts: list[VethHost] = []
    try:
        for i in range(1, count + 1):
            hosts.append(create_host(f"{prefix}h{i}", "eth0", f"{prefix}s{i}", i))
        yield hosts
    finally:
        for i in range(1, count + 1):
            delete_host(f"{prefix}h{i}", f"{prefix}s{i}")


def namespace_exists(ns: str) -> bool:
    return netns_path(ns).exists()


def link_exists(iface: str) -> bool:
    return os.path.exists(f"/sys/class/net/{iface}")


def netns_path(ns: str) -> Path:
    """The namespace file of the ``ip netns`` namespace ``ns``."""
    return NETNS_DIR / ns


def ns_socket(ns: str, iface: str) -> socket.socket:
    """A blocking raw socket bound to ``iface`` of namespace ``ns``, for every
    EtherType (frames sent out of ``iface`` hidden where the kernel can)."""
    return open_raw_socket(iface, netns_path(ns))


def rx_packets(ns: str, iface: str) -> int:
    """The kernel's receive counter of ``iface`` in ``ns``, read from the
    thread's own ``/proc/thread-self/net/dev`` (sysfs would show the root
    namespace's devices)."""
    with in_namespace(netns_path(ns)), open("/proc/thread-self/net/dev") as f:
        for line in f:
            name, sep, rest = line.partition(":")
            if sep and name.strip() == iface:
                return int(rest.split()[1])  # bytes, then packets
    raise NamespaceError(f"no interface {iface} in namespace {ns}")
