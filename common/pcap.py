"""Classic libpcap files (pcap-savefile(5)): the one reader and writer.

The software switch writes its ``--pcap`` files with it, the BMv2 STF
runner feeds ``simple_switch --use-files`` through it and reads BMv2's
outputs back with it, and the live targets read what the switches
transmitted with it, so all of them agree on one rule set:

* Reading accepts version 2.x with the microsecond magic ``a1b2c3d4`` or
  the nanosecond magic ``a1b23c4d``, in either byte order, of any link type
  (BMv2 writes link type 0 and snaplen 0). Timestamps come back in
  nanoseconds either way.
* Writing produces little-endian version 2.4 files with a chosen link type,
  snaplen and timestamp resolution. A frame longer than a positive snaplen
  is cut to it with its original length recorded, as a capture would; a
  snaplen of 0 means no limit (libpcap's readers treat it so).
* A file that is not a pcap raises ``PcapError`` naming the file, and so
  does one that ends inside its header or a record, unless the caller says
  ``truncated_ok``: a process killed mid-write (a switch stopped by SIGKILL)
  leaves just such a tail, and the complete records before it still count.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, NamedTuple

from common.errors import IntbedError

__all__ = [
    "DEFAULT_SNAPLEN",
    "LINKTYPE_ETHERNET",
    "LINKTYPE_NULL",
    "PcapError",
    "PcapHeader",
    "PcapReader",
    "PcapWriter",
    "Record",
    "file_header",
    "iter_pcap",
    "read_pcap",
    "record_bytes",
]

LINKTYPE_NULL = 0
LINKTYPE_ETHERNET = 1
DEFAULT_SNAPLEN = 262144  # tcpdump's default

MAGIC_US = 0xA1B2C3D4
MAGIC_NS = 0xA1B23C4D
_HEADER = struct.Struct("<IHHiIII")
_RECORD_LE = struct.Struct("<IIII")
_RECORD_BE = struct.Struct(">IIII")
# The first four bytes as they lie in the file -> (record layout, ns per tick).
_MAGICS = {
    MAGIC_US.to_bytes(4, "little"): (_RECORD_LE, 1000),
    MAGIC_US.to_bytes(4, "big"): (_RECORD_BE, 1000),
    MAGIC_NS.to_bytes(4, "little"): (_RECORD_LE, 1),
    MAGIC_NS.to_bytes(4, "big"): (_RECORD_BE, 1),
}


class PcapError(IntbedError):
    """A file that is not a classic pcap file, or one cut short."""


class Record(NamedTuple):
    """One packet: its timestamp in nanoseconds and the captured bytes."""

    t_ns: int
    frame: bytes


@dataclass(frozen=True, slots=True)
class PcapHeader:
    """What a file's global header says."""

    big_endian: bool
    nanosecond: bool
    version: tuple[int, int]
    snaplen: int
    linktype: int


# --------------------------------------------------------------------------- writing


def file_header(linktype: int = LINKTYPE_ETHERNET, snaplen: int = DEFAULT_SNAPLEN, *,
                nanosecond: bool = False) -> bytes:
    """The 24-byte global header of a little-endian version 2.4 file."""
    return _HEADER.pack(MAGIC_NS if nanosecond else MAGIC_US, 2, 4, 0, 0, snaplen, linktype)


def record_bytes(frame: bytes, t_ns: int, *, snaplen: int = 0,
                 nanosecond: bool = False) -> bytes:
    """One record (header and data) stamped ``t_ns``; the frame is cut to a
    positive ``snaplen``, the record keeping its original length."""
    sec, frac = divmod(t_ns, 1_000_000_000)
    if not nanosecond:
        frac //= 1000
    orig = len(frame)
    if 0 < snaplen < orig:
        frame = frame[:snaplen]
    return _RECORD_LE.pack(sec, frac, len(frame), orig) + frame


