"""The calibration network: hosts h1 and h2 in network namespaces of their
own, each on a veth pair whose other end the switch under test takes as
port 1 and port 2 (``intbed-cal-s1-eth1`` and ``-eth2`` in the root
namespace). Addresses and MACs are the ones ``p4src/calibrate.p4``'s
constant entries route (10.0.1.1 behind port 1, 10.0.2.2 behind port 2).
Needs root; everything is removed on exit, and left-overs of a run that
was killed are removed before a new one starts."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from types import TracebackType

from common.errors import IntbedError

PREFIX = "intbed-cal"
HOSTS = {"h1": ("10.0.1.1", "00:00:00:00:01:01", 1), "h2": ("10.0.2.2", "00:00:00:00:02:02", 2)}
GATEWAY_MAC = {"h1": "00:00:00:00:01:fe", "h2": "00:00:00:00:02:fe"}


class CalibrationError(IntbedError):
    """A calibration that cannot run here, or whose switch failed."""


def _ip(*args: str, check: bool = True) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise CalibrationError(f"ip {' '.join(args)}: {done.stderr.strip()}")


def ns(host: str) -> str:
    return f"{PREFIX}-{host}"


def host_iface(host: str) -> str:
    return f"{PREFIX}-{host}"[:15]


def switch_iface(port: int) -> str:
    return f"{PREFIX}-s{port}"[:15]


def in_ns(host: str, argv: Sequence[str]) -> list[str]:
    """``argv`` run inside ``host``'s namespace."""
    return ["ip", "netns", "exec", ns(host), *argv]


class CalibrationNet:
    """The two namespaces and veth pairs (a context manager)."""

    def __enter__(self) -> CalibrationNet:
        if os.geteuid() != 0:
            raise CalibrationError("intbed calibrate builds network namespaces and veth "
                                   "pairs: run it as root (sudo)")
        self.remove()
        try:
            for host, (ip, mac, port) in HOSTS.items():
                _ip("netns", "add", ns(host))
                _ip("link", "add", host_iface(host), "type", "veth", "peer", "name",
                    switch_iface(port))
                _ip("link", "set", host_iface(host), "netns", ns(host))
                nx = ["-n", ns(host)]
                _ip(*nx, "link", "set", host_iface(host), "address", mac)
                _ip(*nx, "addr", "add", f"{ip}/24", "dev", host_iface(host))
                _ip(*nx, "link", "set", host_iface(host), "up")
                _ip(*nx, "link", "set", "lo", "up")
                other = next(h for h in HOSTS if h != host)
                _ip(*nx, "route", "add", f"{HOSTS[other][0]}/32", "dev", host_iface(host))
                _ip(*nx, "neigh", "add", HOSTS[other][0], "lladdr", GATEWAY_MAC[host],
                    "dev", host_iface(host))
                _ip("link", "set", switch_iface(port), "up")
                for iface in (switch_iface(port),):
                    _sysctl_ipv6_off(iface, None)
                _sysctl_ipv6_off(host_iface(host), ns(host))
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.remove()

    @staticmethod
    def remove() -> None:
        """Delete whatever a calibration left (idempotent)."""
        for host, (_, _, port) in HOSTS.items():
            _ip("link", "del", switch_iface(port), check=False)
            _ip("netns", "del", ns(host), check=False)


def _sysctl_ipv6_off(iface: str, namespace: str | None) -> None:
    """No IPv6 on the calibration links: router solicitations and the like
    would be packets the switch serves besides the calibration's."""
    argv = ["sysctl", "-q", "-w", f"net.ipv6.conf.{iface}.disable_ipv6=1"]
    if namespace is not None:
        argv = ["ip", "netns", "exec", namespace, *argv]
    subprocess.run(argv, capture_output=True)
