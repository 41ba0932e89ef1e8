"""common.rawsock: raw sockets in namespaces given by path or pid, and the
calling thread back home afterwards. Needs root and iproute2 (skipped
otherwise)."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from common.errors import IntbedError
from common.rawsock import (
    RawSocketError,
    ignores_outgoing,
    in_namespace,
    namespace_path,
    open_raw_socket,
)
from dataplane.testing.netns import can_create_namespaces, netns_path, veth_hosts

_SKIP = can_create_namespaces()
live = pytest.mark.skipif(_SKIP is not None, reason=f"namespaces: {_SKIP}")
_seq = iter(range(1000))


def _thread_ns() -> int:
    return os.stat("/proc/thread-self/ns/net").st_ino


def _frame(dst: bytes, src: bytes, tag: int) -> bytes:
    return dst + src + b"\x88\xb5" + bytes([tag]) * 50  # local experimental EtherType


@pytest.fixture
def pair() -> Iterator[list]:
    """Two namespaces; their veth peers in the root namespace."""
    with veth_hosts(f"rs{os.getpid() % 10000}{next(_seq)}", 2) as hosts:
        yield hosts


def test_namespace_path() -> None:
    assert namespace_path(42) == Path("/proc/42/ns/net")
    assert namespace_path("/var/run/netns/x") == Path("/var/run/netns/x")


def test_no_namespace_stays_home() -> None:
    home = _thread_ns()
    with in_namespace(None):
        assert _thread_ns() == home


def test_missing_interface_is_named() -> None:
    with pytest.raises(RawSocketError, match="no such interface 'nosuchif0'") as info:
        open_raw_socket("nosuchif0")
    assert isinstance(info.value, IntbedError) and isinstance(info.value, OSError)


def test_missing_namespace_is_named() -> None:
    home = _thread_ns()
    with pytest.raises(RawSocketError, match="/nonexistent/ns") as info:
        open_raw_socket("lo", "/nonexistent/ns")
    assert info.value.errno is not None
    assert _thread_ns() == home


@live
def test_in_namespace_by_path_and_pid_returns_home(pair: list) -> None:
    home = _thread_ns()
    target = os.stat(netns_path(pair[0].ns)).st_ino
    with in_namespace(netns_path(pair[0].ns)):
        assert _thread_ns() == target
    assert _thread_ns() == home
    holder = subprocess.Popen(["ip", "netns", "exec", pair[0].ns, "sleep", "30"])
    try:
        for _ in range(200):  # ip netns exec setns()es, then execs sleep
            if os.stat(f"/proc/{holder.pid}/ns/net").st_ino == target:
                break
            threading.Event().wait(0.01)
        with in_namespace(holder.pid):
            assert _thread_ns() == target
        assert _thread_ns() == home
        with pytest.raises(ZeroDivisionError), in_namespace(holder.pid):
            1 / 0  # noqa: B018 - an error inside the block still returns home
        assert _thread_ns() == home
    finally:
        holder.kill()
        holder.wait()


@live
def test_sockets_in_namespaces_exchange_frames(pair: list) -> None:
    """Host 1's socket sends through its veth to the root end; a root-side
    socket on the peer receives it, and one opened in host 2's namespace by
    pid sees nothing of it."""
    h1, h2 = pair
    tx = open_raw_socket(h1.iface, netns_path(h1.ns), receive=False)
    rx = open_raw_socket(h1.switch_iface, promisc=True, rcvbuf=1 << 20, sndbuf=1 << 20)
    other = open_raw_socket(h2.iface, netns_path(h2.ns), blocking=False)
    try:
        assert ignores_outgoing(rx)
        assert rx.getblocking() and not other.getblocking()
        frame = _frame(b"\x02\x00\x00\x00\x00\x99", h1.mac, 7)
        tx.send(frame)
        rx.settimeout(2.0)
        while True:  # skip whatever the kernel sent meanwhile
            got = rx.recv(2048)
            if got[12:14] == b"\x88\xb5":
                break
        assert got == frame
        with pytest.raises(BlockingIOError):
            other.recv(2048)
    finally:
        for s in (tx, rx, other):
            s.close()


@live
@pytest.mark.parametrize("ignore", [True, False])
def test_outgoing_frames_hidden_unless_asked(pair: list, ignore: bool) -> None:
    """Frames another socket sends out of the interface reach a reader only
    with ``ignore_outgoing=False``, marked PACKET_OUTGOING."""
    iface = pair[0].switch_iface
    reader = open_raw_socket(iface, ignore_outgoing=ignore)
    sender = open_raw_socket(iface, receive=False)
    try:
        assert ignores_outgoing(reader) == ignore
        frame = _frame(pair[0].mac, b"\x02\x00\x00\x00\x00\x98", 9)
        sender.send(frame)
        reader.settimeout(0.5)
        seen = []
        try:
            while True:
                data, addr = reader.recvfrom(2048)
                if data == frame:
                    seen.append(addr[2])
        except TimeoutError:
            pass
        assert seen == ([] if ignore else [socket.PACKET_OUTGOING])
    finally:
        reader.close()
        sender.close()
