"""Shared pieces of the fake p4c / BMv2 programs used by tests/binaries.

Every fake appends one JSON object a line to ``$FAKE_EVENTS`` so a test can
check what ran, with which arguments, and in which order.
"""

from __future__ import annotations

import json
import os
import time

from common.pcap import LINKTYPE_NULL, file_header, record_bytes


def record(prog: str, event: str, **data: object) -> None:
    path = os.environ.get("FAKE_EVENTS")
    if not path:
        return
    line = json.dumps({"prog": prog, "event": event, "pid": os.getpid(), **data})
    with open(path, "a") as f:
        f.write(line + "\n")


def option(argv: list[str], name: str, default: str | None = None) -> str | None:
    """The value after ``name`` in argv."""
    if name in argv:
        i = argv.index(name)
        if i + 1 < len(argv):
            return argv[i + 1]
    return default


def out_pcap_header() -> bytes:
    """BMv2 writes outputs through pcap_open_dead(0, 0): link type 0, snaplen 0."""
    return file_header(LINKTYPE_NULL, 0)


def out_pcap_record(data: bytes) -> bytes:
    return record_bytes(data, time.time_ns())


def serve_lines(conn, handle) -> None:
    """The fake Thrift protocol: one request line in, a reply ending in NUL out."""
    with conn, conn.makefile("rb") as requests:
        for raw in requests:
            reply = handle(raw.decode().rstrip("\n"))
            conn.sendall(reply.encode() + b"\0")
