"""What the switches transmitted, read back from their ``--pcap`` files.

BMv2 and ``intbed-switch`` both write ``<iface>_out.pcap`` per port (classic
libpcap, microsecond stamps of the wall clock), read by ``common.pcap``. A
switch killed mid-run leaves its last buffered records unwritten or cut
short, or never created its file: the frames written so far still count
(``common.pcap.iter_pcap(..., truncated_ok=True, missing_ok=True)``).
"""

from __future__ import annotations

from pathlib import Path


def out_pcap(pcap_dir: Path, iface: str) -> Path:
    """BMv2's name for the frames a port transmitted."""
    return Path(pcap_dir) / f"{iface}_out.pcap"
