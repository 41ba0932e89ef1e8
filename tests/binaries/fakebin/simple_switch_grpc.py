"""Fake ``simple_switch_grpc``: records its argv, serves P4Runtime (intbed's own
server) on --grpc-server-addr and the fake Thrift line protocol on
--thrift-port, records every CLI line it is sent, and records SIGTERM.

$FAKE_SWITCH_EXIT=N: print an error and exit N at once.
$FAKE_THRIFT_ERROR=WORD: refuse CLI lines that start with WORD.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _fakelib import option, record, serve_lines  # noqa: E402

PROG = os.environ.get("FAKE_PROG", "simple_switch_grpc")


def handle(line: str) -> str:
    record(PROG, "thrift", line=line)
    refuse = os.environ.get("FAKE_THRIFT_ERROR")
    if refuse and line.startswith(refuse):
        return f"Error: fake refusal of {line.split()[0]}"
    return ""


def main(argv: list[str]) -> int:
    record(PROG, "start", argv=argv)
    code = os.environ.get("FAKE_SWITCH_EXIT")
    if code:
        sys.stderr.write("fake switch: cannot start\n")
        return int(code)
    from dataplane.control.grpc_server import P4RuntimeServer

    target = argv[argv.index("--") + 1:] if "--" in argv else []
    grpc_addr = option(target, "--grpc-server-addr", "0.0.0.0:9559")
    thrift = socket.create_server(("127.0.0.1", int(option(argv, "--thrift-port", "9090"))))
    server = P4RuntimeServer(grpc_addr)
    server.start()

    def on_term(signum: int, frame: object) -> None:
        record(PROG, "sigterm")
        server.stop(0)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_term)

    def accept() -> None:
        while True:
            conn, _ = thrift.accept()
            threading.Thread(target=serve_lines, args=(conn, handle), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    record(PROG, "ready")
    while True:
        signal.pause()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