class PcapWriter:
    """Appends records to a new pcap file; buffered, flushed on demand.

    ``write`` sits on the software switch's per-packet path, hence the
    slots and the bound methods."""

    __slots__ = ("path", "count", "snaplen", "_file", "_write", "_pack", "_tick")

    def __init__(self, path: str | Path, linktype: int = LINKTYPE_ETHERNET,
                 snaplen: int = DEFAULT_SNAPLEN, *, nanosecond: bool = False) -> None:
        self.path = Path(path)
        self.snaplen = snaplen
        self.count = 0
        self._file: BinaryIO = open(self.path, "wb", buffering=1 << 16)  # noqa: SIM115
        self._file.write(file_header(linktype, snaplen, nanosecond=nanosecond))
        self._write = self._file.write
        self._pack = _RECORD_LE.pack
        self._tick = 1 if nanosecond else 1000

    def write(self, frame: bytes, t_ns: int | None = None) -> None:
        """One record stamped ``t_ns`` (wall clock, default now)."""
        if t_ns is None:
            t_ns = time.time_ns()
        sec, frac = divmod(t_ns, 1_000_000_000)
        orig = len(frame)
        if 0 < self.snaplen < orig:
            frame = frame[:self.snaplen]
        self._write(self._pack(sec, frac // self._tick, len(frame), orig))
        self._write(frame)
        self.count += 1

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def __enter__(self) -> PcapWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------- reading


class PcapReader:
    """Records of a pcap stream, read one at a time (a FIFO works too).

    The global header is read by the constructor; iterating yields
    ``Record``s until the stream ends. ``name`` is what errors call the
    stream."""

    def __init__(self, stream: BinaryIO, name: str, *, truncated_ok: bool = False) -> None:
        self.stream = stream
        self.name = name
        self.truncated_ok = truncated_ok
        self.ended = False
        self.header: PcapHeader | None = None
        head = _read_exactly(stream, _HEADER.size)
        layout = _MAGICS.get(head[:4])
        if layout is None and len(head) >= 4:
            raise PcapError(f"{name}: not a pcap file (magic {head[:4].hex()})")
        if layout is None or len(head) < _HEADER.size:
            self.ended = True
            if truncated_ok:
                return
            raise PcapError(f"{name}: truncated pcap file: it ends after {len(head)} of "
                            f"the {_HEADER.size} header bytes")
        self._record, self._tick = layout
        order = ">" if self._record is _RECORD_BE else "<"
        _, major, minor, _, _, snaplen, linktype = struct.unpack(order + "IHHiIII", head)
        if major != 2:
            raise PcapError(f"{name}: pcap version {major}.{minor} is not 2.x")
        self.header = PcapHeader(order == ">", self._tick == 1, (major, minor), snaplen,
                                 linktype)

    def __iter__(self) -> Iterator[Record]:
        return self

    def __next__(self) -> Record:
        if self.ended:
            raise StopIteration
        size = self._record.size
        head = _read_exactly(self.stream, size)
        if len(head) == size:
            sec, frac, incl, _ = self._record.unpack(head)
            data = _read_exactly(self.stream, incl)
            if len(data) == incl:
                return Record(sec * 1_000_000_000 + frac * self._tick, data)
            cut = f"a record ends after {len(data)} of its {incl} bytes"
        elif head:
            cut = f"a record header ends after {len(head)} of its {size} bytes"
        else:
            self.ended = True
            raise StopIteration
        self.ended = True
        if self.truncated_ok:
            raise StopIteration
        raise PcapError(f"{self.name}: truncated pcap file: {cut}")


def _read_exactly(stream: BinaryIO, n: int) -> bytes:
    """``n`` bytes, fewer only at the end of the stream (a pipe returns short reads)."""
    data = stream.read(n)
    while data is not None and len(data) < n:
        more = stream.read(n - len(data))
        if not more:
            break
        data += more
    return data or b""


def iter_pcap(path: str | Path, *, truncated_ok: bool = False,
              missing_ok: bool = False) -> Iterator[Record]:
    """The records of the pcap file ``path``; ``missing_ok``: nothing for a
    file that does not exist (a process that never got to create it)."""
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed by the with below
    except FileNotFoundError:
        if missing_ok:
            return
        raise PcapError(f"{path}: no such pcap file") from None
    except OSError as exc:
        raise PcapError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with f:
        yield from PcapReader(f, str(path), truncated_ok=truncated_ok)


def read_pcap(path: str | Path, *, truncated_ok: bool = False,
              missing_ok: bool = False) -> list[Record]:
    """Every record of the pcap file ``path`` (``iter_pcap`` as a list)."""
    return list(iter_pcap(path, truncated_ok=truncated_ok, missing_ok=missing_ok))
