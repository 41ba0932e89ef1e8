"""What a live network may leave behind, seen from the root namespace.

``snapshot()`` lists named namespaces (``ip netns``), interfaces of the root
namespace, Linux bridges and every process (command line, network
namespace, parent). ``leftovers(before, after)`` names what appeared in
between and belongs to the caller: the machine may be running other
people's processes meanwhile, so a new process counts when it descends
from the calling process, when its command line names one of ``markers``
(a run directory, say: orphans have lost their parent), or when it is a
Mininet host shell (``mininet:NAME``) in a namespace that did not exist
before (Mininet's hosts are unnamed namespaces held by those shells).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

MININET_SHELL = "mininet:"


@dataclass(frozen=True)
class Snapshot:
    netns: frozenset[str]
    links: frozenset[str]
    bridges: frozenset[str]
    # pid -> (command line, network namespace inode, parent pid)
    processes: dict[int, tuple[str, int, int]] = field(default_factory=dict, hash=False)

    @property
    def namespaces(self) -> frozenset[int]:
        return frozenset(ns for _, ns, _ in self.processes.values())

    def descends_from(self, pid: int, root: int) -> bool:
        seen = set()
        while pid > 1 and pid not in seen:
            if pid == root:
                return True
            seen.add(pid)
            pid = self.processes.get(pid, ("", 0, 0))[2]
        return False


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def snapshot() -> Snapshot:
    """The current state; processes that vanish while it is taken are skipped."""
    run = Path("/var/run/netns")
    netns = frozenset(p.name for p in run.iterdir()) if run.is_dir() else frozenset()
    net = Path("/sys/class/net")
    links = frozenset(p.name for p in net.iterdir())
    bridges = frozenset(name for name in links if (net / name / "bridge").is_dir())
    procs: dict[int, tuple[str, int, int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        cmd = _read(f"/proc/{pid}/cmdline").replace(b"\0", b" ").decode(errors="replace")
        stat = _read(f"/proc/{pid}/stat").decode(errors="replace")
        try:
            ns = os.stat(f"/proc/{pid}/ns/net").st_ino
            ppid = int(stat.rpartition(")")[2].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if cmd.strip():  # kernel threads and zombies have none
            procs[pid] = (cmd.strip(), ns, ppid)
    return Snapshot(netns, links, bridges, procs)


def leftovers(before: Snapshot, after: Snapshot, *, markers: tuple[str, ...] = (),
              root: int | None = None) -> list[str]:
    """One line per namespace, interface or bridge present in ``after`` but
    not in ``before``, and per new process of the caller's (see the module
    docstring; ``root`` defaults to this process)."""
    root = os.getpid() if root is None else root
    out = [f"namespace {n}" for n in sorted(after.netns - before.netns)]
    out += [f"interface {n}" for n in sorted(after.links - before.links)]
    out += [f"bridge {n}" for n in sorted(after.bridges - before.bridges)]
    new_ns = after.namespaces - before.namespaces
    for pid, (cmd, ns, _) in sorted(after.processes.items()):
        if pid in before.processes or pid == root:
            continue
        if (after.descends_from(pid, root) or any(m in cmd for m in markers)
                or (ns in new_ns and MININET_SHELL in cmd)):
            where = " in a new network namespace" if ns in new_ns else ""
            out.append(f"process {pid}{where}: {cmd[:120]}")
    return out
