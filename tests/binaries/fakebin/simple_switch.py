"""Fake ``simple_switch --use-files``: BMv2's file-driven switch with a one-table
program. Port N of ``-i N@NAME`` reads NAME_in.pcap and writes NAME_out.pcap
(in the working directory), inputs opened in port order before the Thrift
port listens, as BMv2 does. Packets are taken as BMv2's PcapFilesReader takes
them: one pending packet from every open input, the earliest timestamp first.

The program: the first table of the JSON's first pipeline maps the ingress
port (its first key) to an egress port (the first action argument); a miss
uses the default set by table_set_default, else drops. CLI lines arrive on
the fake Thrift protocol. Every processed packet appends a line to the
--log-file. $FAKE_SWITCH_MANGLE: flip the last byte of every packet sent.
$FAKE_THRIFT_ERROR=WORD: refuse CLI lines that start with WORD.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _fakelib import (  # noqa: E402
    option,
    out_pcap_header,
    out_pcap_record,
    record,
    serve_lines,
)

from common.pcap import PcapReader  # noqa: E402 - on PYTHONPATH, set by tests/binaries


class Switch:
    def __init__(self, table: str, log) -> None:
        self.table = table
        self.entries: dict[int, int] = {}
        self.default: int | None = None
        self.lock = threading.Lock()
        self.log = log
        self.outputs: dict[int, object] = {}

    def handle(self, line: str) -> str:
        record("simple_switch", "thrift", line=line)
        refuse = os.environ.get("FAKE_THRIFT_ERROR")
        words = line.split()
        if refuse and line.startswith(refuse):
            return f"Error: fake refusal of {words[0]}"
        with self.lock:
            if words[0] in ("table_add", "table_set_default") and words[1] != self.table:
                return f"Error: Invalid table name ({words[1]})"
            if words[0] == "table_add":
                arrow = words.index("=>")
                self.entries[int(words[3], 0)] = int(words[arrow + 1], 0)
                return "Entry has been added with handle 0"
            if words[0] == "table_set_default":
                self.default = int(words[3], 0) if len(words) > 3 else None
                return ""
            if words[0] in ("mirroring_add", "mc_mgrp_create", "mc_node_create",
                            "mc_node_associate"):
                return ""
        return f"*** Unknown syntax: {line}"

    def process(self, port: int, data: bytes) -> None:
        with self.lock:
            out = self.entries.get(port, self.default)
            self.log.write(f"packet {data.hex()} in {port} out {out}\n")
            self.log.flush()
            if os.environ.get("FAKE_SWITCH_MANGLE"):
                data = data[:-1] + bytes([data[-1] ^ 0xFF])
            f = self.outputs.get(out)
            if f is not None:
                f.write(out_pcap_record(data))
                f.flush()


def reader(switch: Switch, inputs: dict[int, PcapReader]) -> None:
    pending = {port: next(r, None) for port, r in inputs.items()}
    while True:
        live = {p: r for p, r in pending.items() if r is not None}
        if not live:
            return
        port = min(live, key=lambda p: (live[p][0], p))
        switch.process(port, live[port][1])
        pending[port] = next(inputs[port], None)


def main(argv: list[str]) -> int:
    record("simple_switch", "start", argv=argv, cwd=os.getcwd())
    doc = json.loads(Path(argv[-1]).read_text())
    table = doc["pipelines"][0]["tables"][0]["name"]
    # Files stay open for the life of the process, as BMv2 keeps them.
    log = open(option(argv, "--log-file") or "log.txt", "a")  # noqa: SIM115
    switch = Switch(table, log)
    ifaces = sorted((int(v.split("@")[0]), v.split("@")[1])
                    for k, v in zip(argv, argv[1:]) if k == "-i")
    inputs = {}
    for port, name in ifaces:
        f = open(f"{name}_in.pcap", "rb")  # noqa: SIM115 - blocks on a FIFO until written
        inputs[port] = PcapReader(f, f.name, truncated_ok=True)  # reads the header
        out = open(f"{name}_out.pcap", "wb")  # noqa: SIM115
        out.write(out_pcap_header())
        out.flush()
        switch.outputs[port] = out
    thrift = socket.create_server(("127.0.0.1", int(option(argv, "--thrift-port", "9090"))))
    threading.Thread(target=reader, args=(switch, inputs), daemon=True).start()
    while True:
        conn, _ = thrift.accept()
        threading.Thread(target=serve_lines, args=(conn, switch.handle), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
