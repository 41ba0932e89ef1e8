"""What a live run needs besides its configuration: where results go, which
Redis to use, and what to keep."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class LiveOptions:
    """``results_dir``: run directories are made under it (None: a
    temporary directory, removed after the run); ``redis_url``: an existing
    Redis (None: a private ``redis-server`` per run); ``keep_pcaps``: keep
    the switches' pcaps after the metrics are read from them; ``lead_s``:
    how far ahead of "now" the senders' common start instant is set."""

    results_dir: Path | None = None
    redis_url: str | None = None
    keep_pcaps: bool = False
    lead_s: float = 0.3
    register_writes: bool = False  # switches take RegisterEntry writes where they can
    # switch -> port: a veth pair <switch>-cpu-eth0 (that port) / -eth1 (free,
    # for a controller to sniff and send on), p4-utils' CPU port
    cpu_ports: dict[str, int] = field(default_factory=dict)


def next_run_dir(root: Path, label: str) -> Path:
    """``root/NNN-label``, numbered after the runs already there."""
    root.mkdir(parents=True, exist_ok=True)
    taken = [int(m.group(1)) for p in root.iterdir() if (m := re.match(r"(\d+)-", p.name))]
    path = root / f"{max(taken, default=0) + 1:03d}-{re.sub(r'[^A-Za-z0-9_.-]', '_', label)}"
    path.mkdir()
    return path
