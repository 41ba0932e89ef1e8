"""What the switches transmitted, read back from their ``--pcap`` files.

BMv2 and ``intbed-switch`` both write ``<iface>_out.pcap`` per port (classic
libpcap, microsecond stamps of the wall clock). A switch killed mid-run
leaves its last buffered records unwritten or cut short: reading stops at
the first incomplete record instead of failing, so the frames written so
far still count.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

PCAP_MAGIC = 0xA1B2C3D4
_HEADER = struct.Struct("<IHHiIII")
_RECORD = struct.Struct("<IIII")


def iter_pcap(path: Path) -> Iterator[tuple[int, bytes]]:
    """``(wall-clock ns, frame)`` per complete record of a microsecond
    libpcap file (nothing for a missing or empty file)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return
    if len(data) < _HEADER.size:
        return
    magic, major, minor, _, _, _, _ = _HEADER.unpack_from(data)
    if magic != PCAP_MAGIC or (major, minor) != (2, 4):
        raise ValueError(f"{path}: not a microsecond libpcap file")
    pos = _HEADER.size
    end = len(data)
    rec = _RECORD.size
    while pos + rec <= end:
        sec, usec, incl, _ = _RECORD.unpack_from(data, pos)
        pos += rec
        if pos + incl > end:
            return
        yield (sec * 1_000_000 + usec) * 1000, data[pos:pos + incl]
        pos += incl


def out_pcap(pcap_dir: Path, iface: str) -> Path:
    """BMv2's name for the frames a port transmitted."""
    return Path(pcap_dir) / f"{iface}_out.pcap"
