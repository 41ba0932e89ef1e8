"""common.pcap against files Scapy writes and reads on its own."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import RawPcapReader, RawPcapWriter

from common.errors import IntbedError
from common.pcap import (
    LINKTYPE_ETHERNET,
    LINKTYPE_NULL,
    PcapError,
    PcapReader,
    PcapWriter,
    file_header,
    iter_pcap,
    read_pcap,
    record_bytes,
)

T0 = 1_700_000_000_123_456_789  # ns
USER0 = 147  # a link type nobody else means: any is read
FRAMES = [bytes(Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01") / Raw(bytes([i % 256]) * i))
          for i in (1, 40, 300)] + [b"", b"\x01\x02\x03"]


def _scapy_file(path: Path, *, endianness: str, nano: bool, linktype: int = 1,
                snaplen: int = 65535) -> list[int]:
    """Write FRAMES with Scapy; the timestamps it was given, in ns."""
    stamps = [T0 + i * 1_000_001_001 for i in range(len(FRAMES))]
    w = RawPcapWriter(str(path), linktype=linktype, endianness=endianness, nano=nano,
                      snaplen=snaplen, sync=True)
    w._write_header(None)  # noqa: SLF001 - an empty file gets its header too
    for frame, t in zip(FRAMES, stamps):
        sec, frac = divmod(t, 1_000_000_000)
        w.write_packet(frame, sec=sec, usec=frac if nano else frac // 1000)
    w.close()
    return stamps if nano else [t // 1000 * 1000 for t in stamps]


def _scapy_read(path: Path) -> tuple[list[bytes], list[int], int]:
    """Frames, ns timestamps and link type as Scapy reads the file."""
    with RawPcapReader(str(path)) as r:
        records = list(r)
        linktype = r.linktype
        tick = 1 if r.nano else 1000
    return ([data for data, _ in records],
            [(m.sec * (10**9 // tick) + m.usec) * tick for _, m in records], linktype)


@pytest.mark.parametrize("endianness", ["<", ">"])
@pytest.mark.parametrize("nano", [False, True])
def test_reads_what_scapy_wrote(tmp_path: Path, endianness: str, nano: bool) -> None:
    path = tmp_path / "s.pcap"
    stamps = _scapy_file(path, endianness=endianness, nano=nano, linktype=USER0)
    assert read_pcap(path) == list(zip(stamps, FRAMES))
    with open(path, "rb") as f:
        header = PcapReader(f, "s.pcap").header
    assert header is not None
    assert (header.big_endian, header.nanosecond) == (endianness == ">", nano)
    assert (header.version, header.snaplen, header.linktype) == ((2, 4), 65535, USER0)


@pytest.mark.parametrize("nano", [False, True])
def test_scapy_reads_what_we_wrote(tmp_path: Path, nano: bool) -> None:
    path = tmp_path / "ours.pcap"
    with PcapWriter(path, nanosecond=nano) as w:
        for i, frame in enumerate(FRAMES):
            w.write(frame, T0 + i * 7_000_000_011)
    assert w.count == len(FRAMES)
    frames, stamps, linktype = _scapy_read(path)
    assert frames == FRAMES
    tick = 1 if nano else 1000
    assert stamps == [(T0 + i * 7_000_000_011) // tick * tick for i in range(len(FRAMES))]
    assert linktype == LINKTYPE_ETHERNET
    # And back through our reader, bytes of the header as written.
    assert path.read_bytes()[:24] == file_header(nanosecond=nano)
    assert read_pcap(path) == [((T0 + i * 7_000_000_011) // tick * tick, f)
                               for i, f in enumerate(FRAMES)]


def test_link_type_and_snaplen_chosen(tmp_path: Path) -> None:
    path = tmp_path / "cut.pcap"
    with PcapWriter(path, LINKTYPE_NULL, snaplen=10) as w:
        w.write(bytes(range(30)), 5_000_000_000)
        w.write(b"short", 6_000_000_000)
    with RawPcapReader(str(path)) as r:
        got = list(r)
        assert r.linktype == LINKTYPE_NULL
    assert [data for data, _ in got] == [bytes(range(10)), b"short"]
    assert got[0][1].wirelen == 30  # the original length is kept
    with open(path, "rb") as f:
        header = PcapReader(f, str(path)).header
    assert header is not None and header.snaplen == 10
    # snaplen 0 (what BMv2 writes) cuts nothing.
    assert record_bytes(bytes(100), 0, snaplen=0)[8:16] == (100).to_bytes(4, "little") * 2


def test_writer_stamps_now_by_default(tmp_path: Path) -> None:
    import time

    before = time.time_ns() // 1000 * 1000
    with PcapWriter(tmp_path / "now.pcap") as w:
        w.write(b"x")
    ((t, frame),) = read_pcap(tmp_path / "now.pcap")
    assert frame == b"x" and before <= t <= time.time_ns()


def test_not_a_pcap_names_the_file(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"GIF89a" + bytes(40))
    with pytest.raises(PcapError, match=f"{junk}: not a pcap file") as info:
        read_pcap(junk)
    assert isinstance(info.value, IntbedError)
    v1 = tmp_path / "v1.pcap"
    v1.write_bytes(file_header()[:4] + (1).to_bytes(2, "little") + file_header()[6:])
    with pytest.raises(PcapError, match="version 1.4"):
        read_pcap(v1)
    with pytest.raises(PcapError, match="missing.pcap: no such pcap file"):
        read_pcap(tmp_path / "missing.pcap")
    assert read_pcap(tmp_path / "missing.pcap", missing_ok=True) == []


@pytest.mark.parametrize(("cut", "what"), [
    (0, "header"), (10, "header"), (24 + 9, "record header"), (24 + 16 + 3, "a record ends"),
])
def test_truncated_names_the_file(tmp_path: Path, cut: int, what: str) -> None:
    path = tmp_path / "t.pcap"
    _scapy_file(path, endianness="<", nano=False)
    data = path.read_bytes()
    whole = len(read_pcap(path))
    # Cut inside the first record (or the header), and inside the last one.
    for size in (cut, len(data) - 1):
        path.write_bytes(data[:size])
        with pytest.raises(PcapError, match=f"{path}: truncated pcap file"):
            read_pcap(path)
        got = read_pcap(path, truncated_ok=True)
        assert len(got) == (whole - 1 if size == len(data) - 1 else 0)
    path.write_bytes(data[:cut])
    with pytest.raises(PcapError, match=what):
        read_pcap(path)


def test_reader_on_a_pipe() -> None:
    """A FIFO or pipe hands out short reads; records still come out whole."""
    r, w = os.pipe()
    data = file_header() + b"".join(record_bytes(f, i * 1000) for i, f in enumerate(FRAMES))
    with os.fdopen(w, "wb", buffering=0) as out, os.fdopen(r, "rb", buffering=0) as src:
        for i in range(0, len(data), 7):
            out.write(data[i:i + 7])
        out.close()
        assert [f for _, f in PcapReader(src, "pipe")] == FRAMES


def test_iter_is_lazy_and_matches_list(tmp_path: Path) -> None:
    path = tmp_path / "a.pcap"
    _scapy_file(path, endianness=">", nano=True)
    it = iter_pcap(path)
    assert next(it) == read_pcap(path)[0]
    assert list(PcapReader(io.BytesIO(path.read_bytes()), "mem")) == read_pcap(path)
