"""What the switches transmitted, read back from their ``--pcap`` files.

BMv2 and ``intbed-switch`` both write ``<iface>_out.pcap`` per port (classic
libpcap, microsecond stamps of the wall clock), read by ``common.pcap``. A
switch killed mid-run leaves its last buffered records unwritten or cut
short, or never created its file: the frames written so far still count.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from common.pcap import Record
from common.pcap import iter_pcap as _iter_pcap


def iter_pcap(path: Path) -> Iterator[Record]:
    """``(wall-clock ns, frame)`` per complete record of a switch's pcap
    file; nothing for a missing or empty file, no error for a cut-short tail."""
    return _iter_pcap(path, truncated_ok=True, missing_ok=True)


def out_pcap(pcap_dir: Path, iface: str) -> Path:
    """BMv2's name for the frames a port transmitted."""
    return Path(pcap_dir) / f"{iface}_out.pcap"
